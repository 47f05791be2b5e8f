//===- VsmRunFuzzer.cpp - libFuzzer target: parse and run VSM -------------===//
//
// Any text the parser accepts runs on the whole-machine emulator, its first
// statements only (a bounded number of steps, so one input stays fast), with
// a dump of its `d get` lines. The run must finish with the dump or a
// located error; never a crash, undefined behaviour or an out-of-bounds
// access. Built by `make fuzz-vsm-run`.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Parser.h"
#include "mncc/emu/Simulator.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The board is large (4096 PEs); one, reset between inputs, is enough.
  static mncc::emu::Simulator *simulator = new mncc::emu::Simulator();
  mncc::emu::Program program;
  mncc::emu::Diagnostic error;
  std::string_view text(reinterpret_cast<const char *>(data), size);
  if (!mncc::emu::parseProgram(text, "fuzz.vsm", program, error))
    return 0;
  constexpr size_t kMaxStatements = 64;
  if (program.Statements.size() > kMaxStatements)
    program.Statements.resize(kMaxStatements);
  simulator->reset();
  simulator->load(std::move(program));
  std::string message, dump;
  (void)simulator->run(message, &dump);
  return 0;
}
