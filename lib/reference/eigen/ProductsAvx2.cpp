//===- ProductsAvx2.cpp - Eigen's products for AVX2 with FMA --------------===//
//
// Compiled with -mavx2 -mfma -mf16c (CMakeLists.txt); called only when
// cpuRunsAvx2().
//
//===----------------------------------------------------------------------===//

#define MNCC_EIGEN_NAMESPACE MnccEigenAvx2
#define MNCC_PRODUCTS_FN avx2Products
#define MNCC_PRODUCTS_NAME "avx2"
#include "Products.inc"

#if defined(__x86_64__) && !defined(EIGEN_VECTORIZE_FMA)
#error "this build is meant for AVX2 with FMA"
#endif
