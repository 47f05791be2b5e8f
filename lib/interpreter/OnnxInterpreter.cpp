//===- OnnxInterpreter.cpp - pfvm:cpu over the onnx dialect ---------------===//

#include "mncc/interpreter/OnnxInterpreter.h"
#include "mncc/interpreter/KernelAttributes.h"
#include "mncc/onnx/Import.h"

#include "mncc/dialects/onnx/OnnxOps.h"
#include "mncc/onnx/TensorIo.h"
#include "mncc/passes/pfvm/Fusion.h"
#include "mncc/passes/pfvm/Passes.h"
#include "mncc/reference/Broadcast.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <chrono>
#include <limits>
#include <map>
#include <optional>

using namespace mlir;
using namespace mncc;
using KernelAttribute = reference::Attribute;
using reference::KernelContext;
using reference::KernelFn;
using reference::Status;

namespace {

struct Graph;

/// Where a step's output goes inside a later Concat's output.
struct Placement {
  int concatSlot;
  size_t byteOffset;
  reference::DType dtype;
  std::vector<int64_t> shape, concatShape;
};

/// One node, ready to run: its kernel, where its inputs and outputs live in
/// the slot table, and its attributes in kernel form.
struct Step {
  std::string opType;
  /// Which node of the model this is (onnxNodeIdentity).
  std::string nodeName;
  std::string description; // "node 'conv1' (Conv)"
  KernelFn kernel = nullptr;
  std::vector<int> inputSlots;  // -1: omitted
  std::vector<int> outputSlots; // -1: not wanted
  std::vector<reference::DType> outputTypes;
  std::map<std::string, KernelAttribute, std::less<>> attributes;
  std::vector<std::pair<std::string, Graph *>> graphs;
  /// Slots whose last use is this step, released after it.
  std::vector<int> release;
  uint64_t seed = 0;
  /// The activation fused into this step, if any.
  std::optional<reference::FusedActivation> fused;
  /// The name --profile counts this step under ("Conv+Relu" when fused).
  std::string profileName;
  /// Which inputs are initializers.
  std::vector<bool> initializerInputs;
  /// Per output, its place inside a later Concat's output, if planned.
  std::vector<std::optional<Placement>> placements;
  /// A Concat some of whose inputs are written in place.
  bool concatInPlace = false;
  /// What the kernel keeps across runs (a pointer: a mutex does not move).
  std::unique_ptr<reference::NodeCache> cache =
      std::make_unique<reference::NodeCache>();
};

struct Graph {
  std::vector<int> argumentSlots;
  std::vector<Step> steps;
  std::vector<int> resultSlots;
};

} // namespace

struct OnnxProgram::Impl {
  std::vector<std::unique_ptr<Graph>> graphs; // graphs[0] is the model
  std::vector<reference::Value> initialSlots; // initializers filled in
  std::vector<ProgramValueInfo> inputs, outputs;
  std::shared_ptr<const NodeRounding> rounding;

  Status runGraph(const Graph &graph, std::vector<reference::Value> &slots,
                  const std::vector<reference::Value> &arguments,
                  std::vector<reference::Value> &results) const;
  /// Set for the duration of a profiled run.
  mutable RunProfile *profile = nullptr;
};

namespace {

class StepContext : public KernelContext {
public:
  StepContext(const OnnxProgram::Impl &program, const Step &step,
              std::vector<reference::Value> &slots)
      : program(program), step(step), slots(slots) {}

