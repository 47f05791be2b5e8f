//===- EmuHazardsTest.cpp - mncc-sim read-before-write checks -------------===//
//
// Small VSM programs against the latency model of docs/target/mncore2.md,
// "Hazard checks" (H1-H13): each read cycle and completion cycle below is
// worked out by hand from the step clock (a step is 4 cycles, MV slots every
// 16 cycles) and the latencies of Hazards.h.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Hazards.h"

#include "gtest/gtest.h"

#include "mncc/emu/Parser.h"

using namespace mncc::emu;

namespace {

std::vector<Hazard> check(const char *text) {
  Program program;
  Diagnostic error;
  EXPECT_TRUE(parseProgram(text, "t.vsm", program, error)) << error.str();
  return checkHazards(program);
}

TEST(EmuHazards, AluResultReadInTheNextStep) {
  // linc issues in cycle 0 and its $lr2 is readable from cycle 6; the
  // next step reads it in cycle 4.
  std::vector<Hazard> h = check("linc $lr0 $lr2\n"
                                "linc $lr2 $lr4\n");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].Line, 2u);
  EXPECT_EQ(h[0].Column, 6u);
  EXPECT_EQ(h[0].Location, "$r2");
  EXPECT_EQ(h[0].ReadCycle, 4u);
  EXPECT_EQ(h[0].WriterLine, 1u);
  EXPECT_EQ(h[0].ReadyCycle, 6u);
  EXPECT_FALSE(h[0].StaleForwarding);
  EXPECT_EQ(h[0].str("t.vsm"),
            "t.vsm:2:6: hazard: $r2 read in cycle 4 (step 1) before the "
            "write from line 1 completes in cycle 6");
}

TEST(EmuHazards, OneStepBetweenAnAluWriteAndItsReadIsEnough) {
  EXPECT_TRUE(check("linc $lr0 $lr2\n"
                    "nop\n"
                    "linc $lr2 $lr4\n")
                  .empty());
  // Other addresses and other memories do not conflict.
  EXPECT_TRUE(check("linc $lr0 $lr2\n"
                    "linc $lr4 $ls2\n"
                    "linc $ln2 $lm2\n")
                  .empty());
}

TEST(EmuHazards, AutoStrideRangesOverlap) {
  // $lr0v writes long words 0, 2, 4, 6; $lr6 reads word 6 of them.
  std::vector<Hazard> h = check("lpassa $lm0v $lr0v\n"
                                "lpassa $lr6 $ln0\n");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].Location, "$r6");
  EXPECT_TRUE(check("lpassa $lm0v $lr0v\n"
                    "lpassa $lr8 $ln0\n")
                  .empty());
}

TEST(EmuHazards, MauResultsNeedTwoStepsBetween) {
  // fvfma in cycle 0 completes in cycle 10: a read in cycle 8 is early,
  // one in cycle 12 is not.
  std::vector<Hazard> h = check("fvfma $lm0 $lr2 $ls4 $ln0\n"
                                "nop\n"
                                "lpassa $ln0 $lr0\n");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].Location, "$n0");
  EXPECT_EQ(h[0].ReadCycle, 8u);
  EXPECT_EQ(h[0].ReadyCycle, 10u);
  EXPECT_TRUE(check("fvfma $lm0 $lr2 $ls4 $ln0\n"
                    "nop/2\n"
                    "lpassa $ln0 $lr0\n")
                  .empty());
}

TEST(EmuHazards, ForwardingHoldsThePreviousStepOnly) {
  // The next step may read $aluf and $mauf.
  EXPECT_TRUE(check("linc $lr0 $lr2 ; fvmul $lm0 $ls2 $ln0\n"
                    "linc $aluf $lr4 ; fvadd $mauf $lm2 $ln4\n")
                  .empty());
  // nop and noforward leave the latches as they are.
  EXPECT_TRUE(check("linc $lr0 $lr2\n"
                    "nop\n"
                    "noforward ; l1bmp $lb0 $ls0\n"
                    "linc $aluf $lr4\n")
                  .empty());
  // A step with no ALU instruction leaves $aluf without a result.
  std::vector<Hazard> h = check("linc $lr0 $lr2\n"
                                "l1bmp $lb0 $ls0\n"
                                "linc $aluf $lr4\n");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_TRUE(h[0].StaleForwarding);
  EXPECT_EQ(h[0].Location, "$aluf");
  EXPECT_EQ(h[0].WriterLine, 2u);
  EXPECT_EQ(h[0].str("t.vsm"),
            "t.vsm:3:6: hazard: $aluf read in cycle 8 (step 2) holds no "
            "result: the step at line 2 updated it without one");
  // Before any step.
  h = check("linc $lbf $lr4\n");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].WriterLine, 0u);
}

