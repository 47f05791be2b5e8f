//===- SelectKernels.cpp - A kernel generator for every kernel ------------===//

#include "mncc/passes/l3/Passes.h"

#include "mncc/codegen/MLIRBridge.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mncc::l3 {
#define GEN_PASS_DEF_SELECTKERNELS
#include "mncc/passes/l3/Passes.h.inc"
} // namespace mncc::l3

using namespace mlir;
using namespace mncc;
using namespace mncc::codegen;

namespace {

class SelectKernelsPass
    : public mncc::l3::impl::SelectKernelsBase<SelectKernelsPass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    OpBuilder builder(&getContext());
    ConstantCache constants;
    bool failedAny = false;
    // Which arrangement each constant buffer was given, by the first kernel
    // that packs it.
    llvm::DenseMap<Operation *, std::string> arrangements;
    module.walk([&](l3::KernelOp kernel) {
      FailureOr<KernelRequest> request = requestForKernel(kernel, constants);
      if (failed(request)) {
        failedAny = true;
        return;
      }
      std::string whyNot;
      const KernelGenerator *generator = findKernelGenerator(*request, whyNot);
      if (!generator) {
        kernel.emitError("node '")
            << kernel.getNode() << "' (" << kernel.getOpType()
            << ") has no device kernel: " << whyNot;
        failedAny = true;
        return;
      }
      kernel.setGeneratorAttr(builder.getStringAttr(generator->name()));
      SmallVector<Attribute> inputs(kernel.getInputs().begin(),
                                    kernel.getInputs().end());
      for (auto [i, attribute] : llvm::enumerate(inputs)) {
        auto symbol = llvm::cast<SymbolRefAttr>(attribute);
        auto buffer = symbols.lookup<l3::BufferOp>(symbol.getRootReference());
        if (!buffer || buffer.getKind() != "constant")
          continue;
        std::optional<int64_t> custom =
            generator->constantLongWords(*request, i);
        if (!custom)
          continue;
        auto found = arrangements.find(buffer);
        if (found != arrangements.end()) {
          if (found->second == generator->name())
            continue;
          // Read in two arrangements: this kernel gets its own copy.
          OpBuilder::InsertionGuard guard(builder);
          builder.setInsertionPoint(buffer);
          auto copy = llvm::cast<l3::BufferOp>(builder.clone(*buffer));
          symbols.insert(copy);
          buffer = copy;
          attribute = FlatSymbolRefAttr::get(copy.getSymNameAttr());
        }
        buffer.setArrangementAttr(builder.getStringAttr(generator->name()));
        buffer.setLongWordsAttr(builder.getI64IntegerAttr(
            roundUp(std::max<int64_t>(*custom, 1), kMvUnitLongWords)));
        arrangements[buffer] = generator->name();
      }
      kernel.setInputsAttr(builder.getArrayAttr(inputs));
    });
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
