//===- MLIRBridge.h - The code generator seen from MLIR ---------*- C++ -*-===//
//
// What the graph, L3 and emit passes need from lib/codegen, in MLIR terms:
// device formats as element types (f16 is MN-Core's half in the graph
// stage and after), DRAM forms as #mngraph.layout attributes, and kernel
// requests built from onnx ops and from l3.kernel ops.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_CODEGEN_MLIRBRIDGE_H
#define MNCC_CODEGEN_MLIRBRIDGE_H

#include "mncc/codegen/DramForm.h"
#include "mncc/codegen/Kernel.h"
#include "mncc/dialects/graph/GraphDialect.h"
#include "mncc/dialects/l3/L3Dialect.h"
#include "mncc/layout/Layout.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mncc::codegen {

/// The device format of an MLIR element type (f16 -> Half, f32 -> Single,
/// f64 -> Double, signless/signed integers of 32 bits or less and i1 ->
/// Int32); nullopt for the rest.
std::optional<DeviceType> deviceTypeOf(mlir::Type elementType);
/// The element type that stands for a device format.
mlir::Type elementTypeOf(DeviceType type, mlir::MLIRContext *context);

/// The canonical DRAM form of a static tensor type in `order` (empty: the
/// identity); nullopt when the element type has no device format.
std::optional<DramForm> formOf(mlir::RankedTensorType type,
                               llvm::ArrayRef<int64_t> order = {});
/// The MLSDK-notation layout of a DRAM form (memory DRAM): row-major
/// strides in long words, the innermost dimension as `(n:1, w_W:1)`, the
/// group split of the outermost as `4_L2B:2`, padding in the shape prefix.
layout::Layout layoutOf(const DramForm &form);
/// The DRAM order of `layout` when it is the layout of one of mncc's
/// canonical forms of a tensor of `shape` and `elementType`; nullopt
/// otherwise (with the reason in whyNot).
std::optional<std::vector<unsigned>>
canonicalOrderOf(const layout::Layout &layout, llvm::ArrayRef<int64_t> shape,
                 mlir::Type elementType, std::string &whyNot);
/// The tensor type with the #mngraph.layout of its form.
mlir::RankedTensorType withLayout(mlir::RankedTensorType type,
                                  const DramForm &form);
/// Whether two forms place every element at the same DRAM long word and
/// slot (a Reshape between them moves nothing). The shapes may differ;
/// elements correspond in row-major order.
bool sameBytes(const DramForm &a, const DramForm &b);

/// The graph node's name of an op (its NameLoc), or "<op type>#<index in
/// the block>" when it has none.
std::string nodeNameOf(mlir::Operation *op);
/// The ONNX operator of an onnx-dialect op ("Conv"), or of an
/// onnx.Custom.
std::string onnxOpTypeOf(mlir::Operation *op);

/// The ONNX inputs of an op in their ONNX positions: an operand, or null
/// for an omitted optional input (an onnx.None operand or an empty segment
/// of operandSegmentSizes).
std::vector<mlir::OpOperand *> onnxInputOperands(mlir::Operation *op);

/// Host values of constants (initializers, onnx.Constant, l3 constant
/// buffers), converted once and shared by every request that needs them.
class ConstantCache {
public:
  /// The tensor of an elements attribute; null (with an error at `at`)
  /// when it cannot be read.
  const reference::Tensor *get(mlir::ElementsAttr value, mlir::Operation *at);

private:
  llvm::DenseMap<mlir::Attribute, std::unique_ptr<reference::Tensor>> cache;
};

/// The constant an SSA value holds (an onnx.Initializer or onnx.Constant
/// result, possibly through a Cast the host does at staging), or null.
mlir::ElementsAttr constantValueOf(mlir::Value value);

/// A request for an onnx op, with `formOfValue` giving each operand's and
/// result's DRAM form (nullopt: the value is not on the device, as the
/// int64 shape input of a Reshape, which is passed as a constant only).
/// Fails with an error at the op when an attribute or constant cannot be
/// converted.
mlir::FailureOr<KernelRequest> requestForOnnxOp(
    mlir::Operation *op,
    const std::function<std::optional<DramForm>(mlir::Value)> &formOfValue,
    ConstantCache &constants);

/// The DRAM form of an l3.buffer (its address as the base, 0 when not
/// planned yet).
DramForm formOfBuffer(l3::BufferOp buffer);
/// A request for an l3.kernel over its buffers.
mlir::FailureOr<KernelRequest> requestForKernel(l3::KernelOp kernel,
                                                ConstantCache &constants);

/// The ONNX attributes of an op as kernels take them.
mlir::FailureOr<std::map<std::string, reference::Attribute>>
kernelAttributesOf(mlir::Operation *op, mlir::DictionaryAttr attributes);

/// The long words a constant buffer in a kernel's own arrangement takes
/// for an arrangement of `longWords` (constantLongWords): whole MV units,
/// at least one.
inline int64_t arrangedConstantLongWords(int64_t longWords) {
  return roundUp(std::max<int64_t>(longWords, 1), kMvUnitLongWords);
}

/// The generator named `name`, or null.
const KernelGenerator *findGeneratorByName(llvm::StringRef name);

/// The DRAM image of a constant buffer, as the host stages it: packed by
/// the kernel that reads it (arrangement set) or in its DRAM form.
mlir::FailureOr<DramImage> packConstantBuffer(l3::BufferOp buffer,
                                              mlir::ModuleOp module,
                                              ConstantCache &constants);

} // namespace mncc::codegen

#endif // MNCC_CODEGEN_MLIRBRIDGE_H
