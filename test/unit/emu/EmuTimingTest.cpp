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
  const TimingStats &s = time("fvfma $lm0 $lm2 $lm4 $ln0 ; linc $lr0v $lr8v\n"
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

TEST_F(EmuTiming, MvIssuesOnTheSlotOnceEveryFourSteps) {
  // At cycle 0 the slot is free: 64 long words take one slot, 0-15.
  const TimingStats &s = time("mvp/n64 $p0 $d0\n");
  EXPECT_EQ(s.Cycles, 16u);
  EXPECT_EQ(busy(Unit::Mv), 16u);
  EXPECT_EQ(s.MvStatements, 1u);
  // After one step (cycle 4) the next slot is at cycle 16; 65 long words
  // round up to two slots: done at 48.
  const TimingStats &t = time("linc $lr0v $ln8v\n"
                              "mvp/n65 $p0 $d0\n");
  EXPECT_EQ(t.Cycles, 48u);
  EXPECT_EQ(busy(Unit::Mv), 32u);
}

TEST_F(EmuTiming, MvTransfersRunOneAtATime) {
  // 0-31, then 32-47; mvnop fills the slot at 48 and moves nothing, so the
  // last transfer issues at 64.
  const TimingStats &s = time("mvp/n128 $p0 $d0\n"
                              "mvp/n64 $p0 $d1000\n"
                              "mvnop\n"
                              "mvp/n64 $p0 $d2000\n");
  EXPECT_EQ(s.Cycles, 80u);
  EXPECT_EQ(busy(Unit::Mv), 64u);
  EXPECT_EQ(s.Steps, 0u);
}

TEST_F(EmuTiming, WaitHoldsThePeUntilTheTaggedTransferIsDone) {
  const TimingStats &s = time("mvp/n128i7 $p0 $d0\n"
                              "linc $lr0v $ln8v\n"
                              "linc $lr0v $ln8v ; wait i7\n"
                              "linc $lr0v $ln8v ; wait i7\n");
  // Transfer 0-31; step 0-3; stall 4-31; steps 32-35 and 36-39 (the second
  // wait finds the transfer done).
  EXPECT_EQ(s.StallCycles, 28u);
  EXPECT_EQ(s.Steps, 3u);
  EXPECT_EQ(s.Cycles, 40u);
  EXPECT_EQ(T->cycle(), 40u);
}

TEST_F(EmuTiming, WaitForATagNoTransferCarriedDoesNotStall) {
  const TimingStats &s = time("mvp/n64i1 $p0 $d0\n"
                              "nop ; wait i2\n");
  EXPECT_EQ(s.StallCycles, 0u);
  EXPECT_EQ(s.Cycles, 16u); // the transfer ends after the step
}

TEST_F(EmuTiming, WaitFindsTheLastTransferOfItsTag) {
  // Both tagged 1: 0-15 and 16-31; the wait waits for the second.
  const TimingStats &s = time("mvp/n64i1 $p0 $d0\n"
                              "mvp/n64i1 $p0 $d100\n"
                              "nop ; wait i1\n");
  EXPECT_EQ(s.StallCycles, 32u);
  EXPECT_EQ(s.Cycles, 36u);
}

TEST_F(EmuTiming, TraceKeepsOneEventPerInstruction) {
  time("linc $lr0v $ln8v\n", /*trace=*/false);
  EXPECT_TRUE(T->events().empty());
  time("fvfma $lm0 $lm2 $lm4 $ln0 ; linc $lr0v $lr8v\n"
       "mvp/n64 $p0 $d0\n",
       /*trace=*/true);
  const std::vector<TraceEvent> &events = T->events();
  ASSERT_EQ(events.size(), 4u);
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
  EXPECT_EQ(timing.stats().Steps, 3u);
  EXPECT_EQ(timing.stats().StallCycles, 16u);
  EXPECT_EQ(timing.stats().Cycles, 28u);
  // The functional result is the same with and without a timer.
  EXPECT_EQ(machine->readLong(Space::LM1, 0, 8), 2u);
  machine->setTiming(nullptr);
  ASSERT_TRUE(machine->run(program, dump, error));
  EXPECT_EQ(timing.stats().Steps, 3u);
}

} // namespace
