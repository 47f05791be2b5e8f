//===- EmuTargetTableTest.cpp - The instruction table drives the emulator -===//
//
// mncc/target/Instructions.def is the one place the instruction facts are
// written; these tests check that the parser, the timing model and the
// hazard checker read them from there, row by row.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Hazards.h"
#include "mncc/emu/Machine.h"
#include "mncc/emu/Parser.h"
#include "mncc/emu/Timing.h"
#include "mncc/target/Instructions.h"
#include "mncc/target/MNCore2.h"

#include "gtest/gtest.h"

#include <string>

using namespace mncc;
using namespace mncc::emu;

namespace {

struct AluRow {
  const char *Mnemonic;
  Opcode Op;
  const char *Precisions;
  unsigned Sources;
};

const AluRow AluRows[] = {
#define MNCC_ALU_NAME(Mnemonic, Op, Precisions, Sources, AllowsUnsigned)       \
  {Mnemonic, Opcode::Op, Precisions, Sources},
#include "mncc/target/Instructions.def"
};

TEST(EmuTargetTable, EveryAluNameParsesToItsOpcode) {
  // Each name with each of its precisions and its number of sources;
  // "relu" is "relu0". The sources come from GRF1, LM1 and GRF0 (one read
  // of each memory a step, manual 3.6.4).
  const char *sources[] = {"$ls0", "$ln0", "$lr8"};
  for (const AluRow &row : AluRows) {
    std::string precisions = row.Precisions[0] ? row.Precisions : " ";
    for (char prec : precisions) {
      std::string text = prec == ' ' ? "" : std::string(1, prec);
      text += row.Mnemonic;
      for (unsigned i = 0; i < row.Sources; ++i)
        text += std::string(" ") + sources[i];
      text += " $lm0\n";
      Program program;
      Diagnostic error;
      ASSERT_TRUE(parseProgram(text, "t.vsm", program, error))
          << text << error.str();
      EXPECT_EQ(program.Statements[0].Expressions[0].Op, row.Op) << text;
    }
  }
}

TEST(EmuTargetTable, UnitsAndLatenciesComeFromTheTable) {
  for (unsigned i = 0; i < std::size(target::OpcodeInfos); ++i) {
    Opcode op = Opcode(i);
    const target::OpcodeInfo &info = target::opcodeInfo(op);
    EXPECT_EQ(Timing::unitOf(op), info.BusyUnit) << info.Mnemonic;
  }
  // The rows the hazard model's numbers rest on (docs/target/mncore2.md,
  // "Hazard checks").
  EXPECT_EQ(target::writeLatency(target::opcodeInfo(Opcode::Add).Latency),
            latency::PeWrite);
  EXPECT_EQ(target::writeLatency(target::opcodeInfo(Opcode::VFma).Latency),
            latency::MauWrite);
  EXPECT_EQ(target::writeLatency(target::opcodeInfo(Opcode::MWrite).Latency),
            latency::MatrixWrite);
  EXPECT_EQ(target::opcodeInfo(Opcode::L1bmR).RrnStages, 2u);
  EXPECT_EQ(target::opcodeInfo(Opcode::L1bmM4).L1bmLongWords, 16u);
  EXPECT_EQ(target::macsPerMabCycle(Opcode::MMul, target::Precision::H), 256u);
  EXPECT_EQ(target::macsPerMabCycle(Opcode::VAdd, target::Precision::F), 0u);
}

TEST(EmuTargetTable, GeometryIsOneBoard) {
  EXPECT_EQ(target::NumPes, 4096u);
  EXPECT_EQ(target::NumMabs, 1024u);
  EXPECT_EQ(NumPes, target::NumPes);
  EXPECT_EQ(uint64_t(target::PdmLongWords) * target::LongWordBytes, uint64_t(4)
                                                                        << 20);
  EXPECT_EQ(target::DramLongWords * target::LongWordBytes, uint64_t(4) << 30);
  EXPECT_EQ(target::MvDistributeL2bmUnit, 128u);
}

} // namespace
