//===- Numerics.cpp - Bit-exact MN-Core 2 floating point ------------------===//
//
// The block operations of the numeric core: the MAU matrix-vector FMA,
// block-float conversion and the RRN fadd reductions. Section references are to
// chapter 4 of the MN-Core 2 Software Development Manual;
// docs/target/mncore2.md states the rules and the decisions taken.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Numerics.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#if defined(__GNUC__) && defined(__x86_64__)
#define MNCC_EMU_AVX512 1
#include <immintrin.h>
#endif

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mncc::emu {

using detail::highestBit;
using detail::shiftRightNearestEven;

//===----------------------------------------------------------------------===//
// MAU matrix-vector FMA
//===----------------------------------------------------------------------===//

namespace {

/// How one block-float kind is read and multiplied.
struct BlockFloatReading {
  /// Low mantissa bits the MAU treats as zero (pseudo-single: 5).
  unsigned IgnoredLowBits;
  /// Whether an exponent field of 0 with a non-zero mantissa is the
  /// extended half representation.
  bool HasExtended;
};

/// A block-float element as the MAU sees it.
struct BlockElement {
  bool Negative = false;
  bool Infinite = false;
  /// Power-of-two offset below the block exponent (6 for extended halves).
  unsigned Offset = 0;
  uint64_t Mantissa = 0;
};

template <typename F>
uint32_t blockExponent(const typename F::Storage *block, unsigned n) {
  uint32_t maxExp = 0;
  for (unsigned i = 0; i < n; ++i)
    if (F::exponent(block[i]) > maxExp)
      maxExp = F::exponent(block[i]);
  return maxExp;
}

template <typename F>
BlockElement readBlockElement(typename F::Storage bits,
                              const BlockFloatReading &reading) {
  BlockElement element;
  element.Negative = F::sign(bits);
  uint32_t exp = F::exponent(bits);
  uint64_t mantissa = uint64_t(F::mantissa(bits));
  mantissa &= ~((uint64_t(1) << reading.IgnoredLowBits) - 1);
  if (exp == F::MaxExp) {
    element.Infinite = true;
    return element;
  }
  if (exp == 0) {
    // Zero, or with the extended representation a value below the block
    // exponent by 6 (manual 4, half block float with extension).
    if (reading.HasExtended) {
      element.Offset = HalfExtendedExponentOffset;
      element.Mantissa = mantissa;
    }
    return element;
  }
  element.Mantissa = mantissa;
  return element;
}

/// sum_i a[i]*b[i] + c before the final rounding. The products are aligned
/// at the scale of a product of two block-exponent elements; a product of a
/// lower scale (an extended half, or an invalid block) is shifted down to it
/// with a round to nearest even, then all are summed as exact signed
/// integers (manual 4, MAU matrix-vector FMA).
template <typename F, typename Multiplier, typename Acc>
ExactValue matVecExact(const typename F::Storage *a,
                       const typename F::Storage *b, unsigned n,
                       typename Acc::Storage c,
                       const BlockFloatReading &reading) {
  // A block float with exponent field E and mantissa field M is
  // M * 2^(E - bias - (ManBits - 1)).
  int32_t unitScale = -F::Bias - int32_t(F::ManBits - 1);
  int32_t referenceScale = int32_t(blockExponent<F>(a, n)) +
                           int32_t(blockExponent<F>(b, n)) + 2 * unitScale;
  Int128 sum = 0;
  bool infinite = false;
  bool infiniteNegative = false;
  for (unsigned i = 0; i < n; ++i) {
    BlockElement lhs = readBlockElement<F>(a[i], reading);
    BlockElement rhs = readBlockElement<F>(b[i], reading);
    bool negative = lhs.Negative != rhs.Negative;
    // A zero element contributes nothing, even times an infinite one (as
    // in vector mode, decision 6).
    if ((!lhs.Infinite && lhs.Mantissa == 0) ||
        (!rhs.Infinite && rhs.Mantissa == 0))
      continue;
    if (lhs.Infinite || rhs.Infinite) {
      if (!infinite)
        infiniteNegative = negative;
      infinite = true;
      continue;
    }
    UInt128 product =
        mauMultiplySignificands<Multiplier>(lhs.Mantissa, rhs.Mantissa);
    product = shiftRightNearestEven(product, lhs.Offset + rhs.Offset);
    sum += negative ? -Int128(product) : Int128(product);
  }
  ExactValue products;
  if (infinite) {
    products.Infinite = true;
    products.Negative = infiniteNegative;
  } else {
    products.Negative = sum < 0;
    products.Magnitude = UInt128(sum < 0 ? -sum : sum);
    products.Scale = referenceScale;
  }
  return addExact(products, decode<Acc>(c));
}

constexpr BlockFloatReading PlainReading = {0, false};

} // namespace

uint32_t mauMatVecHalf(const uint16_t *a, const uint16_t *b, unsigned n,
                       uint32_t c, bool reduceToHalf) {
  constexpr BlockFloatReading HalfReading = {0, true};
  ExactValue value = matVecExact<Half, Half, Single>(a, b, n, c, HalfReading);
  return reduceToHalf ? roundToFormat<Half>(value)
                      : roundToFormat<Single>(value);
}

uint32_t mauMatVecPseudoSingle(const uint32_t *a, const uint32_t *b, unsigned n,
                               uint32_t c, bool reduceToHalf) {
  // Pseudo-single products are exact: use the exact (half) multiplier.
  constexpr BlockFloatReading PseudoReading = {PseudoSingleIgnoredBits, false};
  ExactValue value =
      matVecExact<Single, Half, Single>(a, b, n, c, PseudoReading);
  return reduceToHalf ? roundToFormat<Half>(value)
                      : roundToFormat<Single>(value);
}

uint32_t mauMatVecSingle(const uint32_t *a, const uint32_t *b, unsigned n,
                         uint32_t c, bool reduceToHalf) {
  ExactValue value =
      matVecExact<Single, Single, Single>(a, b, n, c, PlainReading);
  return reduceToHalf ? roundToFormat<Half>(value)
                      : roundToFormat<Single>(value);
}

uint64_t mauMatVecDouble(const uint64_t *a, const uint64_t *b, unsigned n,
                         uint64_t c, bool reduceToSingle) {
  ExactValue value =
      matVecExact<Double, Double, Double>(a, b, n, c, PlainReading);
  return reduceToSingle ? roundToFormat<Single>(value)
                        : roundToFormat<Double>(value);
}

//===----------------------------------------------------------------------===//
// MAU matrix-vector FMA on decoded operands
//===----------------------------------------------------------------------===//

namespace {

/// 2^exponent as a double; exponent must be in the normal range.
double powerOfTwo(int exponent) {
  uint64_t bits = uint64_t(exponent + 1023) << 52;
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// The value of a single as MN-Core reads it, for a finite exponent field:
/// exponent field 0 is zero whatever the mantissa holds.
double finiteSingleValue(uint32_t bits) {
  if (Single::exponent(bits) == 0)
    return 0.0;
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return double(value);
}

/// The common result tail (roundToFormat) for the real value total + error,
/// where total is a normal, non-zero double and error the exact rounding
/// error of the double addition that produced it (|error| is at most half
/// an ulp of total). Rounding total's 53 bits to nearest even at Out's
/// precision gives the right answer except at an exact tie, where the
/// error, when there is one, says which way the real value lies.
template <typename Out>
typename Out::Storage roundDoubleToFormat(double total, double error) {
  uint64_t bits;
  std::memcpy(&bits, &total, sizeof(bits));
  bool negative = bits >> 63;
  int64_t exponent = int64_t((bits >> 52) & 0x7ff) - 1023;
  uint64_t significand = (bits & ((uint64_t(1) << 52) - 1)) | uint64_t(1) << 52;
  constexpr unsigned Dropped = 52 - Out::ManBits;
  constexpr uint64_t Half = uint64_t(1) << (Dropped - 1);
  uint64_t kept = significand >> Dropped;
  uint64_t rest = significand & ((uint64_t(1) << Dropped) - 1);
  bool up;
  if (rest != Half)
    up = rest > Half;
  else if (error == 0)
    up = kept & 1;
  else
    up = (error > 0) != negative; // the real magnitude lies beyond the tie
  kept += up;
  if (kept >> (Out::ManBits + 1)) { // rounding carried out
    kept >>= 1;
    ++exponent;
  }
  int64_t biased = exponent + Out::Bias;
  if (biased >= int64_t(Out::MaxExp))
    return Out::pack(negative, Out::MaxExp, 0);
  if (biased <= 0)
    return 0;
  return Out::pack(negative, uint32_t(biased), typename Out::Storage(kept));
}

/// The tail of the matrix-vector FMA for finite products: the exact sum
/// sum * 2^scale of the products plus the single c, rounded once into Out.
/// Both terms are exact doubles (sum has at most 40 significant bits); the
/// double addition may round, but its error is recovered exactly (Knuth's
/// two-sum) and decides the ties.
template <typename Out>
inline uint32_t finishMatVec(int64_t sum, int scale, uint32_t c) {
  if (Single::exponent(c) == Single::MaxExp)
    return Out::pack(Single::sign(c), Out::MaxExp, 0);
  double products = double(sum) * powerOfTwo(scale);
  double addend = finiteSingleValue(c);
  double total = products + addend;
  if (total == 0)
    return 0;
  double addendPart = total - products;
  double productsPart = total - addendPart;
  double error = (products - productsPart) + (addend - addendPart);
  return roundDoubleToFormat<Out>(total, error);
}

/// The scale of one mantissa unit of a block float at block exponent field
/// 0, less the bits the multiplier ignores: an element with exponent field
/// E and mantissa field M is M * 2^(E - bias - (ManBits - 1)).
template <typename F> constexpr int unitScaleOf(unsigned ignoredBits) {
  return -F::Bias - int(F::ManBits - 1) + int(ignoredBits);
}

/// The same for a product of two elements.
template <typename F> constexpr int productUnitScale(unsigned ignoredBits) {
  return 2 * unitScaleOf<F>(ignoredBits);
}

/// Elements 2p and 2p + 1 of 16 significands as one 32-bit value (element
/// 2p in the low half, as pmaddwd pairs them).
inline int32_t vectorPair(const int16_t *significands, unsigned p) {
  int32_t pair;
  std::memcpy(&pair, significands + 2 * p, sizeof(pair));
  return pair;
}

/// sums[r] = sum_i NormalSignificand[i] of row r times that of the
/// vector, for the 16 rows: 16 products below 2^18 each, so every sum is
/// exact in 32 bits.
void halfDotProducts(const HalfMatrixProducts &matrix,
                     const DecodedHalfBlock &vector, int32_t *sums) {
#if defined(__SSE2__)
  // pmaddwd multiplies 16-bit lanes and adds neighbouring products into 32
  // bits, exactly: four rows of a column pair against the vector's pair.
  for (unsigned r = 0; r < HalfBlockSize; r += 4) {
    __m128i sum = _mm_setzero_si128();
    for (unsigned p = 0; p < HalfBlockSize / 2; ++p)
      sum = _mm_add_epi32(
          sum, _mm_madd_epi16(
                   _mm_load_si128(reinterpret_cast<const __m128i *>(
                       matrix.ColumnPairs[p][r])),
                   _mm_set1_epi32(vectorPair(vector.NormalSignificand, p))));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(sums + r), sum);
  }
#else
  for (unsigned r = 0; r < HalfBlockSize; ++r) {
    int32_t sum = 0;
    for (unsigned i = 0; i < HalfBlockSize; ++i)
      sum += int32_t(matrix.ColumnPairs[i / 2][r][i % 2]) *
             int32_t(vector.NormalSignificand[i]);
    sums[r] = sum;
  }
#endif
}

/// y[r] = sums[r] * 2^scale(r) + c[r] in host single precision for the 16
/// rows; returns the rows whose c is infinite, which this cannot do.
///
/// The products P = sums[r] * 2^scale are exact floats (|sum| < 2^22 and
/// the scale within [-78, 46]) and c is a finite single, so the host's
/// addition rounds the exact sum to nearest even once, and overflows to
/// infinity, as the MAU does. The result cannot be subnormal, where the
/// host and the MAU would differ: either P = 0 and the result is c, or
/// |c| < |P| / 2 and the result exceeds 2^-79, or c is at least half of P
/// (at least 2^-79), so its ulp, and any non-zero sum, is at least 2^-102.
/// An exact zero is +0 in both. This needs the host's default rounding
/// mode (to nearest), which mncc never changes.
uint32_t halfTailInSingle(const HalfMatrixProducts &matrix,
                          const DecodedHalfBlock &vector, const int32_t *sums,
                          const uint32_t *c, uint32_t *y) {
  uint32_t infiniteAddends = 0;
#if defined(__SSE2__)
  const __m128 vectorWeight = _mm_set1_ps(vector.UnitWeight);
  const __m128i exponentMask = _mm_set1_epi32(int32_t(Single::MaxExp));
  const __m128i zero = _mm_setzero_si128();
  for (unsigned r = 0; r < HalfBlockSize; r += 4) {
    __m128 products =
        _mm_mul_ps(_mm_mul_ps(_mm_cvtepi32_ps(_mm_loadu_si128(
                                  reinterpret_cast<const __m128i *>(sums + r))),
                              _mm_loadu_ps(matrix.RowWeights + r)),
                   vectorWeight);
    __m128i addend = _mm_loadu_si128(reinterpret_cast<const __m128i *>(c + r));
    __m128i exponent =
        _mm_and_si128(_mm_srli_epi32(addend, Single::ManBits), exponentMask);
    // Exponent field 0 is zero whatever the mantissa holds.
    addend = _mm_andnot_si128(_mm_cmpeq_epi32(exponent, zero), addend);
    __m128 total = _mm_add_ps(products, _mm_castsi128_ps(addend));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(y + r),
                     _mm_castps_si128(total));
    infiniteAddends |= uint32_t(_mm_movemask_ps(_mm_castsi128_ps(
                           _mm_cmpeq_epi32(exponent, exponentMask))))
                       << r;
  }
#else
  for (unsigned r = 0; r < HalfBlockSize; ++r) {
    float products = float(sums[r]) * matrix.RowWeights[r] * vector.UnitWeight;
    uint32_t exponent = Single::exponent(c[r]);
    uint32_t addendBits = exponent == 0 ? 0 : c[r];
    float addend;
    std::memcpy(&addend, &addendBits, sizeof(addend));
    float total = products + addend;
    std::memcpy(&y[r], &total, sizeof(total));
    infiniteAddends |= uint32_t(exponent == Single::MaxExp) << r;
  }
#endif
  return infiniteAddends;
}

#ifdef MNCC_EMU_AVX512
// GCC 12 warns that the intrinsics' undefined pass-through operand "is used
// uninitialized"; it is not (every lane is written).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wpsabi"
/// The 16 row sums of the products with the vector whose 16 significands
/// `vector` points at: per column pair one pmaddwd of all 16 rows against
/// that pair in every lane, summed. Integer sums are exact, so the order
/// of the additions does not matter.
__attribute__((target("avx512f,avx512bw"), always_inline)) inline __m512i
halfRowSumsAvx512(const HalfMatrixProducts &matrix, const int16_t *vector) {
  __m512i sum = _mm512_setzero_si512();
  for (unsigned p = 0; p < HalfBlockSize / 2; ++p)
    sum = _mm512_add_epi32(
        sum, _mm512_madd_epi16(_mm512_loadu_si512(matrix.ColumnPairs[p]),
                               _mm512_set1_epi32(vectorPair(vector, p))));
  return sum;
}

/// halfDotProducts with 512-bit vectors.
__attribute__((target("avx512f,avx512bw"))) void
halfDotProductsAvx512(const HalfMatrixProducts &matrix,
                      const DecodedHalfBlock &vector, int32_t *sums) {
  _mm512_storeu_si512(sums,
                      halfRowSumsAvx512(matrix, vector.NormalSignificand));
}

/// The 16 addends as the tail adds them: exponent field 0 read as zero.
/// `infinite` gets the rows whose addend is infinite, which the tail
/// cannot take.
__attribute__((target("avx512f"), always_inline)) inline __m512i
finiteAddendsAvx512(__m512i addend, __mmask16 &infinite) {
  const __m512i exponentMask = _mm512_set1_epi32(int32_t(Single::MaxExp));
  __m512i exponent = _mm512_and_si512(
      _mm512_srli_epi32(addend, Single::ManBits), exponentMask);
  infinite = _mm512_cmpeq_epi32_mask(exponent, exponentMask);
  return _mm512_maskz_mov_epi32(
      _mm512_cmpneq_epi32_mask(exponent, _mm512_setzero_si512()), addend);
}

/// halfTailInSingle's value for all 16 rows: the same operations in the
/// same order, so the same bits.
__attribute__((target("avx512f"), always_inline)) inline __m512i
halfTailAvx512(__m512i sums, const float *rowWeights, float vectorWeight,
               __m512i finiteAddend) {
  __m512 products = _mm512_mul_ps(
      _mm512_mul_ps(_mm512_cvtepi32_ps(sums), _mm512_loadu_ps(rowWeights)),
      _mm512_set1_ps(vectorWeight));
  return _mm512_castps_si512(
      _mm512_add_ps(products, _mm512_castsi512_ps(finiteAddend)));
}

/// halfTailInSingle on all 16 rows in one 512-bit vector.
__attribute__((target("avx512f"))) uint32_t
halfTailInSingleAvx512(const HalfMatrixProducts &matrix,
                       const DecodedHalfBlock &vector, const int32_t *sums,
                       const uint32_t *c, uint32_t *y) {
  __mmask16 infinite;
  __m512i addend = finiteAddendsAvx512(_mm512_loadu_si512(c), infinite);
  _mm512_storeu_si512(y, halfTailAvx512(_mm512_loadu_si512(sums),
                                        matrix.RowWeights, vector.UnitWeight,
                                        addend));
  return uint32_t(infinite);
}

/// A MAB's four PEs' long words (High[k], Low[k]) as 16 singles in element
/// order: the long words interleaved, each one's two singles swapped (its
/// most significant single comes first).
__attribute__((target("avx512f"), always_inline)) inline __m512i
singlesFromLanesAvx512(const uint64_t *high, const uint64_t *low) {
  const __m512i interleave = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
  __m512i words = _mm512_permutex2var_epi64(
      _mm512_castsi256_si512(
          _mm256_loadu_si256(reinterpret_cast<const __m256i *>(high))),
      interleave,
      _mm512_castsi256_si512(
          _mm256_loadu_si256(reinterpret_cast<const __m256i *>(low))));
  return _mm512_shuffle_epi32(words, _MM_PERM_CDAB);
}

/// The inverse: the singles of each long word swapped back, then the even
/// long words to the high halves, the odd ones to the low.
__attribute__((target("avx512f"), always_inline)) inline void
lanesFromSinglesAvx512(__m512i singles, uint64_t *high, uint64_t *low) {
  __m512i words =
      _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7),
                               _mm512_shuffle_epi32(singles, _MM_PERM_CDAB));
  _mm256_storeu_si256(reinterpret_cast<__m256i *>(high),
                      _mm512_castsi512_si256(words));
  _mm256_storeu_si256(reinterpret_cast<__m256i *>(low),
                      _mm512_extracti64x4_epi64(words, 1));
}