  std::string_view opType() const override { return step.opType; }
  size_t numInputs() const override { return step.inputSlots.size(); }
  const reference::Value *input(size_t index) const override {
    int slot = index < step.inputSlots.size() ? step.inputSlots[index] : -1;
    return slot < 0 ? nullptr : &slots[slot];
  }
  size_t numOutputs() const override { return step.outputSlots.size(); }
  bool wantsOutput(size_t index) const override {
    return index < step.outputSlots.size() && step.outputSlots[index] >= 0;
  }
  void setOutput(size_t index, reference::Value value) override {
    if (wantsOutput(index))
      slots[step.outputSlots[index]] = std::move(value);
  }
  std::optional<reference::Tensor>
  placeOutput(size_t index, reference::DType dtype,
              const std::vector<int64_t> &shape) override {
    if (index < step.placements.size() && step.placements[index]) {
      const Placement &place = *step.placements[index];
      if (dtype == place.dtype && shape == place.shape) {
        // The first producer to run creates the Concat's output. Nothing
        // here may throw (KernelContext::placeOutput): a Concat output
        // too large is left to the producer's own allocation to report.
        reference::Value &whole = slots[place.concatSlot];
        if (!whole.isTensor() || whole.tensor.dtype() != dtype ||
            whole.tensor.shape() != place.concatShape) {
          std::string error;
          std::optional<reference::Tensor> made =
              reference::Tensor::tryAllocate(dtype, place.concatShape, error,
                                             /*zero=*/false);
          if (!made)
            return std::nullopt;
          whole = reference::Value(std::move(*made));
        }
        if (std::optional<reference::Tensor> part = reference::Tensor::view(
                whole.tensor, place.byteOffset, dtype, shape))
          return part;
      }
    }
    if (step.concatInPlace && index == 0) {
      const reference::Value &whole = slots[step.outputSlots[0]];
      if (whole.isTensor() && whole.tensor.dtype() == dtype &&
          whole.tensor.shape() == shape)
        return whole.tensor;
    }
    return std::nullopt;
  }
  const KernelAttribute *attribute(std::string_view name) const override {
    auto found = step.attributes.find(name);
    return found == step.attributes.end() ? nullptr : &found->second;
  }
  Status runGraph(std::string_view name,
                  const std::vector<reference::Value> &inputs,
                  std::vector<reference::Value> &outputs) override {
    for (const auto &[graphName, graph] : step.graphs)
      if (graphName == name)
        return program.runGraph(*graph, slots, inputs, outputs);
    return Status::error(step.opType + " has no graph attribute '" +
                         std::string(name) + "'");
  }
  uint64_t defaultSeed() const override { return step.seed; }
  const reference::FusedActivation *fusedActivation() const override {
    return step.fused ? &*step.fused : nullptr;
  }
  reference::NodeCache *cacheForConstantInput(size_t index) const override {
    if (index >= step.initializerInputs.size() ||
        !step.initializerInputs[index])
      return nullptr;
    // Only the model's own tensor is the same on every run. The importer
    // keeps a graph input with an initializer an initializer, so a run
    // cannot replace it today; the check keeps the cache right if it can.
    int slot = step.inputSlots[index];
    const reference::Value &given = slots[slot];
    const reference::Value &initial = program.initialSlots[slot];
    bool own = given.isTensor() && initial.isTensor() &&
               given.tensor.raw() == initial.tensor.raw();
    return own ? step.cache.get() : nullptr;
  }

private:
  const OnnxProgram::Impl &program;
  const Step &step;
  std::vector<reference::Value> &slots;
};

/// Builds Graphs from regions, numbering every SSA value with a slot.
class Preparer {
public:
  Preparer(OnnxProgram::Impl &program, const PrepareOptions &options,
           std::vector<std::string> *unsupported)
      : program(program), options(options), unsupported(unsupported) {}

  FailureOr<Graph *> prepareBlock(Block &block);
  LogicalResult failed() const { return mlir::failure(anyFailure); }

private:
  int slotOf(Value value) {
    auto [entry, inserted] = slots.try_emplace(value, (int)slots.size());
    if (inserted)
      program.initialSlots.emplace_back();
    return entry->second;
  }
  LogicalResult prepareOp(Operation *op, Graph &graph);
  FailureOr<KernelAttribute> convertAttribute(Operation *op, StringRef name,
                                              mlir::Attribute value);
  LogicalResult prepareGradient(Operation *op, Step &step);
  void planFusion(Block &block);
  void planConcatInPlace(Block &block, Graph &graph,
                         const llvm::DenseMap<Operation *, size_t> &stepOf);
  Operation *inPlaceProducer(Value value, Block &block) const;

  OnnxProgram::Impl &program;
  const PrepareOptions &options;
  /// Conv ops that run their consumer's activation, and those consumers,
  /// which then only pass the Conv's result on.
  llvm::DenseMap<Operation *, reference::FusedActivation> fusedInto;
  llvm::DenseSet<Operation *> passThrough;
  std::vector<std::string> *unsupported;
  llvm::DenseMap<Value, int> slots;
  uint64_t nextSeed = 0x9e3779b97f4a7c15ull;
  bool anyFailure = false;
};

/// "node 'conv1' (Conv)", or for a node without a name what the importer
/// kept of it, "node (index 3, Conv)" (lib/onnx/Import.cpp).
std::string describe(Operation *op, StringRef opType) {
  // A node without a name is identified by its description already.
  std::string identity = onnxNodeIdentity(op->getLoc());
  if (identity.empty())
    return "node (" + opType.str() + ")";
  if (llvm::isa<FusedLoc>(op->getLoc()))
    return identity;
  return "node '" + identity + "' (" + opType.str() + ")";
}

/// The kernel of an activation fused into its producer: its input already
/// holds the activated value, shared, not copied.
Status passOnKernel(KernelContext &context) {
  context.setOutput(0, *context.input(0));
  return Status::success();
}

} // namespace

