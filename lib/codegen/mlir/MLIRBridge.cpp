//===- MLIRBridge.cpp - The code generator seen from MLIR -----------------===//

#include "mncc/codegen/MLIRBridge.h"

#include "mncc/dialects/onnx/OnnxOps.h"
#include "mncc/interpreter/KernelAttributes.h"
#include "mncc/onnx/TensorIo.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace mncc;
using namespace mncc::codegen;

std::optional<DeviceType> codegen::deviceTypeOf(Type elementType) {
  if (elementType.isF16())
    return DeviceType::Half;
  if (elementType.isF32())
    return DeviceType::Single;
  if (elementType.isF64())
    return DeviceType::Double;
  // 64-bit integers (ONNX's shapes, indices and axes) are held in 32 bits
  // on the device; constants that do not fit are refused when staged.
  if (auto integer = llvm::dyn_cast<IntegerType>(elementType))
    if (integer.getWidth() <= 64)
      return DeviceType::Int32;
  return std::nullopt;
}

Type codegen::elementTypeOf(DeviceType type, MLIRContext *context) {
  Builder builder(context);
  switch (type) {
  case DeviceType::Half:
    return builder.getF16Type();
  case DeviceType::Single:
    return builder.getF32Type();
  case DeviceType::Double:
    return builder.getF64Type();
  case DeviceType::Int32:
    return builder.getI32Type();
  }
  return builder.getF32Type();
}

std::optional<DramForm> codegen::formOf(RankedTensorType type,
                                        ArrayRef<int64_t> order) {
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  std::optional<DeviceType> device = deviceTypeOf(type.getElementType());
  if (!device)
    return std::nullopt;
  std::vector<unsigned> dims(order.begin(), order.end());
  return DramForm::canonical(*device,
                             std::vector<int64_t>(type.getShape().begin(),
                                                  type.getShape().end()),
                             dims);
}

layout::Layout codegen::layoutOf(const DramForm &form) {
  using layout::Axis;
  using layout::Mode;
  layout::Layout result;
  size_t rank = form.shape.size();
  result.dims.resize(rank);
  result.shape = form.shape;
  if (rank == 0)
    return result;
  std::vector<int64_t> dramShape = form.dramShape();
  // Long words between consecutive indices of each DRAM dimension.
  std::vector<int64_t> stride(rank, 0);
  int64_t running = form.rowLongWords();
  for (size_t k = rank - 1; k-- > 0;) {
    stride[k] = running;
    running *= dramShape[k];
  }
  int64_t perLongWord = elementsPerLongWord(form.type);
  for (size_t k = 0; k < rank; ++k) {
    std::vector<Mode> &modes = result.dims[form.order[k]];
    if (k + 1 == rank) {
      modes.push_back({form.innerPadded() / perLongWord, 1, Axis::Address});
      if (perLongWord > 1)
        modes.push_back({perLongWord, 1, Axis::W});
      continue;
    }
    if (k == form.splitPosition() && form.groups > 1) {
      int64_t perGroup = ceilDiv(dramShape[k], form.groups);
      modes.push_back({int64_t(form.groups), 2, Axis::L2B});
      modes.push_back({perGroup, stride[k], Axis::Address});
      continue;
    }
    modes.push_back({dramShape[k], stride[k], Axis::Address});
  }
  return result;
}