bool cpuHasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl");
  return has;
}

#pragma GCC diagnostic pop

std::atomic<bool> wideMatVecAllowed{true};

bool hasAvx512() {
  return cpuHasAvx512() && wideMatVecAllowed.load(std::memory_order_relaxed);
}
#endif

/// The products of row and vector with an extended factor, which the
/// multiplier shifts down to the block scale by 6 bits per extended factor,
/// rounding each to nearest even on its own.
int32_t halfExtendedProducts(const DecodedHalfBlock &row,
                             const DecodedHalfBlock &vector) {
  int32_t sum = 0;
  for (uint32_t mask = row.ExtendedMask | vector.ExtendedMask; mask;
       mask &= mask - 1) {
    unsigned i = unsigned(__builtin_ctz(mask));
    int32_t product =
        int32_t(row.Significand[i]) * int32_t(vector.Significand[i]);
    unsigned shift =
        HalfExtendedExponentOffset *
        (((row.ExtendedMask >> i) & 1) + ((vector.ExtendedMask >> i) & 1));
    // Round the magnitude to nearest even: add just under half a unit,
    // plus one when the kept part is odd, and truncate.
    int32_t negative = product >> 31; // all ones when negative
    uint32_t magnitude = uint32_t((product ^ negative) - negative);
    uint32_t kept = (magnitude + (uint32_t(1) << (shift - 1)) - 1 +
                     ((magnitude >> shift) & 1)) >>
                    shift;
    sum += (int32_t(kept) ^ negative) - negative;
  }
  return sum;
}

