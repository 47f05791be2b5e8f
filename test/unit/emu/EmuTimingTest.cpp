//===- EmuTimingTest.cpp - mncc-sim step and cycle counts -----------------===//
//
// Feeds small VSM programs to Timing and checks steps, stalls, cycles and
// busy counters against hand-derived values: a PE step is 4 cycles (manual
// 3.6), MV statements issue once every four steps (manual chapter 1) and
// `wait` holds the PE until the tagged transfer is done (manual 3.6.5); the
// decisions T1-T9 of docs/target/mncore2.md fill in the rest.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Timing.h"

#include "gtest/gtest.h"

#include "mncc/emu/Machine.h"
#include "mncc/emu/Parser.h"

#include <memory>

using namespace mncc::emu;

namespace {

/// Parses Text into Program and runs its statements through a Timing.
class EmuTiming : public ::testing::Test {
protected:
  const TimingStats &time(const char *text, bool trace = false) {
    Diagnostic error;
    Prog = Program();
    EXPECT_TRUE(parseProgram(text, "t.vsm", Prog, error)) << error.str();
    T.reset(new Timing(trace));
    for (const Statement &stmt : Prog.Statements)
      T->onStatement(stmt);
    T->finish();
    return T->stats();
  }
  uint64_t busy(Unit unit) const { return T->stats().Busy[unsigned(unit)]; }

