//===- Import.h - ONNX models into the onnx dialect ----------*- C++ -*-===//

#ifndef MNCC_ONNX_IMPORT_H
#define MNCC_ONNX_IMPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace mncc {

struct OnnxImportOptions {
  /// Static shapes for graph inputs, name -> dimensions: the device needs
  /// static shapes, and models often leave the batch dimension open.
  std::vector<std::pair<std::string, std::vector<int64_t>>> inputShapes;
  /// Tensors of at least this many bytes are kept as MLIR resources
  /// (dense_resource) rather than inline literals.
  size_t resourceThresholdBytes = 1024;
};

/// Parses `NAME:D0,D1,...` (the --input-shape syntax).
llvm::Expected<std::pair<std::string, std::vector<int64_t>>>
parseInputShape(llvm::StringRef spec);

/// Whether the start of a file is MLIR text (`module`, `func.func`, an
/// attribute alias, a comment, a `"builtin.module"`), not an ONNX model:
/// the importer says so instead of calling it a truncated model, and
/// `mncc run` and `mncc summary` read it as IR.
bool looksLikeMlir(llvm::StringRef head);

/// Imports a binary (.onnx) or text-syntax ONNX model. Weights are read
/// once, straight from the file into the resources that hold them. On
/// failure, reports located diagnostics through the context and returns null.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxFile(llvm::StringRef path, mlir::MLIRContext *context,
               const OnnxImportOptions &options = {});

/// Imports a model held in memory (binary or text syntax). `name` names it
/// in diagnostics, and its folder is where external data is looked for.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxBytes(llvm::StringRef bytes, llvm::StringRef name,
                mlir::MLIRContext *context,
                const OnnxImportOptions &options = {});

/// Which node of the model an op was imported from: its name, or for a
/// node without one its description ("node (index 3, Add)"), as the
/// importer locates them; empty for an op no node located (the compiler's
/// own). Stable through the passes that keep an op's location, so the
/// runtime can pair a compiled kernel with the node pfvm:cpu runs.
std::string onnxNodeIdentity(mlir::Location loc);

} // namespace mncc

#endif // MNCC_ONNX_IMPORT_H
