//===- EmuParserTest.cpp - VSM parser of mncc-sim -------------------------===//
//
// The parser turns VSM lines (manual 3.1-3.6) into pre-decoded statements and
// reports errors with their line and column.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Parser.h"

#include "gtest/gtest.h"

using namespace mncc::emu;

namespace {

Program parseOk(const char *text) {
  Program program;
  Diagnostic error;
  EXPECT_TRUE(parseProgram(text, "t.vsm", program, error)) << error.str();
  return program;
}

Diagnostic parseError(const char *text) {
  Program program;
  Diagnostic error;
  EXPECT_FALSE(parseProgram(text, "t.vsm", program, error));
  return error;
}

TEST(EmuParser, SkipsCommentsAndStopsAtQuit) {
  Program p = parseOk("# a comment\n"
                      "\n"
                      "  lpassa $lm0 $ln0  # trailing comment\n"
                      "quit\n"
                      "this is not parsed at all\n");
  ASSERT_EQ(p.Statements.size(), 1u);
  EXPECT_EQ(p.Statements[0].Line, 3u);
  EXPECT_EQ(p.Statements[0].Text, "lpassa $lm0 $ln0");
}

TEST(EmuParser, DecodesOperandAddressing) {
  Program p = parseOk("lpassa $lm8v2j1 $ln[0,2,4,6]/1000\n");
  ASSERT_EQ(p.Statements.size(), 1u);
  const Expression &e = p.Statements[0].Expressions[0];
  EXPECT_EQ(e.Op, Opcode::Passa);
  EXPECT_EQ(e.Prec, Precision::L);
  ASSERT_EQ(e.Sources.size(), 1u);
  const Operand &src = e.Sources[0];
  EXPECT_EQ(src.Where, Space::LM0);
  EXPECT_EQ(src.Size, Width::Long);
  EXPECT_EQ(src.Address[0], 8u);
  EXPECT_EQ(src.Stride, 2u); // words per cycle
  EXPECT_TRUE(src.MabAdjust);
  EXPECT_EQ(src.MaPe, 1u);
  ASSERT_EQ(e.Destinations.size(), 1u);
  const Operand &dst = e.Destinations[0];
  EXPECT_EQ(dst.Where, Space::LM1);
  EXPECT_EQ(dst.Stride, 0u); // flat
  EXPECT_TRUE(dst.Flat);
  EXPECT_EQ(dst.Address[3], 6u);
  EXPECT_EQ(dst.WriteMask.MaskKind, MaskSpec::Pattern);
  EXPECT_EQ(dst.WriteMask.CyclePattern, 0x8u);
}

TEST(EmuParser, BareStrideIsOneAccessWidth) {
  // "v" alone advances one access width per cycle, "v<n>" n words
  // (decision S22).
  Program p = parseOk("lpassa $m0v $lln0v\nlpassa $lm0v $ln0v4\n");
  EXPECT_EQ(p.Statements[0].Expressions[0].Sources[0].Stride, 1u);
  EXPECT_EQ(p.Statements[0].Expressions[0].Destinations[0].Stride, 4u);
  EXPECT_EQ(p.Statements[1].Expressions[0].Sources[0].Stride, 2u);
  EXPECT_EQ(p.Statements[1].Expressions[0].Destinations[0].Stride, 4u);
}

TEST(EmuParser, WrapsPeMemoryAddresses) {
  // LM addresses wrap at 4096 words, GRF addresses at 512 (manual 3.2).
  Program p = parseOk("lpassa $lm4098 $lr514\n");
  const Expression &e = p.Statements[0].Expressions[0];
  EXPECT_EQ(e.Sources[0].Address[0], 2u);
  EXPECT_EQ(e.Destinations[0].Address[0], 2u);
}

TEST(EmuParser, DecodesMauModifiersAndZeroFlush) {
  Program q = parseOk("hvfmar/$llimr3 -$lm0 $ln0 $lr0e $ls0\n");
  const Expression &e = q.Statements[0].Expressions[0];
  EXPECT_EQ(e.Op, Opcode::VFma);
  EXPECT_EQ(e.Prec, Precision::H);
  EXPECT_TRUE(e.ReduceOutput);
  EXPECT_EQ(e.ZeroFlush.MaskKind, MaskSpec::Register);
  EXPECT_TRUE(e.ZeroFlush.DoubleLong);
  EXPECT_EQ(e.ZeroFlush.Entry, 3u);
  EXPECT_TRUE(e.Sources[0].Negate);
  EXPECT_TRUE(e.Sources[2].Extend);
  Program d = parseOk("dvmulu $lm0 $ln0 $ls0\ndvfmad $lm0 $ln0 $mauf $ls2\n");
  EXPECT_EQ(d.Statements[0].Expressions[0].DoubleHalf, 1u);
  EXPECT_EQ(d.Statements[1].Expressions[0].DoubleHalf, 2u);
  EXPECT_EQ(d.Statements[1].Expressions[0].Sources[2].Where, Space::ForwardMau);
}

TEST(EmuParser, RejectsNowriteWithAnotherDestination) {
  Diagnostic d = parseError("fvpassa $lm0 $ln0 $nowrite\n");
  EXPECT_EQ(d.Line, 1u);
  EXPECT_EQ(d.Column, 19u);
}

TEST(EmuParser, ResolvesAluPrecisionPrefixes) {
  Program p = parseOk("llnot $lr0 $lr2\nuiadd $r0 $s1 $r2\nlnot $lr0 $lr2\n"
                      "hmax $lr0 $ls2 $lr4\nmsl $lr0 $lr2\nimmu i\"-1\" $r0\n");
  EXPECT_EQ(p.Statements[0].Expressions[0].Op, Opcode::Lnot);
  EXPECT_EQ(p.Statements[0].Expressions[0].Prec, Precision::L);
  EXPECT_EQ(p.Statements[1].Expressions[0].Op, Opcode::Add);
  EXPECT_EQ(p.Statements[1].Expressions[0].Prec, Precision::I);
  EXPECT_TRUE(p.Statements[1].Expressions[0].Unsigned);
  // "lnot" without a precision reads as "l" + "not": lnot needs one.
  EXPECT_EQ(p.Statements[2].Expressions[0].Op, Opcode::Not);
  EXPECT_EQ(p.Statements[3].Expressions[0].Op, Opcode::Max);
  EXPECT_EQ(p.Statements[3].Expressions[0].Prec, Precision::H);
  EXPECT_EQ(p.Statements[4].Expressions[0].Op, Opcode::Msl);
  EXPECT_EQ(p.Statements[5].Expressions[0].Op, Opcode::Imm);
  EXPECT_EQ(p.Statements[5].Expressions[0].Immediate, 0xffffffffu);
}

TEST(EmuParser, ImmediatesOfEveryType) {
  // Manual 3.2.2: (f|h)"<real>" or (i|s|ui|us)"<integer>", quotes
  // required; halves repeat in both halves of the word; a value outside
  // its type is an error (the manual's own: s"0x8000").
  auto word = [](const char *payload) {
    std::string text = std::string("imm ") + payload + " $lr0\n";
    return parseOk(text.c_str()).Statements[0].Expressions[0].Immediate;
  };
  EXPECT_EQ(word("ui\"0xFFFFFFFF\""), 0xffffffffu);
  EXPECT_EQ(word("ui\"0x48656c6c\""), 0x48656c6cu);
  EXPECT_EQ(word("i\"-1\""), 0xffffffffu);
  EXPECT_EQ(word("i\"+7\""), 7u);
  EXPECT_EQ(word("i\"0b101\""), 5u);
  EXPECT_EQ(word("i\"0x7fffffff\""), 0x7fffffffu);
  EXPECT_EQ(word("us\"0x8000\""), 0x80008000u);
  EXPECT_EQ(word("s\"-2\""), 0xfffefffeu);
  EXPECT_EQ(word("f\"-1.0\""), 0xbf800000u);
  // MN-Core half (6-bit exponent, bias 31, 9-bit mantissa): 1.0 is
  // exponent 31, mantissa 0.
  EXPECT_EQ(word("h\"1.0\""), 0x3e003e00u);
  EXPECT_EQ(word("h\"-2.5\""), 0xc080c080u); // exponent 32, mantissa 128
  for (const char *bad : {"s\"0x8000\"", "i\"0xFFFFFFFF\"", "ui\"-1\"",
                          "us\"65536\"", "i\"0b102\"", "d\"1.0\"", "l\"1\"",
                          "5", "i\"\"", "f\"1.0x\"", "i\"1", "x\"1\""}) {
    std::string text = std::string("imm ") + bad + " $lr0\n";
    Diagnostic e = parseError(text.c_str());
    EXPECT_EQ(e.Column, 5u) << bad;
    EXPECT_NE(e.Message.find("immediate payload"), std::string::npos) << bad;
  }
}

TEST(EmuParser, ParsesVliwLines) {
  Program p = parseOk("noforward; lpassa $lr0 $lr2 ; fvpassa $lm0 $ln0\n"
                      "nop/3\n"
                      "nop; wait i5\n");
  ASSERT_EQ(p.Statements.size(), 3u);
  EXPECT_EQ(p.Statements[0].Expressions.size(), 3u);
  EXPECT_EQ(p.Statements[1].Repeat, 3u);
  EXPECT_EQ(p.Statements[2].Expressions[1].Op, Opcode::Wait);
  EXPECT_EQ(p.Statements[2].Expressions[1].Tag, 5u);
}

TEST(EmuParser, ParsesDebugStatements) {
  Program p = parseOk("d set $lm0n0c1b2p3 2 l1l2\n"
                      "d set $lr4 1 3FF0000000000000\n"
                      "d getbh $ln8n1c0b7m15p2 3\n"
                      "d get $omr1n0c0b0m0p0 1\n"
                      "d getd $d26000000n2 4\n");
  ASSERT_EQ(p.Statements.size(), 5u);
  const DebugAccess &a = p.Statements[0].Debug;
  EXPECT_EQ(p.Statements[0].StmtKind, Statement::DebugSet);
  EXPECT_EQ(a.Where, Space::LM0);
  EXPECT_EQ(a.Group, 0);
  EXPECT_EQ(a.L2b, 1);
  EXPECT_EQ(a.L1b, 2);
  EXPECT_EQ(a.Mab, -1); // omitted: every MAB
  EXPECT_EQ(a.Pe, 3);
  ASSERT_EQ(a.Payload.size(), 2u);
  EXPECT_EQ(a.Payload[1], 2u);
  EXPECT_EQ(p.Statements[1].Debug.Payload[0], 0x3FF0000000000000ull);
  EXPECT_EQ(p.Statements[1].Debug.Group, -1);
  const DebugAccess &g = p.Statements[2].Debug;
  EXPECT_EQ(p.Statements[2].StmtKind, Statement::DebugGet);
  EXPECT_EQ(g.Type, DumpType::BH);
  EXPECT_EQ(g.Address, 8u);
  EXPECT_EQ(g.Mab, 15);
  EXPECT_EQ(g.Count, 3u);
  EXPECT_EQ(p.Statements[3].Debug.Where, Space::MaskReg);
  EXPECT_EQ(p.Statements[3].Debug.Address, 1u);
  EXPECT_EQ(p.Statements[4].Debug.Where, Space::DRAM);
  EXPECT_EQ(p.Statements[4].Debug.Address, 26000000u);
  EXPECT_EQ(p.Statements[4].Debug.Group, 2);
}

TEST(EmuParser, ParsesMaskControl) {
  Program p = parseOk("maskn 1\nmasklltr 17\nmask 0\n");
  EXPECT_EQ(p.Statements[0].StmtKind, Statement::SetMask);
  EXPECT_EQ(p.Statements[0].Mask.Targets, MaskLm1);
  EXPECT_EQ(p.Statements[0].Mask.Entry, 1u);
  EXPECT_TRUE(p.Statements[1].Mask.DoubleLong);
  EXPECT_EQ(p.Statements[1].Mask.Targets, MaskT | MaskGrf0);
  EXPECT_EQ(p.Statements[2].Mask.Targets, MaskAll);
}

TEST(EmuParser, ReportsLineAndColumn) {
  Diagnostic d = parseError("nop\n  lpassa $lm0 $lq0\n");
  EXPECT_EQ(d.File, "t.vsm");
  EXPECT_EQ(d.Line, 2u);
  EXPECT_EQ(d.Column, 17u); // the 'q'
  EXPECT_EQ(d.str().substr(0, 18), "t.vsm:2:17: error:");

  d = parseError("frobnicate $lm0 $ln0\n");
  EXPECT_EQ(d.Column, 1u);
  EXPECT_NE(d.Message.find("frobnicate"), std::string::npos);
}

TEST(EmuParser, RejectsIssueRuleViolations) {
  EXPECT_EQ(parseError("lpassa $lm0 $ln0; nop\n").Column, 1u);
  EXPECT_NE(parseError("wait i1\n").Message.find("wait"), std::string::npos);
  EXPECT_NE(parseError("nop; wait i0\n").Message.find("tag 0"),
            std::string::npos);
  // Two ALU expressions in one step (manual 3.6.4).
  EXPECT_EQ(parseError("lpassa $lm0 $ln0; linc $lr0 $lr2\n").Column, 19u);
}

TEST(EmuParser, RejectsBadOperands) {
  EXPECT_NE(parseError("lpassa $lm0 $omr0\n").Message.find("1 to 15"),
            std::string::npos);
  EXPECT_NE(parseError("lpassa -$lm0 $ln0\n").Message.find("modifier"),
            std::string::npos);
  EXPECT_NE(parseError("lpassa $lm0 $mauf\n").Message.find("written"),
            std::string::npos);
  EXPECT_NE(parseError("ladd $lr0 $peid $lr2\n").Message.find("first"),
            std::string::npos);
  EXPECT_NE(parseError("lpassa $lm0 $ln0/101\n").Message.find("4 cycles"),
            std::string::npos);
  EXPECT_NE(parseError("dvfma $lm0 $ln0 $lr0 $ls0\n").Message.find("'u'"),
            std::string::npos);
}

TEST(EmuParser, RejectsBadDebugStatements) {
  EXPECT_NE(parseError("d set $lm0 2 3FF0\n").Message.find("payload"),
            std::string::npos);
  EXPECT_NE(parseError("d getx $lm0 1\n").Message.find("dump type"),
            std::string::npos);
  EXPECT_NE(parseError("d get $lm0n4 1\n").Message.find("below 4"),
            std::string::npos);
  EXPECT_NE(parseError("d get $lm0 0\n").Message.find("count"),
            std::string::npos);
  // mvd spreads a named group's PDM over every L2BM or DRAM.
  Diagnostic bad = parseError("mvd/n512 $p0@0 $lc0@0.0\n");
  EXPECT_NE(bad.Message.find("'mvd' moves between"), std::string::npos);
  EXPECT_EQ(bad.Column, 10u);
  bad = parseError("mvd/n64 $p0@0 $lc0\n");
  EXPECT_NE(bad.Message.find("multiple of 128"), std::string::npos);
  EXPECT_EQ(bad.Column, 1u);
}

} // namespace

