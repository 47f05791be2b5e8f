//===- FuseEpilogues.cpp - Activations clamped by the kernel before -------===//
//
// Under the always_from_dram schedule every kernel reads its inputs from
// DRAM and writes its outputs back, so a Relu after a Conv costs a whole
// pass over the tensor in DRAM (and, under float_dtype=mixed, the two Casts
// around it). When the kernel before can clamp its results as it writes
// them, that pass goes.
//
//===----------------------------------------------------------------------===//

#include "mncc/passes/l3/Passes.h"

#include "mncc/codegen/MLIRBridge.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"

#include <limits>

namespace mncc::l3 {
#define GEN_PASS_DEF_FUSEEPILOGUES
#include "mncc/passes/l3/Passes.h.inc"
} // namespace mncc::l3

using namespace mlir;
using namespace mncc;
using namespace mncc::codegen;

namespace {

StringAttr rootOf(Attribute reference) {
  return llvm::cast<SymbolRefAttr>(reference).getRootReference();
}

/// The clamp of a Relu, or of a Clip whose bounds are absent (the float
/// limits, as ONNX and pfvm:cpu take them) or scalar constants (inputs
/// from opset 11, attributes before); nullopt for anything else.
std::optional<reference::FusedActivation>
clampOf(const KernelRequest &request) {
  constexpr float kInfinity = std::numeric_limits<float>::infinity();
  if (request.opType == "Relu")
    return reference::FusedActivation{0.0f, kInfinity};
  if (request.opType != "Clip")
    return std::nullopt;
  reference::FusedActivation bounds{
      request.getFloat("min", std::numeric_limits<float>::lowest()),
      request.getFloat("max", std::numeric_limits<float>::max())};
  for (auto [input, bound] : {std::pair<size_t, float *>{1, &bounds.lo},
                              std::pair<size_t, float *>{2, &bounds.hi}}) {
    if (!request.hasInput(input))
      continue;
    const reference::Tensor *value = request.inputs[input].constant;
    if (!value || value->numElements() != 1)
      return std::nullopt;
    *bound = float(value->elementAsDouble(0));
  }
  if (!(bounds.lo <= bounds.hi))
    return std::nullopt;
  return bounds;
}

/// The same DRAM form, but for the base.
bool sameForm(const DramForm &a, const DramForm &b) {
  return a.type == b.type && a.shape == b.shape && a.order == b.order &&
         a.groups == b.groups;
}

/// What the folds need to know about the schedule, kept up to date as
/// they change it.
struct Folder {
  ConstantCache constants;
  llvm::DenseMap<StringAttr, SmallVector<l3::KernelOp, 1>> writers;
  llvm::DenseMap<StringAttr, int> uses;

  LogicalResult tryFold(l3::KernelOp consumer, SymbolTable &symbols,
                        Builder &builder);
  void tryFoldWidening(l3::KernelOp add, SymbolTable &symbols,
                       Builder &builder);
  void tryFoldNarrowing(l3::KernelOp cast, Builder &builder);
};

class FuseEpiloguesPass
    : public mncc::l3::impl::FuseEpiloguesBase<FuseEpiloguesPass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    Builder builder(&getContext());
    Folder folder;
    auto &writers = folder.writers;
    auto &uses = folder.uses;

    // Who writes each buffer, and how many kernel operands and aliases
    // read it.
    module.walk([&](l3::KernelOp kernel) {
      for (Attribute output : kernel.getOutputs())
        writers[rootOf(output)].push_back(kernel);
      for (Attribute input : kernel.getInputs())
        ++uses[rootOf(input)];
    });
    module.walk([&](l3::BufferOp buffer) {
      if (FlatSymbolRefAttr alias = buffer.getAliasAttr())
        ++uses[alias.getAttr()];
    });

    // The device kernels of an operator, collected before a fold changes
    // the schedule.
    auto deviceKernels = [&](StringRef opType) {
      SmallVector<l3::KernelOp> kernels;
      module.walk([&](l3::KernelOp kernel) {
        if (kernel.getOpType() == opType && kernel.getGenerator() &&
            kernel.getGenerator() != l3::kHostGenerator)
          kernels.push_back(kernel);
      });
      return kernels;
    };

