//===- FuseActivations.cpp - Mark activations run by their producer -------===//

#include "mncc/passes/pfvm/Fusion.h"
#include "mncc/passes/pfvm/Passes.h"

#include "mncc/dialects/onnx/OnnxOps.h"

#include <limits>

namespace mncc::pfvm {
#define GEN_PASS_DEF_FUSEACTIVATIONS
#include "mncc/passes/pfvm/Passes.h.inc"
} // namespace mncc::pfvm

using namespace mlir;
using namespace mncc;

namespace {

/// A float32 scalar constant (onnx.Constant or onnx.Initializer).
std::optional<float> constantFloat(Value value) {
  auto elements = llvm::dyn_cast_or_null<DenseFPElementsAttr>(
      onnx::getConstantValue(value));
  if (!elements || elements.getNumElements() != 1 ||
      !elements.getElementType().isF32())
    return std::nullopt;
  return (*elements.getValues<APFloat>().begin()).convertToFloat();
}

bool isF32Tensor(Type type) {
  auto tensor = llvm::dyn_cast<TensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

} // namespace

std::optional<pfvm::ActivationBounds> pfvm::fusableActivation(Operation *op) {
  if (llvm::isa<onnx::ReluOp>(op))
    return ActivationBounds{0.0f, std::numeric_limits<float>::infinity()};
  auto clip = llvm::dyn_cast<onnx::ClipOp>(op);
  if (!clip)
    return std::nullopt;
  ActivationBounds bounds{std::numeric_limits<float>::lowest(),
                          std::numeric_limits<float>::max()};
  for (auto [bound, value] :
       {std::pair<float *, Value>{&bounds.lo, clip.getMin()},
        std::pair<float *, Value>{&bounds.hi, clip.getMax()}}) {
    if (!value)
      continue;
    std::optional<float> constant = constantFloat(value);
    if (!constant)
      return std::nullopt;
    *bound = *constant;
  }
  return bounds;
}

Operation *pfvm::fusableActivationUser(Operation *producer) {
  if (!llvm::isa<onnx::ConvOp, onnx::AddOp>(producer) ||
      producer->getNumResults() != 1)
    return nullptr;
  Value result = producer->getResult(0);
  if (!isF32Tensor(result.getType()) || !result.hasOneUse())
    return nullptr;
  Operation *user = *result.getUsers().begin();
  if (user->getBlock() != producer->getBlock() || user->getNumResults() != 1 ||
      user->getNumOperands() == 0 || user->getOperand(0) != result ||
      !isF32Tensor(user->getResult(0).getType()) || !fusableActivation(user))
    return nullptr;
  return user;
}

namespace {

struct FuseActivationsPass
    : public pfvm::impl::FuseActivationsBase<FuseActivationsPass> {
  void runOnOperation() override {
    Builder builder(&getContext());
    getOperation().walk([&](Operation *op) {
      if (!llvm::isa<onnx::ConvOp, onnx::AddOp>(op))
        return;
      // Marks of an earlier run are decided again.
      op->removeAttr(onnx::kFusedActivationAttrName);
      if (Operation *user = pfvm::fusableActivationUser(op))
        op->setAttr(onnx::kFusedActivationAttrName,
                    builder.getStringAttr(user->getName().stripDialect()));
    });
  }
};

} // namespace
