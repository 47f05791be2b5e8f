//===- OnnxDialect.cpp - The onnx dialect ----------------------------------===//

#include "mncc/dialects/onnx/OnnxOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mncc::onnx;

#include "mncc/dialects/onnx/OnnxDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "mncc/dialects/onnx/OnnxTypes.cpp.inc"

#define GET_OP_CLASSES
#include "mncc/dialects/onnx/OnnxOps.cpp.inc"

void OnnxDialect::initialize() {
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "mncc/dialects/onnx/OnnxOps.cpp.inc"
      >();
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