  Program Prog;
  std::unique_ptr<Timing> T;
};

TEST_F(EmuTiming, PeStatementIsOneStepOfFourCyclesPerRepetition) {
  const TimingStats &s = time("linc $lr0v $ln8v\n"
                              "nop/5\n");
  EXPECT_EQ(s.Steps, 6u);
  EXPECT_EQ(s.Cycles, 24u);
  EXPECT_EQ(s.PeStatements, 2u);
  EXPECT_EQ(s.Expressions, 1u);
  EXPECT_EQ(busy(Unit::Alu), 4u);
  EXPECT_EQ(busy(Unit::Pe), 24u);
  EXPECT_DOUBLE_EQ(s.seconds(), 24 / 750e6);
}

TEST_F(EmuTiming, DebugAndMaskStatementsTakeNoTime) {
  const TimingStats &s = time("d set $lr0n0c0b0m0p0 1 l0000000000000001\n"
                              "mask 0\n"
                              "d get $lr0n0c0b0m0p0 1\n");
  EXPECT_EQ(s.Steps, 0u);
  EXPECT_EQ(s.Cycles, 0u);
}

TEST_F(EmuTiming, EachExpressionBusiesItsUnitForTheStep) {
  const TimingStats &s = time("fvfma $lm0 $ls2 $ls2 $ln0 ; linc $lr0v $lr8v\n"
                              "gmwrite $lr16v $ly0\n"
                              "gmread $ly0 $lr40v\n"
                              "l2bmb@3 $lc8 $lb16\n"
                              "l1bmp $lb16 $lr0v\n");
  EXPECT_EQ(s.Steps, 5u);
  EXPECT_EQ(busy(Unit::Mau), 4u);
  EXPECT_EQ(busy(Unit::Alu), 4u);
  EXPECT_EQ(busy(Unit::Matrix), 8u);
  EXPECT_EQ(busy(Unit::L2bm), 4u);
  EXPECT_EQ(busy(Unit::L1bm), 4u);
  EXPECT_EQ(busy(Unit::Mv), 0u);
  // fvfma: 8 multiply-adds per MAB and cycle, 4 cycles, 1024 MABs.
  EXPECT_EQ(s.MauMacs, 8u * 4 * 1024);
}

TEST_F(EmuTiming, MultiplyAddsPerMabAndCycle) {
  Expression e;
  e.Op = Opcode::MFma;
  e.Prec = Precision::H;
  EXPECT_EQ(Timing::macsPerMabCycle(e), 256u);
  e.Prec = Precision::G;
  EXPECT_EQ(Timing::macsPerMabCycle(e), 64u);
  e.Prec = Precision::D;
  EXPECT_EQ(Timing::macsPerMabCycle(e), 8u);
  e.Op = Opcode::VFma;
  EXPECT_EQ(Timing::macsPerMabCycle(e), 2u);
  e.Prec = Precision::H;
  EXPECT_EQ(Timing::macsPerMabCycle(e), 16u);
  e.Op = Opcode::VAdd;
  EXPECT_EQ(Timing::macsPerMabCycle(e), 0u);
  EXPECT_EQ(Timing::unitOf(Opcode::MFma), Unit::Mau);
  EXPECT_EQ(Timing::unitOf(Opcode::MRead), Unit::Matrix);
  EXPECT_EQ(Timing::unitOf(Opcode::L1bmR4), Unit::L1bm);
  EXPECT_EQ(Timing::unitOf(Opcode::L2bmD), Unit::L2bm);
  EXPECT_EQ(Timing::unitOf(Opcode::Bfn), Unit::Alu);
  EXPECT_EQ(Timing::unitOf(Opcode::Wait), Unit::Pe);
}

/// Cycles one MV statement takes once its ports are free.
uint64_t transferCycles(const char *text) {
  Program program;
  Diagnostic error;
  EXPECT_TRUE(parseProgram(text, "t.vsm", program, error)) << error.str();
  EXPECT_EQ(program.Statements.size(), 1u);
  if (program.Statements.size() != 1)
    return 0;
  return mvTransferCycles(program.Statements[0].Transfer);
}

TEST(EmuTimingRates, PortRatesComeFromTheManual) {
  // DRAM: 128 GB/s per group at 750 MHz is 128e9 / 8 / 750e6 = 21 1/3 long
  // words a cycle, 64 in 3 cycles (manual 1.5); PDM 16 (3.5.8.4), L2BM 32
  // (3.5.8.21), a link between two groups 8 (3.5.8.4).
  EXPECT_DOUBLE_EQ(128e9 / 8 / ClockHz,
                   double(DramRate.LongWords) / double(DramRate.Cycles));
  EXPECT_EQ(mvPortRate(mvDramPort(3)).Cycles, 3u);
  EXPECT_EQ(mvPortRate(mvPdmPort(0)).LongWords, 16u);
  EXPECT_EQ(mvPortRate(mvL2bmPort(7)).LongWords, 32u);
  EXPECT_EQ(mvPortRate(mvLinkPort(2, 1)).LongWords, 8u);
  EXPECT_EQ(mvPortName(mvDramPort(2)), "dram@2");
  EXPECT_EQ(mvPortName(mvPdmPort(1)), "pdm@1");
  EXPECT_EQ(mvPortName(mvL2bmPort(5)), "l2bm@2.1");
  EXPECT_EQ(mvPortName(mvLinkPort(3, 0)), "link 3->0");
}

TEST(EmuTimingRates, PdmToL2bmSixteenWithinAGroupEightAcross) {
  // Manual 3.5.8.4: 16 long words a cycle within a group, 8 across.
  EXPECT_EQ(transferCycles("mvp/n64 $p0@0 $lc0@0.1\n"), 4u);
  EXPECT_EQ(transferCycles("mvp/n4096 $p0@0 $lc0@0.1\n"), 256u);
  EXPECT_EQ(transferCycles("mvp/n64 $p0@0 $lc0@2.1\n"), 8u);
  EXPECT_EQ(transferCycles("mvp/n4096 $p0@0 $lc0@2.1\n"), 512u);
  // The same paths back.
  EXPECT_EQ(transferCycles("mvp/n64 $lc0@0.1 $p0@0\n"), 4u);
  EXPECT_EQ(transferCycles("mvp/n64 $lc0@3.0 $p0@0\n"), 8u);
  // Without groups every group copies within itself at once: the rate is
  // per group, not summed over the four.
  EXPECT_EQ(transferCycles("mvp/n64 $p0 $lc0@.0\n"), 4u);
  EXPECT_EQ(transferCycles("mvp/n4096 $p0 $lc0@.1\n"), 256u);
}

TEST(EmuTimingRates, DramPathsRunAtTheDramRate) {
  // DRAM <-> L2BM: the DRAM's 64 long words per 3 cycles; 4096 long words
  // take 192 cycles, per group, so 4 x 4096 x 8 bytes in 256 ns is 512 GB/s
  // for the board.
  EXPECT_EQ(transferCycles("mvp/n64 $d0 $lc0@.0\n"), 3u);
  EXPECT_EQ(transferCycles("mvp/n4096 $d0 $lc0@.1\n"), 192u);
  EXPECT_EQ(transferCycles("mvp/n4096 $lc0@.1 $d0\n"), 192u);
  EXPECT_EQ(transferCycles("mvp/n4096 $d0@2 $lc0@2.0\n"), 192u);
  // 65 long words: ceil(65 x 3 / 64) = 4 cycles (sizes are checked by the
  // parser, the rate by this function).
  MvTransfer mv;
  mv.TransferKind = MvTransfer::Point;
  mv.From = Space::DRAM;
  mv.To = Space::L2BM;
  mv.Size = 65;
  EXPECT_EQ(mvTransferCycles(mv), 4u);
  // Across groups the link is slower than the DRAM.
  EXPECT_EQ(transferCycles("mvp/n4096 $d0@1 $lc0@0.0\n"), 512u);
  // PDM <-> DRAM: the PDM's 16 is slower than the DRAM's 21 1/3.
  EXPECT_EQ(transferCycles("mvp/n64 $p0@0 $d0@0\n"), 4u);
  EXPECT_EQ(transferCycles("mvp/n4096 $d0 $p0\n"), 256u);
  EXPECT_EQ(transferCycles("mvp/n64 $p0@0 $d0@3\n"), 8u);
  // PDM -> PDM of the same group reads and writes the one PDM: 128 long
  // words through it, 8 cycles; to another group the link's 8.
  EXPECT_EQ(transferCycles("mvp/n64 $p0@0 $p64@0\n"), 8u);
  EXPECT_EQ(transferCycles("mvp/n64 $p0@0 $p0@1\n"), 8u);
}

TEST(EmuTimingRates, BroadcastsAndReductions) {
  // mvb from one group reaches the other three over their links: 8.
  EXPECT_EQ(transferCycles("mvb/n64 $p0@0 $lc0\n"), 8u);
  EXPECT_EQ(transferCycles("mvb/n64 $d0@2 $lc0\n"), 8u);
  // mvb2 stays in each group: the DRAM's 64 per 3 cycles.
  EXPECT_EQ(transferCycles("mvb2/n64 $d0 $lc0\n"), 3u);
  EXPECT_EQ(transferCycles("mvb2/n4096 $d0 $lc0\n"), 192u);
  // mvr into the DRAMs: 32 long words a cycle on the L2BM side (manual
  // 3.5.8.21); each group sends 16 of every 64 to each other group, 2
  // cycles at 8, and each DRAM takes 16.
  EXPECT_EQ(transferCycles("mvrdfadd/n64 $lc0 $d0\n"), 2u);
  EXPECT_EQ(transferCycles("mvrdfadd/n4096 $lc0 $d0\n"), 128u);
  // Into one group's PDM every other group sends all it has: the link.
  EXPECT_EQ(transferCycles("mvrffadd/n64 $lc0 $p0@0\n"), 8u);
  // mvr2 within each group: the L2BMs' 32, then the destination's rate.
  EXPECT_EQ(transferCycles("mvr2dfadd/n64 $lc0 $d0\n"), 3u);
  EXPECT_EQ(transferCycles("mvr2dfadd/n64 $lc0 $p0\n"), 4u);
  EXPECT_EQ(transferCycles("mvnop\n"), 0u);
}

TEST(EmuTimingRates, SpreadingTransfers) {
  // mvb4 (manual 3.5.8.16): of every 64 long words each group's DRAM gives
  // 32, 16 to each L2B of every group; each group sends 32 to each other
  // one over its link at 8: 4 cycles, the manual's 16 a cycle on the L2BM
  // side and 8 on the DRAM side (32 / 8 = 4 cycles too).
  EXPECT_EQ(transferCycles("mvb4/n64 $d0 $lc0\n"), 4u);
  EXPECT_EQ(transferCycles("mvb4/n4096 $d0 $lc0\n"), 256u);
  // mvr4 (3.5.8.17) moves the same long words the other way.
  EXPECT_EQ(transferCycles("mvr4dfadd/n64 $lc0 $d0\n"), 4u);
  // mvd between one PDM and the eight L2BMs: the PDM's 16 a cycle, 128
  // long words in 8 cycles (each other group's link carries 32 of them, 4
  // cycles); between one PDM and the four DRAMs, 64 in 4.
  EXPECT_EQ(transferCycles("mvd/n128 $p0@0 $lc0\n"), 8u);
  EXPECT_EQ(transferCycles("mvd/n128 $lc0 $p0@3\n"), 8u);
  EXPECT_EQ(transferCycles("mvd/n64 $p0@1 $d0\n"), 4u);
  EXPECT_EQ(transferCycles("mvd/n4096 $d0 $p0@2\n"), 256u);
}

TEST_F(EmuTiming, MvIssuesOnTheSlotOnceEveryFourSteps) {
  // At cycle 0 the slot is free: PDM -> DRAM in every group, 64 long
  // words at the PDM's 16 a cycle, cycles 0-3.
  const TimingStats &s = time("mvp/n64 $p0 $d0\n");
  EXPECT_EQ(s.Cycles, 4u);
  EXPECT_EQ(busy(Unit::Mv), 4u);
  EXPECT_EQ(s.MvStatements, 1u);
  // After one step (cycle 4) the next slot is at cycle 16; 4096 long words
  // DRAM -> L2BM take 192 cycles: done at 208.
  const TimingStats &t = time("linc $lr0v $ln8v\n"
                              "mvp/n4096 $d0 $lc0@.0\n");
  EXPECT_EQ(t.Cycles, 208u);
  EXPECT_EQ(busy(Unit::Mv), 192u);
  // Every MV statement takes a slot of its own, mvnop included: 0, 16, 32.
  const TimingStats &u = time("mvp/n64 $p0@0 $d0@0\n"
                              "mvnop\n"
                              "mvp/n64 $p0@1 $d0@1\n");
  EXPECT_EQ(u.Cycles, 36u);
  EXPECT_EQ(u.Steps, 0u);
}

TEST_F(EmuTiming, TransfersOnOtherPortsRunTogether) {
  // Group 0's DRAM and L2BM, then group 1's: the second issues at 16
  // while the first runs until 192, and both run at the full rate.
  const TimingStats &s = time("mvp/n4096 $d0@0 $lc0@0.0\n"
                              "mvp/n4096 $d0@1 $lc0@1.0\n");
  EXPECT_EQ(s.Cycles, 16u + 192u);
  EXPECT_EQ(s.MvQueuedCycles, 0u);
  EXPECT_EQ(busy(Unit::Mv), 384u);
  EXPECT_EQ(T->lastMvStart(), 16u);
  EXPECT_EQ(T->lastMvEnd(), 208u);
}

TEST_F(EmuTiming, TransfersOnAPortRunInIssueOrder) {
  // The second transfer reads group 0's DRAM, which the first holds until
  // 192: it waits 176 cycles after its slot at 16 and runs 192-194.
  const TimingStats &s = time("mvp/n4096 $d0@0 $lc0@0.0\n"
                              "mvp/n64 $d8192@0 $lc0@0.1\n");
  EXPECT_EQ(s.MvQueuedCycles, 176u);
  EXPECT_EQ(T->lastMvStart(), 192u);
  EXPECT_EQ(s.Cycles, 195u);
  // A transfer without groups uses every group's ports: it waits for a
  // single transfer in any one group.
  time("mvp/n4096 $p0@3 $lc0@3.1\n"
       "mvp/n64 $p0 $d0\n");
  EXPECT_EQ(T->lastMvStart(), 256u);
  EXPECT_EQ(T->lastMvEnd(), 260u);
}

TEST_F(EmuTiming, ASharedPortMakesTransfersCompleteInOrder) {
  // Manual 3.5.1: two transfers on the same path complete in issue order,
  // so waiting for the second is enough. The first (PDM 0 to L2BM 2.1 over
  // the link, 512 cycles) holds the link and the L2BM until 512; the
  // second, short one runs 512-519, and the wait stalls until 520.
  const TimingStats &s = time("mvp/n4096 $p0@0 $lc0@2.1\n"
                              "mvp/n64i1 $p4096@0 $lc4096@2.1\n"
                              "nop ; wait i1\n");
  EXPECT_EQ(T->lastMvStart(), 512u);
  EXPECT_EQ(s.StallCycles, 520u);
  EXPECT_EQ(s.Cycles, 524u);
}

TEST_F(EmuTiming, WaitHoldsThePeUntilTheTaggedTransferIsDone) {
  const TimingStats &s = time("mvp/n4096i7 $p0 $d0\n"
                              "linc $lr0v $ln8v\n"
                              "linc $lr0v $ln8v ; wait i7\n"
                              "linc $lr0v $ln8v ; wait i7\n");
  // Transfer 0-255 (the PDM's 16 a cycle); step 0-3; stall 4-255; steps
  // 256-259 and 260-263 (the second wait finds the transfer done).
  EXPECT_EQ(s.StallCycles, 252u);
  EXPECT_EQ(s.Steps, 3u);
  EXPECT_EQ(s.Cycles, 264u);
  EXPECT_EQ(T->cycle(), 264u);
}

TEST_F(EmuTiming, AStalledWaitHoldsTheMvIssueToo) {
  // Manual 3.6.13: the wait stops MV issue as well. The step stalls until
  // 256 and runs 256-259; the MV statement after it takes the first slot
  // at or after the PE clock, 272, not the slot at 16.
  time("mvp/n4096i2 $p0 $d0\n"
       "nop ; wait i2\n"
       "mvp/n64 $p0@0 $lc0@0.0\n");
  EXPECT_EQ(T->lastMvStart(), 272u);
}

TEST_F(EmuTiming, WaitForATagNoTransferCarriedDoesNotStall) {
  const TimingStats &s = time("mvp/n64i1 $p0 $d0\n"
                              "nop ; wait i2\n");
  EXPECT_EQ(s.StallCycles, 0u);
  EXPECT_EQ(s.Cycles, 4u);
}

TEST_F(EmuTiming, WaitFindsEveryTransferOfItsTag) {
  // Both tagged 1: 0-255 on group 0's PDM and L2BM, then 16-19 on group
  // 1's. The second is done first; the wait waits for both.
  const TimingStats &s = time("mvp/n4096i1 $p0@0 $lc0@0.0\n"
                              "mvp/n64i1 $p0@1 $lc0@1.0\n"
                              "nop ; wait i1\n");
  EXPECT_EQ(s.StallCycles, 256u);
  EXPECT_EQ(s.Cycles, 260u);
}

TEST_F(EmuTiming, TraceKeepsOneEventPerInstruction) {
  time("linc $lr0v $ln8v\n", /*trace=*/false);
  EXPECT_TRUE(T->events().empty());
  time("fvfma $lm0 $ls2 $ls2 $ln0 ; linc $lr0v $lr8v\n"
       "mvp/n64 $p0 $d0\n",
       /*trace=*/true);
  const std::vector<TraceEvent> &events = T->events();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[3].Lane, 0u);
  EXPECT_EQ(events[0].Track, Unit::Pe);
  EXPECT_EQ(events[1].Track, Unit::Mau);
  EXPECT_EQ(events[1].Expression, 0);
  EXPECT_EQ(events[2].Track, Unit::Alu);
  EXPECT_EQ(events[2].Expression, 1);
  EXPECT_EQ(events[3].Track, Unit::Mv);
  EXPECT_EQ(events[3].Start, 16u);
  EXPECT_EQ(events[3].Line, 2u);
  std::string json = T->traceJson();
  EXPECT_NE(json.find("\"name\":\"linc $lr0v $lr8v\",\"cat\":\"alu\""),
            std::string::npos);
  EXPECT_EQ(json.substr(json.size() - 3), "]}\n");
}

