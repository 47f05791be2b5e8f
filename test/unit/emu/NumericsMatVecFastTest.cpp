//===- NumericsMatVecFastTest.cpp - decoded MAU matrix-vector path --------===//
//
// The emulator runs hmfma / hmmul and gmfma / gmmul on operands decoded
// once into integers (mauMatVecHalfMatrix, mauMatVecPseudoSingleRows). These
// tests hold that path to the straightforward per-element functions
// (mauMatVecHalf, mauMatVecPseudoSingle) bit for bit, on random blocks that
// mix ordinary block floats with every special pattern: zeros of both
// signs, exponent field 0 with a mantissa (extended halves, zeros for the
// other formats), infinities with any mantissa, the largest and smallest
// exponents, and addends that are IEEE denormals or NaNs, that cancel the
// products, overflow, or sit on rounding ties. dm* and fm* call the
// per-element functions directly and need no such check.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Machine.h"
#include "mncc/emu/Numerics.h"
#include "mncc/emu/Parser.h"

#include "gtest/gtest.h"

#include <cstring>

#include <memory>
#include <random>
#include <string>

using namespace mncc::emu;

namespace {

using Random = std::mt19937_64;

unsigned below(Random &random, unsigned n) { return unsigned(random() % n); }

/// A random half block of 16: mostly elements near a shared block exponent
/// (what hbfn produces), with special patterns mixed in.
void randomHalfBlock(Random &random, uint16_t *block) {
  uint32_t blockExp = 1 + below(random, Half::MaxExp - 1);
  unsigned specialOdds = 1 + below(random, 8); // 1 in specialOdds special
  for (unsigned i = 0; i < HalfBlockSize; ++i) {
    bool negative = random() & 1;
    uint32_t exp = blockExp;
    uint16_t mantissa = uint16_t(random() & Half::ManMask);
    if (below(random, specialOdds) == 0) {
      switch (below(random, 7)) {
      case 0: // zero
        exp = 0;
        mantissa = 0;
        break;
      case 1: // extended: exponent 0, mantissa not 0
        exp = 0;
        mantissa = uint16_t(1 + below(random, Half::ManMask));
        break;
      case 2: // infinity, with whatever mantissa
        exp = Half::MaxExp;
        break;
      case 3:
        exp = Half::MaxExp - 1;
        mantissa = Half::ManMask;
        break;
      case 4:
        exp = 1;
        break;
      case 5: // any exponent, read at the block exponent anyway
        exp = below(random, Half::MaxExp + 1);
        break;
      default: // a small element of the block
        mantissa = uint16_t(below(random, 8));
        break;
      }
    } else if (blockExp > 1 && (random() & 1)) {
      exp = blockExp - below(random, 3);
    }
    block[i] = Half::pack(negative, exp, mantissa);
  }
}

/// A random pseudo-single block of 8, built the same way.
void randomPseudoSingleBlock(Random &random, uint32_t *block) {
  uint32_t blockExp = 1 + below(random, Single::MaxExp - 1);
  unsigned specialOdds = 1 + below(random, 8);
  for (unsigned i = 0; i < PseudoSingleBlockSize; ++i) {
    bool negative = random() & 1;
    uint32_t exp = blockExp;
    uint32_t mantissa = uint32_t(random() & Single::ManMask);
    if (below(random, specialOdds) == 0) {
      switch (below(random, 7)) {
      case 0:
        exp = 0;
        mantissa = 0;
        break;
      case 1: // exponent 0 with a mantissa: zero for this format
        exp = 0;
        break;
      case 2:
        exp = Single::MaxExp;
        break;
      case 3:
        exp = Single::MaxExp - 1;
        mantissa = Single::ManMask;
        break;
      case 4:
        exp = 1;
        break;
      case 5:
        exp = below(random, Single::MaxExp + 1);
        break;
      default: // only ignored low bits, or almost
        mantissa = uint32_t(below(random, 64));
        break;
      }
    } else if (blockExp > 1 && (random() & 1)) {
      exp = blockExp - below(random, 3);
    }
    block[i] = Single::pack(negative, exp, mantissa);
  }
}

/// A random addend for an output whose products alone give `products`:
/// ordinary values over the whole range and every special pattern, plus
/// values that cancel the products, or put the sum on a rounding tie at
/// half precision.
uint32_t randomAddend(Random &random, uint32_t products) {
  bool negative = random() & 1;
  uint32_t mantissa = uint32_t(random() & Single::ManMask);
  switch (below(random, 12)) {
  case 0:
    return Single::pack(negative, 0, 0);
  case 1: // an IEEE denormal: zero for MN-Core
    return Single::pack(negative, 0, mantissa | 1);
  case 2: // infinity, or an IEEE NaN: infinity for MN-Core
    return Single::pack(negative, Single::MaxExp, mantissa);
  case 3:
    return Single::pack(negative, Single::MaxExp - 1, Single::ManMask);
  case 4:
    return Single::pack(negative, 1, mantissa);
  case 5: // cancels the products, or nearly
    return (products ^ Single::SignMask) + uint32_t(below(random, 3)) - 1;
  case 6: // the products' size, so the sum rounds in the middle
    return Single::pack(negative, Single::exponent(products), mantissa);
  case 7: // a tie at half precision (14 dropped bits: 10 0000 0000 0000)
    return Single::pack(negative, Single::exponent(products),
                        (mantissa & ~uint32_t(0x3fff)) | 0x2000);
  default:
    return Single::pack(negative, 1 + below(random, Single::MaxExp - 1),
                        mantissa);
  }
}

/// Restores the 512-bit paths however a test that turns them off ends.
struct WidePathsRestored {
  ~WidePathsRestored() { allowWideMatVec(true); }
};

TEST(NumericsMatVecFast, HalfMatrixMatchesPerElementPath) {
  Random random(20261129);
  unsigned infiniteVectorsOnFiniteMatrices = 0;
  for (unsigned trial = 0; trial < 3000; ++trial) {
    uint16_t elements[16 * HalfBlockSize], vectorBits[HalfBlockSize];
    for (unsigned r = 0; r < 16; ++r)
      randomHalfBlock(random, elements + r * HalfBlockSize);
    randomHalfBlock(random, vectorBits);
    // Some blocks as hbfn really produces them, with and without the
    // extended representation.
    if (trial % 4 == 1) {
      toBlockFloatHalf(vectorBits, vectorBits, HalfBlockSize, 9,
                       trial % 8 == 1);
      for (unsigned r = 0; r < 16; ++r)
        toBlockFloatHalf(elements + r * HalfBlockSize,
                         elements + r * HalfBlockSize, HalfBlockSize, 9,
                         r % 2 == 0);
    }
    // hbfn blocks without the extended representation and a vector with
    // infinities, as a product reaching into random memory sees: rows
    // whose element there is zero (either way) and rows whose is not.
    if (trial % 4 == 3) {
      auto finiteBlock = [&](uint16_t *block) {
        uint32_t blockExp = 1 + below(random, Half::MaxExp - 2);
        for (unsigned i = 0; i < HalfBlockSize; ++i)
          block[i] = below(random, 10) == 0
                         ? Half::pack(random() & 1, 0, 0)
                         : Half::pack(random() & 1, blockExp,
                                      uint16_t(random() & Half::ManMask));
      };
      finiteBlock(vectorBits);
      for (unsigned r = 0; r < 16; ++r)
        finiteBlock(elements + r * HalfBlockSize);
      for (unsigned k = 0, n = 1 + below(random, 3); k < n; ++k) {
        unsigned i = below(random, HalfBlockSize);
        vectorBits[i] = Half::pack(random() & 1, Half::MaxExp,
                                   uint16_t(random() & Half::ManMask));
        for (unsigned r = 0; r < 16; ++r)
          if (below(random, 3) == 0)
            elements[r * HalfBlockSize + i] = Half::pack(
                random() & 1, random() & 1 ? 0 : 1 + below(random, 60), 0);
      }
    }
    uint64_t words[16 * 4];
    for (unsigned i = 0; i < 16 * HalfBlockSize; i += 4)
      words[i / 4] = uint64_t(elements[i]) << 48 |
                     uint64_t(elements[i + 1]) << 32 |
                     uint64_t(elements[i + 2]) << 16 | elements[i + 3];
    DecodedHalfMatrix matrix;
    decodeHalfMatrix(words, matrix);
    DecodedHalfBlock vector;
    decodeHalfBlock(vectorBits, vector);
    infiniteVectorsOnFiniteMatrices +=
        vector.NeedsExactPath && !vector.ExtendedMask &&
        !matrix.Products.ExactRows && !matrix.Products.ExtendedRows;

    uint32_t c[16];
    for (unsigned r = 0; r < 16; ++r)
      c[r] = randomAddend(random, mauMatVecHalf(elements + r * HalfBlockSize,
                                                vectorBits, 16, 0));
    // The 128-bit path always, the 512-bit one where the CPU has it.
    WidePathsRestored restored;
    for (bool wide : {false, true}) {
      if (!allowWideMatVec(wide) && wide)
        continue;
      for (bool reduce : {false, true}) {
        uint32_t y[16];
        mauMatVecHalfMatrix(matrix, vector, c, y, reduce);
        for (unsigned r = 0; r < 16; ++r) {
          uint32_t expected = mauMatVecHalf(elements + r * HalfBlockSize,
                                            vectorBits, 16, c[r], reduce);
          ASSERT_EQ(y[r], expected)
              << "trial " << trial << " row " << r << " reduce " << reduce
              << " wide " << wide << " c 0x" << std::hex << c[r];
        }
      }
    }
  }
  EXPECT_GT(infiniteVectorsOnFiniteMatrices, 300u);
}

TEST(NumericsMatVecFast, HalfDecodingsAgree) {
  Random random(7);
  for (unsigned trial = 0; trial < 1000; ++trial) {
    uint16_t elements[HalfBlockSize];
    randomHalfBlock(random, elements);
    uint64_t words[4];
    for (unsigned k = 0; k < 4; ++k)
      words[k] = uint64_t(elements[4 * k]) << 48 |
                 uint64_t(elements[4 * k + 1]) << 32 |
                 uint64_t(elements[4 * k + 2]) << 16 | elements[4 * k + 3];
    DecodedHalfBlock fromHalves, fromWords;
    decodeHalfBlock(elements, fromHalves);
    decodeHalfBlockOfLongWords(words, fromWords);
    uint32_t maxExp = 0, extended = 0;
    bool infinite = false;
    for (unsigned i = 0; i < HalfBlockSize; ++i) {
      uint32_t exp = Half::exponent(elements[i]);
      int mantissa = int(Half::mantissa(elements[i]));
      int significand = Half::sign(elements[i]) ? -mantissa : mantissa;
      maxExp = exp > maxExp ? exp : maxExp;
      infinite |= exp == Half::MaxExp;
      bool isExtended = exp == 0 && mantissa != 0;
      extended |= uint32_t(isExtended) << i;
      for (const DecodedHalfBlock *d : {&fromHalves, &fromWords}) {
        EXPECT_EQ(d->Bits[i], elements[i]);
        EXPECT_EQ(d->Significand[i], significand);
        EXPECT_EQ(d->NormalSignificand[i], isExtended ? 0 : significand);
      }
    }
    for (const DecodedHalfBlock *d : {&fromHalves, &fromWords}) {
      EXPECT_EQ(d->BlockExponent, int32_t(maxExp));
      EXPECT_EQ(d->ExtendedMask, extended);
      EXPECT_EQ(d->NeedsExactPath, infinite);
    }
  }
}

TEST(NumericsMatVecFast, HalfMatrixProductsDecodeAsWithTheRows) {
  // decodeHalfMatrixProducts (two rows a vector on AVX-512) against the
  // products decodeHalfMatrix makes row by row, on special-laden matrices
  // (infinite, extended, zero elements) and on hbfn-made ones, on both
  // paths.
  WidePathsRestored restored;
  Random random(99);
  unsigned extendedSeen = 0, exactSeen = 0;
  for (unsigned trial = 0; trial < 1000; ++trial) {
    uint16_t elements[16 * HalfBlockSize];
    for (unsigned r = 0; r < 16; ++r) {
      uint16_t *row = elements + r * HalfBlockSize;
      randomHalfBlock(random, row);
      if (trial % 2 == 0) // finite, one exponent per row, some zeros
        for (unsigned i = 0; i < HalfBlockSize; ++i)
          row[i] = below(random, 8) == 0
                       ? Half::pack(random() & 1, 0, 0)
                       : Half::pack(Half::sign(row[i]), 1 + r + trial % 40,
                                    Half::mantissa(row[i]));
    }
    uint64_t words[16 * 4];
    for (unsigned k = 0; k < 16 * 4; ++k)
      words[k] = uint64_t(elements[4 * k]) << 48 |
                 uint64_t(elements[4 * k + 1]) << 32 |
                 uint64_t(elements[4 * k + 2]) << 16 | elements[4 * k + 3];
    DecodedHalfMatrix expected;
    decodeHalfMatrix(words, expected);
    extendedSeen += expected.Products.ExtendedRows != 0;
    exactSeen += expected.Products.ExactRows != 0;
    for (bool wide : {false, true}) {
      if (!allowWideMatVec(wide) && wide)
        continue;
      HalfMatrixProducts products;
      std::memset(&products, 0x5a, sizeof products);
      decodeHalfMatrixProducts(words, products);
      ASSERT_EQ(std::memcmp(products.ColumnPairs, expected.Products.ColumnPairs,
                            sizeof products.ColumnPairs),
                0)
          << "trial " << trial << " wide " << wide;
      ASSERT_EQ(std::memcmp(products.RowWeights, expected.Products.RowWeights,
                            sizeof products.RowWeights),
                0)
          << "trial " << trial << " wide " << wide;
      EXPECT_EQ(products.ExtendedRows, expected.Products.ExtendedRows)
          << "trial " << trial << " wide " << wide;
      EXPECT_EQ(products.ExactRows, expected.Products.ExactRows)
          << "trial " << trial << " wide " << wide;
    }
  }
  EXPECT_GT(extendedSeen, 100u);
  EXPECT_GT(exactSeen, 100u);
}

TEST(NumericsMatVecFast, PseudoSingleRowsMatchPerElementPath) {
  Random random(11);
  for (unsigned trial = 0; trial < 4000; ++trial) {
    uint32_t rowBits[8][PseudoSingleBlockSize], vectorBits[8];
    DecodedPseudoSingleBlock rows[8], vector;
    for (unsigned r = 0; r < 8; ++r) {
      randomPseudoSingleBlock(random, rowBits[r]);
      if (trial % 4 == 1)
        toBlockFloatPseudoSingle(rowBits[r], rowBits[r], 8);
      decodePseudoSingleBlock(rowBits[r], rows[r]);
    }
    randomPseudoSingleBlock(random, vectorBits);
    if (trial % 4 == 1)
      toBlockFloatPseudoSingle(vectorBits, vectorBits, 8);
    decodePseudoSingleBlock(vectorBits, vector);
    uint32_t c[8];
    for (unsigned r = 0; r < 8; ++r)
      c[r] = randomAddend(random,
                          mauMatVecPseudoSingle(rowBits[r], vectorBits, 8, 0));
    for (bool reduce : {false, true}) {
      uint32_t y[8];
      mauMatVecPseudoSingleRows(rows, 8, vector, c, y, reduce);
      for (unsigned r = 0; r < 8; ++r)
        ASSERT_EQ(y[r], mauMatVecPseudoSingle(rowBits[r], vectorBits, 8, c[r],
                                              reduce))
            << "trial " << trial << " row " << r << " reduce " << reduce
            << " c 0x" << std::hex << c[r];
    }
  }
}

TEST(NumericsMatVecFast, TiesBeyondDoublePrecisionRoundByTheRest) {
  // Pseudo-single products summing to 2^35 + 1 units (2^17 * 2^17 twice
  // plus 1 * 1) against an addend whose half ulp is 2^35 units: the exact
  // sum lies just above a tie, 60 bits wide, so the host's double addition
  // rounds and only its error tells the tie from the value above it. With
  // 2^35 - 1 units it lies just below.
  constexpr uint32_t Exp = 127; // block exponent of every element
  auto element = [](bool negative, uint32_t significand) {
    return Single::pack(negative, Exp, significand << PseudoSingleIgnoredBits);
  };
  // One unit of the product sum is 2^(2 * (127 - 144)) = 2^-34, so the
  // addend's ulp must be 2^36 units = 2^2: an exponent field of 127 + 25.
  for (bool belowTie : {false, true}) {
    for (uint32_t addendMantissa : {0u, 1u, 2u, 0x7fffffu}) {
      for (bool negativeAddend : {false, true}) {
        uint32_t row[8] = {element(false, 1u << 17),
                           element(false, 1u << 17),
                           element(belowTie, 1),
                           0,
                           0,
                           0,
                           0,
                           0};
        uint32_t vec[8] = {element(false, 1u << 17),
                           element(false, 1u << 17),
                           element(false, 1),
                           0,
                           0,
                           0,
                           0,
                           0};
        uint32_t c = Single::pack(negativeAddend, Exp + 25, addendMantissa);
        DecodedPseudoSingleBlock rowBlock, vectorBlock;
        decodePseudoSingleBlock(row, rowBlock);
        decodePseudoSingleBlock(vec, vectorBlock);
        for (bool reduce : {false, true}) {
          uint32_t y;
          mauMatVecPseudoSingleRows(&rowBlock, 1, vectorBlock, &c, &y, reduce);
          EXPECT_EQ(y, mauMatVecPseudoSingle(row, vec, 8, c, reduce))
              << belowTie << " " << addendMantissa << " " << negativeAddend
              << " " << reduce;
        }
      }
    }
  }
  // The positive addend 2^25 (2^59 units, ulp 2^36 units) with 2^35 + 1
  // units added: just above the tie, so it rounds up.
  uint32_t row[8] = {element(false, 1u << 17),
                     element(false, 1u << 17),
                     element(false, 1),
                     0,
                     0,
                     0,
                     0,
                     0};
  uint32_t c = Single::pack(false, Exp + 25, 0);
  EXPECT_EQ(mauMatVecPseudoSingle(row, row, 8, c), c + 1);
}

/// The matrix instructions on the whole board against the per-element
/// functions, reading the operands back from the machine: the packing of
/// b, c and y over the four PEs, and the decoded register copies, which
/// must follow every write of a register and every change of precision.
class EmuMatrixFastPath : public ::testing::Test {
protected:
  EmuMatrixFastPath() : M(new Machine) {}

