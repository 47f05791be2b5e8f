//===- EmuInstructionAuditTest.cpp - Every instruction of the manual ------===//
//
// One statement for every instruction MNCore2.md lists (manual chapter 3:
// MV 3.5, PE 3.6.5-3.6.9): the ones mncc-sim models parse, the others are
// refused as unsupported with their line and column. The list is the
// "Instruction audit" table of docs/target/mncore2.md; keep both in step.
//
//===----------------------------------------------------------------------===//

#include "AuditStatements.h"

#include "mncc/emu/Parser.h"

#include "gtest/gtest.h"

using namespace mncc::emu;

namespace {

struct Missing {
  const char *Text;
  /// Part of the message, which names the instruction or operand.
  const char *Says;
};

const Missing Unsupported[] = {
    {"mvp/n64 $di0 $lc0", "DAR is not supported"},
    {"l2bmdars $lc0@.0 $dar0", "unsupported L2BM instruction"},
    {"l2bmdarw", "unsupported L2BM instruction"},
    {"lrsqrt $lr0 $lr2", "unsupported instruction 'lrsqrt'"},
    {"l1bmrffaddr $lr0 $lb0", "only supported together on ffadd"},
    {"l1bmr4fmaxr $lr0e $lb0", "only supported together on ffadd"},
    {"l1bmrffadd $lr0e $lb0", "only supported together on ffadd"},
};

TEST(EmuInstructionAudit, ModelledInstructionsParse) {
  for (const char *text : AuditSupportedStatements) {
    Program program;
    Diagnostic error;
    EXPECT_TRUE(parseProgram(text, "t.vsm", program, error))
        << text << ": " << error.str();
  }
}

TEST(EmuInstructionAudit, OthersAreRefusedAsUnsupported) {
  for (const Missing &m : Unsupported) {
    Program program;
    Diagnostic error;
    EXPECT_FALSE(parseProgram(m.Text, "t.vsm", program, error)) << m.Text;
    EXPECT_NE(error.Message.find(m.Says), std::string::npos)
        << m.Text << ": " << error.str();
    EXPECT_EQ(error.Line, 1u);
    EXPECT_GE(error.Column, 1u);
  }
}

TEST(EmuInstructionAudit, TurnaroundRegisterRules) {
  auto message = [](const char *text) {
    Program program;
    Diagnostic error;
    EXPECT_FALSE(parseProgram(text, "t.vsm", program, error)) << text;
    return error.Message;
  };
  EXPECT_NE(message("l1bmp $lbi $lr0").find("cannot use the turnaround"),
            std::string::npos);
  EXPECT_NE(message("l2bmb $lc0 $lbi").find("cannot use the turnaround"),
            std::string::npos);
  EXPECT_NE(message("l1bmm $lbi0 $lr0").find("no address"), std::string::npos);
  EXPECT_NE(message("d get $lbin0c0b0 1").find("cannot be set or dumped"),
            std::string::npos);
  // One expression of each of the l1bm and l1bm-turnaround groups; only
  // reading the turnaround register puts an L1BM instruction in the
  // l1bm-turnaround group (manual 3.6.8.2: the register latches every PE ->
  // L1BM transfer and the next step reads it back).
  Program program;
  Diagnostic error;
  EXPECT_TRUE(parseProgram("l1bmm $lbi $lr0 ; l1bmrdfadd $lr2 $lb0", "t.vsm",
                           program, error))
      << error.str();
  EXPECT_TRUE(program.Statements[0].Expressions[0].Sources[0].Turnaround);
  EXPECT_TRUE(parseProgram("l1bmm $lbi $lr0 ; l1bmrdfadd $lr2 $lbi", "t.vsm",
                           program, error))
      << error.str();
  EXPECT_NE(message("l1bmm $lbi $lr0 ; l1bmd $lbi $ls0v")
                .find("at most one instruction of each group"),
            std::string::npos);
  EXPECT_NE(message("l1bmrdfadd $lr2 $lbi ; l1bmm@0 $lr0 $lb0")
                .find("at most one instruction of each group"),
            std::string::npos);
}

} // namespace