#if defined(__SSE2__)
/// The largest of eight signed 16-bit lanes.
inline int maxLane16(__m128i lanes) {
  lanes = _mm_max_epi16(lanes, _mm_shuffle_epi32(lanes, 0x4e));
  lanes = _mm_max_epi16(lanes, _mm_shuffle_epi32(lanes, 0xb1));
  lanes = _mm_max_epi16(lanes, _mm_srli_epi32(lanes, 16));
  return int16_t(_mm_cvtsi128_si32(lanes) & 0xffff);
}

/// decodeHalfBlock on two vectors of eight halves each, element order.
void decodeHalfLanes(__m128i first, __m128i second, DecodedHalfBlock &out) {
  const __m128i zero = _mm_setzero_si128();
  const __m128i mantissaMask = _mm_set1_epi16(int16_t(Half::ManMask));
  const __m128i infExponent = _mm_set1_epi16(int16_t(Half::MaxExp));
  __m128i maxLanes = zero, infLanes = zero, extendedLanes[2];
  __m128i parts[2] = {first, second};
  for (unsigned part = 0; part < 2; ++part) {
    __m128i bits = parts[part];
    __m128i exponent =
        _mm_and_si128(_mm_srli_epi16(bits, Half::ManBits), infExponent);
    __m128i mantissa = _mm_and_si128(bits, mantissaMask);
    __m128i negative = _mm_srai_epi16(bits, 15); // all ones when negative
    __m128i significand =
        _mm_sub_epi16(_mm_xor_si128(mantissa, negative), negative);
    // Extended: exponent field 0 and a non-zero mantissa.
    __m128i extended = _mm_andnot_si128(_mm_cmpeq_epi16(mantissa, zero),
                                        _mm_cmpeq_epi16(exponent, zero));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out.Bits + 8 * part), bits);
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out.Significand + 8 * part),
                     significand);
    _mm_storeu_si128(
        reinterpret_cast<__m128i *>(out.NormalSignificand + 8 * part),
        _mm_andnot_si128(extended, significand));
    maxLanes = _mm_max_epi16(maxLanes, exponent);
    infLanes = _mm_or_si128(infLanes, _mm_cmpeq_epi16(exponent, infExponent));
    extendedLanes[part] = extended;
  }
  uint32_t maxExp = uint32_t(maxLane16(maxLanes));
  out.BlockExponent = int32_t(maxExp);
  out.UnitWeight = float(powerOfTwo(int(maxExp) + unitScaleOf<Half>(0)));
  out.ExtendedMask = uint32_t(
      _mm_movemask_epi8(_mm_packs_epi16(extendedLanes[0], extendedLanes[1])));
  out.NeedsExactPath = _mm_movemask_epi8(infLanes) != 0;
}

/// Four halves of a long word in element order: most significant first.
__m128i halvesOfLongWords(const uint64_t *words) {
  __m128i lanes = _mm_loadu_si128(reinterpret_cast<const __m128i *>(words));
  // In memory a long word's halves come least significant first.
  lanes = _mm_shufflelo_epi16(lanes, 0x1b);
  return _mm_shufflehi_epi16(lanes, 0x1b);
}
#endif

} // namespace

