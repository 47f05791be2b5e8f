//===- NumericsBlockFloatTest.cpp - bfn / bfe block-float conversion ------===//
//
// Block-float conversion as chapter 4 of the MN-Core 2 Software Development
// Manual describes it (MNCore2.md 9.6). A block-float element with exponent
// field E and mantissa field M means M * 2^(E - bias - (ManBits - 1)): the
// mantissa carries an explicit leading bit, so M = 0 is zero. Expected
// values below are computed by hand from that and the conversion steps.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Numerics.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <vector>

using namespace mncc::emu;

namespace {

std::vector<uint32_t> singleBlock(std::vector<uint32_t> in) {
  std::vector<uint32_t> out(in.size());
  toBlockFloatSingle(in.data(), out.data(), unsigned(in.size()));
  return out;
}

std::vector<uint16_t> halfBlock(std::vector<uint16_t> in,
                                unsigned mantissaBits = 9,
                                bool extended = false) {
  std::vector<uint16_t> out(in.size());
  toBlockFloatHalf(in.data(), out.data(), unsigned(in.size()), mantissaBits,
                   extended);
  return out;
}

using Singles = std::vector<uint32_t>;
using Halves = std::vector<uint16_t>;

TEST(NumericsBlockFloat, SingleSharesTheLargestExponent) {
  // 1.0, 0.5, 0.75, -2.0: largest exponent 128 (2.0), so M * 2^-21.
  //   -2.0 -> M 2^22   -> 0xc0000000 | 0x400000
  //    1.0 -> M 2^21   -> 0x40000000 | 0x200000
  //    0.5 -> M 2^20   -> 0x40100000
  //   0.75 -> M 3*2^19 -> 0x40180000
  EXPECT_EQ(singleBlock({0x3f800000, 0x3f000000, 0x3f400000, 0xc0000000}),
            (Singles{0x40200000, 0x40100000, 0x40180000, 0xc0400000}));
}

TEST(NumericsBlockFloat, SingleRoundsToNearestEven) {
  // Next to 2.0 a value near 1 is shifted by 2: (2^23 + k) / 4.
  // k = 1: 2^21 + 0.25 -> 2^21;   k = 3: 2^21 + 0.75 -> 2^21 + 1;
  // k = 2: a tie -> even 2^21;    k = 6: 2^21 + 1.5, a tie -> 2^21 + 2.
  EXPECT_EQ(singleBlock({0x40000000, 0x3f800001, 0x3f800003, 0x3f800002}),
            (Singles{0x40400000, 0x40200000, 0x40200001, 0x40200000}));
  EXPECT_EQ(singleBlock({0x40000000, 0x3f800006}),
            (Singles{0x40400000, 0x40200002}));
}

TEST(NumericsBlockFloat, AllOnesMantissaRaisesTheBlockExponent) {
  // 2 - 2^-23 has the largest exponent (127) and an all-ones mantissa: the
  // block exponent becomes 128. Its significand 2^24 - 1 shifted by 2 is
  // 2^22 - 0.25 -> 2^22 (= 2.0 at M * 2^-21); 1.0 -> 2^21.
  // Without the rule the shift by 1 would round up to 2^23, which does not
  // fit the 23-bit mantissa.
  EXPECT_EQ(singleBlock({0x3fffffff, 0x3f800000}),
            (Singles{0x40400000, 0x40200000}));
}

TEST(NumericsBlockFloat, ZeroElements) {
  // A zero input keeps its sign and gets the block exponent and M = 0.
  // 1.0 -> M 2^22 at exponent 127: 0x3fc00000; 0.5 -> 0x3fa00000.
  EXPECT_EQ(singleBlock({0x3f800000, 0x00000000, 0x80001234, 0x3f000000}),
            (Singles{0x3fc00000, 0x3f800000, 0xbf800000, 0x3fa00000}));
  // All inputs zero: sign, exponent 0, mantissa 0.
  EXPECT_EQ(singleBlock({0x80000000, 0x00000005}),
            (Singles{0x80000000, 0x00000000}));
  // An element rounded to 0 keeps sign and block exponent: -1.0 next to
  // 2^30 is shifted by 31 and vanishes: 0xce800000 (exponent 157).
  EXPECT_EQ(singleBlock({0x4e800000, 0xbf800000}),
            (Singles{0x4ec00000, 0xce800000}));
}

TEST(NumericsBlockFloat, InfiniteBlockExponent) {
  // An infinite input makes every output an infinity of its own sign.
  EXPECT_EQ(singleBlock({0x7f800000, 0xbf800000}),
            (Singles{0x7f800000, 0xff800000}));
  // The largest finite single has an all-ones mantissa: the block exponent
  // 254 + 1 is infinite too.
  EXPECT_EQ(singleBlock({0x7f7fffff, 0x3f800000}),
            (Singles{0x7f800000, 0x7f800000}));
}

TEST(NumericsBlockFloat, DoubleAndPseudoSingle) {
  // dbfn: 1.0 and 0.5 at exponent 1023 -> M 2^51 and 2^50.
  const uint64_t in[] = {0x3ff0000000000000ull, 0x3fe0000000000000ull};
  uint64_t out[2];
  toBlockFloatDouble(in, out, 2);
  EXPECT_EQ(out[0], 0x3ff8000000000000ull);
  EXPECT_EQ(out[1], 0x3ff4000000000000ull);
  // gbfn rounds at the full single mantissa (a decision); 1 + 3 * 2^-23
  // next to 2.0 gives M 2^21 + 1, low bits the MAU then ignores.
  const uint32_t pseudoIn[] = {0x40000000, 0x3f800003};
  uint32_t pseudoOut[2];
  toBlockFloatPseudoSingle(pseudoIn, pseudoOut, 2);
  EXPECT_EQ(pseudoOut[0], 0x40400000u);
  EXPECT_EQ(pseudoOut[1], 0x40200001u);
}

TEST(NumericsBlockFloat, HalfFullMantissa) {
  // Half block floats at exponent 31 mean M * 2^-8: 1.0 -> M 256 (0x3f00),
  // 0.5 -> M 128 (0x3e80).
  EXPECT_EQ(halfBlock({0x3e00, 0x3c00}), (Halves{0x3f00, 0x3e80}));
}

TEST(NumericsBlockFloat, HalfShortMantissa) {
  // Six mantissa bits: b = 3, block exponent 31 + 3 = 34 (34 << 9 =
  // 0x4400), elements shifted by 3 + 1 + gap.
  //   1.0            (S 512) -> 32             -> 0x4420
  //   1.5  (0x3f00)  (S 768) -> 48             -> 0x4430
  //   1 + 7*2^-9  (S 519) -> 32.44 -> 32       -> 0x4420
  //   1 + 8*2^-9  (S 520) -> 32.5, tie -> 32   -> 0x4420
  //   1 + 24*2^-9 (S 536) -> 33.5, tie -> 34   -> 0x4422
  EXPECT_EQ(halfBlock({0x3e00, 0x3f00, 0x3e07, 0x3e08, 0x3e18}, 6),
            (Halves{0x4420, 0x4430, 0x4420, 0x4420, 0x4422}));
  // 1 + 504 * 2^-9 (S 1016) rounds to 64 at six bits, a carry: the block
  // exponent becomes 35 and the element 1016 / 32 -> 32 (= 2.0): 0x4620.
  EXPECT_EQ(halfBlock({0x3ff8}, 6), (Halves{0x4620}));
}

TEST(NumericsBlockFloat, HalfExtendedRepresentation) {
  // Block exponent 31 (1.0). Extended elements (exponent field 0) mean
  // M * 2^(31 - 6 - 31 - 8) = M * 2^-14.
  //   1.0   gap 0          -> M 256 at 31        -> 0x3f00
  //   2^-6  gap 6: flagged -> 512 >> 1 = 256     -> 0x0100
  //   2^-10 gap 10         -> 512 >> 5 = 16      -> 0x0010
  //   2^-20 gap 20         -> rounds to 0        -> 0x0000
  //   -0                                         -> 0x8000
  EXPECT_EQ(halfBlock({0x3e00, 0x3200, 0x2a00, 0x1600, 0x8000}, 9, true),
            (Halves{0x3f00, 0x0100, 0x0010, 0x0000, 0x8000}));
  // Without the extension the small ones lose their bits: 2^-6 -> M 4,
  // 2^-10 -> 0.25 -> 0, 2^-20 -> 0, both at the block exponent.
  EXPECT_EQ(halfBlock({0x3e00, 0x3200, 0x2a00, 0x1600}),
            (Halves{0x3f00, 0x3e04, 0x3e00, 0x3e00}));
}

TEST(NumericsBlockFloat, HalfExtendedAllOnesAtTheThresholdStaysNormal) {
  // (2 - 2^-9) * 2^-6 (exponent 25, mantissa all ones: 0x33ff) has gap 6
  // and an all-ones mantissa: extending would round 1023 / 2 up to 512,
  // out of 9 bits, so it is not flagged and takes the block exponent:
  // 1023 >> 7 -> 7.99 -> 8: 0x3e08 (8 * 2^-8 = 2^-5).
  EXPECT_EQ(halfBlock({0x3e00, 0x33ff}, 9, true), (Halves{0x3f00, 0x3e08}));
  // One ULP lower (mantissa 510) extends normally: 1022 / 2 = 511: 0x01ff.
  EXPECT_EQ(halfBlock({0x3e00, 0x33fe}, 9, true), (Halves{0x3f00, 0x01ff}));
}

TEST(NumericsBlockFloat, HalfBfeMovesSmallElementsToExtended) {
  // M 4 < 8 lost at least 6 leading bits: exponent 0, M << 6 = 256.
  EXPECT_EQ(halfBlockFloatToExtended(0x3e04), 0x0100);
  EXPECT_EQ(halfBlockFloatToExtended(0xbe04), 0x8100);
  // M 8 keeps its place; a zero element becomes all zero but its sign.
  EXPECT_EQ(halfBlockFloatToExtended(0x3e08), 0x3e08);
  EXPECT_EQ(halfBlockFloatToExtended(0x3e00), 0x0000);
  EXPECT_EQ(halfBlockFloatToExtended(0xbe00), 0x8000);
}

TEST(NumericsBlockFloat, ConvertedBlocksFeedTheMau) {
  // hbfn then hmmul against an all-ones vector sums the block: 1.0 + 0.5 +
  // 2^-6 + 2^-10. With the extended representation the small terms survive
  // (M 256 and 16 at 2^-14: 2^-6 + 2^-10 exactly); the total 1.5 + 2^-6 +
  // 2^-10 is single 0x3fc22000 (mantissa 2^22 + 2^17 + 2^13).
  Halves extended = halfBlock({0x3e00, 0x3c00, 0x3200, 0x2a00}, 9, true);
  Halves ones = halfBlock({0x3e00, 0x3e00, 0x3e00, 0x3e00});
  EXPECT_EQ(mauMatVecHalf(extended.data(), ones.data(), 4, 0), 0x3fc22000u);
  // Without it 2^-10 is lost and 2^-6 survives: 0x3fc20000.
  Halves plain = halfBlock({0x3e00, 0x3c00, 0x3200, 0x2a00});
  EXPECT_EQ(mauMatVecHalf(plain.data(), ones.data(), 4, 0), 0x3fc20000u);
}

/// Restores the 512-bit paths however a test that turns them off ends.
struct WidePathsRestored {
  ~WidePathsRestored() { allowWideMatVec(true); }
};

/// A random half whose exponent is drawn from a few near the block's top,
/// zero, or (rarely) the infinite field, and whose mantissa is often all
/// ones or all zeros: the cases where the block exponent steps up, turns
/// infinite or an element rounds away or to a tie.
uint16_t edgyHalf(uint64_t &state, unsigned topExp) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  uint32_t r = uint32_t(state >> 33);
  uint32_t sign = r & 1;
  uint32_t exp;
  switch (r >> 1 & 7) {
  case 0:
    exp = 0;
    break;
  case 1:
    exp = (r >> 4 & 15) == 0 ? Half::MaxExp : topExp;
    break;
  case 2:
  case 3:
    exp = topExp;
    break;
  default:
    exp = topExp > (r >> 4 & 15) ? topExp - (r >> 4 & 15) : 1;
    break;
  }
  uint32_t mantissa = r >> 8 & Half::ManMask;
  if ((r >> 20 & 3) == 0)
    mantissa = Half::ManMask;
  else if ((r >> 20 & 3) == 1)
    mantissa = (r >> 22 & 1) ? 0 : Half::ManMask - 1;
  return Half::pack(sign, exp, uint16_t(mantissa));
}

