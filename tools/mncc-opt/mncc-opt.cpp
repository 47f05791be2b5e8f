//===- mncc-opt.cpp - Run mncc passes on MLIR files -----------------------===//
//
// The driver of the lit tests and of pass debugging: every mncc dialect and
// pass, the upstream passes the pipeline uses, and run-time plugins.
//
//===----------------------------------------------------------------------===//

#include "mncc/Registration.h"
#include "mncc/Version.h"
#include "mncc/plugin/PluginCheck.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "mncc version " << MNCC_VERSION_STRING << " (MLIR "
       << MNCC_LLVM_VERSION_STRING << ")\n";
  });
  if (!mncc::checkPluginArguments(argc, argv, llvm::errs()))
    return 1;

  mlir::DialectRegistry registry;
  mncc::registerAllDialects(registry);
  mncc::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "mncc optimizer driver: runs mncc and MLIR passes\n",
      registry));
}
