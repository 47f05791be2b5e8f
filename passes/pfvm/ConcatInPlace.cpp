//===- ConcatInPlace.cpp - Mark Concat inputs written in place ------------===//

#include "mncc/passes/pfvm/Fusion.h"
#include "mncc/passes/pfvm/Passes.h"

#include "mncc/dialects/onnx/OnnxOps.h"

namespace mncc::pfvm {
#define GEN_PASS_DEF_CONCATINPLACE
#include "mncc/passes/pfvm/Passes.h.inc"
} // namespace mncc::pfvm

using namespace mlir;
using namespace mncc;

llvm::SmallVector<int64_t> pfvm::concatBlockOffsets(Operation *op) {
  auto concat = llvm::dyn_cast<onnx::ConcatOp>(op);
  if (!concat)
    return {};
  auto type = llvm::dyn_cast<RankedTensorType>(concat.getType());
  if (!type || !type.hasStaticShape())
    return {};
  Type element = type.getElementType();
  if (!element.isIntOrFloat() && !llvm::isa<ComplexType>(element))
    return {};
  int64_t rank = type.getRank();
  int64_t axis = static_cast<int64_t>(concat.getAxis());
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank ||
      llvm::any_of(type.getShape().take_front(axis),
                   [](int64_t dim) { return dim != 1; }))
    return {};
  llvm::SmallVector<int64_t> offsets;
  int64_t offset = 0;
  for (Value input : concat.getInputs()) {
    auto inputType = llvm::dyn_cast<RankedTensorType>(input.getType());
    if (!inputType || !inputType.hasStaticShape() ||
        inputType.getElementType() != element)
      break;
    offsets.push_back(offset);
    offset += inputType.getNumElements();
  }
  return offsets;
}

namespace {

/// The Conv whose result reaches `value` only through activations fused
/// into it (marked by pfvm-fuse-activations), each value on the way used
/// once and in `block`; else nullptr.
Operation *inPlaceProducer(Value value, Block *block) {
  for (;;) {
    Operation *producer = value.getDefiningOp();
    if (!value.hasOneUse() || !producer || producer->getBlock() != block)
      return nullptr;
    if (llvm::isa<onnx::ConvOp>(producer))
      return producer->getNumResults() == 1 ? producer : nullptr;
    // An activation its producer runs: look through it.
    Operation *fusedInto = producer->getNumOperands()
                               ? producer->getOperand(0).getDefiningOp()
                               : nullptr;
    if (!fusedInto || !fusedInto->hasAttr(onnx::kFusedActivationAttrName) ||
        pfvm::fusableActivationUser(fusedInto) != producer)
      return nullptr;
    value = producer->getOperand(0);
  }
}

struct ConcatInPlacePass
    : public pfvm::impl::ConcatInPlaceBase<ConcatInPlacePass> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function.isExternal())
      return;
    // A subgraph may run many times over the same places; only the
    // top-level graph's Concats are planned (as pfvm:cpu runs them).
    Block *block = &function.front();
    for (Operation &op : *block) {
      if (!llvm::isa<onnx::ConcatOp>(op))
        continue;
      op.removeAttr(onnx::kInPlaceInputsAttrName);
      llvm::SmallVector<int64_t> offsets = pfvm::concatBlockOffsets(&op);
      llvm::SmallVector<int64_t> inPlace;
      for (size_t index = 0; index < offsets.size(); ++index)
        if (inPlaceProducer(op.getOperand(index), block))
          inPlace.push_back(index);
      if (!inPlace.empty())
        op.setAttr(onnx::kInPlaceInputsAttrName,
                   DenseI64ArrayAttr::get(&getContext(), inPlace));
    }
  }
};

} // namespace
