//===- PlanLayouts.cpp - DRAM forms for every tensor (legacy planner) -----===//
//
// docs/codegen.md C2 and C4: a tensor's layout is the #mngraph.layout of
// its DRAM form, and the only free choice in a form is the DRAM order. The
// legacy planner walks the graph once in order: a kernel's preferred order
// decides its output, graph inputs and constants take the order their
// first consumer wants (the host rearranges them for free), element-wise
// operators pass their operands' order on, and a consumer that wants
// another order gets a layout_switch in front of it.
//
//===----------------------------------------------------------------------===//

#include "mncc/passes/graph/Passes.h"

#include "mncc/codegen/MLIRBridge.h"
#include "mncc/dialects/onnx/OnnxOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/MemoryBuffer.h"

#include <nlohmann/json.hpp>

#include <map>
#include <numeric>
#include <set>

namespace mncc::graph {
#define GEN_PASS_DEF_PLANLAYOUTS
#include "mncc/passes/graph/Passes.h.inc"
} // namespace mncc::graph

using namespace mlir;
using namespace mncc;
using namespace mncc::codegen;

namespace {

using Order = std::vector<unsigned>;

Order identityOrder(Type type) {
  Order order;
  if (auto tensor = llvm::dyn_cast<RankedTensorType>(type)) {
    order.resize(tensor.getRank());
    std::iota(order.begin(), order.end(), 0u);
  }
  return order;
}

/// Operators that work in whatever DRAM order their operands share, as
/// long as every operand has the result's shape.
bool isOrderAgnostic(StringRef opType) {
  static const std::set<std::string, std::less<>> agnostic = {
      "Abs",  "Add",     "Cast",     "Clip",      "Div",     "Elu",
      "Erf",  "Exp",     "HardSigmoid", "HardSwish", "Identity", "LeakyRelu",
      "Log",  "Max",     "Min",      "Mul",       "Neg",     "Pow",
      "Reciprocal", "Relu", "Selu", "Sigmoid",    "Softplus", "Sqrt",
      "Sub",  "Tanh",    "Gelu"};
  return agnostic.count(opType) != 0;
}

/// Operators that only rename the dimensions of their data (operand 0).
bool isReshapeLike(StringRef opType) {
  return opType == "Reshape" || opType == "Flatten" || opType == "Squeeze" ||
         opType == "Unsqueeze";
}

/// Whether `value` in `order` already holds the bytes of `result` in its
/// identity order, so that a reshape between them is an alias wherever the
/// producer put the data: [N, 1, 1, C] channels last is [N, C] row-major.
bool reshapeMovesNothing(Value value, const Order &order, Value result) {
  auto from = llvm::dyn_cast<RankedTensorType>(value.getType());
  auto to = llvm::dyn_cast<RankedTensorType>(result.getType());
  if (!from || !to)
    return false;
  std::vector<int64_t> fromOrder(order.begin(), order.end());
  std::optional<DramForm> a = formOf(from, fromOrder), b = formOf(to);
  return a && b && sameBytes(*a, *b);
}

/// A tensor of one element (Clip's bounds, an Add's scalar): every DRAM
/// order holds it alike, so it does not tie an element-wise operator to one.
/// Optional operands that are absent (onnx.None) count as scalars too.
bool isScalar(Value value) {
  auto shaped = llvm::dyn_cast<ShapedType>(value.getType());
  if (!shaped)
    return true;
  return shaped.hasStaticShape() && shaped.getNumElements() == 1;
}

bool isConstantLike(Value value) {
  return value.getDefiningOp() && constantValueOf(value);
}

/// One entry of a layout_spec file (MLSDK compile options, 4.2.2.9).
struct SpecEntry {
  size_t index;
  std::string trigger, opType, layoutText;
  std::vector<int64_t> shape;
  layout::Layout layout;
  bool used = false;
};

struct GemmSpecEntry {
  size_t index;
  std::string key;
  std::map<std::string, std::pair<std::string, layout::Layout>> fields;
  bool used = false;
};

class PlanLayoutsPass
    : public mncc::graph::impl::PlanLayoutsBase<PlanLayoutsPass> {
public:
  using PlanLayoutsBase::PlanLayoutsBase;

  void runOnOperation() override {
    if (failed(loadLayoutSpec()) || failed(loadGemmLayoutSpec()))
      return signalPassFailure();
    bool failedAny = false;
    getOperation().walk([&](func::FuncOp function) {
      if (failed(planFunction(function)))
        failedAny = true;
    });
    for (const SpecEntry &entry : specEntries)
      if (!entry.used && !allowUnusedLayoutSpec) {
        getOperation().emitError("layout_spec ")
            << layoutSpec << ": entry " << entry.index << " ("
            << entry.trigger << " " << entry.opType << ") matches no tensor "
            << "(set CODEGEN_ALLOW_UNUSED_LAYOUT_SPEC=1 to allow it)";
        failedAny = true;
      }
    for (const GemmSpecEntry &entry : gemmEntries)
      if (!entry.used && !allowUnusedLayoutSpec) {
        getOperation().emitError("gemm_layout_spec ")
            << gemmLayoutSpec << ": entry " << entry.index << " (key '"
            << entry.key << "') matches no GEMM node (set "
            << "CODEGEN_ALLOW_UNUSED_LAYOUT_SPEC=1 to allow it)";
        failedAny = true;
      }
    if (failedAny)
      signalPassFailure();
  }

private:
  LogicalResult readJson(StringRef path, StringRef what, nlohmann::json &out) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer)
      return getOperation().emitError(what)
             << " " << path << ": " << buffer.getError().message();
    out = nlohmann::json::parse((*buffer)->getBuffer().begin(),
                                (*buffer)->getBuffer().end(), nullptr, false);
    if (out.is_discarded())
      return getOperation().emitError(what) << " " << path
                                            << ": not valid JSON";
    if (!out.is_array())
      return getOperation().emitError(what)
             << " " << path << ": expected a list of entries";
    return success();
  }

  /// Parses `text` as a layout; the error names the file, entry and field.
  FailureOr<layout::Layout> parseField(StringRef what, StringRef file,
                                       size_t index, StringRef field,
                                       const std::string &text) {
    auto parsed = layout::parseLayout(text);
    if (!parsed)
      return getOperation().emitError(what)
             << " " << file << ": entry " << index << " field '" << field
             << "': " << parsed.error().str();
    return *parsed;
  }

  LogicalResult loadLayoutSpec() {
    if (layoutSpec.empty())
      return success();
    nlohmann::json json;
    if (failed(readJson(layoutSpec, "layout_spec", json)))
      return failure();
    for (size_t i = 0; i < json.size(); ++i) {
      const nlohmann::json &item = json[i];
      auto fail = [&](StringRef field, StringRef problem) {
        return getOperation().emitError("layout_spec ")
               << layoutSpec << ": entry " << i << " field '" << field
               << "': " << problem;
      };
      if (!item.is_object())
        return getOperation().emitError("layout_spec ")
               << layoutSpec << ": entry " << i << " is not an object";
      for (const char *field : {"trigger", "op_type", "layout"})
        if (!item.contains(field) || !item[field].is_string())
          return fail(field, "missing or not a string");
      if (!item.contains("shape") || !item["shape"].is_array())
        return fail("shape", "missing or not a list of integers");
      SpecEntry entry;
      entry.index = i;
      entry.trigger = item["trigger"].get<std::string>();
      if (entry.trigger != "SwitchInput" && entry.trigger != "FixOutput")
        return fail("trigger", "must be SwitchInput or FixOutput");
      entry.opType = item["op_type"].get<std::string>();
      for (const nlohmann::json &extent : item["shape"]) {
        if (!extent.is_number_integer())
          return fail("shape", "missing or not a list of integers");
        entry.shape.push_back(extent.get<int64_t>());
      }
      entry.layoutText = item["layout"].get<std::string>();
      FailureOr<layout::Layout> parsed =
          parseField("layout_spec", layoutSpec, i, "layout", entry.layoutText);
      if (failed(parsed))
        return failure();
      entry.layout = *parsed;
      specEntries.push_back(std::move(entry));
    }
    return success();
  }

  LogicalResult loadGemmLayoutSpec() {
    if (gemmLayoutSpec.empty())
      return success();
    nlohmann::json json;
    if (failed(readJson(gemmLayoutSpec, "gemm_layout_spec", json)))
      return failure();
    for (size_t i = 0; i < json.size(); ++i) {
      const nlohmann::json &item = json[i];
      if (!item.is_object() || !item.contains("key") || !item["key"].is_string())
        return getOperation().emitError("gemm_layout_spec ")
               << gemmLayoutSpec << ": entry " << i
               << " field 'key': missing or not a string";
      GemmSpecEntry entry;
      entry.index = i;
      entry.key = item["key"].get<std::string>();
      for (const char *field : {"A", "BT", "C"}) {
        if (!item.contains(field))
          continue;
        if (!item[field].is_string())
          return getOperation().emitError("gemm_layout_spec ")
                 << gemmLayoutSpec << ": entry " << i << " field '" << field
                 << "': not a string";
        std::string text = item[field].get<std::string>();
        FailureOr<layout::Layout> parsed =
            parseField("gemm_layout_spec", gemmLayoutSpec, i, field, text);
        if (failed(parsed))
          return failure();
        entry.fields[field] = {text, *parsed};
      }
      gemmEntries.push_back(std::move(entry));
    }
    return success();
  }

  /// The order a spec layout asks for a tensor, or failure with an error
  /// naming the entry and field.
  FailureOr<Order> orderFromSpec(Operation *op, StringRef file,
                                 StringRef what, size_t index, StringRef field,
                                 const layout::Layout &specLayout, Value value) {
    auto type = llvm::cast<RankedTensorType>(value.getType());
    if (!ignoreLayoutCheck) {
      std::optional<DramForm> form = formOf(type);
      if (!form)
        return op->emitError(what) << " " << file << ": entry " << index
                                   << " field '" << field
                                   << "': the tensor is not on the device";
      layout::ValidationOptions options;
      options.memory = layout::MemoryKind::DRAM;
      options.dtype = type.getElementType().isF16()   ? layout::DType::F16
                      : type.getElementType().isF64() ? layout::DType::F64
                                                      : layout::DType::F32;
      for (const layout::LayoutError &error :
           layout::validateLayout(specLayout, options))
        if (!llvm::StringRef(error.message).starts_with("cannot verify"))
          return op->emitError(what)
                 << " " << file << ": entry " << index << " field '" << field
                 << "': " << error.str();
    }
    std::string whyNot;
    std::optional<Order> order = canonicalOrderOf(
        specLayout, type.getShape(), type.getElementType(), whyNot);
    if (!order)
      return op->emitError(what) << " " << file << ": entry " << index
                                 << " field '" << field << "': " << whyNot;
    return *order;
  }

  /// A layout_spec entry for this tensor, applied: the order it asks for.
  FailureOr<std::optional<Order>> specOrder(Operation *op, StringRef trigger,
                                            StringRef opType, Value value) {
    auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
    if (!type)
      return std::optional<Order>();
    for (SpecEntry &entry : specEntries) {
      if (entry.trigger != trigger || entry.opType != opType ||
          llvm::ArrayRef<int64_t>(entry.shape) != type.getShape())
        continue;
      entry.used = true;
      FailureOr<Order> order =
          orderFromSpec(op, layoutSpec, "layout_spec", entry.index, "layout",
                        entry.layout, value);
      if (failed(order))
        return failure();
      return std::optional<Order>(*order);
    }
    return std::optional<Order>();
  }

  LogicalResult planFunction(func::FuncOp function) {
    Block &block = function.getBody().front();
    // The device runs static shapes only.
    for (BlockArgument argument : block.getArguments()) {
      auto type = llvm::dyn_cast<RankedTensorType>(argument.getType());
      if (type && type.hasStaticShape())
        continue;
      auto name = function.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                         "onnx.name");
      std::string inputName =
          name ? name.str() : "#" + std::to_string(argument.getArgNumber());
      if (!llvm::isa<TensorType>(argument.getType()))
        return function.emitError("input '")
               << inputName << "' is a " << argument.getType()
               << ", not a tensor: not supported on the device";
      std::string dims;
      if (type)
        for (int64_t extent : type.getShape())
          dims += (dims.empty() ? "" : ",") +
                  (ShapedType::isDynamic(extent) ? std::string("?")
                                                 : std::to_string(extent));
      return function.emitError("input '")
             << inputName << "' has a dynamic shape [" << dims
             << "]; the device needs static shapes: give --input-shape "
             << inputName << ":D0,D1,...";
    }
    ConstantCache constants;
    llvm::DenseMap<Value, Order> orders;
    std::map<std::pair<void *, Order>, Value> switches;
    OpBuilder builder(&getContext());
    bool failedAny = false;
    auto formFor = [&](Value value) -> std::optional<DramForm> {
      return formOf(llvm::dyn_cast<RankedTensorType>(value.getType()));
    };

    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (llvm::isa<func::ReturnOp, onnx::InitializerOp, onnx::NoneOp>(op) ||
          op.getName().getStringRef() == "onnx.Constant")
        continue;
      // A Cast of a constant or of a graph input, or one whose only use is
      // the graph's output, is done by the host when it stages the value.
      if (op.getName().getStringRef() == "onnx.Cast" &&
          (isConstantLike(op.getOperand(0)) ||
           llvm::isa<BlockArgument>(op.getOperand(0)) ||
           (op.getResult(0).hasOneUse() &&
            llvm::isa<func::ReturnOp>(*op.getResult(0).getUsers().begin()))))
        continue;
      if (op.getNumRegions() != 0) {
        op.emitError("node '") << nodeNameOf(&op) << "' ("
                               << onnxOpTypeOf(&op)
                               << "): operators with subgraphs are not "
                                  "supported on the device yet";
        failedAny = true;
        continue;
      }
      std::string opType = onnxOpTypeOf(&op);
      FailureOr<KernelRequest> request =
          requestForOnnxOp(&op, formFor, constants);
      if (failed(request)) {
        failedAny = true;
        continue;
      }
      // Without a kernel the node keeps the identity order; kernel
      // selection (mncc-select-kernels) reports it with every generator's
      // reason.
      std::string whyNot;
      const KernelGenerator *generator =
          findKernelGenerator(*request, whyNot);
      auto preferred = [&](size_t operand) {
        return generator ? generator->preferredOrder(*request, operand)
                         : Order();
      };
      std::vector<OpOperand *> inputs = onnxInputOperands(&op);
      size_t numInputs = inputs.size();
      bool agnostic = isOrderAgnostic(opType) && op.getNumResults() == 1;
      if (agnostic)
        for (Value operand : op.getOperands())
          if (operand.getType() != op.getResult(0).getType() &&
              !isScalar(operand) &&
              llvm::cast<ShapedType>(operand.getType()).getShape() !=
                  llvm::cast<ShapedType>(op.getResult(0).getType())
                      .getShape())
            agnostic = false;
      // The order an agnostic op works in: its first full-sized operand's,
      // if decided.
      std::optional<Order> shared;
      if (agnostic)
        for (Value operand : op.getOperands()) {
          bool scalarBeside = operand.getType() != op.getResult(0).getType() &&
                              isScalar(operand);
          if (scalarBeside || !orders.count(operand))
            continue;
          shared = orders[operand];
          break;
        }

      for (size_t i = 0; i < numInputs; ++i) {
        if (!inputs[i])
          continue;
        OpOperand &operand = *inputs[i];
        Value value = operand.get();
        if (!formFor(value))
          continue;
        Order want = preferred(i);
        bool sharesOrder = agnostic && shared &&
                           shared->size() ==
                               identityOrder(value.getType()).size();
        if (want.empty())
          want = sharesOrder ? *shared : identityOrder(value.getType());
        FailureOr<std::optional<Order>> fromSpec =
            specOrder(&op, "SwitchInput", opType, value);
        if (failed(fromSpec)) {
          failedAny = true;
          continue;
        }
        if (*fromSpec)
          want = **fromSpec;
        auto known = orders.find(value);
        if (known == orders.end()) {
          // Graph inputs and constants are laid out by the host as wanted.
          orders[value] = want;
          continue;
        }
        if (known->second == want)
          continue;
        if (!*fromSpec && i == 0 && isReshapeLike(opType) &&
            op.getNumResults() == 1 &&
            reshapeMovesNothing(value, known->second, op.getResult(0)))
          continue;
        auto key = std::make_pair(value.getAsOpaquePointer(), want);
        Value &moved = switches[key];
        if (!moved) {
          OpBuilder::InsertionGuard guard(builder);
          if (Operation *producer = value.getDefiningOp())
            builder.setInsertionPointAfter(producer);
          else
            builder.setInsertionPointToStart(&block);
          moved = builder.create<graph::LayoutSwitchOp>(
              op.getLoc(), value.getType(), value);
          orders[moved] = want;
        }
        operand.set(moved);
      }
      for (Value result : op.getResults()) {
        if (!formFor(result))
          continue;
        Order order = preferred(
            numInputs + llvm::cast<OpResult>(result).getResultNumber());
        if (order.empty())
          order = agnostic && shared ? *shared : identityOrder(result.getType());
        FailureOr<std::optional<Order>> fromSpec =
            specOrder(&op, "FixOutput", opType, result);
        if (failed(fromSpec)) {
          failedAny = true;
          continue;
        }
        if (*fromSpec)
          order = **fromSpec;
        orders[result] = order;
      }
      if (failed(applyGemmSpec(op, opType, orders)))
        failedAny = true;
    }
    if (failedAny)
      return failure();
    retype(function, orders);
    return success();
  }

  LogicalResult applyGemmSpec(Operation &op, StringRef opType,
                              llvm::DenseMap<Value, Order> &orders) {
    if (opType != "Gemm" && opType != "MatMul")
      return success();
    std::string node = nodeNameOf(&op);
    for (GemmSpecEntry &entry : gemmEntries) {
      if (entry.key != node)
        continue;
      entry.used = true;
      for (auto &[field, spec] : entry.fields) {
        Value value = field == "A"    ? op.getOperand(0)
                      : field == "BT" ? op.getOperand(1)
                                      : op.getResult(0);
        if (field == "BT") {
          // The kernel keeps B in its own arrangement; the entry must at
          // least describe B's tensor.
          auto type = llvm::cast<RankedTensorType>(value.getType());
          llvm::SmallVector<int64_t> transposed(type.getShape().rbegin(),
                                                type.getShape().rend());
          if (spec.second.rank() != transposed.size())
            return op.emitError("gemm_layout_spec ")
                   << gemmLayoutSpec << ": entry " << entry.index
                   << " field 'BT': the layout has " << spec.second.rank()
                   << " dimensions, B^T " << transposed.size();
          continue;
        }
        FailureOr<Order> order =
            orderFromSpec(&op, gemmLayoutSpec, "gemm_layout_spec",
                          entry.index, field, spec.second, value);
        if (failed(order))
          return failure();
        if (field == "C")
          orders[value] = *order;
        else if (orders[value] != *order)
          return op.emitError("gemm_layout_spec ")
                 << gemmLayoutSpec << ": entry " << entry.index
                 << " field 'A': the producer of A already placed it in "
                 << "another DRAM order";
      }
    }
    return success();
  }

  /// Gives every device tensor the #mngraph.layout of its form.
  void retype(func::FuncOp function, const llvm::DenseMap<Value, Order> &orders) {
    auto typed = [&](Value value) -> Type {
      auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
      if (!type)
        return value.getType();
      auto found = orders.find(value);
      Order order = found != orders.end() ? found->second
                                          : identityOrder(type);
      std::vector<int64_t> order64(order.begin(), order.end());
      std::optional<DramForm> form = formOf(type, order64);
      if (!form)
        return type;
      return withLayout(type, *form);
    };
    Block &block = function.getBody().front();
    for (BlockArgument argument : block.getArguments())
      argument.setType(typed(argument));
    OpBuilder builder(&getContext());
    function.walk([&](Operation *op) {
      // A constant's type is its value's: it is placed by a layout_switch
      // the host does when it stages the constant.
      bool constant = llvm::isa<onnx::InitializerOp>(op) ||
                      op->getName().getStringRef() == "onnx.Constant";
      for (Value result : op->getResults()) {
        Type placed = typed(result);
        if (!constant || placed == result.getType() || result.use_empty()) {
          if (!constant)
            result.setType(placed);
          continue;
        }
        builder.setInsertionPointAfter(op);
        auto placement = builder.create<graph::LayoutSwitchOp>(op->getLoc(),
                                                               placed, result);
        result.replaceAllUsesExcept(placement, placement);
      }
    });
    auto returnOp = llvm::cast<func::ReturnOp>(block.getTerminator());
    function.setType(FunctionType::get(&getContext(),
                                       block.getArgumentTypes(),
                                       returnOp.getOperandTypes()));
  }

  std::vector<SpecEntry> specEntries;
  std::vector<GemmSpecEntry> gemmEntries;
};

} // namespace
