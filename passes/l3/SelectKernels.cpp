//===- SelectKernels.cpp - A kernel generator for every kernel ------------===//

#include "mncc/passes/l3/Passes.h"

#include "mncc/codegen/MLIRBridge.h"
#include "mncc/dialects/onnx/OnnxDialect.h"
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
    // The kernel that packs each constant buffer in its arrangement: the
    // first that reads it (the emit phase packs with that kernel's request).
    struct Packer {
      const KernelGenerator *generator;
      KernelRequest request;
      size_t input;
    };
    llvm::DenseMap<Operation *, Packer> arrangements;
    // Whether `packer`'s image of the buffer is the one `generator` would
    // pack for input `input` of `request`: a kernel may share a packed
    // constant only then (a Div's table holds the reciprocal of what a
    // Mul's holds).
    auto samePacking = [](const Packer &packer,
                          const KernelGenerator *generator,
                          const KernelRequest &request, size_t input) {
      if (packer.generator != generator)
        return false;
      DramImage first, second;
      std::string error;
      if (!generator->packConstant(packer.request, packer.input, first,
                                   error) ||
          !generator->packConstant(request, input, second, error))
        return false;
      return first.groups == second.groups &&
             first.longWordsPerGroup == second.longWordsPerGroup &&
             first.data == second.data;
    };
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
        // An operator of the dialect names its domain in the dialect's
        // table (Adagrad: ai.onnx.preview.training); nodes of other
        // domains (onnx.Custom) have no host function form yet.
        const onnx::OnnxOpInfo *info = onnx::lookupOnnxOp(kernel.getOpType());
        if (domain || !info ||
            !reference::lookupKernel(info->domain, kernel.getOpType())) {
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
              samePacking(found->second, generator, *request, i))
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
        buffer.setLongWordsAttr(
            builder.getI64IntegerAttr(arrangedConstantLongWords(*custom)));
        arrangements.insert({buffer.getOperation(),
                             Packer{generator, *request, i}});
      }
      kernel.setInputsAttr(builder.getArrayAttr(inputs));
    });
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
