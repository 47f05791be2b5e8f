//===- NumericsMauTest.cpp - MAU vector and matrix-vector FMA -------------===//
//
// The MAU arithmetic of chapter 4 of the MN-Core 2 Software Development
// Manual (MNCore2.md 9.5, 9.7). Expected values are computed by hand from
// the rules; each case shows the arithmetic. Where IEEE arithmetic gives a
// different answer the test checks that too, with the host's fma, so the
// case really exercises the MN-Core 2 specific rule.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Numerics.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

using namespace mncc::emu;

namespace {

float asFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint32_t asBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

uint64_t asBits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

double asDouble(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint32_t ieeeFma(uint32_t a, uint32_t b, uint32_t c) {
  return asBits(std::fma(asFloat(a), asFloat(b), asFloat(c)));
}

TEST(NumericsMauVector, ManualExampleFvfma) {
  // The manual's example: fvfma gives 0x4a000010 where IEEE gives
  // 0x4a000004. MNCore2.md quotes only the two results; these operands are
  // the ones the rule implies:
  //   a = b = 2^20 + 1 = 0x49800008 (significand 2^23 + 8, low 5 bits 8)
  //   c = -2^40         = 0xd3800000
  // Exact: (2^20 + 1)^2 - 2^40 = 2^21 + 1 = 2097153 = 0x4a000004.
  // MAU: the omitted partial product is 8 * 8 = 64 units of 2^-46, replaced
  // by 2^-38 = 256 units; at the product scale 2^40 that is
  // 2^40 * (2^-38 - 64 * 2^-46) = 4 - 1 = +3: 2097156 = 0x4a000010.
  const uint32_t a = 0x49800008, b = 0x49800008, c = 0xd3800000;
  EXPECT_EQ(ieeeFma(a, b, c), 0x4a000004u);
  EXPECT_EQ((mauVectorFma<Single, Single>(a, b, c)), 0x4a000010u);
}

TEST(NumericsMauVector, NoCorrectionWhenOmittedBlockIsZero) {
  // a = 2^20 has low significand bits 0: the omitted block is 0, no
  // correction, the product is exact and so is the result, 2^20.
  const uint32_t a = 0x49800000, b = 0x49800008, c = 0xd3800000;
  EXPECT_EQ((mauVectorFma<Single, Single>(a, b, c)), 0x49800000u);
  EXPECT_EQ(ieeeFma(a, b, c), 0x49800000u);
}

TEST(NumericsMauVector, SingleCorrectionIsTwoToMinus38) {
  // (1 + 2^-23)^2 - 1 exactly is 2^-22 + 2^-46. The MAU drops the 2^-46
  // (omitted block 1 * 1) and adds 2^-38: 2^-22 * (1 + 2^-16), exponent
  // 105 (0x34800000) with mantissa 2^7 = 0x80.
  const uint32_t a = 0x3f800001, c = 0xbf800000;
  EXPECT_EQ((mauVectorFma<Single, Single>(a, a, c)), 0x34800080u);
  // IEEE rounds 2^-22 * (1 + 2^-24), a tie, to even: 0x34800000.
  EXPECT_EQ(ieeeFma(a, a, c), 0x34800000u);
}

TEST(NumericsMauVector, DoubleCorrectionIsTwoToMinus74) {
  // (1 + 2^-52)^2 - 1: exact 2^-51 + 2^-104, MAU 2^-51 + 2^-74 =
  // 2^-51 * (1 + 2^-23): exponent 972 (0x3cc), mantissa bit 29.
  const uint64_t a = 0x3ff0000000000001ull, c = 0xbff0000000000000ull;
  EXPECT_EQ((mauVectorFma<Double, Double>(a, a, c)), 0x3cc0000020000000ull);
  EXPECT_EQ(asBits(std::fma(asDouble(a), asDouble(a), asDouble(c))),
            0x3cc0000000000000ull);
  // The omitted block is the low 16 bits: with a low part of 2^16 (bit 16
  // set, bits 0..15 clear) nothing is omitted and the result is exact.
  const uint64_t b = 0x3ff0000000010000ull; // 1 + 2^-36
  EXPECT_EQ((mauVectorFma<Double, Double>(a, b, c)),
            asBits(std::fma(asDouble(a), asDouble(b), asDouble(c))));
}

TEST(NumericsMauVector, HalfProductIsExact) {
  // hvfma: (1 + 2^-9)^2 - 1 = 2^-8 + 2^-18 exactly = 2^-8 * (1 + 2^-10):
  // single exponent 119 (0x3b800000), mantissa 2^13 = 0x2000.
  EXPECT_EQ((mauVectorFma<Half, Single>(0x3e01, 0x3e01, 0xbf800000)),
            0x3b802000u);
  // hvfmar rounds that straight to half: 2^-8 * (1 + 2^-10) is a tie at
  // the half ULP, to even: 2^-8, half exponent 23: 0x2e00.
  EXPECT_EQ((mauVectorFma<Half, Single, Half>(0x3e01, 0x3e01, 0xbf800000)),
            0x2e00);
}

TEST(NumericsMauVector, OutputReductionRoundsOnce) {
  // fvfmar: 2^-10 * (1 + 2^-20) + 1 = 1 + 2^-10 + 2^-30 (2^-10 has a zero
  // low significand, so the product is exact).
  // Straight to half: above the tie 1 + 2^-10, rounds up: 0x3e01.
  const uint32_t a = 0x3a800000, b = 0x3f800008, c = 0x3f800000;
  EXPECT_EQ((mauVectorFma<Single, Single, Half>(a, b, c)), 0x3e01);
  // Via single first: 2^-30 is under half a single ULP, giving 1 + 2^-10,
  // then a half tie to even, 1.0. The manual rules this double rounding out.
  uint32_t single = mauVectorFma<Single, Single>(a, b, c);
  EXPECT_EQ(single, 0x3f802000u);
  EXPECT_EQ(singleToHalf(single), 0x3e00);
}

TEST(NumericsMauVector, OperandExtensionAndReductionFlags) {
  // "src e": the half operands are extended exactly to single first, then
  // fvfma runs. 1 + 2^-9 as a single has significand 2^23 + 2^14, low 5 bits
  // 0, so the product is exact: 2^-8 + 2^-18 = 0x3b802000, the same as the
  // half product above.
  EXPECT_EQ((mauVectorFma<Single, Single>(halfToSingle(0x3e01),
                                          halfToSingle(0x3e01), 0xbf800000)),
            0x3b802000u);
  // "src r" on a half input: 1 + 2^-10 + 2^-23 rounds up to 1 + 2^-9 (just
  // above the tie), so hvfma computes (1 + 2^-9) * 1 + 0 = 0x3f804000.
  EXPECT_EQ((mauVectorFma<Half, Single>(singleToHalf(0x3f802001), 0x3e00, 0)),
            0x3f804000u);
  // "-src" is a sign flip of the operand: -(2^20 + 1) * (2^20 + 1) + 2^40
  // mirrors the manual example: -0x4a000010.
  EXPECT_EQ((mauVectorFma<Single, Single>(0xc9800008, 0x49800008, 0x53800000)),
            0xca000010u);
}

TEST(NumericsMauVector, ExponentRange) {
  // 2^127 * 2 overflows to infinity.
  EXPECT_EQ((mauVectorMul<Single, Single>(0x7f000000, 0x40000000)),
            0x7f800000u);
  // 2^-100 * 2^-30 = 2^-130 is below 2^-126: +0, also for a negative
  // product (normalisation clears the sign).
  EXPECT_EQ((mauVectorMul<Single, Single>(0x0d800000, 0x30800000)), 0u);
  EXPECT_EQ((mauVectorMul<Single, Single>(0x8d800000, 0x30800000)), 0u);
  // 2^-100 * 2^-26 = 2^-126 exactly is the smallest normal.
  EXPECT_EQ((mauVectorMul<Single, Single>(0x0d800000, 0x32800000)),
            0x00800000u);
  // Cancellation gives +0.
  EXPECT_EQ((mauVectorFma<Single, Single>(0x3f800000, 0x3f800000, 0xbf800000)),
            0u);
  // An infinite factor gives an infinity of the product's sign.
  EXPECT_EQ((mauVectorFma<Single, Single>(0xff800000, 0x3f800000, 0x3f800000)),
            0xff800000u);
}

TEST(NumericsMauVector, InfinityTimesZeroIsZero) {
  // Decision 6, from the education compiler's exp test case (expected
  // values from PFN's tools): -inf * -0 masks an out-of-range lane to 0.
  // A zero factor wins over an infinite one, in every precision, and the
  // addend is added to a product of +0.
  EXPECT_EQ((mauVectorMul<Single, Single>(0xff800000, 0x80000000)), 0u);
  EXPECT_EQ((mauVectorMul<Single, Single>(0x00000000, 0x7f800000)), 0u);
  // An exponent field of 0 is a zero whatever the mantissa (decision 2).
  EXPECT_EQ((mauVectorMul<Single, Single>(0x7f800000, 0x00400000)), 0u);
  EXPECT_EQ((mauVectorFma<Single, Single>(0x7f800000, 0x0, 0xc0000000)),
            0xc0000000u);
  EXPECT_EQ((mauVectorMul<Double, Double>(0xfff0000000000000, 0)), 0u);
  EXPECT_EQ((mauVectorFma<Half, Single>(0x7e00, 0x8000, 0x3f800000)),
            0x3f800000u);
  // An infinite factor with a non-zero one stays infinite.
  EXPECT_EQ((mauVectorMul<Single, Single>(0xff800000, 0x80800000)),
            0x7f800000u);
}

TEST(NumericsMauVector, AddAndPass) {
  // fvadd is x * 1 + y: 1 + 1.5 * 2^-23 lies exactly between 1 + 2^-23
  // and 1 + 2^-22, a tie, and rounds to the even mantissa 2.
  EXPECT_EQ((mauVectorAdd<Single, Single>(0x3f800000, 0x34400000)),
            0x3f800002u);
  // hvadd: half x plus single y.
  EXPECT_EQ((mauVectorAdd<Half, Single>(0x3e00, 0x3f800000)), 0x40000000u);
  // vpassa is not a bit copy: -0 becomes +0, a zero-exponent pattern
  // becomes 0, an infinity loses its mantissa.
  EXPECT_EQ(mauVectorPass<Single>(0x80000000), 0u);
  EXPECT_EQ(mauVectorPass<Single>(0x00400000), 0u);
  EXPECT_EQ(mauVectorPass<Single>(0x7f812345), 0x7f800000u);
  EXPECT_EQ(mauVectorPass<Single>(0xbfc00000), 0xbfc00000u);
  EXPECT_EQ(mauVectorPass<Half>(0x8155), 0x0000);
}

TEST(NumericsMauVector, MatchesIeeeWhereTheProductIsExact) {
  // When one factor has a zero low significand the MAU product is exact, and
  // for normal inputs and results the MAU rules (unbounded add, one round to
  // nearest even) are the IEEE fma. Random operands from a fixed seed, with
  // exponents kept away from the subnormal range, must agree with the host.
  std::mt19937 random(20240826);
  auto normalize = [](uint32_t bits) { // host subnormals are MN-Core zeros
    uint32_t exp = (bits >> 23) & 0xff;
    if (exp == 0)
      return uint32_t(0);
    return exp == 0xff ? bits & 0xff800000u : bits;
  };
  for (int i = 0; i < 20000; ++i) {
    uint32_t a = (random() & 0x807fffe0u) | ((100 + random() % 60) << 23);
    uint32_t b = (random() & 0x807fffffu) | ((100 + random() % 60) << 23);
    uint32_t cExp = i % 2 ? ((a >> 23) & 0xff) + ((b >> 23) & 0xff) - 127
                          : 60 + random() % 160;
    uint32_t c = (random() & 0x807fffffu) | (cExp << 23);
    ASSERT_EQ((mauVectorFma<Single, Single>(a, b, c)),
              normalize(ieeeFma(a, b, c)))
        << std::hex << a << " " << b << " " << c;
  }
}

//===----------------------------------------------------------------------===//
// Matrix-vector mode. Single block floats with exponent field 127 mean
// M * 2^-22 (M = mantissa field, explicit leading bit); half block floats
// with exponent field 31 mean M * 2^-8.
//===----------------------------------------------------------------------===//

TEST(NumericsMauVector, HalfFmaFastPathMatchesTheExactPath) {
  // mauVectorFmaHalf (hvfma, hvadd in the executor) against mauVectorFma
  // with either output, on random factors of every kind and addends that
  // cancel the product, tie with it at single or half precision, reach
  // the exponent range's ends, or are zero or infinite patterns.
  std::mt19937_64 random(2026);
  auto below = [&](uint64_t n) { return random() % n; };
  unsigned fast = 0;
  for (unsigned trial = 0; trial < 400000; ++trial) {
    uint16_t a = uint16_t(random()), b = uint16_t(random());
    // Mostly finite non-zero factors, the case the fast path takes.
    if (below(8) != 0) {
      a = Half::pack(random() & 1, 1 + uint32_t(below(Half::MaxExp - 1)),
                     uint16_t(random() & Half::ManMask));
      b = Half::pack(random() & 1, 1 + uint32_t(below(Half::MaxExp - 1)),
                     uint16_t(random() & Half::ManMask));
    }
    uint32_t product = mauVectorFma<Half, Single, Single>(a, b, 0);
    bool negative = random() & 1;
    uint32_t mantissa = uint32_t(random() & Single::ManMask);
    uint32_t exp = Single::exponent(product);
    uint32_t c;
    switch (below(10)) {
    case 0:
      c = Single::pack(negative, 0, below(2) ? 0 : mantissa);
      break;
    case 1:
      c = Single::pack(negative, Single::MaxExp, below(2) ? 0 : mantissa);
      break;
    case 2: // cancels the product, or nearly
      c = (product ^ Single::SignMask) + uint32_t(below(5)) - 2;
      break;
    case 3: // a tie at half precision (14 dropped bits)
      c = Single::pack(negative, exp, (mantissa & ~0x3fffu) | 0x2000);
      break;
    case 4: // the product's size
      c = Single::pack(negative, exp, mantissa);
      break;
    case 5: // far below or above it
      c = Single::pack(
          negative,
          uint32_t(std::min<int>(
              254, std::max<int>(1, int(exp) - 30 + int(below(60))))),
          mantissa);
      break;
    case 6: // the ends of the exponent range
      c = Single::pack(negative, below(2) ? 1 : Single::MaxExp - 1, mantissa);
      break;
    default:
      c = Single::pack(negative, 1 + uint32_t(below(Single::MaxExp - 1)),
                       mantissa);
      break;
    }
    fast += Half::exponent(a) != 0 && Half::exponent(b) != 0 &&
            Half::exponent(a) != Half::MaxExp &&
            Half::exponent(b) != Half::MaxExp;
    ASSERT_EQ(mauVectorFmaHalf<Single>(a, b, c),
              (mauVectorFma<Half, Single, Single>(a, b, c)))
        << std::hex << "a " << a << " b " << b << " c " << c;
    ASSERT_EQ(mauVectorFmaHalf<Half>(a, b, c),
              (mauVectorFma<Half, Single, Half>(a, b, c)))
        << std::hex << "a " << a << " b " << b << " c " << c << " reduced";
  }
  EXPECT_GT(fast, 300000u);
}

TEST(NumericsMauMatVec, InnerSumHasNoIntermediateRounding) {
  // a = [1, 2^-17, 1, 0], b = [1, 2^-17, -1, 0] (M = 2^22, 32, 2^22, 0;
  // low 5 bits clear so the products are exact).
  // Exact inner sum: 1 + 2^-34 - 1 = 2^-34: single exponent 93,
  // 0x2e800000. A sequential single FMA chain would lose the 2^-34 in
  // 1 + 2^-34 and give 0.
  const uint32_t a[] = {0x3fc00000, 0x3f800020, 0x3fc00000, 0x3f800000};
  const uint32_t b[] = {0x3fc00000, 0x3f800020, 0xbfc00000, 0x3f800000};
  EXPECT_EQ(mauMatVecSingle(a, b, 4, 0), 0x2e800000u);
  // With c = 1.0: 1 + 2^-34 rounds to 1.0.
  EXPECT_EQ(mauMatVecSingle(a, b, 4, 0x3f800000), 0x3f800000u);
}

TEST(NumericsMauMatVec, InfiniteTimesZeroElementsAddNothing) {
  // As in vector mode (decision 6): an infinite element times a zero one
  // (mantissa 0) contributes nothing; times a non-zero one the sum is
  // infinite. A block with an infinity is all infinities (bfn, manual 4).
  const uint32_t infinities[] = {0x7f800000, 0xff800000};
  const uint32_t zeros[] = {0x3f800000, 0xbf800000};
  EXPECT_EQ(mauMatVecSingle(infinities, zeros, 2, 0x40000000), 0x40000000u);
  const uint32_t zeroThenOne[] = {0x3f800000, 0x3fc00000};
  EXPECT_EQ(mauMatVecSingle(infinities, zeroThenOne, 2, 0), 0xff800000u);
  // Half: an infinite row times a zero vector, plus c = 1.0.
  uint16_t ha[16], hb[16];
  for (unsigned i = 0; i < 16; ++i) {
    ha[i] = 0x7e00;
    hb[i] = i % 2 ? 0x3e00 : 0xbe00; // exponent 31, mantissa 0: zeros
  }
  EXPECT_EQ(mauMatVecHalf(ha, hb, 16, 0x3f800000, false), 0x3f800000u);
  hb[3] = 0x3f00; // one element 1.0
  EXPECT_EQ(mauMatVecHalf(ha, hb, 16, 0x3f800000, false), 0x7f800000u);
}

TEST(NumericsMauMatVec, SingleUsesTheTruncatedMultiplier) {
  // M = 1 each (2^-22): exact product 2^-44, but the omitted block 1 * 1 is
  // replaced by 2^8 LSB units: 2^-36, exponent 91 = 0x2d800000.
  const uint32_t a[] = {0x3f800001};
  EXPECT_EQ(mauMatVecSingle(a, a, 1, 0), 0x2d800000u);
}

TEST(NumericsMauMatVec, PseudoSingleIgnoresLowFiveBits) {
  // a = M 2^22 + 31, b = M 2^22 (1.0). Pseudo-single reads a as 2^22:
  // product 1.0 = 0x3f800000.
  const uint32_t a[] = {0x3fc0001f};
  const uint32_t b[] = {0x3fc00000};
  EXPECT_EQ(mauMatVecPseudoSingle(a, b, 1, 0), 0x3f800000u);
  // Single keeps them: (1 + 31 * 2^-22) * 1, nothing omitted (b's low bits
  // are 0): mantissa 31 * 2 = 62 = 0x3e.
  EXPECT_EQ(mauMatVecSingle(a, b, 1, 0), 0x3f80003eu);
}

TEST(NumericsMauMatVec, HalfExtendedProductsShiftAndRound) {
  // a0 = b0 = 1.0 (E 31, M 256 = 0x3f00). a1 is extended (exponent field
  // 0): value M * 2^(31 - 6 - 31 - 8) = M * 2^-14. b1 = 0x3e01 (M 1: 2^-8).
  // Product units are 2^-16 (two M * 2^-8); an extended product is
  // shifted right 6 and rounded to nearest even in those units.
  const uint16_t b[] = {0x3f00, 0x3e01};
  // M 256: 256 * 1 >> 6 = 4 units = 2^-14, exact. 1 + 2^-14: mantissa
  // 2^9 = 0x200.
  const uint16_t exact[] = {0x3f00, 0x0100};
  EXPECT_EQ(mauMatVecHalf(exact, b, 2, 0), 0x3f800200u);
  // M 1: 1/64 unit rounds to 0, so the result is 1.0 although the exact
  // value is 1 + 2^-22 (0x3f800002).
  const uint16_t lost[] = {0x3f00, 0x0001};
  EXPECT_EQ(mauMatVecHalf(lost, b, 2, 0), 0x3f800000u);
  // M 96: 96/64 = 1.5 units, rounds to 2 units = 2^-15: mantissa 0x100.
  const uint16_t rounded[] = {0x3f00, 0x0060};
  EXPECT_EQ(mauMatVecHalf(rounded, b, 2, 0), 0x3f800100u);
  // M 32: 0.5 unit, a tie, to even 0: 1.0.
  const uint16_t tie[] = {0x3f00, 0x0020};
  EXPECT_EQ(mauMatVecHalf(tie, b, 2, 0), 0x3f800000u);
}

TEST(NumericsMauMatVec, HalfBothExtendedShiftsTwelve) {
  // a1 = b1 = extended M 256 (2^-6 each): 256 * 256 >> 12 = 16 units =
  // 2^-12, exact. 1 + 2^-12: mantissa 2^11 = 0x800.
  const uint16_t a[] = {0x3f00, 0x0100};
  EXPECT_EQ(mauMatVecHalf(a, a, 2, 0), 0x3f800800u);
}

TEST(NumericsMauMatVec, HalfSixteenTermsWithAccumulatorAndReduction) {
  // Sixteen products of 1.0 * 1.0 plus c = 0.5 (0x3f000000) = 16.5.
  uint16_t ones[16];
  for (uint16_t &one : ones)
    one = 0x3f00;
  EXPECT_EQ(mauMatVecHalf(ones, ones, 16, 0x3f000000), 0x41840000u);
  // With output reduction: 16.5 in half is exponent 35, mantissa
  // 0.03125 * 512 = 16: 35 << 9 | 16 = 0x4610.
  EXPECT_EQ(mauMatVecHalf(ones, ones, 16, 0x3f000000, true), 0x4610u);
}

TEST(NumericsMauMatVec, DoubleUsesTheTruncatedMultiplier) {
  // Double block floats with exponent field 1023 mean M * 2^-51. M = 1
  // each: the omitted block 1 * 1 becomes 2^30 units of 2^-102: 2^-72,
  // exponent 951 = 0x3b7.
  const uint64_t a[] = {0x3ff0000000000001ull};
  EXPECT_EQ(mauMatVecDouble(a, a, 1, 0), 0x3b70000000000000ull);
  // 1.0 (M 2^51) times 1.5 (M 3 * 2^50), plus -1.0 as c: 0.5.
  const uint64_t one[] = {0x3ff8000000000000ull};
  const uint64_t oneAndHalf[] = {0x3ffc000000000000ull};
  EXPECT_EQ(mauMatVecDouble(one, oneAndHalf, 1, 0xbff0000000000000ull),
            0x3fe0000000000000ull);
}

} // namespace