TEST(EmuHazards, MvTransfersCompleteAfterTheirSlots) {
  // mvp/n64 takes the slot at cycle 0 and, at the PDM's 16 long words a
  // cycle, is done in cycle 4; l2bmb reads the L2BM in cycle 0.
  std::vector<Hazard> h = check("mvp/n64i1 $p0 $lc0\n"
                                "l2bmb $lc0 $lb0\n");
  ASSERT_EQ(h.size(), 1u);
  // Without a group, every group's L2B 0.
  EXPECT_EQ(h[0].Location, "$lc0");
  EXPECT_EQ(h[0].ReadCycle, 0u);
  EXPECT_EQ(h[0].ReadyCycle, 4u);
  // wait i1 holds the step until cycle 4.
  EXPECT_TRUE(check("mvp/n64i1 $p0 $lc0\n"
                    "nop ; wait i1\n"
                    "l2bmb $lc0 $lb0\n")
                  .empty());
  // Other long words are not touched.
  EXPECT_TRUE(check("mvp/n64 $p0@0 $lc0@0.1\n"
                    "l2bmb $lc64 $lb0\n")
                  .empty());
  h = check("mvp/n64 $p0@0 $lc0@0.1\n"
            "l2bmb $lc0 $lb0\n");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].Location, "$lc0@0.1");
}

TEST(EmuHazards, MvReadsWaitForL2bmWrites) {
  // l2bm@0 issues in cycle 12 and completes in 18; the PE clock is then
  // at 16, so the MV slot at 16 reads too early; one step later the next
  // slot is at 32.
  std::vector<Hazard> h = check("nop/3\n"
                                "l2bm@0 $lb0 $lc0\n"
                                "mvp/n64 $lc0@0.0 $p0@0\n");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].Location, "$lc0@0.0");
  EXPECT_EQ(h[0].Column, 9u);
  EXPECT_EQ(h[0].ReadCycle, 16u);
  EXPECT_EQ(h[0].ReadyCycle, 18u);
  EXPECT_TRUE(check("nop/3\n"
                    "l2bm@0 $lb0 $lc0\n"
                    "nop\n"
                    "mvp/n64 $lc0@0.0 $p0@0\n")
                  .empty());
}

TEST(EmuHazards, QueuedTransfersReadTheirSourceWhenTheyStart) {
  // The first transfer holds PDM 0 until 256; the second, slot 16, starts
  // reading L2BM 0.1 only then. The l2bm@0 after it in the program lands
  // in cycle 6, before the second transfer has read the L2BM: the MV
  // would move the new data, not the old (decision H14).
  std::vector<Hazard> h = check("mvp/n4096 $p0@0 $lc0@0.0\n"
                                "mvp/n64 $lc512@0.1 $p8192@0\n"
                                "l2bm@0 $lb0 $lc512\n");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_TRUE(h[0].OverwritesMvSource);
  EXPECT_EQ(h[0].Line, 3u);
  EXPECT_EQ(h[0].Column, 13u);
  EXPECT_EQ(h[0].Location, "$lc512@0.1");
  EXPECT_EQ(h[0].ReadCycle, 6u);
  EXPECT_EQ(h[0].WriterLine, 2u);
  EXPECT_EQ(h[0].ReadyCycle, 260u);
  EXPECT_EQ(h[0].str("t.vsm"),
            "t.vsm:3:13: hazard: $lc512@0.1 written in cycle 6 (step 1) "
            "while the MV transfer from line 2 reads it until cycle 260");
  // Waiting for the transfer first, or writing elsewhere, is safe.
  EXPECT_TRUE(check("mvp/n4096 $p0@0 $lc0@0.0\n"
                    "mvp/n64i1 $lc512@0.1 $p8192@0\n"
                    "nop ; wait i1\n"
                    "l2bm@0 $lb0 $lc512\n")
                  .empty());
  EXPECT_TRUE(check("mvp/n4096 $p0@0 $lc0@0.0\n"
                    "mvp/n64 $lc512@0.1 $p8192@0\n"
                    "l2bm@0 $lb0 $lc576\n")
                  .empty());
  // An L2BM written before the transfer in program order is read once the
  // write has landed: slot 16 after a write ready at 6.
  EXPECT_TRUE(check("l2bm@0 $lb0 $lc512\n"
                    "mvp/n64 $lc512@0.1 $p8192@0\n")
                  .empty());
}

TEST(EmuHazards, TransfersSharingAPortNeverRace) {
  // The second reads what the first writes; it shares L2BM 0.0 with it, so
  // it starts only when the first is done (T4): no hazard, no wait needed.
  EXPECT_TRUE(check("mvp/n4096 $d0@0 $lc0@0.0\n"
                    "mvp/n4096 $lc0@0.0 $p0@1\n")
                  .empty());
  // A reduction into the DRAMs writes a quarter of its size in each group.
  EXPECT_TRUE(check("mvrdfadd/n256 $lc0 $d0\n"
                    "mvp/n64 $d64@0 $lc0@0.0\n")
                  .empty());
}

