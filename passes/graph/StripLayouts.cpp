//===- StripLayouts.cpp - Drop MN-Core 2 layouts from a graph -------------===//

#include "mncc/passes/graph/Passes.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mncc::graph {
#define GEN_PASS_DEF_STRIPLAYOUTS
#include "mncc/passes/graph/Passes.h.inc"
} // namespace mncc::graph

using namespace mlir;
using namespace mncc::graph;

namespace {

Type stripLayout(Type type) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensor || !llvm::isa_and_nonnull<LayoutAttr>(tensor.getEncoding()))
    return type;
  return RankedTensorType::get(tensor.getShape(), tensor.getElementType());
}

SmallVector<Type> stripLayouts(TypeRange types) {
  return llvm::map_to_vector(types, stripLayout);
}

struct StripLayoutsPass
    : mncc::graph::impl::StripLayoutsBase<StripLayoutsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    module.walk([&](Operation *op) {
      for (Value result : op->getResults())
        result.setType(stripLayout(result.getType()));
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument argument : block.getArguments())
            argument.setType(stripLayout(argument.getType()));
      if (auto function = llvm::dyn_cast<FunctionOpInterface>(op))
        function.setType(FunctionType::get(
            op->getContext(), stripLayouts(function.getArgumentTypes()),
            stripLayouts(function.getResultTypes())));
    });
    // With the layouts gone every switch maps a type onto itself.
    module.walk([&](LayoutSwitchOp layoutSwitch) {
      layoutSwitch.replaceAllUsesWith(layoutSwitch.getInput());
      layoutSwitch.erase();
    });
  }
};

} // namespace
