//===- LinalgGemm.cpp - Eigen GEMM and the kernels' thread split ----------===//
//
// The only translation unit of the reference kernels that includes Eigen:
// its GEMM templates are slow to compile, so every kernel that needs a
// matrix product (MatMul, Gemm, Conv, ConvTranspose, ...) calls the two
// instantiations here.
//
//===----------------------------------------------------------------------===//

#include "LinalgGemm.h"

#include <Eigen/Core>

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

template <typename T>
using RowMajor =
    Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ConstMap = Eigen::Map<const RowMajor<T>, Eigen::Unaligned,
                            Eigen::OuterStride<Eigen::Dynamic>>;
template <typename T>
using MutableMap = Eigen::Map<RowMajor<T>, Eigen::Unaligned,
                              Eigen::OuterStride<Eigen::Dynamic>>;

/// One block of the product, single-threaded.
template <typename T>
void gemmBlock(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
               T alpha, const T *a, int64_t lda, const T *b, int64_t ldb,
               T beta, T *c, int64_t ldc) {
  MutableMap<T> cMat(c, m, n, Eigen::OuterStride<Eigen::Dynamic>(ldc));
  if (beta == T(0))
    cMat.setZero();
  else if (beta != T(1))
    cMat *= beta;
  if (k == 0)
    return;
  // A stored as m x k (or k x m when transposed), B as k x n (or n x k).
  ConstMap<T> aMat(a, transA ? k : m, transA ? m : k,
                   Eigen::OuterStride<Eigen::Dynamic>(lda));
  ConstMap<T> bMat(b, transB ? n : k, transB ? k : n,
                   Eigen::OuterStride<Eigen::Dynamic>(ldb));
  if (!transA && !transB)
    cMat.noalias() += alpha * (aMat * bMat);
  else if (transA && !transB)
    cMat.noalias() += alpha * (aMat.transpose() * bMat);
  else if (!transA && transB)
    cMat.noalias() += alpha * (aMat * bMat.transpose());
  else
    cMat.noalias() += alpha * (aMat.transpose() * bMat.transpose());
}

template <typename T>
void gemmImpl(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              T alpha, const T *a, int64_t lda, const T *b, int64_t ldb, T beta,
              T *c, int64_t ldc, bool parallel) {
  if (m <= 0 || n <= 0)
    return;
  // The output splits along its longer side into about 8 blocks whose
  // size depends only on the shape, never on the thread count: each block
  // is one Eigen product, so the summation order (hence the result) is the
  // same whatever the thread count, and blocks stay large enough for
  // Eigen's packing to pay off.
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
