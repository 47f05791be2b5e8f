//===- TensorData.cpp - ONNX tensor data <-> MLIR elements ----------------===//

#include "TensorData.h"

#include "mncc/dialects/onnx/OnnxDialect.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstring>

using namespace mlir;
using namespace mncc;
using ::onnx::TensorProto;

static llvm::Error dataError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string mncc::tensorElementTypeName(int32_t dataType) {
  switch (dataType) {
  case TensorProto::FLOAT: return "float";
  case TensorProto::UINT8: return "uint8";
  case TensorProto::INT8: return "int8";
  case TensorProto::UINT16: return "uint16";
  case TensorProto::INT16: return "int16";
  case TensorProto::INT32: return "int32";
  case TensorProto::INT64: return "int64";
  case TensorProto::STRING: return "string";
  case TensorProto::BOOL: return "bool";
  case TensorProto::FLOAT16: return "float16";
  case TensorProto::DOUBLE: return "double";
  case TensorProto::UINT32: return "uint32";
  case TensorProto::UINT64: return "uint64";
  case TensorProto::COMPLEX64: return "complex64";
  case TensorProto::COMPLEX128: return "complex128";
  case TensorProto::BFLOAT16: return "bfloat16";
  default: return "unknown";
  }
}

size_t mncc::tensorElementBytes(int32_t dataType) {
  switch (dataType) {
  case TensorProto::UINT8:
  case TensorProto::INT8:
  case TensorProto::BOOL:
    return 1;
  case TensorProto::UINT16:
  case TensorProto::INT16:
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
    return 2;
  case TensorProto::FLOAT:
  case TensorProto::INT32:
  case TensorProto::UINT32:
    return 4;
  case TensorProto::INT64:
  case TensorProto::DOUBLE:
  case TensorProto::UINT64:
  case TensorProto::COMPLEX64:
    return 8;
  case TensorProto::COMPLEX128:
    return 16;
  default:
    return 0;
  }
}

static std::string shapeText(const TensorProto &tensor);

namespace {
/// A TensorProto's element count and bytes, from its dims (which are
/// data), or why they do not fit in 63 bits.
struct ProtoSize {
  int64_t elements = 1;
  uint64_t bytes = 0;
  std::string error;
};
} // namespace

static ProtoSize protoSize(const TensorProto &tensor) {
  ProtoSize size;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0) {
      size.error = "dimension " + std::to_string(dim) + " of " +
                   shapeText(tensor) + " is negative";
      return size;
    }
    if (dim && size.elements > INT64_MAX / dim) {
      size.error = shapeText(tensor) + " has more than 2^63 elements";
      return size;
    }
    size.elements *= dim;
  }
  auto elementBytes =
      static_cast<int64_t>(tensorElementBytes(tensor.data_type()));
  if (elementBytes && size.elements > INT64_MAX / elementBytes) {
    size.error = shapeText(tensor) + " of " +
                 tensorElementTypeName(tensor.data_type()) +
                 " needs more than 2^63 bytes";
    return size;
  }
  size.bytes = static_cast<uint64_t>(size.elements * elementBytes);
  return size;
}

static std::string shapeText(const TensorProto &tensor) {
  std::string text;
  for (int64_t dim : tensor.dims())
    text += (text.empty() ? "" : "x") + std::to_string(dim);
  return text.empty() ? "scalar" : "shape " + text;
}

static std::string externalField(const TensorProto &tensor,
                                 llvm::StringRef key) {
  for (const auto &entry : tensor.external_data())
    if (entry.key() == key)
      return entry.value();
  return "";
}

static std::string externalPath(llvm::StringRef modelPath,
                                llvm::StringRef location) {
  llvm::SmallString<256> path = llvm::sys::path::parent_path(modelPath);
  llvm::sys::path::append(path, location);
  return std::string(path);
}

/// The number of values a typed field holds for a tensor of `dataType`.
static std::optional<int64_t> typedFieldSize(const TensorProto &tensor) {
  switch (tensor.data_type()) {
  case TensorProto::FLOAT: return tensor.float_data_size();
  case TensorProto::COMPLEX64: return tensor.float_data_size() / 2;
  case TensorProto::DOUBLE: return tensor.double_data_size();
  case TensorProto::COMPLEX128: return tensor.double_data_size() / 2;
  case TensorProto::INT64: return tensor.int64_data_size();
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    return tensor.uint64_data_size();
  case TensorProto::STRING: return tensor.string_data_size();
  case TensorProto::INT32:
  case TensorProto::INT16:
  case TensorProto::INT8:
  case TensorProto::UINT16:
  case TensorProto::UINT8:
  case TensorProto::BOOL:
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
    return tensor.int32_data_size();
  default:
    return std::nullopt;
  }
}

