//===- TensorData.h - ONNX tensor data <-> MLIR elements ----*- C++ -*-===//
//
// Where the bytes of an ONNX tensor live (raw_data, a typed field, or an
// external file) and how they become an MLIR attribute without a copy:
// large tensors become dense_resource attributes whose blob owns the string
// protobuf parsed them into, or maps the external file.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_ONNX_TENSORDATA_H
#define MNCC_LIB_ONNX_TENSORDATA_H

#include "onnx/onnx_pb.h"

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace mncc {

/// ONNX's name of a tensor element type ("float", "int64"), or "unknown".
std::string tensorElementTypeName(int32_t dataType);

/// Bytes of one element in raw_data, or 0 for strings and unknown types.
size_t tensorElementBytes(int32_t dataType);

/// Checks that a tensor's data matches its type and shape, including an
/// external file's presence and extent. Returns "" or the problem.
std::string checkTensorData(const ::onnx::TensorProto &tensor,
                            llvm::StringRef modelPath);

/// The values of a tensor's typed field (float_data, int32_data, ...) in
/// raw_data layout; `count` must be what checkTensorData accepted.
llvm::Expected<std::unique_ptr<std::string>>
packTypedField(const ::onnx::TensorProto &tensor, int64_t count);

/// Large initializers taken out of a model while libonnx works on it.
class TensorStash {
public:
  /// Takes the raw data of initializers of at least `thresholdBytes`, and
  /// the external-data references of all, out of `model`.
  void takeLargeTensors(::onnx::ModelProto &model, size_t thresholdBytes);

  struct Entry {
    std::unique_ptr<std::string> bytes;
    std::string externalFile;
    int64_t externalOffset = 0;
    int64_t externalLength = -1;
  };
  /// The stashed data of the initializer `name`, removed from the stash.
  std::optional<Entry> take(llvm::StringRef name);

private:
  void takeFromGraph(::onnx::GraphProto &graph, size_t thresholdBytes);
  llvm::StringMap<Entry> entries;
};

/// The value of `tensor` as an attribute of `type`: a dense_resource when it
/// has at least `thresholdBytes` (owning the bytes, no copy), a dense
/// literal otherwise.
llvm::Expected<mlir::ElementsAttr>
buildElementsAttr(::onnx::TensorProto &tensor, mlir::RankedTensorType type,
                  TensorStash &stash, llvm::StringRef modelPath,
                  size_t thresholdBytes);

/// An ONNX sparse tensor as a SparseElementsAttr.
llvm::Expected<mlir::ElementsAttr>
buildSparseElementsAttr(::onnx::SparseTensorProto &tensor,
                        mlir::MLIRContext *context, TensorStash &stash,
                        llvm::StringRef modelPath);

/// The bytes of an elements attribute in ONNX raw_data layout (little
/// endian, one byte per bool), for the exporter.
llvm::Expected<std::string> rawDataOf(mlir::ElementsAttr attribute);

/// The ONNX data type of an MLIR element type, or 0 (UNDEFINED).
int32_t onnxDataTypeOf(mlir::Type elementType);

} // namespace mncc

#endif // MNCC_LIB_ONNX_TENSORDATA_H