  void run(const std::string &text) {
    Program program;
    Diagnostic error;
    ASSERT_TRUE(parseProgram(text, "t.vsm", program, error)) << error.str();
    std::string dump;
    ASSERT_TRUE(M->run(program, dump, error)) << error.str();
  }

  /// The MABs checked: every 37th for half, every 53rd for pseudo-single.
  static bool checked(unsigned mab) { return mab % 37 == 0 || mab % 53 == 0; }

  /// Random half blocks in words [firstWord, firstWord + words) of GRF0
  /// (or GRF1) of the checked MABs' PEs (the others compute on zeros).
  void fillGrf(Random &random, uint32_t firstWord, uint32_t words,
               Space grf = Space::GRF0) {
    for (unsigned pe = 0; pe < NumPes; ++pe) {
      if (!checked(pe / PesPerMab))
        continue;
      for (uint32_t w = firstWord; w < firstWord + words; w += 2) {
        uint16_t block[HalfBlockSize];
        randomHalfBlock(random, block);
        M->writeLong(grf, pe, w,
                     uint64_t(block[0]) << 48 | uint64_t(block[1]) << 32 |
                         uint64_t(block[2]) << 16 | block[3]);
      }
    }
  }

  /// hmfma / hmmul of register `space` with b at GRF0 word bWord (long,
  /// one per cycle) and c at GRF1 word cWord (double long), result at GRF0
  /// word yWord.
  void checkHalf(Space space, uint32_t bWord, uint32_t cWord, uint32_t yWord,
                 bool withC) {
    for (unsigned mab = 0; mab < NumMabs; mab += 37) {
      unsigned pe0 = mab * PesPerMab;
      uint16_t rows[16][16];
      for (unsigned r = 0; r < 16; ++r)
        for (unsigned j = 0; j < 16; ++j)
          rows[r][j] = uint16_t(M->matrixElement(space, mab, r, j / 4) >>
                                (48 - 16 * (j % 4)));
      for (unsigned cycle = 0; cycle < 4; ++cycle) {
        uint16_t b[16];
        for (unsigned j = 0; j < 16; ++j)
          b[j] = uint16_t(
              M->readLong(Space::GRF0, pe0 + j / 4, bWord + 2 * cycle) >>
              (48 - 16 * (j % 4)));
        for (unsigned i = 0; i < 16; ++i) {
          unsigned pe = pe0 + i / 4, slot = i % 4;
          uint32_t cWordOf = cWord + 4 * cycle + slot / 2 * 2;
          uint32_t yWordOf = yWord + 4 * cycle + slot / 2 * 2;
          uint32_t c = withC ? uint32_t(M->readLong(Space::GRF1, pe, cWordOf) >>
                                        (32 - 32 * (slot % 2)))
                             : 0;
          uint32_t y = uint32_t(M->readLong(Space::GRF0, pe, yWordOf) >>
                                (32 - 32 * (slot % 2)));
          ASSERT_EQ(y, mauMatVecHalf(rows[i], b, 16, c))
              << "mab " << mab << " cycle " << cycle << " row " << i;
        }
      }
    }
  }

