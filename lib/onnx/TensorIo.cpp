//===- TensorIo.cpp - ONNX protobuf files <-> reference values ------------===//

#include "mncc/onnx/TensorIo.h"

#include "TensorData.h"

#include "mncc/dialects/onnx/OnnxDialect.h"

#include "onnx/onnx-data_pb.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir;
using namespace mncc;
using reference::DType;
using reference::Tensor;

static llvm::Error ioError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static llvm::Expected<Tensor> tensorFromProto(const ::onnx::TensorProto &proto,
                                              llvm::StringRef path) {
  DType dtype = static_cast<DType>(proto.data_type());
  if (reference::dtypeSize(dtype) == 0 && dtype != DType::String)
    return ioError(path + ": unsupported tensor element type " +
                   llvm::Twine(proto.data_type()));
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  for (int64_t dim : shape)
    if (dim < 0)
      return ioError(path + ": negative dimension");
  if (proto.data_location() == ::onnx::TensorProto::EXTERNAL)
    return ioError(path + ": external data is not supported in value files");
  // The dims are data: that the file holds what they claim is checked
  // before anything is allocated (a 16-byte file claiming 100000x100000
  // floats allocated 40 GB first, as a .npy header did).
  if (std::string problem = checkTensorData(proto, path); !problem.empty())
    return ioError(path + ": " + problem);
  std::string sizeError;
  std::optional<Tensor> allocated =
      Tensor::tryAllocate(dtype, shape, sizeError);
  if (!allocated)
    return ioError(path + ": " + sizeError);
  Tensor &tensor = *allocated;
  if (dtype == DType::String) {
    tensor.strings().assign(proto.string_data().begin(),
                            proto.string_data().end());
    return tensor;
  }
  std::string bytes;
  if (!proto.raw_data().empty()) {
    bytes = proto.raw_data();
  } else if (tensor.numElements()) {
    auto packed = packTypedField(proto, tensor.numElements());
    if (!packed)
      return packed.takeError();
    bytes = std::move(**packed);
  }
  if (bytes.size() != tensor.byteSize())
    return ioError(path + ": data size does not match the shape");
  if (!bytes.empty())
    std::memcpy(tensor.raw(), bytes.data(), bytes.size());
  return tensor;
}

template <typename Message>
static llvm::Error parseFile(llvm::StringRef path, Message &message) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return ioError(path + ": " + buffer.getError().message());
  if ((*buffer)->getBufferSize() > INT_MAX ||
      !message.ParseFromArray((*buffer)->getBufferStart(),
                              static_cast<int>((*buffer)->getBufferSize())))
    return ioError(path + ": not a valid protobuf of the expected kind");
  return llvm::Error::success();
}

static llvm::Expected<reference::Value>
valueFromSequence(const ::onnx::SequenceProto &sequence,
                  llvm::StringRef path) {
  std::vector<Tensor> items;
  for (const auto &tensor : sequence.tensor_values()) {
    auto item = tensorFromProto(tensor, path);
    if (!item)
      return item.takeError();
    items.push_back(std::move(*item));
  }
  return reference::Value::makeSequence(std::move(items));
}

llvm::Expected<reference::Value>
mncc::readValueProtoFile(llvm::StringRef path, ValueProtoKind kind) {
  if (kind == ValueProtoKind::Tensor) {
    ::onnx::TensorProto proto;
    if (llvm::Error error = parseFile(path, proto))
      return std::move(error);
    auto tensor = tensorFromProto(proto, path);
    if (!tensor)
      return tensor.takeError();
    return reference::Value(std::move(*tensor));
  }
  if (kind == ValueProtoKind::Sequence) {
    ::onnx::SequenceProto proto;
    if (llvm::Error error = parseFile(path, proto))
      return std::move(error);
    return valueFromSequence(proto, path);
  }
  ::onnx::OptionalProto proto;
  if (llvm::Error error = parseFile(path, proto))
    return std::move(error);
  reference::Value value;
  if (proto.has_tensor_value()) {
    auto tensor = tensorFromProto(proto.tensor_value(), path);
    if (!tensor)
      return tensor.takeError();
    value = reference::Value(std::move(*tensor));
  } else if (proto.has_sequence_value()) {
    auto sequence = valueFromSequence(proto.sequence_value(), path);
    if (!sequence)
      return sequence.takeError();
    value = std::move(*sequence);
  }
  value.optional = true;
  return value;
}