std::optional<std::vector<unsigned>>
codegen::canonicalOrderOf(const layout::Layout &layout,
                          ArrayRef<int64_t> shape, Type elementType,
                          std::string &whyNot) {
  size_t rank = shape.size();
  if (layout.rank() != rank) {
    whyNot = "the layout has " + std::to_string(layout.rank()) +
             " dimensions, the tensor " + std::to_string(rank);
    return std::nullopt;
  }
  // The canonical forms order dimensions by their largest address stride,
  // the innermost being the one that carries the long word's elements;
  // dimensions of extent 1 may sit anywhere, so every order is tried,
  // the one the strides suggest first.
  std::vector<std::pair<int64_t, unsigned>> keyed;
  for (unsigned d = 0; d < rank; ++d) {
    int64_t largest = 0;
    bool inner = false;
    for (const layout::Mode &mode : layout.dims[d]) {
      if (mode.axis == layout::Axis::Address)
        largest = std::max(largest, mode.stride);
      inner |= mode.axis == layout::Axis::W;
    }
    keyed.push_back({inner ? -1 : largest, d});
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](auto &a, auto &b) {
    return a.first > b.first;
  });
  std::vector<unsigned> suggested;
  for (auto &entry : keyed)
    suggested.push_back(entry.second);
  std::optional<layout::Layout> nearest;
  auto matches = [&](const std::vector<unsigned> &order) {
    std::vector<int64_t> order64(order.begin(), order.end());
    std::optional<DramForm> form =
        formOf(RankedTensorType::get(shape, elementType), order64);
    if (!form)
      return false;
    layout::Layout candidate = layoutOf(*form);
    if (!nearest)
      nearest = candidate;
    return candidate == layout;
  };
  if (matches(suggested))
    return suggested;
  // Beyond six dimensions the search costs more than it can find.
  if (rank <= 6) {
    std::vector<unsigned> order(rank);
    std::iota(order.begin(), order.end(), 0u);
    do {
      if (matches(order))
        return order;
    } while (std::next_permutation(order.begin(), order.end()));
  }
  if (!nearest) {
    whyNot = "its element type has no device format";
    return std::nullopt;
  }
  whyNot = "it is not one of the DRAM forms the code generator places "
           "tensors in (docs/codegen.md C2; the nearest is " +
           nearest->str() + ")";
  return std::nullopt;
}

RankedTensorType codegen::withLayout(RankedTensorType type,
                                     const DramForm &form) {
  auto attr = graph::LayoutAttr::get(type.getContext(), layoutOf(form));
  return RankedTensorType::get(type.getShape(), type.getElementType(), attr);
}

bool codegen::sameBytes(const DramForm &a, const DramForm &b) {
  if (a.type != b.type || a.numElements() != b.numElements())
    return false;
  if (a.shape == b.shape && a.order == b.order && a.groups == b.groups)
    return true;
  int64_t count = a.numElements();
  // Beyond this the element-by-element check costs more than the copy a
  // Reshape would otherwise be.
  if (count > (int64_t(1) << 24))
    return false;
  if (a.groupLongWords() != b.groupLongWords() || a.groups != b.groups)
    return false;
  std::vector<int64_t> ia(a.shape.size(), 0), ib(b.shape.size(), 0);
  auto step = [](std::vector<int64_t> &index,
                 const std::vector<int64_t> &shape) {
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d])
        return;
      index[d] = 0;
    }
  };
  for (int64_t e = 0; e < count; ++e) {
    DramForm::Location la = a.locate(ia), lb = b.locate(ib);
    if (la.group != lb.group || la.address - a.base != lb.address - b.base ||
        la.slot != lb.slot)
      return false;
    step(ia, a.shape);
    step(ib, b.shape);
  }
  return true;
}

std::string codegen::nodeNameOf(Operation *op) {
  if (auto named = llvm::dyn_cast<NameLoc>(op->getLoc()))
    return named.getName().str();
  if (auto fused = llvm::dyn_cast<FusedLoc>(op->getLoc()))
    for (Location inner : fused.getLocations())
      if (auto named = llvm::dyn_cast<NameLoc>(inner))
        return named.getName().str();
  unsigned index = 0;
  if (Block *block = op->getBlock())
    for (Operation &other : *block) {
      if (&other == op)
        break;
      ++index;
    }
  return onnxOpTypeOf(op) + "#" + std::to_string(index);
}

std::vector<OpOperand *> codegen::onnxInputOperands(Operation *op) {
  std::vector<OpOperand *> inputs;
  auto add = [&](OpOperand &operand) {
    inputs.push_back(operand.get().getDefiningOp<onnx::NoneOp>() ? nullptr
                                                                 : &operand);
  };
  auto segments = op->getAttrOfType<DenseI32ArrayAttr>("operandSegmentSizes");
  if (!segments) {
    for (OpOperand &operand : op->getOpOperands())
      add(operand);
    return inputs;
  }
  unsigned next = 0;
  for (int32_t size : segments.asArrayRef()) {
    if (size == 0)
      inputs.push_back(nullptr);
    for (int32_t i = 0; i < size; ++i)
      add(op->getOpOperand(next++));
  }
  return inputs;
}

std::string codegen::onnxOpTypeOf(Operation *op) {
  if (auto custom = llvm::dyn_cast<onnx::CustomOp>(op))
    return custom.getOpType().str();
  return op->getName().stripDialect().str();
}

