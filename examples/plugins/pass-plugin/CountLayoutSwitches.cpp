//===- CountLayoutSwitches.cpp - An example pass loaded as a plugin -------===//
//
// Counts the layout switches of a module with mncc's own op class and
// records the count on the module: a plugin pass works on mncc dialects
// through their C++ API.
//
//===----------------------------------------------------------------------===//

#include "mncc/dialects/graph/GraphDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Tools/Plugins/PassPlugin.h"

namespace {

struct CountLayoutSwitchesPass
    : mlir::PassWrapper<CountLayoutSwitchesPass,
                        mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CountLayoutSwitchesPass)

  llvm::StringRef getArgument() const override {
    return "mnccx-count-layout-switches";
  }
  llvm::StringRef getDescription() const override {
    return "Records the number of mngraph.layout_switch ops on the module";
  }

  void runOnOperation() override {
    int64_t count = 0;
    getOperation().walk([&](mncc::graph::LayoutSwitchOp) { ++count; });
    mlir::Builder builder(&getContext());
    getOperation()->setAttr("mnccx.layout_switches",
                            builder.getI64IntegerAttr(count));
  }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "MnccxPassPlugin", LLVM_VERSION_STRING,
          [] { mlir::PassRegistration<CountLayoutSwitchesPass>(); }};
}
