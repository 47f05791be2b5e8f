//===- ModelInput.cpp - The model mncc run and mncc summary read ----------===//
//
// A model is an ONNX file (binary or text syntax) or the onnx dialect's IR
// (what `mncc-translate --import-onnx` and `mncc compile` write): both give
// the same module, so a user who has the .mlir need not find the .onnx.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "mncc/onnx/Import.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

OwningOpRef<ModuleOp>
mncc::tool::loadModel(llvm::StringRef path, MLIRContext &context,
                      llvm::SourceMgr &sourceMgr,
                      const OnnxImportOptions &options) {
  Location fileLoc = FileLineColLoc::get(&context, path, 0, 0);
  auto head = llvm::MemoryBuffer::getFileSlice(path, 256, 0);
  if (llvm::sys::fs::is_directory(path) || !head ||
      !mncc::looksLikeMlir((*head)->getBuffer()))
    return mncc::importOnnxFile(path, &context, options);
  if (!options.inputShapes.empty())
    return (emitError(fileLoc)
                << "--input-shape applies to ONNX models; the shapes of IR "
                   "are fixed (import the .onnx with it)",
            nullptr);
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return (emitError(fileLoc) << "cannot read: "
                               << buffer.getError().message(),
            nullptr);
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return nullptr;
  auto functions = module->getOps<func::FuncOp>();
  if (functions.empty())
    return (emitError(fileLoc) << "has no func.func to run: expected the "
                                  "onnx dialect's IR of a model",
            nullptr);
  return module;
}