/// Runs the activations pfvm-fuse-activations marked inside their
/// producers (onnx.fused_activation): the Conv or Add clamps its output
/// while it is in cache, saving a pass over memory, and the activation
/// passes the value on, bit-identical to running both. A mark whose
/// conditions no longer hold (the graph changed after the pass) is
/// ignored, and both nodes run.
void Preparer::planFusion(Block &block) {
  if (!options.fuseActivations)
    return;
  for (Operation &op : block) {
    if (!op.hasAttr(onnx::kFusedActivationAttrName))
      continue;
    Operation *user = pfvm::fusableActivationUser(&op);
    std::optional<pfvm::ActivationBounds> bounds =
        user ? pfvm::fusableActivation(user) : std::nullopt;
    if (!bounds)
      continue;
    fusedInto[&op] = reference::FusedActivation{bounds->lo, bounds->hi};
    passThrough.insert(user);
  }
}

/// The op that would write `value` in place: a Conv whose result reaches
/// `value` only through activations fused into it, each value on the way
/// used once; else nullptr.
Operation *Preparer::inPlaceProducer(Value value, Block &block) const {
  for (;;) {
    Operation *producer = value.getDefiningOp();
    if (!value.hasOneUse() || !producer || producer->getBlock() != &block)
      return nullptr;
    if (!passThrough.contains(producer))
      return producer->getName().getStringRef() == "onnx.Conv" &&
                     producer->getNumResults() == 1
                 ? producer
                 : nullptr;
    value = producer->getOperand(0);
  }
}

/// Plans the inputs pfvm-concat-in-place marked (onnx.in_place_inputs) on
/// the top-level graph's Concats: each one's Conv writes straight into its
/// block of the Concat's output, which then copies only the others. Runs
/// keep their own slots, so the place is fresh on every run. A mark that
/// no longer holds (shapes, the producer, its uses, or an activation that
/// is not fused after all) is ignored and the Concat copies that input.
void Preparer::planConcatInPlace(
    Block &block, Graph &graph,
    const llvm::DenseMap<Operation *, size_t> &stepOf) {
  if (!options.concatInPlace)
    return;
  for (Operation &op : block) {
    auto marked =
        op.getAttrOfType<DenseI64ArrayAttr>(onnx::kInPlaceInputsAttrName);
    auto concat = stepOf.find(&op);
    if (!marked || !llvm::isa<onnx::ConcatOp>(op) || concat == stepOf.end())
      continue;
    auto type = llvm::dyn_cast<RankedTensorType>(op.getResult(0).getType());
    reference::DType dtype =
        type ? kernelElementTypeOf(type) : reference::DType::Undefined;
    if (dtype == reference::DType::Undefined ||
        dtype == reference::DType::String)
      continue;
    llvm::SmallVector<int64_t> offsets = pfvm::concatBlockOffsets(&op);
    std::vector<int64_t> concatShape(type.getShape().begin(),
                                     type.getShape().end());
    for (int64_t index : marked.asArrayRef()) {
      if (index >= (int64_t)offsets.size())
        break;
      Value operand = op.getOperand(index);
      Operation *producer = inPlaceProducer(operand, block);
      auto producerStep = producer ? stepOf.find(producer) : stepOf.end();
      if (producerStep == stepOf.end())
        continue;
      auto operandType = llvm::cast<RankedTensorType>(operand.getType());
      Step &step = graph.steps[producerStep->second];
      step.placements.resize(step.outputSlots.size());
      step.placements[0] = Placement{
          slotOf(op.getResult(0)),
          static_cast<size_t>(offsets[index]) * reference::dtypeSize(dtype),
          dtype,
          std::vector<int64_t>(operandType.getShape().begin(),
                               operandType.getShape().end()),
          concatShape};
      Step &concatStep = graph.steps[concat->second];
      concatStep.concatInPlace = true;
      concatStep.profileName = "Concat (in place)";
    }
  }
}

FailureOr<KernelAttribute> Preparer::convertAttribute(Operation *op,
                                                      StringRef name,
                                                      mlir::Attribute value) {
  return convertOnnxAttribute(op, name, value);
}