    // First the Casts into the Adds that read them, so that the Relu
    // after such an Add then folds into the cast-add kernel.
    for (l3::KernelOp add : deviceKernels("Add"))
      folder.tryFoldWidening(add, symbols, builder);

    for (StringRef opType : {"Relu", "Clip"})
      for (l3::KernelOp consumer : deviceKernels(opType))
        if (failed(folder.tryFold(consumer, symbols, builder)))
          return signalPassFailure();

    // Last the Casts of a result into the kernel that computes it, after
    // the activations (the Cast reads the clamped result).
    for (l3::KernelOp cast : deviceKernels("Cast"))
      folder.tryFoldNarrowing(cast, builder);
  }
};

} // namespace

/// Folds `consumer` (a Relu or Clip) into the kernel that writes its input
/// when that kernel's generator clamps and emits the combined request.
LogicalResult Folder::tryFold(l3::KernelOp consumer, SymbolTable &symbols,
                              Builder &builder) {
  if (consumer.getInputs().empty() || consumer.getOutputs().size() != 1)
    return success();
  StringAttr between = rootOf(consumer.getInputs()[0]);
  auto buffer = symbols.lookup<l3::BufferOp>(between);
  if (!buffer || buffer.getKind() != "temporary" || buffer.getAliasAttr() ||
      uses[between] != 1 || writers[between].size() != 1)
    return success();
  l3::KernelOp producer = writers[between].front();
  Attribute result = consumer.getOutputs()[0];
  auto output = symbols.lookup<l3::BufferOp>(rootOf(result));
  if (!output || producer.getOutputs().size() != 1 ||
      !producer.getGenerator() || producer.getGenerator() == l3::kHostGenerator)
    return success();
  const KernelGenerator *generator =
      findGeneratorByName(*producer.getGenerator());
  FailureOr<KernelRequest> folded = requestForKernel(consumer, constants);
  FailureOr<KernelRequest> request = requestForKernel(producer, constants);
  if (!generator || failed(folded) || failed(request))
    return failure();
  DramForm from = formOfBuffer(buffer), to = formOfBuffer(output);
  if (!sameForm(from, to))
    return success();

  std::optional<reference::FusedActivation> bounds = clampOf(*folded);
  if (!bounds || producer.getActivation())
    return success();
  request->activation = KernelActivation{folded->opType, *bounds};
  if (!generator->fusesActivation(*request))
    return success();
  // A constant the producer packs in its own arrangement may be packed
  // differently for the new request: it must be the producer's alone.
  for (Attribute input : producer.getInputs()) {
    auto constant = symbols.lookup<l3::BufferOp>(rootOf(input));
    if (constant && constant.getArrangement() && uses[rootOf(input)] != 1)
      return success();
  }
  std::string whyNot;
  VsmWriter scratch;
  KernelDescription description;
  if (!generator->matches(*request, whyNot) ||
      !generator->emit(*request, scratch, description, whyNot))
    return success();

  producer.setOutputsAttr(builder.getArrayAttr({result}));
  writers[rootOf(result)] = {producer};
  producer.setActivationAttr(builder.getStringAttr(folded->opType));
  producer.setActivationBoundsAttr(
      builder.getDenseF32ArrayAttr({bounds->lo, bounds->hi}));
  for (auto [i, input] : llvm::enumerate(producer.getInputs())) {
    auto constant = symbols.lookup<l3::BufferOp>(rootOf(input));
    if (!constant || !constant.getArrangement())
      continue;
    std::optional<int64_t> longWords =
        generator->constantLongWords(*request, i);
    if (!longWords)
      return producer.emitError("node '")
             << producer.getNode() << "': " << generator->name()
             << " no longer packs input " << i << " after folding '"
             << consumer.getNode() << "' into it";
    constant.setLongWordsAttr(
        builder.getI64IntegerAttr(arrangedConstantLongWords(*longWords)));
  }
  // The consumer's work is the producer's now; the Clip's bounds, read
  // only by it, go with it.
  if (auto flops = consumer->getAttrOfType<IntegerAttr>("flops")) {
    auto own = producer->getAttrOfType<IntegerAttr>("flops");
    producer->setAttr("flops", builder.getI64IntegerAttr(
                                   flops.getInt() + (own ? own.getInt() : 0)));
  }
  SmallVector<Attribute> clipBounds(llvm::drop_begin(consumer.getInputs()));
  consumer.erase();
  symbols.erase(buffer);
  for (Attribute input : clipBounds) {
    auto constant = symbols.lookup<l3::BufferOp>(rootOf(input));
    if (constant && constant.getKind() == "constant" &&
        --uses[rootOf(input)] == 0)
      symbols.erase(constant);
  }
  return success();
}

