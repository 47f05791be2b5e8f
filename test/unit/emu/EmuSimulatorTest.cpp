//===- EmuSimulatorTest.cpp - mncc-sim as a library -----------------------===//
//
// The Simulator API: a program loaded once and run many times, memories
// staged and read back in bulk for one instance or all at once, as long
// words or host bytes, the counters of each run, and every range or
// argument error returned as a message.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Simulator.h"

#include "gtest/gtest.h"

#include <cstring>
#include <vector>

using namespace mncc::emu;

namespace {

TEST(EmuSimulator, StagesRunsAndReadsBackInBulk) {
  Simulator sim;
  std::string error;
  // LM1 = LM0 + GRF0 over long words 0-3 of every PE (64-bit integer add),
  // and PDM long words 0-63 of every group to long word 512 of its first
  // L2BM.
  ASSERT_TRUE(sim.load("ladd $lm0v $lr0v $ln0v\nmvp/n64 $p0 $lc512\n",
                       "stage.vsm", error))
      << error;

  // LM0: four long words per PE, different on every PE.
  std::vector<uint64_t> lm0(size_t(NumPes) * 4);
  for (unsigned pe = 0; pe < NumPes; ++pe)
    for (unsigned k = 0; k < 4; ++k)
      lm0[pe * 4 + k] = uint64_t(pe) << 32 | (k + 1);
  ASSERT_TRUE(sim.write({Space::LM0, AllInstances, 0, 4}, lm0.data(), error))
      << error;
  // GRF0: the same four long words on every PE.
  const uint64_t grf0[4] = {100, 200, uint64_t(1) << 40, 0xffffffff};
  ASSERT_TRUE(sim.write({Space::GRF0, AllInstances, 0, 4}, grf0, error,
                        /*broadcast=*/true))
      << error;
  // PDM: 64 long words per group.
  std::vector<uint64_t> pdm(NumGroups * 64);
  for (size_t i = 0; i < pdm.size(); ++i)
    pdm[i] = 0x1000 + i;
  ASSERT_TRUE(sim.write({Space::PDM, AllInstances, 0, 64}, pdm.data(), error))
      << error;

  ASSERT_TRUE(sim.run(error)) << error;

  std::vector<uint64_t> lm1(size_t(NumPes) * 4);
  ASSERT_TRUE(sim.read({Space::LM1, AllInstances, 0, 4}, lm1.data(), error))
      << error;
  for (unsigned pe = 0; pe < NumPes; ++pe)
    for (unsigned k = 0; k < 4; ++k)
      ASSERT_EQ(lm1[pe * 4 + k], lm0[pe * 4 + k] + grf0[k])
          << "pe " << pe << " long word " << k;
  // One PE alone reads the same.
  uint64_t one[4];
  ASSERT_TRUE(sim.read({Space::LM1, 1234, 0, 4}, one, error)) << error;
  EXPECT_EQ(one[2], lm0[1234 * 4 + 2] + grf0[2]);
  // The machine's own view agrees on the word order: long word k is words
  // 2k (high) and 2k + 1.
  EXPECT_EQ(sim.machine().readLong(Space::LM1, 1234, 4), one[2]);

  std::vector<uint64_t> l2bm(NumL2bs * 64);
  ASSERT_TRUE(
      sim.read({Space::L2BM, AllInstances, 512, 64}, l2bm.data(), error))
      << error;
  for (unsigned l2b = 0; l2b < NumL2bs; ++l2b)
    for (unsigned k = 0; k < 64; ++k)
      ASSERT_EQ(l2bm[l2b * 64 + k], l2b % 2 == 0 ? pdm[l2b / 2 * 64 + k] : 0)
          << "l2b " << l2b << " long word " << k;

  // The counters of the run: one PE step and one MV transfer, PDM to L2BM
  // in every group at the PDM's 16 long words a cycle (4 cycles), issued on
  // the slot at 16.
  const TimingStats &stats = sim.stats();
  EXPECT_EQ(stats.Steps, 1u);
  EXPECT_EQ(stats.PeStatements, 1u);
  EXPECT_EQ(stats.MvStatements, 1u);
  EXPECT_EQ(stats.Busy[unsigned(Unit::Alu)], 4u);
  EXPECT_EQ(stats.Busy[unsigned(Unit::Mv)], 4u);
  EXPECT_EQ(stats.Cycles, 20u);
  EXPECT_EQ(sim.runs(), 1u);
}

// A kernel whose transfers read group 0's L2BMs only leaves the other groups'
// PE work out (docs/target/mncore2.md S39): their on-chip memories are then
// refused, DRAM and group 0 read as ever; with skipping off, and after
// a reset, every group is computed (and readable) again.
TEST(EmuSimulator, RefusesOnChipStateALeftOutGroupDidNotCompute) {
  Simulator sim;
  std::string error;
  ASSERT_TRUE(sim.load("#pragma mncc kernel\n"
                       "ladd $lm0v $lr0v $ln0v\n"
                       "mvp/n64 $lc512@0.0 $p0@0\n",
                       "kernel.vsm", error))
      << error;
  const uint64_t grf0[4] = {1, 2, 3, 4};
  ASSERT_TRUE(sim.write({Space::GRF0, AllInstances, 0, 4}, grf0, error,
                        /*broadcast=*/true))
      << error;
  ASSERT_TRUE(sim.run(error)) << error;
  constexpr unsigned PesPerGroup = NumPes / NumGroups;
  uint64_t lm1[4];
  ASSERT_TRUE(sim.read({Space::LM1, 5, 0, 4}, lm1, error)) << error;
  EXPECT_EQ(lm1[3], 4u);
  EXPECT_FALSE(sim.read({Space::LM1, PesPerGroup + 5, 0, 4}, lm1, error));
  EXPECT_NE(error.find("LM1 of group 1 was not computed"), std::string::npos)
      << error;
  std::vector<uint64_t> all(size_t(NumPes) * 4);
  EXPECT_FALSE(sim.read({Space::LM1, AllInstances, 0, 4}, all.data(), error));
  uint64_t l2bm[4];
  EXPECT_FALSE(sim.read({Space::L2BM, 7, 0, 4}, l2bm, error));
  EXPECT_TRUE(sim.read({Space::L2BM, 1, 0, 4}, l2bm, error)) << error;
  uint64_t dram[4];
  EXPECT_TRUE(sim.read({Space::DRAM, 3, 0, 4}, dram, error)) << error;

  sim.setSkipIdleGroups(false);
  sim.reset();
  ASSERT_TRUE(sim.write({Space::GRF0, AllInstances, 0, 4}, grf0, error,
                        /*broadcast=*/true))
      << error;
  ASSERT_TRUE(sim.run(error)) << error;
  ASSERT_TRUE(sim.read({Space::LM1, AllInstances, 0, 4}, all.data(), error))
      << error;
  for (unsigned group = 0; group < NumGroups; ++group)
    EXPECT_EQ(all[size_t(group * PesPerGroup + 5) * 4 + 3], 4u) << group;
}

TEST(EmuSimulator, RunsManyTimesWithOrWithoutReset) {
  Simulator sim;
  std::string error;
  // LM0 += GRF0 in place, and a `d get` that only a dump request prints.
  ASSERT_TRUE(sim.load("ladd $lm0v $lr0v $lm0v\nd get $lm0n0c0b0m0p0 1\n",
                       "acc.vsm", error))
      << error;
  const uint64_t step[4] = {1, 2, 3, 4};
  ASSERT_TRUE(sim.write({Space::GRF0, AllInstances, 0, 4}, step, error,
                        /*broadcast=*/true))
      << error;
  for (unsigned run = 0; run < 3; ++run)
    ASSERT_TRUE(sim.run(error)) << error;
  uint64_t lm0[4];
  ASSERT_TRUE(sim.read({Space::LM0, 4095, 0, 4}, lm0, error)) << error;
  for (unsigned k = 0; k < 4; ++k)
    EXPECT_EQ(lm0[k], 3 * step[k]);
  EXPECT_EQ(sim.runs(), 3u);
  EXPECT_EQ(sim.stats().Steps, 1u); // per run, not accumulated

  std::string dump;
  ASSERT_TRUE(sim.run(error, &dump)) << error;
  EXPECT_NE(dump.find("DEBUG-LM0(n0c0b0m0p0,0)"), std::string::npos) << dump;

  // After a reset every memory is zero again and the program stays.
  sim.reset();
  ASSERT_TRUE(sim.read({Space::LM0, 4095, 0, 4}, lm0, error)) << error;
  for (unsigned k = 0; k < 4; ++k)
    EXPECT_EQ(lm0[k], 0u);
  EXPECT_TRUE(sim.hasProgram());
  ASSERT_TRUE(sim.write({Space::GRF0, 7, 0, 4}, step, error)) << error;
  ASSERT_TRUE(sim.run(error)) << error;
  ASSERT_TRUE(sim.read({Space::LM0, 7, 0, 4}, lm0, error)) << error;
  EXPECT_EQ(lm0[3], 4u);
  ASSERT_TRUE(sim.read({Space::LM0, 8, 0, 4}, lm0, error)) << error;
  EXPECT_EQ(lm0[3], 0u);
}

TEST(EmuSimulator, HostBytesKeepTheFirstElementMostSignificant) {
  Simulator sim;
  std::string error;
  // Four singles: long word 0 holds 1.0f (high word) and 2.0f.
  const float singles[4] = {1.0f, 2.0f, 3.0f, -4.0f};
  ASSERT_TRUE(sim.writeBytes({Space::GRF1, 5, 10, 2}, singles, sizeof singles,
                             4, error))
      << error;
  EXPECT_EQ(sim.machine().readLong(Space::GRF1, 5, 20), 0x3f80000040000000u);
  EXPECT_EQ(sim.machine().readLong(Space::GRF1, 5, 22), 0x40400000c0800000u);
  // Halves: the first one in the top 16 bits.
  const uint16_t halves[4] = {0x3e00, 0x0001, 0xbe00, 0x7fff};
  ASSERT_TRUE(sim.writeBytes({Space::L1BM, 63, 8191, 1}, halves, sizeof halves,
                             2, error))
      << error;
  EXPECT_EQ(sim.machine().readUpper(Space::L1BM, 63, 8191),
            0x3e000001be007fffu);
  // Long words as they are, and a round trip through readBytes.
  const uint64_t longs[2] = {0x0123456789abcdefu, 42};
  ASSERT_TRUE(
      sim.writeBytes({Space::PDM, 3, 7, 2}, longs, sizeof longs, 8, error))
      << error;
  uint64_t back[2];
  ASSERT_TRUE(sim.read({Space::PDM, 3, 7, 2}, back, error)) << error;
  EXPECT_EQ(back[0], longs[0]);
  EXPECT_EQ(back[1], longs[1]);
  float singlesBack[4];
  ASSERT_TRUE(sim.readBytes({Space::GRF1, 5, 10, 2}, singlesBack,
                            sizeof singlesBack, 4, error))
      << error;
  EXPECT_EQ(std::memcmp(singles, singlesBack, sizeof singles), 0);
  uint8_t bytes[8];
  ASSERT_TRUE(
      sim.readBytes({Space::PDM, 3, 7, 1}, bytes, sizeof bytes, 1, error))
      << error;
  EXPECT_EQ(bytes[0], 0x01);
  EXPECT_EQ(bytes[7], 0xef);
}

TEST(EmuSimulator, DramAcrossPagesAndUntouchedReadsZero) {
  Simulator sim;
  std::string error;
  // 64 Ki long words a page: this range spans two pages.
  std::vector<uint64_t> data(10);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = 0xd000 + i;
  const uint64_t address = 65536 - 4;
  ASSERT_TRUE(sim.write({Space::DRAM, 2, address, 10}, data.data(), error))
      << error;
  std::vector<uint64_t> back(12, 1);
  ASSERT_TRUE(sim.read({Space::DRAM, 2, address - 1, 12}, back.data(), error))
      << error;
  EXPECT_EQ(back[0], 0u);
  for (size_t i = 0; i < data.size(); ++i)
    EXPECT_EQ(back[i + 1], data[i]);
  EXPECT_EQ(back[11], 0u);
  // The last long word of DRAM, and of another group.
  ASSERT_TRUE(
      sim.read({Space::DRAM, 3, DramLongWords - 2, 2}, back.data(), error))
      << error;
  EXPECT_EQ(back[0], 0u);
}

TEST(EmuSimulator, BadRequestsFailWithAMessage) {
  Simulator sim;
  std::string error;
  uint64_t data[16] = {};
  uint64_t sentinel = 0x5555;
  ASSERT_TRUE(sim.write({Space::LM0, 0, 2047, 1}, &sentinel, error)) << error;

  auto fails = [&](bool ok, const char *says) {
    EXPECT_FALSE(ok);
    EXPECT_NE(error.find(says), std::string::npos) << error;
    error.clear();
  };
  fails(sim.write({Space::T, 0, 0, 1}, data, error), "LM0, LM1");
  fails(sim.read({Space::MatX, 0, 0, 1}, data, error), "LM0, LM1");
  fails(sim.write({Space::LM0, NumPes, 0, 1}, data, error),
        "PE 4096 does not exist");
  fails(sim.read({Space::L1BM, 64, 0, 1}, data, error),
        "L1B 64 does not exist");
  fails(sim.read({Space::DRAM, 4, 0, 1}, data, error),
        "group 4 does not exist");
  // Ranges: one past the end, an address past the end, and a count that
  // would wrap a 64-bit sum.
  fails(sim.write({Space::LM0, 0, 2040, 9}, data, error), "outside");
  fails(sim.read({Space::GRF0, 0, 257, 0}, data, error), "outside");
  fails(sim.read({Space::PDM, 0, 1, ~uint64_t(0)}, data, error), "outside");
  fails(sim.write({Space::DRAM, 0, ~uint64_t(0), 2}, data, error), "outside");
  fails(sim.write({Space::L2BM, 0, 0, 1}, data, error, /*broadcast=*/true),
        "AllInstances");
  fails(sim.write({Space::L2BM, 0, 0, 1}, nullptr, error), "no data");
  fails(sim.read({Space::L2BM, 0, 0, 1}, nullptr, error), "no buffer");
  fails(sim.writeBytes({Space::LM1, 0, 0, 2}, data, 15, 4, error),
        "15 bytes given for a region of 16");
  fails(sim.writeBytes({Space::LM1, AllInstances, 0, 1}, data, 8, 4, error),
        "for a region of 32768");
  fails(sim.readBytes({Space::LM1, 0, 0, 1}, data, 8, 3, error),
        "element size 3");
  fails(sim.run(error), "no program loaded");
  fails(sim.load("ladd $lm0v\n", "bad.vsm", error), "bad.vsm:1:");
  EXPECT_FALSE(sim.hasProgram());

  // Nothing was written by the failed calls; an empty range at the very
  // end is fine.
  uint64_t last = 0;
  ASSERT_TRUE(sim.read({Space::LM0, 0, 2047, 1}, &last, error)) << error;
  EXPECT_EQ(last, sentinel);
  EXPECT_TRUE(sim.write({Space::LM0, 0, 2048, 0}, nullptr, error)) << error;

  // A failed load keeps the program loaded before.
  ASSERT_TRUE(sim.load("linc $lm0v $lm0v\n", "good.vsm", error)) << error;
  fails(sim.load("nosuchop $lm0v\n", "bad.vsm", error), "bad.vsm:1:");
  EXPECT_TRUE(sim.run(error)) << error;
  ASSERT_TRUE(sim.read({Space::LM0, 0, 0, 1}, &last, error)) << error;
  EXPECT_EQ(last, 1u);
}

TEST(EmuSimulator, FillRandomGivesTheSameBytesForTheSameSeed) {
  Simulator a, b;
  std::string error;
  a.fillRandom(7);
  b.fillRandom(7);
  // Every memory, whole instances and single long words far apart.
  for (Space memory : {Space::LM0, Space::LM1, Space::GRF0, Space::GRF1,
                       Space::L1BM, Space::L2BM, Space::PDM}) {
    uint64_t count = Simulator::longWordCount(memory);
    std::vector<uint64_t> x(count), y(count);
    ASSERT_TRUE(a.read({memory, 3, 0, count}, x.data(), error)) << error;
    ASSERT_TRUE(b.read({memory, 3, 0, count}, y.data(), error)) << error;
    EXPECT_EQ(x, y);
    // Not zeros, and not one value repeated.
    EXPECT_NE(x[0], 0u);
    EXPECT_NE(x[0], x[1]);
  }
  uint64_t x[4], y[4];
  ASSERT_TRUE(a.read({Space::DRAM, 2, 400000000, 4}, x, error)) << error;
  ASSERT_TRUE(b.read({Space::DRAM, 2, 400000000, 4}, y, error)) << error;
  EXPECT_EQ(std::vector<uint64_t>(x, x + 4), std::vector<uint64_t>(y, y + 4));
  // Another seed, other bytes.
  Simulator c;
  c.fillRandom(8);
  uint64_t z[4];
  ASSERT_TRUE(c.read({Space::DRAM, 2, 400000000, 4}, z, error)) << error;
  EXPECT_NE(x[0], z[0]);
  // reset() is power-on again: zeros.
  a.reset();
  ASSERT_TRUE(a.read({Space::DRAM, 2, 400000000, 4}, x, error)) << error;
  EXPECT_EQ(x[0], 0u);
}

TEST(EmuSimulator, FillRandomLeavesDramUnallocatedUntilWritten) {
  Simulator sim;
  std::string error;
  sim.fillRandom(99);
  const Machine &board = sim.machine();
  // Reading the whole of a page allocates nothing; it reads the values the
  // page is filled with when first written.
  std::vector<uint64_t> before(1 << 16);
  ASSERT_TRUE(sim.read({Space::DRAM, 1, 3 << 16, 1 << 16}, before.data(), error))
      << error;
  EXPECT_EQ(board.dramPages(), 0u);
  EXPECT_EQ(before[5], board.initialDramValue(1, (3 << 16) + 5));
  uint64_t one = 0x1234;
  ASSERT_TRUE(sim.write({Space::DRAM, 1, (3 << 16) + 5, 1}, &one, error))
      << error;
  EXPECT_EQ(board.dramPages(), 1u);
  std::vector<uint64_t> after(1 << 16);
  ASSERT_TRUE(sim.read({Space::DRAM, 1, 3 << 16, 1 << 16}, after.data(), error))
      << error;
  EXPECT_EQ(after[5], 0x1234u);
  after[5] = before[5];
  EXPECT_EQ(after, before);
}

TEST(EmuSimulator, FillRandomKeepsFixedMasksAndZeroBaseAddresses) {
  Simulator sim;
  sim.fillRandom(3);
  const Machine &board = sim.machine();
  bool anyWritableEntrySet = false;
  for (unsigned pe = 0; pe < NumPes; pe += 97) {
    EXPECT_EQ(board.maskEntry(pe, 0), 0xffffu);
    EXPECT_EQ(board.maskEntry(pe, 16), 0u);
    EXPECT_EQ(board.maskEntry(pe, 31), 0xffffu);
    EXPECT_EQ(board.maskEntry(pe, 24), 0xf000u);
    EXPECT_EQ(board.baseAddress(Space::BarLM0, pe), 0u);
    EXPECT_EQ(board.baseAddress(Space::BarLM1, pe), 0u);
    anyWritableEntrySet |= board.maskEntry(pe, 7) != 0;
  }
  EXPECT_TRUE(anyWritableEntrySet);
  EXPECT_NE(board.readT(5, 2), 0u);
  EXPECT_NE(board.matrixElement(Space::MatY, 1000, 15, 3), 0u);
}

} // namespace
