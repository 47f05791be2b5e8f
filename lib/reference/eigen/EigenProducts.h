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

/// What the kernel does as it loads and stores C in one depth block of a
/// panel product, so that a tile's start and clamp cost no pass over it.
template <typename T> struct PanelEpilogue {
  /// Sums start from the bias of C's row (0 without one) instead of C's
  /// content: the first depth block of a product with beta 0.
  bool start = false;
  /// With `start`, the bias of each row the call covers, or null.
  const T *rowBias = nullptr;
  /// Stores are clamped to [lo, hi] as FusedActivation does: the last
  /// depth block of a product with a fused activation.
  bool clamp = false;
  T lo = 0, hi = 0;
};

/// One build's products on T (float or double), all on row-major
/// matrices with leading dimensions lda/ldb/ldc, op(X) being X or its
/// transpose, C being M x N and the depth K.
template <typename T> struct TypedProducts {
  /// C = alpha * op(A) * op(B) + beta * C (beta == 0 ignores C's previous
  /// content), in one call: Eigen's own blocking, and its matrix-vector
  /// product when M or N is 1.
  void (*gemm)(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
               T alpha, const T *a, int64_t lda, const T *b, int64_t ldb,
               T beta, T *c, int64_t ldc);

  /// Where a product's sum starts, on an M x N block of C: the bias of its
  /// row (rowBias, M values) plus beta * C, or beta * C alone when rowBias
  /// is null; beta == 0 ignores C's previous content.
  void (*startProduct)(const T *rowBias, int64_t m, int64_t n, T beta, T *c,
                       int64_t ldc);

  /// Each element of an M x N block clamped to [lo, hi] with
  /// FusedActivation's rule: v < lo ? lo : v, then v > hi ? hi : v (NaN
  /// stays NaN).
  void (*clamp)(T lo, T hi, int64_t m, int64_t n, T *c, int64_t ldc);

  /// The panel products, for callers that block and pack themselves: the
  /// depth K is cut into blocks of depthBlock(K) (Eigen's rule for a 32 KiB
  /// L1, fixed so that every machine sums in the same order), each operand
  /// is packed once per depth block, and multiply adds one depth block's
  /// product to C.
  int64_t (*depthBlock)(int64_t k);
  /// Packs rows [0, m) of op(A) over `depth` of its columns (a points at
  /// the first) into `packed`: depth * m elements, 64-byte aligned. Rows
  /// of a packed block start at row * depth when `row` is a multiple of 4.
  void (*packA)(bool transA, const T *a, int64_t lda, int64_t m, int64_t depth,
                T *packed);
  /// Packs columns [0, n) of op(B) over `depth` of its rows (b points at
  /// the first) into `packed`: depth * n elements, 64-byte aligned. Every
  /// whole panel of `panelColumns` columns is laid out as a row-major
  /// depth x panelColumns block, at column * depth.
  void (*packB)(bool transB, const T *b, int64_t ldb, int64_t n, int64_t depth,
                T *packed);
  /// The width of packB's panels (Eigen's mr): 8, 24 or 48 floats, 4, 12
  /// or 24 doubles.
  int64_t panelColumns;
  /// C += alpha * (packed A) * (packed B) for one depth block, C's start
  /// and clamp as `epilogue` says. Each element of C gets the same bits
  /// whatever part of the operands the call covers, as long as the rows of
  /// A it covers start at a multiple of 4 and the columns of B at a
  /// multiple of kPanelColumns.
  void (*multiply)(const T *packedA, const T *packedB, int64_t m, int64_t n,
                   int64_t depth, T alpha, T *c, int64_t ldc,
                   const PanelEpilogue<T> &epilogue);
};

/// Column blocks of op(B) start at multiples of this: a multiple of the
/// column panel of Eigen's kernel in every build (8, 24 or 48 floats; 4,
/// 12 or 24 doubles), so that each column falls in the same kind of panel
/// whatever the block.
constexpr int64_t kPanelColumns = 48;

/// One build of the products and of what a Conv does around them.
struct Products {
  const char *name;
  TypedProducts<float> f32;
  TypedProducts<double> f64;
  template <typename T> const TypedProducts<T> &of() const {
    if constexpr (sizeof(T) == sizeof(float))
      return f32;
    else
      return f64;
  }
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