std::string mncc::checkTensorData(const TensorProto &tensor,
                                  llvm::StringRef modelPath) {
  std::string type = tensorElementTypeName(tensor.data_type());
  if (type == "unknown")
    return "unsupported element type " + std::to_string(tensor.data_type());
  ProtoSize size = protoSize(tensor);
  if (!size.error.empty())
    return size.error;
  int64_t count = size.elements;
  uint64_t needed = size.bytes;

  if (tensor.data_location() == TensorProto::EXTERNAL) {
    std::string location = externalField(tensor, "location");
    if (location.empty())
      return "its data is external but names no location";
    if (llvm::sys::path::is_absolute(location))
      return "external data location '" + location +
             "' must be relative to the model's folder";
    std::string file = externalPath(modelPath, location);
    uint64_t fileSize;
    if (llvm::sys::fs::file_size(file, fileSize))
      return "external data file '" + file + "' does not exist";
    int64_t offset = 0, length = -1;
    if (llvm::StringRef(externalField(tensor, "offset")).getAsInteger(10, offset) &&
        !externalField(tensor, "offset").empty())
      return "external data offset is not a number";
    if (llvm::StringRef(externalField(tensor, "length")).getAsInteger(10, length) &&
        !externalField(tensor, "length").empty())
      return "external data length is not a number";
    auto fileBytes = static_cast<int64_t>(fileSize);
    if (offset < 0 || offset > fileBytes)
      return "external data offset " + std::to_string(offset) +
             " lies outside '" + file + "' (" + std::to_string(fileSize) +
             " bytes)";
    if (length < 0)
      length = fileBytes - offset;
    // Compared without adding: offset and length come from the model.
    if (length > fileBytes - offset)
      return "external data [" + std::to_string(offset) + ", +" +
             std::to_string(length) + ") lies outside '" + file + "' (" +
             std::to_string(fileSize) + " bytes)";
    if (static_cast<uint64_t>(length) != needed)
      return "external data has " + std::to_string(length) + " bytes, but " +
             shapeText(tensor) + " of " + type + " needs " +
             std::to_string(needed);
    return "";
  }
  if (tensor.data_type() == TensorProto::STRING) {
    if (tensor.string_data_size() != count)
      return "it has " + std::to_string(tensor.string_data_size()) +
             " strings, but " + shapeText(tensor) + " needs " +
             std::to_string(count);
    return "";
  }
  if (!tensor.raw_data().empty()) {
    if (tensor.raw_data().size() != needed)
      return "it has " + std::to_string(tensor.raw_data().size()) +
             " bytes of data, but " + shapeText(tensor) + " of " + type +
             " needs " + std::to_string(needed);
    return "";
  }
  int64_t values = typedFieldSize(tensor).value_or(0);
  if (values == 0 && count != 0)
    return "it has no data (" + shapeText(tensor) + " of " + type +
           " needs " + std::to_string(needed) + " bytes)";
  if (values != count)
    return "it has " + std::to_string(values) + " values, but " +
           shapeText(tensor) + " needs " + std::to_string(count);
  return "";
}

void TensorStash::takeFromGraph(::onnx::GraphProto &graph,
                                size_t thresholdBytes) {
  for (TensorProto &tensor : *graph.mutable_initializer()) {
    Entry entry;
    if (tensor.data_location() == TensorProto::EXTERNAL) {
      entry.externalFile = externalField(tensor, "location");
      llvm::StringRef(externalField(tensor, "offset"))
          .getAsInteger(10, entry.externalOffset);
      if (llvm::StringRef(externalField(tensor, "length"))
              .getAsInteger(10, entry.externalLength))
        entry.externalLength = -1;
      tensor.clear_external_data();
      tensor.set_data_location(TensorProto::DEFAULT);
    } else if (tensor.raw_data().size() >= thresholdBytes &&
               tensor.data_type() != TensorProto::BOOL) {
      entry.bytes.reset(tensor.release_raw_data());
    } else {
      continue;
    }
    entries[tensor.name()] = std::move(entry);
  }
  for (auto &node : *graph.mutable_node())
    for (auto &attribute : *node.mutable_attribute()) {
      if (attribute.has_g())
        takeFromGraph(*attribute.mutable_g(), thresholdBytes);
      for (auto &subgraph : *attribute.mutable_graphs())
        takeFromGraph(subgraph, thresholdBytes);
    }
}