LogicalResult Preparer::prepareOp(Operation *op, Graph &graph) {
  if (auto initializer = llvm::dyn_cast<onnx::InitializerOp>(op)) {
    auto tensor = tensorFromAttribute(initializer.getValue());
    if (!tensor)
      return op->emitError("initializer '")
             << initializer.getName()
             << "': " << llvm::toString(tensor.takeError());
    program.initialSlots[slotOf(initializer.getResult())] =
        reference::Value(std::move(*tensor));
    return success();
  }
  if (llvm::isa<onnx::NoneOp>(op))
    return success(); // its uses become omitted inputs

  Step step;
  StringRef domain;
  llvm::SmallVector<std::string> graphNames;
  llvm::SmallVector<NamedAttribute> attributes;
  llvm::SmallVector<int32_t> inputSegments, outputSegments;
  if (auto custom = llvm::dyn_cast<onnx::CustomOp>(op)) {
    step.opType = custom.getOpType().str();
    domain = custom.getDomain();
    for (NamedAttribute attribute : custom.getOnnxAttributes())
      attributes.push_back(attribute);
    for (mlir::Attribute name : custom.getGraphAttributeNames())
      graphNames.push_back(llvm::cast<StringAttr>(name).str());
  } else {
    step.opType = op->getName().stripDialect().str();
    const onnx::OnnxOpInfo *info = onnx::lookupOnnxOp(step.opType);
    if (!info)
      return op->emitError("is not an ONNX operator");
    domain = info->domain;
    llvm::SmallVector<StringRef> names;
    if (!info->graphAttributes.empty())
      info->graphAttributes.split(names, ',');
    for (StringRef name : names)
      graphNames.push_back(name.str());
    for (NamedAttribute attribute : op->getAttrs()) {
      StringRef name = attribute.getName();
      // Dotted names are the passes' marks (onnx.fused_activation, ...),
      // never ONNX attributes.
      if (name == "operandSegmentSizes" || name == "resultSegmentSizes" ||
          name.contains('.'))
        continue;
      attributes.push_back(attribute);
    }
    if (auto segments =
            op->getAttrOfType<DenseI32ArrayAttr>("operandSegmentSizes"))
      inputSegments.assign(segments.asArrayRef().begin(),
                           segments.asArrayRef().end());
    if (auto segments =
            op->getAttrOfType<DenseI32ArrayAttr>("resultSegmentSizes"))
      outputSegments.assign(segments.asArrayRef().begin(),
                            segments.asArrayRef().end());
  }
  step.description = describe(op, step.opType);
  step.nodeName = onnxNodeIdentity(op->getLoc());
  step.kernel = reference::lookupKernel(domain, step.opType);
  step.profileName = step.opType;
  if (auto fused = fusedInto.find(op); fused != fusedInto.end()) {
    step.fused = fused->second;
    step.profileName +=
        "+" +
        (*op->getResult(0).getUsers().begin())->getName().stripDialect().str();
  } else if (passThrough.contains(op)) {
    step.kernel = passOnKernel;
    step.profileName += " (fused)";
  }
  step.seed = nextSeed =
      nextSeed * 6364136223846793005ull + 1442695040888963407ull;
  bool isGradient =
      step.opType == "Gradient" && domain == "ai.onnx.preview.training";
  if (!step.kernel && !isGradient) {
    std::string name =
        domain.empty() ? step.opType : domain.str() + "." + step.opType;
    if (unsupported)
      unsupported->push_back(name);
    op->emitError("pfvm:cpu has no kernel for ") << name;
    anyFailure = true;
  }

  // Inputs at their ONNX positions; an omitted optional input is -1.
  auto slotOrOmitted = [&](Value value) {
    step.initializerInputs.push_back(
        static_cast<bool>(value.getDefiningOp<onnx::InitializerOp>()));
    return value.getDefiningOp<onnx::NoneOp>() ? -1 : slotOf(value);
  };
  if (inputSegments.empty()) {
    for (Value operand : op->getOperands())
      step.inputSlots.push_back(slotOrOmitted(operand));
  } else {
    unsigned next = 0;
    for (int32_t size : inputSegments) {
      if (size == 0) {
        step.inputSlots.push_back(-1);
        step.initializerInputs.push_back(false);
      }
      for (int32_t i = 0; i < size; ++i)
        step.inputSlots.push_back(slotOrOmitted(op->getOperand(next++)));
    }
  }
  auto addOutput = [&](Value result) {
    step.outputSlots.push_back(slotOf(result));
    step.outputTypes.push_back(kernelElementTypeOf(result.getType()));
  };
  if (outputSegments.empty()) {
    for (Value result : op->getResults())
      addOutput(result);
  } else {
    unsigned next = 0;
    for (int32_t size : outputSegments) {
      if (size == 0) {
        step.outputSlots.push_back(-1);
        step.outputTypes.push_back(reference::DType::Undefined);
      }
      for (int32_t i = 0; i < size; ++i)
        addOutput(op->getResult(next++));
    }
  }

  for (NamedAttribute attribute : attributes) {
    auto converted =
        convertAttribute(op, attribute.getName(), attribute.getValue());
    if (mlir::failed(converted))
      return failure();
    step.attributes[attribute.getName().str()] = std::move(*converted);
  }
  for (auto [index, region] : llvm::enumerate(op->getRegions())) {
    if (region.empty())
      continue;
    auto subgraph = prepareBlock(region.front());
    if (mlir::failed(subgraph))
      return failure();
    std::string name = index < graphNames.size()
                           ? graphNames[index]
                           : "graph" + std::to_string(index);
    step.graphs.emplace_back(name, *subgraph);
    KernelAttribute graphAttribute;
    graphAttribute.kind = KernelAttribute::Kind::Graph;
    step.attributes[name] = graphAttribute;
  }
  if (isGradient && mlir::failed(prepareGradient(op, step)))
    return failure();
  graph.steps.push_back(std::move(step));
  return success();
}

