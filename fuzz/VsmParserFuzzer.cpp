//===- VsmParserFuzzer.cpp - libFuzzer target for the VSM parser ----------===//
//
// Any text must give either a program or a located diagnostic; never a
// crash, a hang or an out-of-bounds read. Built by `make fuzz-vsm`.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Parser.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mncc::emu::Program program;
  mncc::emu::Diagnostic error;
  std::string_view text(reinterpret_cast<const char *>(data), size);
  (void)mncc::emu::parseProgram(text, "fuzz.vsm", program, error);
  return 0;
}
