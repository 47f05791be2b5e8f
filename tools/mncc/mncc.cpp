//===- mncc.cpp - The mncc driver
//------------------------------------------===//
//
//   mncc compile model.onnx -o CODEGEN_DIR [--option_json=O1]
//   [--float_dtype=...] mncc summary model.onnx [--input-shape NAME:D0,D1,...]
//   mncc run --device=pfvm:cpu model.onnx --input NAME=FILE... --output-dir DIR
//   mncc options [--markdown]
//
// The user-facing driver, a thin main over the libraries; each subcommand
// lives in its own file (Commands.h).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "mncc/support/ToolOptions.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

llvm::cl::OptionCategory &mncc::tool::category() {
  static cl::OptionCategory category("mncc options");
  return category;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mncc::setToolVersionPrinter();
  mncc::tool::registerCompileFlags();
  mncc::hideUnrelatedOptions({&mncc::tool::category()});
  if (!mncc::parseToolCommandLine(
          argc, argv, "mncc: an MLIR-based compiler for MN-Core 2\n"))
    return 1;
  if (mncc::tool::compileCommand)
    return mncc::tool::runCompile(argv[0]);
  if (mncc::tool::summaryCommand)
    return mncc::tool::runSummary();
  if (mncc::tool::runCommand)
    return mncc::tool::runModel(argv[0]);
  if (mncc::tool::optionsCommand)
    return mncc::tool::runOptions();
  llvm::errs() << "mncc: error: give a subcommand (mncc --help lists them)\n";
  return 1;
}
