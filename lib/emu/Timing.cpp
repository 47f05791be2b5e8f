//===- Timing.cpp - Step and cycle counts of an mncc-sim run --------------===//
//
// The rules (docs/target/mncore2.md, "Execution timing", decisions T1-T9):
// a PE statement is one step of four cycles per repetition; `wait i<n>`
// holds the step until the last MV transfer tagged n is done; MV statements
// issue on the MV slot, once every four steps, and each transfer runs once
// the memories and links it moves data through are free, at the rate of
// the slowest of them. Debug and `mask` statements take no time.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Timing.h"

#include "mncc/emu/Machine.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace mncc::emu {

namespace {

void appendf(std::string &out, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
void appendf(std::string &out, const char *format, ...) {
  char buffer[256];
  va_list args;
  va_start(args, format);
  int n = std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  if (n > 0)
    out.append(buffer, std::min<size_t>(size_t(n), sizeof buffer - 1));
}

uint64_t roundUp(uint64_t value, uint64_t step) {
  return (value + step - 1) / step * step;
}

/// The i-th non-empty ';'-separated piece of a PE statement: the parser
/// keeps the expressions in that order.
std::string expressionText(const std::string &text, int index) {
  size_t start = 0;
  int seen = 0;
  while (start <= text.size()) {
    size_t semi = text.find(';', start);
    if (semi == std::string::npos)
      semi = text.size();
    size_t first = text.find_first_not_of(" \t", start);
    if (first != std::string::npos && first < semi) {
      size_t last = text.find_last_not_of(" \t", semi - 1);
      if (seen++ == index)
        return text.substr(first, last + 1 - first);
    }
    start = semi + 1;
  }
  return text;
}

void appendJsonString(std::string &out, const std::string &text) {
  out += '"';
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      appendf(out, "\\u%04x", unsigned(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  out += '"';
}

/// Trace Event Format times are microseconds.
void appendMicroseconds(std::string &out, uint64_t cycles) {
  appendf(out, "%.4f", double(cycles) * 1e6 / ClockHz);
}

} // namespace

const char *unitName(Unit unit) {
  switch (unit) {
  case Unit::Pe:
    return "pe";
  case Unit::Alu:
    return "alu";
  case Unit::Mau:
    return "mau";
  case Unit::Matrix:
    return "matrix";
  case Unit::L1bm:
    return "l1bm";
  case Unit::L2bm:
    return "l2bm";
  case Unit::Mv:
    return "mv";
  }
  return "?";
}

static_assert(NumMvGroups == NumGroups && NumMvL2bs == NumL2bs,
              "the MV ports cover the machine's groups and L2Bs");

MvRate mvPortRate(unsigned port) {
  if (port < mvPdmPort(0))
    return DramRate;
  if (port < mvL2bmPort(0))
    return PdmRate;
  if (port < mvLinkPort(0, 0))
    return L2bmRate;
  return GroupLinkRate;
}

std::string mvPortName(unsigned port) {
  char buffer[32];
  if (port < mvPdmPort(0))
    std::snprintf(buffer, sizeof buffer, "dram@%u", port);
  else if (port < mvL2bmPort(0))
    std::snprintf(buffer, sizeof buffer, "pdm@%u", port - mvPdmPort(0));
  else if (port < mvLinkPort(0, 0))
    std::snprintf(buffer, sizeof buffer, "l2bm@%u.%u",
                  (port - mvL2bmPort(0)) / L2bsPerGroup,
                  (port - mvL2bmPort(0)) % L2bsPerGroup);
  else
    std::snprintf(buffer, sizeof buffer, "link %u->%u",
                  (port - mvLinkPort(0, 0)) / NumMvGroups,
                  (port - mvLinkPort(0, 0)) % NumMvGroups);
  return buffer;
}

namespace {

/// The port of one end of an MV transfer in a group: its DRAM, its PDM or
/// one of its L2BMs (an L2BM end without ".<l2b>" is L2B 0, decision S20).
unsigned endPort(Space where, unsigned group, int8_t l2b) {
  switch (where) {
  case Space::DRAM:
    return mvDramPort(group);
  case Space::PDM:
    return mvPdmPort(group);
  default:
    return mvL2bmPort(group * L2bsPerGroup + unsigned(l2b < 0 ? 0 : l2b));
  }
}

/// Moves `longWords` from group `from` to group `to`: the link between
/// them carries them when the groups differ.
void crossGroups(MvTraffic &t, unsigned from, unsigned to, uint64_t longWords) {
  if (from != to)
    t.LongWords[mvLinkPort(from, to)] += longWords;
}

void everyL2bm(MvTraffic &t, uint64_t longWords) {
  for (unsigned l2b = 0; l2b < NumL2bs; ++l2b)
    t.LongWords[mvL2bmPort(l2b)] += longWords;
}

} // namespace

MvTraffic mvTraffic(const MvTransfer &mv) {
  // What each port carries follows from what the transfer moves (manual
  // 3.5.8): long words read from or written to a memory count on its port,
  // and long words that change group on the link between the two groups
  // (decision T4 derives the rates and checks them against the manual's).
  MvTraffic t;
  uint64_t n = mv.Size;
  switch (mv.TransferKind) {
  case MvTransfer::Nop:
    break;
  case MvTransfer::Point:
    if (mv.FromGroup >= 0) {
      // Single: one group's memory to one (possibly another) group's.
      unsigned from = unsigned(mv.FromGroup), to = unsigned(mv.ToGroup);
      t.LongWords[endPort(mv.From, from, mv.FromL2b)] += n;
      t.LongWords[endPort(mv.To, to, mv.ToL2b)] += n;
      crossGroups(t, from, to, n);
    } else {
      // Parallel: every group within itself, all at once.
      for (unsigned g = 0; g < NumGroups; ++g) {
        t.LongWords[endPort(mv.From, g, mv.FromL2b)] += n;
        t.LongWords[endPort(mv.To, g, mv.ToL2b)] += n;
      }
    }
    break;
  case MvTransfer::Broadcast: {
    // mvb: one group's PDM or DRAM to every L2BM of the board.
    unsigned from = unsigned(mv.FromGroup);
    t.LongWords[endPort(mv.From, from, -1)] += n;
    everyL2bm(t, n);
    for (unsigned g = 0; g < NumGroups; ++g)
      crossGroups(t, from, g, n);
    break;
  }
  case MvTransfer::Broadcast2:
    // mvb2: each group's DRAM to its own two L2BMs.
    for (unsigned g = 0; g < NumGroups; ++g)
      t.LongWords[mvDramPort(g)] += n;
    everyL2bm(t, n);
    break;
  case MvTransfer::Reduce:
    // mvr: the eight L2BMs, reduced. Into the DRAMs without a group each
    // group receives a quarter (manual 3.5.8.21), so every group sends a
    // quarter of its partial sums to each other group; into one named
    // memory every other group sends all of its partial sums; into every
    // PDM every group sends all of them to every other group.
    everyL2bm(t, n);
    if (mv.ToGroup >= 0) {
      unsigned to = unsigned(mv.ToGroup);
      t.LongWords[endPort(mv.To, to, -1)] += n;
      for (unsigned g = 0; g < NumGroups; ++g)
        crossGroups(t, g, to, n);
    } else {
      uint64_t share = mv.To == Space::DRAM ? n / NumGroups : n;
      for (unsigned to = 0; to < NumGroups; ++to) {
        t.LongWords[endPort(mv.To, to, -1)] += share;
        for (unsigned g = 0; g < NumGroups; ++g)
          crossGroups(t, g, to, share);
      }
    }
    break;
  case MvTransfer::Broadcast4:
  case MvTransfer::Reduce4:
    // mvb4 / mvr4: each group's DRAM reads or writes half the size, every
    // L2BM the whole size, and each group's half goes to (or comes from)
    // every other group (manual 3.5.8.16, 3.5.8.17).
    everyL2bm(t, n);
    for (unsigned g = 0; g < NumGroups; ++g) {
      t.LongWords[mvDramPort(g)] += n / 2;
      for (unsigned h = 0; h < NumGroups; ++h)
        crossGroups(t, g, h, n / 2);
    }
    break;
  case MvTransfer::Distribute: {
    // mvd: the named PDM moves the whole size; it is spread evenly over
    // the eight L2BMs or the four DRAMs, and the share of each other group
    // crosses its link.
    bool toPdm = mv.To == Space::PDM;
    unsigned pdm = unsigned(toPdm ? mv.ToGroup : mv.FromGroup);
    Space other = toPdm ? mv.From : mv.To;
    t.LongWords[mvPdmPort(pdm)] += n;
    for (unsigned g = 0; g < NumGroups; ++g) {
      if (other == Space::L2BM) {
        for (unsigned l2b = 0; l2b < L2bsPerGroup; ++l2b)
          t.LongWords[mvL2bmPort(g * L2bsPerGroup + l2b)] += n / NumL2bs;
      } else {
        t.LongWords[mvDramPort(g)] += n / NumGroups;
      }
      if (toPdm)
        crossGroups(t, g, pdm, n / NumGroups);
      else
        crossGroups(t, pdm, g, n / NumGroups);
    }
    break;
  }
  case MvTransfer::Reduce2:
    // mvr2: the two L2BMs of a group (of each group) into a PDM or DRAM.
    for (unsigned g = 0; g < NumGroups; ++g) {
      if (mv.FromGroup >= 0 && g != unsigned(mv.FromGroup))
        continue;
      unsigned to = mv.ToGroup >= 0 ? unsigned(mv.ToGroup) : g;
      t.LongWords[mvL2bmPort(g * L2bsPerGroup)] += n;
      t.LongWords[mvL2bmPort(g * L2bsPerGroup + 1)] += n;
      t.LongWords[endPort(mv.To, to, -1)] += n;
      crossGroups(t, g, to, n);
    }
    break;
  }
  return t;
}

uint64_t mvTransferCycles(const MvTransfer &mv) {
  MvTraffic t = mvTraffic(mv);
  uint64_t cycles = 0;
  for (unsigned port = 0; port < NumMvPorts; ++port) {
    if (!t.LongWords[port])
      continue;
    MvRate rate = mvPortRate(port);
    cycles = std::max(cycles,
                      (t.LongWords[port] * rate.Cycles + rate.LongWords - 1) /
                          rate.LongWords);
  }
  return cycles;
}

Unit Timing::unitOf(Opcode op) { return target::opcodeInfo(op).BusyUnit; }

uint64_t Timing::macsPerMabCycle(const Expression &expr) {
  // Manual 1.4 (restated in docs/target/mncore2.md, "MAU throughput per
  // MAB and cycle"), decision T7; the table is in Instructions.def.
  return target::macsPerMabCycle(expr.Op, expr.Prec);
}

void Timing::record(Unit unit, uint64_t start, uint64_t duration,
                    const Statement &stmt, int expression, unsigned lane) {
  if (!Tracing)
    return;
  TraceEvent event;
  event.Track = unit;
  event.Lane = lane;
  event.Start = start;
  event.Duration = duration;
  event.Line = stmt.Line;
  event.Stmt = &stmt;
  event.Expression = expression;
  Events.push_back(event);
}

void Timing::onStatement(const Statement &stmt) {
  switch (stmt.StmtKind) {
  case Statement::Pe:
    peStatement(stmt);
    return;
  case Statement::Mv:
    mvStatement(stmt);
    return;
  case Statement::DebugSet:
  case Statement::DebugGet:
  case Statement::SetMask:
    // Emulator controls and the multi-line mask setting are no PE
    // instruction (manual 3.6.2.1): no step (decision T1).
    return;
  }
}

void Timing::peStatement(const Statement &stmt) {
  // wait: no step issues before the tagged MV transfer is done (manual
  // 3.6.5). A tag no transfer carried so far waits for nothing (T5).
  for (const Expression &expr : stmt.Expressions) {
    if (expr.Op != Opcode::Wait)
      continue;
    auto it = TagDone.find(expr.Tag);
    if (it != TagDone.end() && it->second > Now) {
      Stats.StallCycles += it->second - Now;
      if (Tracing) {
        TraceEvent stall;
        stall.Track = Unit::Pe;
        stall.Start = Now;
        stall.Duration = it->second - Now;
        stall.Line = stmt.Line;
        stall.Stmt = &stmt;
        stall.Expression = -2; // the stall itself
        Events.push_back(stall);
      }
      Now = it->second;
    }
  }
  uint64_t duration = uint64_t(stmt.Repeat) * CyclesPerStep;
  ++Stats.PeStatements;
  Stats.Steps += stmt.Repeat;
  record(Unit::Pe, Now, duration, stmt, -1);
  for (size_t i = 0; i < stmt.Expressions.size(); ++i) {
    const Expression &expr = stmt.Expressions[i];
    Unit unit = unitOf(expr.Op);
    if (unit == Unit::Pe)
      continue;
    ++Stats.Expressions;
    // Every unit an expression uses is busy for its whole step: the
    // operands stream over the four cycles (decision T3).
    Stats.Busy[unsigned(unit)] += duration;
    Stats.MauMacs += macsPerMabCycle(expr) * duration * NumMabs;
    record(unit, Now, duration, stmt, int(i));
  }
  Stats.Busy[unsigned(Unit::Pe)] += duration;
  Now += duration;
}

void Timing::mvStatement(const Statement &stmt) {
  const MvTransfer &mv = stmt.Transfer;
  ++Stats.MvStatements;
  // The MV slot comes once every four steps (manual chapter 1) and takes
  // one MV statement; issuing never waits for earlier transfers (T2).
  uint64_t slot = roundUp(std::max(Now, NextMvSlot), CyclesPerMvSlot);
  NextMvSlot = slot + CyclesPerMvSlot;
  if (mv.TransferKind == MvTransfer::Nop) {
    // mvnop fills its slot and moves nothing.
    LastMvStart = LastMvEnd = slot;
    record(Unit::Mv, slot, 0, stmt, -1);
    return;
  }
  // Each memory and link serves one transfer at a time, in issue order
  // (manual 3.5.7 arbitrates the accesses of several MV instructions in
  // each PDM, DRAM and L2BM): the transfer starts once every port it uses
  // is free and holds them all until it is done (T4).
  MvTraffic traffic = mvTraffic(mv);
  uint64_t start = slot;
  for (unsigned port = 0; port < NumMvPorts; ++port)
    if (traffic.LongWords[port])
      start = std::max(start, PortFree[port]);
  uint64_t duration = mvTransferCycles(mv);
  uint64_t end = start + duration;
  for (unsigned port = 0; port < NumMvPorts; ++port)
    if (traffic.LongWords[port])
      PortFree[port] = end;
  Stats.MvQueuedCycles += start - slot;
  Stats.Busy[unsigned(Unit::Mv)] += duration;
  MvDone = std::max(MvDone, end);
  // A tag carried by several transfers in flight is waited for until the
  // last of them is done (T5).
  if (mv.Tag)
    TagDone[mv.Tag] = std::max(TagDone[mv.Tag], end);
  LastMvStart = start;
  LastMvEnd = end;
  if (Tracing) {
    // Transfers in flight together go on separate lanes of the mv track,
    // so that every lane's events nest (T9).
    unsigned lane = 0;
    while (lane < LaneFree.size() && LaneFree[lane] > start)
      ++lane;
    if (lane == LaneFree.size())
      LaneFree.push_back(0);
    LaneFree[lane] = end;
    record(Unit::Mv, start, duration, stmt, -1, lane);
  }
}

void Timing::finish() { Stats.Cycles = std::max(Now, MvDone); }

std::string Timing::report() const {
  const TimingStats &s = Stats;
  std::string out;
  appendf(out, "steps: %llu\n", (unsigned long long)s.Steps);
  appendf(out, "stall-cycles: %llu\n", (unsigned long long)s.StallCycles);
  appendf(out, "cycles: %llu\n", (unsigned long long)s.Cycles);
  appendf(out, "time-us: %.4f (750 MHz)\n", s.seconds() * 1e6);
  appendf(out, "pe-statements: %llu\n", (unsigned long long)s.PeStatements);
  appendf(out, "expressions: %llu\n", (unsigned long long)s.Expressions);
  appendf(out, "mv-statements: %llu\n", (unsigned long long)s.MvStatements);
  appendf(out, "mv-queued-cycles: %llu\n",
          (unsigned long long)s.MvQueuedCycles);
  for (unsigned u = 1; u < NumUnits; ++u)
    appendf(out, "busy-%s: %llu\n", unitName(Unit(u)),
            (unsigned long long)s.Busy[u]);
  appendf(out, "mau-macs: %llu\n", (unsigned long long)s.MauMacs);
  return out;
}

std::string Timing::traceJson() const {
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  out += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
         "\"args\":{\"name\":\"MN-Core 2 (mncc-sim)\"}}";
  for (unsigned u = 0; u < NumUnits; ++u) {
    appendf(out,
            ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,"
            "\"args\":{\"name\":\"%s\"}}",
            u, unitName(Unit(u)));
    appendf(out,
            ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,"
            "\"tid\":%u,\"args\":{\"sort_index\":%u}}",
            u, u);
  }
  // Lanes 1, 2, ... of the mv track follow it (T9).
  unsigned lanes = 1;
  for (const TraceEvent &e : Events)
    lanes = std::max(lanes, e.Lane + 1);
  for (unsigned lane = 1; lane < lanes; ++lane) {
    unsigned tid = unsigned(Unit::Mv) + lane;
    appendf(out,
            ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,"
            "\"args\":{\"name\":\"mv %u\"}}",
            tid, lane + 1);
    appendf(out,
            ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,"
            "\"tid\":%u,\"args\":{\"sort_index\":%u}}",
            tid, tid);
  }
  for (const TraceEvent &e : Events) {
    std::string text = e.Stmt->Text;
    if (e.Expression >= 0)
      text = expressionText(text, e.Expression);
    else if (e.Expression == -2)
      text = "stall: " + expressionText(text, -1);
    out += ",\n{\"name\":";
    appendJsonString(out, text);
    appendf(out, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%u,\"ts\":",
            unitName(e.Track), unsigned(e.Track) + e.Lane);
    appendMicroseconds(out, e.Start);
    out += ",\"dur\":";
    appendMicroseconds(out, e.Duration);
    appendf(out, ",\"args\":{\"line\":%u,\"cycle\":%llu,\"cycles\":%llu}}",
            e.Line, (unsigned long long)e.Start,
            (unsigned long long)e.Duration);
  }
  out += "\n]}\n";
  return out;
}

} // namespace mncc::emu
