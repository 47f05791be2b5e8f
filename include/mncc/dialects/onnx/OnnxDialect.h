//===- OnnxDialect.h - The onnx dialect -----------------------*- C++ -*-===//
//
// The onnx dialect and its types. The ops (several thousand lines of
// generated declarations) are in OnnxOps.h.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_DIALECTS_ONNX_ONNXDIALECT_H
#define MNCC_DIALECTS_ONNX_ONNXDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "mncc/dialects/onnx/OnnxDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "mncc/dialects/onnx/OnnxTypes.h.inc"

namespace mncc::onnx {

/// The opset every imported model is converted to.
constexpr int64_t kCanonicalOpset = 17;

/// What ONNX says of an op class of this dialect.
struct OnnxOpInfo {
  llvm::StringRef opType;
  llvm::StringRef domain;
  int64_t sinceVersion;
  /// The graph attributes, comma-separated, in the order of the op's
  /// regions (sorted by name).
  llvm::StringRef graphAttributes;
};

/// The ONNX operator behind a registered onnx.* op name, or nullptr for the
/// hand-written ops (Initializer, Custom, None, Yield).
const OnnxOpInfo *lookupOnnxOp(llvm::StringRef opType);

/// Every operator of the dialect, sorted by type.
llvm::ArrayRef<OnnxOpInfo> getOnnxOps();

} // namespace mncc::onnx

#endif // MNCC_DIALECTS_ONNX_ONNXDIALECT_H
