//===- VsmRunFuzzer.cpp - libFuzzer target: parse and run VSM -------------===//
//
// Any text the parser accepts runs on the whole-machine emulator, its first
// statements only (a bounded amount of work, so one input stays fast), with
// a dump of its `d get` lines. The run must finish with the dump or a
// located error; never a crash, undefined behaviour or an out-of-bounds
// access. Built by `make fuzz-vsm-run`.
//
// The bound counts statements, steps (nop/<n> repeats its step n times) and
// long words that `d get`, `d set` and MV transfers touch: a single
// `d get $lr0 500001`, legal, dumps 500001 words at each of 4096 PEs (a
// 2 GiB dump), which stopped the fuzzer on a timeout.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Parser.h"
#include "mncc/emu/Simulator.h"
#include "mncc/target/MNCore2.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

constexpr size_t kMaxStatements = 64;
constexpr uint64_t kMaxSteps = 1024;
constexpr uint64_t kMaxLongWords = uint64_t(1) << 20;

/// At most how many positions a debug access covers: every level it leaves
/// open multiplies (more than the memory has for L1BM, L2BM, PDM and DRAM,
/// whose lower levels do not exist; a bound is all the budget needs).
uint64_t positionsBound(const mncc::emu::DebugAccess &access) {
  using namespace mncc::target;
  uint64_t positions = 1;
  if (access.Group < 0)
    positions *= NumGroups;
  if (access.L2b < 0)
    positions *= L2bsPerGroup;
  if (access.L1b < 0)
    positions *= L1bsPerL2b;
  if (access.Mab < 0)
    positions *= MabsPerL1b;
  if (access.Pe < 0)
    positions *= PesPerMab;
  return positions;
}

/// Long words a statement reads or writes outside its PE step, bounded.
uint64_t longWordsBound(const mncc::emu::Statement &statement) {
  using mncc::emu::Statement;
  switch (statement.StmtKind) {
  case Statement::DebugGet:
  case Statement::DebugSet:
    return positionsBound(statement.Debug) * statement.Debug.Count;
  case Statement::Mv:
    // A transfer to or from every group and L2B at most.
    return uint64_t(statement.Transfer.Size) * mncc::target::NumL2bs;
  default:
    return 0;
  }
}

/// How many statements from the start fit the budget.
size_t statementsWithinBudget(const mncc::emu::Program &program) {
  uint64_t steps = 0, longWords = 0;
  size_t count = 0;
  for (const mncc::emu::Statement &statement : program.Statements) {
    if (count == kMaxStatements)
      break;
    steps += statement.Repeat;
    longWords += longWordsBound(statement);
    if (steps > kMaxSteps || longWords > kMaxLongWords)
      break;
    ++count;
  }
  return count;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The board is large (4096 PEs); one, reset between inputs, is enough.
  static mncc::emu::Simulator *simulator = new mncc::emu::Simulator();
  mncc::emu::Program program;
  mncc::emu::Diagnostic error;
  std::string_view text(reinterpret_cast<const char *>(data), size);
  if (!mncc::emu::parseProgram(text, "fuzz.vsm", program, error))
    return 0;
  program.Statements.resize(statementsWithinBudget(program));
  simulator->reset();
  simulator->load(std::move(program));
  std::string message, dump;
  (void)simulator->run(message, &dump);
  return 0;
}
