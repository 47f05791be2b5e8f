//===- ConstantUtils.cpp - Constants of the onnx dialect for the passes ---===//

#include "ConstantUtils.h"

#include "mncc/dialects/onnx/OnnxOps.h"
#include "mncc/onnx/TensorIo.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mncc;

bool pfvm::isConstant(Value value) {
  Operation *producer = value.getDefiningOp();
  return producer &&
         llvm::isa<onnx::ConstantOp, onnx::InitializerOp>(producer) &&
         onnx::getConstantValue(value);
}

std::optional<reference::Tensor> pfvm::readConstant(Value value) {
  ElementsAttr elements = onnx::getConstantValue(value);
  if (!elements)
    return std::nullopt;
  auto tensor = tensorFromAttribute(elements);
  if (!tensor) {
    llvm::consumeError(tensor.takeError());
    return std::nullopt;
  }
  return std::move(*tensor);
}

int64_t pfvm::constantBytes(ElementsAttr value) {
  Type element = value.getElementType();
  if (llvm::isa<onnx::StringType>(element)) {
    int64_t bytes = 0;
    if (auto dense = llvm::dyn_cast<DenseElementsAttr>(value))
      for (StringRef text : dense.getValues<StringRef>())
        bytes += text.size();
    return bytes;
  }
  reference::DType dtype = referenceDTypeOf(element);
  return value.getNumElements() *
         static_cast<int64_t>(reference::dtypeSize(dtype));
}

std::optional<llvm::ArrayRef<char>> pfvm::storedBytes(ElementsAttr value) {
  if (auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(value)) {
    if (AsmResourceBlob *blob = resource.getRawHandle().getBlob())
      return blob->getData();
    return std::nullopt;
  }
  if (auto dense = llvm::dyn_cast<DenseIntOrFPElementsAttr>(value))
    return dense.getRawData();
  return std::nullopt;
}

ElementsAttr pfvm::elementsFromTensor(const reference::Tensor &tensor,
                                      RankedTensorType type, StringRef name) {
  if (tensor.dtype() != referenceDTypeOf(type.getElementType()) ||
      tensor.shape() !=
          std::vector<int64_t>(type.getShape().begin(), type.getShape().end()))
    return {};
  switch (tensor.dtype()) {
  case reference::DType::Undefined:
    return {};
  case reference::DType::String: {
    llvm::SmallVector<StringRef> strings(tensor.strings().begin(),
                                         tensor.strings().end());
    return DenseElementsAttr::get(type, strings);
  }
  case reference::DType::Bool: {
    llvm::SmallVector<bool> bits(tensor.data<bool>(),
                                 tensor.data<bool>() + tensor.numElements());
    return DenseElementsAttr::get(type, bits);
  }
  default:
    break;
  }
  llvm::ArrayRef<char> data(static_cast<const char *>(tensor.raw()),
                            tensor.byteSize());
  if (data.size() < kResourceThresholdBytes || data.empty())
    return DenseElementsAttr::getFromRawBuffer(type, data);
  size_t alignment = llvm::PowerOf2Ceil(
      std::min<size_t>(reference::dtypeSize(tensor.dtype()), 8));
  return DenseResourceElementsAttr::get(
      type, name,
      HeapAsmResourceBlob::allocateAndCopyWithAlign(data, alignment));
}

Value pfvm::createConstant(OpBuilder &builder, Location loc,
                           ElementsAttr value) {
  return builder.create<onnx::ConstantOp>(
      loc, value.getType(), /*sparse_value=*/ElementsAttr(), value, FloatAttr(),
      ArrayAttr(), IntegerAttr(), ArrayAttr(), StringAttr(), ArrayAttr());
}

Value pfvm::createIntegerConstant(OpBuilder &builder, Location loc,
                                  llvm::ArrayRef<int64_t> values,
                                  Type elementType,
                                  llvm::ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, elementType);
  unsigned width = elementType.getIntOrFloatBitWidth();
  llvm::SmallVector<APInt> elements;
  for (int64_t value : values)
    elements.push_back(APInt(width, static_cast<uint64_t>(value),
                             /*isSigned=*/true));
  return createConstant(builder, loc, DenseElementsAttr::get(type, elements));
}