namespace {

TEST(EmuParserTransfers, DecodesL1bmL2bmAndMatrixInstructions) {
  Program p = parseOk("l1bmm $llb8 $llr0v/$llimr1\n"
                      "l1bmm@5 $lr0v $lb0\n"
                      "l1bmr4hmax $lr0 $lb16\n"
                      "l1bmd $lr0 $lb0\n"
                      "l1bmd $lb0 $lr0 $ls0\n"
                      "l2bmb@2 $lc64 $lb0\n"
                      "dmfmad $lx $ls0v $mauf $lm8v\n");
  const Expression &m = p.Statements[0].Expressions[0];
  EXPECT_EQ(m.Op, Opcode::L1bmM);
  EXPECT_EQ(m.Sources[0].Where, Space::L1BM);
  EXPECT_EQ(m.Sources[0].Size, Width::DoubleLong);
  EXPECT_EQ(m.Sources[0].Address[0], 8u);
  EXPECT_EQ(m.Destinations[0].WriteMask.MaskKind, MaskSpec::Register);
  EXPECT_EQ(p.Statements[1].Expressions[0].Op, Opcode::L1bmMAt);
  EXPECT_EQ(p.Statements[1].Expressions[0].Target, 5);
  const Expression &r = p.Statements[2].Expressions[0];
  EXPECT_EQ(r.Op, Opcode::L1bmR4);
  EXPECT_EQ(r.Reduction, RrnOp::Max);
  EXPECT_EQ(r.Prec, Precision::H);
  EXPECT_TRUE(p.Statements[3].Expressions[0].ToUpper);
  EXPECT_FALSE(p.Statements[4].Expressions[0].ToUpper);
  EXPECT_EQ(p.Statements[4].Expressions[0].Destinations.size(), 2u);
  EXPECT_EQ(p.Statements[5].Expressions[0].Op, Opcode::L2bmB);
  EXPECT_EQ(p.Statements[5].Expressions[0].Target, 2);
  const Expression &f = p.Statements[6].Expressions[0];
  EXPECT_EQ(f.Op, Opcode::MFma);
  EXPECT_EQ(f.DoubleHalf, 2u);
  EXPECT_EQ(f.Sources.size(), 3u);
  EXPECT_EQ(f.Sources[0].Where, Space::MatX);
}

TEST(EmuParserTransfers, DecodesMvp) {
  Program p = parseOk("mvp/n512i23 $p3584@0 $lc0@3.1\nmvp/n64 $d0 $p0\n"
                      "mvnop\n");
  const MvTransfer &a = p.Statements[0].Transfer;
  EXPECT_EQ(p.Statements[0].StmtKind, Statement::Mv);
  EXPECT_EQ(a.TransferKind, MvTransfer::Point);
  EXPECT_EQ(a.Size, 512u);
  EXPECT_EQ(a.Tag, 0x23u); // tags are hexadecimal (decision S25)
  EXPECT_EQ(a.From, Space::PDM);
  EXPECT_EQ(a.FromAddress, 3584u);
  EXPECT_EQ(a.FromGroup, 0);
  EXPECT_EQ(a.To, Space::L2BM);
  EXPECT_EQ(a.ToGroup, 3);
  EXPECT_EQ(a.ToL2b, 1);
  EXPECT_EQ(p.Statements[1].Transfer.FromGroup, -1);
  EXPECT_EQ(p.Statements[2].Transfer.TransferKind, MvTransfer::Nop);
}

TEST(EmuParserTransfers, RejectsMalformedTransfers) {
  EXPECT_NE(parseError("l1bmm $b0 $lr0\n").Message.find("long words"),
            std::string::npos);
  EXPECT_NE(parseError("l1bmm@16 $lr0 $lb0\n").Message.find("below 16"),
            std::string::npos);
  EXPECT_NE(parseError("l1bmrffaddr $lr0 $lb0\n").Message.find("reduction"),
            std::string::npos);
  EXPECT_NE(
      parseError("fmfmau $lx $lr0 $lr2 $lr4\n").Message.find("only dmfma"),
      std::string::npos);
  EXPECT_NE(parseError("hmmulu $lx $lr0 $lr2\n").Message.find("only dmfma"),
            std::string::npos);
  EXPECT_NE(parseError("dmmul $lx $lr0 $lr2\n").Message.find("'u'"),
            std::string::npos);
  EXPECT_NE(parseError("mvp/n64 $p0@0 $d0\n").Message.find("both ends"),
            std::string::npos);
  // Two L1BM expressions cannot issue together; MAU calc + mwrite + mread
  // is one too many (manual 3.6.4).
  EXPECT_EQ(parseError("l1bmp $lb0 $lr0; l1bmm $lb0 $lr2\n").Column, 18u);
  EXPECT_NE(parseError("dmwrite $lr0v $lx0; dmread $ly0 $lr8; "
                       "fvpassa $lm0 $ln0\n")
                .Message.find("two"),
            std::string::npos);
}

TEST(EmuParserTransfers, SurvivesTruncatedOpcodes) {
  // Found by fuzzing: an opcode that ends where a precision is expected.
  EXPECT_NE(parseError("l1bmr $lr0 $lb0\n").Message.find("reduction"),
            std::string::npos);
  EXPECT_NE(parseError("l1bmr;nop\n").Message.find("reduction"),
            std::string::npos);
  EXPECT_EQ(parseError("l1bm\n").Column, 1u);
}

TEST(EmuParser, ChecksMauPrecisionModifiers) {
  // 'r' turns a single into a half input; 'e' extends from one format
  // lower, so neither fits every operand (manual 3.6.6).
  Program p = parseOk("hvfma $lr0r $ls0 $lm0e $ln0\nfvfma $maufe $lr0 $ls2 "
                      "$lr4\n");
  EXPECT_TRUE(p.Statements[0].Expressions[0].Sources[0].Reduce);
  EXPECT_EQ(p.Statements[1].Expressions[0].Sources[0].Where, Space::ForwardMau);
  EXPECT_TRUE(p.Statements[1].Expressions[0].Sources[0].Extend);
  EXPECT_NE(parseError("hvfma $lr0e $ls0 $lm0 $ln0\n").Message.find("'e'"),
            std::string::npos);
  EXPECT_NE(parseError("hvfma $lr0 $ls0 $lm0r $ln0\n").Message.find("'r'"),
            std::string::npos);
  EXPECT_NE(parseError("fvfma $lr0r $ls0 $lm0 $ln0\n").Message.find("'r'"),
            std::string::npos);
}

/// The error of a one-line program: its column and whether the message
/// says `says`.
::testing::AssertionResult refusedAt(const char *text, uint32_t column,
                                     const char *says) {
  Program program;
  Diagnostic error;
  if (parseProgram(text, "t.vsm", program, error))
    return ::testing::AssertionFailure() << "accepted: " << text;
  if (error.Line != 1 || error.Column != column ||
      error.Message.find(says) == std::string::npos)
    return ::testing::AssertionFailure() << text << ": " << error.str();
  return ::testing::AssertionSuccess();
}

TEST(EmuParser, IssueRulesOfManual364) {
  // Two MAU instructions of a step share their precision (fmwrite and
  // gmwrite are one instruction named after the product beside it).
  EXPECT_TRUE(refusedAt("gmmul $lx $lm0v $ln0v ; fmwrite $ls0v $ly0\n", 25,
                        "same precision"));
  parseOk("gmmul $lx $lm0v $ln0v ; gmwrite $ls0v $ly0\n");
  // A matrix register once a step.
  EXPECT_TRUE(refusedAt("dmwrite $lr0v $lx0 ; dmread $lx0 $ls0v\n", 29,
                        "matrix register is used once"));
  // Two instructions never write the same PE storage, at any address.
  EXPECT_TRUE(refusedAt("lpassa $lr0 $lm0 ; fvpassa $ls0 $lm8\n", 33,
                        "two instructions of a step write LM0"));
  EXPECT_TRUE(refusedAt("ipassa $lr0 $omr1 ; fvpassa $ls0 $omr2\n", 34,
                        "write the mask registers"));
  // One read port: every read of a memory touches the same words, within
  // one instruction (PFN's assembler: "field conflict between in_grf0 and
  // in_grf0") and across instructions.
  EXPECT_TRUE(
      refusedAt("iadd $lr0v $lr4v $lr8v\n", 12, "reads of GRF0 in a step"));
  EXPECT_TRUE(
      refusedAt("lpassa $lr0 $ls0 ; fvpassa $lr2 $ln0\n", 28, "reads of GRF0"));
  EXPECT_TRUE(refusedAt("lpassa $lr0v $ls0 ; fvpassa $r0v $ln0\n", 29,
                        "reads of GRF0"));
  parseOk("dvadd $lr0v $lr0v $ln0v ; lpassa $lr0v $ls0v\n");
  // A GRF reads and writes in one step at different addresses (1R1W).
  parseOk("lpassa $lr0 $lr2\n");
  // LM0 and LM1 read and write through one port: the same words.
  EXPECT_TRUE(refusedAt("lpassa $lm0v $lm8v\n", 14, "reads and writes LM0"));
  EXPECT_TRUE(refusedAt("fvpassa $ln0 $lr0 ; lpassa $ls0 $ln2\n", 33,
                        "reads and writes LM1"));
  parseOk("dvadd $lm0v $lr0v $lm0v\n");
  // imm does not issue with an LM0 access.
  EXPECT_TRUE(refusedAt("imm i\"1\" $lr0 ; fvpassa $lm0 $ln0\n", 25,
                        "'imm' does not issue with an LM0 access"));
  EXPECT_TRUE(refusedAt("imm i\"1\" $lm0\n", 10, "'imm'"));
  parseOk("imm i\"1\" $lr0 ; fvpassa $ln0 $ls0\n");
  // One zero-flush mask a step; every mask reads one entry, with one word
  // length.
  EXPECT_TRUE(refusedAt("lpassa/$imr1 $lr0 $ls0 ; fvpassa/$imr1 $lm0 $ln0\n",
                        26, "one zero-flush mask"));
  EXPECT_TRUE(refusedAt("lpassa $lr0 $ls0/$imr1 ; fvpassa $lm0 $ln0/$imr2\n",
                        39, "one mask register entry"));
  EXPECT_TRUE(refusedAt("lpassa/$imr1 $lr0 $ls0/$imr3\n", 19,
                        "one mask register entry"));
  EXPECT_TRUE(refusedAt("lpassa $lr0 $ls0/$imr1 ; fvpassa $lm0 $ln0/$llimr1\n",
                        39, "same word length"));
  parseOk("lpassa/$imr1 $lr0 $ls0/$imr1 ; fvpassa $lm0 $ln0/1010\n");
  // vfma / vmul with mwrite: the same second input, modifiers included.
  EXPECT_TRUE(refusedAt("fvfma $lr0 -$ls0 $lm0 $ln0 ; fmwrite $ls0 $lx0\n", 38,
                        "second input"));
  parseOk("fvfma $lr0 $ls0 $lm0 $ln0 ; fmwrite $ls0 $lx0\n");
  // $mreadf feeds the ALU's first input only, $nowrite is a destination
  // alone.
  EXPECT_TRUE(refusedAt("dmwrite $mreadf $lx0\n", 9, "$mreadf"));
  EXPECT_TRUE(refusedAt("l1bmm@0 $mreadf $lb0\n", 9, "$mreadf"));
  EXPECT_TRUE(refusedAt("fvpassa $mreadf $ln0\n", 9, "$mreadf"));
  EXPECT_TRUE(refusedAt("lpassa $lr0 $nowrite $ls0\n", 13, "$nowrite"));
  EXPECT_TRUE(refusedAt("l1bmp $lb0 $lr0 $nowrite\n", 17, "$nowrite"));
  // The manual's own example of a full step (without l2bmdarw), masks
  // written apart from their operands as it writes them.
  parseOk("noforward; l2bmb $lc256 $lb0 ; l1bmm $lbi $lr0v /$imr1; "
          "l1bmrdfadd $lr8v $lb256 ; gmmul $lx $lm0v $ln0v /$imr1; "
          "gmwrite $ls0v $ly0 ; hrelu/$imr1 $t $t $t ; wait i01\n");
}

TEST(EmuParserTransfers, DecodesReductionsAboveTheL1bm) {
  Program p = parseOk("l2bmrdfadd@3 $lb0 $lc64\nmvrhmax/n64i2 $lc0 $d8@1\n");
  const Expression &r = p.Statements[0].Expressions[0];
  EXPECT_EQ(r.Op, Opcode::L2bmR);
  EXPECT_EQ(r.Reduction, RrnOp::FAdd);
  EXPECT_EQ(r.Prec, Precision::D);
  EXPECT_EQ(r.Target, 3);
  const MvTransfer &mv = p.Statements[1].Transfer;
  EXPECT_EQ(mv.TransferKind, MvTransfer::Reduce);
  EXPECT_EQ(mv.Reduction, RrnOp::Max);
  EXPECT_EQ(mv.Prec, Precision::H);
  EXPECT_EQ(mv.Size, 64u);
  EXPECT_EQ(mv.To, Space::DRAM);
  EXPECT_EQ(mv.ToGroup, 1);
  EXPECT_NE(parseError("mvrffadd/n64 $lc0@0.1 $d0\n").Message.find("every"),
            std::string::npos);
  EXPECT_NE(parseError("mvr4ffadd/n64 $lc0@1 $d0\n")
                .Message.find("'mvr4ffadd' reads '$lc<addr>' of every L2BM"),
            std::string::npos);
  EXPECT_NE(parseError("mvb4/n64 $d0 $lc0@0.1\n")
                .Message.find("'mvb4' writes '$lc<addr>' of every L2BM"),
            std::string::npos);
  EXPECT_NE(parseError("mvr2ffadd/n64 $lc0@0.1 $d0\n").Message.find("both"),
            std::string::npos);
  EXPECT_NE(parseError("mvr2ffadd/n64 $lc0 $d0@1\n").Message.find("own"),
            std::string::npos);
  const MvTransfer &pairs =
      parseOk("mvr2ffadd/n64i1f $lc0@2 $p8\n").Statements[0].Transfer;
  EXPECT_EQ(pairs.TransferKind, MvTransfer::Reduce2);
  EXPECT_EQ(pairs.FromGroup, 2);
  EXPECT_EQ(pairs.Tag, 0x1fu);
}

TEST(EmuParserTransfers, MvParametersInAnyOrderEachOnce) {
  // The open SDK writes the tag first ("mvp/i02n64"); the size is required.
  const MvTransfer &mv =
      parseOk("mvp/i02p1n128 $p0 $d0\n").Statements[0].Transfer;
  EXPECT_EQ(mv.Size, 128u);
  EXPECT_EQ(mv.Tag, 2u);
  EXPECT_NE(parseError("mvp/i1 $p0 $d0\n").Message.find("needs '/n<size>'"),
            std::string::npos);
  EXPECT_NE(parseError("mvp $p0 $d0\n").Message.find("needs '/n<size>'"),
            std::string::npos);
  EXPECT_NE(parseError("mvp/n64n64 $p0 $d0\n").Message.find("one '/n<size>'"),
            std::string::npos);
  EXPECT_NE(parseError("mvp/i1n64i2 $p0 $d0\n").Message.find("one tag"),
            std::string::npos);
}

TEST(EmuParserTransfers, L1bmdShiftsAndL2bmiModes) {
  Program p = parseOk("l1bmd+3 $lr0 $lb0\nl1bmd-15 $lb0 $lr0\n"
                      "l2bmi@6/5 $lb0 $lb64\nl2bmi@3 $lb0 $lb64\n");
  EXPECT_EQ(p.Statements[0].Expressions[0].MabShift, 3);
  EXPECT_EQ(p.Statements[1].Expressions[0].MabShift, -15);
  const Expression &im = p.Statements[2].Expressions[0];
  EXPECT_EQ(im.Op, Opcode::L2bmI);
  EXPECT_EQ(im.ImMode, 5u);
  EXPECT_EQ(im.Target, 2); // 6 outside the immode bits 5 = 0b101
  EXPECT_EQ(p.Statements[3].Expressions[0].ImMode, 0u);
  for (const char *bad : {"l1bmd+16 $lr0 $lb0\n", "l1bmd+ $lr0 $lb0\n"}) {
    Diagnostic e = parseError(bad);
    EXPECT_NE(e.Message.find("MAB shift"), std::string::npos) << bad;
    EXPECT_EQ(e.Column, 1u) << bad;
  }
  for (const char *bad : {"l2bmi $lb0 $lb64\n", "l2bmi@8 $lb0 $lb64\n",
                          "l2bmi@0/7 $lb0 $lb64\n", "l2bmi@0/ $lb0 $lb64\n"}) {
    Diagnostic e = parseError(bad);
    EXPECT_NE(e.Message.find("'l2bmi' takes"), std::string::npos) << bad;
    EXPECT_EQ(e.Column, 1u) << bad;
  }
}

TEST(EmuParserTransfers, MvSizesAreWholeUnitsOf64LongWords) {
  // Manual 3.5.8: a size that is not a multiple of the unit is an error.
  Diagnostic e = parseError("nop\nmvp/n65 $p0 $d0\n");
  EXPECT_EQ(e.Line, 2u);
  EXPECT_EQ(e.Column, 1u);
  EXPECT_NE(e.Message.find("multiple of 64"), std::string::npos);
  EXPECT_NE(parseError("mvb2/n32 $d0 $lc0\n").Message.find("multiple"),
            std::string::npos);
  EXPECT_EQ(parseOk("mvp/n128 $p0 $d0\n").Statements[0].Transfer.Size, 128u);
}

TEST(EmuParserTransfers, DecodesBroadcastsDistributionAndDramLines) {
  Program p = parseOk("l2bmd $lc0 $lb0\nl2bmd $lb0 $lc0\n"
                      "mvb/n64 $p0@0 $lc0\nmvb2/n64 $d0 $lc0\n"
                      "r 3 0000001F 002 00000000000000010000000000000002\n");
  EXPECT_EQ(p.Statements[0].Expressions[0].Op, Opcode::L2bmD);
  EXPECT_FALSE(p.Statements[0].Expressions[0].ToUpper);
  EXPECT_TRUE(p.Statements[1].Expressions[0].ToUpper);
  EXPECT_EQ(p.Statements[2].Transfer.TransferKind, MvTransfer::Broadcast);
  EXPECT_EQ(p.Statements[3].Transfer.TransferKind, MvTransfer::Broadcast2);
  const DebugAccess &r = p.Statements[4].Debug;
  EXPECT_EQ(p.Statements[4].StmtKind, Statement::DebugSet);
  EXPECT_EQ(r.Where, Space::DRAM);
  EXPECT_EQ(r.Group, 3);
  EXPECT_EQ(r.Address, 0x1fu);
  ASSERT_EQ(r.Payload.size(), 2u);
  EXPECT_EQ(r.Payload[1], 2u);
  EXPECT_NE(parseError("mvb/n64 $p0 $lc0\n").Message.find("named group"),
            std::string::npos);
  EXPECT_NE(parseError("mvb2/n64 $d0 $lc0@1.0\n").Message.find("L2BMs"),
            std::string::npos);
  EXPECT_NE(parseError("r 4 0 1 0000000000000000\n").Message.find("group"),
            std::string::npos);
  EXPECT_NE(parseError("r 0 0 2 0000000000000000\n").Message.find("payload"),
            std::string::npos);
}

TEST(EmuParserTransfers, ChecksTwoRowMatrixAccesses) {
  parseOk("hmwrite $lr0 $llx2\nhmread $lly4 $llr0\n");
  EXPECT_NE(parseError("hmread $lx0 $lr0\n").Message.find("$llx"),
            std::string::npos);
  EXPECT_NE(parseError("hmwrite $lr0 $llx3\n").Message.find("even"),
            std::string::npos);
  EXPECT_NE(parseError("dmwrite $lr0 $llx0\n").Message.find("two rows"),
            std::string::npos);
}

} // namespace
