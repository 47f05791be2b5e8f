//===- LinalgGemm.h - Shared GEMM and threading of the kernels -*- C++ -*-===//
//
// Private to the Linalg/Nn/Quant kernels: the matrix product (Eigen's,
// split over the kernels' threads) and the thread split they share
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

/// Threads the kernels use: forceNumThreads's, else setNumThreads's
/// (mncc/reference/Threads.h; the tools pass MNCC_REFERENCE_THREADS), else 2.
int numThreads();

/// Test hook: makes numThreads() return `threads` (0: back to
/// setNumThreads's count).
void forceNumThreads(int threads);

/// Runs fn(begin, end) over [0, count) split into fixed chunks of `grain`
/// items spread over numThreads() threads. The chunks do not depend on the
/// thread count, so a kernel whose chunks are independent gives the same
/// result whatever the thread count. The threads are a persistent pool; a
/// call made while the pool is busy (nested, or from another thread) runs
/// its chunks serially on the calling thread.
void parallelFor(int64_t count, int64_t grain,
                 const std::function<void(int64_t, int64_t)> &fn);

/// A grain for parallelFor over `count` independent items of about
/// `work` units each: chunks of at least 16K units, to pay for the
/// dispatch, and, when there is that much work, a multiple of the thread
/// count, up to four chunks a thread, so that the threads finish
/// together. The chunks depend on the thread count: only for loops whose
/// items do not depend on how they are grouped.
int64_t balancedGrain(int64_t count, int64_t work);

/// What a Conv adds to its GEMM. rowBias: each row of C starts from its
/// bias (added to beta * C), and the product is summed onto it, so the
/// bias costs no pass of its own. clamp: FusedActivation's rule on each
/// element of a block of C once its product is complete, while the block
/// is still in cache; bit-identical to a Clip or Relu run afterwards.
template <typename T> struct GemmEpilogue {
  const T *rowBias = nullptr; // M values, or none
  const FusedActivation *clamp = nullptr;
};

/// Writes rows [row, row + rows) and columns [col, col + cols) of op(B) at
/// `dst` in panels of `panel` columns, `panelStride` elements apart:
/// element (row + r, col + j) at
/// dst[(j / panel) * panelStride + r * panel + j % panel]. With `panel`
/// equal to `cols` that is a plain row-major block; with the kernel's
/// panel width it is the layout the kernel reads, so the GEMM packs
/// nothing itself. A Conv writes its input unfolded (im2col) this way,
/// one block at a time, just before the product that reads it.
template <typename T>
using PackBFn =
    std::function<void(int64_t row, int64_t rows, int64_t col, int64_t cols,
                       T *dst, int64_t panel, int64_t panelStride)>;

/// op(A) packed once for the products of the Eigen build it was packed
/// in, for an A that many products read: a Conv's constant weights, kept
/// across runs. Make it with packA.
template <typename T> struct PackedA {
  /// The build it was packed for (products in another build ignore it).
  const void *build = nullptr;
  int64_t m = 0, k = 0;
  /// Depth block d of the packed rows starts at data + d * stride.
  int64_t depthBlock = 0, stride = 0;
  const T *data = nullptr;
  std::shared_ptr<const T[]> storage;
};

/// op(A) (M x K) packed for the build now in force.
template <typename T>
std::shared_ptr<const PackedA<T>> packA(bool transA, const T *a, int64_t lda,
                                        int64_t m, int64_t k);

/// A product's operands: op(A) as a matrix, and op(B) as a matrix or as a
/// packer. `packedA`, when it is op(A) packed for the build in force,
/// spares the product packing `a`; `a` must be given all the same.
template <typename T> struct GemmOperands {
  bool transA = false;
  const T *a = nullptr;
  int64_t lda = 0;
  bool transB = false;
  const T *b = nullptr;
  int64_t ldb = 0;
  const PackBFn<T> *packB = nullptr;
  const PackedA<T> *packedA = nullptr;
};

/// C = alpha * op(A) * op(B) + beta * C from general operands, then the
/// epilogue; the same blocks, hence the same bits, as the gemm below.
template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, T alpha,
          const GemmOperands<T> &operands, T beta, T *c, int64_t ldc,
          bool parallel = true, const GemmEpilogue<T> &epilogue = {});

/// C = alpha * op(A) * op(B) + beta * C, row-major, M x N result with
/// leading dimensions lda/ldb/ldc; op(X) is X or its transpose. beta == 0
/// ignores C's previous content (even NaN), as BLAS does. The product is
/// cut into blocks that depend only on the shape, each multiplied by
/// Eigen; `parallel` lets the blocks run on the kernels' threads. The
/// result is the same whatever the thread count and `parallel`.
/// `epilogue` then applies to every element of C. For float and double.
template <typename T>
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, T alpha,
          const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,
          int64_t ldc, bool parallel = true,
          const GemmEpilogue<T> &epilogue = {});

/// C = op(A) * op(B), row-major, C dense (M x N), in unsigned arithmetic:
/// products and sums wrap modulo 2^32 or 2^64, which is two's-complement
/// arithmetic for the signed types of the same width. For uint32_t and
/// uint64_t; one thread.
template <typename U>
void integerGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                 const U *a, int64_t lda, const U *b, int64_t ldb, U *c);

/// The Eigen builds the products can run (lib/reference/eigen).
enum class GemmIsa { Auto, Baseline, Avx2, Avx512 };

/// Test hook: makes the products use the Eigen build for `isa` (Auto: the
/// widest one this CPU runs). Returns false and changes nothing when the
/// CPU lacks it. Not for use while a product runs on another thread.
bool forceGemmIsa(GemmIsa isa);

/// The name of the Eigen build the products use now.
const char *gemmIsaName();

} // namespace mncc::reference::linalg

#endif // MNCC_LIB_REFERENCE_KERNELS_LINALGGEMM_H