  std::unique_ptr<Machine> M;
};

TEST_F(EmuMatrixFastPath, HalfAndPseudoSingleMatchPerElementPath) {
  // Each memory is read at one address a step (manual 3.6.4): b from GRF0,
  // c from GRF1.
  Random random(3);
  fillGrf(random, 0, 128);
  fillGrf(random, 0, 128, Space::GRF1);
  run("hmwrite $llr0v $llx0\nhmwrite $llr16v $llx8\n"
      "hmfma $lx $lr32v $lls64v $llr80v\n");
  checkHalf(Space::MatX, 32, 64, 80, true);
  // New contents of the same register: the decoded copy must follow.
  fillGrf(random, 0, 32);
  run("hmwrite $llr0v $llx0\nhmwrite $llr16v $llx8\n"
      "hmmul $lx $lr40v $llr96v\n");
  checkHalf(Space::MatX, 40, 0, 96, false);
  // A register read and then written: the product uses the old contents,
  // the next one the new ones.
  fillGrf(random, 0, 32);
  run("hmfma $lx $lr32v $lls64v $llr80v\nhmwrite $llr0v $llx0\n");
  fillGrf(random, 0, 32);
  run("hmwrite $llr16v $llx8\nhmfma $lx $lr32v $lls64v $llr80v\n");
  checkHalf(Space::MatX, 32, 64, 80, true);

  // The same register read at pseudo-single precision: rows 0-7 of eight
  // singles, b two singles a PE, y and c two singles a PE.
  run("gmfma $lx $lr32v $ls48v $lr112v\n");
  for (unsigned mab = 0; mab < NumMabs; mab += 53) {
    unsigned pe0 = mab * PesPerMab;
    uint32_t rows[8][8];
    for (unsigned r = 0; r < 8; ++r)
      for (unsigned j = 0; j < 8; ++j)
        rows[r][j] = uint32_t(M->matrixElement(Space::MatX, mab, r, j / 2) >>
                              (32 - 32 * (j % 2)));
    for (unsigned cycle = 0; cycle < 4; ++cycle) {
      uint32_t b[8];
      for (unsigned j = 0; j < 8; ++j)
        b[j] = uint32_t(M->readLong(Space::GRF0, pe0 + j / 2, 32 + 2 * cycle) >>
                        (32 - 32 * (j % 2)));
      for (unsigned i = 0; i < 8; ++i) {
        unsigned pe = pe0 + i / 2;
        uint32_t c = uint32_t(M->readLong(Space::GRF1, pe, 48 + 2 * cycle) >>
                              (32 - 32 * (i % 2)));
        uint32_t y = uint32_t(M->readLong(Space::GRF0, pe, 112 + 2 * cycle) >>
                              (32 - 32 * (i % 2)));
        ASSERT_EQ(y, mauMatVecPseudoSingle(rows[i], b, 8, c))
            << "mab " << mab << " cycle " << cycle << " row " << i;
      }
    }
  }
}

} // namespace