void decodeHalfBlock(const uint16_t *elements, DecodedHalfBlock &out) {
#if defined(__SSE2__)
  const __m128i *lanes = reinterpret_cast<const __m128i *>(elements);
  decodeHalfLanes(_mm_loadu_si128(lanes), _mm_loadu_si128(lanes + 1), out);
#else
  uint32_t maxExp = 0;
  uint32_t extendedMask = 0;
  bool needsExact = false;
  for (unsigned i = 0; i < HalfBlockSize; ++i) {
    uint16_t bits = elements[i];
    uint32_t exp = Half::exponent(bits);
    int16_t mantissa = int16_t(Half::mantissa(bits));
    maxExp = exp > maxExp ? exp : maxExp;
    needsExact |= exp == Half::MaxExp;
    // An element with exponent field 0 and a non-zero mantissa is extended
    // (manual 4, half block float with extension); with mantissa 0 it is
    // zero either way.
    bool extended = exp == 0 && mantissa != 0;
    extendedMask |= uint32_t(extended) << i;
    int16_t significand = Half::sign(bits) ? int16_t(-mantissa) : mantissa;
    out.Bits[i] = bits;
    out.Significand[i] = significand;
    out.NormalSignificand[i] = extended ? 0 : significand;
  }
  out.BlockExponent = int32_t(maxExp);
  out.UnitWeight = float(powerOfTwo(int(maxExp) + unitScaleOf<Half>(0)));
  out.ExtendedMask = extendedMask;
  out.NeedsExactPath = needsExact;
#endif
}

void decodeHalfBlockOfLongWords(const uint64_t *words, DecodedHalfBlock &out) {
#if defined(__SSE2__)
  decodeHalfLanes(halvesOfLongWords(words), halvesOfLongWords(words + 2), out);
#else
  uint16_t elements[HalfBlockSize];
  for (unsigned i = 0; i < HalfBlockSize; ++i)
    elements[i] = uint16_t(words[i / 4] >> (48 - 16 * (i % 4)));
  decodeHalfBlock(elements, out);
#endif
}

void decodePseudoSingleBlock(const uint32_t *elements,
                             DecodedPseudoSingleBlock &out) {
  uint32_t maxExp = 0;
  bool needsExact = false;
  for (unsigned i = 0; i < PseudoSingleBlockSize; ++i) {
    uint32_t bits = elements[i];
    uint32_t exp = Single::exponent(bits);
    maxExp = exp > maxExp ? exp : maxExp;
    needsExact |= exp == Single::MaxExp;
    int32_t magnitude =
        exp == 0 ? 0
                 : int32_t(Single::mantissa(bits) >> PseudoSingleIgnoredBits);
    out.Significand[i] = Single::sign(bits) ? -magnitude : magnitude;
    out.Bits[i] = bits;
  }
  out.BlockExponent = int32_t(maxExp);
  out.NeedsExactPath = needsExact;
}

void decodeHalfMatrix(const uint64_t *words, HalfMatrixProducts &products,
                      DecodedHalfBlock *rows) {
  products.ExtendedRows = 0;
  products.ExactRows = 0;
  for (unsigned r = 0; r < HalfBlockSize; ++r) {
    DecodedHalfBlock &row = rows[r];
    decodeHalfBlockOfLongWords(words + r * 4, row);
    // Elements 2p and 2p + 1 lie side by side in both: a pair at a time.
    for (unsigned p = 0; p < HalfBlockSize / 2; ++p)
      std::memcpy(products.ColumnPairs[p][r], row.NormalSignificand + 2 * p,
                  sizeof products.ColumnPairs[p][r]);
    products.RowWeights[r] = row.UnitWeight;
    products.ExtendedRows |= uint32_t(row.ExtendedMask != 0) << r;
    products.ExactRows |= uint32_t(row.NeedsExactPath) << r;
  }
}

#ifdef MNCC_EMU_AVX512
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace {
/// decodeHalfMatrixProducts two rows per 512-bit vector: a long word's two
/// 32-bit halves each hold a pair of elements, the first in the high 16
/// bits; rotated by 16, a pair lies as ColumnPairs holds it (element 2p
/// low), pair p of a row in the row's 32-bit lane p ^ 1. The rows' pairs
/// are then gathered column by column.
__attribute__((target("avx512f,avx512bw,avx512vl"))) void
decodeHalfMatrixProductsAvx512(const uint64_t *words,
                               HalfMatrixProducts &products) {
  const __m512i expMask = _mm512_set1_epi16(int16_t(Half::MaxExp));
  const __m512i manMask = _mm512_set1_epi16(int16_t(Half::ManMask));
  const __m512i zero = _mm512_setzero_si512();
  alignas(64) int32_t pairs[HalfBlockSize][HalfBlockSize / 2];
  uint32_t extendedRows = 0, exactRows = 0;
  for (unsigned q = 0; q < HalfBlockSize / 2; ++q) {
    __m512i x = _mm512_rol_epi32(_mm512_loadu_si512(words + 8 * q), 16);
    __m512i exp =
        _mm512_and_si512(_mm512_srli_epi16(x, Half::ManBits), expMask);
    __m512i mantissa = _mm512_and_si512(x, manMask);
    __m512i significand = _mm512_mask_sub_epi16(
        mantissa, _mm512_movepi16_mask(x), zero, mantissa);
    // Extended: exponent field 0 and a non-zero mantissa; its products
    // round on their own, so the sums leave it out.
    __mmask32 extended = _mm512_cmpeq_epi16_mask(exp, zero) &
                         _mm512_test_epi16_mask(mantissa, mantissa);
    __mmask32 infinite = _mm512_cmpeq_epi16_mask(exp, expMask);
    _mm512_store_si512(pairs[2 * q],
                       _mm512_maskz_mov_epi16(~extended, significand));
    auto rowBits = [](__mmask32 lanes) {
      return uint32_t((lanes & 0xffffu) != 0) | uint32_t((lanes >> 16) != 0)
                                                    << 1;
    };
    extendedRows |= rowBits(extended) << (2 * q);
    exactRows |= rowBits(infinite) << (2 * q);
    // Each row's largest exponent in all of its lanes, as in
    // toBlockFloatHalfLongWordPairsAvx512.
    __m512i top = _mm512_max_epu16(exp, _mm512_shuffle_i64x2(exp, exp, 0xb1));
    top = _mm512_max_epu16(top, _mm512_shuffle_epi32(top, _MM_PERM_BADC));
    top = _mm512_max_epu16(top, _mm512_shuffle_epi32(top, _MM_PERM_CDAB));
    top = _mm512_max_epu16(top, _mm512_rol_epi32(top, 16));
    int top0 = _mm512_cvtsi512_si32(top) & 0xffff;
    int top1 = _mm_cvtsi128_si32(_mm512_extracti32x4_epi32(top, 2)) & 0xffff;
    products.RowWeights[2 * q] = float(powerOfTwo(top0 + unitScaleOf<Half>(0)));
    products.RowWeights[2 * q + 1] =
        float(powerOfTwo(top1 + unitScaleOf<Half>(0)));
  }
  const __m512i rowStarts = _mm512_setr_epi32(0, 8, 16, 24, 32, 40, 48, 56, 64,
                                              72, 80, 88, 96, 104, 112, 120);
  for (unsigned p = 0; p < HalfBlockSize / 2; ++p)
    _mm512_store_si512(
        products.ColumnPairs[p],
        _mm512_i32gather_epi32(
            _mm512_add_epi32(rowStarts, _mm512_set1_epi32(int(p ^ 1))), pairs,
            4));
  products.ExtendedRows = extendedRows;
  products.ExactRows = exactRows;
}
} // namespace
#pragma GCC diagnostic pop
#endif

void decodeHalfMatrixProducts(const uint64_t *words,
                              HalfMatrixProducts &products) {
#ifdef MNCC_EMU_AVX512
  if (hasAvx512()) {
    decodeHalfMatrixProductsAvx512(words, products);
    return;
  }
#endif
  DecodedHalfBlock rows[HalfBlockSize];
  decodeHalfMatrix(words, products, rows);
}

