//===- EmuMachineTest.cpp - mncc-sim machine state and execution ----------===//
//
// Runs small VSM programs on the emulated board and checks memories, mask
// registers and dump lines. Expected values are worked out by hand from the
// manual (MNCore2.md sections cited per test) and the decisions recorded in
// docs/target/mncore2.md.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Machine.h"

#include "gtest/gtest.h"

#include "mncc/emu/Numerics.h"

#include <cstring>
#include <memory>

using namespace mncc::emu;

namespace {

class EmuMachine : public ::testing::Test {
protected:
  EmuMachine() : M(new Machine) {}

  /// Runs a program; returns its dump.
  std::string run(const char *text) {
    Program program;
    Diagnostic error;
    EXPECT_TRUE(parseProgram(text, "t.vsm", program, error)) << error.str();
    std::string dump;
    EXPECT_TRUE(M->run(program, dump, error)) << error.str();
    return dump;
  }

  uint64_t grf0(unsigned pe, uint32_t word) {
    return M->readLong(Space::GRF0, pe, word);
  }
  /// The four mask flags of cycle 0 of a mask register entry.
  unsigned flags(unsigned pe, unsigned entry, unsigned cycle = 0) {
    return M->maskEntry(pe, entry) >> (12 - 4 * cycle) & 0xf;
  }

