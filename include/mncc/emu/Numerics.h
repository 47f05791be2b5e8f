//===- Numerics.h - Bit-exact MN-Core 2 floating point ------*- C++ -*-===//
//
// The numeric core of mncc-sim: the MN-Core 2 number formats and the
// arithmetic of the RRN (reduction network) and the MAU (matrix arithmetic
// unit), as chapter 4 of the MN-Core 2 Software Development Manual defines
// them bit for bit. Every operation is a plain function from bit patterns to
// bit patterns so the emulator can call it inside vectorised loops; the hot
// scalar paths are inline here, the block operations live in Numerics.cpp.
//
// docs/target/mncore2.md describes the rules and lists every point where the
// public material is ambiguous and what this file decided.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_EMU_NUMERICS_H
#define MNCC_EMU_NUMERICS_H

#include <cstdint>

namespace mncc::emu {

__extension__ typedef unsigned __int128 UInt128;
__extension__ typedef __int128 Int128;

//===----------------------------------------------------------------------===//
// Formats
//===----------------------------------------------------------------------===//

/// A binary floating point layout: sign, ExpBits of biased exponent and
/// ManBits of mantissa, with the IEEE-style bias 2^(ExpBits-1) - 1.
///
/// MN-Core 2 gives the two extreme exponent fields fixed meanings (manual 4,
/// output normalisation; docs/target/mncore2.md decision 2): an exponent
/// field of 0 is zero whatever the mantissa holds (there are no subnormals)
/// and an all-ones exponent field is an infinity (there is no NaN).
template <unsigned ExpBitsV, unsigned ManBitsV, typename StorageT>
struct FloatFormat {
  using Storage = StorageT;
  static constexpr unsigned ExpBits = ExpBitsV;
  static constexpr unsigned ManBits = ManBitsV;
  static constexpr unsigned TotalBits = 1 + ExpBits + ManBits;
  static constexpr int Bias = (1 << (ExpBits - 1)) - 1;
  static constexpr uint32_t MaxExp = (1u << ExpBits) - 1;
  static constexpr Storage ManMask = (Storage(1) << ManBits) - 1;
  static constexpr Storage SignMask = Storage(1) << (ExpBits + ManBits);

  static constexpr bool sign(Storage bits) { return (bits & SignMask) != 0; }
  static constexpr uint32_t exponent(Storage bits) {
    return uint32_t(bits >> ManBits) & MaxExp;
  }
  static constexpr Storage mantissa(Storage bits) { return bits & ManMask; }
  static constexpr Storage pack(bool negative, uint32_t exp, Storage man) {
    return (negative ? SignMask : Storage(0)) |
           (Storage(exp & MaxExp) << ManBits) | (man & ManMask);
  }
  static constexpr bool isZero(Storage bits) { return exponent(bits) == 0; }
  static constexpr bool isInf(Storage bits) { return exponent(bits) == MaxExp; }
};

/// MN-Core 2 half precision: 1 sign, 6 exponent, 9 mantissa bits, bias 31.
/// This is not IEEE binary16 (which is 1-5-10).
using Half = FloatFormat<6, 9, uint16_t>;
/// Single precision: the IEEE binary32 layout (1-8-23, bias 127).
using Single = FloatFormat<8, 23, uint32_t>;
/// Double precision: the IEEE binary64 layout (1-11-52, bias 1023).
using Double = FloatFormat<11, 52, uint64_t>;

/// Pseudo-single ("g" precision) exists only as a block-float format: it is
/// stored like a single-precision block float but the MAU ignores the five
/// least significant mantissa bits, leaving an 18-bit mantissa.
constexpr unsigned PseudoSingleIgnoredBits = 5;

//===----------------------------------------------------------------------===//
// Exact intermediate values
//===----------------------------------------------------------------------===//

/// An exact (or, past 125 significant bits, sticky-rounded) real value:
/// (-1)^Negative * Magnitude * 2^Scale, or an infinity of that sign.
struct ExactValue {
  bool Negative = false;
  bool Infinite = false;
  int32_t Scale = 0;
  UInt128 Magnitude = 0;