void mauMatVecHalfMatrix(const HalfMatrixProducts &matrix,
                         const DecodedHalfBlock *rows,
                         const DecodedHalfBlock &vector, const uint32_t *c,
                         uint32_t *y, bool reduceToHalf) {
  constexpr int UnitScale = productUnitScale<Half>(0);
  constexpr uint32_t AllRows = (uint32_t(1) << HalfBlockSize) - 1;
  alignas(64) int32_t sums[HalfBlockSize];
#ifdef MNCC_EMU_AVX512
  const bool wide = hasAvx512();
  if (wide)
    halfDotProductsAvx512(matrix, vector, sums);
  else
#endif
    halfDotProducts(matrix, vector, sums);
  for (uint32_t extended = vector.ExtendedMask ? AllRows : matrix.ExtendedRows;
       extended; extended &= extended - 1) {
    unsigned r = unsigned(__builtin_ctz(extended));
    sums[r] += halfExtendedProducts(rows[r], vector);
  }
  // The rows the single precision tail cannot take: an infinite element,
  // an infinite c, or the rounding to half.
  uint32_t exactRows = vector.NeedsExactPath ? AllRows : matrix.ExactRows;
  uint32_t generalRows = AllRows;
  bool tail = !reduceToHalf;
  // An infinite vector element (random memory often holds one) against a
  // finite matrix without extended elements: a row whose element there is
  // not zero has infinite products, of the sign of the first such pair
  // (matVecExact); the other rows' sums leave those elements out anyway
  // (times zero), so they finish as finite rows at the vector's block
  // exponent. Every row then takes the general finish below.
  uint32_t infiniteRows = 0, infiniteNegativeRows = 0;
  if (vector.NeedsExactPath && !matrix.ExactRows && !matrix.ExtendedRows &&
      !vector.ExtendedMask) {
    uint32_t infiniteLanes = 0;
    for (unsigned i = 0; i < HalfBlockSize; ++i)
      infiniteLanes |= uint32_t(Half::exponent(vector.Bits[i]) == Half::MaxExp)
                       << i;
    for (unsigned r = 0; r < HalfBlockSize; ++r)
      for (uint32_t lanes = infiniteLanes; lanes; lanes &= lanes - 1) {
        unsigned i = unsigned(__builtin_ctz(lanes));
        uint16_t element = rows[r].Bits[i];
        if (Half::mantissa(element) == 0)
          continue;
        infiniteRows |= uint32_t(1) << r;
        infiniteNegativeRows |=
            uint32_t(Half::sign(element) != Half::sign(vector.Bits[i])) << r;
        break;
      }
    exactRows = 0;
    tail = false;
  }
  if (tail) {
#ifdef MNCC_EMU_AVX512
    if (wide)
      generalRows =
          halfTailInSingleAvx512(matrix, vector, sums, c, y) | exactRows;
    else
#endif
      generalRows = halfTailInSingle(matrix, vector, sums, c, y) | exactRows;
  }
  for (; generalRows; generalRows &= generalRows - 1) {
    unsigned r = unsigned(__builtin_ctz(generalRows));
    const DecodedHalfBlock &row = rows[r];
    if (infiniteRows >> r & 1) {
      ExactValue products;
      products.Infinite = true;
      products.Negative = infiniteNegativeRows >> r & 1;
      ExactValue value = addExact(products, decode<Single>(c[r]));
      y[r] = reduceToHalf ? roundToFormat<Half>(value)
                          : roundToFormat<Single>(value);
      continue;
    }
    if (exactRows >> r & 1) {
      y[r] = mauMatVecHalf(row.Bits, vector.Bits, HalfBlockSize, c[r],
                           reduceToHalf);
      continue;
    }
    int scale = row.BlockExponent + vector.BlockExponent + UnitScale;
    y[r] = reduceToHalf ? finishMatVec<Half>(sums[r], scale, c[r])
                        : finishMatVec<Single>(sums[r], scale, c[r]);
  }
}

#ifdef MNCC_EMU_AVX512
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wpsabi"
namespace {
__attribute__((target("avx512f"))) void
storeSinglesFromLanes(const uint64_t *high, const uint64_t *low,
                      uint32_t *singles) {
  _mm512_storeu_si512(singles, singlesFromLanesAvx512(high, low));
}

__attribute__((target("avx512f"))) void
storeLanesFromSingles(const uint32_t *singles, uint64_t *high, uint64_t *low) {
  lanesFromSinglesAvx512(_mm512_loadu_si512(singles), high, low);
}

/// The fused product on registers: `vectorWords` the four PEs' most
/// significant long words, `addends` the 16 singles of c in element order
/// (zero for none). Returns false, storing nothing, where the general path
/// must run.
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline bool
matVecHalfAvx512(const HalfMatrixProducts &matrix, __m256i vectorWords,
                 __m512i addends, bool withAddends, uint64_t *yHigh,
                 uint64_t *yLow) {
  // The vector's 16 halves in element order: each long word holds four,
  // most significant first, so reverse the 16-bit lanes of each.
  const __m256i reverse =
      _mm256_setr_epi8(6, 7, 4, 5, 2, 3, 0, 1, 14, 15, 12, 13, 10, 11, 8, 9, 6,
                       7, 4, 5, 2, 3, 0, 1, 14, 15, 12, 13, 10, 11, 8, 9);
  __m256i bits = _mm256_shuffle_epi8(vectorWords, reverse);
  const __m256i infExponent = _mm256_set1_epi16(int16_t(Half::MaxExp));
  __m256i exponent =
      _mm256_and_si256(_mm256_srli_epi16(bits, Half::ManBits), infExponent);
  __m256i mantissa =
      _mm256_and_si256(bits, _mm256_set1_epi16(int16_t(Half::ManMask)));
  // An infinite element, or an extended one (exponent field 0, mantissa
  // not 0), takes the general path.
  __mmask16 special =
      _mm256_cmpeq_epi16_mask(exponent, infExponent) |
      (_mm256_cmpeq_epi16_mask(exponent, _mm256_setzero_si256()) &
       _mm256_cmpneq_epi16_mask(mantissa, _mm256_setzero_si256()));
  if (special)
    return false;
  __m256i negative = _mm256_srai_epi16(bits, 15);
  __m256i significand =
      _mm256_sub_epi16(_mm256_xor_si256(mantissa, negative), negative);
  // The block exponent: the largest exponent field.
  int maxExp = maxLane16(_mm_max_epi16(_mm256_castsi256_si128(exponent),
                                       _mm256_extracti128_si256(exponent, 1)));
  float vectorWeight = float(powerOfTwo(maxExp + unitScaleOf<Half>(0)));

  // Exponent field 0 reads as zero. An infinite addend (any mantissa)
  // makes its row an infinity of its sign whatever the products are
  // (finishMatVec): the row's lane is replaced at the end.
  __m512i addend = _mm512_setzero_si512();
  __mmask16 infinite = 0;
  if (withAddends)
    addend = finiteAddendsAvx512(addends, infinite);
  // The pairs are broadcast from memory (load ports) rather than shuffled
  // out of the register (one shuffle port).
  alignas(32) int16_t significands[HalfBlockSize];
  _mm256_store_si256(reinterpret_cast<__m256i *>(significands), significand);
  // Keeps the compiler from turning the loads back into shuffles.
  asm volatile("" : : "r"(significands) : "memory");
  __m512i sums = halfRowSumsAvx512(matrix, significands);
  __m512i y = halfTailAvx512(sums, matrix.RowWeights, vectorWeight, addend);
  const __m512i infinity =
      _mm512_set1_epi32(int32_t(Single::pack(false, Single::MaxExp, 0)));
  y = _mm512_mask_mov_epi32(
      y, infinite,
      _mm512_or_si512(_mm512_and_si512(addends, _mm512_set1_epi32(
                                                    int32_t(Single::SignMask))),
                      infinity));
  lanesFromSinglesAvx512(y, yHigh, yLow);
  return true;
}

/// mauMatVecHalfLanes on AVX-512: everything in registers, from the PEs'
/// long words to theirs.
__attribute__((target("avx512f,avx512bw,avx512vl"))) bool
matVecHalfLanesAvx512(const HalfMatrixProducts &matrix,
                      const uint64_t *vectorWords, const uint64_t *cHigh,
                      const uint64_t *cLow, uint64_t *yHigh, uint64_t *yLow) {
  return matVecHalfAvx512(
      matrix,
      _mm256_loadu_si256(reinterpret_cast<const __m256i *>(vectorWords)),
      cHigh ? singlesFromLanesAvx512(cHigh, cLow) : _mm512_setzero_si512(),
      cHigh != nullptr, yHigh, yLow);
}

} // namespace
#pragma GCC diagnostic pop
#endif