  std::unique_ptr<Machine> M;
};

TEST_F(EmuMachine, DumpsInTheOfficialFormats) {
  std::string dump = run("d set $lm2n0c0b0m0p0 1 BFF0000000000000\n"
                         "d get $lm2n0c0b0m0p0 1\n"
                         "d set $ls0n0c0b0m0p1 1 3F800000C0000000\n"
                         "d getf $ls0n0c0b0m0p1 1\n"
                         "d set $ln0n0c0b0m0p0 1 3e00be000000fe00\n"
                         "d geth $ln0n0c0b0m0p0 1\n"
                         "d set $d5n1 1 3FF0000000000000\n"
                         "d getd $d5n1 1\n"
                         "d get $lb3n0c1b2 1\n"
                         "d get $omr26n0c0b0m0p0 1\n");
  EXPECT_EQ(dump,
            "DEBUG-LM0(n0c0b0m0p0,2):(f:-1, i:{{0xBFF0,0x0},{0x0,0x0}}, "
            "v:0xBFF0000000000000) #d get $lm2n0c0b0m0p0 1\n"
            "DEBUG-GREG1(n0c0b0m0p1,0):(1, -2) (0x3f800000, 0xc0000000) "
            "#d getf $ls0n0c0b0m0p1 1\n"
            // Half: 0x3e00 = 1, 0xbe00 = -1, exponent 0 = 0, 0xfe00 = -inf.
            "DEBUG-LM1(n0c0b0m0p0,0):(1, -1, 0, -inf) (0x3e00, 0xbe00, "
            "0x0000, 0xfe00) #d geth $ln0n0c0b0m0p0 1\n"
            "DEBUG-DRAM(n1,5):(1) (0x3ff0000000000000) #d getd $d5n1 1\n"
            "DEBUG-L1BM(n0c1b2,3):(f:0, i:{{0x0,0x0},{0x0,0x0}}, v:0x0) "
            "#d get $lb3n0c1b2 1\n"
            // Entry 16 + 0b1010: cycles 0 and 2.
            "DEBUG-OMR(n0c0b0m0p0,26):Mask{15} #d get $omr26n0c0b0m0p0 1\n"
            "DEBUG-OMR(n0c0b0m0p0,26):Mask{0} #d get $omr26n0c0b0m0p0 1\n"
            "DEBUG-OMR(n0c0b0m0p0,26):Mask{15} #d get $omr26n0c0b0m0p0 1\n"
            "DEBUG-OMR(n0c0b0m0p0,26):Mask{0} #d get $omr26n0c0b0m0p0 1\n");
}

TEST_F(EmuMachine, DebugSetBroadcastsOverOmittedLevels) {
  run("d set $lr6 1 0000000000000007\n"
      "d set $lr8n3c1b7m15 1 0000000000000009\n");
  EXPECT_EQ(grf0(0, 6), 7u);
  EXPECT_EQ(grf0(NumPes - 1, 6), 7u);
  EXPECT_EQ(grf0(peIndex(3, 1, 7, 15, 2), 8), 9u);
  EXPECT_EQ(grf0(peIndex(3, 1, 7, 14, 2), 8), 0u);
}

TEST_F(EmuMachine, FixedInputsFollowThePePosition) {
  // manual 3.6.1: $l2bid = group * 2 + l2b, $peid = mab * 4 + pe; word
  // precision repeats the value in both words (decision S5).
  run("lpassa $l2bid $lr0\nlpassa $l1bid $lr2\nlpassa $mabid $lr4\n"
      "ipassa $peid $lr6\nlpassa $msb1 $lr8\n");
  unsigned pe = peIndex(1, 1, 3, 5, 2);
  EXPECT_EQ(grf0(pe, 0), 3u);
  EXPECT_EQ(grf0(pe, 2), 3u);
  EXPECT_EQ(grf0(pe, 4), 5u);
  EXPECT_EQ(grf0(pe, 6), 0x0000001600000016u);
  EXPECT_EQ(grf0(pe, 8), 0x8000000000000000u);
}

TEST_F(EmuMachine, IntegerAddSubAndTheirFlags) {
  // The second inputs come from GRF1: one GRF0 read a step (manual 3.6.4).
  run("d set $lr0 1 7FFFFFFFFFFFFFFF\nd set $ls2 1 0000000000000001\n"
      "ladd $lr0 $ls2 $lr4 $omr1\n"
      "uladd $lr0 $ls2 $omr2\n"
      "d set $lr10 1 00000001FFFFFFFF\nd set $ls12 1 0000000200000001\n"
      "uiadd $lr10 $ls12 $lr14 $omr3\n"
      "d set $lr16 1 0005000080000001\nd set $ls18 1 0003000100010001\n"
      "ssub $lr16 $ls18 $lr20 $omr4\n"
      "uldec $lr20 $omr5\n");
  // Signed: the flag says the result is not negative (manual 3.6.9).
  EXPECT_EQ(grf0(0, 4), 0x8000000000000000u);
  EXPECT_EQ(flags(0, 1), 0x0u);
  // Unsigned: no carry out.
  EXPECT_EQ(flags(0, 2), 0xfu);
  // Word lanes: 1 + 2 = 3 without carry (bits 3-2), 0xffffffff + 1 carries.
  EXPECT_EQ(grf0(0, 14), 0x0000000300000000u);
  EXPECT_EQ(flags(0, 3), 0xcu);
  // Half word lanes: 2, -1, 0x7fff (wrapped, not negative), 0.
  EXPECT_EQ(grf0(0, 20), 0x0002ffff7fff0000u);
  EXPECT_EQ(flags(0, 4), 0xbu);
  EXPECT_EQ(flags(0, 5), 0xfu);
}

TEST_F(EmuMachine, LogicShiftsAndIntegerMaxMin) {
  run("d set $lr0 1 0000000000000001\nd set $ls2 1 000000000000003F\n"
      "llsl $lr0 $ls2 $lr4\n"
      "d set $lr6 1 8000000000000000\nd set $ls8 1 0000000000000004\n"
      "llsr $lr6 $ls8 $lr10\nullsr $lr6 $ls8 $lr12\n"
      "d set $lr14 1 F000000000000001\n"
      "lbsl $lr14 $ls8 $lr16\nlbsr $lr16 $ls8 $lr18\n"
      "llnot $lr20 $lr22 $omr1\nlnot $lr20 $lr24\n"
      "d set $lr26 1 FFFF000100000000\nd set $ls28 1 0001FFFF00000000\n"
      "smax $lr26 $ls28 $lr30 $omr2\nusmax $lr26 $ls28 $lr32\n"
      "lxor $lr26 $lr26 $omr3\n");
  EXPECT_EQ(grf0(0, 4), 0x8000000000000000u);
  EXPECT_EQ(grf0(0, 10), 0xf800000000000000u); // arithmetic
  EXPECT_EQ(grf0(0, 12), 0x0800000000000000u); // logical
  EXPECT_EQ(grf0(0, 16), 0x000000000000001fu);
  EXPECT_EQ(grf0(0, 18), 0xf000000000000001u);
  EXPECT_EQ(grf0(0, 22), 1u);
  EXPECT_EQ(flags(0, 1), 0x0u); // lnot gave 1: not all zero
  EXPECT_EQ(grf0(0, 24), ~uint64_t(0));
  // Signed: max(-1, 1) = 1, max(1, -1) = 1, then 0 = 0 twice.
  EXPECT_EQ(grf0(0, 30), 0x0001000100000000u);
  // Flags: y chosen, x chosen, equal, equal.
  EXPECT_EQ(flags(0, 2), 0x7u);
  EXPECT_EQ(grf0(0, 32), 0xffffffff00000000u);
  EXPECT_EQ(flags(0, 3), 0xfu); // x ^ x = 0
}

TEST_F(EmuMachine, FloatAluOperations) {
  run("d set $lr0 1 3F800000C0000000\n"
      "frelu $lr0 $lr0 $lr2 $omr1\n"
      "d set $lr4 1 BFF0000000000000\nd set $ls6 1 4008000000000000\n"
      "dlrelud $lr4 $ls6 $lr8\ndlreluo $lr4 $ls6 $lr10\n"
      "dilrelud $lr4 $ls6 $lr12\ndlrelud $ls6 $lr4 $lr14\n"
      "d set $lr16 1 C004000000000000\nd set $lr18 1 3FE8000000000000\n"
      "dfloor $lr16 $lr20\ndfloor $lr18 $lr22\n"
      "d set $lr24 1 C0200000501502F9\n"
      "fftoi $lr24 $lr26\nufftoi $lr24 $lr28\n"
      "d set $lr30 1 3F00BF0000000000\nhfloor $lr30 $lr32\n"
      "d set $lr34 1 8000000000000000\nd set $ls36 1 0000000000000000\n"
      "dmax $lr34 $ls36 $lr38 $omr2\nfmin $lr0 $ls36 $lr40\n");
  // relu: the sign of x picks y or -0; the flag is x >= 0.
  EXPECT_EQ(grf0(0, 2), 0x3f80000080000000u);
  EXPECT_EQ(flags(0, 1), 0xcu);
  EXPECT_EQ(grf0(0, 8), 0x3ff8000000000000u);  // 3 / 2
  EXPECT_EQ(grf0(0, 10), 0x3fd8000000000000u); // 3 / 8
  EXPECT_EQ(grf0(0, 12), 0x4018000000000000u); // 3 * 2
  EXPECT_EQ(grf0(0, 14), 0xbff0000000000000u); // x >= 0: y
  EXPECT_EQ(grf0(0, 20), 0xc008000000000000u); // floor(-2.5) = -3
  EXPECT_EQ(grf0(0, 22), 0u);                  // floor(0.75) = +0
  // ftoi truncates; 1e10 clips to the largest int32; unsigned takes |x|.
  EXPECT_EQ(grf0(0, 26), 0xfffffffe7fffffffu);
  EXPECT_EQ(grf0(0, 28), 0x00000002ffffffffu);
  // Half 1.5 -> 1, -1.5 -> -2, zeros stay.
  EXPECT_EQ(grf0(0, 32), 0x3e00c00000000000u);
  // Both zero: x is returned and the flag is set (manual 3.6.9, max).
  EXPECT_EQ(grf0(0, 38), 0x8000000000000000u);
  EXPECT_EQ(flags(0, 2), 0xfu);
  EXPECT_EQ(grf0(0, 40), 0x00000000c0000000u);
}

TEST_F(EmuMachine, MauVectorFmaIsBitExact) {
  // The manual's truncated-multiplier example (docs decision 7) in word 0,
  // 1 * 2 + 1 = 3 in word 1.
  run("d set $lr0 1 498000083F800000\nd set $ls2 1 4980000840000000\n"
      "d set $lm4 1 D38000003F800000\n"
      "fvfma $lr0 $ls2 $lm4 $lr6 $omr1\n"
      "fvfma -$lr0 $ls2 $lm4 $lr8 $omr2\n");
  EXPECT_EQ(grf0(0, 6), 0x4a00001040400000u);
  EXPECT_EQ(flags(0, 1), 0xfu);
  // -a * b + c: lane 1 is -1, whose flag (inverted sign) is 0.
  EXPECT_EQ(grf0(0, 8) & 0xffffffffu, 0xbf800000u);
  EXPECT_EQ(flags(0, 2) & 0x3u, 0x0u);
}

TEST_F(EmuMachine, DoubleVectorHalvesPassTheAddendElsewhere) {
  // dvfmau multiplies on PEs 0 and 1 only; PEs 2 and 3 output c, normalised
  // (-0 becomes +0).
  run("d set $lr0 1 4000000000000000\nd set $ls2 1 4008000000000000\n"
      "d set $lm4 1 8000000000000000\n"
      "dvfmau $lr0 $ls2 $lm4 $lr6\n");
  EXPECT_EQ(grf0(0, 6), 0x4018000000000000u);
  EXPECT_EQ(grf0(1, 6), 0x4018000000000000u);
  EXPECT_EQ(grf0(2, 6), 0u);
  EXPECT_EQ(grf0(3, 6), 0u);
}

TEST_F(EmuMachine, WriteMasksCoverCyclesAndQuarters) {
  run("d set $lr0 4 l1l2l3l4\n"
      "lpassa $lr0v $lr8v/0101\n"
      "lpassa/0011 $lr0v $lr16v\n"
      "d set $lr40 1 0005000080000001\nd set $ls42 1 0003000100010001\n"
      "ssub $lr40 $ls42 $omr2\n"
      "d set $lr30 1 1111222233334444\nd set $lr32 1 AAAABBBBCCCCDDDD\n"
      "lpassa $lr30 $lr32/$imr2\n"
      "d set $lr44 2 l1111222233334444l5555666677778888\n"
      "d set $lr48 2 lAAAAAAAAAAAAAAAAlBBBBBBBBBBBBBBBB\n"
      "lpassa $llr44 $llr48/$llimr2\n"
      "d set $lr52 1 AAAABBBBCCCCDDDD\n"
      "maskr 2\nlpassa $lr30 $lr52\nmask 0\n");
  // Write mask pattern: cycles 1 and 3 only.
  EXPECT_EQ(grf0(0, 8), 0u);
  EXPECT_EQ(grf0(0, 10), 2u);
  EXPECT_EQ(grf0(0, 12), 0u);
  EXPECT_EQ(grf0(0, 14), 4u);
  // Zero flush: cycles 0 and 1 write zeros.
  EXPECT_EQ(grf0(0, 16), 0u);
  EXPECT_EQ(grf0(0, 18), 0u);
  EXPECT_EQ(grf0(0, 20), 3u);
  // Mask flags 0b1011: half words 0, 2 and 3 written (decision S2).
  EXPECT_EQ(flags(0, 2), 0xbu);
  EXPECT_EQ(grf0(0, 32), 0x1111bbbb33334444u);
  // Double-long mask length: words 0, 2 and 3 of the double long word.
  EXPECT_EQ(grf0(0, 48), 0x11112222aaaaaaaau);
  EXPECT_EQ(grf0(0, 50), 0x5555666677778888u);
  // The multi-line mask applies to GRF0 with "maskr".
  EXPECT_EQ(grf0(0, 52), 0x1111bbbb33334444u);
}

TEST_F(EmuMachine, ASingleLineMaskCancelsTheMultiLineOneForTheStep) {
  // Manual 3.6.2.1: a single-line mask cancels the multi-line setting for
  // its step and applies to its own destination only (decision S33).
  // Entry 16 enables no cycle: with "maskr 16" GRF0 writes are dropped,
  // except in the step where another destination has a mask of its own.
  run("d set $lr0 4 l1l2l3l4\n"
      "maskr 16\n"
      "lpassa $lr0v $lr8v\n"
      "lpassa $lr0v $lr16v ; fvpassa $lm0 $ln0/0110\n"
      "mask 0\n");
  EXPECT_EQ(grf0(0, 8), 0u);
  EXPECT_EQ(grf0(0, 16), 1u);
  EXPECT_EQ(grf0(0, 22), 4u);
}

TEST_F(EmuMachine, HalfMatrixWriteReducesSinglesWithR) {
  // "r" on the hmwrite source (decision S35): the double long word as four
  // singles 1, -2, 3, 4 rounded to the halves 0x3e00, 0xc000, 0x4100,
  // 0x4200 of PE 0's quarter of row 0; the low long word is 0.
  run("d set $lm0n0c0b0m0p0 2 l3F800000C0000000l4040000040800000\n"
      "hmwrite $llm0vr $lx0\n");
  EXPECT_EQ(M->matrixElement(Space::MatX, 0, 0, 0), 0x3e00c00041004200u);
  // hbfn takes "r" as every half ALU input does.
  run("hbfn $llm0r $lr8\n");
  EXPECT_NE(grf0(0, 8), 0u);
}

TEST_F(EmuMachine, MaskRegisterWritesAreMasked) {
  // maskk applies the default mask to mask register writes as well.
  run("d set $lr0 1 0000000000000000\nd set $lr2 1 0000000000000001\n"
      "lpassa $lr0 $omr1\n"
      "lpassa $lr2 $omr3\n"
      "maskk 17\nlpassa $lr0 $omr3\nmask 0\n");
  EXPECT_EQ(M->maskEntry(0, 1), 0xffffu);
  // Entry 17 enables cycle 3 only.
  EXPECT_EQ(M->maskEntry(0, 3), 0x000fu);
}

TEST_F(EmuMachine, BaseAddressAndMabAdjust) {
  run("d set $lr0 1 0000000800000000\n"
      "lpassa $lr0 $lmb\n"
      "d set $lm8 1 0000000000000055\n"
      "lpassa $lm0 $lr2\n"
      "d set $lr4 1 0000000000000000\nlpassa $lr4 $lmb\n"
      "d set $lm0 2 l10l20\n"
      "lpassa $lm0j1 $lr6\n");
  // BAR takes the low 12 bits of the most significant word (manual 3.3):
  // with BAR = 8, $lm0 read word 8.
  EXPECT_EQ(grf0(7, 2), 0x55u);
  EXPECT_EQ(M->baseAddress(Space::BarLM0, 7), 0u); // written back to 0
  // j1: PEs 0 and 1 of each MAB read one long word further.
  EXPECT_EQ(grf0(0, 6), 0x20u);
  EXPECT_EQ(grf0(1, 6), 0x20u);
  EXPECT_EQ(grf0(2, 6), 0x10u);
  EXPECT_EQ(grf0(3, 6), 0x10u);
}

TEST_F(EmuMachine, StepReadsBeforeWritesAndForwarding) {
  // lpassa writes GRF1's $ls2 in the step that dvpassa reads it.
  run("d set $lr0 1 3FF0000000000000\nd set $ls2 1 4000000000000000\n"
      "lpassa $lr0 $ls2 ; dvpassa $ls2 $lr4\n"
      "d set $lr10 1 0000000000000041\n"
      "linc $lr10 $nowrite\n"
      "noforward; lpassa $lr0 $lr12\n"
      "lpassa $aluf $lr14\n"
      "lpassa $subpeid $lr16\nmsl $lr16 $lr18\nmsr $lr16 $lr20\n"
      "imm i\"5\" $lr22\nimmu i\"5\" $lr24\n");
  EXPECT_EQ(M->readLong(Space::GRF1, 0, 2), 0x3ff0000000000000u);
  EXPECT_EQ(grf0(0, 4), 0x4000000000000000u); // the old $ls2
  EXPECT_EQ(grf0(0, 14), 0x42u);              // noforward kept linc's
  EXPECT_EQ(grf0(0, 18), 3u);                 // msl: PE 3 -> PE 0
  EXPECT_EQ(grf0(1, 18), 0u);
  EXPECT_EQ(grf0(0, 20), 1u); // msr: PE 1 -> PE 0
  EXPECT_EQ(grf0(0, 22), 0x0000000500000005u);
  EXPECT_EQ(grf0(0, 24), 0x0000000500000000u);
}

TEST_F(EmuMachine, TRegisterHoldsOneDoubleLongWordPerCycle) {
  run("d set $lr0 4 l1l2l3l4\n"
      "lpassa $lr0v $t\n");
  EXPECT_EQ(M->readT(0, 0), 1u);
  EXPECT_EQ(M->readT(0, 3), 4u);
  EXPECT_EQ(M->readT(0, 3, true), 0u);
}

TEST_F(EmuMachine, BlockFloatAcrossTheMab) {
  // dbfn: one block of four doubles over the PEs of a MAB per cycle
  // (decision S6). 4, 1, 0.5, 0 share exponent 2: mantissas with the
  // explicit leading bit 2^51, 2^49, 2^48 and 0 (shift = gap + 1).
  run("d set $lr0n0c0b0m0p0 1 4010000000000000\n"
      "d set $lr0n0c0b0m0p1 1 3FF0000000000000\n"
      "d set $lr0n0c0b0m0p2 1 3FE0000000000000\n"
      "d set $lr0n0c0b0m0p3 1 0000000000000000\n"
      "dbfn $lr0 $lr2\n");
  EXPECT_EQ(grf0(0, 2), 0x4018000000000000u);
  EXPECT_EQ(grf0(1, 2), 0x4012000000000000u);
  EXPECT_EQ(grf0(2, 2), 0x4011000000000000u);
  EXPECT_EQ(grf0(3, 2), 0x4010000000000000u);
}

TEST_F(EmuMachine, L1bmLayoutsAndReductions) {
  // 4x4 layout (manual 3.6.8): cycle c, MAB m, PE p use long word
  // 16c + 4 * (m >> 2) + p; @2 writes from the MABs with m & 3 == 2.
  run("lpassa $mabid $lr0\n"
      "l1bmm4@2 $lr0 $lb0\n"
      "l1bmrlbor $lr0 $lb100\n"
      "l1bmrland $lr0 $lb104\n"
      "l1bmrlband $lr0 $lb108\n"
      "d set $lr2n0c0b0 1 8000000000000000\n"
      "d set $lr2n0c0b0m3 1 4000000000000000\n"
      "l1bmrdmax $lr2 $lb112\n"
      "l1bmrdmin $lr2 $lb116\n");
  EXPECT_EQ(M->readUpper(Space::L1BM, 0, 4), 6u);
  EXPECT_EQ(M->readUpper(Space::L1BM, 0, 13), 14u);
  EXPECT_EQ(M->readUpper(Space::L1BM, 63, 16 + 9), 10u); // cycle 1
  EXPECT_EQ(M->readUpper(Space::L1BM, 0, 100), 15u);     // 0 | 1 | ... | 15
  EXPECT_EQ(M->readUpper(Space::L1BM, 0, 104), 0u);      // MAB 0 gives 0
  EXPECT_EQ(M->readUpper(Space::L1BM, 0, 108), 0u);
  // Sign-magnitude order: max is 2.0, min is -0 (below +0 in L1B 1).
  EXPECT_EQ(M->readUpper(Space::L1BM, 0, 112), 0x4000000000000000u);
  EXPECT_EQ(M->readUpper(Space::L1BM, 0, 116), 0x8000000000000000u);
  EXPECT_EQ(M->readUpper(Space::L1BM, 1, 116), 0u);
}

TEST_F(EmuMachine, MvpCopiesInEveryGroup) {
  run("d set $p10 2 l0000000000000005l0000000000000006\n"
      "mvp/n64 $p10 $lc20@.1\n"
      "mvp/n64 $p11@2 $d7@3\n");
  for (unsigned group = 0; group < NumGroups; ++group) {
    EXPECT_EQ(M->readUpper(Space::L2BM, group * 2 + 1, 20), 5u);
    EXPECT_EQ(M->readUpper(Space::L2BM, group * 2 + 1, 21), 6u);
    EXPECT_EQ(M->readUpper(Space::L2BM, group * 2, 20), 0u);
  }
  EXPECT_EQ(M->readUpper(Space::DRAM, 3, 7), 6u);
  EXPECT_EQ(M->readUpper(Space::DRAM, 2, 7), 0u);
}

// A self-contained kernel (`#pragma mncc kernel`) runs the PE steps of the
// groups whose L2BMs its transfers read and leaves the others' out; before
// the first kernel every group runs (docs/target/mncore2.md S39).
constexpr const char *kTwoKernels =
    "d set $lr0 1 0000000000000005\n"
    "lpassa $lr0 $lr2\n"
    "#pragma mncc kernel\n"
    "lpassa $lr0 $lr4\n"
    "mvp/n64 $d10@0 $lc20@1.1\n"
    "mvp/n64 $lc20@0.1 $p10@0\n"
    "  #  pragma mncc kernel \n"
    "lpassa $lr0 $lr6\n"
    "mvp/n64 $lc20@2.1 $d10@0\n"
    "mvp/n64 $lc0@0.0 $p0@3\n"
    "lpassa $lr0 $lr8 # pragma mncc kernel (not alone on its line)\n"
    "#pragma mncc kernels\n"
    "lpassa $lr0 $lr10\n"
    "#pragma mncc kernel\n"
    "lpassa $lr0 $lr12\n"
    "mvb2/n64 $d0 $lc0\n";

TEST_F(EmuMachine, KernelsSkipTheGroupsTheirTransfersLeaveOut) {
  Program program;
  Diagnostic error;
  ASSERT_TRUE(parseProgram(kTwoKernels, "t.vsm", program, error))
      << error.str();
  EXPECT_EQ(program.KernelStarts, (std::vector<uint32_t>{2, 5, 10}));
  ASSERT_TRUE(M->run(program, nullptr, error)) << error.str();
  constexpr unsigned PesPerGroup = NumPes / NumGroups;
  for (unsigned group = 0; group < NumGroups; ++group) {
    unsigned pe = group * PesPerGroup + 37;
    EXPECT_EQ(grf0(pe, 2), 5u) << group;
    EXPECT_EQ(grf0(pe, 4), group == 0 ? 5u : 0u) << group;
    EXPECT_EQ(grf0(pe, 6), group == 0 || group == 2 ? 5u : 0u) << group;
    EXPECT_EQ(grf0(pe, 8), group == 0 || group == 2 ? 5u : 0u) << group;
    EXPECT_EQ(grf0(pe, 10), group == 0 || group == 2 ? 5u : 0u) << group;
    // Broadcasts into the L2BMs read no group's results.
    EXPECT_EQ(grf0(pe, 12), 0u) << group;
  }
  EXPECT_EQ(M->staleGroups(), 0b1111);

  // Off, or with a dump of on-chip state, every group runs every step.
  for (bool dumpLm : {false, true}) {
    M.reset(new Machine);
    std::string text = kTwoKernels;
    if (dumpLm)
      text += "d get $lm2n0c0b0m0p0 1\n";
    else
      M->setSkipIdleGroups(false);
    ASSERT_TRUE(parseProgram(text, "t.vsm", program, error)) << error.str();
    std::string dump;
    ASSERT_TRUE(M->run(program, dump, error)) << error.str();
    for (unsigned group = 0; group < NumGroups; ++group)
      for (uint32_t word : {4u, 6u, 10u, 12u})
        EXPECT_EQ(grf0(group * PesPerGroup, word), 5u) << group << " " << word;
    EXPECT_EQ(M->staleGroups(), 0);
  }

  // A transfer in every group (no group named) keeps every group running.
  M.reset(new Machine);
  ASSERT_TRUE(parseProgram("d set $lr0 1 0000000000000005\n"
                           "#pragma mncc kernel\n"
                           "lpassa $lr0 $lr4\n"
                           "mvp/n64 $lc20@.1 $p10\n",
                           "t.vsm", program, error))
      << error.str();
  ASSERT_TRUE(M->run(program, nullptr, error)) << error.str();
  EXPECT_EQ(grf0(3 * PesPerGroup, 4), 5u);
  EXPECT_EQ(M->staleGroups(), 0);
}

TEST_F(EmuMachine, MvrIntoTheDramsSplitsEachUnitOverTheGroups) {
  // Manual 3.5.8.21: each 64 long words reduced over the eight L2BMs go 16
  // to each group's DRAM: long word 16g + o of unit i to DRAM g at
  // address + 16i + o.
  for (unsigned i = 0; i < 128; ++i)
    M->writeUpper(Space::L2BM, 5, 1000 + i, i + 1);
  run("mvrliadd/n128 $lc1000 $d40\n");
  EXPECT_EQ(M->readUpper(Space::DRAM, 0, 40), 1u);
  EXPECT_EQ(M->readUpper(Space::DRAM, 1, 40), 17u);
  EXPECT_EQ(M->readUpper(Space::DRAM, 3, 55), 64u);
  EXPECT_EQ(M->readUpper(Space::DRAM, 0, 56), 65u);
  EXPECT_EQ(M->readUpper(Space::DRAM, 3, 71), 128u);
  EXPECT_EQ(M->readUpper(Space::DRAM, 2, 71), 112u);
  EXPECT_EQ(M->readUpper(Space::DRAM, 0, 72), 0u);
  // With a named group every long word goes there.
  run("mvrliadd/n64 $lc1000 $d200@2\n");
  EXPECT_EQ(M->readUpper(Space::DRAM, 2, 263), 64u);
  EXPECT_EQ(M->readUpper(Space::DRAM, 0, 200), 0u);
}

TEST_F(EmuMachine, HalfReductionsUseTheirCircuits) {
  // The L1BM adds halves on its single circuit and rounds once at the end
  // (manual 4, RRN fadd); 16 * 1.0 = 16 = 0x4600 in every lane.
  run("d set $lr0n0c0b0 1 3e003e003e003e00\n"
      "l1bmrhfadd $lr0 $lb0\n"
      "l2bmrhfadd@0 $lb0 $lc0\n"
      "mvrhfadd/n64 $lc0 $d0@0\n");
  EXPECT_EQ(M->readUpper(Space::L1BM, 0, 0), 0x4600460046004600u);
  EXPECT_EQ(M->readUpper(Space::L2BM, 0, 0), 0x4600460046004600u);
  // Only L2BM 0 holds data: 16 + 7 * 0.
  EXPECT_EQ(M->readUpper(Space::DRAM, 0, 0), 0x4600460046004600u);
}

uint16_t halfOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return singleToHalf(bits);
}

