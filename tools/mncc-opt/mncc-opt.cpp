//===- mncc-opt.cpp - Run mncc passes on MLIR files -----------------------===//
//
// The driver of the lit tests and of pass debugging: every mncc dialect and
// pass, the upstream passes the pipeline uses, the compiler's phases as
// pipelines (--mncc-pfvm, ..., --mncc-compile; lib/pipeline), and run-time
// plugins.
//
//===----------------------------------------------------------------------===//

#include "mncc/Registration.h"
#include "mncc/pipeline/Pipeline.h"
#include "mncc/plugin/PluginCheck.h"
#include "mncc/support/ToolOptions.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

extern char **environ;

int main(int argc, char **argv) {
  mncc::setToolVersionPrinter();
  // Everything registered so far is libLLVM's (--amdgpu-*, --x86-*, ...);
  // MlirOptMain registers MLIR's own options after this, and those stay.
  mncc::hideUnrelatedOptions({});
  if (!mncc::checkPluginArguments(argc, argv, llvm::errs()))
    return 1;

  mlir::DialectRegistry registry;
  mncc::registerAllDialects(registry);
  mncc::registerAllPasses();
  // The environment is read once, here; the pipelines resolve their options
  // from it as `mncc compile` does.
  mncc::pipeline::registerPipelines(
      mncc::pipeline::collectOptionEnvironment(environ),
      mncc::pipeline::presetDirectoryFor(
          llvm::sys::fs::getMainExecutable(argv[0], (void *)&main)));
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "mncc optimizer driver: runs mncc and MLIR passes\n",
      registry);
  // LLVM keeps the last of an option given twice; mncc's tools refuse it.
  if (!mncc::rejectRepeatedOptions("mncc-opt"))
    return 1;
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
}
