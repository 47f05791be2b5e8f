//===- Hazards.h - Read-before-write checks of a VSM program ---*- C++ -*-===//
//
// mncc-sim moves data at once (docs/target/mncore2.md, decision S15), but
// the machine does not: a PE memory write lands cycles after its step
// issues, the L1BM and L2BM take longer, an MV transfer takes many MV slots,
// and the forwarding latches hold only the previous step's output. The
// assembler leaves the waits to the program (manual 3.6.3). HazardChecker
// replays the statement stream on the Timing clock (Timing.h, so `wait`
// stalls and MV slots count) and reports every read that comes before the
// write it depends on completes.
//
// The latency model and every reading of the manual behind it are decisions
// H1-H13 of docs/target/mncore2.md, section "Hazard checks".
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_EMU_HAZARDS_H
#define MNCC_EMU_HAZARDS_H

#include "mncc/emu/Program.h"
#include "mncc/emu/Timing.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mncc::emu {

/// Cycles from the first cycle of the step that writes a value to the
/// first cycle of a step that may read it (decisions H2-H8). The model is
/// step-grained: every cycle of a step reads at the step's first cycle and
/// its writes complete together, so a latency L asks for ceil(L / 4) - 1
/// steps in between.
namespace latency = target::latency;

/// One read that comes too early.
struct Hazard {
  uint32_t Line = 0;
  uint32_t Column = 0;
  /// The location in operand syntax: "$r4", "$lb64", "$t (cycle 2)",
  /// "$aluf".
  std::string Location;
  uint64_t ReadCycle = 0;
  /// The statement whose write is still in flight (0: none ever ran).
  uint32_t WriterLine = 0;
  uint64_t ReadyCycle = 0;
  /// A forwarding latch read whose last update carried no result of its
  /// unit (decision H9), rather than a write still in flight.
  bool StaleForwarding = false;
  /// A PE write landing in cycle ReadCycle on an MV transfer's source,
  /// which the transfer of line WriterLine reads until ReadyCycle
  /// (decision H14), rather than a read too early.
  bool OverwritesMvSource = false;

  /// "file:line:column: hazard: ...".
  std::string str(std::string_view file) const;
};

class HazardChecker {
public:
  /// Checks one statement against the writes still in flight, then
  /// records its own writes. Statements must come in program order.
  void onStatement(const Statement &stmt);
  const std::vector<Hazard> &hazards() const { return Found; }

private:
  /// A range of one storage: PE memories count words, T cycles, mask
  /// registers entries, matrix registers rows, upper memories long words.
  /// Unit is the L1B, L2B or group index, -1 for every one of them.
  struct Range {
    Space Where = Space::None;
    int Unit = -1;
    uint64_t Low = 0, High = 0; ///< [Low, High)
  };
  struct InFlight {
    Range Target;
    uint64_t Ready = 0;
    /// When an L1BM -> PE transfer may read it: Ready, but at most two
    /// steps after a PE -> L1BM transfer's step (decision H6).
    uint64_t ReadyForPe = 0;
    uint32_t Line = 0;
  };
  /// What a forwarding latch holds (decision H9).
  struct Latch {
    bool HoldsResult = false;
    uint32_t Line = 0;
  };
  enum LatchKind { AluLatch, MauLatch, LbLatch, MreadLatch, NumLatches };

  void peStatement(const Statement &stmt, uint64_t issue);
  void mvStatement(const Statement &stmt);
  /// Reports a hazard when a write to r is in flight at cycle `at`; once
  /// per (statement, column).
  bool checkRead(const Range &r, uint64_t at, uint32_t line, uint32_t column,
                 bool l1bmToPe = false);
  /// Reports a hazard when a write to r landing in cycle `lands` would
  /// change the source of an MV transfer still reading it (H14).
  void checkOverwrite(const Range &r, uint64_t lands, uint32_t line,
                      uint32_t column);
  void addWrite(const Range &r, uint64_t ready, uint32_t line,
                uint64_t readyForPe = ~uint64_t(0));
  /// The base address and T inputs of an LM access; true when reported.
  bool addressReads(const Operand &op, uint64_t issue, uint32_t line);
  void operandReads(const Operand &op, uint64_t issue, uint32_t line);
  void operandWrites(const Operand &op, uint64_t issue, uint64_t latency,
                     uint32_t line);
  void maskReads(const MaskSpec &mask, const Operand *destination,
                 uint32_t column, uint64_t issue, uint32_t line);

  Timing Clock;
  std::vector<InFlight> Pending;
  /// The sources of MV transfers and the cycle each transfer ends.
  std::vector<InFlight> MvSources;
  Latch Latches[NumLatches];
  MaskControl DefaultMask;
  std::vector<Hazard> Found;
  /// Columns already reported for the current statement.
  std::vector<uint32_t> Reported;
};

/// Checks a whole program; the hazards in program order.
std::vector<Hazard> checkHazards(const Program &program);

} // namespace mncc::emu

#endif // MNCC_EMU_HAZARDS_H
