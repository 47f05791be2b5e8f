//===- ProductsAvx512.cpp - Eigen's products for AVX-512 ------------------===//
//
// Compiled with the AVX-512 F/CD/VL/BW/DQ flags (CMakeLists.txt); called
// only when cpuRunsAvx512().
//
//===----------------------------------------------------------------------===//

#define MNCC_EIGEN_NAMESPACE MnccEigenAvx512
#define MNCC_PRODUCTS_FN avx512Products
#define MNCC_PRODUCTS_NAME "avx512"
#include "Products.inc"

#if defined(__x86_64__) && !defined(EIGEN_VECTORIZE_AVX512)
#error "this build is meant for AVX-512"
#endif