TEST(EmuHazards, L1bmReductionsTakeAStepPerStage) {
  // l1bmr (two stages) completes in cycle 14, l1bmr4 in 10, l1bmm@ in 6,
  // as the L2BM instructions see them.
  std::vector<Hazard> h = check("l1bmrdfadd $lr0v $lb0\n"
                                "nop/2\n"
                                "l2bm@0 $lb0 $lc0\n");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].ReadCycle, 12u);
  EXPECT_EQ(h[0].ReadyCycle, 14u);
  EXPECT_TRUE(check("l1bmrdfadd $lr0v $lb0\n"
                    "nop/3\n"
                    "l2bm@0 $lb0 $lc0\n")
                  .empty());
  // L1BM -> PE transfers wait two steps even behind l1bmr (H6: manual
  // 3.6.8.2, PFN's tutorial), one behind l1bmm@.
  EXPECT_TRUE(check("l1bmrdfadd $lr0v $lb0\n"
                    "nop/2\n"
                    "l1bmp $lb0 $ls0v\n")
                  .empty());
  h = check("l1bmrdfadd $lr0v $lb0\n"
            "nop\n"
            "l1bmp $lb0 $ls0v\n");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].ReadyCycle, 12u);
  EXPECT_TRUE(check("l1bmr4dfadd $lr0v $lb0\n"
                    "nop/2\n"
                    "l1bmp $lb0 $ls0v\n")
                  .empty());
  EXPECT_TRUE(check("l1bmm@0 $lr0v $lb0\n"
                    "nop\n"
                    "l1bmp $lb0 $ls0v\n")
                  .empty());
}

TEST(EmuHazards, AddressInputsAreReadAStepEarly) {
  // T written in cycle 0 completes in 6; $lmt in step 2 needs it in
  // cycle 8 - 4 = 4.
  std::vector<Hazard> h = check("lpassa $lr0 $t\n"
                                "nop\n"
                                "lpassa $lmt $lr4\n");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].Location, "$t (cycle 0)");
  EXPECT_EQ(h[0].ReadCycle, 4u);
  EXPECT_TRUE(check("lpassa $lr0 $t\n"
                    "nop/2\n"
                    "lpassa $lmt $lr4\n")
                  .empty());
  // Every LM0 access, written or read, adds the base address register.
  h = check("lpassa $lr0 $lmb\n"
            "nop\n"
            "lpassa $lr2 $lm8\n");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].Location, "$mb");
  EXPECT_EQ(h[0].Column, 13u);
  EXPECT_TRUE(check("lpassa $lr0 $lmb\n"
                    "nop\n"
                    "lpassa $lr2 $ln8\n")
                  .empty());
}

TEST(EmuHazards, ZeroFlushMasksAreReadAtIssue) {
  // A zero-flush mask acts on the inputs: the entry written in cycle 0
  // (ready in 6) is read in cycle 4.
  std::vector<Hazard> h = check("ixor $lr0 $ls2 $omr1\n"
                                "lpassa/$imr1 $lr4 $lr6\n");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].Location, "$omr1");
  EXPECT_EQ(h[0].Column, 1u);
  EXPECT_EQ(h[0].ReadCycle, 4u);
  EXPECT_TRUE(check("ixor $lr0 $ls2 $omr1\n"
                    "nop\n"
                    "lpassa/$imr1 $lr4 $lr6\n")
                  .empty());
}

TEST(EmuHazards, WriteMasksAreReadWhereTheResultLands) {
  // PFN's tutorial masks with $omr1 in the step after writing it (H15):
  // the write mask reads its entry when the result is written back, six
  // cycles after issue, behind the entry's own write.
  EXPECT_TRUE(check("lpassa $lm0v $omr1\n"
                    "lpassa $lr4 $lr6/$imr1\n")
                  .empty());
  EXPECT_TRUE(check("lpassa $lm0v $omr1\n"
                    "maskn 1\n"
                    "lpassa $lm8v $ln0v\n")
                  .empty());
  // An MAU result written into an entry lands in cycle 10; an ALU write
  // masked by it in the next step lands in cycle 4 + 6 = 10, not before.
  EXPECT_TRUE(check("fvadd $lr0v $ls0v $omr1\n"
                    "lpassa $lr4 $lr6/$imr1\n")
                  .empty());
  // The MAU write in the step after needs its entry in cycle 4 + 10 = 14.
  std::vector<Hazard> h = check("fvadd $lr0v $ls0v $omr1\n"
                                "lpassa/$imr1 $lr4 $lr6\n");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].ReadyCycle, 10u);
}

TEST(EmuHazards, MatrixRegistersAreReadTheNextStep) {
  EXPECT_TRUE(check("dmwrite $lr0v $lx0\n"
                    "dmmulu $lx $ls0v $nowrite\n"
                    "dmfmad $lx $ls0v $mauf $lm8v\n")
                  .empty());
}

} // namespace