void TensorStash::takeLargeTensors(::onnx::ModelProto &model,
                                   size_t thresholdBytes) {
  takeFromGraph(*model.mutable_graph(), thresholdBytes);
}

std::optional<TensorStash::Entry> TensorStash::take(llvm::StringRef name) {
  auto found = entries.find(name);
  if (found == entries.end())
    return std::nullopt;
  Entry entry = std::move(found->second);
  entries.erase(found);
  return entry;
}

llvm::Expected<std::unique_ptr<std::string>>
mncc::packTypedField(const TensorProto &tensor, int64_t count) {
  if (typedFieldSize(tensor).value_or(-1) != count)
    return dataError("its typed data holds " +
                     std::to_string(typedFieldSize(tensor).value_or(0)) +
                     " values, but " + shapeText(tensor) + " needs " +
                     std::to_string(count));
  size_t elementBytes = tensorElementBytes(tensor.data_type());
  auto bytes = std::make_unique<std::string>(count * elementBytes, '\0');
  char *out = bytes->data();
  auto store = [&](int64_t index, uint64_t value) {
    std::memcpy(out + index * elementBytes, &value, elementBytes);
  };
  switch (tensor.data_type()) {
  case TensorProto::FLOAT:
  case TensorProto::COMPLEX64:
    std::memcpy(out, tensor.float_data().data(), bytes->size());
    break;
  case TensorProto::DOUBLE:
  case TensorProto::COMPLEX128:
    std::memcpy(out, tensor.double_data().data(), bytes->size());
    break;
  case TensorProto::INT64:
    std::memcpy(out, tensor.int64_data().data(), bytes->size());
    break;
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    for (int64_t i = 0; i < count; ++i)
      store(i, tensor.uint64_data(i));
    break;
  default:
    for (int64_t i = 0; i < count; ++i)
      store(i, static_cast<uint32_t>(tensor.int32_data(i)));
    break;
  }
  return bytes;
}

static std::string blobName(llvm::StringRef tensorName) {
  // Resource keys are printed bare, so they must be identifiers.
  std::string name;
  for (char c : tensorName)
    name += llvm::isAlnum(c) || c == '_' || c == '.' ? c : '_';
  if (name.empty() || llvm::isDigit(name[0]))
    name = "t_" + name;
  return name;
}

/// A blob over `data`, released by `release`; copied to an aligned buffer
/// if `data` is not aligned for its elements.
template <typename Release>
static AsmResourceBlob makeBlob(llvm::ArrayRef<char> data, size_t alignment,
                                Release release) {
  if (!llvm::isAddrAligned(llvm::Align(alignment), data.data())) {
    AsmResourceBlob copy =
        HeapAsmResourceBlob::allocateAndCopyWithAlign(data, alignment);
    release();
    return copy;
  }
  return AsmResourceBlob(
      data, alignment,
      [release](void *, size_t, size_t) mutable { release(); },
      /*dataIsMutable=*/false);
}

