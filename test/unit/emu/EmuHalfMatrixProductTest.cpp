//===- EmuHalfMatrixProductTest.cpp - hmfma / hmmul on the whole board ----===//
//
// The half matrix products run through several paths on the machine: the
// fused 512-bit product, the general 512-bit or 128-bit one, or the
// per-element functions when an element is extended or infinite. Both
// vector widths must give the same bits for every PE, on finite data and
// on data laced with special values.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Machine.h"
#include "mncc/emu/Numerics.h"
#include "mncc/emu/Simulator.h"

#include "gtest/gtest.h"

#include <random>
#include <vector>

using namespace mncc::emu;

namespace {

// Matrix x from long words 0-7 of LM0 of every PE, then y = x b + c and
// y = x b with b at LM0 long words 8-11 and c at LM1 long words 0-7
// ("v" steps through the four cycles; each memory is read at one address a
// step, manual 3.6.4); the results go to GRF0 and GRF1 long words 0-7.
const char *kProgram = "hmwrite $llm0v $llx0\n"
                       "hmwrite $llm0v $llx8\n"
                       "hmfma $lx $lm16v $lln0v $llr0v\n"
                       "hmmul $lx $lm16v $lls0v\n";
constexpr unsigned kMatrixLongWords = 12, kAddendLongWords = 8,
                   kOutputLongWords = 8;

/// Restores the 512-bit paths however the test ends.
struct PathsRestored {
  ~PathsRestored() { allowWideMatVec(true); }
};

/// Random halves: finite at a few exponents, or (`special`) with an
/// occasional infinity or extended element (exponent field 0, mantissa
/// not 0), which send a MAB down the general or per-element path.
uint64_t randomHalves(std::mt19937_64 &random, bool special) {
  uint64_t word = 0;
  for (unsigned i = 0; i < 4; ++i) {
    uint32_t exponent = 20 + unsigned(random() % 8);
    uint16_t mantissa = uint16_t(random() & Half::ManMask);
    if (special && random() % 64 == 0)
      exponent = random() % 2 ? Half::MaxExp : 0;
    word = word << 16 | Half::pack(random() & 1, exponent, mantissa);
  }
  return word;
}

/// Two random singles in a long word, an infinity now and then if special.
uint64_t randomSingles(std::mt19937_64 &random, bool special) {
  uint64_t word = 0;
  for (unsigned i = 0; i < 2; ++i) {
    uint32_t exponent = 100 + unsigned(random() % 40);
    if (special && random() % 64 == 0)
      exponent = Single::MaxExp;
    word = word << 32 | Single::pack(random() & 1, exponent,
                                     uint32_t(random() & Single::ManMask));
  }
  return word;
}

/// GRF0 and GRF1 long words 0-7 of every PE after the program, on the
/// given LM0 and LM1 data.
std::vector<uint64_t> run(const std::vector<uint64_t> &lm0,
                          const std::vector<uint64_t> &lm1) {
  Simulator sim;
  std::string error;
  EXPECT_TRUE(sim.load(kProgram, "products.vsm", error)) << error;
  EXPECT_TRUE(sim.write({Space::LM0, AllInstances, 0, kMatrixLongWords},
                        lm0.data(), error))
      << error;
  EXPECT_TRUE(sim.write({Space::LM1, AllInstances, 0, kAddendLongWords},
                        lm1.data(), error))
      << error;
  EXPECT_TRUE(sim.run(error)) << error;
  std::vector<uint64_t> out(size_t(NumPes) * kOutputLongWords * 2);
  EXPECT_TRUE(sim.read({Space::GRF0, AllInstances, 0, kOutputLongWords},
                       out.data(), error))
      << error;
  EXPECT_TRUE(sim.read({Space::GRF1, AllInstances, 0, kOutputLongWords},
                       out.data() + size_t(NumPes) * kOutputLongWords, error))
      << error;
  return out;
}

TEST(EmuHalfMatrixProduct, EveryPathGivesTheSameBits) {
  PathsRestored restored;
  for (bool special : {false, true}) {
    std::mt19937_64 random(special ? 11 : 10);
    std::vector<uint64_t> lm0(size_t(NumPes) * kMatrixLongWords, 0);
    std::vector<uint64_t> lm1(size_t(NumPes) * kAddendLongWords, 0);
    for (unsigned pe = 0; pe < NumPes; ++pe) {
      for (unsigned k = 0; k < kMatrixLongWords; ++k) // the matrix, then b
        lm0[size_t(pe) * kMatrixLongWords + k] = randomHalves(random, special);
      for (unsigned k = 0; k < kAddendLongWords; ++k)
        lm1[size_t(pe) * kAddendLongWords + k] = randomSingles(random, special);
    }
    std::vector<uint64_t> first;
    for (bool wide : {true, false}) {
      allowWideMatVec(wide);
      std::vector<uint64_t> out = run(lm0, lm1);
      if (first.empty()) {
        first = out;
        // Not a vacuous comparison: the products wrote something.
        size_t nonZero = 0;
        for (uint64_t word : out)
          nonZero += word != 0;
        EXPECT_GT(nonZero, out.size() / 2);
        continue;
      }
      for (size_t i = 0; i < out.size(); ++i)
        ASSERT_EQ(out[i], first[i])
            << "special " << special << " wide " << wide << " long word "
            << i % kOutputLongWords << " of "
            << (i < size_t(NumPes) * kOutputLongWords ? "GRF0" : "GRF1")
            << " of pe " << i / kOutputLongWords % NumPes;
    }
  }
}

} // namespace
