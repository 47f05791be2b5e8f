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

TEST(VsmWriter, SideBySideGivesAWaitAStepOfItsOwn) {
  VsmWriter first, second;
  first.step({"l2bmb $lc0 $lb0"});
  first.wait(3);
  second.step({"l1bmp $llb0 $llm0v"});
  second.nop(2);
  VsmWriter out;
  out.sideBySide(first, second);
  // The wait is an idle step for the second run too: its first nop.
  EXPECT_EQ(out.text(), "l2bmb $lc0 $lb0; l1bmp $llb0 $llm0v\n"
                        "nop; wait i03\n"
                        "nop\n");
  EXPECT_EQ(out.steps(), 3u);
}

TEST(VsmWriter, SideBySideKeepsStepsTheIssueRulesRefuseApart) {
  // Two L2BM instructions never issue together (manual 3.6.4), nor an
  // LM1 read beside a write of other LM1 words (one port): the second
  // run's step waits for the next step.
  VsmWriter first, second;
  first.step({"l2bmb $lc0 $lb0"});
  first.step({"hmwrite $lln32v $lly0"});
  second.step({"l2bmb $lc64 $lb64"});
  second.step({"l1bmd $lb0 $ln1000v"});
  VsmWriter out;
  out.sideBySide(first, second);
  EXPECT_EQ(out.text(), "l2bmb $lc0 $lb0\n"
                        "hmwrite $lln32v $lly0; l2bmb $lc64 $lb64\n"
                        "l1bmd $lb0 $ln1000v\n");
  EXPECT_EQ(out.steps(), 3u);
}

TEST(VsmWriter, SideBySidePassesTransfersAndContinuesTheTags) {
  VsmWriter out;
  EXPECT_EQ(out.newTag(), 1u);
  VsmWriter first = out.branch();
  unsigned tag = first.newTag();
  EXPECT_EQ(tag, 2u);
  first.statement("mvb2/n64" + VsmWriter::tagName(tag) + " $d0 $lc0");
  first.wait(tag);
  first.step({"l2bmb $lc0 $lb0"});
  VsmWriter second = first.branch();
  EXPECT_EQ(second.newTag(), 3u);
  second.step({"hbfn $lm0v $lm0v"});
  second.step({"hbfn $lm8v $lm8v"});
  out.sideBySide(first, second);
  // The MV goes out first (it takes no step), the wait alone, the copy
  // beside the second conversion.
  EXPECT_EQ(out.text(), "mvb2/n64i02 $d0 $lc0\n"
                        "nop; wait i02\n"
                        "l2bmb $lc0 $lb0; hbfn $lm0v $lm0v\n"
                        "hbfn $lm8v $lm8v\n");
  EXPECT_EQ(out.newTag(), 4u);
}

TEST(VsmWriter, CutTakesWhatWasWrittenSinceTheMark) {
  VsmWriter out;
  out.step({"zero $lm0v"});
  EXPECT_EQ(out.newTag(), 1u);
  VsmWriter::Mark at = out.mark();
  unsigned tag = out.newTag();
  out.statement("mvb2/n64" + VsmWriter::tagName(tag) + " $d0 $lc0");
  out.wait(tag);
  out.step({"l1bmm $llb0 $llm0v"});
  VsmWriter image = out.cut(at);
  EXPECT_EQ(out.text(), "zero $lm0v\n");
  EXPECT_EQ(out.steps(), 1u);
  EXPECT_EQ(image.text(), "mvb2/n64i02 $d0 $lc0\nnop; wait i02\n"
                          "l1bmm $llb0 $llm0v\n");
  EXPECT_EQ(image.steps(), 2u);
  // The cut run's tag is given out again once the run is written back.
  VsmWriter stream = image.branch();
  EXPECT_EQ(stream.newTag(), 3u);
  out.sideBySide(image, stream);
  EXPECT_EQ(out.newTag(), 4u);
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