llvm::Error mncc::writeTensorProtoFile(llvm::StringRef path,
                                       const Tensor &tensor,
                                       llvm::StringRef name) {
  ::onnx::TensorProto proto;
  proto.set_name(name.str());
  proto.set_data_type(static_cast<int32_t>(tensor.dtype()));
  for (int64_t dim : tensor.shape())
    proto.add_dims(dim);
  if (tensor.dtype() == DType::String) {
    for (const std::string &text : tensor.strings())
      proto.add_string_data(text);
  } else {
    proto.set_raw_data(
        std::string(static_cast<const char *>(tensor.raw()), tensor.byteSize()));
  }
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (error)
    return ioError(path + ": " + error.message());
  std::string bytes;
  proto.SerializeToString(&bytes);
  os << bytes;
  return llvm::Error::success();
}

mlir::Type mncc::elementTypeOfOnnx(int32_t onnxType, MLIRContext *context) {
  Builder builder(context);
  switch (onnxType) {
  case ::onnx::TensorProto::FLOAT: return builder.getF32Type();
  case ::onnx::TensorProto::DOUBLE: return builder.getF64Type();
  case ::onnx::TensorProto::FLOAT16: return builder.getF16Type();
  case ::onnx::TensorProto::BFLOAT16: return builder.getBF16Type();
  case ::onnx::TensorProto::INT8: return builder.getIntegerType(8);
  case ::onnx::TensorProto::INT16: return builder.getIntegerType(16);
  case ::onnx::TensorProto::INT32: return builder.getIntegerType(32);
  case ::onnx::TensorProto::INT64: return builder.getIntegerType(64);
  case ::onnx::TensorProto::UINT8: return builder.getIntegerType(8, false);
  case ::onnx::TensorProto::UINT16: return builder.getIntegerType(16, false);
  case ::onnx::TensorProto::UINT32: return builder.getIntegerType(32, false);
  case ::onnx::TensorProto::UINT64: return builder.getIntegerType(64, false);
  case ::onnx::TensorProto::BOOL: return builder.getI1Type();
  case ::onnx::TensorProto::STRING: return mncc::onnx::StringType::get(context);
  case ::onnx::TensorProto::COMPLEX64:
    return ComplexType::get(builder.getF32Type());
  case ::onnx::TensorProto::COMPLEX128:
    return ComplexType::get(builder.getF64Type());
  default:
    return {};
  }
}

reference::DType mncc::referenceDTypeOf(Type elementType) {
  return static_cast<DType>(onnxDataTypeOf(elementType));
}

llvm::Expected<Tensor> mncc::tensorFromAttribute(ElementsAttr value) {
  auto type = llvm::cast<ShapedType>(value.getType());
  DType dtype = referenceDTypeOf(type.getElementType());
  if (dtype == DType::Undefined)
    return ioError("unsupported element type");
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  std::string sizeError;
  std::optional<Tensor> allocated = Tensor::tryAllocate(dtype, shape, sizeError);
  if (!allocated)
    return ioError(sizeError);
  Tensor &tensor = *allocated;
  if (dtype == DType::String) {
    auto dense = llvm::dyn_cast<DenseElementsAttr>(value);
    if (!dense)
      return ioError("string tensors must be dense literals");
    for (auto [index, text] :
         llvm::enumerate(dense.getValues<llvm::StringRef>()))
      tensor.strings()[index] = text.str();
    return tensor;
  }
  if (auto sparse = llvm::dyn_cast<SparseElementsAttr>(value)) {
    auto dense = sparse.getValues();
    auto indices = sparse.getIndices().getValues<int64_t>();
    auto rawValues = rawDataOf(dense);
    if (!rawValues)
      return rawValues.takeError();
    size_t size = reference::dtypeSize(dtype);
    int64_t rank = shape.size();
    auto indexIt = indices.begin();
    for (int64_t n = 0; n < dense.getNumElements(); ++n) {
      int64_t flat = 0;
      for (int64_t d = 0; d < rank; ++d, ++indexIt) {
        if (*indexIt < 0 || *indexIt >= shape[d])
          return ioError("a sparse index is outside the shape");
        flat = flat * shape[d] + *indexIt;
      }
      std::memcpy(static_cast<char *>(tensor.raw()) + flat * size,
                  rawValues->data() + n * size, size);
    }
    return tensor;
  }
  auto bytes = rawDataOf(value);
  if (!bytes)
    return bytes.takeError();
  if (bytes->size() != tensor.byteSize())
    return ioError("tensor data does not match its type");
  if (!bytes->empty())
    std::memcpy(tensor.raw(), bytes->data(), bytes->size());
  return tensor;
}