namespace {

// Reverse-mode differentiation for the Gradient operator of
// ai.onnx.preview.training: the tape lists the elementwise ops between the
// xs and y as (opcode, input a, input b, output) over the step's inputs.
enum GradientOpcode : int64_t { GAdd, GSub, GMul, GDiv, GNeg, GIdentity };

/// Sums `gradient` (of shape `from`) down to `shape`, undoing broadcast.
std::vector<double> reduceToShape(const std::vector<double> &gradient,
                                  const std::vector<int64_t> &from,
                                  const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  std::vector<double> result(count, 0.0);
  reference::forEachBroadcast<1>(
      from, {reference::broadcastStrides(shape, from)},
      [&](int64_t index, const std::array<int64_t, 1> &offsets) {
        result[offsets[0]] += gradient[index];
      });
  return result;
}

Status gradientKernel(KernelContext &context) {
  size_t numValues = context.numInputs();
  std::vector<std::vector<double>> values(numValues);
  std::vector<std::vector<int64_t>> shapes(numValues);
  for (size_t i = 0; i < numValues; ++i) {
    const reference::Tensor *tensor = context.inputTensor(i);
    if (!tensor)
      return Status::error("Gradient: a value it differentiates through was "
                           "not computed before it");
    shapes[i] = tensor->shape();
    for (int64_t e = 0; e < tensor->numElements(); ++e)
      values[i].push_back(tensor->elementAsDouble(e));
  }
  std::vector<int64_t> tape = context.getInts("mncc.tape");
  int64_t y = context.getInt("mncc.y", -1);
  if (y < 0 || y >= (int64_t)numValues || tape.size() % 4)
    return Status::error("Gradient: malformed tape");
  std::vector<std::vector<double>> gradients(numValues);
  gradients[y].assign(values[y].size(), 1.0);
  auto accumulate = [&](int64_t target, const std::vector<double> &gradient,
                        const std::vector<int64_t> &from, double sign) {
    std::vector<double> reduced = reduceToShape(gradient, from, shapes[target]);
    if (gradients[target].empty())
      gradients[target].assign(reduced.size(), 0.0);
    for (size_t i = 0; i < reduced.size(); ++i)
      gradients[target][i] += sign * reduced[i];
  };
  for (size_t at = tape.size(); at >= 4; at -= 4) {
    int64_t code = tape[at - 4], a = tape[at - 3], b = tape[at - 2],
            out = tape[at - 1];
    const std::vector<double> &g = gradients[out];
    if (g.empty())
      continue;
    const std::vector<int64_t> &shape = shapes[out];
    // Products with the other operand, broadcast to the output's shape.
    auto times = [&](int64_t other, auto fn) {
      std::vector<double> result(g.size());
      reference::forEachBroadcast<2>(
          shape,
          {reference::broadcastStrides(shapes[a], shape),
           reference::broadcastStrides(shapes[other], shape)},
          [&](int64_t index, const std::array<int64_t, 2> &offsets) {
            result[index] =
                fn(g[index], values[a][offsets[0]], values[other][offsets[1]]);
          });
      return result;
    };
    switch (code) {
    case GAdd:
      accumulate(a, g, shape, 1);
      accumulate(b, g, shape, 1);
      break;
    case GSub:
      accumulate(a, g, shape, 1);
      accumulate(b, g, shape, -1);
      break;
    case GMul:
      accumulate(a, times(b, [](double d, double, double v) { return d * v; }),
                 shape, 1);
      accumulate(b, times(b, [](double d, double u, double) { return d * u; }),
                 shape, 1);
      break;
    case GDiv:
      accumulate(a, times(b, [](double d, double, double v) { return d / v; }),
                 shape, 1);
      accumulate(b,
                 times(b, [](double d, double u,
                             double v) { return -d * u / (v * v); }),
                 shape, 1);
      break;
    case GNeg:
      accumulate(a, g, shape, -1);
      break;
    default:
      accumulate(a, g, shape, 1);
      break;
    }
  }
  for (size_t i = 0; i < context.numOutputs(); ++i) {
    const reference::Tensor *x = context.inputTensor(i);
    std::string error;
    std::optional<reference::Tensor> made =
        reference::Tensor::tryAllocate(x->dtype(), x->shape(), error);
    if (!made)
      return Status::error(error);
    reference::Tensor &result = *made;
    bool ok = reference::dispatchNumeric(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T>)
        for (int64_t e = 0; e < result.numElements(); ++e)
          result.data<T>()[e] =
              gradients[i].empty() ? T(0) : static_cast<T>(gradients[i][e]);
    });
    if (!ok || !reference::isFloatingPoint(x->dtype()) ||
        x->dtype() == reference::DType::Float16 ||
        x->dtype() == reference::DType::BFloat16)
      return Status::error("Gradient: only float and double are supported");
    context.setOutput(i, reference::Value(std::move(result)));
  }
  return Status::success();
}

} // namespace

