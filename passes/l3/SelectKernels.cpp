//===- SelectKernels.cpp - A kernel generator for every kernel ------------===//

#include "mncc/passes/l3/Passes.h"

#include "mncc/codegen/MLIRBridge.h"
#include "mncc/reference/Kernel.h"

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
  using SelectKernelsBase::SelectKernelsBase;

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
      bool forced = llvm::is_contained(opsOnHost, kernel.getOpType().str());
      const KernelGenerator *generator =
          forced ? nullptr : findEmittingKernelGenerator(*request, whyNot);
      if (!generator) {
        if (!forced && !hostFallback) {
          kernel.emitError("node '")
              << kernel.getNode() << "' (" << kernel.getOpType()
              << ") has no device kernel: " << whyNot;
          failedAny = true;
          return;
        }
        auto domain = kernel->getAttrOfType<StringAttr>("domain");
        // Nodes of other domains have no host function form yet.
        if (domain || !reference::lookupKernel("", kernel.getOpType())) {
          kernel.emitError("node '")
              << kernel.getNode() << "' ("
              << (domain ? domain.str() + "." : std::string())
              << kernel.getOpType()
              << ") runs neither on the device (" << whyNot
              << ") nor on the host (pfvm:cpu has no kernel for it)";
          failedAny = true;
          return;
        }
        // The host runs it between the device programs, reading its inputs
        // from DRAM and writing its outputs back in their canonical forms.
        kernel.setGeneratorAttr(builder.getStringAttr(l3::kHostGenerator));
        kernel->setAttr("host_reason",
                        builder.getStringAttr(
                            forced ? std::string("CODEGEN_OPS_ON_HOST")
                                   : "no device kernel: " + whyNot));
        SmallVector<Attribute> inputs(kernel.getInputs().begin(),
                                      kernel.getInputs().end());
        for (Attribute &attribute : inputs) {
          auto symbol = llvm::cast<SymbolRefAttr>(attribute);
          auto buffer =
              symbols.lookup<l3::BufferOp>(symbol.getRootReference());
          if (!buffer || !buffer.getArrangement())
            continue;
          // The host reads constants in their DRAM form, not a kernel's.
          OpBuilder::InsertionGuard guard(builder);
          builder.setInsertionPoint(buffer);
          auto copy = llvm::cast<l3::BufferOp>(builder.clone(*buffer));
          copy.removeArrangementAttr();
          copy.setLongWordsAttr(builder.getI64IntegerAttr(
              formOfBuffer(copy).groupLongWords()));
          symbols.insert(copy);
          attribute = FlatSymbolRefAttr::get(copy.getSymNameAttr());
        }
        kernel.setInputsAttr(builder.getArrayAttr(inputs));
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
        bool readByHost = false;
        module.walk([&](l3::KernelOp other) {
          if (other.getGenerator() == l3::kHostGenerator)
            for (Attribute input : other.getInputs())
              readByHost |= llvm::cast<SymbolRefAttr>(input)
                                .getRootReference() == buffer.getSymName();
        });
        if (found != arrangements.end() || readByHost) {
          if (found != arrangements.end() &&
              found->second == generator->name())
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
