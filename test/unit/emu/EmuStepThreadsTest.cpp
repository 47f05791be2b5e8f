//===- EmuStepThreadsTest.cpp - PE steps on several threads ---------------===//
//
// Machine::setStepThreads runs each PE step on ranges of whole groups, one
// thread each, and on one thread Machine::setStepChunk runs it as chunks
// of whole L2Bs, one after the other. The board must end in the same
// state, bit for bit, and the dump must be the same, for every count and
// chunk as for the whole board in one pass: a program of every modelled
// instruction (AuditStatements.h) and the lit programs of test/sim run on
// 1, 2 and 4 threads and in chunks of an L2B and of a group, and every
// memory, register and matrix element is compared.
//
//===----------------------------------------------------------------------===//

#include "AuditStatements.h"

#include "mncc/emu/Machine.h"
#include "mncc/emu/Numerics.h"
#include "mncc/emu/Parser.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <dirent.h>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace mncc::emu;

namespace {

/// Statements beyond the audit's one of each: the other block-float
/// precisions, addresses that differ per PE (through T, base registers),
/// write and zero-flush masks and mask registers, forwarding, and a
/// repeated step.
const char *const MoreStatements[] = {
    "hbfn $lr0 $lr2",
    "fbfn $lr4 $lr6",
    "dbfn $lr8 $lr10",
    "hbfn $lm0v $ln0v",
    "lpassa $lm0 $t",
    "lpassa $lm0 $ln8",
    "lpassa $lmt0 $ln16v",
    "ssub $lr8 $ls10 $omr4",
    "lpassa $lr0 $ls0/$imr4",
    "lpassa/1010 $lr0v $ln8v",
    "masks 4",
    "lpassa $lr0 $ls2",
    "mask 0",
    "linc $lr0v $omr2",
    "linc $lr0 $nowrite",
    "linc $aluf $lr8",
    "hvfma $lr0 $ls2 $llm4 $llr8 ; lpassa $t $ln20",
    "hmwrite $llr0 $llx0",
    "hbfn $lr16 $lr18",
    "hmfma $lx $lr16 $lls4 $llr20",
    "l1bmm@2 $llr20 $llb0",
    "l1bmrffadd $lr24 $lb64",
    "l1bmp $lb64 $ls24",
    "nop/3",
    "lpassa $mauf $ls28",
};

/// A hash of long words (multiply and fold, FNV's prime).
uint64_t hashWords(const uint64_t *words, size_t count, uint64_t hash) {
  for (size_t i = 0; i < count; ++i) {
    hash = (hash ^ words[i]) * 0x100000001b3ull;
    hash ^= hash >> 29;
  }
  return hash;
}

/// Everything a program can leave behind: a hash of each instance of
/// each memory (the memories are too large to keep a copy of per run),
/// then T, the mask entries, the base registers and the matrix registers
/// as they are. Of LM0 and LM1 the first lmLongWords of each PE: reading
/// them PE by PE crosses the structure-of-arrays storage, 1 s a memory.
std::vector<uint64_t> boardState(const Machine &machine, uint64_t lmLongWords) {
  std::vector<uint64_t> state;
  auto append = [&](Space space, unsigned instances, uint64_t count) {
    std::vector<uint64_t> words(count);
    for (unsigned instance = 0; instance < instances; ++instance) {
      machine.readLongWords(space, instance, 0, words.data(), count);
      state.push_back(hashWords(words.data(), count, 0xcbf29ce484222325ull));
    }
  };
  append(Space::LM0, NumPes, lmLongWords);
  append(Space::LM1, NumPes, lmLongWords);
  append(Space::GRF0, NumPes, GrfWords / 2);
  append(Space::GRF1, NumPes, GrfWords / 2);
  append(Space::L1BM, NumL1bs, L1bmLongWords);
  append(Space::L2BM, NumL2bs, L2bmLongWords);
  append(Space::PDM, NumGroups, PdmLongWords);
  for (unsigned pe = 0; pe < NumPes; ++pe) {
    for (unsigned cycle = 0; cycle < 4; ++cycle)
      for (bool low : {false, true})
        state.push_back(machine.readT(pe, cycle, low));
    for (unsigned entry = 1; entry < MaskEntries; ++entry)
      state.push_back(machine.maskEntry(pe, entry));
    state.push_back(machine.baseAddress(Space::BarLM0, pe));
    state.push_back(machine.baseAddress(Space::BarLM1, pe));
  }
  for (Space plane : {Space::MatX, Space::MatY})
    for (unsigned mab = 0; mab < NumMabs; ++mab)
      for (unsigned row = 0; row < 16; ++row)
        for (unsigned column = 0; column < 4; ++column)
          state.push_back(machine.matrixElement(plane, mab, row, column));
  return state;
}

struct Outcome {
  std::string Dump;
  std::vector<uint64_t> State;
};

Outcome runWithThreads(const Program &program, unsigned threads,
                       bool fixedRanges, bool randomMemories,
                       unsigned chunkPes = NumPes / NumL2bs) {
  Machine machine;
  // On one thread the step runs as chunks of this many PEs, one after
  // the other; NumPes is the reference, the whole board at once.
  machine.setStepChunk(chunkPes);
  EXPECT_EQ(machine.stepChunk(), chunkPes);
  // Fixed ranges: every helper runs its range in every step; otherwise
  // the threads claim ranges as they come (and, on a busy host, the caller
  // may run most of them).
  machine.setStepThreads(threads, fixedRanges);
  EXPECT_EQ(machine.stepThreads(), threads);
  if (randomMemories)
    machine.fillRandom(0x5eed);
  Outcome outcome;
  Diagnostic error;
  EXPECT_TRUE(machine.run(program, outcome.Dump, error)) << error.str();
  // Twice: the second run starts from the state the first left, latches
  // and decoded matrix registers included.
  EXPECT_TRUE(machine.run(program, outcome.Dump, error)) << error.str();
  // The lit programs use the first 64 long words of LM0 and LM1.
  outcome.State = boardState(machine, randomMemories ? LmWords / 2 : 64);
  return outcome;
}

/// Runs the program on 1, 2 and 4 threads with fixed ranges, and on 2
/// that claim ranges, and expects the same outcome.
void expectAlikeOnEveryThreadCount(const std::string &text,
                                   const std::string &name,
                                   bool randomMemories) {
  Program program;
  Diagnostic error;
  ASSERT_TRUE(parseProgram(text, name, program, error)) << error.str();
  Outcome serial = runWithThreads(program, 1, true, randomMemories, NumPes);
  // Threads 1 with chunks of one L2B (the default) and of a group, then
  // 2 threads with fixed ranges unchunked and in chunks of an L2B, 4 with
  // fixed ranges, and 2 that claim them.
  struct Run {
    unsigned Threads, ChunkPes;
    bool FixedRanges;
  };
  const Run runs[] = {
      {1, NumPes / NumL2bs, true}, {1, NumPes / NumGroups, true},
      {2, NumPes, true},           {2, NumPes / NumL2bs, true},
      {4, NumPes, true},           {2, NumPes, false}};
  for (const Run &run : runs) {
    unsigned threads = run.Threads;
    bool fixedRanges = run.FixedRanges;
    Outcome threaded = runWithThreads(program, threads, fixedRanges,
                                      randomMemories, run.ChunkPes);
    EXPECT_EQ(threaded.Dump, serial.Dump)
        << name << ", " << threads << " fixed " << fixedRanges << " chunk "
        << run.ChunkPes;
    ASSERT_EQ(threaded.State.size(), serial.State.size());
    size_t differences = 0, first = 0;
    for (size_t i = 0; i < serial.State.size(); ++i)
      if (threaded.State[i] != serial.State[i] && differences++ == 0)
        first = i;
    EXPECT_EQ(differences, 0u)
        << name << ", " << threads << " threads, fixed " << fixedRanges
        << ", chunk " << run.ChunkPes << ": first at state word " << first;
  }
}

TEST(EmuStepThreads, EveryInstructionRunsAlike) {
  std::string text;
  for (const char *statement : AuditSupportedStatements)
    text += std::string(statement) + "\n";
  for (const char *statement : MoreStatements)
    text += std::string(statement) + "\n";
  text += "d get $lr0n0c0b0m0p0 4\nd get $lb64n3c1b7 8\n";
  expectAlikeOnEveryThreadCount(text, "every-instruction.vsm", true);
}

TEST(EmuStepThreads, WidePathsRunAsTheNarrowOnes) {
  // The executor's 512-bit paths (hbfn, the fused half products and the
  // matrix decode) against the narrow ones, on the every-instruction
  // program from random memories.
  std::string text;
  for (const char *statement : AuditSupportedStatements)
    text += std::string(statement) + "\n";
  for (const char *statement : MoreStatements)
    text += std::string(statement) + "\n";
  Program program;
  Diagnostic error;
  ASSERT_TRUE(parseProgram(text, "every-instruction.vsm", program, error))
      << error.str();
  struct Restore {
    ~Restore() { allowWideMatVec(true); }
  } restore;
  if (!allowWideMatVec(false))
    GTEST_SKIP() << "no 512-bit paths on this CPU";
  Outcome narrow = runWithThreads(program, 1, true, true);
  allowWideMatVec(true);
  Outcome wide = runWithThreads(program, 1, true, true);
  EXPECT_EQ(wide.Dump, narrow.Dump);
  ASSERT_EQ(wide.State.size(), narrow.State.size());
  size_t differences = 0;
  for (size_t i = 0; i < wide.State.size(); ++i)
    differences += wide.State[i] != narrow.State[i];
  EXPECT_EQ(differences, 0u);
}

TEST(EmuStepThreads, SimProgramsRunAlike) {
  // The lit programs that run (the ones testing errors do not parse).
  std::string folder = std::string(MNCC_SOURCE_DIR) + "/test/sim";
  DIR *dir = opendir(folder.c_str());
  ASSERT_NE(dir, nullptr) << folder;
  unsigned ran = 0;
  while (dirent *entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name.size() < 5 || name.substr(name.size() - 5) != ".test")
      continue;
    std::ifstream in(folder + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    Program program;
    Diagnostic error;
    if (!parseProgram(text.str(), name, program, error))
      continue;
    // From zeros, as mncc-sim runs them (filling the board at random
    // for each of ~50 runs would take most of a minute).
    expectAlikeOnEveryThreadCount(text.str(), name, false);
    ++ran;
  }
  closedir(dir);
  EXPECT_GE(ran, 10u);
}

TEST(EmuStepThreads, ChunksAreWholeL2bsThatTileTheBoard) {
  Machine machine;
  constexpr unsigned PesPerL2b = NumPes / NumL2bs;
  EXPECT_EQ(machine.stepChunk(), PesPerL2b); // the default
  // Rounded down to whole L2Bs that divide the board, at least one.
  const unsigned asked[] = {
      0, 1, PesPerL2b, 3 * PesPerL2b, 5 * PesPerL2b, NumPes, 2 * NumPes};
  const unsigned expected[] = {PesPerL2b,     PesPerL2b,     PesPerL2b,
                               2 * PesPerL2b, 4 * PesPerL2b, NumPes,
                               NumPes};
  for (size_t i = 0; i < sizeof asked / sizeof *asked; ++i) {
    machine.setStepChunk(asked[i]);
    EXPECT_EQ(machine.stepChunk(), expected[i]) << asked[i];
  }
}

TEST(EmuStepThreads, CountsAreOneToFour) {
  Machine machine;
  for (unsigned asked : {0u, 1u, 2u, 3u, 4u, 9u}) {
    machine.setStepThreads(asked);
    unsigned expected = asked == 0 ? 1 : asked > 4 ? 4 : asked;
    EXPECT_EQ(machine.stepThreads(), expected) << asked;
  }
}

// A step's ranges are whole L2Bs, the active groups' shared out in order,
// so that a step on one group (a batch-1 kernel, docs/target/mncore2.md
// S39) still runs on every thread.
TEST(EmuStepThreads, RangesShareTheActiveL2bs) {
  constexpr unsigned PesPerL2b = NumPes / NumL2bs;
  struct Case {
    unsigned Count;
    uint8_t Groups;
    std::vector<std::pair<unsigned, unsigned>> Ranges; // in L2Bs
  };
  const Case cases[] = {
      {2, 0b1111, {{0, 4}, {4, 8}}},
      {4, 0b1111, {{0, 2}, {2, 4}, {4, 6}, {6, 8}}},
      {2, 0b0001, {{0, 1}, {1, 2}}},
      {3, 0b0001, {{0, 0}, {0, 1}, {1, 2}}},
      {2, 0b0101, {{0, 2}, {4, 6}}},
      {2, 0b1000, {{6, 7}, {7, 8}}},
      {2, 0b0000, {{0, 0}, {0, 0}}},
  };
  for (const Case &c : cases) {
    StepThreads threads(c.Count, /*fixedRanges=*/true);
    struct Seen {
      std::mutex Lock;
      std::vector<std::pair<unsigned, unsigned>> Ranges;
    } seen;
    threads.run(
        [](void *context, PeRange range) {
          auto *s = static_cast<Seen *>(context);
          std::lock_guard<std::mutex> lock(s->Lock);
          s->Ranges.emplace_back(range.Begin, range.End);
        },
        &seen, c.Groups);
    std::sort(seen.Ranges.begin(), seen.Ranges.end());
    std::vector<std::pair<unsigned, unsigned>> expected;
    for (unsigned i = 0; i < c.Count; ++i) {
      PeRange range = threads.rangeOf(i);
      EXPECT_EQ(range.Begin, c.Ranges[i].first * PesPerL2b)
          << c.Count << " " << int(c.Groups) << " " << i;
      EXPECT_EQ(range.End, c.Ranges[i].first == c.Ranges[i].second
                               ? 0
                               : c.Ranges[i].second * PesPerL2b)
          << c.Count << " " << int(c.Groups) << " " << i;
      expected.emplace_back(range.Begin, range.End);
    }
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(seen.Ranges, expected); // each range run once
  }
}

// A kernel whose transfers read one group's L2BM runs that group alone,
// on every thread; the board ends the same for every count.
TEST(EmuStepThreads, OneGroupKernelsRunAlike) {
  // The audit's PE statements: its MV transfers read every group's L2BM.
  std::string text = "#pragma mncc kernel\n";
  for (const char *statement : AuditSupportedStatements)
    if (std::string(statement).rfind("mv", 0) != 0)
      text += std::string(statement) + "\n";
  for (const char *statement : MoreStatements)
    text += std::string(statement) + "\n";
  text += "mvp/n64 $lc0@0.1 $d0@0\n";
  Program program;
  Diagnostic error;
  ASSERT_TRUE(parseProgram(text, "one-group.vsm", program, error))
      << error.str();
  Machine machine;
  ASSERT_TRUE(machine.run(program, nullptr, error)) << error.str();
  EXPECT_EQ(machine.staleGroups(), 0b1110); // group 0 alone ran
  expectAlikeOnEveryThreadCount(text, "one-group.vsm", true);
}

} // namespace

// The tools read MNCC_EMU_THREADS once and set the default every new
// Machine starts with; the library reads no environment.
TEST(EmuStepThreads, DefaultComesFromTheTool) {
  // Unset or not a positive integer: two threads where the host has two
  // CPUs, else one.
  unsigned host =
      std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
  EXPECT_EQ(stepThreadsFromText(nullptr), host);
  EXPECT_EQ(stepThreadsFromText(""), host);
  EXPECT_EQ(stepThreadsFromText("two"), host);
  EXPECT_EQ(stepThreadsFromText("2x"), host);
  EXPECT_EQ(stepThreadsFromText("0"), host);
  EXPECT_EQ(stepThreadsFromText("1"), 1u);
  EXPECT_EQ(stepThreadsFromText("2"), 2u);
  EXPECT_EQ(stepThreadsFromText("4"), 4u);
  unsigned before = defaultStepThreads();
  setDefaultStepThreads(2);
  {
    Machine machine;
    EXPECT_EQ(machine.stepThreads(), 2u);
  }
  setDefaultStepThreads(before);
  Machine machine;
  EXPECT_EQ(machine.stepThreads(), before);
}