bool mauMatVecHalfLanes(const HalfMatrixProducts &matrix,
                        const uint64_t *vectorWords, const uint64_t *cHigh,
                        const uint64_t *cLow, uint64_t *yHigh, uint64_t *yLow) {
#ifdef MNCC_EMU_AVX512
  if (!matrix.ExtendedRows && !matrix.ExactRows && hasAvx512())
    return matVecHalfLanesAvx512(matrix, vectorWords, cHigh, cLow, yHigh, yLow);
#endif
  return false;
}

void halfSinglesFromLanes(const uint64_t *high, const uint64_t *low,
                          uint32_t *singles) {
#ifdef MNCC_EMU_AVX512
  if (hasAvx512()) {
    storeSinglesFromLanes(high, low, singles);
    return;
  }
#endif
  for (unsigned k = 0; k < 4; ++k) {
    singles[4 * k] = uint32_t(high[k] >> 32);
    singles[4 * k + 1] = uint32_t(high[k]);
    singles[4 * k + 2] = uint32_t(low[k] >> 32);
    singles[4 * k + 3] = uint32_t(low[k]);
  }
}

void halfLanesFromSingles(const uint32_t *singles, uint64_t *high,
                          uint64_t *low) {
#ifdef MNCC_EMU_AVX512
  if (hasAvx512()) {
    storeLanesFromSingles(singles, high, low);
    return;
  }
#endif
  for (unsigned k = 0; k < 4; ++k) {
    high[k] = uint64_t(singles[4 * k]) << 32 | singles[4 * k + 1];
    low[k] = uint64_t(singles[4 * k + 2]) << 32 | singles[4 * k + 3];
  }
}

bool allowWideMatVec(bool allowed) {
#ifdef MNCC_EMU_AVX512
  wideMatVecAllowed.store(allowed, std::memory_order_relaxed);
  return cpuHasAvx512();
#else
  (void)allowed;
  return false;
#endif
}

void mauMatVecPseudoSingleRows(const DecodedPseudoSingleBlock *rows,
                               unsigned rowCount,
                               const DecodedPseudoSingleBlock &vector,
                               const uint32_t *c, uint32_t *y,
                               bool reduceToHalf) {
  constexpr int UnitScale = productUnitScale<Single>(PseudoSingleIgnoredBits);
  for (unsigned r = 0; r < rowCount; ++r) {
    const DecodedPseudoSingleBlock &row = rows[r];
    if (row.NeedsExactPath || vector.NeedsExactPath) {
      y[r] = mauMatVecPseudoSingle(row.Bits, vector.Bits, PseudoSingleBlockSize,
                                   c[r], reduceToHalf);
      continue;
    }
    // 8 products below 2^36 each: the sum is exact in 64 bits.
    int64_t sum = 0;
    for (unsigned i = 0; i < PseudoSingleBlockSize; ++i)
      sum += int64_t(row.Significand[i]) * int64_t(vector.Significand[i]);
    int scale = row.BlockExponent + vector.BlockExponent + UnitScale;
    y[r] = reduceToHalf ? finishMatVec<Half>(sum, scale, c[r])
                        : finishMatVec<Single>(sum, scale, c[r]);
  }
}

//===----------------------------------------------------------------------===//
// Block-float conversion
//===----------------------------------------------------------------------===//

namespace {

/// bfn for format F (manual 4, block float conversion). reducedBits is
/// b = ManBits - (mantissa length kept), only non-zero for half.
template <typename F>
void toBlockFloat(const typename F::Storage *in, typename F::Storage *out,
                  unsigned n, unsigned reducedBits, bool extended) {
  using Storage = typename F::Storage;
  const unsigned keptBits = F::ManBits - reducedBits;
  const uint32_t extendedGap = HalfExtendedExponentOffset + reducedBits;
  auto significand = [](Storage bits) {
    return UInt128((Storage(1) << F::ManBits) | F::mantissa(bits));
  };

  uint32_t maxExp = 0;
  for (unsigned i = 0; i < n; ++i)
    if (F::exponent(in[i]) > maxExp)
      maxExp = F::exponent(in[i]);
  if (maxExp == 0) {
    // Every input is zero: sign, exponent 0, mantissa 0.
    for (unsigned i = 0; i < n; ++i)
      out[i] = F::pack(F::sign(in[i]), 0, 0);
    return;
  }

  // The block exponent is the largest exponent plus b, plus one more when
  // rounding a largest-exponent element would carry out of the kept bits
  // (for b = 0: when its mantissa is all ones).
  uint32_t blockExp = maxExp + reducedBits;
  for (unsigned i = 0; i < n && maxExp != F::MaxExp; ++i) {
    if (F::exponent(in[i]) != maxExp)
      continue;
    if (shiftRightNearestEven(significand(in[i]), reducedBits + 1) >>
        keptBits) {
      ++blockExp;
      break;
    }
  }

  if (blockExp >= F::MaxExp) {
    // The block exponent is infinite: every element becomes an infinity.
    for (unsigned i = 0; i < n; ++i)
      out[i] = F::pack(F::sign(in[i]), F::MaxExp, 0);
    return;
  }

  for (unsigned i = 0; i < n; ++i) {
    bool negative = F::sign(in[i]);
    uint32_t exp = F::exponent(in[i]);
    if (exp == 0) {
      out[i] = F::pack(negative, extended ? 0 : blockExp, 0);
      continue;
    }
    uint32_t gap = blockExp - exp;
    if (extended && gap >= extendedGap) {
      // The element would lose 6 + b bits or more: move it to the
      // extended representation, 6 below the block exponent, unless at
      // exactly that gap rounding would carry out of the kept bits.
      Storage mantissa = Storage(shiftRightNearestEven(
          significand(in[i]), gap - HalfExtendedExponentOffset + 1));
      if (gap != extendedGap || !(mantissa >> keptBits)) {
        out[i] = F::pack(negative, 0, mantissa);
        continue;
      }
    }
    Storage mantissa =
        Storage(shiftRightNearestEven(significand(in[i]), gap + 1));
    if (extended && mantissa == 0)
      out[i] = F::pack(negative, 0, 0);
    else
      out[i] = F::pack(negative, blockExp, mantissa);
  }
}

} // namespace

void toBlockFloatDouble(const uint64_t *in, uint64_t *out, unsigned n) {
  toBlockFloat<Double>(in, out, n, 0, false);
}

void toBlockFloatSingle(const uint32_t *in, uint32_t *out, unsigned n) {
  toBlockFloat<Single>(in, out, n, 0, false);
}

void toBlockFloatPseudoSingle(const uint32_t *in, uint32_t *out, unsigned n) {
  toBlockFloat<Single>(in, out, n, 0, false);
}

void toBlockFloatHalf(const uint16_t *in, uint16_t *out, unsigned n,
                      unsigned mantissaBits, bool extended) {
  if (mantissaBits < 6)
    mantissaBits = 6;
  if (mantissaBits > Half::ManBits)
    mantissaBits = Half::ManBits;
  toBlockFloat<Half>(in, out, n, Half::ManBits - mantissaBits, extended);
}