TEST(NumericsMatVecFast, HalfSinglesAndLanesConvertBothWays) {
  // PE k holds singles 4k, 4k + 1 in its high long word and 4k + 2, 4k + 3
  // in its low one, most significant first; both paths must agree.
  Random random(99);
  WidePathsRestored restored;
  for (bool wide : {false, true}) {
    if (!allowWideMatVec(wide) && wide)
      continue;
    for (unsigned trial = 0; trial < 100; ++trial) {
      uint64_t high[4], low[4];
      for (unsigned k = 0; k < 4; ++k) {
        high[k] = uint64_t(random()) << 32 | uint32_t(random());
        low[k] = uint64_t(random()) << 32 | uint32_t(random());
      }
      uint32_t singles[16];
      halfSinglesFromLanes(high, low, singles);
      for (unsigned k = 0; k < 4; ++k) {
        ASSERT_EQ(singles[4 * k], uint32_t(high[k] >> 32)) << "wide " << wide;
        ASSERT_EQ(singles[4 * k + 1], uint32_t(high[k])) << "wide " << wide;
        ASSERT_EQ(singles[4 * k + 2], uint32_t(low[k] >> 32))
            << "wide " << wide;
        ASSERT_EQ(singles[4 * k + 3], uint32_t(low[k])) << "wide " << wide;
      }
      uint64_t backHigh[4], backLow[4];
      halfLanesFromSingles(singles, backHigh, backLow);
      for (unsigned k = 0; k < 4; ++k) {
        ASSERT_EQ(backHigh[k], high[k]) << "wide " << wide;
        ASSERT_EQ(backLow[k], low[k]) << "wide " << wide;
      }
    }
  }
}

