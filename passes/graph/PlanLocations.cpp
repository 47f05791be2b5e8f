//===- PlanLocations.cpp - DRAM or LM for every tensor --------------------===//

#include "mncc/passes/graph/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mncc::graph {
#define GEN_PASS_DEF_PLANLOCATIONS
#include "mncc/passes/graph/Passes.h.inc"
} // namespace mncc::graph

using namespace mlir;

namespace {

class PlanLocationsPass
    : public mncc::graph::impl::PlanLocationsBase<PlanLocationsPass> {
public:
  using PlanLocationsBase::PlanLocationsBase;

  void runOnOperation() override {
    // The always_from_dram and reuse_consecutive fallbacks keep every
    // tensor in DRAM between kernels (docs/codegen.md C1), weights
    // included, which is what CODEGEN_GEMM_FORCE_WEIGHT_ON_DRAM asks.
    Builder builder(&getContext());
    StringAttr dram = builder.getStringAttr("dram");
    getOperation().walk([&](Operation *op) {
      if (op->getName().getDialectNamespace() != "onnx" &&
          op->getName().getDialectNamespace() != "mngraph")
        return;
      if (llvm::any_of(op->getResultTypes(), [](Type type) {
            return llvm::isa<RankedTensorType>(type);
          }))
        op->setAttr("mngraph.location", dram);
    });
  }
};

} // namespace
