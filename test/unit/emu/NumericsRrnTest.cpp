//===- NumericsRrnTest.cpp - RRN reductions and max/min -------------------===//
//
// The RRN floating point add and max/min reductions and the ALU max/min,
// with expected values worked out by hand from chapter 4 of the MN-Core 2
// Software Development Manual (MNCore2.md 9.3-9.4, 7.8). Each case says how.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Numerics.h"

#include "gtest/gtest.h"

using namespace mncc::emu;

namespace {

TEST(NumericsRrnFadd, SumsFourElements) {
  // 1 + 1 + 1 + 1 = 4: exact, the exponent grows by two.
  const uint32_t ones[] = {0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000};
  EXPECT_EQ(rrnFadd<Single>(ones, 4), 0x40800000u);
  // Four times (2 - 2^-23) = 8 - 2^-21, exactly representable: 0x40ffffff.
  const uint32_t nearTwo[] = {0x3fffffff, 0x3fffffff, 0x3fffffff, 0x3fffffff};
  EXPECT_EQ(rrnFadd<Single>(nearTwo, 4), 0x40ffffffu);
}

TEST(NumericsRrnFadd, RoundsAtAlignmentAndAgainAtTheOutput) {
  // Units of 2^-26 (the single LSB at 1.0 with the 3 guard bits):
  //   1.0                  = 2^26               (0x3f800000)
  //   2^-3 * (1 + 2^-21)   = 2^23 + 4, shift 3  (0x3e000004), exact
  //   2^-5 * (1 + 2^-22)   = 2^21 + 0.5 twice   (0x3d000002)
  // The two last ones are shifted by 5 > 3 guard bits and round at the
  // shift: 2^21 + 0.5 is a tie and goes to the even 2^21.
  // Aligned sum: 2^26 + 2^23 + 2^22 + 4. The output ULP is 8 units, so the
  // remainder 4 is a tie and rounds to even: 1 + 2^-3 + 2^-4 = 0x3f980000.
  // An exact (IEEE) sum would be 2^26 + 2^23 + 2^22 + 5, above the tie,
  // giving 0x3f980001: the alignment rounding is what makes the difference.
  const uint32_t values[] = {0x3f800000, 0x3e000004, 0x3d000002, 0x3d000002};
  EXPECT_EQ(rrnFadd<Single>(values, 4), 0x3f980000u);
}

TEST(NumericsRrnFadd, ShiftWithinGuardBitsIsExact) {
  // 1.0 + 2^-3 * (1 + 2^-23): shift 3 fits the guard bits, no rounding at
  // alignment; the sum 1.125 + 2^-26 is below half an output ULP (2^-24)
  // and rounds down to 1.125 = 0x3f900000.
  const uint32_t values[] = {0x3f800000, 0x3e000001};
  EXPECT_EQ(rrnFadd<Single>(values, 2), 0x3f900000u);
}

TEST(NumericsRrnFadd, ZeroInfinityAndNormalisation) {
  // x + (-x) is +0, never -0 (output normalisation).
  const uint32_t cancel[] = {0xbf800000, 0x3f800000};
  EXPECT_EQ(rrnFadd<Single>(cancel, 2), 0x00000000u);
  // Exponent field 0 is zero: the mantissa bits contribute nothing.
  const uint32_t denormalPattern[] = {0x00012345, 0x3f800000};
  EXPECT_EQ(rrnFadd<Single>(denormalPattern, 2), 0x3f800000u);
  // An infinite input gives an infinity with a clear mantissa.
  const uint32_t infinite[] = {0x7f812345, 0x3f800000};
  EXPECT_EQ(rrnFadd<Single>(infinite, 2), 0x7f800000u);
  // Overflow: 2 * (2 - 2^-23) * 2^127 needs exponent 255.
  const uint32_t huge[] = {0x7f7fffff, 0x7f7fffff};
  EXPECT_EQ(rrnFadd<Single>(huge, 2), 0x7f800000u);
}

TEST(NumericsRrnFadd, HalfAndDoubleCircuits) {
  // Half circuit: 1.0 + 2^-10 is a tie at the half ULP 2^-9: even, 1.0.
  // 2^-10 is exponent 21: 21 << 9 = 0x2a00.
  const uint16_t halves[] = {0x3e00, 0x2a00};
  EXPECT_EQ(rrnFadd<Half>(halves, 2), 0x3e00);
  // 1.0 + 3 * 2^-10 (0x2d00 is 1.5 * 2^-9): tie between 1 + 2^-9 and
  // 1 + 2^-8, even is mantissa 2.
  const uint16_t halves2[] = {0x3e00, 0x2d00};
  EXPECT_EQ(rrnFadd<Half>(halves2, 2), 0x3e02);
  // Double: 1 + 2^-53 is the tie below 1 + 2^-52: to even, 1.0.
  const uint64_t doubles[] = {0x3ff0000000000000ull, 0x3ca0000000000000ull};
  EXPECT_EQ(rrnFadd<Double>(doubles, 2), 0x3ff0000000000000ull);
}

TEST(NumericsRrnFadd, L1bmHalfReductionRoundsOnceToHalf) {
  // l1bmrhfadd runs on the single circuit in two stages of four and rounds
  // the last stage straight to half (manual 4: never single then half).
  // Group 0 sums to 1.0. Group 1 sums 2^-10 (0x2a00) and 2^-26 (half
  // exponent 5: 0x0a00) to 2^-10 + 2^-26, exact in single.
  // Stage 2 (units of 2^-26 at exponent 1.0): 2^26 + 2^16 + 1. The half ULP
  // is 2^17 units, the tie 2^16: the remainder 2^16 + 1 is above it, so the
  // result rounds up to 1 + 2^-9 = 0x3e01.
  uint16_t values[16] = {0x3e00, 0, 0, 0, 0x2a00, 0x0a00};
  EXPECT_EQ(l1bmHalfFadd16(values, 16), 0x3e01);
  // Rounding to single first would give 1 + 2^-10 (the 2^-26 is below half
  // a single ULP), and that is a half tie rounding to 1.0: the double
  // rounding the manual rules out.
  uint32_t singles[16];
  for (unsigned i = 0; i < 16; ++i)
    singles[i] = halfToSingle(values[i]);
  uint32_t viaSingle = rrnFaddTwoStage<Single, Single>(singles, 16, 4);
  EXPECT_EQ(viaSingle, 0x3f802000u);
  EXPECT_EQ(singleToHalf(viaSingle), 0x3e00);
}

TEST(NumericsRrnFadd, TwoStageSettlesIntermediateSums) {
  // Eight singles in two groups of four; 2^-24 is 0x33800000.
  // Group 0: 1 + 2^-24 is half a single ULP above 1.0, a tie: settled as
  // the even 1.0 (manual 4: the intermediate value becomes a normal float).
  // Group 1: 2^-24. Stage 2: 1 + 2^-24 again, a tie: 1.0 = 0x3f800000.
  const uint32_t values[] = {0x3f800000, 0x33800000, 0, 0, 0x33800000, 0, 0, 0};
  EXPECT_EQ((rrnFaddTwoStage<Single, Single>(values, 8, 4)), 0x3f800000u);
  // Summed in one stage the two 2^-24 meet before any rounding: 1 + 2^-23
  // exactly, 0x3f800001. The staging is observable.
  EXPECT_EQ(rrnFadd<Single>(values, 8), 0x3f800001u);
  // In groups of two the partial sums are 1.0 (tie again), 0, 2^-24, 0,
  // and stage 2 sums 1 + 2^-24: 1.0 again.
  EXPECT_EQ((rrnFaddTwoStage<Single, Single>(values, 8, 2)), 0x3f800000u);
}

TEST(NumericsRrnMaxMin, SignMagnitudeOrder) {
  // +0 is larger than -0 (manual 4, RRN max/min).
  EXPECT_EQ(rrnMax<Single>(0x80000000, 0x00000000), 0x00000000u);
  EXPECT_EQ(rrnMax<Single>(0x00000000, 0x80000000), 0x00000000u);
  EXPECT_EQ(rrnMin<Single>(0x00000000, 0x80000000), 0x80000000u);
  // Negative values order by decreasing magnitude: max(-1, -2) = -1.
  EXPECT_EQ(rrnMax<Single>(0xbf800000, 0xc0000000), 0xbf800000u);
  EXPECT_EQ(rrnMin<Single>(0xbf800000, 0xc0000000), 0xc0000000u);
  // No special case for infinity, no normalisation: an infinity with a
  // mantissa is larger than the clean infinity and comes back unchanged.
  EXPECT_EQ(rrnMax<Single>(0x7f800000, 0x7f800001), 0x7f800001u);
  EXPECT_EQ(rrnMax<Single>(0x3f800000, 0x7f800000), 0x7f800000u);
  // No special case for zero: the subnormal pattern 0x00000001 is above +0
  // and is returned as is.
  EXPECT_EQ(rrnMax<Single>(0x00000000, 0x00000001), 0x00000001u);
  EXPECT_EQ(rrnMin<Half>(0x8001, 0x8000), 0x8001);
}

TEST(NumericsRrnMaxMin, L1bmReductionRoundsOnceToHalf) {
  // The max is 1 + 2^-10, which rounds (tie, even) to 1.0 in half.
  const uint32_t values[] = {0x3f800000, 0x3f802000, 0xc0000000};
  EXPECT_EQ(rrnMaxSingleToHalf(values, 3), 0x3e00);
  // The min is -2.0: half 0xc000 (exponent 32, sign).
  EXPECT_EQ(rrnMinSingleToHalf(values, 3), 0xc000);
  const uint32_t tie[] = {0x3f806000};
  EXPECT_EQ(rrnMaxSingleToHalf(tie, 1), 0x3e02); // 1 + 3*2^-10 -> mantissa 2
}

TEST(NumericsAluMaxMin, BothZeroReturnsX) {
  // Both zero: x wins whatever the signs (manual 3, ALU max/min), unlike
  // the RRN where +0 > -0.
  auto max = aluMax<Single>(0x80000000, 0x00000000);
  EXPECT_EQ(max.Result, 0x80000000u);
  EXPECT_TRUE(max.Flag);
  auto min = aluMin<Single>(0x00000000, 0x80000000);
  EXPECT_EQ(min.Result, 0x00000000u);
  EXPECT_TRUE(min.Flag);
}

TEST(NumericsAluMaxMin, InfinitiesCompareByMantissa) {
  // Same-sign infinities compare their mantissas.
  auto max = aluMax<Single>(0x7f800001, 0x7f800002);
  EXPECT_EQ(max.Result, 0x7f800002u);
  EXPECT_FALSE(max.Flag);
  // For negative infinities the larger mantissa is the smaller value.
  auto min = aluMin<Single>(0xff800000, 0xff800001);
  EXPECT_EQ(min.Result, 0xff800001u);
  EXPECT_FALSE(min.Flag);
}

TEST(NumericsAluMaxMin, FlagIsXChosenOrEqual) {
  auto yWins = aluMax<Single>(0x3f800000, 0x40000000); // max(1, 2)
  EXPECT_EQ(yWins.Result, 0x40000000u);
  EXPECT_FALSE(yWins.Flag);
  auto xWins = aluMax<Single>(0x40000000, 0x3f800000);
  EXPECT_EQ(xWins.Result, 0x40000000u);
  EXPECT_TRUE(xWins.Flag);
  auto equal = aluMin<Half>(0x3e00, 0x3e00);
  EXPECT_EQ(equal.Result, 0x3e00);
  EXPECT_TRUE(equal.Flag);
  auto negative = aluMin<Double>(0xbff0000000000000ull, 0x0ull); // min(-1,0)
  EXPECT_EQ(negative.Result, 0xbff0000000000000ull);
  EXPECT_TRUE(negative.Flag);
}

} // namespace
