//===- TimeSlice.cpp - Tensors too large for their memories ---------------===//

#include "mncc/passes/graph/Passes.h"

#include "mncc/codegen/MLIRBridge.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mncc::graph {
#define GEN_PASS_DEF_TIMESLICE
#include "mncc/passes/graph/Passes.h.inc"
} // namespace mncc::graph

using namespace mlir;
using namespace mncc;
using namespace mncc::codegen;

namespace {

/// Long words of one group's DRAM (4 GiB, manual 1.3).
constexpr int64_t kDramLongWordsPerGroup = int64_t(512) * 1024 * 1024;

class TimeSlicePass : public mncc::graph::impl::TimeSliceBase<TimeSlicePass> {
public:
  using TimeSliceBase::TimeSliceBase;

  void runOnOperation() override {
    bool failedAny = false;
    auto check = [&](Value value, Operation *at) {
      auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
      auto layoutAttr = graph::getLayout(value.getType());
      if (!type || !layoutAttr)
        return;
      std::string whyNot;
      std::optional<std::vector<unsigned>> order =
          canonicalOrderOf(layoutAttr.getLayout(), type.getShape(),
                           type.getElementType(), whyNot);
      if (!order)
        return; // not placed by the planner: nothing to size
      std::vector<int64_t> order64(order->begin(), order->end());
      std::optional<DramForm> form = formOf(type, order64);
      if (form && form->groupLongWords() > kDramLongWordsPerGroup) {
        at->emitError("tensor of type ")
            << type << " needs " << form->groupLongWords() * 8
            << " bytes in each of its groups' DRAM, more than the 4 GiB a "
               "group holds";
        failedAny = true;
      }
    };
    getOperation().walk([&](func::FuncOp function) {
      for (BlockArgument argument : function.getArguments())
        check(argument, function);
      function.walk([&](Operation *op) {
        for (Value result : op->getResults())
          check(result, op);
      });
    });
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
