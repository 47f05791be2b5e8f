//===- Timing.h - Step and cycle counts of an mncc-sim run -----*- C++ -*-===//
//
// A timing estimate kept beside the functional emulator: the machine runs
// every statement at once (docs/target/mncore2.md, "What runs"), and
// Timing replays the statement
// stream against the issue rules of the manual (1.3, 3.5, 3.6.5) to count
// PE steps, stalls, cycles and per-unit busy cycles. It is updated once per
// statement, never per PE, so it costs nothing in the hot loops.
//
// docs/target/mncore2.md, section "Execution timing", lists the rules and
// the decisions T1-T9 taken here.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_EMU_TIMING_H
#define MNCC_EMU_TIMING_H

#include "mncc/emu/Program.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace mncc::emu {

/// The units whose busy cycles are counted; one trace track each (T9).
using target::NumUnits;
using target::Unit;
const char *unitName(Unit unit);

// The clock, the steps and the MV rates (mncc/target/MNCore2.h, decisions
// T1, T4 and T6).
using target::ClockHz;
using target::CyclesPerMvSlot;
using target::CyclesPerStep;
using target::DramRate;
using target::GroupLinkRate;
using target::L2bmRate;
using target::MvRate;
using target::PdmRate;
using target::StepsPerMvSlot;

/// The ports of the MV transfers, each serving one transfer at a time:
/// the DRAM and the PDM of each group, the L2BM of each L2B, and the link
/// from group g to group h (g != h; the 4 entries g == h stay unused).
constexpr unsigned NumMvGroups = target::NumGroups, NumMvL2bs = target::NumL2bs;
constexpr unsigned mvDramPort(unsigned group) { return group; }
constexpr unsigned mvPdmPort(unsigned group) { return NumMvGroups + group; }
constexpr unsigned mvL2bmPort(unsigned l2b) { return 2 * NumMvGroups + l2b; }
constexpr unsigned mvLinkPort(unsigned from, unsigned to) {
  return 2 * NumMvGroups + NumMvL2bs + from * NumMvGroups + to;
}
constexpr unsigned NumMvPorts =
    2 * NumMvGroups + NumMvL2bs + NumMvGroups * NumMvGroups;
MvRate mvPortRate(unsigned port);
/// "dram@1", "pdm@0", "l2bm@2.1", "link 0->3".
std::string mvPortName(unsigned port);

/// Long words one MV statement moves through each port.
struct MvTraffic {
  uint64_t LongWords[NumMvPorts] = {};
};
MvTraffic mvTraffic(const MvTransfer &mv);
/// Cycles a transfer takes once all its ports are free: the slowest port,
/// ceil(long words * cycles / long words per rate) (decision T4).
uint64_t mvTransferCycles(const MvTransfer &mv);

/// One complete trace event: an instruction on a unit's track.
struct TraceEvent {
  Unit Track = Unit::Pe;
  /// MV transfers in flight together go on lanes 0, 1, ... of the mv
  /// track (decision T9).
  unsigned Lane = 0;
  uint64_t Start = 0;    ///< cycle
  uint64_t Duration = 0; ///< cycles
  uint32_t Line = 0;
  const Statement *Stmt = nullptr;
  /// Index of the expression in Stmt, or -1 for the whole statement.
  int Expression = -1;
};

/// Counters of one run.
struct TimingStats {
  /// PE steps issued (nop/<n> counts n), and cycles spent stalled in
  /// `wait` (decision T5).
  uint64_t Steps = 0;
  uint64_t StallCycles = 0;
  /// Instructions: PE statements, expressions, MV statements.
  uint64_t PeStatements = 0;
  uint64_t Expressions = 0;
  uint64_t MvStatements = 0;
  /// Cycles MV transfers waited after their slot for a port an earlier
  /// transfer held (decision T4).
  uint64_t MvQueuedCycles = 0;
  /// End of the run: the last PE step or the last MV transfer, whichever
  /// finishes later.
  uint64_t Cycles = 0;
  uint64_t Busy[NumUnits] = {};
  /// Multiply-adds of the MAU summed over all MABs (decision T7).
  uint64_t MauMacs = 0;

  double seconds() const { return double(Cycles) / ClockHz; }
};

class Timing {
public:
  /// Keeps trace events when trace is set; they point into the Program,
  /// which must outlive this object.
  explicit Timing(bool trace = false) : Tracing(trace) {}

  /// Accounts one statement; called by Machine::run before executing it.
  void onStatement(const Statement &stmt);
  /// Closes the run: Stats.Cycles covers every MV transfer still in flight.
  void finish();

  const TimingStats &stats() const { return Stats; }
  const std::vector<TraceEvent> &events() const { return Events; }
  /// Current PE cycle: the issue cycle of the next PE step.
  uint64_t cycle() const { return Now; }
  /// First and completion cycle of the transfer of the last MV statement
  /// accounted (the hazard checker's clock for MV reads and writes); for
  /// mvnop both are its slot.
  uint64_t lastMvStart() const { return LastMvStart; }
  uint64_t lastMvEnd() const { return LastMvEnd; }

  /// The counters as text, one "name: value" per line.
  std::string report() const;
  /// A Chrome / Perfetto trace (Trace Event Format, JSON object form).
  std::string traceJson() const;

  /// Unit an expression occupies.
  static Unit unitOf(Opcode op);
  /// MAU multiply-adds one expression performs in one cycle on one MAB.
  static uint64_t macsPerMabCycle(const Expression &expr);

private:
  void peStatement(const Statement &stmt);
  void mvStatement(const Statement &stmt);
  void record(Unit unit, uint64_t start, uint64_t duration,
              const Statement &stmt, int expression, unsigned lane = 0);

  bool Tracing;
  TimingStats Stats;
  uint64_t Now = 0;
  /// First cycle the next MV statement may issue at: the slot after the
  /// last one taken.
  uint64_t NextMvSlot = 0;
  /// First cycle each MV port is free again.
  uint64_t PortFree[NumMvPorts] = {};
  /// Completion cycle of the last MV transfer to finish.
  uint64_t MvDone = 0;
  /// End of the last transfer on each mv trace lane.
  std::vector<uint64_t> LaneFree;
  uint64_t LastMvStart = 0, LastMvEnd = 0;
  /// Completion cycle of the last MV transfer of each tag.
  std::unordered_map<uint32_t, uint64_t> TagDone;
  std::vector<TraceEvent> Events;
};

} // namespace mncc::emu

#endif // MNCC_EMU_TIMING_H
