//===- OptionJsonFuzzer.cpp - libFuzzer target for option_json ------------===//
//
// Any bytes given as an option_json file must resolve to compile options or
// give an error that says where; never a crash or an abort (nlohmann-json
// aborts, without exceptions, on a value of an unexpected kind). Built by
// `make fuzz-option-json`.
//
//===----------------------------------------------------------------------===//

#include "mncc/pipeline/Options.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // option_json is read from a file; one per process, rewritten per input.
  static std::string path = [] {
    llvm::SmallString<128> name;
    (void)llvm::sys::fs::createTemporaryFile("mncc-fuzz", "json", name);
    return std::string(name);
  }();
  {
    std::error_code code;
    llvm::raw_fd_ostream file(path, code);
    if (code)
      return 0;
    file.write(reinterpret_cast<const char *>(data), size);
  }
  mncc::pipeline::OptionRequest request;
  request.direct.emplace_back("option_json", path);
  auto resolved = mncc::pipeline::resolveCompileOptions(request);
  if (!resolved) {
    llvm::consumeError(resolved.takeError());
    return 0;
  }
  (void)mncc::pipeline::writeOptionJson(resolved->options);
  return 0;
}
