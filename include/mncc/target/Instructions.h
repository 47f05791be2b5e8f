//===- Instructions.h - MN-Core 2 instruction facts as tables ---*- C++ -*-===//
//
// The rows of Instructions.def as constexpr data: the PE opcodes and, per
// opcode, its issue group, timing unit, latency class, L1BM direction and
// rates. Plain C++, no MLIR, so the emulator, a code generator and a VSM
// printer can all read it.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_TARGET_INSTRUCTIONS_H
#define MNCC_TARGET_INSTRUCTIONS_H

#include "mncc/target/MNCore2.h"

#include <cstdint>

namespace mncc::target {

/// A PE instruction expression, in the order of Instructions.def.
enum class Opcode : uint8_t {
#define MNCC_PE_OPCODE(Opcode, ...) Opcode,
#include "mncc/target/Instructions.def"
};

/// Precision prefix of an opcode.
enum class Precision : uint8_t { None, D, F, G, H, L, I, S };

/// The issue groups of manual 3.6.4: a step holds at most one expression
/// of each.
enum class IssueGroup : uint8_t {
  Nop,
  NoForward,
  Wait,
  Alu,
  MauCalc,
  MauWrite,
  MauRead,
  L1bm,
  L1bmTurnaround,
  L2bm
};

/// The units whose busy cycles the timing model counts (decision T2).
enum class Unit : uint8_t { Pe, Alu, Mau, Matrix, L1bm, L2bm, Mv };
inline constexpr unsigned NumUnits = 7;

/// When an instruction's writes complete (MNCore2.h's latency::).
enum class LatencyClass : uint8_t {
  None,
  PeWrite,
  MauWrite,
  MatrixWrite,
  UpperWrite
};

/// Which way an L1BM transfer moves data; Either is l1bmd, decided by its
/// operands.
enum class Direction : uint8_t { None, ToPe, FromPe, Either };

struct OpcodeInfo {
  /// The name without precision prefix or options ("l1bmm@", "vfma").
  const char *Mnemonic;
  IssueGroup Group;
  Unit BusyUnit;
  LatencyClass Latency;
  Direction L1bmDirection;
  /// Long words a cycle of each L1BM it touches.
  uint8_t L1bmLongWords;
  /// Long words a cycle of the L2BM (L2BM instructions).
  uint8_t L2bmLongWords;
  /// RRN stages of four of its reduction.
  uint8_t RrnStages;
};

inline constexpr OpcodeInfo OpcodeInfos[] = {
#define MNCC_PE_OPCODE(Op, Mnemonic, Group, BusyUnit, Latency, Dir, L1bm,      \
                       L2bm, Stages)                                           \
  {Mnemonic,       IssueGroup::Group,                                          \
   Unit::BusyUnit, LatencyClass::Latency,                                      \
   Direction::Dir, L1bm,                                                       \
   L2bm,           Stages},
#include "mncc/target/Instructions.def"
};

constexpr const OpcodeInfo &opcodeInfo(Opcode op) {
  return OpcodeInfos[unsigned(op)];
}

/// Cycles after issue at which writes of a latency class complete.
constexpr uint64_t writeLatency(LatencyClass latency) {
  switch (latency) {
  case LatencyClass::PeWrite:
    return latency::PeWrite;
  case LatencyClass::MauWrite:
    return latency::MauWrite;
  case LatencyClass::MatrixWrite:
    return latency::MatrixWrite;
  case LatencyClass::UpperWrite:
    return latency::UpperWrite;
  case LatencyClass::None:
    break;
  }
  return 0;
}

/// Multiply-adds per MAB and cycle of an MAU product (decision T7).
constexpr uint64_t macsPerMabCycle(Opcode op, Precision prec) {
#define MNCC_MAU_MACS(Op, Prec, Macs)                                          \
  if (op == Opcode::Op && prec == Precision::Prec)                             \
    return Macs;
#include "mncc/target/Instructions.def"
  return 0;
}

} // namespace mncc::target

#endif // MNCC_TARGET_INSTRUCTIONS_H
