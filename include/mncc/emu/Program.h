//===- Program.h - Pre-decoded MN-Core 2 assembly (VSM) --------*- C++ -*-===//
//
// The instruction stream mncc-sim executes: every line of a .vsm file parsed
// once into plain enums and integers (manual 3, assembly syntax), so the
// executor never looks at text. Addresses are resolved to the unit each
// memory counts in (words for LM/GRF, long words above the PE), operand
// widths to words, masks to their kind and entry.
//
// docs/target/mncore2.md, section "mncc-sim", lists the syntax accepted and
// every reading of the manual taken here.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_EMU_PROGRAM_H
#define MNCC_EMU_PROGRAM_H

#include "mncc/target/Instructions.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mncc::emu {

/// Where an operand lives (manual 3.3, register and memory set).
enum class Space : uint8_t {
  None,
  LM0,
  LM1,
  GRF0,
  GRF1,
  T,
  MaskReg, ///< $omr<n>, written with mask flags
  BarLM0,  ///< $mb / $lmb: LM0 base address register
  BarLM1,  ///< $nb / $lnb: LM1 base address register
  MatX,
  MatY,
  L1BM,
  L2BM,
  PDM,
  DRAM,
  ForwardMau,
  ForwardAlu,
  ForwardLb,
  ForwardMread,
  FixedL2bId,
  FixedL1bId,
  FixedMabId,
  FixedPeId,
  FixedSubPeId,
  FixedMsb1,
  NoWrite,
};

/// Access width in 32-bit words: word, long word ("l"), double long ("ll").
enum class Width : uint8_t { Word = 1, Long = 2, DoubleLong = 4 };

/// A write mask or zero-flush mask (manual 3.6.2).
struct MaskSpec {
  enum Kind : uint8_t {
    Default,  ///< the multi-line `mask` setting (write masks) or none
    Pattern,  ///< /1010: one bit per cycle, written literally
    Register, ///< /$imr<n>: mask register entry 1..15
  };
  Kind MaskKind = Default;
  /// Double-long mask application word length (`ll`).
  bool DoubleLong = false;
  /// Pattern: bit 3 is cycle 0, bit 0 cycle 3.
  uint8_t CyclePattern = 0;
  /// Register: the entry read.
  uint8_t Entry = 0;
};

/// One operand of a PE instruction expression.
struct Operand {
  Space Where = Space::None;
  Width Size = Width::Word;
  /// Flat mode: Address[c] is the address of cycle c. Auto-stride mode:
  /// Address[0] plus Stride * cycle, Stride in words (manual 3.3,
  /// auto-stride; "v" alone is one access width).
  bool Flat = false;
  uint32_t Address[4] = {0, 0, 0, 0};
  uint16_t Stride = 0;
  /// LM0 indirect through T ("$mt").
  bool ThroughT = false;
  /// The L1BM turnaround register ("$lbi", manual 3.6.8) instead of an
  /// L1BM address.
  bool Turnaround = false;
  /// MAB address adjustment ("j<madpe>"): PEs up to MaPe add one width.
  bool MabAdjust = false;
  uint8_t MaPe = 0;
  /// Source modifiers: "-src", "src e", "src r".
  bool Negate = false;
  bool Extend = false;
  bool Reduce = false;
  /// Destination write mask ("dst/1000", "dst/$imr1").
  MaskSpec WriteMask;
  uint32_t Column = 0;
};

/// Operation of a PE instruction expression.
/// A PE instruction expression; the facts about each (issue group, unit,
/// latency class, layout) are in mncc/target/Instructions.def.
using target::Opcode;

/// Reduction of the RRN (manual 3.5, rrn_opcode).
enum class RrnOp : uint8_t { FAdd, Max, Min, IAdd, BAnd, And, BOr, Or };

using target::Precision;

/// One instruction expression of a PE statement.
struct Expression {
  Opcode Op = Opcode::Nop;
  Precision Prec = Precision::None;
  /// "u" prefix: unsigned.
  bool Unsigned = false;
  /// Opcode "r" suffix: output precision reduction (MAU).
  bool ReduceOutput = false;
  /// dvfma/dvmul "u" (PEs 0 and 1) or "d" (PEs 2 and 3); 0 = both.
  uint8_t DoubleHalf = 0;
  /// Zero-flush mask on the opcode ("op/$imr1").
  MaskSpec ZeroFlush;
  /// imm payload: the 32-bit word x of "xxxx" (or "xoxo" for immu).
  uint32_t Immediate = 0;
  /// wait tag.
  uint32_t Tag = 0;
  /// L1BM/L2BM: the MAB or L1B after '@'; -1 for none.
  int8_t Target = -1;
  /// l1bmd: true for PE -> L1BM (gathering).
  bool ToUpper = false;
  /// l1bmd+n / l1bmd-n: the MAB rotation (manual 3.6.8.20-21), -15..15.
  int8_t MabShift = 0;
  /// l2bmi@k/m: the immode m; Target is k (manual 3.6.7.9).
  uint8_t ImMode = 0;
  /// RRN reductions.
  RrnOp Reduction = RrnOp::FAdd;
  std::vector<Operand> Sources;
  std::vector<Operand> Destinations;
  uint32_t Column = 0;
};