const reference::Tensor *ConstantCache::get(ElementsAttr value,
                                            Operation *at) {
  if (!value)
    return nullptr;
  auto found = cache.find(value);
  if (found != cache.end())
    return found->second.get();
  llvm::Expected<reference::Tensor> tensor = tensorFromAttribute(value);
  if (!tensor) {
    at->emitError("constant: ") << llvm::toString(tensor.takeError());
    return nullptr;
  }
  auto stored = std::make_unique<reference::Tensor>(std::move(*tensor));
  const reference::Tensor *result = stored.get();
  cache[value] = std::move(stored);
  return result;
}

ElementsAttr codegen::constantValueOf(Value value) {
  Operation *producer = value.getDefiningOp();
  if (!producer)
    return {};
  if (auto initializer = llvm::dyn_cast<onnx::InitializerOp>(producer))
    return initializer.getValue();
  if (producer->getName().getStringRef() == "onnx.Constant")
    return producer->getAttrOfType<ElementsAttr>("value");
  // A Cast or placement of a constant is done by the host when it stages
  // the constant.
  if ((producer->getName().getStringRef() == "onnx.Cast" ||
       llvm::isa<graph::LayoutSwitchOp>(producer)) &&
      producer->getNumOperands() == 1)
    return constantValueOf(producer->getOperand(0));
  return {};
}

FailureOr<std::map<std::string, reference::Attribute>>
codegen::kernelAttributesOf(Operation *op, DictionaryAttr attributes) {
  std::map<std::string, reference::Attribute> result;
  for (NamedAttribute attribute : attributes) {
    StringRef name = attribute.getName();
    if (name == "operandSegmentSizes" || name == "resultSegmentSizes" ||
        name.starts_with("mngraph.") || name.starts_with("onnx."))
      continue;
    FailureOr<reference::Attribute> converted =
        convertOnnxAttribute(op, name, attribute.getValue());
    if (failed(converted))
      return failure();
    result[name.str()] = std::move(*converted);
  }
  return result;
}

namespace {

/// A tensor that is not on the device (an int64 shape input): its shape
/// and a placeholder form; kernels read such inputs as constants only.
KernelTensor offDeviceTensor(Type type) {
  KernelTensor tensor;
  tensor.form.type = DeviceType::Int32;
  if (auto ranked = llvm::dyn_cast<RankedTensorType>(type))
    tensor.form.shape.assign(ranked.getShape().begin(),
                             ranked.getShape().end());
  tensor.form.order.resize(tensor.form.shape.size());
  std::iota(tensor.form.order.begin(), tensor.form.order.end(), 0u);
  tensor.form.base = -1;
  return tensor;
}

} // namespace

FailureOr<KernelRequest> codegen::requestForOnnxOp(
    Operation *op,
    const std::function<std::optional<DramForm>(Value)> &formOfValue,
    ConstantCache &constants) {
  KernelRequest request;
  request.opType = onnxOpTypeOf(op);
  request.nodeName = nodeNameOf(op);
  // A node of another domain keeps its ONNX attributes in one dictionary.
  auto custom = llvm::dyn_cast<onnx::CustomOp>(op);
  FailureOr<std::map<std::string, reference::Attribute>> attributes =
      kernelAttributesOf(op, custom ? custom.getOnnxAttributes()
                                    : op->getAttrDictionary());
  if (failed(attributes))
    return failure();
  request.attributes = std::move(*attributes);
  for (OpOperand *input : onnxInputOperands(op)) {
    KernelTensor tensor;
    if (!input) {
      tensor.omitted = true;
      request.inputs.push_back(tensor);
      continue;
    }
    Value operand = input->get();
    std::optional<DramForm> form = formOfValue(operand);
    tensor = form ? KernelTensor{} : offDeviceTensor(operand.getType());
    if (form)
      tensor.form = *form;
    if (ElementsAttr value = constantValueOf(operand)) {
      tensor.constant = constants.get(value, op);
      if (!tensor.constant)
        return failure();
    }
    request.inputs.push_back(tensor);
  }
  for (Value result : op->getResults()) {
    std::optional<DramForm> form = formOfValue(result);
    KernelTensor tensor = form ? KernelTensor{} : offDeviceTensor(result.getType());
    if (form)
      tensor.form = *form;
    request.outputs.push_back(tensor);
  }
  return request;
}