llvm::Expected<ElementsAttr>
mncc::buildElementsAttr(TensorProto &tensor, RankedTensorType type,
                        TensorStash &stash, llvm::StringRef modelPath,
                        size_t thresholdBytes) {
  if (std::string problem = tensor.data_location() == TensorProto::EXTERNAL
                                ? checkTensorData(tensor, modelPath)
                                : "";
      !problem.empty())
    return dataError(problem);
  ProtoSize size = protoSize(tensor);
  if (!size.error.empty())
    return dataError(size.error);
  int64_t count = size.elements;
  int32_t dataType = tensor.data_type();
  size_t elementBytes = tensorElementBytes(dataType);

  if (dataType == TensorProto::STRING) {
    if (tensor.string_data_size() != count)
      return dataError(checkTensorData(tensor, modelPath));
    llvm::SmallVector<llvm::StringRef> strings(tensor.string_data().begin(),
                                               tensor.string_data().end());
    return ElementsAttr(DenseElementsAttr::get(type, strings));
  }

  // Find the bytes: stashed, external, raw_data, or a typed field.
  std::optional<TensorStash::Entry> stashed;
  if (!tensor.name().empty())
    stashed = stash.take(tensor.name());
  std::unique_ptr<std::string> owned;
  std::unique_ptr<llvm::MemoryBuffer> mapped;
  std::string externalFile;
  int64_t externalOffset = 0, externalLength = -1;
  if (stashed && stashed->bytes) {
    owned = std::move(stashed->bytes);
  } else if (stashed) {
    externalFile = stashed->externalFile;
    externalOffset = stashed->externalOffset;
    externalLength = stashed->externalLength;
  } else if (tensor.data_location() == TensorProto::EXTERNAL) {
    externalFile = externalField(tensor, "location");
    llvm::StringRef(externalField(tensor, "offset"))
        .getAsInteger(10, externalOffset);
    if (llvm::StringRef(externalField(tensor, "length"))
            .getAsInteger(10, externalLength))
      externalLength = -1;
  } else if (!tensor.raw_data().empty()) {
    owned.reset(tensor.release_raw_data());
  } else if (count == 0) {
    owned = std::make_unique<std::string>();
  } else {
    if (std::string problem = checkTensorData(tensor, modelPath);
        !problem.empty())
      return dataError(problem);
    auto packed = packTypedField(tensor, count);
    if (!packed)
      return packed.takeError();
    owned = std::move(*packed);
  }
  if (!externalFile.empty()) {
    std::string file = externalPath(modelPath, externalFile);
    if (externalLength < 0)
      externalLength = static_cast<int64_t>(size.bytes);
    auto buffer = llvm::MemoryBuffer::getFileSlice(file, externalLength,
                                                   externalOffset);
    if (!buffer)
      return dataError("cannot read external data '" + file +
                     "': " + buffer.getError().message());
    mapped = std::move(*buffer);
  }
  llvm::ArrayRef<char> data =
      owned ? llvm::ArrayRef<char>(owned->data(), owned->size())
            : llvm::ArrayRef<char>(mapped->getBufferStart(),
                                   mapped->getBufferSize());
  if (data.size() != size.bytes)
    return dataError("it has " + std::to_string(data.size()) +
                     " bytes of data, but " + shapeText(tensor) + " of " +
                     tensorElementTypeName(dataType) + " needs " +
                     std::to_string(size.bytes));

  if (dataType == TensorProto::BOOL) {
    llvm::SmallVector<bool> bits(data.begin(), data.end());
    return ElementsAttr(DenseElementsAttr::get(type, bits));
  }
  if (data.size() < thresholdBytes || data.empty())
    return ElementsAttr(DenseElementsAttr::getFromRawBuffer(type, data));

  size_t alignment = llvm::PowerOf2Ceil(std::min<size_t>(elementBytes, 8));
  AsmResourceBlob blob =
      owned ? makeBlob(data, alignment,
                       [bytes = owned.release()] { delete bytes; })
            : makeBlob(data, alignment,
                       [buffer = mapped.release()] { delete buffer; });
  return ElementsAttr(DenseResourceElementsAttr::get(
      type, blobName(tensor.name()), std::move(blob)));
}