namespace {

/// Rounds a half significand (below 2^(ManBits + 1)) right by shift bits,
/// 1 <= shift <= ManBits + 2, to nearest even: adding half the unit less
/// one, plus the kept lowest bit, carries exactly when the rest is above
/// half, or is half and the kept value odd. Larger shifts round to 0, as
/// ManBits + 2 does (the significand is below half of that unit).
constexpr unsigned HalfRoundingShiftLimit = Half::ManBits + 2;

uint32_t roundHalfSignificand(uint32_t significand, uint32_t shift) {
  return (significand + (uint32_t(1) << (shift - 1)) - 1 +
          (significand >> shift & 1)) >>
         shift;
}

/// One block of toBlockFloatHalfLongWords in plain integers: the steps of
/// toBlockFloat<Half> with b = 0 and no extended representation.
void toBlockFloatHalfBlock(const uint16_t *in, uint16_t *out) {
  constexpr unsigned N = HalfBlockSize;
  uint32_t maxExp = 0;
  for (unsigned i = 0; i < N; ++i)
    maxExp = std::max<uint32_t>(maxExp, Half::exponent(in[i]));
  if (maxExp == 0) {
    for (unsigned i = 0; i < N; ++i)
      out[i] = uint16_t(in[i] & Half::SignMask);
    return;
  }
  constexpr uint32_t Lead = uint32_t(1) << Half::ManBits;
  uint32_t blockExp = maxExp;
  for (unsigned i = 0; i < N && maxExp != Half::MaxExp; ++i)
    if (Half::exponent(in[i]) == maxExp &&
        roundHalfSignificand(Lead | Half::mantissa(in[i]), 1) >>
            Half::ManBits) {
      ++blockExp;
      break;
    }
  if (blockExp >= Half::MaxExp) {
    for (unsigned i = 0; i < N; ++i)
      out[i] = Half::pack(Half::sign(in[i]), Half::MaxExp, 0);
    return;
  }
  for (unsigned i = 0; i < N; ++i) {
    uint32_t exp = Half::exponent(in[i]);
    uint32_t mantissa = 0;
    if (exp != 0)
      mantissa = roundHalfSignificand(
          Lead | Half::mantissa(in[i]),
          std::min<uint32_t>(blockExp - exp + 1, HalfRoundingShiftLimit));
    out[i] = Half::pack(Half::sign(in[i]), blockExp, uint16_t(mantissa));
  }
}

#ifdef MNCC_EMU_AVX512
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
// GCC 12 warns of the 512-bit shuffles' unused pass-through operand.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
/// toBlockFloatHalfBlock on a block in one 256-bit vector: the block's
/// largest exponent by three folds, the rounding shifts per element
/// (vpsrlvw / vpsllvw).
__attribute__((target("avx512f,avx512bw,avx512vl"))) void
toBlockFloatHalfLongWordsAvx512(const uint64_t *in, uint64_t *out,
                                unsigned blocks) {
  const __m256i expMask = _mm256_set1_epi16(int16_t(Half::MaxExp));
  const __m256i manMask = _mm256_set1_epi16(int16_t(Half::ManMask));
  const __m256i signMask = _mm256_set1_epi16(int16_t(Half::SignMask));
  const __m256i lead = _mm256_set1_epi16(int16_t(1u << Half::ManBits));
  const __m256i one = _mm256_set1_epi16(1);
  const __m256i shiftLimit = _mm256_set1_epi16(HalfRoundingShiftLimit);
  for (unsigned b = 0; b < blocks; ++b) {
    __m256i x =
        _mm256_loadu_si256(reinterpret_cast<const __m256i *>(in + 4 * b));
    __m256i exp =
        _mm256_and_si256(_mm256_srli_epi16(x, Half::ManBits), expMask);
    __m256i fold =
        _mm256_max_epu16(exp, _mm256_permute2x128_si256(exp, exp, 1));
    fold = _mm256_max_epu16(fold, _mm256_shuffle_epi32(fold, 0x4e));
    fold = _mm256_max_epu16(fold, _mm256_shuffle_epi32(fold, 0xb1));
    fold = _mm256_max_epu16(fold, _mm256_srli_epi32(fold, 16));
    uint32_t maxExp = uint32_t(_mm256_cvtsi256_si32(fold)) & 0xffff;
    __m256i sign = _mm256_and_si256(x, signMask);
    __m256i result = sign;
    if (maxExp != 0) {
      // Rounding a largest-exponent element carries out of the kept bits
      // exactly when its mantissa is all ones (1.11..1 to even is 10.0).
      __mmask16 carries = _mm256_mask_cmpeq_epi16_mask(
          _mm256_cmpeq_epi16_mask(exp, _mm256_set1_epi16(int16_t(maxExp))),
          _mm256_and_si256(x, manMask), manMask);
      uint32_t blockExp = maxExp + (maxExp != Half::MaxExp && carries != 0);
      if (blockExp >= Half::MaxExp) {
        result = _mm256_or_si256(
            sign, _mm256_set1_epi16(int16_t(Half::MaxExp << Half::ManBits)));
      } else {
        __m256i block = _mm256_set1_epi16(int16_t(blockExp));
        __m256i shift = _mm256_min_epu16(
            _mm256_sub_epi16(_mm256_add_epi16(block, one), exp), shiftLimit);
        __m256i significand =
            _mm256_or_si256(_mm256_and_si256(x, manMask), lead);
        __m256i kept = _mm256_add_epi16(
            _mm256_add_epi16(
                significand,
                _mm256_sub_epi16(
                    _mm256_sllv_epi16(one, _mm256_sub_epi16(shift, one)), one)),
            _mm256_and_si256(_mm256_srlv_epi16(significand, shift), one));
        __m256i mantissa =
            _mm256_and_si256(_mm256_srlv_epi16(kept, shift), manMask);
        // An element with exponent 0 is a zero: mantissa 0.
        mantissa =
            _mm256_maskz_mov_epi16(_mm256_test_epi16_mask(exp, exp), mantissa);
        result = _mm256_or_si256(
            _mm256_or_si256(sign, _mm256_slli_epi16(block, Half::ManBits)),
            mantissa);
      }
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(out + 4 * b), result);
  }
}

/// The same on two blocks at a time, one in each 256-bit half of a 512-bit
/// vector, without branches: the cases the one-block version branches on
/// (an all-zero exponent block, an infinite block exponent) are per-block
/// masks that select the result.
__attribute__((target("avx512f,avx512bw,avx512vl"))) void
toBlockFloatHalfLongWordPairsAvx512(const uint64_t *in, uint64_t *out,
                                    unsigned blocks) {
  const __m512i expMask = _mm512_set1_epi16(int16_t(Half::MaxExp));
  const __m512i manMask = _mm512_set1_epi16(int16_t(Half::ManMask));
  const __m512i signMask = _mm512_set1_epi16(int16_t(Half::SignMask));
  const __m512i lead = _mm512_set1_epi16(int16_t(1u << Half::ManBits));
  const __m512i one = _mm512_set1_epi16(1);
  const __m512i shiftLimit = _mm512_set1_epi16(HalfRoundingShiftLimit);
  const __m512i infinite =
      _mm512_set1_epi16(int16_t(Half::MaxExp << Half::ManBits));
  unsigned b = 0;
  for (; b + 2 <= blocks; b += 2) {
    __m512i x = _mm512_loadu_si512(in + 4 * b);
    __m512i exp =
        _mm512_and_si512(_mm512_srli_epi16(x, Half::ManBits), expMask);
    // Each block's largest exponent in all of its 16-bit lanes: 128-bit
    // halves swapped within each 256-bit half, then 64-, 32- and 16-bit
    // halves.
    __m512i maxExp =
        _mm512_max_epu16(exp, _mm512_shuffle_i64x2(exp, exp, 0xb1));
    maxExp =
        _mm512_max_epu16(maxExp, _mm512_shuffle_epi32(maxExp, _MM_PERM_BADC));
    maxExp =
        _mm512_max_epu16(maxExp, _mm512_shuffle_epi32(maxExp, _MM_PERM_CDAB));
    maxExp = _mm512_max_epu16(maxExp, _mm512_rol_epi32(maxExp, 16));
    __m512i sign = _mm512_and_si512(x, signMask);
    // Rounding a largest-exponent element carries out of the kept bits
    // exactly when its mantissa is all ones; the block exponent then
    // grows by one, unless it is already infinite.
    uint32_t carries = uint32_t(
        _mm512_mask_cmpeq_epi16_mask(_mm512_cmpeq_epi16_mask(exp, maxExp),
                                     _mm512_and_si512(x, manMask), manMask));
    uint32_t carryBlocks = ((carries & 0xffffu) ? 0xffffu : 0u) |
                           ((carries >> 16) ? 0xffff0000u : 0u);
    __mmask32 grows =
        __mmask32(carryBlocks) & _mm512_cmpneq_epi16_mask(maxExp, expMask);
    __m512i blockExp = _mm512_mask_add_epi16(maxExp, grows, maxExp, one);
    __m512i shift = _mm512_min_epu16(
        _mm512_sub_epi16(_mm512_add_epi16(blockExp, one), exp), shiftLimit);
    __m512i significand = _mm512_or_si512(_mm512_and_si512(x, manMask), lead);
    __m512i kept = _mm512_add_epi16(
        _mm512_add_epi16(
            significand,
            _mm512_sub_epi16(
                _mm512_sllv_epi16(one, _mm512_sub_epi16(shift, one)), one)),
        _mm512_and_si512(_mm512_srlv_epi16(significand, shift), one));
    __m512i mantissa =
        _mm512_and_si512(_mm512_srlv_epi16(kept, shift), manMask);
    // An element with exponent 0 is a zero: mantissa 0.
    mantissa =
        _mm512_maskz_mov_epi16(_mm512_test_epi16_mask(exp, exp), mantissa);
    __m512i result = _mm512_or_si512(
        _mm512_or_si512(sign, _mm512_slli_epi16(blockExp, Half::ManBits)),
        mantissa);
    // An infinite block exponent: every element an infinity of its sign.
    result = _mm512_mask_mov_epi16(result,
                                   _mm512_cmpge_epu16_mask(blockExp, expMask),
                                   _mm512_or_si512(sign, infinite));
    // A block of zeros (largest exponent 0): only the signs stay.
    result = _mm512_mask_mov_epi16(
        result, _mm512_cmpeq_epi16_mask(maxExp, _mm512_setzero_si512()), sign);
    _mm512_storeu_si512(out + 4 * b, result);
  }
  if (b < blocks)
    toBlockFloatHalfLongWordsAvx512(in + 4 * b, out + 4 * b, blocks - b);
}
#pragma GCC diagnostic pop
#endif

} // namespace