LogicalResult Preparer::prepareGradient(Operation *op, Step &step) {
  auto function = op->getParentOfType<func::FuncOp>();
  auto yName = op->getAttrOfType<StringAttr>("y");
  if (!function || !yName)
    return op->emitError("Gradient needs its y attribute");
  // Intermediate names are not kept, so y must be a graph output.
  Value y;
  auto terminator = function.front().getTerminator();
  for (auto [index, operand] : llvm::enumerate(terminator->getOperands()))
    if (auto name =
            function.getResultAttrOfType<StringAttr>(index, "onnx.name"))
      if (name == yName)
        y = operand;
  if (!y)
    return op->emitError("Gradient: y '")
           << yName.getValue() << "' must be a graph output";
  // Local numbering: the xs first (the op's operands), then every value the
  // tape touches.
  llvm::DenseMap<Value, int64_t> local;
  std::vector<int> extraSlots;
  for (auto [index, operand] : llvm::enumerate(op->getOperands()))
    local[operand] = index;
  auto number = [&](Value value) {
    auto [entry, inserted] = local.try_emplace(value, (int64_t)local.size());
    if (inserted)
      extraSlots.push_back(slotOf(value));
    return entry->second;
  };
  // The ops y depends on, walked back from y and replayed in block order.
  llvm::SetVector<Operation *> needed;
  llvm::SmallVector<Value> work = {y};
  while (!work.empty()) {
    Value value = work.pop_back_val();
    Operation *producer = value.getDefiningOp();
    if (!producer || (local.count(value) && value != y) ||
        llvm::isa<onnx::InitializerOp>(producer) || !needed.insert(producer))
      continue;
    for (Value operand : producer->getOperands())
      work.push_back(operand);
  }
  std::vector<Operation *> ordered(needed.begin(), needed.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  std::vector<int64_t> tape;
  for (Operation *forward : ordered) {
    StringRef name = forward->getName().stripDialect();
    int64_t code = llvm::StringSwitch<int64_t>(name)
                       .Case("Add", GAdd)
                       .Case("Sub", GSub)
                       .Case("Mul", GMul)
                       .Case("Div", GDiv)
                       .Case("Neg", GNeg)
                       .Case("Identity", GIdentity)
                       .Default(-1);
    if (code < 0)
      return op->emitError("Gradient through ")
             << name << " is not supported (Add, Sub, Mul, Div, Neg, Identity)";
    int64_t a = number(forward->getOperand(0));
    int64_t b =
        forward->getNumOperands() > 1 ? number(forward->getOperand(1)) : a;
    tape.insert(tape.end(), {code, a, b, number(forward->getResult(0))});
  }
  number(y);
  step.inputSlots.insert(step.inputSlots.end(), extraSlots.begin(),
                         extraSlots.end());
  step.kernel = gradientKernel;
  KernelAttribute tapeAttribute;
  tapeAttribute.kind = KernelAttribute::Kind::Ints;
  tapeAttribute.ints = tape;
  step.attributes["mncc.tape"] = tapeAttribute;
  KernelAttribute yAttribute;
  yAttribute.kind = KernelAttribute::Kind::Int;
  yAttribute.i = local.lookup(y);
  step.attributes["mncc.y"] = yAttribute;
  return success();
}

FailureOr<Graph *> Preparer::prepareBlock(Block &block) {
  program.graphs.push_back(std::make_unique<Graph>());
  Graph *graph = program.graphs.back().get();
  bool topLevel = program.graphs.size() == 1;
  for (BlockArgument argument : block.getArguments())
    graph->argumentSlots.push_back(slotOf(argument));
  planFusion(block);
  llvm::DenseMap<Operation *, size_t> stepOf;
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      for (Value operand : op.getOperands())
        graph->resultSlots.push_back(slotOf(operand));
      continue;
    }
    size_t steps = graph->steps.size();
    if (mlir::failed(prepareOp(&op, *graph)))
      return failure();
    if (graph->steps.size() == steps + 1)
      stepOf[&op] = steps;
  }
  if (topLevel)
    planConcatInPlace(block, *graph, stepOf);
  // Liveness: a value defined in this block is released after the last
  // step of this block that uses it (a use inside a subgraph counts as a
  // use by the step that holds it). Results and initializers are kept.
  llvm::DenseMap<int, size_t> lastUse;
  llvm::DenseSet<int> kept(graph->resultSlots.begin(),
                           graph->resultSlots.end());
  size_t stepIndex = 0;
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>() ||
        llvm::isa<onnx::InitializerOp, onnx::NoneOp>(op)) {
      if (auto initializer = llvm::dyn_cast<onnx::InitializerOp>(op))
        kept.insert(slotOf(initializer.getResult()));
      continue;
    }
    op.walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (operand.getParentBlock() == &block && slots.count(operand))
          lastUse[slots.lookup(operand)] = stepIndex;
    });
    ++stepIndex;
  }
  // A step may read more than its operands (Gradient reads the forward
  // values it differentiates through).
  llvm::DenseSet<int> definedHere(graph->argumentSlots.begin(),
                                  graph->argumentSlots.end());
  for (Operation &op : block)
    for (Value result : op.getResults())
      if (slots.count(result))
        definedHere.insert(slots.lookup(result));
  for (auto [index, step] : llvm::enumerate(graph->steps))
    for (int slot : step.inputSlots)
      if (slot >= 0 && definedHere.contains(slot))
        lastUse[slot] = std::max<size_t>(lastUse.lookup(slot), index);
  for (auto [slot, index] : lastUse)
    if (!kept.contains(slot) && index < graph->steps.size())
      graph->steps[index].release.push_back(slot);
  for (Step &step : graph->steps)
    llvm::sort(step.release);
  return graph;
}

