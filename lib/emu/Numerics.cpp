//===- Numerics.cpp - Bit-exact MN-Core 2 floating point ------------------===//
//
// The block operations of the numeric core: the MAU matrix-vector FMA,
// block-float conversion and the RRN fadd reductions. Section references are to
// chapter 4 of the MN-Core 2 Software Development Manual;
// docs/target/mncore2.md states the rules and the decisions taken.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Numerics.h"

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

} // namespace mncc::emu
