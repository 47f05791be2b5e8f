//===- NumericsFormatTest.cpp - MN-Core 2 formats and conversions ---------===//
//
// Expected values are derived by hand from the format rules of chapter 4 of
// the MN-Core 2 Software Development Manual (restated in MNCore2.md 9.x); the
// comment on each case gives the arithmetic.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Numerics.h"

#include "gtest/gtest.h"

using namespace mncc::emu;

namespace {

TEST(NumericsFormat, HalfIsOneSixNine) {
  // MN-Core 2 half: 1 sign bit, 6 exponent bits, 9 mantissa bits, bias 31.
  EXPECT_EQ(Half::TotalBits, 16u);
  EXPECT_EQ(Half::ExpBits, 6u);
  EXPECT_EQ(Half::ManBits, 9u);
  EXPECT_EQ(Half::Bias, 31);
  // 1.0 has the biased exponent 31 in bits 14..9: 31 << 9 = 0x3e00.
  EXPECT_EQ(Half::pack(false, 31, 0), 0x3e00);
  // -1.5: sign, exponent 31, mantissa 0.5 * 2^9 = 256.
  EXPECT_EQ(Half::pack(true, 31, 256), 0xbf00);
  EXPECT_EQ(Half::exponent(0xbf00), 31u);
  EXPECT_EQ(Half::mantissa(0xbf00), 256u);
  EXPECT_TRUE(Half::sign(0xbf00));
}

TEST(NumericsFormat, HalfExtendsExactlyToSingle) {
  // Exponent rebias 31 -> 127 (+96), mantissa moves up 23 - 9 = 14 bits.
  EXPECT_EQ(halfToSingle(0x3e00), 0x3f800000u); // 1.0
  EXPECT_EQ(halfToSingle(0xbf00), 0xbfc00000u); // -1.5
  // Largest finite half (2 - 2^-9) * 2^31: exponent 62 -> 158 (0x4f000000),
  // mantissa 511 << 14 = 0x7fc000.
  EXPECT_EQ(halfToSingle(0x7dff), 0x4f7fc000u);
  // Smallest half 2^-30: exponent 1 -> 97 = 0x30800000.
  EXPECT_EQ(halfToSingle(0x0200), 0x30800000u);
  // Exponent field 0 is zero whatever the mantissa (no subnormals); the sign
  // of a zero survives an exact extension.
  EXPECT_EQ(halfToSingle(0x0155), 0x00000000u);
  EXPECT_EQ(halfToSingle(0x8001), 0x80000000u);
  // All-ones exponent is infinity.
  EXPECT_EQ(halfToSingle(0x7e00), 0x7f800000u);
  EXPECT_EQ(halfToSingle(0xfe00), 0xff800000u);
}

TEST(NumericsFormat, SingleExtendsExactlyToDouble) {
  EXPECT_EQ(singleToDouble(0x3f800000), 0x3ff0000000000000ull);
  // 1 + 2^-23 -> mantissa bit 52 - 23 = 29.
  EXPECT_EQ(singleToDouble(0x3f800001), 0x3ff0000020000000ull);
  // A single subnormal pattern is zero on MN-Core 2.
  EXPECT_EQ(singleToDouble(0x00400000), 0x0000000000000000ull);
  EXPECT_EQ(singleToDouble(0x7f800000), 0x7ff0000000000000ull);
}

TEST(NumericsFormat, SingleToHalfRoundsToNearestEven) {
  // The half ULP at 1.0 is 2^-9; 2^-10 is exactly half of it.
  // 1 + 2^-10 (single mantissa bit 13 = 0x2000): a tie, the even neighbour
  // is 1.0.
  EXPECT_EQ(singleToHalf(0x3f802000), 0x3e00);
  // 1 + 3 * 2^-10: a tie between mantissa 1 and 2, the even one is 2.
  EXPECT_EQ(singleToHalf(0x3f806000), 0x3e02);
  // Just above the tie rounds up.
  EXPECT_EQ(singleToHalf(0x3f802001), 0x3e01);
  // Just below the tie rounds down.
  EXPECT_EQ(singleToHalf(0x3f801fff), 0x3e00);
  // The sign is kept.
  EXPECT_EQ(singleToHalf(0xbfc00000), 0xbf00);
}

TEST(NumericsFormat, SingleToHalfOverflowsToInfinity) {
  // 2^32 needs the half exponent 63, the infinity code.
  EXPECT_EQ(singleToHalf(0x4f800000), 0x7e00);
  EXPECT_EQ(singleToHalf(0xcf800000), 0xfe00);
  // (2 - 2^-10) * 2^31 is the tie between the largest half (mantissa 511,
  // odd) and 2^32: it rounds to even, which carries into the infinity code.
  EXPECT_EQ(singleToHalf(0x4f7fe000), 0x7e00);
  // One single ULP below the tie stays at the largest finite half.
  EXPECT_EQ(singleToHalf(0x4f7fdfff), 0x7dff);
  // Single infinity stays infinity with a clear mantissa (normalisation).
  EXPECT_EQ(singleToHalf(0x7f812345), 0x7e00);
}

TEST(NumericsFormat, SingleToHalfUnderflowsToPositiveZero) {
  // 2^-31 needs the half exponent 0: zero (no subnormals).
  EXPECT_EQ(singleToHalf(0x30000000), 0x0000);
  // Output normalisation clears the sign of a zero result.
  EXPECT_EQ(singleToHalf(0xb0000000), 0x0000);
  // (2 - 2^-10) * 2^-31 rounds (tie, to even) up to 2^-30 before the range
  // check, so it becomes the smallest half rather than zero.
  EXPECT_EQ(singleToHalf(0x307fe000), 0x0200);
  // A zero input of either sign gives +0.
  EXPECT_EQ(singleToHalf(0x80000000), 0x0000);
}

TEST(NumericsFormat, DoubleToSingleRoundsToNearestEven) {
  // 1 + 2^-24 is half a single ULP: tie, to even 1.0.
  EXPECT_EQ(doubleToSingle(0x3ff0000010000000ull), 0x3f800000u);
  // 1 + 3 * 2^-24: tie between mantissa 1 and 2, to even 2.
  EXPECT_EQ(doubleToSingle(0x3ff0000030000000ull), 0x3f800002u);
  // 2^128 overflows to infinity; 2^-127 underflows to +0.
  EXPECT_EQ(doubleToSingle(0x47f0000000000000ull), 0x7f800000u);
  EXPECT_EQ(doubleToSingle(0xb800000000000000ull), 0x00000000u);
}

TEST(NumericsFormat, HalfAndDoubleConvertDirectly) {
  // Half 1.5 (0x3f00) is double 0x3ff8000000000000 (mantissa 2^51).
  EXPECT_EQ((extendFormat<Half, Double>(0x3f00)), 0x3ff8000000000000ull);
  // Double 1 + 2^-10 is a half tie: to even, 1.0.
  EXPECT_EQ((reduceFormat<Double, Half>(0x3ff0040000000000ull)), 0x3e00);
  // Double 1 + 2^-10 + 2^-52 is above the tie: 1 + 2^-9. Going through
  // single first would lose the 2^-52 and give 1.0: one rounding only.
  EXPECT_EQ((reduceFormat<Double, Half>(0x3ff0040000000001ull)), 0x3e01);
  EXPECT_EQ(singleToHalf(doubleToSingle(0x3ff0040000000001ull)), 0x3e00);
}

TEST(NumericsFormat, OutputNormalisation) {
  // All-ones exponent: mantissa cleared, sign kept.
  EXPECT_EQ(normalizeOutput<Single>(0x7f812345), 0x7f800000u);
  EXPECT_EQ(normalizeOutput<Single>(0xff812345), 0xff800000u);
  // Zero exponent: mantissa and sign cleared.
  EXPECT_EQ(normalizeOutput<Single>(0x80000001), 0x00000000u);
  EXPECT_EQ(normalizeOutput<Single>(0x00400000), 0x00000000u);
  EXPECT_EQ(normalizeOutput<Half>(0x81ff), 0x0000);
  EXPECT_EQ(normalizeOutput<Half>(0x7e01), 0x7e00);
  EXPECT_EQ(normalizeOutput<Double>(0x800fffffffffffffull), 0ull);
  // Anything else is left alone.
  EXPECT_EQ(normalizeOutput<Single>(0xbf800001), 0xbf800001u);
}

TEST(NumericsFormat, RoundToFormatHandlesWideExactValues) {
  // 2^100 + 1 as an exact value rounds to 2^100 in single (exponent 227).
  ExactValue value;
  value.Magnitude = (UInt128(1) << 100) + 1;
  EXPECT_EQ(roundToFormat<Single>(value), 0x71800000u);
  // Scaled by 2^-250 (about 2^-150) it is below the smallest single, 2^-126,
  // and becomes +0; scaled by 2^-200 (about 2^-100) it is an ordinary single
  // with exponent 27.
  value.Scale = -250;
  EXPECT_EQ(roundToFormat<Single>(value), 0u);
  value.Scale = -200;
  EXPECT_EQ(roundToFormat<Single>(value), 0x0d800000u);
  value.Scale = -250;
  EXPECT_EQ(roundToFormat<Single>(value), 0u);
}

TEST(NumericsFormat, AddExactKeepsTheStickyBitForRounding) {
  // 1 + 2^-24 is exactly the tie between 1 and 1 + 2^-23 in single.
  ExactValue tie;
  tie.Magnitude = (UInt128(1) << 24) + 1;
  tie.Scale = -24;
  EXPECT_EQ(roundToFormat<Single>(tie), 0x3f800000u); // to even
  // 2^-200 lies far below the 125 bits addExact keeps and is reduced to a
  // sticky bit; it must still break the tie in the right direction.
  ExactValue tiny;
  tiny.Magnitude = 1;
  tiny.Scale = -200;
  EXPECT_EQ(roundToFormat<Single>(addExact(tie, tiny)), 0x3f800001u);
  tiny.Negative = true;
  EXPECT_EQ(roundToFormat<Single>(addExact(tie, tiny)), 0x3f800000u);
  // The same from below the tie: 1 + 2^-24 - 2^-200 rounds down even when
  // the larger operand is given second.
  EXPECT_EQ(roundToFormat<Single>(addExact(tiny, tie)), 0x3f800000u);
}

} // namespace