/// Folds a device Cast from half to single into the Add that alone reads
/// its result, when the cast-add kernel takes the Add with the Cast's half
/// source instead (docs/codegen.md V8): the Cast's pass over the tensor in
/// DRAM, and the Add's read of its single result, go. Both operands may
/// fold (V10).
void Folder::tryFoldWidening(l3::KernelOp add, SymbolTable &symbols,
                             Builder &builder) {
  const KernelGenerator *castAdd = findGeneratorByName("cast-add");
  if (!castAdd || add.getOutputs().size() != 1 || add.getInputs().size() != 2)
    return;
  for (unsigned i = 0; i < 2; ++i) {
    StringAttr between = rootOf(add.getInputs()[i]);
    auto buffer = symbols.lookup<l3::BufferOp>(between);
    if (!buffer || buffer.getKind() != "temporary" || buffer.getAliasAttr() ||
        uses[between] != 1 || writers[between].size() != 1)
      continue;
    l3::KernelOp cast = writers[between].front();
    if (cast.getOpType() != "Cast" || cast.getInputs().size() != 1 ||
        !cast.getGenerator() || cast.getGenerator() == l3::kHostGenerator)
      continue;
    auto source = symbols.lookup<l3::BufferOp>(rootOf(cast.getInputs()[0]));
    FailureOr<KernelRequest> request = requestForKernel(add, constants);
    if (!source || failed(request))
      continue;
    DramForm sourceForm = formOfBuffer(source);
    if (sourceForm.type != DeviceType::Half)
      continue;
    request->inputs[i].form = sourceForm;
    request->inputs[i].constant = nullptr;
    std::string whyNot;
    VsmWriter scratch;
    KernelDescription description;
    if (!castAdd->matches(*request, whyNot) ||
        !castAdd->emit(*request, scratch, description, whyNot))
      continue;
    SmallVector<Attribute> inputs(add.getInputs().begin(),
                                  add.getInputs().end());
    inputs[i] = cast.getInputs()[0];
    add.setInputsAttr(builder.getArrayAttr(inputs));
    add.setGeneratorAttr(builder.getStringAttr(castAdd->name()));
    cast.erase();
    symbols.erase(buffer);
    uses.erase(between);
    writers.erase(between);
    // The other operand may be a widened half too (a downsampling
    // convolution's result, V10).
  }
}

/// Folds a device Cast into the kernel that alone writes its source, when
/// that kernel's generator writes the Cast's result beside its own
/// (`writesNarrowedCopy`: cast-add's half copy, docs/codegen.md V9): the
/// Cast's read of the source from DRAM goes.
void Folder::tryFoldNarrowing(l3::KernelOp cast, Builder &builder) {
  if (cast.getInputs().size() != 1 || cast.getOutputs().size() != 1)
    return;
  StringAttr source = rootOf(cast.getInputs()[0]);
  StringAttr copy = rootOf(cast.getOutputs()[0]);
  if (writers[source].size() != 1 || writers[copy].size() != 1)
    return;
  l3::KernelOp producer = writers[source].front();
  if (producer.getOutputs().size() != 1 || !producer.getGenerator() ||
      producer.getGenerator() == l3::kHostGenerator)
    return;
  const KernelGenerator *generator =
      findGeneratorByName(*producer.getGenerator());
  if (!generator)
    return;
  ArrayAttr own = producer.getOutputsAttr();
  producer.setOutputsAttr(builder.getArrayAttr({own[0], cast.getOutputs()[0]}));
  FailureOr<KernelRequest> request = requestForKernel(producer, constants);
  std::string whyNot;
  VsmWriter scratch;
  KernelDescription description;
  if (failed(request) || !generator->writesNarrowedCopy(*request) ||
      !generator->emit(*request, scratch, description, whyNot)) {
    producer.setOutputsAttr(own);
    return;
  }
  writers[copy] = {producer};
  --uses[source];
  cast.erase();
}
