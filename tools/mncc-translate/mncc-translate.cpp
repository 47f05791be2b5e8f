//===- mncc-translate.cpp - ONNX models in and out of MLIR ----------------===//
//
//   mncc-translate --import-onnx model.onnx [-o out.mlir] [--input-shape N:D,...]
//   mncc-translate --export-onnx in.mlir -o out.onnx [--external-data-threshold B]
//   mncc-translate --check-onnx model.onnx
//
// An error names the file (and the node), exits with status 1, and leaves no
// output file behind. `-` is standard input (import, export) and standard
// output (-o, the default); a binary ONNX model is not written to a
// terminal.
//
//===----------------------------------------------------------------------===//

#include "mncc/Registration.h"
#include "mncc/onnx/Export.h"
#include "mncc/onnx/Import.h"
#include "mncc/pipeline/Options.h"
#include "mncc/support/Diagnostics.h"
#include "mncc/support/ToolOptions.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cstdlib>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class Action { ImportOnnx, ExportOnnx, CheckOnnx };

cl::OptionCategory category("mncc-translate options");

// Optional, so that a missing one is reported once, by main.
cl::opt<Action> action(
    cl::desc("Translation:"), cl::cat(category),
    cl::values(
        clEnumValN(Action::ImportOnnx, "import-onnx",
                   "ONNX model (binary or text syntax) to the onnx dialect"),
        clEnumValN(Action::ExportOnnx, "export-onnx",
                   "onnx dialect to a binary ONNX model"),
        clEnumValN(Action::CheckOnnx, "check-onnx",
                   "run the ONNX checker on a model file")));

cl::opt<std::string> inputFilename(cl::Positional,
                                   cl::desc("<input file, - for stdin>"),
                                   cl::Required, cl::cat(category));

cl::opt<std::string> outputFilename("o",
                                    cl::desc("Output file (default: -, "
                                             "standard output)"),
                                    cl::value_desc("filename"),
                                    cl::init("-"), cl::cat(category));

cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Static shape of a graph input, NAME:D0,D1,... (repeatable)"),
    cl::cat(category));

cl::opt<uint64_t> resourceThreshold(
    "resource-threshold",
    cl::desc("Import tensors of at least this many bytes as resources"),
    cl::init(1024), cl::cat(category));

cl::opt<uint64_t> externalDataThreshold(
    "external-data-threshold",
    cl::desc("Export tensors of at least this many bytes as ONNX external "
             "data (0: none; the MNCORE_USE_EXTERNAL_DATA_FORMAT environment "
             "variable set to 1 (or true, on, yes) makes it 1024)"),
    cl::init(0), cl::cat(category));

cl::opt<std::string> externalDataFile(
    "external-data-file",
    cl::desc("Where external data goes (default: the output file + .data)"),
    cl::cat(category));

cl::opt<bool> emitBytecode("emit-bytecode",
                           cl::desc("Write MLIR bytecode, not text"),
                           cl::init(false), cl::cat(category));

int importOnnx(MLIRContext &context) {
  mncc::OnnxImportOptions options;
  options.resourceThresholdBytes = resourceThreshold;
  for (const std::string &spec : inputShapes) {
    auto shape = mncc::parseInputShape(spec);
    if (!shape) {
      llvm::errs() << "mncc-translate: error: "
                   << llvm::toString(shape.takeError()) << "\n";
      return 1;
    }
    options.inputShapes.push_back(std::move(*shape));
  }
  OwningOpRef<ModuleOp> module;
  if (inputFilename == "-") {
    // Standard input, as export writes standard output.
    auto input = llvm::MemoryBuffer::getSTDIN();
    if (!input) {
      llvm::errs() << "mncc-translate: error: standard input: "
                   << input.getError().message() << "\n";
      return 1;
    }
    module = mncc::importOnnxBytes((*input)->getBuffer(), "<stdin>", &context,
                                   options);
  } else {
    module = mncc::importOnnxFile(inputFilename, &context, options);
  }
  if (!module)
    return 1;
  if (emitBytecode && outputFilename == "-" &&
      llvm::sys::Process::StandardOutIsDisplayed()) {
    llvm::errs() << "mncc-translate: error: refusing to write MLIR bytecode "
                    "to a terminal (give -o FILE, or redirect)\n";
    return 1;
  }
  std::string error;
  auto output = openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "mncc-translate: error: " << error << "\n";
    return 1;
  }
  if (emitBytecode) {
    if (failed(writeBytecodeToFile(*module, output->os())))
      return 1;
  } else {
    module->print(output->os());
  }
  output->keep();
  return 0;
}

