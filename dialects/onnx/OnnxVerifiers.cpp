//===- OnnxVerifiers.cpp - Verifiers of the onnx ops and attributes -------===//
//
// What the generator's verifier hooks check (OnnxOdsGen.cpp, opHooks):
// only what ONNX itself rejects, and only where the types say enough (a
// ranked operand). The pfvm passes rely on these: an axis they resolve or
// a permutation they compose is known to be in range.
//
//===----------------------------------------------------------------------===//

#include "mncc/dialects/onnx/OnnxOps.h"

#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mncc::onnx;

namespace {

/// Checks `axis` against [-rank, rank - 1] (or [-rank, rank] when
/// `inclusive`) when `value` is ranked.
LogicalResult verifyAxis(Operation *op, Value value, int64_t axis,
                         bool inclusive = false) {
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getRank() == 0)
    return success();
  int64_t rank = type.getRank(), last = inclusive ? rank : rank - 1;
  if (axis < -rank || axis > last)
    return op->emitOpError("axis ")
           << axis << " is outside [" << -rank << ", " << last
           << "] for an input of rank " << rank;
  return success();
}

} // namespace

LogicalResult TransposeOp::verify() {
  auto type = llvm::dyn_cast<RankedTensorType>(getData().getType());
  std::optional<ArrayAttr> perm = getPerm();
  if (!type || !perm)
    return success();
  int64_t rank = type.getRank();
  if ((int64_t)perm->size() != rank)
    return emitOpError("perm has ")
           << perm->size() << " entries for an input of rank " << rank;
  llvm::SmallBitVector seen(rank);
  for (Attribute element : *perm) {
    int64_t dim = llvm::cast<IntegerAttr>(element).getInt();
    if (dim < 0 || dim >= rank || seen.test(dim))
      return emitOpError("perm ")
             << *perm << " is not a permutation of the input's " << rank
             << " dimensions";
    seen.set(dim);
  }
  return success();
}

LogicalResult ConcatOp::verify() {
  std::optional<int64_t> rank;
  for (Value input : getInputs()) {
    auto type = llvm::dyn_cast<RankedTensorType>(input.getType());
    if (!type)
      continue;
    if (rank && *rank != type.getRank())
      return emitOpError("inputs have ranks ")
             << *rank << " and " << type.getRank() << "; Concat needs one rank";
    rank = type.getRank();
  }
  for (Value input : getInputs())
    if (llvm::isa<RankedTensorType>(input.getType()))
      return verifyAxis(*this, input, getAxis());
  return success();
}

LogicalResult GatherOp::verify() {
  return verifyAxis(*this, getData(), getAxis());
}

LogicalResult GatherElementsOp::verify() {
  return verifyAxis(*this, getData(), getAxis());
}

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getInput(), getAxis());
}

LogicalResult LogSoftmaxOp::verify() {
  return verifyAxis(*this, getInput(), getAxis());
}

LogicalResult HardmaxOp::verify() {
  return verifyAxis(*this, getInput(), getAxis());
}

LogicalResult SplitOp::verify() {
  return verifyAxis(*this, getInput(), getAxis());
}

LogicalResult OnnxDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attribute) {
  StringRef name = attribute.getName();
  if (name == kFusedActivationAttrName) {
    if (!llvm::isa<ConvOp, AddOp>(op))
      return op->emitOpError("'")
             << name
             << "' belongs on onnx.Conv or onnx.Add, the producers an "
                "activation is fused into";
    auto activation = llvm::dyn_cast<StringAttr>(attribute.getValue());
    if (!activation ||
        (activation.getValue() != "Relu" && activation.getValue() != "Clip"))
      return op->emitOpError("'")
             << name << "' must be \"Relu\" or \"Clip\", not "
             << attribute.getValue();
    return success();
  }
  if (name == kInPlaceInputsAttrName) {
    if (!llvm::isa<ConcatOp>(op))
      return op->emitOpError("'") << name << "' belongs on onnx.Concat";
    auto inputs = llvm::dyn_cast<DenseI64ArrayAttr>(attribute.getValue());
    if (!inputs)
      return op->emitOpError("'")
             << name << "' must be an array<i64> of input positions";
    int64_t previous = -1;
    for (int64_t index : inputs.asArrayRef()) {
      if (index <= previous || index >= (int64_t)op->getNumOperands())
        return op->emitOpError("'") << name << "' lists input " << index
                                    << ": positions must ascend and be below "
                                    << op->getNumOperands();
      previous = index;
    }
    return success();
  }
  // The importer's module attributes (onnx.ir_version, ...) and anything
  // else in the namespace are not checked here.
  return success();
}
