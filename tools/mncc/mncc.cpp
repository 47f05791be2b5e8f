//===- mncc.cpp - The mncc driver ------------------------------------------===//
//
//   mncc summary model.onnx [--input-shape NAME:D0,D1,...]
//
// The user-facing driver; each stage of the compiler adds its subcommand.
//
//===----------------------------------------------------------------------===//

#include "mncc/Registration.h"
#include "mncc/Version.h"
#include "mncc/onnx/Import.h"
#include "mncc/onnx/Summary.h"
#include "mncc/support/Diagnostics.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {

cl::SubCommand summaryCommand(
    "summary", "Import an ONNX model and print its operators, parameters "
               "and FLOPs");
cl::opt<std::string> summaryInput(cl::Positional, cl::Required,
                                  cl::desc("<model.onnx>"),
                                  cl::sub(summaryCommand));
cl::list<std::string> summaryInputShapes(
    "input-shape",
    cl::desc("Static shape of a graph input, NAME:D0,D1,... (repeatable)"),
    cl::sub(summaryCommand));

int runSummary() {
  mncc::OnnxImportOptions options;
  for (const std::string &spec : summaryInputShapes) {
    auto shape = mncc::parseInputShape(spec);
    if (!shape) {
      llvm::errs() << "mncc: error: " << llvm::toString(shape.takeError())
                   << "\n";
      return 1;
    }
    options.inputShapes.push_back(std::move(*shape));
  }
  DialectRegistry registry;
  mncc::registerAllDialects(registry);
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  mncc::ToolDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      mncc::importOnnxFile(summaryInput, &context, options);
  if (!module)
    return 1;
  llvm::outs() << "model: " << summaryInput << "\n";
  mncc::printModelSummary(*module, mncc::summarizeModel(*module),
                          llvm::outs());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "mncc version " << MNCC_VERSION_STRING << " (MLIR "
       << MNCC_LLVM_VERSION_STRING << ")\n";
  });
  cl::ParseCommandLineOptions(argc, argv,
                              "mncc: an MLIR-based compiler for MN-Core 2\n");
  if (summaryCommand)
    return runSummary();
  llvm::errs() << "mncc: error: give a subcommand (mncc --help lists them)\n";
  return 1;
}
