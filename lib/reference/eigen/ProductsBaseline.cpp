//===- ProductsBaseline.cpp - Eigen's products for baseline x86-64 --------===//
//
// Also the integer products (not speed-critical, so one build) and the
// CPU checks that choose among the builds.
//
//===----------------------------------------------------------------------===//

#define MNCC_EIGEN_NAMESPACE MnccEigenBaseline
#define MNCC_PRODUCTS_FN baselineProducts
#define MNCC_PRODUCTS_NAME "baseline"
#include "Products.inc"

template <typename U>
void mncc::reference::eigen::integerGemm(bool transA, bool transB, int64_t m,
                                         int64_t n, int64_t k, const U *a,
                                         int64_t lda, const U *b, int64_t ldb,
                                         U *c) {
  gemm<U>(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, c, n);
}

template void mncc::reference::eigen::integerGemm(bool, bool, int64_t, int64_t,
                                                  int64_t, const uint32_t *,
                                                  int64_t, const uint32_t *,
                                                  int64_t, uint32_t *);
template void mncc::reference::eigen::integerGemm(bool, bool, int64_t, int64_t,
                                                  int64_t, const uint64_t *,
                                                  int64_t, const uint64_t *,
                                                  int64_t, uint64_t *);

bool mncc::reference::eigen::cpuRunsAvx2() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("f16c");
#else
  return false;
#endif
}

bool mncc::reference::eigen::cpuRunsAvx512() {
#if defined(__x86_64__) || defined(__i386__)
  return cpuRunsAvx2() && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512cd") &&
         __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}
