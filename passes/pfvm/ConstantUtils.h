//===- ConstantUtils.h - Constants of the onnx dialect for the passes -*- C++
//-*-===//

#ifndef MNCC_PASSES_PFVM_CONSTANTUTILS_H
#define MNCC_PASSES_PFVM_CONSTANTUTILS_H

#include "mncc/reference/Tensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace mncc::pfvm {

/// Tensors of at least this many bytes are created as dense_resource
/// attributes (not printed inline, not uniqued), as the importer does.
constexpr size_t kResourceThresholdBytes = 1024;

/// Whether `value` is the result of an onnx.Constant or onnx.Initializer.
bool isConstant(mlir::Value value);

/// The value of a constant (onnx::getConstantValue) as a reference tensor;
/// std::nullopt when `value` is not a constant or its data cannot be read.
std::optional<reference::Tensor> readConstant(mlir::Value value);

/// The bytes of a constant's data (its type's element count times element
/// size; strings count their characters).
int64_t constantBytes(mlir::ElementsAttr value);

/// The data of a dense or dense_resource attribute as stored, without a
/// copy (a splat is one element); std::nullopt for other kinds.
std::optional<llvm::ArrayRef<char>> storedBytes(mlir::ElementsAttr value);

/// An attribute of `type` holding `tensor`: a dense literal below
/// kResourceThresholdBytes, a dense_resource blob (key `name`, made unique)
/// otherwise. Null when the tensor does not have the type's element type
/// and shape.
mlir::ElementsAttr elementsFromTensor(const reference::Tensor &tensor,
                                      mlir::RankedTensorType type,
                                      llvm::StringRef name);

/// An onnx.Constant holding `value`.
mlir::Value createConstant(mlir::OpBuilder &builder, mlir::Location loc,
                           mlir::ElementsAttr value);

/// An int64 constant of `shape` (a 1-D list when empty of dims given).
mlir::Value createIntegerConstant(mlir::OpBuilder &builder, mlir::Location loc,
                                  llvm::ArrayRef<int64_t> values,
                                  mlir::Type elementType,
                                  llvm::ArrayRef<int64_t> shape);

} // namespace mncc::pfvm

#endif // MNCC_PASSES_PFVM_CONSTANTUTILS_H
