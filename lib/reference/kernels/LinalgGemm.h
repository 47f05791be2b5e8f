//===- LinalgGemm.h - Shared GEMM and threading of the kernels -*- C++ -*-===//
//
// Private to the Linalg/Nn/Quant kernels: the matrix product (our own
// float GEMM, OpenBLAS for double) and the thread split they share
// (LinalgGemm.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_REFERENCE_KERNELS_LINALGGEMM_H
#define MNCC_LIB_REFERENCE_KERNELS_LINALGGEMM_H

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

/// C = alpha * op(A) * op(B) + beta * C, row-major, M x N result with
/// leading dimensions lda/ldb/ldc; op(X) is X or its transpose. beta == 0
/// ignores C's previous content (even NaN), as BLAS does. `parallel` lets
/// it split the output over threads (in thread-count-independent blocks).
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
          float beta, float *c, int64_t ldc, bool parallel = true);
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          double alpha, const double *a, int64_t lda, const double *b,
          int64_t ldb, double beta, double *c, int64_t ldc,
          bool parallel = true);

/// The float GEMM's micro-kernels, chosen once at run time from the CPU.
enum class GemmKernel { Auto, Portable, Avx2, Avx512 };

/// Test hook: makes the float GEMM use `kernel` (Auto: the best one this
/// CPU runs). Returns false and changes nothing when the CPU lacks it.
/// Not for use while a GEMM runs on another thread.
bool forceGemmKernel(GemmKernel kernel);

} // namespace mncc::reference::linalg

#endif // MNCC_LIB_REFERENCE_KERNELS_LINALGGEMM_H
