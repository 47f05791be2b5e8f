//===- LinalgGemm.h - Shared GEMM and threading of the kernels -*- C++ -*-===//
//
// Private to the Linalg/Nn/Quant kernels: the matrix product (our own
// float GEMM, OpenBLAS for double) and the thread split they share
// (LinalgGemm.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_REFERENCE_KERNELS_LINALGGEMM_H
#define MNCC_LIB_REFERENCE_KERNELS_LINALGGEMM_H

#include "mncc/reference/Kernel.h"

#include <cstdint>
#include <functional>

namespace mncc::reference::linalg {

/// Threads the kernels use: MNCC_REFERENCE_THREADS, else 2.
int numThreads();

/// Test hook: makes numThreads() return `threads` (0: back to the
/// environment's count).
void forceNumThreads(int threads);

/// Runs fn(begin, end) over [0, count) split into fixed chunks of `grain`
/// items spread over numThreads() threads. The chunks do not depend on the
/// thread count, so a kernel whose chunks are independent gives the same
/// result whatever the thread count. The threads are a persistent pool; a
/// call made while the pool is busy (nested, or from another thread) runs
/// its chunks serially on the calling thread.
void parallelFor(int64_t count, int64_t grain,
                 const std::function<void(int64_t, int64_t)> &fn);

/// What the GEMM does to each element of C once the product is complete,
/// while the tile is still in cache: add the bias of its row, then clamp
/// (FusedActivation's rule). Each step rounds as the separate passes over
/// C would, so the result is bit-identical to running them afterwards.
template <typename T> struct GemmEpilogue {
  const T *rowBias = nullptr; // M values, or none
  const FusedActivation *clamp = nullptr;
  bool empty() const { return !rowBias && !clamp; }
};

/// C = alpha * op(A) * op(B) + beta * C, row-major, M x N result with
/// leading dimensions lda/ldb/ldc; op(X) is X or its transpose. beta == 0
/// ignores C's previous content (even NaN), as BLAS does. `parallel` lets
/// it split the output over threads (in thread-count-independent blocks).
/// `epilogue` then applies to every element of C.
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
          float beta, float *c, int64_t ldc, bool parallel = true,
          const GemmEpilogue<float> &epilogue = {});
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          double alpha, const double *a, int64_t lda, const double *b,
          int64_t ldb, double beta, double *c, int64_t ldc,
          bool parallel = true, const GemmEpilogue<double> &epilogue = {});

/// Applies `epilogue` to the rows x cols block of C at `c`; the block's row
/// 0 is row `firstRow` of the bias.
template <typename T>
void applyEpilogue(const GemmEpilogue<T> &epilogue, int64_t firstRow,
                   int64_t rows, int64_t cols, T *c, int64_t ldc) {
  if (epilogue.empty())
    return;
  T lo = epilogue.clamp ? T(epilogue.clamp->lo) : T(0);
  T hi = epilogue.clamp ? T(epilogue.clamp->hi) : T(0);
  for (int64_t i = 0; i < rows; ++i) {
    T *row = c + i * ldc;
    if (epilogue.rowBias) {
      T bias = epilogue.rowBias[firstRow + i];
      for (int64_t j = 0; j < cols; ++j)
        row[j] += bias;
    }
    if (epilogue.clamp)
      for (int64_t j = 0; j < cols; ++j) {
        T v = row[j] < lo ? lo : row[j];
        row[j] = v > hi ? hi : v;
      }
  }
}

/// The float GEMM's micro-kernels, chosen once at run time from the CPU.
enum class GemmKernel { Auto, Portable, Avx2, Avx512 };

/// Test hook: makes the float GEMM use `kernel` (Auto: the best one this
/// CPU runs). Returns false and changes nothing when the CPU lacks it.
/// Not for use while a GEMM runs on another thread.
bool forceGemmKernel(GemmKernel kernel);

} // namespace mncc::reference::linalg

#endif // MNCC_LIB_REFERENCE_KERNELS_LINALGGEMM_H
