//===- LowerToL3.cpp - The planned graph as kernels over buffers ----------===//

#include "mncc/passes/l3/Passes.h"

#include "mncc/codegen/MLIRBridge.h"
#include "mncc/dialects/onnx/OnnxOps.h"
#include "mncc/onnx/Summary.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"

#include <numeric>

namespace mncc::l3 {
#define GEN_PASS_DEF_LOWERTOL3
#include "mncc/passes/l3/Passes.h.inc"
} // namespace mncc::l3

using namespace mlir;
using namespace mncc;
using namespace mncc::codegen;

namespace {

bool isAliasCandidate(StringRef opType) {
  return opType == "Reshape" || opType == "Flatten" || opType == "Squeeze" ||
         opType == "Unsqueeze" || opType == "Identity";
}

bool isHostCast(Operation *op) {
  return op && op->getName().getStringRef() == "onnx.Cast";
}

/// A Cast or a layout_switch the host does when it stages the value.
bool isHostConversion(Operation *op) {
  return isHostCast(op) || llvm::isa_and_nonnull<graph::LayoutSwitchOp>(op);
}

/// The DRAM order of a type placed by mncc-plan-layouts.
FailureOr<std::vector<int64_t>> orderOfType(Type type, Operation *at) {
  auto tensor = llvm::cast<RankedTensorType>(type);
  graph::LayoutAttr layoutAttr = graph::getLayout(type);
  std::vector<int64_t> identity(tensor.getRank());
  std::iota(identity.begin(), identity.end(), 0);
  if (!layoutAttr)
    return identity;
  std::string whyNot;
  std::optional<std::vector<unsigned>> order = canonicalOrderOf(
      layoutAttr.getLayout(), tensor.getShape(), tensor.getElementType(),
      whyNot);
  if (!order)
    return at->emitError("tensor ") << type << " is not in a DRAM form of "
                                    << "the code generator: " << whyNot;
  return std::vector<int64_t>(order->begin(), order->end());
}

std::string symbolSafe(StringRef name) {
  std::string result;
  for (char c : name)
    result += llvm::isAlnum(c) || c == '_' ? c : '_';
  return result.empty() ? "v" : result;
}

class LowerToL3Pass : public mncc::l3::impl::LowerToL3Base<LowerToL3Pass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    if (functions.empty())
      return;
    if (functions.size() != 1) {
      module.emitError("the code generator compiles one graph, found ")
          << functions.size() << " functions";
      return signalPassFailure();
    }
    if (failed(lower(functions.front())))
      return signalPassFailure();
    functions.front().erase();
  }

private:
  LogicalResult lower(func::FuncOp function);

  /// A new buffer for a tensor of `type`.
  FailureOr<l3::BufferOp> makeBuffer(Type type, StringRef kind,
                                     StringRef hint, Operation *at) {
    auto tensor = llvm::dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return at->emitError("tensor ") << type << " has no static shape";
    FailureOr<std::vector<int64_t>> order = orderOfType(type, at);
    if (failed(order))
      return failure();
    std::optional<DramForm> form = formOf(tensor, *order);
    int64_t longWords = form ? form->groupLongWords() : kMvUnitLongWords;
    unsigned groups = form ? form->groups : 1;
    std::string name = symbolSafe(hint);
    std::string unique = name;
    for (unsigned n = 1; symbols->lookup(unique); ++n)
      unique = name + "_" + std::to_string(n);
    auto buffer = builder->create<l3::BufferOp>(
        at->getLoc(), builder->getStringAttr(unique), TypeAttr::get(type),
        builder->getStringAttr(kind),
        builder->getDenseI64ArrayAttr(*order),
        builder->getI64IntegerAttr(groups),
        builder->getI64IntegerAttr(longWords), IntegerAttr(), StringAttr(),
        IntegerAttr(), TypeAttr(), ElementsAttr(), StringAttr(),
        FlatSymbolRefAttr());
    symbols->insert(buffer);
    return buffer;
  }

  FlatSymbolRefAttr refTo(l3::BufferOp buffer) {
    return FlatSymbolRefAttr::get(buffer.getSymNameAttr());
  }

  /// The buffer holding an SSA value, creating constants on first use.
  FailureOr<l3::BufferOp> bufferOf(Value value, Operation *user) {
    auto found = buffers.find(value);
    if (found != buffers.end())
      return found->second;
    if (ElementsAttr constant = constantValueOf(value)) {
      Operation *producer = value.getDefiningOp();
      std::string hint = "const";
      Operation *root = producer;
      while (isHostConversion(root))
        root = root->getOperand(0).getDefiningOp();
      if (auto initializer = llvm::dyn_cast_or_null<onnx::InitializerOp>(root))
        hint = initializer.getName().str();
      FailureOr<l3::BufferOp> buffer =
          makeBuffer(value.getType(), "constant", hint, producer);
      if (failed(buffer))
        return failure();
      buffer->setValueAttr(constant);
      buffer->setNameAttr(builder->getStringAttr(hint));
      buffers[value] = *buffer;
      return *buffer;
    }
    return user->emitError("operand has no buffer (produced by ")
           << (value.getDefiningOp() ? value.getDefiningOp()->getName()
                                           .getStringRef()
                                     : StringRef("a block argument"))
           << ")";
  }

  /// The onnx attributes of an op, without the planner's (a node of
  /// another domain: its ONNX attributes).
  DictionaryAttr onnxAttributesOf(Operation *op) {
    if (auto custom = llvm::dyn_cast<onnx::CustomOp>(op))
      return custom.getOnnxAttributes();
    SmallVector<NamedAttribute> kept;
    for (NamedAttribute attribute : op->getAttrs())
      if (!attribute.getName().strref().starts_with("mngraph."))
        kept.push_back(attribute);
    return builder->getDictionaryAttr(kept);
  }

  l3::KernelOp makeKernel(Location loc, StringRef opType, StringRef node,
                          ArrayRef<Attribute> inputs,
                          ArrayRef<Attribute> outputs, DictionaryAttr onnx) {
    OpBuilder::InsertionGuard guard(*builder);
    builder->setInsertionPointToEnd(&schedule.getBody().front());
    return builder->create<l3::KernelOp>(
        loc, opType, node, builder->getArrayAttr(inputs),
        builder->getArrayAttr(outputs), onnx, StringAttr(), StringAttr(),
        DictionaryAttr(), StringAttr(), StringAttr(), DenseF32ArrayAttr());
  }

  std::optional<OpBuilder> builder;
  std::optional<SymbolTable> symbols;
  l3::ScheduleOp schedule;
  llvm::DenseMap<Value, l3::BufferOp> buffers;
};