TEST_F(EmuMachine, HalfMatrixRegisters) {
  // Y = I (16 x 16): instruction k writes rows 4k..4k+3, one a cycle, PE p
  // supplying columns 4p..4p+3 (manual 3.6.6). Each row is block-floated
  // with hbfn first (a block is one row).
  for (unsigned k = 0; k < 4; ++k)
    for (unsigned c = 0; c < 4; ++c)
      for (unsigned p = 0; p < 4; ++p) {
        unsigned row = 4 * k + c;
        uint64_t value = 0;
        if (row / 4 == p)
          value = uint64_t(halfOf(1.0f)) << (48 - 16 * (row % 4));
        M->writeLong(Space::GRF0, p, 8 * k + 2 * c, value);
      }
  // b = 1..16, four halves per PE.
  for (unsigned p = 0; p < 4; ++p) {
    uint64_t value = 0;
    for (unsigned j = 0; j < 4; ++j)
      value |= uint64_t(halfOf(float(4 * p + j + 1))) << (48 - 16 * j);
    M->writeLong(Space::GRF0, p, 32, value);
  }
  run("hbfn $lr0v $lr64v\nhbfn $lr8v $lr72v\nhbfn $lr16v $lr80v\n"
      "hbfn $lr24v $lr88v\n"
      "hmwrite $lr64v $lx0\nhmwrite $lr72v $lx4\nhmwrite $lr80v $lx8\n"
      "hmwrite $lr88v $lx12\n"
      "hbfn $lr32 $lr34\n"
      "hmmul $lx $lr34 $llr100\n"
      "hmread $llx2 $llr120v\n");
  // y = b as four singles per PE (a double long word).
  EXPECT_EQ(grf0(0, 100), 0x3f80000040000000u); // 1, 2
  EXPECT_EQ(grf0(0, 102), 0x4040000040800000u); // 3, 4
  EXPECT_EQ(grf0(3, 102), 0x4170000041800000u); // 15, 16
  // hmread moves two columns a cycle: cycle 0 reads columns 2 and 3. PE 0
  // holds rows 0..3: column 2 has its 1.0 (block float 0x3f00) in row 2.
  EXPECT_EQ(grf0(0, 120), 0x3e003e003f003e00u);
  EXPECT_EQ(grf0(0, 122), 0x3e003e003e003f00u);
  EXPECT_EQ(M->matrixElement(Space::MatX, 0, 5, 1), 0x3e003f003e003e00u);
}

TEST_F(EmuMachine, TIndirectWritesScatter) {
  // LM0 through T on a destination: cycle c writes LM0[T[c]] (manual 3.3,
  // LM0 address).
  run("d set $lr0 4 l0000000000000011l0000000000000022"
      "l0000000000000033l0000000000000044\n"
      "d set $lt 4 l0000000000000006l0000000000000000"
      "l0000000000000004l0000000000000002\n"
      "lpassa $lr0v $lmt\n");
  EXPECT_EQ(M->readLong(Space::LM0, 0, 6), 0x11u);
  EXPECT_EQ(M->readLong(Space::LM0, 0, 0), 0x22u);
  EXPECT_EQ(M->readLong(Space::LM0, 0, 4), 0x33u);
  EXPECT_EQ(M->readLong(Space::LM0, 0, 2), 0x44u);
}

} // namespace
