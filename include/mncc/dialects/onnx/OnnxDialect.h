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
#include "llvm/ADT/SmallVector.h"

#include <optional>

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

/// Discardable attributes of the pfvm phase (passes/pfvm), verified by the
/// dialect. They only say how a node may run; the graph means the same
/// without them, so any consumer may ignore them, and the exporter drops
/// them (an attribute name with a dot is never an ONNX attribute).
///
/// On an onnx.Conv or onnx.Add: "Relu" or "Clip", the activation that is
/// the only user of the result and that the producer may apply as it
/// stores its output (pfvm-fuse-activations).
constexpr llvm::StringLiteral kFusedActivationAttrName =
    "onnx.fused_activation";
/// On an onnx.Concat: the inputs (ascending operand indices) whose producer
/// may write straight into the Concat's output (pfvm-concat-in-place).
constexpr llvm::StringLiteral kInPlaceInputsAttrName = "onnx.in_place_inputs";

/// The value of an onnx.Constant (its `value`, `value_float(s)` or
/// `value_int(s)`) or an onnx.Initializer, when `value` is the result of
/// one; null otherwise.
mlir::ElementsAttr getConstantValue(mlir::Value value);

/// The elements of an integer constant (getConstantValue) as int64, or
/// std::nullopt when `value` is not one.
std::optional<llvm::SmallVector<int64_t>>
getConstantIntegers(mlir::Value value);

/// The ONNX operator behind a registered onnx.* op name, or nullptr for the
/// hand-written ops (Initializer, Custom, None, Yield).
const OnnxOpInfo *lookupOnnxOp(llvm::StringRef opType);

/// Every operator of the dialect, sorted by type.
llvm::ArrayRef<OnnxOpInfo> getOnnxOps();

} // namespace mncc::onnx

#endif // MNCC_DIALECTS_ONNX_ONNXDIALECT_H