Status
OnnxProgram::Impl::runGraph(const Graph &graph,
                            std::vector<reference::Value> &slots,
                            const std::vector<reference::Value> &arguments,
                            std::vector<reference::Value> &results) const {
  if (arguments.size() != graph.argumentSlots.size())
    return Status::error(
        "the graph takes " + std::to_string(graph.argumentSlots.size()) +
        " inputs, " + std::to_string(arguments.size()) + " were given");
  for (size_t i = 0; i < arguments.size(); ++i)
    slots[graph.argumentSlots[i]] = arguments[i];
  bool rounded = rounding && &graph == graphs.front().get();
  for (const Step &step : graph.steps) {
    NodeView view{step.nodeName, step.opType, &step.attributes,
                  &step.outputTypes};
    // The originals of inputs the hook replaced, put back after the node.
    std::vector<std::pair<int, reference::Value>> originals;
    if (rounded) {
      std::vector<const reference::Value *> inputs;
      for (int slot : step.inputSlots)
        inputs.push_back(slot < 0 ? nullptr : &slots[slot]);
      std::vector<reference::Value> replacements(inputs.size());
      Status status = rounding->roundInputs(view, inputs, replacements);
      if (!status.ok())
        return Status::error(step.description + ": " + status.message());
      for (size_t i = 0; i < replacements.size(); ++i) {
        int slot = step.inputSlots[i];
        if (slot < 0 || replacements[i].isEmpty())
          continue;
        // A value read twice (Mul(x, x)) is saved once, as it was.
        if (llvm::none_of(originals,
                          [&](const auto &saved) { return saved.first == slot; }))
          originals.emplace_back(slot, std::move(slots[slot]));
        slots[slot] = std::move(replacements[i]);
      }
    }
    StepContext context(*this, step, slots);
    auto start = profile ? std::chrono::steady_clock::now()
                         : std::chrono::steady_clock::time_point();
    reference::KernelFunction replacement =
        rounded ? rounding->kernelFor(view) : reference::KernelFunction();
    Status status = replacement
                        ? reference::runKernelFunction(replacement, context)
                        : reference::runKernel(step.kernel, context);
    for (auto &[slot, original] : originals)
      slots[slot] = std::move(original);
    if (status.ok() && rounded) {
      std::vector<reference::Value *> outputs;
      for (int slot : step.outputSlots)
        outputs.push_back(slot < 0 ? nullptr : &slots[slot]);
      status = rounding->roundOutputs(view, outputs);
    }
    if (profile) {
      RunProfile::Entry &entry = profile->perOperator[step.profileName];
      entry.milliseconds += std::chrono::duration<double, std::milli>(
                                std::chrono::steady_clock::now() - start)
                                .count();
      ++entry.calls;
    }
    if (!status.ok())
      return Status::error(step.description + ": " + status.message());
    for (size_t i = 0; i < step.outputSlots.size(); ++i) {
      int slot = step.outputSlots[i];
      if (slot < 0)
        continue;
      const reference::Value &value = slots[slot];
      reference::DType expected = step.outputTypes[i];
      if (value.isTensor() && expected != reference::DType::Undefined &&
          value.tensor.dtype() != expected)
        return Status::error(
            step.description + ": output " + std::to_string(i) + " is " +
            reference::dtypeName(value.tensor.dtype()) + ", the model says " +
            reference::dtypeName(expected));
    }
    for (int slot : step.release)
      slots[slot] = reference::Value();
  }
  results.clear();
  for (int slot : graph.resultSlots)
    results.push_back(slots[slot]);
  return Status::success();
}

