//===- RemoveNoops.cpp - Identity, Dropout, no-op reshapes, pairs ---------===//
//
// Applies the canonicalization patterns of the ops that can be no-ops and
// the onnx ops' folders (dialects/onnx: OnnxCanonicalize.cpp,
// OnnxFolders.cpp), none of which computes a new value.
//
//===----------------------------------------------------------------------===//

#include "mncc/passes/pfvm/Passes.h"

#include "mncc/dialects/onnx/OnnxOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mncc::pfvm {
#define GEN_PASS_DEF_REMOVENOOPS
#include "mncc/passes/pfvm/Passes.h.inc"
} // namespace mncc::pfvm

using namespace mlir;
using namespace mncc;

namespace {

struct RemoveNoopsPass : public pfvm::impl::RemoveNoopsBase<RemoveNoopsPass> {
  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    onnx::CastOp::getCanonicalizationPatterns(set, context);
    onnx::ReshapeOp::getCanonicalizationPatterns(set, context);
    onnx::TransposeOp::getCanonicalizationPatterns(set, context);
    onnx::DropoutOp::getCanonicalizationPatterns(set, context);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    // The driver also applies the ops' folders (Identity, Reshape,
    // Transpose, Cast, Flatten, Squeeze, Expand: an op to its own type is
    // its input) and erases what becomes dead; no region simplification.
    GreedyRewriteConfig config;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    (void)applyPatternsAndFoldGreedily(getOperation(), patterns, config);
  }

  FrozenRewritePatternSet patterns;
};

} // namespace
