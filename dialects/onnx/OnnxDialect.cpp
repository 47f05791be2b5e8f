//===- OnnxDialect.cpp - The onnx dialect ----------------------------------===//

#include "mncc/dialects/onnx/OnnxOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cstring>

using namespace mlir;
using namespace mncc::onnx;

#include "mncc/dialects/onnx/OnnxDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "mncc/dialects/onnx/OnnxTypes.cpp.inc"

// The op definitions are compiled in shards (OnnxOps.cpp).
void OnnxDialect::initialize() {
  registerTypes();
  registerOnnxDialectOperations(this);
}

void OnnxDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "mncc/dialects/onnx/OnnxTypes.cpp.inc"
      >();
}

static const OnnxOpInfo kOnnxOps[] = {
#define ONNX_OP(OpClass, opType, domain, sinceVersion, graphAttributes)       \
  {opType, domain, sinceVersion, graphAttributes},
#include "mncc/dialects/onnx/OnnxOpTable.inc"
};

llvm::ArrayRef<OnnxOpInfo> mncc::onnx::getOnnxOps() { return kOnnxOps; }

const OnnxOpInfo *mncc::onnx::lookupOnnxOp(llvm::StringRef opType) {
  // The generator writes the table sorted by op type.
  const OnnxOpInfo *found = llvm::lower_bound(
      kOnnxOps, opType,
      [](const OnnxOpInfo &info, llvm::StringRef key) {
        return info.opType < key;
      });
  if (found == std::end(kOnnxOps) || found->opType != opType)
    return nullptr;
  return found;
}

ParseResult InitializerOp::parse(OpAsmParser &parser, OperationState &result) {
  std::string name;
  ElementsAttr value;
  if (parser.parseString(&name) ||
      parser.parseAttribute(value, "value", result.attributes) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  result.addAttribute("name", parser.getBuilder().getStringAttr(name));
  result.addTypes(value.getType());
  return success();
}

void InitializerOp::print(OpAsmPrinter &printer) {
  printer << ' ';
  printer.printString(getName());
  printer << ' ';
  printer.printAttribute(getValue());
  printer.printOptionalAttrDict((*this)->getAttrs(), {"name", "value"});
}

LogicalResult InitializerOp::verify() {
  if (getValue().getType() != getType())
    return emitOpError("result type ")
           << getType() << " differs from the type of its value "
           << getValue().getType();
  if (getName().empty())
    return emitOpError("needs a name: ONNX initializers are named");
  return success();
}

LogicalResult CustomOp::verify() {
  if (getGraphAttributeNames().size() != getGraphs().size())
    return emitOpError("has ")
           << getGraphs().size() << " graph regions but names "
           << getGraphAttributeNames().size();
  if (getOpType().empty())
    return emitOpError("needs an op_type");
  return success();
}

ElementsAttr mncc::onnx::getConstantValue(Value value) {
  Operation *producer = value.getDefiningOp();
  if (!producer)
    return {};
  if (auto initializer = llvm::dyn_cast<InitializerOp>(producer))
    return initializer.getValue();
  auto constant = llvm::dyn_cast<ConstantOp>(producer);
  if (!constant)
    return {};
  if (auto elements = constant.getValueAttr())
    return elements;
  Builder builder(producer->getContext());
  if (auto scalar = constant.getValueFloatAttr())
    return DenseElementsAttr::get(
        RankedTensorType::get({}, builder.getF32Type()), scalar.getValue());
  if (auto scalar = constant.getValueIntAttr())
    return DenseElementsAttr::get(
        RankedTensorType::get({}, builder.getI64Type()), scalar.getValue());
  if (auto list = constant.getValueFloatsAttr()) {
    llvm::SmallVector<float> values;
    for (Attribute element : list)
      values.push_back(
          llvm::cast<FloatAttr>(element).getValue().convertToFloat());
    return DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)values.size()}, builder.getF32Type()),
        llvm::ArrayRef<float>(values));
  }
  if (auto list = constant.getValueIntsAttr()) {
    llvm::SmallVector<int64_t> values;
    for (Attribute element : list)
      values.push_back(llvm::cast<IntegerAttr>(element).getInt());
    return DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)values.size()}, builder.getI64Type()),
        llvm::ArrayRef<int64_t>(values));
  }
  return {};
}

std::optional<llvm::SmallVector<int64_t>>
mncc::onnx::getConstantIntegers(Value value) {
  ElementsAttr elements = getConstantValue(value);
  if (!elements)
    return std::nullopt;
  auto integer = llvm::dyn_cast<IntegerType>(elements.getElementType());
  if (!integer || integer.getWidth() == 1)
    return std::nullopt;
  llvm::SmallVector<int64_t> result;
  if (auto dense = llvm::dyn_cast<DenseIntElementsAttr>(elements)) {
    for (const llvm::APInt &element : dense.getValues<llvm::APInt>())
      result.push_back(integer.isUnsigned() ? (int64_t)element.getZExtValue()
                                            : element.getSExtValue());
    return result;
  }
  auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(elements);
  if (!resource || !resource.getRawHandle().getBlob())
    return std::nullopt;
  llvm::ArrayRef<char> bytes = resource.getRawHandle().getBlob()->getData();
  unsigned width = integer.getWidth() / 8;
  if (width == 0 ||
      bytes.size() != static_cast<size_t>(elements.getNumElements()) * width)
    return std::nullopt;
  for (size_t at = 0; at < bytes.size(); at += width) {
    uint64_t raw = 0;
    std::memcpy(&raw, bytes.data() + at, width); // little endian, as ONNX
    if (!integer.isUnsigned() && width < 8 && (raw >> (width * 8 - 1)) & 1)
      raw |= ~uint64_t(0) << (width * 8);
    result.push_back(static_cast<int64_t>(raw));
  }
  return result;
}