  bool isZero() const { return !Infinite && Magnitude == 0; }
};

namespace detail {

inline int highestBit(UInt128 value) {
  uint64_t high = uint64_t(value >> 64);
  if (high)
    return 127 - __builtin_clzll(high);
  return 63 - __builtin_clzll(uint64_t(value));
}

/// Shifts right by Shift bits rounding to nearest, ties to even. Shifts of
/// 128 bits or more leave nothing (a value below half of one unit).
inline UInt128 shiftRightNearestEven(UInt128 value, unsigned shift) {
  if (shift == 0)
    return value;
  if (shift > 128)
    return 0;
  if (shift == 128) {
    UInt128 half = UInt128(1) << 127;
    return value > half ? 1 : 0; // a tie rounds to the even 0
  }
  UInt128 kept = value >> shift;
  UInt128 rest = value & ((UInt128(1) << shift) - 1);
  UInt128 half = UInt128(1) << (shift - 1);
  if (rest > half || (rest == half && (kept & 1)))
    ++kept;
  return kept;
}

} // namespace detail

/// Reads a value of format F. Exponent field 0 is zero (the mantissa is
/// ignored), the all-ones exponent field is an infinity.
template <typename F> inline ExactValue decode(typename F::Storage bits) {
  ExactValue value;
  value.Negative = F::sign(bits);
  uint32_t exp = F::exponent(bits);
  if (exp == 0)
    return value;
  if (exp == F::MaxExp) {
    value.Infinite = true;
    return value;
  }
  value.Magnitude = (UInt128(1) << F::ManBits) | F::mantissa(bits);
  value.Scale = int32_t(exp) - F::Bias - int32_t(F::ManBits);
  return value;
}

/// Output normalisation (manual 4, shared by the RRN and the MAU): an
/// all-ones exponent clears the mantissa, a zero exponent clears the
/// mantissa and the sign.
template <typename F>
constexpr typename F::Storage normalizeOutput(typename F::Storage bits) {
  uint32_t exp = F::exponent(bits);
  if (exp == F::MaxExp)
    return F::pack(F::sign(bits), exp, 0);
  if (exp == 0)
    return 0;
  return bits;
}

/// The tail every MN-Core 2 arithmetic result goes through (manual 4, vector
/// FMA steps 3-5): round to nearest even at the precision of F, map an
/// exponent that reached the infinity range to infinity and one that fell to
/// zero or below to zero, then normalise the output.
template <typename F>
inline typename F::Storage roundToFormat(const ExactValue &value) {
  using Storage = typename F::Storage;
  if (value.Infinite)
    return F::pack(value.Negative, F::MaxExp, 0);
  if (value.Magnitude == 0)
    return 0;
  int top = detail::highestBit(value.Magnitude);
  int shift = top - int(F::ManBits);
  UInt128 significand;
  if (shift > 0) {
    significand = detail::shiftRightNearestEven(value.Magnitude, shift);
    if (significand >> (F::ManBits + 1)) { // rounding carried out
      significand >>= 1;
      ++shift;
    }
  } else {
    significand = value.Magnitude << -shift;
  }
  // The significand now has its top bit at ManBits and its LSB weighs
  // 2^(Scale + shift).
  int64_t exp = int64_t(value.Scale) + shift + F::ManBits + F::Bias;
  if (exp >= int64_t(F::MaxExp))
    return F::pack(value.Negative, F::MaxExp, 0);
  if (exp <= 0)
    return 0;
  return F::pack(value.Negative, uint32_t(exp), Storage(significand));
}

/// Adds two exact values. The result is exact while it fits in 125 bits;
/// beyond that the smaller operand is reduced to a sticky bit, which keeps
/// every later round to nearest even at bit 1 or above correct. Operands
/// must carry at most 125 significant bits (MAU products carry at most 108).
///
/// There is no NaN: the sum of opposite infinities is +infinity (a decision,
/// see docs/target/mncore2.md).
inline ExactValue addExact(ExactValue lhs, ExactValue rhs) {
  if (lhs.Infinite || rhs.Infinite) {
    ExactValue result;
    result.Infinite = true;
    if (lhs.Infinite && rhs.Infinite)
      result.Negative = lhs.Negative && rhs.Negative;
    else
      result.Negative = lhs.Infinite ? lhs.Negative : rhs.Negative;
    return result;
  }
  if (rhs.Magnitude == 0)
    return lhs;
  if (lhs.Magnitude == 0)
    return rhs;

  // Move both tops to bit 125: two such operands sum below 2^127, and an
  // operand of at most 125 significant bits keeps bit 0 clear.
  constexpr int AlignedTopBit = 125;
  auto alignTop = [](ExactValue &value) {
    int up = AlignedTopBit - detail::highestBit(value.Magnitude);
    if (up >= 0) {
      value.Magnitude <<= up;
    } else {
      UInt128 lost = value.Magnitude & ((UInt128(1) << -up) - 1);
      value.Magnitude >>= -up;
      value.Magnitude |= lost != 0;
    }
    value.Scale -= up;
  };
  alignTop(lhs);
  alignTop(rhs);
  if (lhs.Scale < rhs.Scale) {
    ExactValue swapped = lhs;
    lhs = rhs;
    rhs = swapped;
  }
  // Shift the smaller operand to the larger one's scale. Bits shifted out
  // become a sticky bit in bit 0: the operands' own bit 0 is clear, so the
  // sticky-reduced sum lies strictly between the same two even integers as
  // the true sum and any rounding at bit 1 or above sees the same value.
  unsigned distance = unsigned(lhs.Scale - rhs.Scale);
  if (distance >= 127) {
    rhs.Magnitude = 1;
  } else if (distance > 0) {
    UInt128 lost = rhs.Magnitude & ((UInt128(1) << distance) - 1);
    rhs.Magnitude >>= distance;
    rhs.Magnitude |= lost != 0;
  }

  ExactValue sum;
  sum.Scale = lhs.Scale;
  if (lhs.Negative == rhs.Negative) {
    sum.Negative = lhs.Negative;
    sum.Magnitude = lhs.Magnitude + rhs.Magnitude;
  } else if (lhs.Magnitude >= rhs.Magnitude) {
    sum.Negative = lhs.Negative;
    sum.Magnitude = lhs.Magnitude - rhs.Magnitude;
  } else {
    sum.Negative = rhs.Negative;
    sum.Magnitude = rhs.Magnitude - lhs.Magnitude;
  }
  if (sum.Magnitude == 0)
    sum.Negative = false;
  return sum;
}

//===----------------------------------------------------------------------===//
// Conversions between formats
//===----------------------------------------------------------------------===//

/// Precision extension ("e" operand suffix): exact. Zero keeps its sign,
/// infinity keeps its mantissa bits (shifted), everything else is the same
/// value in the wider format.
template <typename From, typename To>
constexpr typename To::Storage extendFormat(typename From::Storage bits) {
  static_assert(To::ExpBits >= From::ExpBits && To::ManBits >= From::ManBits,
                "extension only widens");
  using Storage = typename To::Storage;
  bool negative = From::sign(bits);
  uint32_t exp = From::exponent(bits);
  Storage man = Storage(From::mantissa(bits)) << (To::ManBits - From::ManBits);
  if (exp == 0)
    return To::pack(negative, 0, 0);
  if (exp == From::MaxExp)
    return To::pack(negative, To::MaxExp, man);
  return To::pack(negative, uint32_t(int(exp) - From::Bias + To::Bias), man);
}

/// Precision reduction ("r" suffix on an operand or an opcode): round to
/// nearest even directly into the narrower format, overflow to infinity,
/// underflow to +0, then normalise (manual 4, precision reduction).
template <typename From, typename To>
inline typename To::Storage reduceFormat(typename From::Storage bits) {
  return roundToFormat<To>(decode<From>(bits));
}

inline uint32_t halfToSingle(uint16_t bits) {
  return extendFormat<Half, Single>(bits);
}
inline uint64_t singleToDouble(uint32_t bits) {
  return extendFormat<Single, Double>(bits);
}
inline uint16_t singleToHalf(uint32_t bits) {
  return reduceFormat<Single, Half>(bits);
}
inline uint32_t doubleToSingle(uint64_t bits) {
  return reduceFormat<Double, Single>(bits);
}

//===----------------------------------------------------------------------===//
// Comparisons: RRN max/min reductions and the ALU max/min
//===----------------------------------------------------------------------===//

/// The sign-magnitude ordering key of a bit pattern: the RRN compares
/// floating point values as sign-magnitude integers with no special case for
/// zero or infinity, so +0 > -0 (manual 4, RRN max/min).
template <typename F>
constexpr typename F::Storage signMagnitudeKey(typename F::Storage bits) {
  return F::sign(bits) ? typename F::Storage(~bits)
                       : typename F::Storage(bits | F::SignMask);
}

/// RRN max of two elements: sign-magnitude comparison, no normalisation.
template <typename F>
constexpr typename F::Storage rrnMax(typename F::Storage lhs,
                                     typename F::Storage rhs) {
  return signMagnitudeKey<F>(rhs) > signMagnitudeKey<F>(lhs) ? rhs : lhs;
}

/// RRN min of two elements: sign-magnitude comparison, no normalisation.
template <typename F>
constexpr typename F::Storage rrnMin(typename F::Storage lhs,
                                     typename F::Storage rhs) {
  return signMagnitudeKey<F>(rhs) < signMagnitudeKey<F>(lhs) ? rhs : lhs;
}

/// The result of an ALU max/min: the chosen bits and the mask flag, which is
/// set when x was chosen or x equals y (manual 3, ALU mask flags).
template <typename Storage> struct AluSelect {
  Storage Result;
  bool Flag;
};

/// ALU floating point max: like the RRN a sign-magnitude comparison (so two
/// infinities of one sign compare by mantissa), except that when both
/// operands are zero x is returned.
template <typename F>
constexpr AluSelect<typename F::Storage> aluMax(typename F::Storage x,
                                                typename F::Storage y) {
  if (F::isZero(x) && F::isZero(y))
    return {x, true};
  bool pickY = signMagnitudeKey<F>(y) > signMagnitudeKey<F>(x);
  return {pickY ? y : x, !pickY};
}

/// ALU floating point min, the mirror of aluMax.
template <typename F>
constexpr AluSelect<typename F::Storage> aluMin(typename F::Storage x,
                                                typename F::Storage y) {
  if (F::isZero(x) && F::isZero(y))
    return {x, true};
  bool pickY = signMagnitudeKey<F>(y) < signMagnitudeKey<F>(x);
  return {pickY ? y : x, !pickY};
}

//===----------------------------------------------------------------------===//
// MAU multiplier
//===----------------------------------------------------------------------===//

/// How the MAU multiplies two significands of a format (manual 4, MAU vector
/// FMA). Half products are exact. Single and double products omit the
/// partial products of the low OmittedBits of each significand with each
/// other; when that omitted block is not zero, a correction of one unit in
/// its top column, 2^(2*OmittedBits-2) units of the product LSB, is added
/// instead. For single that is 2^-38 relative to the hidden-bit product,
/// 15 bits below the output LSB; for double 2^-74, 22 bits below.
template <typename F> struct MauMultiplier {
  static constexpr unsigned OmittedBits = 0;
};
template <> struct MauMultiplier<Single> {
  static constexpr unsigned OmittedBits = 5;
};
template <> struct MauMultiplier<Double> {
  static constexpr unsigned OmittedBits = 16;
};

/// The MAU product of two significands as integers, in units of the product
/// of their LSBs.
template <typename F>
constexpr UInt128 mauMultiplySignificands(uint64_t lhs, uint64_t rhs) {
  constexpr unsigned Omitted = MauMultiplier<F>::OmittedBits;
  UInt128 product = UInt128(lhs) * rhs;
  if constexpr (Omitted == 0) {
    return product;
  } else {
    constexpr uint64_t LowMask = (uint64_t(1) << Omitted) - 1;
    uint64_t omitted = (lhs & LowMask) * (rhs & LowMask);
    if (omitted == 0)
      return product;
    return product - omitted + (UInt128(1) << (2 * Omitted - 2));
  }
}

/// The MAU product of two values of format In, exact as the multiplier
/// computes it. A zero factor makes the product +0 even when the other
/// factor is infinite; otherwise an infinite factor makes it infinite (a
/// decision taken from a public PFN test case, docs/target/mncore2.md
/// decision 6).
template <typename In>
inline ExactValue mauProduct(typename In::Storage a, typename In::Storage b) {
  ExactValue lhs = decode<In>(a);
  ExactValue rhs = decode<In>(b);
  ExactValue product;
  product.Negative = lhs.Negative != rhs.Negative;
  if (lhs.isZero() || rhs.isZero()) {
    product.Negative = false;
    return product;
  }
  if (lhs.Infinite || rhs.Infinite) {
    product.Infinite = true;
    return product;
  }
  product.Magnitude = mauMultiplySignificands<In>(uint64_t(lhs.Magnitude),
                                                  uint64_t(rhs.Magnitude));
  product.Scale = lhs.Scale + rhs.Scale;
  return product;
}

//===----------------------------------------------------------------------===//
// MAU vector mode
//===----------------------------------------------------------------------===//

/// MAU vector FMA a*b + c (manual 4, MAU vector FMA): the product from the
/// MAU multiplier, c added as if the mantissa were unbounded, one rounding
/// to nearest even straight into Out (which is how the output precision
/// reduction "r" works: never through the accumulator precision first), the
/// exponent range mapped to zero and infinity, and the output normalised.
///
/// In is the format of a and b, Acc that of c, Out that of the result:
///   dvfma: <Double, Double, Double>   fvfma: <Single, Single, Single>
///   hvfma: <Half, Single, Single>     "...r" opcodes: Out one step narrower.
/// Operand negation ("-src") is a sign flip the caller applies first;
/// precision extension ("src e") is extendFormat applied first.
template <typename In, typename Acc, typename Out = Acc>
inline typename Out::Storage mauVectorFma(typename In::Storage a,
                                          typename In::Storage b,
                                          typename Acc::Storage c) {
  ExactValue product = mauProduct<In>(a, b);
  ExactValue addend = decode<Acc>(c);
  return roundToFormat<Out>(addExact(product, addend));
}

/// mauVectorFma<Half, Single, Out>, bit for bit, without exact 128-bit
/// arithmetic for finite non-zero factors: their product is exact in a
/// double, and c is added and rounded as the matrix-vector tail does
/// (two-sum, then one rounding into Out).
template <typename Out>
typename Out::Storage mauVectorFmaHalf(uint16_t a, uint16_t b, uint32_t c);

/// MAU vector multiply (vmul): the FMA with c = 0.
template <typename In, typename Out>
inline typename Out::Storage mauVectorMul(typename In::Storage a,
                                          typename In::Storage b) {
  return roundToFormat<Out>(mauProduct<In>(a, b));
}

/// MAU vector add (vadd): the FMA with the second factor 1.0. One has a zero
/// low significand, so the omitted partial products vanish and the sum is
/// x + y rounded once.
template <typename In, typename Acc, typename Out = Acc>
inline typename Out::Storage mauVectorAdd(typename In::Storage x,
                                          typename Acc::Storage y) {
  constexpr typename In::Storage One = In::pack(false, uint32_t(In::Bias), 0);
  return mauVectorFma<In, Acc, Out>(x, One, y);
}

/// MAU vector pass (vpassa): x * 1 + 0. Not a bit copy: the result is
/// rounded into Out and normalised, so -0 becomes +0, the mantissa of an
/// infinity or of a zero is cleared.
template <typename In, typename Out = In>
inline typename Out::Storage mauVectorPass(typename In::Storage x) {
  return roundToFormat<Out>(decode<In>(x));
}

//===----------------------------------------------------------------------===//
// MAU matrix-vector mode
//===----------------------------------------------------------------------===//

/// One output element of the MAU matrix-vector FMA (manual 4, MAU
/// matrix-vector FMA): sum_i a[i]*b[i] + c over n block-float pairs. The
/// products come from the MAU multiplier (exact for half and pseudo-single,
/// truncated with correction for single and double); the sum over i is an
/// exact signed integer sum with no intermediate rounding; then c is added
/// and the result rounded, range-mapped and normalised as in vector mode.
///
/// Half elements: a and b are 16-bit half block floats, c a single, Out
/// single or (precision reduction) half; an element whose exponent field is
/// 0 but whose mantissa is not is in the extended representation. Pseudo-
/// single and single elements: 32-bit, c single. Double: 64-bit, c double.
/// With the output precision reduction (reduceToHalf / reduceToSingle) the
/// exact result is rounded once, straight into the narrower format, which
/// is returned in the low bits of the result.
uint32_t mauMatVecHalf(const uint16_t *a, const uint16_t *b, unsigned n,
                       uint32_t c, bool reduceToHalf = false);
uint32_t mauMatVecPseudoSingle(const uint32_t *a, const uint32_t *b, unsigned n,
                               uint32_t c, bool reduceToHalf = false);
uint32_t mauMatVecSingle(const uint32_t *a, const uint32_t *b, unsigned n,
                         uint32_t c, bool reduceToHalf = false);
uint64_t mauMatVecDouble(const uint64_t *a, const uint64_t *b, unsigned n,
                         uint64_t c, bool reduceToSingle = false);

//===----------------------------------------------------------------------===//
// Block-float conversion (ALU bfn / bfe)
//===----------------------------------------------------------------------===//

/// Block-float value of an element: the mantissa field M holds the
/// significand with an explicit leading bit, so an element with exponent
/// field E means M * 2^(E - bias - (ManBits - 1)) and M = 0 is zero.
/// Block sizes: half 16, pseudo-single 8, single 4, double 4.
constexpr unsigned HalfBlockSize = 16;
constexpr unsigned PseudoSingleBlockSize = 8;
constexpr unsigned SingleBlockSize = 4;
constexpr unsigned DoubleBlockSize = 4;

/// In the extended half representation an element with exponent field 0 and
/// a non-zero mantissa has the block exponent minus this.
constexpr unsigned HalfExtendedExponentOffset = 6;

/// dbfn: double precision block float, n elements (normally 4).
void toBlockFloatDouble(const uint64_t *in, uint64_t *out, unsigned n);
/// fbfn: single precision block float, n elements (normally 4).
void toBlockFloatSingle(const uint32_t *in, uint32_t *out, unsigned n);
/// gbfn: pseudo-single block float, n elements (normally 8). The conversion
/// rounds at the full single mantissa; the MAU ignores the low 5 bits.
void toBlockFloatPseudoSingle(const uint32_t *in, uint32_t *out, unsigned n);
/// hbfn: half block float, n elements (normally 16), with mantissaBits in
/// 6..9 significant bits (clamped to that range) and optionally the
/// extended representation.
void toBlockFloatHalf(const uint16_t *in, uint16_t *out, unsigned n,
                      unsigned mantissaBits = 9, bool extended = false);
/// hbfn as the ALU runs it (9 significant bits, not extended) on `blocks`
/// blocks of four long words each, every long word four halves: block m is
/// in[4m .. 4m + 3], the vector of one MAB's four PEs. The same bits as
/// toBlockFloatHalf on each block (whose result does not depend on the
/// order of the elements), without its 128-bit arithmetic: the conversion
/// of every PE of the board runs through here once per cycle. `in` and
/// `out` may be the same.
void toBlockFloatHalfLongWords(const uint64_t *in, uint64_t *out,
                               unsigned blocks);
/// hbfe: one half block-float element into the extended representation. An
/// element that lost at least 6 leading bits to the block exponent (its
/// mantissa is below 2^3) moves to exponent field 0 with the mantissa
/// shifted up by 6; a zero element becomes all zero but its sign.
uint16_t halfBlockFloatToExtended(uint16_t element);

//===----------------------------------------------------------------------===//
// MAU matrix-vector mode on decoded operands
//===----------------------------------------------------------------------===//
//
// The same arithmetic as mauMatVecHalf / mauMatVecPseudoSingle, split so the
// emulator decodes each block float once (a matrix register row once per
// register contents, the vector once per cycle) and the inner sums run over
// plain integers. Every element of a block is read at the block exponent
// (the largest exponent field of the block), so a decoded element is just
// its signed mantissa; the products and their sum are then exact integers
// and only the final addition of c and the rounding remain.
//
// A half block with an extended element takes a slower integer loop that
// rounds those products on their own, as the multiplier does. A block with
// an infinite element is marked NeedsExactPath: its products go through the
// per-element functions above. The results are the same bit for bit in
// every case.

/// A half block float (hmfma, hmmul) decoded for the MAU.
struct DecodedHalfBlock {
  /// Signed mantissa fields; 0 for a zero element (exponent field 0 and
  /// mantissa 0). Aligned for 16-byte vector loads.
  alignas(16) int16_t Significand[HalfBlockSize];
  /// The same with the extended elements zeroed: the products of two of
  /// these are the exact, unrounded ones.
  alignas(16) int16_t NormalSignificand[HalfBlockSize];
  /// Bit i: element i is extended (exponent field 0, mantissa not 0), its
  /// products round on their own.
  uint32_t ExtendedMask;
  /// The block exponent field: the largest exponent field of the block.
  int32_t BlockExponent;
  /// The weight of one mantissa unit, 2^(BlockExponent - bias - 8).
  float UnitWeight;
  /// An infinite element: use the per-element path.
  bool NeedsExactPath;
  /// The elements as given.
  uint16_t Bits[HalfBlockSize];
};

/// A pseudo-single block float (gmfma, gmmul) decoded for the MAU.
struct DecodedPseudoSingleBlock {
  /// Signed mantissa fields without the ignored low bits (18 bits).
  int32_t Significand[PseudoSingleBlockSize];
  int32_t BlockExponent;
  /// An infinite element: use the per-element path.
  bool NeedsExactPath;
  uint32_t Bits[PseudoSingleBlockSize];
};

/// A 16 x 16 half matrix register decoded for the MAU, row by row.
/// What every product with a decoded half matrix reads, kept apart from
/// the per-row details (DecodedHalfBlock), which only extended or infinite
/// elements and the rounding to half need: the emulator keeps one per MAB
/// and register, and the products run at the speed these few cache lines
/// arrive.
struct HalfMatrixProducts {
  /// Rows[r].NormalSignificand by pairs of columns: ColumnPairs[p][r] holds
  /// row r's elements 2p and 2p + 1. One pmaddwd of a pair's 16 rows with
  /// the vector's elements 2p, 2p + 1 in every lane gives each row's two
  /// products summed in its own lane, so the row sums need no horizontal
  /// additions.
  alignas(64) int16_t ColumnPairs[HalfBlockSize / 2][HalfBlockSize][2];
  /// Rows[r].UnitWeight, side by side for the vectorised tail.
  float RowWeights[HalfBlockSize];
  /// Bit r: row r has an extended element.
  uint32_t ExtendedRows;
  /// Bit r: row r has an infinite element.
  uint32_t ExactRows;
};

/// A 16 x 16 half matrix (a matrix register) decoded for the MAU.
struct DecodedHalfMatrix {
  HalfMatrixProducts Products;
  DecodedHalfBlock Rows[HalfBlockSize];
};

void decodeHalfBlock(const uint16_t *elements, DecodedHalfBlock &out);
/// The same for the 16 halves of four long words, most significant first
/// in each (a matrix register row, or the vector the four PEs of a MAB
/// supply).
void decodeHalfBlockOfLongWords(const uint64_t *words, DecodedHalfBlock &out);
/// The 16 rows of a matrix register, four long words each.
void decodeHalfMatrix(const uint64_t *words, HalfMatrixProducts &products,
                      DecodedHalfBlock *rows);
inline void decodeHalfMatrix(const uint64_t *words, DecodedHalfMatrix &out) {
  decodeHalfMatrix(words, out.Products, out.Rows);
}
/// The products only, as decodeHalfMatrix makes them (the fused path needs
/// no more; the rows only the general one): on AVX-512 two rows per
/// vector and no rows written.
void decodeHalfMatrixProducts(const uint64_t *words,
                              HalfMatrixProducts &products);
void decodePseudoSingleBlock(const uint32_t *elements,
                             DecodedPseudoSingleBlock &out);

/// y[r] = row r . vector + c[r] for the 16 rows, bit for bit the result of
/// mauMatVecHalf(matrix.Rows[r].Bits, vector.Bits, 16, c[r], reduceToHalf).
void mauMatVecHalfMatrix(const HalfMatrixProducts &products,
                         const DecodedHalfBlock *rows,
                         const DecodedHalfBlock &vector, const uint32_t *c,
                         uint32_t *y, bool reduceToHalf = false);
inline void mauMatVecHalfMatrix(const DecodedHalfMatrix &matrix,
                                const DecodedHalfBlock &vector,
                                const uint32_t *c, uint32_t *y,
                                bool reduceToHalf = false) {
  mauMatVecHalfMatrix(matrix.Products, matrix.Rows, vector, c, y, reduceToHalf);
}
/// The 16 singles a MAB's four PEs hold for a half matrix-vector product
/// (PE k: singles 4k, 4k + 1 in high[k], 4k + 2, 4k + 3 in low[k], most
/// significant first) to element order, and back.
void halfSinglesFromLanes(const uint64_t *high, const uint64_t *low,
                          uint32_t *singles);
void halfLanesFromSingles(const uint32_t *singles, uint64_t *high,
                          uint64_t *low);

/// One MAB's y = M b + c straight from and to its PEs' long words, for the
/// common case only: returns false, writing nothing, when the matrix or the
/// vector has an extended or infinite element (or the CPU lacks
/// AVX-512BW); then use the functions above. An infinite addend (as
/// random memory often holds) gives its row that infinity here too.
/// vectorWords: PE k's most significant long word (halves 4k..4k+3 of b);
/// cHigh/cLow (null for no c) and yHigh/yLow: PE k's long words of singles as
/// halfSinglesFromLanes reads them. Bit for bit mauMatVecHalfMatrix.
bool mauMatVecHalfLanes(const HalfMatrixProducts &matrix,
                        const uint64_t *vectorWords, const uint64_t *cHigh,
                        const uint64_t *cLow, uint64_t *yHigh, uint64_t *yLow);

/// Whether mauMatVecHalfMatrix (and the ones above) may use its 512-bit path
/// (default: yes, on CPUs with AVX-512BW); returns whether this CPU has that
/// path. A test hook: both paths must give the same bits. It covers hbfn's
/// 512-bit path and the matrix decode's too.
bool allowWideMatVec(bool allowed);
/// The same for pseudo-single blocks of 8 and mauMatVecPseudoSingle.
void mauMatVecPseudoSingleRows(const DecodedPseudoSingleBlock *rows,
                               unsigned rowCount,
                               const DecodedPseudoSingleBlock &vector,
                               const uint32_t *c, uint32_t *y,
                               bool reduceToHalf = false);

//===----------------------------------------------------------------------===//
// RRN floating point add reduction
//===----------------------------------------------------------------------===//

/// One RRN fadd stage over n elements of F (manual 4, RRN fadd), exact
/// before the final rounding: each element gets its hidden bit and three
/// zero guard bits, is shifted to the largest exponent with a round to
/// nearest even when the shift exceeds the guard bits (an exponent
/// difference of 4 or more), and the aligned values are summed exactly.
/// Any infinite input makes the result infinite (sign of the first one).
template <typename F>
ExactValue rrnAlignedSum(const typename F::Storage *values, unsigned n);

/// A single-stage RRN fadd (the 4-element reduction): the aligned sum
/// rounded to nearest even into Out and normalised.
template <typename F, typename Out = F>
inline typename Out::Storage rrnFadd(const typename F::Storage *values,
                                     unsigned n) {
  return roundToFormat<Out>(rrnAlignedSum<F>(values, n));
}

/// A two-stage RRN fadd (16 elements on the L1BM, 8 on MV): consecutive
/// groups of groupSize elements are reduced and rounded to Circuit, then
/// those partial sums are reduced once more and rounded straight to Out.
/// n must be at most 64.
template <typename Circuit, typename Out = Circuit>
typename Out::Storage rrnFaddTwoStage(const typename Circuit::Storage *values,
                                      unsigned n, unsigned groupSize);

/// The L1BM half fadd reduction (l1bmrhfadd = l1bmrffaddr with "e" inputs):
/// the halves are extended exactly to single, reduced on the single circuit
/// in groups of four, and the final stage rounds straight to half.
uint16_t l1bmHalfFadd16(const uint16_t *values, unsigned n);

/// The RRN max/min reduction with the L1BM precision reduction: the result
/// is rounded to half once, at the end, by round to nearest even.
uint16_t rrnMaxSingleToHalf(const uint32_t *values, unsigned n);
uint16_t rrnMinSingleToHalf(const uint32_t *values, unsigned n);

} // namespace mncc::emu

#endif // MNCC_EMU_NUMERICS_H
