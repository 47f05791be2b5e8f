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
#include <memory>

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

/// Fills `dst` with rows [row, row + rows) x columns [col, col + cols) of
/// op(B) packed as the float GEMM reads it: panel q (columns col + q * nr
/// onwards) is `rows` rows of nr values, rows * nr floats from the panel
/// before, and the columns past `cols` in the last panel are 0. A Conv
/// packs its input this way straight from the image, with no im2col
/// buffer in memory.
using PackBFn = std::function<void(int64_t row, int64_t col, int64_t rows,
                                   int64_t cols, int64_t nr, float *dst)>;

/// op(A) of the float GEMM packed once into the panels of the
/// micro-kernel in use, for a matrix many products share (a Conv's weights
/// over every run of a model).
class PackedA {
public:
  PackedA(bool transA, const float *a, int64_t lda, int64_t m, int64_t k);
  /// The panel of rows [row, row + MR) and depth [depth, depth + KC); row
  /// is a multiple of MR and depth of KC.
  const float *panel(int64_t row, int64_t depth, int64_t kc) const {
    return data_.get() + depth * paddedRows_ + row * kc;
  }
  int64_t rows() const { return rows_; }
  int64_t depth() const { return depth_; }
  /// The MR it was packed for; a product run with another micro-kernel
  /// (a test forcing one) packs op(A) itself instead.
  int64_t mr() const { return mr_; }

private:
  int64_t rows_, depth_, mr_, paddedRows_;
  std::unique_ptr<float[]> data_;
};

/// A product's operands: op(A) as a matrix, optionally also packed (used
/// when it fits the micro-kernel), and op(B) as a matrix or as a packer.
/// packedA and packB are for float only.
template <typename T> struct GemmOperands {
  bool transA = false;
  const T *a = nullptr;
  int64_t lda = 0;
  bool transB = false;
  const T *b = nullptr;
  int64_t ldb = 0;
  const PackedA *packedA = nullptr;
  const PackBFn *packB = nullptr;
};

/// C = alpha * op(A) * op(B) + beta * C from general operands, then the
/// epilogue; the same blocking, hence the same bits, as the gemm below.
void gemm(int64_t m, int64_t n, int64_t k, float alpha,
          const GemmOperands<float> &operands, float beta, float *c,
          int64_t ldc, bool parallel = true,
          const GemmEpilogue<float> &epilogue = {});

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
  for (int64_t i = 0; i < rows; ++i) {
    T *row = c + i * ldc;
    if (epilogue.rowBias) {
      T bias = epilogue.rowBias[firstRow + i];
      for (int64_t j = 0; j < cols; ++j)
        row[j] += bias;
    }
    if (epilogue.clamp)
      for (int64_t j = 0; j < cols; ++j)
        row[j] = epilogue.clamp->apply(row[j]);
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