TEST_F(EmuTiming, ReportListsEveryCounter) {
  time("linc $lr0v $ln8v\n");
  std::string report = T->report();
  EXPECT_NE(report.find("steps: 1\n"), std::string::npos);
  EXPECT_NE(report.find("cycles: 4\n"), std::string::npos);
  EXPECT_NE(report.find("time-us: 0.0053 (750 MHz)\n"), std::string::npos);
  EXPECT_NE(report.find("busy-alu: 4\n"), std::string::npos);
  EXPECT_NE(report.find("busy-mv: 0\n"), std::string::npos);
}

TEST(EmuTimingMachine, RunFeedsTheTimerEveryStatement) {
  Program program;
  Diagnostic error;
  ASSERT_TRUE(parseProgram("d set $lr0n0c0b0m0p0 1 l0000000000000001\n"
                           "mvp/n64i1 $p0 $d0\n"
                           "linc $lr0v $ln8v ; wait i1\n"
                           "nop/2\n"
                           "d get $ln8n0c0b0m0p0 1\n",
                           "t.vsm", program, error))
      << error.str();
  std::unique_ptr<Machine> machine(new Machine);
  Timing timing;
  machine->setTiming(&timing);
  std::string dump;
  ASSERT_TRUE(machine->run(program, dump, error));
  // The transfer runs 0-3 (the PDM's 16 long words a cycle); the step
  // stalls 0-3, runs 4-7, nop/2 8-15.
  EXPECT_EQ(timing.stats().Steps, 3u);
  EXPECT_EQ(timing.stats().StallCycles, 4u);
  EXPECT_EQ(timing.stats().Cycles, 16u);
  // The functional result is the same with and without a timer.
  EXPECT_EQ(machine->readLong(Space::LM1, 0, 8), 2u);
  machine->setTiming(nullptr);
  ASSERT_TRUE(machine->run(program, dump, error));
  EXPECT_EQ(timing.stats().Steps, 3u);
}

} // namespace
