//===- OnnxInterpreter.cpp - pfvm:cpu over the onnx dialect ---------------===//

#include "mncc/interpreter/OnnxInterpreter.h"

#include "mncc/dialects/onnx/OnnxOps.h"
#include "mncc/onnx/TensorIo.h"
#include "mncc/reference/Broadcast.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;
using namespace mncc;
using KernelAttribute = reference::Attribute;
using reference::KernelContext;
using reference::KernelFn;
using reference::Status;

namespace {

struct Graph;

/// One node, ready to run: its kernel, where its inputs and outputs live in
/// the slot table, and its attributes in kernel form.
struct Step {
  std::string opType;
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
};

struct Graph {
  std::vector<int> argumentSlots;
  std::vector<Step> steps;
  std::vector<int> resultSlots;
};

} // namespace

struct OnnxProgram::Impl {
  std::vector<std::unique_ptr<Graph>> graphs; // graphs[0] is the model
  std::vector<reference::Value> initialSlots;  // initializers filled in
  std::vector<ProgramValueInfo> inputs, outputs;

  Status runGraph(const Graph &graph, std::vector<reference::Value> &slots,
                  const std::vector<reference::Value> &arguments,
                  std::vector<reference::Value> &results) const;
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

private:
  const OnnxProgram::Impl &program;
  const Step &step;
  std::vector<reference::Value> &slots;
};

/// Builds Graphs from regions, numbering every SSA value with a slot.
class Preparer {
public:
  Preparer(OnnxProgram::Impl &program, std::vector<std::string> *unsupported)
      : program(program), unsupported(unsupported) {}

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

  OnnxProgram::Impl &program;
  std::vector<std::string> *unsupported;
  llvm::DenseMap<Value, int> slots;
  uint64_t nextSeed = 0x9e3779b97f4a7c15ull;
  bool anyFailure = false;
};

std::string describe(Operation *op, StringRef opType) {
  std::string text = "node ";
  Location loc = op->getLoc();
  if (auto named = llvm::dyn_cast<NameLoc>(loc))
    text += "'" + named.getName().str() + "' ";
  return text + "(" + opType.str() + ")";
}

reference::DType elementTypeOf(Type type) {
  if (auto tensor = llvm::dyn_cast<TensorType>(type))
    return referenceDTypeOf(tensor.getElementType());
  if (auto seq = llvm::dyn_cast<onnx::SeqType>(type))
    return elementTypeOf(seq.getElementType());
  if (auto opt = llvm::dyn_cast<onnx::OptType>(type))
    return elementTypeOf(opt.getElementType());
  return reference::DType::Undefined;
}

} // namespace

FailureOr<KernelAttribute> Preparer::convertAttribute(Operation *op, StringRef name,
                                                mlir::Attribute value) {
  KernelAttribute result;
  if (auto integer = llvm::dyn_cast<IntegerAttr>(value)) {
    result.kind = KernelAttribute::Kind::Int;
    result.i = integer.getValue().getSExtValue();
  } else if (auto floating = llvm::dyn_cast<FloatAttr>(value)) {
    result.kind = KernelAttribute::Kind::Float;
    result.f = static_cast<float>(floating.getValueAsDouble());
  } else if (auto text = llvm::dyn_cast<StringAttr>(value)) {
    result.kind = KernelAttribute::Kind::String;
    result.s = text.str();
  } else if (auto type = llvm::dyn_cast<TypeAttr>(value)) {
    result.kind = KernelAttribute::Kind::TypeProto;
    result.elementType = elementTypeOf(type.getValue());
  } else if (auto elements = llvm::dyn_cast<ElementsAttr>(value)) {
    auto tensor = tensorFromAttribute(elements);
    if (!tensor)
      return op->emitError("attribute '")
             << name << "': " << llvm::toString(tensor.takeError());
    result.kind = KernelAttribute::Kind::Tensor;
    result.t = std::move(*tensor);
  } else if (auto ints = llvm::dyn_cast<DenseI64ArrayAttr>(value)) {
    result.kind = KernelAttribute::Kind::Ints;
    result.ints.assign(ints.asArrayRef().begin(), ints.asArrayRef().end());
  } else if (auto floats = llvm::dyn_cast<DenseF32ArrayAttr>(value)) {
    result.kind = KernelAttribute::Kind::Floats;
    result.floats.assign(floats.asArrayRef().begin(),
                         floats.asArrayRef().end());
  } else if (auto array = llvm::dyn_cast<ArrayAttr>(value)) {
    // An empty list could be of any kind; kernels read it with the
    // accessor of the kind they expect, so it is offered as every kind.
    result.kind = KernelAttribute::Kind::Ints;
    for (mlir::Attribute element : array) {
      if (auto integer = llvm::dyn_cast<IntegerAttr>(element)) {
        result.kind = KernelAttribute::Kind::Ints;
        result.ints.push_back(integer.getValue().getSExtValue());
      } else if (auto floating = llvm::dyn_cast<FloatAttr>(element)) {
        result.kind = KernelAttribute::Kind::Floats;
        result.floats.push_back(floating.getValueAsDouble());
      } else if (auto text = llvm::dyn_cast<StringAttr>(element)) {
        result.kind = KernelAttribute::Kind::Strings;
        result.strings.push_back(text.str());
      } else if (auto elements = llvm::dyn_cast<ElementsAttr>(element)) {
        auto tensor = tensorFromAttribute(elements);
        if (!tensor)
          return op->emitError("attribute '")
                 << name << "': " << llvm::toString(tensor.takeError());
        result.kind = KernelAttribute::Kind::Tensors;
        result.tensors.push_back(std::move(*tensor));
      } else {
        return op->emitError("attribute '")
               << name << "' holds a value pfvm:cpu cannot pass on";
      }
    }
  } else {
    return op->emitError("attribute '")
           << name << "' has a kind pfvm:cpu cannot pass on";
  }
  return result;
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
      if (name == "operandSegmentSizes" || name == "resultSegmentSizes")
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
  step.kernel = reference::lookupKernel(domain, step.opType);
  step.seed = nextSeed = nextSeed * 6364136223846793005ull + 1442695040888963407ull;
  if (!step.kernel) {
    std::string name =
        domain.empty() ? step.opType : domain.str() + "." + step.opType;
    if (unsupported)
      unsupported->push_back(name);
    op->emitError("pfvm:cpu has no kernel for ") << name;
    anyFailure = true;
  }

  // Inputs at their ONNX positions; an omitted optional input is -1.
  auto slotOrOmitted = [&](Value value) {
    return value.getDefiningOp<onnx::NoneOp>() ? -1 : slotOf(value);
  };
  if (inputSegments.empty()) {
    for (Value operand : op->getOperands())
      step.inputSlots.push_back(slotOrOmitted(operand));
  } else {
    unsigned next = 0;
    for (int32_t size : inputSegments) {
      if (size == 0)
        step.inputSlots.push_back(-1);
      for (int32_t i = 0; i < size; ++i)
        step.inputSlots.push_back(slotOrOmitted(op->getOperand(next++)));
    }
  }
  auto addOutput = [&](Value result) {
    step.outputSlots.push_back(slotOf(result));
    step.outputTypes.push_back(elementTypeOf(result.getType()));
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
    std::string name = index < graphNames.size() ? graphNames[index]
                                                 : "graph" + std::to_string(index);
    step.graphs.emplace_back(name, *subgraph);
    KernelAttribute graphAttribute;
    graphAttribute.kind = KernelAttribute::Kind::Graph;
    step.attributes[name] = graphAttribute;
  }
  graph.steps.push_back(std::move(step));
  return success();
}