TEST(NumericsBlockFloat, HalfLongWordsMatchTheElementPath) {
  // The executor's hbfn over whole boards against toBlockFloatHalf per
  // block, on the narrow path and (where the CPU has it) the 512-bit one.
  constexpr unsigned Blocks = 4096;
  std::vector<uint64_t> in(4 * Blocks);
  uint64_t state = 12345;
  for (unsigned b = 0; b < Blocks; ++b) {
    // Tops 1, 2, 61, 62, 63 and others: the block exponent's extremes.
    unsigned top = b % 8 == 0   ? 62
                   : b % 8 == 1 ? 61
                   : b % 8 == 2 ? 1
                   : b % 8 == 3 ? 63
                                : 2 + b % 59;
    for (unsigned k = 0; k < 4; ++k) {
      uint64_t word = 0;
      for (unsigned j = 0; j < 4; ++j) {
        uint16_t element = edgyHalf(state, top);
        // Some blocks whose exponents are all 0 (signs and mantissas,
        // all-ones ones too, but no block exponent to carry into).
        if (b % 89 == 7)
          element &= uint16_t(Half::SignMask | Half::ManMask);
        word = word << 16 | element;
      }
      in[4 * b + k] = b % 97 == 5 ? 0 : word; // some all-zero blocks
    }
  }
  std::vector<uint64_t> expected(in.size());
  for (unsigned b = 0; b < Blocks; ++b) {
    uint16_t elements[16], converted[16];
    for (unsigned k = 0; k < 4; ++k)
      for (unsigned j = 0; j < 4; ++j)
        elements[4 * k + j] = uint16_t(in[4 * b + k] >> (48 - 16 * j));
    toBlockFloatHalf(elements, converted, 16);
    for (unsigned k = 0; k < 4; ++k) {
      uint64_t word = 0;
      for (unsigned j = 0; j < 4; ++j)
        word = word << 16 | converted[4 * k + j];
      expected[4 * b + k] = word;
    }
  }
  unsigned stepped = 0, infinite = 0;
  for (unsigned b = 0; b < Blocks; ++b) {
    uint32_t exp = Half::exponent(uint16_t(expected[4 * b] >> 48));
    unsigned top = 0;
    for (unsigned k = 0; k < 4; ++k)
      for (unsigned j = 0; j < 4; ++j)
        top = std::max<unsigned>(
            top, Half::exponent(uint16_t(in[4 * b + k] >> (48 - 16 * j))));
    stepped += top != 0 && exp == top + 1 && exp != Half::MaxExp;
    infinite += exp == Half::MaxExp;
  }
  // The input reaches the cases it is meant to.
  EXPECT_GT(stepped, 100u);
  EXPECT_GT(infinite, 100u);

  WidePathsRestored restored;
  for (bool wide : {false, true}) {
    if (!allowWideMatVec(wide) && wide)
      continue;
    std::vector<uint64_t> out(in.size(), 0x5a5a5a5a5a5a5a5aull);
    toBlockFloatHalfLongWords(in.data(), out.data(), Blocks);
    for (unsigned i = 0; i < in.size(); ++i)
      ASSERT_EQ(out[i], expected[i])
          << "long word " << i << " wide " << wide << " in " << std::hex
          << in[i - i % 4] << ' ' << in[i - i % 4 + 1] << ' '
          << in[i - i % 4 + 2] << ' ' << in[i - i % 4 + 3];
    // In place, as the executor may call it.
    std::vector<uint64_t> inPlace = in;
    toBlockFloatHalfLongWords(inPlace.data(), inPlace.data(), Blocks);
    EXPECT_EQ(inPlace, expected) << "wide " << wide;
    // An odd count (the 512-bit path takes blocks in pairs): the last
    // block converted, the one after it untouched.
    std::vector<uint64_t> odd(in.size(), 0x5a5a5a5a5a5a5a5aull);
    toBlockFloatHalfLongWords(in.data(), odd.data(), 3);
    for (unsigned i = 0; i < 16; ++i)
      EXPECT_EQ(odd[i], i < 12 ? expected[i] : 0x5a5a5a5a5a5a5a5aull)
          << "long word " << i << " wide " << wide;
  }
}

} // namespace
