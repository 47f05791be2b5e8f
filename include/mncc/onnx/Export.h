//===- Export.h - The onnx dialect back to ONNX models -------*- C++ -*-===//

#ifndef MNCC_ONNX_EXPORT_H
#define MNCC_ONNX_EXPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mncc {

struct OnnxExportOptions {
  /// Tensors of at least this many bytes go to the external data file
  /// (ONNX's external data format); 0 keeps everything in the model.
  size_t externalDataThresholdBytes = 0;
  /// The file name recorded in the model, relative to the model's folder.
  std::string externalDataLocation;
};

/// Writes the module (one func.func of onnx ops, as the importer makes it)
/// as a binary ONNX model to `modelOut`, and the large tensors to
/// `externalDataOut` when the options ask for external data. Reports
/// located diagnostics and fails on what ONNX cannot express.
mlir::LogicalResult exportOnnx(mlir::ModuleOp module, llvm::raw_ostream &modelOut,
                               const OnnxExportOptions &options = {},
                               llvm::raw_ostream *externalDataOut = nullptr);

/// Runs the ONNX checker on a model file (external data is looked for beside
/// it). Returns "" or the checker's complaint.
std::string checkOnnxFile(llvm::StringRef path);

/// Runs the ONNX checker on a serialized model. Returns "" or the complaint.
std::string checkOnnxBytes(llvm::StringRef bytes);

} // namespace mncc

#endif // MNCC_ONNX_EXPORT_H