/// Element type of a `d get` dump.
enum class DumpType : uint8_t { Raw, D, F, H, BD, BF, BG, BH };

/// A `d get` / `d set` target: a memory, an address and a set of positions;
/// a missing index (n, c, b, m, p) selects every position of that level.
struct DebugAccess {
  Space Where = Space::None;
  uint64_t Address = 0;
  int8_t Group = -1, L2b = -1, L1b = -1, Mab = -1, Pe = -1;
  uint32_t Count = 0;
  DumpType Type = DumpType::Raw;
  /// d set: Count long words.
  std::vector<uint64_t> Payload;
};

/// The default write mask set by `mask[l|ll][r][s][t][m][n][k] <entry>`.
struct MaskControl {
  uint8_t Entry = 0;
  bool DoubleLong = false;
  /// Bit per destination kind, see MaskTarget.
  uint8_t Targets = 0;
};

/// Destination kinds a multi-line mask applies to.
enum MaskTarget : uint8_t {
  MaskGrf0 = 1,
  MaskGrf1 = 2,
  MaskT = 4,
  MaskLm0 = 8,
  MaskLm1 = 16,
  MaskMaskReg = 32,
  MaskAll = 63,
};

// The MV transfer units and shares (mncc/target/MNCore2.h).
using target::MvDistributeL2bmUnit;
using target::MvGroupShare;
using target::MvL2bmShare;
using target::MvUnitLongWords;

/// An MV transfer (manual 3.5.8): mvp (point to point), mvb, mvb2, mvb4
/// (broadcasts), mvr, mvr2, mvr4 (reductions) and mvd (distribution and
/// concatenation).
struct MvTransfer {
  enum Kind : uint8_t {
    Nop,
    Point,      ///< mvp
    Reduce,     ///< mvr<rrn>: the eight L2BMs reduced
    Broadcast,  ///< mvb: one PDM or DRAM area to every L2BM
    Broadcast2, ///< mvb2: each group's DRAM to its two L2BMs
    Reduce2,    ///< mvr2<rrn>: each group's two L2BMs reduced
    Broadcast4, ///< mvb4: 16 long words of every DRAM to every L2BM of a side
    Reduce4,    ///< mvr4<rrn>: each side's four L2BMs reduced into the DRAMs
    Distribute  ///< mvd: one PDM spread over the L2BMs or DRAMs, or back
  };
  RrnOp Reduction = RrnOp::FAdd;
  Precision Prec = Precision::None;
  Kind TransferKind = Nop;
  uint32_t Size = 0; ///< long words
  uint32_t Tag = 0;
  Space From = Space::None, To = Space::None;
  uint64_t FromAddress = 0, ToAddress = 0;
  /// Group and L2B of each end; -1 = every group (parallel transfers).
  int8_t FromGroup = -1, FromL2b = -1, ToGroup = -1, ToL2b = -1;
  /// Columns of the source and destination operands, for diagnostics.
  uint32_t FromColumn = 0, ToColumn = 0;
};

/// One statement (line) of a program.
struct Statement {
  enum Kind : uint8_t { Pe, DebugSet, DebugGet, SetMask, Mv };
  Kind StmtKind = Pe;
  uint32_t Line = 0;
  /// nop/<n>: the step repeated n times.
  uint32_t Repeat = 1;
  /// A destination of the step has a write mask of its own: the
  /// multi-line `mask` setting applies to none of the step's destinations
  /// (manual 3.6.2.1, decision S33).
  bool CancelsDefaultMask = false;
  std::vector<Expression> Expressions;
  DebugAccess Debug;
  MaskControl Mask;
  MvTransfer Transfer;
  /// The statement text, echoed after each `d get` dump line.
  std::string Text;
};

/// A parsed .vsm file.
struct Program {
  std::string FileName;
  std::vector<Statement> Statements;
  /// Where a self-contained kernel begins: the index of the statement
  /// after each `#pragma mncc kernel` line (docs/target/mncore2.md S39).
  /// Such a kernel reads no on-chip state it has not written itself, so
  /// the emulator may leave out the PE work of the groups whose L2BMs
  /// none of its MV transfers reads.
  std::vector<uint32_t> KernelStarts;
};

} // namespace mncc::emu

#endif // MNCC_EMU_PROGRAM_H
