//===- Hazards.cpp - Read-before-write checks of a VSM program ------------===//
//
// Replays the statement stream on the Timing clock and keeps the writes
// still in flight as address ranges with the cycle they complete; every
// read is checked against them. VSM has no branches, so one pass over the
// program is exact except for addresses only known at run time (through T,
// per-PE base addresses), which decisions H10 and H11 settle.
// docs/target/mncore2.md, "Hazard checks", has the model and H1-H13.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Hazards.h"

#include <algorithm>
#include <cstdio>

namespace mncc::emu {

namespace {

const char *latchName(int kind) {
  static const char *const Names[] = {"$aluf", "$mauf", "$lbf", "$mreadf"};
  return Names[kind];
}

using target::opcodeInfo;

bool isAluOp(Opcode op) {
  return opcodeInfo(op).Group == target::IssueGroup::Alu;
}

bool isMauOp(Opcode op) {
  return opcodeInfo(op).Group == target::IssueGroup::MauCalc;
}

/// L1BM -> PE transfers, the producers of $lbf.
bool isL1bmToPe(const Expression &expr) {
  switch (opcodeInfo(expr.Op).L1bmDirection) {
  case target::Direction::ToPe:
    return true;
  case target::Direction::Either:
    return !expr.ToUpper;
  default:
    return false;
  }
}

/// PE -> L1BM transfers and their RRN stages of four (decision H6).
bool isPeToL1bm(const Expression &expr, unsigned &stages) {
  const target::OpcodeInfo &info = opcodeInfo(expr.Op);
  stages = info.RrnStages;
  switch (info.L1bmDirection) {
  case target::Direction::FromPe:
    return true;
  case target::Direction::Either:
    return expr.ToUpper;
  default:
    return false;
  }
}

/// Long words per cycle and width unit of an L1BM layout (decision S17).
uint64_t l1bmGroup(Opcode op) { return opcodeInfo(op).L1bmLongWords; }

uint32_t wordSpace(Space where) {
  return where == Space::LM0 || where == Space::LM1 ? target::LmWords
                                                    : target::GrfWords;
}

int latchOf(Space where) {
  switch (where) {
  case Space::ForwardAlu:
    return 0;
  case Space::ForwardMau:
    return 1;
  case Space::ForwardLb:
    return 2;
  case Space::ForwardMread:
    return 3;
  default:
    return -1;
  }
}

/// The multi-line mask covers a destination kind (manual 3.6.2.1).
bool defaultMaskCovers(const MaskControl &mask, Space where) {
  uint8_t bit = 0;
  switch (where) {
  case Space::GRF0:
    bit = MaskGrf0;
    break;
  case Space::GRF1:
    bit = MaskGrf1;
    break;
  case Space::T:
    bit = MaskT;
    break;
  case Space::LM0:
  case Space::BarLM0:
    bit = MaskLm0;
    break;
  case Space::LM1:
  case Space::BarLM1:
    bit = MaskLm1;
    break;
  case Space::MaskReg:
    bit = MaskMaskReg;
    break;
  default:
    return false;
  }
  // No target letter means every kind.
  return mask.Targets == 0 || (mask.Targets & bit);
}

std::string locationName(Space where, int unit, uint64_t address) {
  char buffer[64];
  const char *prefix = "";
  switch (where) {
  case Space::LM0:
    prefix = "$m";
    break;
  case Space::LM1:
    prefix = "$n";
    break;
  case Space::GRF0:
    prefix = "$r";
    break;
  case Space::GRF1:
    prefix = "$s";
    break;
  case Space::T:
    std::snprintf(buffer, sizeof buffer, "$t (cycle %llu)",
                  (unsigned long long)address);
    return buffer;
  case Space::MaskReg:
    prefix = "$omr";
    break;
  case Space::BarLM0:
    return "$mb";
  case Space::BarLM1:
    return "$nb";
  case Space::MatX:
    prefix = "$lx";
    break;
  case Space::MatY:
    prefix = "$ly";
    break;
  case Space::L1BM:
    prefix = "$lb";
    break;
  case Space::L2BM:
    prefix = "$lc";
    break;
  case Space::PDM:
    prefix = "$p";
    break;
  case Space::DRAM:
    prefix = "$d";
    break;
  default:
    prefix = "$?";
    break;
  }
  int n = std::snprintf(buffer, sizeof buffer, "%s%llu", prefix,
                        (unsigned long long)address);
  if (unit >= 0 && n > 0 && size_t(n) < sizeof buffer) {
    if (where == Space::L2BM)
      std::snprintf(buffer + n, sizeof buffer - size_t(n), "@%d.%d", unit / 2,
                    unit % 2);
    else if (where == Space::PDM || where == Space::DRAM)
      std::snprintf(buffer + n, sizeof buffer - size_t(n), "@%d", unit);
  }
  return buffer;
}

/// The unit index of an MV end: the group of PDM and DRAM, group * 2 +
/// L2B of an L2BM; -1 when every group takes part.
int mvUnit(Space where, int8_t group, int8_t l2b) {
  if (group < 0)
    return -1;
  if (where == Space::L2BM)
    return group * 2 + (l2b < 0 ? 0 : l2b);
  return group;
}

} // namespace

std::string Hazard::str(std::string_view file) const {
  char buffer[512];
  if (OverwritesMvSource) {
    std::snprintf(buffer, sizeof buffer,
                  ":%u:%u: hazard: %s written in cycle %llu (step %llu) while "
                  "the MV transfer from line %u reads it until cycle %llu",
                  Line, Column, Location.c_str(), (unsigned long long)ReadCycle,
                  (unsigned long long)(ReadCycle / CyclesPerStep), WriterLine,
                  (unsigned long long)ReadyCycle);
  } else if (StaleForwarding) {
    if (WriterLine)
      std::snprintf(
          buffer, sizeof buffer,
          ":%u:%u: hazard: %s read in cycle %llu (step %llu) holds "
          "no result: the step at line %u updated it without one",
          Line, Column, Location.c_str(), (unsigned long long)ReadCycle,
          (unsigned long long)(ReadCycle / CyclesPerStep), WriterLine);
    else
      std::snprintf(buffer, sizeof buffer,
                    ":%u:%u: hazard: %s read in cycle %llu (step %llu) "
                    "before any step wrote it",
                    Line, Column, Location.c_str(),
                    (unsigned long long)ReadCycle,
                    (unsigned long long)(ReadCycle / CyclesPerStep));
  } else {
    std::snprintf(buffer, sizeof buffer,
                  ":%u:%u: hazard: %s read in cycle %llu (step %llu) before "
                  "the write from line %u completes in cycle %llu",
                  Line, Column, Location.c_str(), (unsigned long long)ReadCycle,
                  (unsigned long long)(ReadCycle / CyclesPerStep), WriterLine,
                  (unsigned long long)ReadyCycle);
  }
  return std::string(file) + buffer;
}

bool HazardChecker::checkRead(const Range &r, uint64_t at, uint32_t line,
                              uint32_t column, bool l1bmToPe) {
  const InFlight *latest = nullptr;
  auto ready = [&](const InFlight &w) {
    return l1bmToPe ? w.ReadyForPe : w.Ready;
  };
  for (const InFlight &w : Pending) {
    if (w.Target.Where != r.Where || ready(w) <= at)
      continue;
    if (w.Target.Unit >= 0 && r.Unit >= 0 && w.Target.Unit != r.Unit)
      continue;
    if (w.Target.High <= r.Low || r.High <= w.Target.Low)
      continue;
    if (!latest || ready(w) > ready(*latest))
      latest = &w;
  }
  if (!latest)
    return false;
  // One report per operand and statement: the earliest cycle is enough.
  if (std::find(Reported.begin(), Reported.end(), column) != Reported.end())
    return true;
  Reported.push_back(column);
  Hazard h;
  h.Line = line;
  h.Column = column;
  h.Location = locationName(r.Where, r.Unit >= 0 ? r.Unit : latest->Target.Unit,
                            std::max(r.Low, latest->Target.Low));
  h.ReadCycle = at;
  h.WriterLine = latest->Line;
  h.ReadyCycle = ready(*latest);
  Found.push_back(std::move(h));
  return true;
}

void HazardChecker::checkOverwrite(const Range &r, uint64_t lands,
                                   uint32_t line, uint32_t column) {
  const InFlight *latest = nullptr;
  for (const InFlight &m : MvSources) {
    if (m.Target.Where != r.Where || m.Ready <= lands)
      continue;
    if (m.Target.Unit >= 0 && r.Unit >= 0 && m.Target.Unit != r.Unit)
      continue;
    if (m.Target.High <= r.Low || r.High <= m.Target.Low)
      continue;
    if (!latest || m.Ready > latest->Ready)
      latest = &m;
  }
  if (!latest ||
      std::find(Reported.begin(), Reported.end(), column) != Reported.end())
    return;
  Reported.push_back(column);
  Hazard h;
  h.Line = line;
  h.Column = column;
  h.Location = locationName(r.Where, r.Unit >= 0 ? r.Unit : latest->Target.Unit,
                            std::max(r.Low, latest->Target.Low));
  h.ReadCycle = lands;
  h.WriterLine = latest->Line;
  h.ReadyCycle = latest->Ready;
  h.OverwritesMvSource = true;
  Found.push_back(std::move(h));
}

void HazardChecker::addWrite(const Range &r, uint64_t ready, uint32_t line,
                             uint64_t readyForPe) {
  InFlight w;
  w.Target = r;
  w.Ready = ready;
  w.ReadyForPe = readyForPe == ~uint64_t(0) ? ready : readyForPe;
  w.Line = line;
  Pending.push_back(w);
}

namespace {

/// The storage a PE operand touches in one cycle; false when it touches
/// none or its address is only known at run time (through T, decision
/// H10).
bool peRange(const Operand &op, unsigned cycle, Space &where, uint64_t &low,
             uint64_t &high) {
  where = op.Where;
  switch (op.Where) {
  case Space::LM0:
  case Space::LM1:
  case Space::GRF0:
  case Space::GRF1: {
    if (op.ThroughT)
      return false;
    uint64_t words = uint64_t(op.Size);
    uint64_t address = op.Flat ? op.Address[cycle]
                               : op.Address[0] + uint64_t(op.Stride) * cycle;
    address %= wordSpace(op.Where);
    address &= ~(words - 1);
    low = address;
    // j<madpe> moves some PEs one width on: either range may be touched.
    high = address + words * (op.MabAdjust ? 2 : 1);
    return true;
  }
  case Space::T:
    // One double long word per cycle (decision S4).
    low = cycle;
    high = cycle + 1;
    return true;
  case Space::MaskReg:
    low = op.Address[0];
    high = low + 1;
    return true;
  case Space::BarLM0:
  case Space::BarLM1:
    low = 0;
    high = 1;
    return true;
  default:
    return false;
  }
}

} // namespace

bool HazardChecker::addressReads(const Operand &op, uint64_t issue,
                                 uint32_t line) {
  // Address inputs are read a step ahead of the data (decision H8): the
  // base address register of every LM access, T for "$mt".
  uint64_t at =
      issue >= latency::AddressLead ? issue - latency::AddressLead : 0;
  if (op.Where == Space::LM0 || op.Where == Space::LM1) {
    Range bar;
    bar.Where = op.Where == Space::LM0 ? Space::BarLM0 : Space::BarLM1;
    bar.High = 1;
    if (checkRead(bar, at, line, op.Column))
      return true;
  }
  if (op.ThroughT) {
    Range t;
    t.Where = Space::T;
    t.High = 4; // cycle c reads slot c
    if (checkRead(t, at, line, op.Column))
      return true;
  }
  return false;
}

void HazardChecker::operandReads(const Operand &op, uint64_t issue,
                                 uint32_t line) {
  int latch = latchOf(op.Where);
  if (latch >= 0) {
    const Latch &l = Latches[latch];
    if (l.HoldsResult)
      return;
    if (std::find(Reported.begin(), Reported.end(), op.Column) !=
        Reported.end())
      return;
    Reported.push_back(op.Column);
    Hazard h;
    h.Line = line;
    h.Column = op.Column;
    h.Location = latchName(latch);
    h.ReadCycle = issue;
    h.WriterLine = l.Line;
    h.StaleForwarding = true;
    Found.push_back(std::move(h));
    return;
  }
  if (addressReads(op, issue, line))
    return;
  for (unsigned cycle = 0; cycle < 4; ++cycle) {
    Range r;
    if (peRange(op, cycle, r.Where, r.Low, r.High) &&
        checkRead(r, issue, line, op.Column))
      return;
  }
}

void HazardChecker::maskReads(const MaskSpec &mask, const Operand *destination,
                              uint32_t column, uint64_t issue, uint32_t line) {
  unsigned entry = 0;
  if (mask.MaskKind == MaskSpec::Register)
    entry = mask.Entry;
  else if (mask.MaskKind == MaskSpec::Default && destination &&
           DefaultMask.Entry >= 1 && DefaultMask.Entry <= 15 &&
           defaultMaskCovers(DefaultMask, destination->Where))
    entry = DefaultMask.Entry;
  if (!entry)
    return;
  Range r;
  r.Where = Space::MaskReg;
  r.Low = entry;
  r.High = entry + 1;
  checkRead(r, issue, line, column);
}

void HazardChecker::operandWrites(const Operand &op, uint64_t issue,
                                  uint64_t latency, uint32_t line) {
  for (unsigned cycle = 0; cycle < 4; ++cycle) {
    Range r;
    if (peRange(op, cycle, r.Where, r.Low, r.High))
      addWrite(r, issue + latency, line);
  }
}

void HazardChecker::peStatement(const Statement &stmt, uint64_t issue) {
  uint32_t line = stmt.Line;
  bool forward = true;
  for (const Expression &expr : stmt.Expressions)
    if (expr.Op == Opcode::Nop || expr.Op == Opcode::NoForward)
      forward = false;

  // Reads first: every expression of the step reads the state from before
  // it (decision S15), so writes of the same step never satisfy them.
  for (const Expression &expr : stmt.Expressions) {
    if (expr.Op == Opcode::Nop || expr.Op == Opcode::NoForward ||
        expr.Op == Opcode::Wait)
      continue;
    for (const Operand &src : expr.Sources) {
      // The turnaround register is a latch read by the next step, like
      // the forwarding paths (decision H13).
      if (src.Turnaround)
        continue;
      switch (src.Where) {
      case Space::L1BM:
      case Space::L2BM: {
        // Upper memory sources of L1BM and L2BM instructions.
        for (unsigned cycle = 0; cycle < 4; ++cycle) {
          Range r;
          r.Where = src.Where;
          uint64_t longs = src.Size == Width::DoubleLong ? 2 : 1;
          const target::OpcodeInfo &info = opcodeInfo(expr.Op);
          uint64_t count;
          if (info.Group == target::IssueGroup::L1bm)
            count = info.L1bmLongWords * longs;
          else
            count = src.Where == Space::L2BM ? info.L2bmLongWords
                                             : info.L1bmLongWords;
          r.Low = src.Address[0] + cycle * count;
          r.High = r.Low + count;
          if (checkRead(r, issue, line, src.Column, isL1bmToPe(expr)))
            break;
        }
        break;
      }
      case Space::MatX:
      case Space::MatY: {
        // Products and transposed reads touch every row each cycle.
        Range r;
        r.Where = src.Where;
        r.High = 16;
        checkRead(r, issue, line, src.Column);
        break;
      }
      default:
        operandReads(src, issue, line);
        break;
      }
    }
    maskReads(expr.ZeroFlush, nullptr, expr.Column, issue, line);
    // Write masks act where the result is written back, so they read their
    // entry then, behind any earlier write of it in the same pipeline: PFN's
    // tutorial writes $omr1 and masks with it in the very next step
    // (decision H15). Zero-flush masks act on the inputs, at issue.
    uint64_t writeMaskLead =
        isMauOp(expr.Op) ? latency::MauWrite : latency::PeWrite;
    for (const Operand &dst : expr.Destinations) {
      // A single-line mask anywhere in the step cancels the multi-line
      // one for all its destinations (decision S33).
      if (dst.WriteMask.MaskKind != MaskSpec::Default ||
          !stmt.CancelsDefaultMask)
        maskReads(dst.WriteMask, &dst, dst.Column, issue + writeMaskLead, line);
      addressReads(dst, issue, line);
    }
  }

  // Then the writes and when they complete (decisions H2-H7).
  for (const Expression &expr : stmt.Expressions) {
    unsigned stages = 0;
    if (isAluOp(expr.Op) || isMauOp(expr.Op) || isL1bmToPe(expr) ||
        expr.Op == Opcode::MRead) {
      uint64_t latency = target::writeLatency(opcodeInfo(expr.Op).Latency);
      for (const Operand &dst : expr.Destinations)
        operandWrites(dst, issue, latency, line);
    } else if (isPeToL1bm(expr, stages)) {
      const Operand &dst = expr.Destinations[0];
      if (dst.Turnaround)
        continue;
      uint64_t count =
          l1bmGroup(expr.Op) * (dst.Size == Width::DoubleLong ? 2 : 1);
      uint64_t ready =
          issue + latency::UpperWrite + stages * latency::ReductionStage;
      // L1BM -> PE transfers wait at most two steps, even behind the two
      // stages of l1bmr (decision H6).
      uint64_t readyForPe = std::min(ready, issue + latency::L1bmForPe);
      for (unsigned cycle = 0; cycle < 4; ++cycle) {
        Range r;
        r.Where = Space::L1BM;
        r.Low = dst.Address[0] + cycle * count;
        r.High = r.Low + count;
        addWrite(r, ready, line, readyForPe);
      }
    } else if (expr.Op == Opcode::MWrite) {
      const Operand &dst = expr.Destinations[0];
      bool twoRows = dst.Size == Width::DoubleLong;
      for (unsigned cycle = 0; cycle < 4; ++cycle) {
        Range r;
        r.Where = dst.Where;
        r.Low = (dst.Address[0] + (twoRows ? 2 * cycle : cycle)) % 16;
        r.High = r.Low + (twoRows ? 2 : 1);
        addWrite(r, issue + latency::MatrixWrite, line);
      }
    } else if (opcodeInfo(expr.Op).Group == target::IssueGroup::L2bm) {
      const Operand &dst = expr.Destinations[0];
      const target::OpcodeInfo &info = opcodeInfo(expr.Op);
      // l2bmr reduces eight L1Bs in two stages of four (decision S21),
      // one L1B with @<l1b> is a copy; l2bmr2 reduces pairs in one stage.
      uint64_t stages =
          expr.Op == Opcode::L2bmR && expr.Target >= 0 ? 0 : info.RrnStages;
      uint64_t extra = stages * latency::ReductionStage;
      uint64_t count =
          dst.Where == Space::L2BM ? info.L2bmLongWords : info.L1bmLongWords;
      for (unsigned cycle = 0; cycle < 4; ++cycle) {
        Range r;
        r.Where = dst.Where;
        r.Low = dst.Address[0] + cycle * count;
        r.High = r.Low + count;
        uint64_t ready = issue + latency::UpperWrite + extra;
        // An L2BM write must not land on what an MV transfer still reads
        // (decision H14).
        if (r.Where == Space::L2BM)
          checkOverwrite(r, ready, line, dst.Column);
        addWrite(r, ready, line);
      }
    }
  }

  // The forwarding latches (decision H9): a step without nop / noforward
  // updates all four; the ones whose unit ran no instruction hold nothing
  // usable afterwards.
  if (!forward)
    return;
  bool produced[NumLatches] = {false, false, false, false};
  for (const Expression &expr : stmt.Expressions) {
    if (isAluOp(expr.Op))
      produced[AluLatch] = true;
    else if (isMauOp(expr.Op))
      produced[MauLatch] = true;
    else if (isL1bmToPe(expr))
      produced[LbLatch] = true;
    else if (expr.Op == Opcode::MRead)
      produced[MreadLatch] = true;
  }
  for (int kind = 0; kind < NumLatches; ++kind) {
    Latches[kind].HoldsResult = produced[kind];
    Latches[kind].Line = line;
  }
}

void HazardChecker::mvStatement(const Statement &stmt) {
  const MvTransfer &mv = stmt.Transfer;
  if (mv.TransferKind == MvTransfer::Nop)
    return;
  uint64_t start = Clock.lastMvStart(), end = Clock.lastMvEnd();
  // Long words of each instance an end touches: the size, or a share of it
  // where the transfer spreads over the groups or the L2BMs (manual
  // 3.5.8.16-25).
  auto extent = [&](Space where) -> uint64_t {
    switch (mv.TransferKind) {
    case MvTransfer::Broadcast4:
    case MvTransfer::Reduce4:
      return where == Space::DRAM ? mv.Size / 2 : mv.Size;
    case MvTransfer::Distribute:
      return where == Space::PDM    ? mv.Size
             : where == Space::L2BM ? mv.Size / NumMvL2bs
                                    : mv.Size / NumMvGroups;
    default:
      return mv.Size;
    }
  };
  Range from;
  from.Where = mv.From;
  from.Low = mv.FromAddress;
  from.High = mv.FromAddress + extent(mv.From);
  from.Unit = mv.TransferKind == MvTransfer::Reduce ||
                      mv.TransferKind == MvTransfer::Reduce2 ||
                      mv.TransferKind == MvTransfer::Broadcast2
                  ? -1
                  : mvUnit(mv.From, mv.FromGroup, mv.FromL2b);
  // A transfer reads its source from the cycle it starts (after its slot
  // and after the ports it shares with earlier transfers are free) until
  // it ends (decisions H7, H14).
  checkRead(from, start, stmt.Line, mv.FromColumn);
  InFlight source;
  source.Target = from;
  source.Ready = end;
  source.Line = stmt.Line;
  MvSources.push_back(source);
  Range to;
  to.Where = mv.To;
  to.Low = mv.ToAddress;
  to.High = mv.ToAddress + extent(mv.To);
  // A reduction into the DRAMs gives each group a quarter (manual
  // 3.5.8.21).
  if (mv.TransferKind == MvTransfer::Reduce && mv.To == Space::DRAM &&
      mv.ToGroup < 0)
    to.High = mv.ToAddress + mv.Size / NumMvGroups;
  to.Unit = mv.TransferKind == MvTransfer::Broadcast ||
                    mv.TransferKind == MvTransfer::Broadcast2
                ? -1
                : mvUnit(mv.To, mv.ToGroup, mv.ToL2b);
  if (mv.TransferKind == MvTransfer::Reduce2 && mv.ToGroup < 0)
    to.Unit = mv.FromGroup;
  addWrite(to, end, stmt.Line);
}

void HazardChecker::onStatement(const Statement &stmt) {
  Reported.clear();
  if (stmt.StmtKind == Statement::Pe || stmt.StmtKind == Statement::Mv) {
    // Every later read, PE or MV, happens at or after the current PE
    // cycle (an address input a step earlier), and the clock only moves
    // forward: writes complete by then can no longer be hazards.
    uint64_t now = Clock.cycle();
    Pending.erase(std::remove_if(Pending.begin(), Pending.end(),
                                 [&](const InFlight &w) {
                                   return std::max(w.Ready, w.ReadyForPe) +
                                              latency::AddressLead <=
                                          now;
                                 }),
                  Pending.end());
    // Later writes land after the current cycle.
    MvSources.erase(
        std::remove_if(MvSources.begin(), MvSources.end(),
                       [&](const InFlight &m) { return m.Ready <= now; }),
        MvSources.end());
  }
  switch (stmt.StmtKind) {
  case Statement::Pe:
    Clock.onStatement(stmt);
    peStatement(stmt, Clock.cycle() - uint64_t(stmt.Repeat) * CyclesPerStep);
    return;
  case Statement::Mv:
    Clock.onStatement(stmt);
    mvStatement(stmt);
    return;
  case Statement::SetMask:
    DefaultMask = stmt.Mask;
    return;
  case Statement::DebugSet:
  case Statement::DebugGet:
    // Emulator controls see the state after every earlier statement has
    // completed (manual 3.2, d get) and take no time (decision H12).
    return;
  }
}

std::vector<Hazard> checkHazards(const Program &program) {
  HazardChecker checker;
  for (const Statement &stmt : program.Statements)
    checker.onStatement(stmt);
  return checker.hazards();
}

} // namespace mncc::emu