NodeRounding::~NodeRounding() = default;

OnnxProgram::OnnxProgram(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
OnnxProgram::~OnnxProgram() = default;

FailureOr<std::unique_ptr<OnnxProgram>>
OnnxProgram::prepare(func::FuncOp function,
                     std::vector<std::string> *unsupported,
                     const PrepareOptions &options) {
  auto impl = std::make_unique<Impl>();
  if (function.isExternal())
    return function.emitError("has no body to run");
  // The fusion is the passes' (passes/pfvm): a graph that has not been
  // through the pfvm phase gets their marks on a copy, so the caller's IR
  // is left as it was. Nothing prepared refers to the copy afterwards.
  OwningOpRef<func::FuncOp> marked;
  if (options.runFusionPasses &&
      (options.fuseActivations || options.concatInPlace)) {
    marked = function.clone();
    PassManager pm(function.getContext(), func::FuncOp::getOperationName());
    if (options.fuseActivations)
      pm.addPass(pfvm::createFuseActivations());
    if (options.concatInPlace)
      pm.addPass(pfvm::createConcatInPlace());
    if (mlir::failed(pm.run(*marked)))
      return failure();
    function = *marked;
  }
  impl->rounding = options.rounding;
  Preparer preparer(*impl, options, unsupported);
  auto graph = preparer.prepareBlock(function.front());
  if (mlir::failed(graph) || mlir::failed(preparer.failed()))
    return failure();
  for (auto [index, type] : llvm::enumerate(function.getArgumentTypes())) {
    auto name = function.getArgAttrOfType<StringAttr>(index, "onnx.name");
    impl->inputs.push_back(
        {name ? name.str() : "input_" + std::to_string(index), type});
  }
  for (auto [index, type] : llvm::enumerate(function.getResultTypes())) {
    auto name = function.getResultAttrOfType<StringAttr>(index, "onnx.name");
    impl->outputs.push_back(
        {name ? name.str() : "output_" + std::to_string(index), type});
  }
  return std::unique_ptr<OnnxProgram>(new OnnxProgram(std::move(impl)));
}

const std::vector<ProgramValueInfo> &OnnxProgram::inputs() const {
  return impl->inputs;
}
const std::vector<ProgramValueInfo> &OnnxProgram::outputs() const {
  return impl->outputs;
}

Status OnnxProgram::run(const std::vector<reference::Value> &inputs,
                        std::vector<reference::Value> &outputs,
                        RunProfile *profile) const {
  if (inputs.size() != impl->inputs.size())
    return Status::error("the model takes " +
                         std::to_string(impl->inputs.size()) + " inputs, " +
                         std::to_string(inputs.size()) + " were given");
  // Inputs must be what the graph declares: element type and static dims.
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto tensorType = llvm::dyn_cast<TensorType>(impl->inputs[i].type);
    if (!tensorType || !inputs[i].isTensor())
      continue;
    const reference::Tensor &tensor = inputs[i].tensor;
    reference::DType expected = referenceDTypeOf(tensorType.getElementType());
    if (tensor.dtype() != expected)
      return Status::error("input '" + impl->inputs[i].name + "' is " +
                           reference::dtypeName(tensor.dtype()) +
                           ", the model takes " +
                           reference::dtypeName(expected));
    if (auto ranked = llvm::dyn_cast<RankedTensorType>(tensorType)) {
      bool matches = ranked.getRank() == tensor.rank();
      for (int64_t d = 0; matches && d < ranked.getRank(); ++d)
        matches =
            ranked.isDynamicDim(d) || ranked.getDimSize(d) == tensor.shape()[d];
      if (!matches) {
        std::string wanted;
        for (int64_t d = 0; d < ranked.getRank(); ++d)
          wanted +=
              (d ? "x" : "") + (ranked.isDynamicDim(d)
                                    ? std::string("?")
                                    : std::to_string(ranked.getDimSize(d)));
        return Status::error("input '" + impl->inputs[i].name + "' has shape " +
                             reference::shapeToString(tensor.shape()) +
                             ", the model takes " + wanted);
      }
    }
  }
  std::vector<reference::Value> slots = impl->initialSlots;
  impl->profile = profile;
  Status status = impl->runGraph(*impl->graphs.front(), slots, inputs, outputs);
  impl->profile = nullptr;
  return status;
}