/// MNCORE_USE_EXTERNAL_DATA_FORMAT, read once by main and parsed as the
/// compile options parse it (mncc/pipeline/Options.h).
bool useExternalDataFormat = false;

int exportOnnx(MLIRContext &context, llvm::SourceMgr &sourceMgr) {
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return 1;
  mncc::OnnxExportOptions options;
  options.externalDataThresholdBytes = externalDataThreshold;
  if (!options.externalDataThresholdBytes && useExternalDataFormat)
    options.externalDataThresholdBytes = 1024;

  std::unique_ptr<llvm::ToolOutputFile> dataOutput;
  if (options.externalDataThresholdBytes) {
    std::string dataPath = externalDataFile;
    if (dataPath.empty() && outputFilename != "-")
      dataPath = outputFilename + ".data";
    if (dataPath.empty()) {
      llvm::errs() << "mncc-translate: error: external data needs "
                      "--external-data-file when the model goes to stdout\n";
      return 1;
    }
    if (llvm::sys::path::parent_path(dataPath) !=
        llvm::sys::path::parent_path(outputFilename)) {
      llvm::errs() << "mncc-translate: error: the external data file must be "
                      "in the model's folder\n";
      return 1;
    }
    options.externalDataLocation = llvm::sys::path::filename(dataPath).str();
    std::string error;
    dataOutput = openOutputFile(dataPath, &error);
    if (!dataOutput) {
      llvm::errs() << "mncc-translate: error: " << error << "\n";
      return 1;
    }
  }
  // A binary model on a terminal is noise, and may leave it in a bad
  // state.
  if (outputFilename == "-" && llvm::sys::Process::StandardOutIsDisplayed()) {
    llvm::errs() << "mncc-translate: error: refusing to write a binary ONNX "
                    "model to a terminal (give -o FILE, or redirect)\n";
    return 1;
  }
  std::string error;
  auto output = openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "mncc-translate: error: " << error << "\n";
    return 1;
  }
  if (failed(mncc::exportOnnx(*module, output->os(), options,
                              dataOutput ? &dataOutput->os() : nullptr)))
    return 1; // the output files are removed as they go out of scope
  output->keep();
  if (dataOutput)
    dataOutput->keep();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  mncc::setToolVersionPrinter();
  mncc::hideUnrelatedOptions({&category}, /*keepMlirOptions=*/true);
  if (!mncc::parseToolCommandLine(
          argc, argv, "mncc-translate: ONNX models in and out of MLIR\n"))
    return 1;
  if (action.getNumOccurrences() == 0) {
    llvm::errs() << "mncc-translate: error: give a translation: "
                    "--import-onnx, --export-onnx or --check-onnx\n";
    return 1;
  }

  // The one compile option mncc-translate acts on; the others are for
  // mncc compile.
  mncc::pipeline::OptionRequest request;
  if (const char *value = std::getenv("MNCORE_USE_EXTERNAL_DATA_FORMAT"))
    request.environment["MNCORE_USE_EXTERNAL_DATA_FORMAT"] = value;
  auto resolved = mncc::pipeline::resolveCompileOptions(request);
  if (!resolved) {
    llvm::errs() << "mncc-translate: error: "
                 << llvm::toString(resolved.takeError()) << "\n";
    return 1;
  }
  useExternalDataFormat = resolved->options.MNCORE_USE_EXTERNAL_DATA_FORMAT;

  if (action == Action::CheckOnnx) {
    if (inputFilename == "-") {
      llvm::errs() << "mncc-translate: error: --check-onnx reads a file (its "
                      "external data is found beside it), not standard "
                      "input\n";
      return 1;
    }
    std::string problem = mncc::checkOnnxFile(inputFilename);
    if (!problem.empty()) {
      llvm::errs() << inputFilename << ": error: " << problem << "\n";
      return 1;
    }
    llvm::outs() << inputFilename << ": valid ONNX model\n";
    return 0;
  }

  DialectRegistry registry;
  mncc::registerAllDialects(registry);
  MLIRContext context(registry);
  // Diagnostics name the node; a dump of the op adds nothing for a user.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  mncc::ToolDiagnosticHandler diagnostics(sourceMgr, &context);

  if (action == Action::ImportOnnx)
    return importOnnx(context);

  std::string error;
  auto input = openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << "mncc-translate: error: " << error << "\n";
    return 1;
  }
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  return exportOnnx(context, sourceMgr);
}