llvm::Expected<ElementsAttr>
mncc::buildSparseElementsAttr(::onnx::SparseTensorProto &tensor,
                              MLIRContext *context, TensorStash &stash,
                              llvm::StringRef modelPath) {
  Builder builder(context);
  llvm::SmallVector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  TensorProto &valuesProto = *tensor.mutable_values();
  auto elementOf = [&](int32_t dataType) -> Type {
    switch (dataType) {
    case TensorProto::FLOAT: return builder.getF32Type();
    case TensorProto::DOUBLE: return builder.getF64Type();
    case TensorProto::FLOAT16: return builder.getF16Type();
    case TensorProto::INT64: return builder.getI64Type();
    case TensorProto::INT32: return builder.getI32Type();
    case TensorProto::INT8: return builder.getIntegerType(8);
    case TensorProto::UINT8: return builder.getIntegerType(8, false);
    default: return {};
    }
  };
  Type element = elementOf(valuesProto.data_type());
  if (!element)
    return dataError("unsupported sparse tensor element type " +
                   tensorElementTypeName(valuesProto.data_type()));
  int64_t nonZeros = valuesProto.dims_size() ? valuesProto.dims(0) : 0;
  auto values = buildElementsAttr(
      valuesProto, RankedTensorType::get({nonZeros}, element), stash,
      modelPath, SIZE_MAX);
  if (!values)
    return values.takeError();
  TensorProto &indicesProto = *tensor.mutable_indices();
  llvm::SmallVector<int64_t> indexDims(indicesProto.dims().begin(),
                                       indicesProto.dims().end());
  auto indices = buildElementsAttr(
      indicesProto, RankedTensorType::get(indexDims, builder.getI64Type()),
      stash, modelPath, SIZE_MAX);
  if (!indices)
    return indices.takeError();
  auto flat = llvm::cast<DenseElementsAttr>(*indices).getValues<int64_t>();
  // ONNX allows linearized indices ([NNZ]); MLIR wants coordinates.
  llvm::SmallVector<int64_t> coordinates;
  int64_t rank = dims.size();
  if (indexDims.size() == 1) {
    for (int64_t linear : flat) {
      llvm::SmallVector<int64_t> point(rank);
      for (int64_t d = rank - 1; d >= 0; --d) {
        point[d] = dims[d] ? linear % dims[d] : 0;
        linear = dims[d] ? linear / dims[d] : 0;
      }
      coordinates.append(point);
    }
  } else {
    coordinates.assign(flat.begin(), flat.end());
  }
  auto indexType =
      RankedTensorType::get({nonZeros, rank}, builder.getI64Type());
  return ElementsAttr(SparseElementsAttr::get(
      RankedTensorType::get(dims, element),
      DenseElementsAttr::get(indexType, llvm::ArrayRef(coordinates)),
      llvm::cast<DenseElementsAttr>(*values)));
}

int32_t mncc::onnxDataTypeOf(Type type) {
  if (type.isF32()) return TensorProto::FLOAT;
  if (type.isF64()) return TensorProto::DOUBLE;
  if (type.isF16()) return TensorProto::FLOAT16;
  if (type.isBF16()) return TensorProto::BFLOAT16;
  if (auto complex = llvm::dyn_cast<ComplexType>(type)) {
    if (complex.getElementType().isF32()) return TensorProto::COMPLEX64;
    if (complex.getElementType().isF64()) return TensorProto::COMPLEX128;
    return TensorProto::UNDEFINED;
  }
  if (auto integer = llvm::dyn_cast<IntegerType>(type)) {
    bool isUnsigned = integer.isUnsigned();
    switch (integer.getWidth()) {
    case 1: return TensorProto::BOOL;
    case 8: return isUnsigned ? TensorProto::UINT8 : TensorProto::INT8;
    case 16: return isUnsigned ? TensorProto::UINT16 : TensorProto::INT16;
    case 32: return isUnsigned ? TensorProto::UINT32 : TensorProto::INT32;
    case 64: return isUnsigned ? TensorProto::UINT64 : TensorProto::INT64;
    default: return TensorProto::UNDEFINED;
    }
  }
  if (llvm::isa<mncc::onnx::StringType>(type))
    return TensorProto::STRING;
  return TensorProto::UNDEFINED;
}

llvm::Expected<std::string> mncc::rawDataOf(ElementsAttr attribute) {
  auto type = llvm::cast<ShapedType>(attribute.getType());
  if (auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(attribute)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return dataError("the data of resource '" +
                     resource.getRawHandle().getKey() + "' is missing");
    llvm::ArrayRef<char> data = blob->getData();
    return std::string(data.begin(), data.end());
  }
  auto dense = llvm::dyn_cast<DenseElementsAttr>(attribute);
  if (!dense)
    return dataError("only dense and dense_resource tensors can be exported");
  if (type.getElementType().isInteger(1)) {
    std::string bytes;
    for (bool bit : dense.getValues<bool>())
      bytes.push_back(bit ? 1 : 0);
    return bytes;
  }
  llvm::ArrayRef<char> data = dense.getRawData();
  if (!dense.isSplat())
    return std::string(data.begin(), data.end());
  std::string bytes;
  bytes.reserve(data.size() * type.getNumElements());
  for (int64_t i = 0; i < type.getNumElements(); ++i)
    bytes.append(data.begin(), data.end());
  return bytes;
}
