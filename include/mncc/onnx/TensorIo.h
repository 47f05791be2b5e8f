//===- TensorIo.h - ONNX protobuf files <-> reference values --*- C++ -*-===//
//
// The .pb files of ONNX test data and of `mncc run`: a TensorProto, a
// SequenceProto or an OptionalProto, as reference values; and elements
// attributes of the onnx dialect as reference tensors.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_ONNX_TENSORIO_H
#define MNCC_ONNX_TENSORIO_H

#include "mncc/reference/Tensor.h"

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mncc {

enum class ValueProtoKind { Tensor, Sequence, Optional };

/// Reads a .pb file holding a value of the given kind.
llvm::Expected<reference::Value> readValueProtoFile(llvm::StringRef path,
                                                    ValueProtoKind kind);

/// Writes a tensor as a TensorProto named `name`.
llvm::Error writeTensorProtoFile(llvm::StringRef path,
                                 const reference::Tensor &tensor,
                                 llvm::StringRef name);

/// The value of an elements attribute (dense, dense_resource or sparse) as
/// a reference tensor.
llvm::Expected<reference::Tensor> tensorFromAttribute(mlir::ElementsAttr value);

/// The reference element type of an MLIR element type (Undefined if none).
reference::DType referenceDTypeOf(mlir::Type elementType);
/// The MLIR element type of an ONNX data type (TensorProto.DataType, the
/// same numbers as reference::DType); null for an unknown one.
mlir::Type elementTypeOfOnnx(int32_t onnxType, mlir::MLIRContext *context);

} // namespace mncc

#endif // MNCC_ONNX_TENSORIO_H