LogicalResult LowerToL3Pass::lower(func::FuncOp function) {
  ModuleOp module = getOperation();
  builder.emplace(module.getBodyRegion());
  builder->setInsertionPointToEnd(module.getBody());
  symbols.emplace(module);
  schedule = builder->create<l3::ScheduleOp>(function.getLoc());
  schedule.getBody().emplaceBlock();
  builder->setInsertionPoint(schedule);
  Block &block = function.getBody().front();

  // Graph inputs; a Cast right after one is the host's conversion.
  for (BlockArgument argument : block.getArguments()) {
    unsigned index = argument.getArgNumber();
    auto name = function.getArgAttrOfType<StringAttr>(index, "onnx.name");
    std::string inputName = name ? name.str() : "input" + std::to_string(index);
    Type deviceType = argument.getType();
    SmallVector<Operation *> hostCasts;
    for (Operation *user : argument.getUsers())
      if (isHostCast(user))
        hostCasts.push_back(user);
    bool converted = !hostCasts.empty() &&
                     llvm::all_of(hostCasts, [&](Operation *cast) {
                       return cast->getResult(0).getType() ==
                              hostCasts.front()->getResult(0).getType();
                     }) &&
                     hostCasts.size() ==
                         size_t(std::distance(argument.getUses().begin(),
                                              argument.getUses().end()));
    if (converted)
      deviceType = hostCasts.front()->getResult(0).getType();
    FailureOr<l3::BufferOp> buffer =
        makeBuffer(deviceType, "input", "in_" + inputName, function);
    if (failed(buffer))
      return failure();
    buffer->setNameAttr(builder->getStringAttr(inputName));
    buffer->setIndexAttr(builder->getI64IntegerAttr(index));
    buffer->setHostTypeAttr(TypeAttr::get(
        llvm::cast<ShapedType>(argument.getType()).getElementType()));
    buffers[argument] = *buffer;
    if (converted)
      for (Operation *cast : hostCasts)
        buffers[cast->getResult(0)] = *buffer;
  }

  unsigned counter = 0;
  for (Operation &op : block) {
    if (llvm::isa<func::ReturnOp, onnx::InitializerOp, onnx::NoneOp>(op) ||
        op.getName().getStringRef() == "onnx.Constant")
      continue;
    if (buffers.count(op.getResult(0)))
      continue; // a host Cast of an input
    if (isHostConversion(&op) && constantValueOf(op.getResult(0)))
      continue; // a Cast or placement of a constant: staged converted
    if (isHostCast(&op) && op.getResult(0).hasOneUse() &&
        llvm::isa<func::ReturnOp>(*op.getResult(0).getUsers().begin()))
      continue; // a Cast into a graph output: read back converted
    std::string node = nodeNameOf(&op);
    std::string opType = onnxOpTypeOf(&op);
    auto inputRef = [&](OpOperand *operand) -> FailureOr<Attribute> {
      if (!operand)
        return Attribute(FlatSymbolRefAttr::get(&getContext(), l3::kNoneBuffer));
      FailureOr<l3::BufferOp> buffer = bufferOf(operand->get(), &op);
      if (failed(buffer))
        return failure();
      return Attribute(refTo(*buffer));
    };

    if (auto layoutSwitch = llvm::dyn_cast<graph::LayoutSwitchOp>(op)) {
      FailureOr<l3::BufferOp> from = bufferOf(layoutSwitch.getInput(), &op);
      FailureOr<l3::BufferOp> to = makeBuffer(
          layoutSwitch.getType(), "temporary", "t" + std::to_string(counter++),
          &op);
      if (failed(from) || failed(to))
        return failure();
      buffers[layoutSwitch.getResult()] = *to;
      auto rank = llvm::cast<RankedTensorType>(layoutSwitch.getType()).getRank();
      SmallVector<int64_t> identity(rank);
      std::iota(identity.begin(), identity.end(), 0);
      NamedAttribute perm(builder->getStringAttr("perm"),
                          builder->getI64ArrayAttr(identity));
      makeKernel(op.getLoc(), "Transpose", node, {refTo(*from)}, {refTo(*to)},
                 builder->getDictionaryAttr({perm}));
      continue;
    }

    std::vector<OpOperand *> inputs = onnxInputOperands(&op);
    if (isAliasCandidate(opType) && !inputs.empty() && inputs[0] &&
        op.getNumResults() == 1) {
      FailureOr<l3::BufferOp> source = bufferOf(inputs[0]->get(), &op);
      if (failed(source))
        return failure();
      auto resultType = llvm::cast<RankedTensorType>(op.getResult(0).getType());
      FailureOr<std::vector<int64_t>> order =
          orderOfType(resultType, &op);
      if (failed(order))
        return failure();
      std::optional<DramForm> resultForm = formOf(resultType, *order);
      DramForm sourceForm = formOfBuffer(*source);
      sourceForm.base = 0;
      if (resultForm && sameBytes(sourceForm, *resultForm)) {
        FailureOr<l3::BufferOp> alias =
            makeBuffer(resultType, "temporary", "t" + std::to_string(counter++),
                       &op);
        if (failed(alias))
          return failure();
        l3::BufferOp root = *source;
        if (auto target = root.getAliasAttr())
          root = symbols->lookup<l3::BufferOp>(target.getValue());
        alias->setAliasAttr(refTo(root));
        buffers[op.getResult(0)] = *alias;
        continue;
      }
    }

    SmallVector<Attribute> inputRefs, outputRefs;
    for (OpOperand *operand : inputs) {
      FailureOr<Attribute> ref = inputRef(operand);
      if (failed(ref))
        return failure();
      inputRefs.push_back(*ref);
    }
    for (Value result : op.getResults()) {
      FailureOr<l3::BufferOp> buffer = makeBuffer(
          result.getType(), "temporary", "t" + std::to_string(counter++), &op);
      if (failed(buffer))
        return failure();
      buffers[result] = *buffer;
      outputRefs.push_back(refTo(*buffer));
    }
    l3::KernelOp kernel = makeKernel(op.getLoc(), opType, node, inputRefs,
                                     outputRefs, onnxAttributesOf(&op));
    if (auto custom = llvm::dyn_cast<onnx::CustomOp>(op))
      kernel->setAttr("domain", custom.getDomainAttr());
    bool estimated = false;
    int64_t flops = nodeFlops(&op, estimated);
    if (flops > 0)
      kernel->setAttr("flops", builder->getI64IntegerAttr(flops));
  }

  // Graph outputs; a Cast right before one is the host's conversion.
  auto returnOp = llvm::cast<func::ReturnOp>(block.getTerminator());
  for (auto [index, operand] : llvm::enumerate(returnOp.getOperands())) {
    auto name = function.getResultAttrOfType<StringAttr>(index, "onnx.name");
    std::string outputName =
        name ? name.str() : "output" + std::to_string(index);
    Value value = operand;
    Operation *producer = value.getDefiningOp();
    if (isHostCast(producer) && value.hasOneUse() &&
        !constantValueOf(value))
      value = producer->getOperand(0);
    FailureOr<l3::BufferOp> source = bufferOf(value, returnOp);
    if (failed(source))
      return failure();
    Type hostElement = llvm::cast<ShapedType>(operand.getType()).getElementType();
    l3::BufferOp output = *source;
    bool usable = source->getKind() == "temporary" && !source->getAlias();
    // A kernel that wrote the value is the only writer: it can write the
    // output itself. Anything else (an input, a constant, an alias, a value
    // returned twice) is copied.
    if (usable) {
      output.setKindAttr(builder->getStringAttr("output"));
    } else {
      FailureOr<l3::BufferOp> copy = makeBuffer(
          source->getType(), "output", "out_" + outputName, returnOp);
      if (failed(copy))
        return failure();
      makeKernel(returnOp.getLoc(), "Identity", "copy_" + outputName,
                 {refTo(*source)}, {refTo(*copy)},
                 builder->getDictionaryAttr({}));
      output = *copy;
    }
    output.setNameAttr(builder->getStringAttr(outputName));
    output.setIndexAttr(builder->getI64IntegerAttr(index));
    output.setHostTypeAttr(TypeAttr::get(hostElement));
  }
  return success();
}

} // namespace