TEST(NumericsMatVecFast, HalfLanesPathMatchesPerElementPath) {
  // The fused path from and to the PEs' long words, on finite blocks (so
  // it applies) and on special-laden ones (where it must decline or
  // agree), with and without c.
  Random random(4242);
  unsigned taken = 0;
  for (unsigned trial = 0; trial < 2000; ++trial) {
    uint16_t elements[16 * HalfBlockSize], vectorBits[HalfBlockSize];
    // Three trials in four: finite blocks at one block exponent each, some
    // elements zero (what hbfn makes of finite data); otherwise the
    // special-laden random blocks.
    auto finiteBlock = [&](uint16_t *block) {
      uint32_t blockExp = 1 + below(random, Half::MaxExp - 2);
      for (unsigned i = 0; i < HalfBlockSize; ++i)
        block[i] = below(random, 10) == 0
                       ? Half::pack(random() & 1, 0, 0)
                       : Half::pack(random() & 1, blockExp,
                                    uint16_t(random() & Half::ManMask));
    };
    bool special = trial % 4 == 3;
    for (unsigned r = 0; r < 16; ++r) {
      if (special)
        randomHalfBlock(random, elements + r * HalfBlockSize);
      else
        finiteBlock(elements + r * HalfBlockSize);
    }
    if (special)
      randomHalfBlock(random, vectorBits);
    else
      finiteBlock(vectorBits);
    auto longWord = [](const uint16_t *halves) {
      return uint64_t(halves[0]) << 48 | uint64_t(halves[1]) << 32 |
             uint64_t(halves[2]) << 16 | halves[3];
    };
    uint64_t words[16 * 4], vectorWords[4];
    for (unsigned i = 0; i < 16 * 4; ++i)
      words[i] = longWord(elements + 4 * i);
    for (unsigned k = 0; k < 4; ++k)
      vectorWords[k] = longWord(vectorBits + 4 * k);
    DecodedHalfMatrix matrix;
    decodeHalfMatrix(words, matrix);
    uint32_t c[16];
    for (unsigned r = 0; r < 16; ++r) {
      c[r] = randomAddend(random,
                          mauMatVecHalf(elements + r * 16, vectorBits, 16, 0));
      // Finite addends, except in the special trials and one in four of
      // the others (an infinite c on finite products: the fused path
      // gives that row c's infinity).
      if (!special && trial % 4 != 1 &&
          Single::exponent(c[r]) == Single::MaxExp)
        c[r] = Single::pack(Single::sign(c[r]), Single::MaxExp - 1, 0);
    }
    uint64_t cHigh[4], cLow[4], yHigh[4], yLow[4];
    halfLanesFromSingles(c, cHigh, cLow);
    bool withC = trial % 8 != 5;
    for (unsigned k = 0; k < 4; ++k)
      yHigh[k] = yLow[k] = 0x5a5a5a5a5a5a5a5aull;
    if (!mauMatVecHalfLanes(matrix.Products, vectorWords,
                            withC ? cHigh : nullptr, withC ? cLow : nullptr,
                            yHigh, yLow)) {
      // Declined: nothing written.
      for (unsigned k = 0; k < 4; ++k)
        ASSERT_TRUE(yHigh[k] == 0x5a5a5a5a5a5a5a5aull &&
                    yLow[k] == 0x5a5a5a5a5a5a5a5aull)
            << "trial " << trial;
      continue;
    }
    ++taken;
    uint32_t y[16];
    halfSinglesFromLanes(yHigh, yLow, y);
    for (unsigned r = 0; r < 16; ++r)
      ASSERT_EQ(y[r], mauMatVecHalf(elements + r * HalfBlockSize, vectorBits,
                                    16, withC ? c[r] : 0))
          << "trial " << trial << " row " << r;
  }
  // The fused path exists only with AVX-512BW; where it does, it must have
  // been taken for most hbfn-made blocks.
  if (allowWideMatVec(true))
    EXPECT_GT(taken, 1000u);
  else
    EXPECT_EQ(taken, 0u);
}