FailureOr<Graph *> Preparer::prepareBlock(Block &block) {
  program.graphs.push_back(std::make_unique<Graph>());
  Graph *graph = program.graphs.back().get();
  for (BlockArgument argument : block.getArguments())
    graph->argumentSlots.push_back(slotOf(argument));
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      for (Value operand : op.getOperands())
        graph->resultSlots.push_back(slotOf(operand));
      continue;
    }
    if (mlir::failed(prepareOp(&op, *graph)))
      return failure();
  }
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
  for (auto [slot, index] : lastUse)
    if (!kept.contains(slot) && index < graph->steps.size())
      graph->steps[index].release.push_back(slot);
  for (Step &step : graph->steps)
    llvm::sort(step.release);
  return graph;
}

Status OnnxProgram::Impl::runGraph(
    const Graph &graph, std::vector<reference::Value> &slots,
    const std::vector<reference::Value> &arguments,
    std::vector<reference::Value> &results) const {
  if (arguments.size() != graph.argumentSlots.size())
    return Status::error("the graph takes " +
                         std::to_string(graph.argumentSlots.size()) +
                         " inputs, " + std::to_string(arguments.size()) +
                         " were given");
  for (size_t i = 0; i < arguments.size(); ++i)
    slots[graph.argumentSlots[i]] = arguments[i];
  for (const Step &step : graph.steps) {
    StepContext context(*this, step, slots);
    Status status = step.kernel(context);
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
        return Status::error(step.description + ": output " +
                             std::to_string(i) + " is " +
                             reference::dtypeName(value.tensor.dtype()) +
                             ", the model says " +
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

OnnxProgram::OnnxProgram(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
OnnxProgram::~OnnxProgram() = default;

FailureOr<std::unique_ptr<OnnxProgram>>
OnnxProgram::prepare(func::FuncOp function,
                     std::vector<std::string> *unsupported) {
  auto impl = std::make_unique<Impl>();
  if (function.isExternal())
    return function.emitError("has no body to run");
  Preparer preparer(*impl, unsupported);
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
                        std::vector<reference::Value> &outputs) const {
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
        matches = ranked.isDynamicDim(d) ||
                  ranked.getDimSize(d) == tensor.shape()[d];
      if (!matches) {
        std::string wanted;
        for (int64_t d = 0; d < ranked.getRank(); ++d)
          wanted += (d ? "x" : "") +
                    (ranked.isDynamicDim(d)
                         ? std::string("?")
                         : std::to_string(ranked.getDimSize(d)));
        return Status::error("input '" + impl->inputs[i].name +
                             "' has shape " +
                             reference::shapeToString(tensor.shape()) +
                             ", the model takes " + wanted);
      }
    }
  }
  std::vector<reference::Value> slots = impl->initialSlots;
  return impl->runGraph(*impl->graphs.front(), slots, inputs, outputs);
}