DramForm codegen::formOfBuffer(l3::BufferOp buffer) {
  auto type = llvm::cast<RankedTensorType>(buffer.getType());
  DramForm form;
  form.type = deviceTypeOf(type.getElementType()).value_or(DeviceType::Single);
  form.shape.assign(type.getShape().begin(), type.getShape().end());
  form.order.assign(buffer.getOrder().begin(), buffer.getOrder().end());
  form.groups = unsigned(buffer.getGroups());
  form.base = buffer.getAddress().value_or(0);
  if (auto alias = buffer.getAliasAttr())
    if (auto target = SymbolTable::lookupNearestSymbolFrom<l3::BufferOp>(
            buffer, alias))
      form.base = target.getAddress().value_or(0);
  return form;
}

FailureOr<KernelRequest> codegen::requestForKernel(l3::KernelOp kernel,
                                                   ConstantCache &constants) {
  KernelRequest request;
  request.opType = kernel.getOpType().str();
  request.nodeName = kernel.getNode().str();
  FailureOr<std::map<std::string, reference::Attribute>> attributes =
      kernelAttributesOf(kernel, kernel.getOnnx());
  if (failed(attributes))
    return failure();
  request.attributes = std::move(*attributes);
  auto tensorOf = [&](Attribute attribute,
                      bool input) -> FailureOr<KernelTensor> {
    auto symbol = llvm::cast<SymbolRefAttr>(attribute);
    KernelTensor tensor;
    if (symbol.getRootReference() == l3::kNoneBuffer) {
      tensor.omitted = true;
      return tensor;
    }
    auto buffer =
        SymbolTable::lookupNearestSymbolFrom<l3::BufferOp>(kernel, symbol);
    if (!buffer)
      return kernel.emitError("no buffer ") << symbol;
    tensor.name = buffer.getName().value_or(buffer.getSymName()).str();
    auto type = llvm::cast<RankedTensorType>(buffer.getType());
    if (!deviceTypeOf(type.getElementType()))
      tensor = offDeviceTensor(type);
    else
      tensor.form = formOfBuffer(buffer);
    if (input && buffer.getValue()) {
      tensor.constant = constants.get(*buffer.getValue(), kernel);
      if (!tensor.constant)
        return failure();
    }
    return tensor;
  };
  for (Attribute attribute : kernel.getInputs()) {
    FailureOr<KernelTensor> tensor = tensorOf(attribute, true);
    if (failed(tensor))
      return failure();
    request.inputs.push_back(std::move(*tensor));
  }
  for (Attribute attribute : kernel.getOutputs()) {
    FailureOr<KernelTensor> tensor = tensorOf(attribute, false);
    if (failed(tensor))
      return failure();
    request.outputs.push_back(std::move(*tensor));
  }
  if (std::optional<StringRef> activation = kernel.getActivation()) {
    // The verifier checked both are there.
    ArrayRef<float> bounds = *kernel.getActivationBounds();
    request.activation =
        KernelActivation{activation->str(), {bounds[0], bounds[1]}};
  }
  return request;
}

const KernelGenerator *codegen::findGeneratorByName(StringRef name) {
  for (const auto &generator : kernelGenerators())
    if (name == generator->name())
      return generator.get();
  return nullptr;
}

FailureOr<DramImage> codegen::packConstantBuffer(l3::BufferOp buffer,
                                                 ModuleOp module,
                                                 ConstantCache &constants) {
  DramImage image;
  std::string error;
  if (std::optional<StringRef> arrangement = buffer.getArrangement()) {
    // The kernel that reads the constant packs it.
    l3::KernelOp reader;
    size_t inputIndex = 0;
    module.walk([&](l3::KernelOp kernel) {
      if (reader)
        return;
      for (auto [i, attribute] : llvm::enumerate(kernel.getInputs()))
        if (llvm::cast<SymbolRefAttr>(attribute).getRootReference() ==
            buffer.getSymName()) {
          reader = kernel;
          inputIndex = i;
          return;
        }
    });
    if (!reader)
      return buffer.emitError("no kernel reads this constant");
    const KernelGenerator *generator = findGeneratorByName(*arrangement);
    if (!generator)
      return buffer.emitError("no kernel generator '") << *arrangement << "'";
    FailureOr<KernelRequest> request = requestForKernel(reader, constants);
    if (failed(request))
      return failure();
    if (!generator->packConstant(*request, inputIndex, image, error))
      return buffer.emitError("packing for ") << *arrangement << ": " << error;
    return image;
  }
  const reference::Tensor *value =
      buffer.getValue() ? constants.get(*buffer.getValue(), buffer) : nullptr;
  if (!value)
    return buffer.emitError("constant without a value");
  if (!packHost(formOfBuffer(buffer), *value, image, error))
    return buffer.emitError(error);
  return image;
}
