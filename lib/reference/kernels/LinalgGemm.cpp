//===- LinalgGemm.cpp - BLAS GEMM and the kernels' thread split -----------===//
//
// Every kernel that needs a matrix product (MatMul, Gemm, Conv,
// ConvTranspose, ...) calls the GEMM here, which splits the output into
// blocks over the kernels' threads and multiplies each with OpenBLAS.
//
//===----------------------------------------------------------------------===//

#include "LinalgGemm.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

using namespace mncc::reference;

int linalg::numThreads() {
  static const int threads = [] {
    const char *text = std::getenv("MNCC_REFERENCE_THREADS");
    int value = text ? std::atoi(text) : 0;
    return value > 0 ? std::min(value, 256) : 2;
  }();
  return threads;
}

void linalg::parallelFor(int64_t count, int64_t grain,
                         const std::function<void(int64_t, int64_t)> &fn) {
  if (count <= 0)
    return;
  grain = std::max<int64_t>(grain, 1);
  int64_t chunks = (count + grain - 1) / grain;
  int64_t threads = std::min<int64_t>(numThreads(), chunks);
  if (threads <= 1) {
    // Same chunks as the threaded path, so results match it bit for bit.
    for (int64_t begin = 0; begin < count; begin += grain)
      fn(begin, std::min(count, begin + grain));
    return;
  }
  std::atomic<int64_t> next{0};
  auto worker = [&] {
    for (int64_t chunk = next++; chunk < chunks; chunk = next++) {
      int64_t begin = chunk * grain;
      fn(begin, std::min(count, begin + grain));
    }
  };
  std::vector<std::thread> helpers;
  for (int64_t t = 1; t < threads; ++t)
    helpers.emplace_back(worker);
  worker();
  for (std::thread &helper : helpers)
    helper.join();
}

namespace {

/// One block of the product, on one thread: OpenBLAS picks its kernel for
/// this CPU at run time (AVX-512, AVX2 or SSE), so the library itself stays
/// built for the baseline instruction set.
void gemmBlock(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
               float alpha, const float *a, int64_t lda, const float *b,
               int64_t ldb, float beta, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b,
              ldb, beta, c, ldc);
}

void gemmBlock(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
               double alpha, const double *a, int64_t lda, const double *b,
               int64_t ldb, double beta, double *c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b,
              ldb, beta, c, ldc);
}

/// OpenBLAS's own threads would split the work differently for each thread
/// count; the kernels split it themselves, in shape-dependent blocks.
void singleThreadedBlas() {
  static const bool once = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)once;
}

template <typename T>
void gemmImpl(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              T alpha, const T *a, int64_t lda, const T *b, int64_t ldb, T beta,
              T *c, int64_t ldc, bool parallel) {
  if (m <= 0 || n <= 0)
    return;
  singleThreadedBlas();
  if (alpha == T(0) && k > 0) {
    // BLAS skips the product when alpha is 0; ONNX's formula still has
    // 0 * inf = NaN in it.
    std::vector<T> product(m * n);
    gemmImpl(transA, transB, m, n, k, T(1), a, lda, b, ldb, T(0),
             product.data(), n, parallel);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T &out = c[i * ldc + j];
        out = T(0) * product[i * n + j] + (beta == T(0) ? T(0) : beta * out);
      }
    return;
  }
  if (k == 0) {
    // BLAS wants a leading dimension of at least 1; C = beta * C.
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
    return;
  }
  // The output splits along its longer side into about 8 blocks whose
  // size depends only on the shape, never on the thread count: each block
  // is one BLAS product, so the summation order (hence the result) is the
  // same whatever the thread count, and blocks stay large enough for
  // OpenBLAS's packing to pay off.
  bool large = m * n * std::max<int64_t>(k, 1) >= (int64_t(1) << 18);
  int64_t dim = std::max(m, n);
  int64_t block = std::max<int64_t>(64, (dim + 7) / 8);
  block = (block + 15) / 16 * 16;
  if (!parallel || !large || dim <= block) {
    gemmBlock(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  if (m >= n) {
    linalg::parallelFor(m, block, [&](int64_t begin, int64_t end) {
      const T *aBlock = transA ? a + begin : a + begin * lda;
      gemmBlock(transA, transB, end - begin, n, k, alpha, aBlock, lda, b, ldb,
                beta, c + begin * ldc, ldc);
    });
  } else {
    linalg::parallelFor(n, block, [&](int64_t begin, int64_t end) {
      const T *bBlock = transB ? b + begin * ldb : b + begin;
      gemmBlock(transA, transB, m, end - begin, k, alpha, a, lda, bBlock, ldb,
                beta, c + begin, ldc);
    });
  }
}

} // namespace

void linalg::gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                  float alpha, const float *a, int64_t lda, const float *b,
                  int64_t ldb, float beta, float *c, int64_t ldc,
                  bool parallel) {
  gemmImpl(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
           parallel);
}

void linalg::gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                  double alpha, const double *a, int64_t lda, const double *b,
                  int64_t ldb, double beta, double *c, int64_t ldc,
                  bool parallel) {
  gemmImpl(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
           parallel);
}
