//===- Dce.cpp - Remove nodes and initializers nothing uses ---------------===//

#include "mncc/passes/pfvm/Passes.h"

#include "mncc/dialects/onnx/OnnxOps.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mncc::pfvm {
#define GEN_PASS_DEF_DCE
#include "mncc/passes/pfvm/Passes.h.inc"
} // namespace mncc::pfvm

using namespace mlir;
using namespace mncc;

namespace {

/// Whether an unused `op` may go: it has no effect but its results. Random
/// nodes and Dropout are not Pure (their results vary), but a result
/// nobody reads is no effect either.
bool removable(Operation *op) {
  if (!op->use_empty() || op->hasTrait<OpTrait::IsTerminator>() ||
      !op->getDialect() || op->getDialect()->getNamespace() != "onnx")
    return false;
  if (wouldOpBeTriviallyDead(op))
    return true;
  return llvm::isa<onnx::DropoutOp, onnx::RandomNormalOp,
                   onnx::RandomNormalLikeOp, onnx::RandomUniformOp,
                   onnx::RandomUniformLikeOp, onnx::BernoulliOp,
                   onnx::MultinomialOp>(op);
}

struct DcePass : public pfvm::impl::DceBase<DcePass> {
  void runOnOperation() override {
    // Post-order: a subgraph's dead nodes go before the node holding it is
    // looked at; within a block, from the last node up, so a chain goes at
    // once.
    getOperation().walk<WalkOrder::PostOrder>([&](Block *block) {
      for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*block)))
        if (removable(&op))
          op.erase();
    });
  }
};

} // namespace
