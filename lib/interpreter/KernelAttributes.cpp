//===- KernelAttributes.cpp - ONNX attributes as kernels read them --------===//

#include "mncc/interpreter/KernelAttributes.h"

#include "mncc/dialects/onnx/OnnxDialect.h"
#include "mncc/onnx/TensorIo.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mncc;

reference::DType mncc::kernelElementTypeOf(Type type) {
  if (auto tensor = llvm::dyn_cast<TensorType>(type))
    return referenceDTypeOf(tensor.getElementType());
  if (auto seq = llvm::dyn_cast<onnx::SeqType>(type))
    return kernelElementTypeOf(seq.getElementType());
  if (auto opt = llvm::dyn_cast<onnx::OptType>(type))
    return kernelElementTypeOf(opt.getElementType());
  return reference::DType::Undefined;
}

FailureOr<reference::Attribute>
mncc::convertOnnxAttribute(Operation *op, StringRef name,
                           mlir::Attribute value) {
  reference::Attribute result;
  if (auto integer = llvm::dyn_cast<IntegerAttr>(value)) {
    result.kind = reference::Attribute::Kind::Int;
    result.i = integer.getValue().getSExtValue();
  } else if (auto floating = llvm::dyn_cast<FloatAttr>(value)) {
    result.kind = reference::Attribute::Kind::Float;
    result.f = static_cast<float>(floating.getValueAsDouble());
  } else if (auto text = llvm::dyn_cast<StringAttr>(value)) {
    result.kind = reference::Attribute::Kind::String;
    result.s = text.str();
  } else if (auto type = llvm::dyn_cast<TypeAttr>(value)) {
    result.kind = reference::Attribute::Kind::TypeProto;
    result.elementType = kernelElementTypeOf(type.getValue());
  } else if (auto elements = llvm::dyn_cast<ElementsAttr>(value)) {
    auto tensor = tensorFromAttribute(elements);
    if (!tensor)
      return op->emitError("attribute '")
             << name << "': " << llvm::toString(tensor.takeError());
    result.kind = reference::Attribute::Kind::Tensor;
    result.t = std::move(*tensor);
  } else if (auto ints = llvm::dyn_cast<DenseI64ArrayAttr>(value)) {
    result.kind = reference::Attribute::Kind::Ints;
    result.ints.assign(ints.asArrayRef().begin(), ints.asArrayRef().end());
  } else if (auto floats = llvm::dyn_cast<DenseF32ArrayAttr>(value)) {
    result.kind = reference::Attribute::Kind::Floats;
    result.floats.assign(floats.asArrayRef().begin(),
                         floats.asArrayRef().end());
  } else if (auto array = llvm::dyn_cast<ArrayAttr>(value)) {
    // An empty list could be of any kind; kernels read it with the
    // accessor of the kind they expect, so it is offered as every kind.
    result.kind = reference::Attribute::Kind::Ints;
    for (mlir::Attribute element : array) {
      if (auto integer = llvm::dyn_cast<IntegerAttr>(element)) {
        result.kind = reference::Attribute::Kind::Ints;
        result.ints.push_back(integer.getValue().getSExtValue());
      } else if (auto floating = llvm::dyn_cast<FloatAttr>(element)) {
        result.kind = reference::Attribute::Kind::Floats;
        result.floats.push_back(floating.getValueAsDouble());
      } else if (auto text = llvm::dyn_cast<StringAttr>(element)) {
        result.kind = reference::Attribute::Kind::Strings;
        result.strings.push_back(text.str());
      } else if (auto elements = llvm::dyn_cast<ElementsAttr>(element)) {
        auto tensor = tensorFromAttribute(elements);
        if (!tensor)
          return op->emitError("attribute '")
                 << name << "': " << llvm::toString(tensor.takeError());
        result.kind = reference::Attribute::Kind::Tensors;
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

