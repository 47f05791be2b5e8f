//===- VsmWriterTest.cpp - Runs of steps written side by side -------------===//

#include "mncc/codegen/VsmWriter.h"

#include <gtest/gtest.h>

using namespace mncc::codegen;

namespace {

TEST(VsmWriter, SideBySideIssuesStepIOfEachRunTogether) {
  VsmWriter copy, broadcast;
  copy.step({"l2bmb $lc0 $lb4096"});
  copy.step({"l2bmb $lc64 $lb4160"});
  copy.nop();
  broadcast.step({"l1bmp $llb0 $llm0v"});
  broadcast.nop();
  broadcast.step({"l1bmp $llb8 $llm16v"});
  broadcast.step({"l1bmp $llb16 $llm32v"});
  broadcast.nop(3);
  VsmWriter out;
  out.sideBySide(copy, broadcast);
  // Each run keeps its distances: the broadcast's nop sits under the
  // copy's second step, the copy's nop under the broadcast's third; the
  // idle steps both end with are one nop/3.
  EXPECT_EQ(out.text(), "l2bmb $lc0 $lb4096; l1bmp $llb0 $llm0v\n"
                        "l2bmb $lc64 $lb4160\n"
                        "l1bmp $llb8 $llm16v\n"
                        "l1bmp $llb16 $llm32v\n"
                        "nop/3\n");
  EXPECT_EQ(out.steps(), 7u);
}

TEST(VsmWriter, SideBySideWritesRunsWithWaitsOneAfterTheOther) {
  VsmWriter first, second;
  first.step({"l2bmb $lc0 $lb0"});
  first.wait(3);
  second.step({"l1bmp $llb0 $llm0v"});
  second.nop(2);
  VsmWriter out;
  out.sideBySide(first, second);
  EXPECT_EQ(out.text(), first.text() + second.text());
  EXPECT_EQ(out.steps(), first.steps() + second.steps());
}

TEST(VsmWriter, SideBySideOfAnEmptyRunIsTheOther) {
  VsmWriter empty, run;
  run.nop();
  run.step({"l1bmd $lb0 $ln0v"});
  VsmWriter out;
  out.sideBySide(empty, run);
  EXPECT_EQ(out.text(), "nop\nl1bmd $lb0 $ln0v\n");
  EXPECT_EQ(out.steps(), 2u);
}

} // namespace