void toBlockFloatHalfLongWords(const uint64_t *in, uint64_t *out,
                               unsigned blocks) {
#ifdef MNCC_EMU_AVX512
  if (hasAvx512()) {
    toBlockFloatHalfLongWordPairsAvx512(in, out, blocks);
    return;
  }
#endif
  // Each long word holds four whole halves at 16-bit boundaries, so its
  // bytes are four halves in some order in host memory; the conversion
  // does not depend on that order.
  for (unsigned b = 0; b < blocks; ++b) {
    uint16_t elements[HalfBlockSize];
    std::memcpy(elements, in + 4 * b, sizeof elements);
    toBlockFloatHalfBlock(elements, elements);
    std::memcpy(out + 4 * b, elements, sizeof elements);
  }
}

uint16_t halfBlockFloatToExtended(uint16_t element) {
  bool negative = Half::sign(element);
  uint32_t exp = Half::exponent(element);
  uint16_t mantissa = Half::mantissa(element);
  if (mantissa == 0)
    return Half::pack(negative, 0, 0);
  if (exp == 0 || exp == Half::MaxExp)
    return element;
  constexpr uint16_t ExtendedLimit =
      uint16_t(1) << (Half::ManBits - HalfExtendedExponentOffset);
  if (mantissa < ExtendedLimit)
    return Half::pack(negative, 0,
                      uint16_t(mantissa << HalfExtendedExponentOffset));
  return element;
}

//===----------------------------------------------------------------------===//
// RRN fadd
//===----------------------------------------------------------------------===//

/// Guard bits the RRN appends below each mantissa before aligning.
constexpr unsigned RrnGuardBits = 3;

template <typename F>
ExactValue rrnAlignedSum(const typename F::Storage *values, unsigned n) {
  ExactValue result;
  uint32_t maxExp = 0;
  for (unsigned i = 0; i < n; ++i) {
    uint32_t exp = F::exponent(values[i]);
    if (exp == F::MaxExp && !result.Infinite) {
      result.Infinite = true;
      result.Negative = F::sign(values[i]);
    }
    if (exp > maxExp)
      maxExp = exp;
  }
  if (result.Infinite || maxExp == 0)
    return result;

  Int128 sum = 0;
  for (unsigned i = 0; i < n; ++i) {
    uint32_t exp = F::exponent(values[i]);
    if (exp == 0)
      continue; // zero: no hidden bit, nothing to add
    UInt128 widened =
        UInt128((typename F::Storage(1) << F::ManBits) | F::mantissa(values[i]))
        << RrnGuardBits;
    // A shift within the guard bits is exact; a longer one rounds here.
    UInt128 aligned = shiftRightNearestEven(widened, maxExp - exp);
    sum += F::sign(values[i]) ? -Int128(aligned) : Int128(aligned);
  }
  result.Negative = sum < 0;
  result.Magnitude = UInt128(sum < 0 ? -sum : sum);
  result.Scale =
      int32_t(maxExp) - F::Bias - int32_t(F::ManBits) - int32_t(RrnGuardBits);
  if (result.Magnitude == 0)
    result.Negative = false;
  return result;
}

template ExactValue rrnAlignedSum<Half>(const uint16_t *, unsigned);
template ExactValue rrnAlignedSum<Single>(const uint32_t *, unsigned);
template ExactValue rrnAlignedSum<Double>(const uint64_t *, unsigned);

template <typename Circuit, typename Out>
typename Out::Storage rrnFaddTwoStage(const typename Circuit::Storage *values,
                                      unsigned n, unsigned groupSize) {
  constexpr unsigned MaxElements = 64;
  if (n > MaxElements)
    n = MaxElements;
  if (groupSize == 0)
    groupSize = 1;
  typename Circuit::Storage partial[MaxElements];
  unsigned groups = 0;
  for (unsigned start = 0; start < n; start += groupSize) {
    unsigned count = n - start < groupSize ? n - start : groupSize;
    // The intermediate sums are settled as normal numbers of the circuit.
    partial[groups++] = rrnFadd<Circuit, Circuit>(values + start, count);
  }
  return rrnFadd<Circuit, Out>(partial, groups);
}

template uint16_t rrnFaddTwoStage<Half, Half>(const uint16_t *, unsigned,
                                              unsigned);
template uint32_t rrnFaddTwoStage<Single, Single>(const uint32_t *, unsigned,
                                                  unsigned);
template uint16_t rrnFaddTwoStage<Single, Half>(const uint32_t *, unsigned,
                                                unsigned);
template uint64_t rrnFaddTwoStage<Double, Double>(const uint64_t *, unsigned,
                                                  unsigned);

uint16_t l1bmHalfFadd16(const uint16_t *values, unsigned n) {
  constexpr unsigned MaxElements = 16;
  constexpr unsigned StageSize = 4;
  if (n > MaxElements)
    n = MaxElements;
  uint32_t extended[MaxElements];
  for (unsigned i = 0; i < n; ++i)
    extended[i] = halfToSingle(values[i]);
  if (n <= StageSize)
    return rrnFadd<Single, Half>(extended, n);
  return rrnFaddTwoStage<Single, Half>(extended, n, StageSize);
}

uint16_t rrnMaxSingleToHalf(const uint32_t *values, unsigned n) {
  if (n == 0)
    return 0;
  uint32_t best = values[0];
  for (unsigned i = 1; i < n; ++i)
    best = rrnMax<Single>(best, values[i]);
  return singleToHalf(best);
}

uint16_t rrnMinSingleToHalf(const uint32_t *values, unsigned n) {
  if (n == 0)
    return 0;
  uint32_t best = values[0];
  for (unsigned i = 1; i < n; ++i)
    best = rrnMin<Single>(best, values[i]);
  return singleToHalf(best);
}

//===----------------------------------------------------------------------===//
// MAU vector FMA on halves
//===----------------------------------------------------------------------===//

template <typename Out>
typename Out::Storage mauVectorFmaHalf(uint16_t a, uint16_t b, uint32_t c) {
  uint32_t aExp = Half::exponent(a), bExp = Half::exponent(b);
  // Zero and infinite factors keep the exact path (mauProduct's rules).
  if (aExp == 0 || bExp == 0 || aExp == Half::MaxExp || bExp == Half::MaxExp)
    return mauVectorFma<Half, Single, Out>(a, b, c);
  // The half multiplier is exact: the product of the significands, hidden
  // bits included, is an integer below 2^20 at the sum of the two scales.
  constexpr uint32_t Lead = uint32_t(1) << Half::ManBits;
  int64_t product =
      int64_t((Lead | Half::mantissa(a)) * (Lead | Half::mantissa(b)));
  if (Half::sign(a) != Half::sign(b))
    product = -product;
  int scale = int(aExp) + int(bExp) - 2 * (Half::Bias + int(Half::ManBits));
  return typename Out::Storage(finishMatVec<Out>(product, scale, c));
}

template uint32_t mauVectorFmaHalf<Single>(uint16_t, uint16_t, uint32_t);
template uint16_t mauVectorFmaHalf<Half>(uint16_t, uint16_t, uint32_t);

} // namespace mncc::emu
