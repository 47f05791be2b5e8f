//===- Summary.cpp - What an imported ONNX model holds --------------------===//

#include "mncc/onnx/Summary.h"

#include "mncc/dialects/onnx/OnnxOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mncc;

namespace {

/// Elements of a statically shaped tensor, or -1.
int64_t elementsOf(Type type) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return -1;
  return tensor.getNumElements();
}

int64_t elementBytes(Type element) {
  if (auto complex = llvm::dyn_cast<ComplexType>(element))
    return 2 * elementBytes(complex.getElementType());
  if (element.isIntOrFloat())
    return std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
  return 0;
}

ArrayRef<int64_t> shapeOf(Value value) {
  if (auto tensor = llvm::dyn_cast<RankedTensorType>(value.getType()))
    return tensor.getShape();
  return {};
}

// Operators that only move or describe data.
const llvm::StringSet<> kDataMovement = {
    "Cast",      "Concat",   "Constant",  "ConstantOfShape", "DepthToSpace",
    "Expand",    "Flatten",  "Gather",    "GatherElements",  "GatherND",
    "Identity",  "Pad",      "Reshape",   "Shape",           "Size",
    "Slice",     "SpaceToDepth", "Split", "Squeeze",         "Tile",
    "Transpose", "Unsqueeze", "Dropout", "Initializer",      "None",
    "Yield",     "ScatterND", "ScatterElements", "Range",     "EyeLike"};

} // namespace

int64_t mncc::nodeFlops(Operation *op, bool &estimated) {
  llvm::StringRef type = op->getName().stripDialect();
  estimated = false;
  if (kDataMovement.contains(type))
    return 0;
  if (op->getNumResults() == 0)
    return 0;
  int64_t out = elementsOf(op->getResult(0).getType());
  if (out < 0)
    return -1;
  auto product = [](ArrayRef<int64_t> dims) {
    int64_t result = 1;
    for (int64_t dim : dims)
      result *= dim;
    return result;
  };
  if (type == "Conv" && op->getNumOperands() >= 2) {
    ArrayRef<int64_t> weight = shapeOf(op->getOperand(1));
    if (weight.size() < 3 || ShapedType::isDynamicShape(weight))
      return -1;
    // Each output element: Cin/group * kernel multiply-adds, plus the bias.
    int64_t macs = out * product(weight.drop_front(1));
    return 2 * macs + (op->getNumOperands() > 2 ? out : 0);
  }
  if (type == "ConvTranspose" && op->getNumOperands() >= 2) {
    int64_t in = elementsOf(op->getOperand(0).getType());
    ArrayRef<int64_t> weight = shapeOf(op->getOperand(1));
    if (in < 0 || weight.size() < 3 || ShapedType::isDynamicShape(weight))
      return -1;
    // The weight is [Cin, Cout/group, kernel...]: each input element
    // feeds Cout/group * kernel multiply-adds.
    return 2 * in * product(weight.drop_front(1));
  }
  if (type == "MatMul" || type == "MatMulInteger") {
    ArrayRef<int64_t> a = shapeOf(op->getOperand(0));
    if (a.empty() || ShapedType::isDynamic(a.back()))
      return -1;
    return 2 * out * a.back();
  }
  if (type == "Gemm") {
    ArrayRef<int64_t> a = shapeOf(op->getOperand(0));
    if (a.size() != 2 || ShapedType::isDynamicShape(a))
      return -1;
    auto transA = op->getAttrOfType<IntegerAttr>("transA");
    int64_t k = transA && transA.getInt() ? a[0] : a[1];
    return 2 * out * k + (op->getNumOperands() > 2 ? out : 0);
  }
  if (type == "MaxPool" || type == "AveragePool" || type == "LpPool") {
    auto kernel = op->getAttrOfType<ArrayAttr>("kernel_shape");
    int64_t window = 1;
    if (kernel)
      for (Attribute dim : kernel)
        window *= llvm::cast<IntegerAttr>(dim).getInt();
    return out * window;
  }
  if (type.starts_with("Global") || type.starts_with("Reduce")) {
    int64_t in = elementsOf(op->getOperand(0).getType());
    return in < 0 ? -1 : in;
  }
  if (type == "BatchNormalization" || type == "InstanceNormalization" ||
      type == "LayerNormalization")
    return 2 * out;
  if (type == "Softmax" || type == "LogSoftmax")
    return 3 * out;
  static const llvm::StringSet<> kElementwise = {
      "Add", "Sub", "Mul", "Div", "Relu", "LeakyRelu", "Sigmoid", "Tanh",
      "Clip", "Max", "Min", "Sqrt", "Exp", "Log", "Abs", "Neg", "Pow",
      "HardSigmoid", "HardSwish", "Erf", "Sum", "Mean", "Where", "Equal",
      "Less", "Greater", "Not", "And", "Or", "Reciprocal", "Floor", "Ceil"};
  if (kElementwise.contains(type))
    return out;
  estimated = true;
  return out;
}

