//===- EmitKernels.cpp - Every kernel's MN-Core 2 assembly ----------------===//

#include "mncc/passes/l3/Passes.h"

#include "mncc/codegen/MLIRBridge.h"

#include "mlir/IR/Builders.h"

namespace mncc::l3 {
#define GEN_PASS_DEF_EMITKERNELS
#include "mncc/passes/l3/Passes.h.inc"
#define GEN_PASS_DEF_LINKPROGRAM
#include "mncc/passes/l3/Passes.h.inc"
} // namespace mncc::l3

using namespace mlir;
using namespace mncc;
using namespace mncc::codegen;

namespace {

class EmitKernelsPass
    : public mncc::l3::impl::EmitKernelsBase<EmitKernelsPass> {
public:
  void runOnOperation() override {
    ConstantCache constants;
    Builder builder(&getContext());
    bool failedAny = false;
    getOperation().walk([&](l3::KernelOp kernel) {
      if (kernel.getGenerator() == l3::kHostGenerator) {
        kernel.setVariantAttr(builder.getStringAttr("pfvm:cpu"));
        return; // the runtime runs it between the device programs
      }
      FailureOr<KernelRequest> request = requestForKernel(kernel, constants);
      if (failed(request)) {
        failedAny = true;
        return;
      }
      const KernelGenerator *generator =
          kernel.getGenerator() ? findGeneratorByName(*kernel.getGenerator())
                                : nullptr;
      if (!generator) {
        kernel.emitError("node '") << kernel.getNode()
                                   << "': no kernel generator selected (run "
                                      "mncc-select-kernels first)";
        failedAny = true;
        return;
      }
      VsmWriter writer;
      KernelDescription description;
      std::string error;
      if (!generator->emit(*request, writer, description, error)) {
        kernel.emitError("node '")
            << kernel.getNode() << "' (" << kernel.getOpType()
            << "): " << generator->name() << ": " << error;
        failedAny = true;
        return;
      }
      kernel.setVariantAttr(builder.getStringAttr(description.variant));
      if (!description.matrixUnit.empty())
        kernel->setAttr("matrix_unit",
                        builder.getStringAttr(description.matrixUnit));
      SmallVector<NamedAttribute> parameters;
      for (auto &[name, value] : description.parameters)
        parameters.push_back(builder.getNamedAttr(name,
                                                  builder.getStringAttr(value)));
      kernel.setParametersAttr(builder.getDictionaryAttr(parameters));
      kernel->setAttr("steps", builder.getI64IntegerAttr(writer.steps()));
      kernel.setVsmAttr(builder.getStringAttr(writer.take()));
    });
    if (failedAny)
      signalPassFailure();
  }
};

class LinkProgramPass
    : public mncc::l3::impl::LinkProgramBase<LinkProgramPass> {
public:
  using LinkProgramBase::LinkProgramBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string text = "# MN-Core 2 program written by mncc\n";
    int64_t steps = 0;
    int64_t line = 2;
    bool failedAny = false;
    Builder attributes(&getContext());
    module.walk([&](l3::KernelOp kernel) {
      if (kernel.getGenerator() == l3::kHostGenerator) {
        // A marker between the device programs; the runtime splits the
        // program there and runs the node on the host.
        kernel->setAttr("first_line", attributes.getI64IntegerAttr(line));
        kernel->setAttr("last_line", attributes.getI64IntegerAttr(line));
        text += "# host node " + kernel.getNode().str() + " (" +
                kernel.getOpType().str() + "): pfvm:cpu\n";
        ++line;
        return;
      }
      if (!kernel.getVsm()) {
        kernel.emitError("node '") << kernel.getNode()
                                   << "' has no assembly (run "
                                      "mncc-emit-kernels first)";
        failedAny = true;
        return;
      }
      text += "# node " + kernel.getNode().str() + " (" +
              kernel.getOpType().str() + "): " +
              kernel.getGenerator().value_or("").str() + ", " +
              kernel.getVariant().value_or("").str() + "\n";
      // Every kernel is self-contained (docs/codegen.md C1): the emulator
      // may leave out the PE work of groups whose results no transfer reads
      // (docs/target/mncore2.md S39).
      text += "#pragma mncc kernel\n";
      // The kernel's lines, comments included, for profiles by node.
      kernel->setAttr("first_line", attributes.getI64IntegerAttr(line));
      line += 2 + kernel.getVsm()->count('\n');
      kernel->setAttr("last_line", attributes.getI64IntegerAttr(line - 1));
      text += kernel.getVsm()->str();
      if (auto kernelSteps = kernel->getAttrOfType<IntegerAttr>("steps"))
        steps += kernelSteps.getInt();
    });
    if (failedAny)
      return signalPassFailure();
    for (auto program : llvm::make_early_inc_range(module.getOps<l3::ProgramOp>()))
      program.erase();
    OpBuilder builder(module.getBodyRegion());
    builder.setInsertionPointToEnd(module.getBody());
    builder.create<l3::ProgramOp>(module.getLoc(), text, steps);
  }
};

} // namespace
