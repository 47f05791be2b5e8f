//===- Summary.cpp - mncc summary: operators, parameters, FLOPs
//------------===//
//
//   mncc summary model.onnx [--input-shape NAME:D0,D1,...]
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "mncc/Registration.h"
#include "mncc/onnx/Import.h"
#include "mncc/onnx/Summary.h"
#include "mncc/support/Diagnostics.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mncc::tool;
namespace cl = llvm::cl;

cl::SubCommand mncc::tool::summaryCommand(
    "summary", "Import an ONNX model and print its operators, parameters "
               "and FLOPs");

namespace {

cl::opt<std::string> summaryInput(cl::Positional, cl::Required,
                                  cl::desc("<model.onnx>"),
                                  cl::sub(summaryCommand), cl::cat(category()));
cl::list<std::string> summaryInputShapes(
    "input-shape",
    cl::desc("Static shape of a graph input, NAME:D0,D1,... (repeatable)"),
    cl::sub(summaryCommand), cl::cat(category()));

} // namespace

int mncc::tool::runSummary() {
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
  // Diagnostics name the node; a dump of the op adds nothing for a user.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  mncc::ToolDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      loadModel(summaryInput, context, sourceMgr, options);
  if (!module)
    return 1;
  llvm::outs() << "model: " << summaryInput << "\n";
  mncc::printModelSummary(*module, mncc::summarizeModel(*module), llvm::outs());
  return 0;
}
