//===- Schedule.cpp - The order kernels run in ----------------------------===//

#include "mncc/passes/l3/Passes.h"

#include "mlir/IR/Builders.h"

namespace mncc::l3 {
#define GEN_PASS_DEF_SCHEDULE
#include "mncc/passes/l3/Passes.h.inc"
} // namespace mncc::l3

using namespace mlir;

namespace {

class SchedulePass : public mncc::l3::impl::ScheduleBase<SchedulePass> {
public:
  using ScheduleBase::ScheduleBase;

  void runOnOperation() override {
    StringRef asked = scheduler;
    if (asked != "always_from_dram" && asked != "reuse_consecutive" &&
        asked != "spill_opt" && asked != "auto_recompute_sa") {
      getOperation().emitError("scheduler must be always_from_dram, "
                               "reuse_consecutive, spill_opt or "
                               "auto_recompute_sa, not '")
          << asked << "'";
      return signalPassFailure();
    }
    // Every scheduler falls back to always_from_dram until it exists: the
    // graph order, every kernel reading and writing DRAM (docs/codegen.md
    // C1). The schedule says which was asked for and which ran.
    Builder builder(&getContext());
    getOperation().walk([&](mncc::l3::ScheduleOp schedule) {
      schedule->setAttr("scheduler", builder.getStringAttr(asked));
      schedule->setAttr("scheduled_as",
                        builder.getStringAttr("always_from_dram"));
    });
  }
};

} // namespace
