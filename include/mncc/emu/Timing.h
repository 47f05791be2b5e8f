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
enum class Unit : uint8_t { Pe, Alu, Mau, Matrix, L1bm, L2bm, Mv };
constexpr unsigned NumUnits = 7;
const char *unitName(Unit unit);

/// Clock the times are reported at (decision T6).
constexpr double ClockHz = 750e6;
/// A PE step is four cycles (manual 3.6: one instruction line per step).
constexpr uint64_t CyclesPerStep = 4;
/// MV instructions issue once every four steps (manual chapter 1, restated
/// in MNCore2.md 2.2).
constexpr uint64_t StepsPerMvSlot = 4;
constexpr uint64_t CyclesPerMvSlot = CyclesPerStep * StepsPerMvSlot;
/// Long words an MV transfer moves per issue slot (decision T4: mvp repeats
/// unit transfers of 64 long words, manual 3.5 / MNCore2.md 6.3).
constexpr uint64_t MvLongWordsPerSlot = 64;

/// One complete trace event: an instruction on a unit's track.
struct TraceEvent {
  Unit Track = Unit::Pe;
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
  /// Slot and completion cycle of the last MV statement accounted (the
  /// hazard checker's clock for MV reads and writes).
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
              const Statement &stmt, int expression);

  bool Tracing;
  TimingStats Stats;
  uint64_t Now = 0;
  /// First cycle the MV unit is free again.
  uint64_t MvFree = 0;
  /// Completion cycle of the last MV transfer.
  uint64_t MvDone = 0;
  uint64_t LastMvStart = 0, LastMvEnd = 0;
  /// Completion cycle of the last MV transfer of each tag.
  std::unordered_map<uint32_t, uint64_t> TagDone;
  std::vector<TraceEvent> Events;
};

} // namespace mncc::emu

#endif // MNCC_EMU_TIMING_H
