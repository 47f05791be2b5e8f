//===- EigenProducts.h - Eigen's matrix products, one build per ISA -*- C++
//-*-===//
//
// The reference kernels' matrix products are Eigen's. The library is built
// for baseline x86-64, so Eigen is compiled three times, for the baseline,
// for AVX2 with FMA and for AVX-512, each copy in its own namespace
// (Products.inc), and the kernels call the copy this CPU runs.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_REFERENCE_EIGEN_EIGENPRODUCTS_H
#define MNCC_LIB_REFERENCE_EIGEN_EIGENPRODUCTS_H

#include <cstdint>

namespace mncc::reference::eigen {

/// C = alpha * op(A) * op(B) + beta * C on row-major matrices with leading
/// dimensions lda/ldb/ldc, op(X) being X or its transpose; C is M x N.
/// beta == 0 ignores C's previous content. The summation order depends
/// only on the shape and on the build, never on the machine: Eigen's cache
/// blocking is given fixed cache sizes instead of the CPU's.
template <typename T>
using GemmFn = void (*)(bool transA, bool transB, int64_t m, int64_t n,
                        int64_t k, T alpha, const T *a, int64_t lda, const T *b,
                        int64_t ldb, T beta, T *c, int64_t ldc);

/// C = beta * C + the bias of its row (C's old content ignored when beta
/// is 0), on an M x N block: where a product that adds a bias starts.
template <typename T>
using StartFromBiasFn = void (*)(const T *rowBias, int64_t m, int64_t n, T beta,
                                 T *c, int64_t ldc);

/// Each element of an M x N block clamped to [lo, hi] with
/// FusedActivation's rule: v < lo ? lo : v, then v > hi ? hi : v (NaN
/// stays NaN).
template <typename T>
using ClampFn = void (*)(T lo, T hi, int64_t m, int64_t n, T *c, int64_t ldc);

/// One build of the products and of what a Conv does around them.
struct Products {
  const char *name;
  GemmFn<float> sgemm;
  GemmFn<double> dgemm;
  StartFromBiasFn<float> startFromBiasFloat;
  StartFromBiasFn<double> startFromBiasDouble;
  ClampFn<float> clampFloat;
  ClampFn<double> clampDouble;
};

/// The builds; call one only when the CPU runs its instructions
/// (cpuRunsAvx2 / cpuRunsAvx512).
const Products &baselineProducts();
const Products &avx2Products();
const Products &avx512Products();
bool cpuRunsAvx2();
bool cpuRunsAvx512();

/// C = op(A) * op(B) for row-major unsigned matrices (C dense, M x N),
/// wrapping modulo 2^bits (two's-complement products for the signed types
/// too). For uint32_t and uint64_t, in the baseline build only: integer
/// products are rare in models.
template <typename U>
void integerGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                 const U *a, int64_t lda, const U *b, int64_t ldb, U *c);

} // namespace mncc::reference::eigen

#endif // MNCC_LIB_REFERENCE_EIGEN_EIGENPRODUCTS_H