namespace {

std::string humanCount(double value, const char *unit) {
  const char *prefixes[] = {"", " K", " M", " G", " T", " P"};
  int index = 0;
  while (value >= 1000 && index < 5) {
    value /= 1000;
    ++index;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format(index ? "%.2f" : "%.0f", value) << prefixes[index]
     << unit;
  return os.str();
}

std::string humanBytes(int64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = bytes;
  int index = 0;
  while (value >= 1024 && index < 4) {
    value /= 1024;
    ++index;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format(index ? "%.1f %s" : "%.0f %s", value, units[index]);
  return os.str();
}

std::string withSeparators(int64_t value) {
  std::string digits = std::to_string(value);
  std::string text;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      text += ',';
    text += digits[i];
  }
  return text;
}

} // namespace

ModelSummary mncc::summarizeModel(ModuleOp module) {
  ModelSummary summary;
  module.walk([&](Operation *op) {
    if (op->getDialect() == nullptr ||
        op->getDialect()->getNamespace() != "onnx")
      return;
    if (auto initializer = llvm::dyn_cast<mncc::onnx::InitializerOp>(op)) {
      auto type = llvm::cast<ShapedType>(initializer.getValue().getType());
      summary.parameters += type.getNumElements();
      summary.parameterBytes +=
          type.getNumElements() * elementBytes(type.getElementType());
      return;
    }
    if (llvm::isa<mncc::onnx::NoneOp, mncc::onnx::YieldOp>(op))
      return;
    ++summary.nodes;
    if (auto custom = llvm::dyn_cast<mncc::onnx::CustomOp>(op)) {
      ++summary.operatorCounts[(custom.getDomain() + "." + custom.getOpType())
                                   .str()];
      ++summary.unknownNodes;
      return;
    }
    ++summary.operatorCounts[op->getName().stripDialect().str()];
    bool estimated = false;
    int64_t flops = nodeFlops(op, estimated);
    if (flops < 0) {
      ++summary.unknownNodes;
      return;
    }
    summary.flops += flops;
    summary.estimatedNodes += estimated;
  });
  return summary;
}

void mncc::printModelSummary(ModuleOp module, const ModelSummary &summary,
                             llvm::raw_ostream &os) {
  for (auto function : module.getOps<func::FuncOp>()) {
    os << "graph: " << function.getName();
    if (auto opsets = module->getAttrOfType<DictionaryAttr>("onnx.opset_import"))
      if (auto onnx = opsets.getAs<IntegerAttr>("ai.onnx"))
        os << " (opset " << onnx.getInt() << ")";
    os << "\n";
    auto printValues = [&](const char *what, TypeRange types, auto nameOf) {
      for (auto [index, type] : llvm::enumerate(types))
        os << "  " << what << " " << nameOf(index) << ": " << type << "\n";
    };
    printValues("input ", function.getArgumentTypes(), [&](unsigned index) {
      auto name = function.getArgAttrOfType<StringAttr>(index, "onnx.name");
      return name ? name.str() : std::to_string(index);
    });
    printValues("output", function.getResultTypes(), [&](unsigned index) {
      auto name = function.getResultAttrOfType<StringAttr>(index, "onnx.name");
      return name ? name.str() : std::to_string(index);
    });
  }
  os << "operators: " << summary.nodes << " nodes of "
     << summary.operatorCounts.size() << " types\n";
  std::vector<std::pair<std::string, int64_t>> counts(
      summary.operatorCounts.begin(), summary.operatorCounts.end());
  std::stable_sort(counts.begin(), counts.end(), [](auto &a, auto &b) {
    return a.second > b.second;
  });
  for (const auto &[name, count] : counts)
    os << llvm::format("  %-24s %6lld\n", name.c_str(), (long long)count);
  os << "parameters: " << withSeparators(summary.parameters) << " ("
     << humanBytes(summary.parameterBytes) << ")\n";
  os << "FLOPs per inference: " << humanCount(summary.flops, "FLOP")
     << " (a multiply-add counts 2";
  if (summary.estimatedNodes)
    os << "; " << summary.estimatedNodes
       << " nodes estimated at one per output element";
  if (summary.unknownNodes)
    os << "; " << summary.unknownNodes
       << " nodes not counted: unknown operator or dynamic shape";
  os << ")\n";
}
