//===- ValueFiles.cpp - Model inputs and outputs as files -----------------===//

#include "mncc/interpreter/ValueFiles.h"

#include "mncc/dialects/onnx/OnnxDialect.h"
#include "mncc/onnx/TensorIo.h"
#include "mncc/reference/Broadcast.h"
#include "mncc/reference/Npy.h"

#include "llvm/Support/Path.h"

#include <cmath>
#include <cstring>

using namespace mncc;
using reference::DType;
using reference::Tensor;
using reference::Value;

static llvm::Error fileError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<Value> mncc::readValueFile(llvm::StringRef path,
                                          mlir::Type type) {
  if (path.ends_with(".npy")) {
    Tensor tensor;
    reference::Status status = reference::readNpy(path.str(), tensor);
    if (!status.ok())
      return fileError(status.message());
    return Value(std::move(tensor));
  }
  ValueProtoKind kind = ValueProtoKind::Tensor;
  if (llvm::isa<onnx::SeqType>(type))
    kind = ValueProtoKind::Sequence;
  else if (llvm::isa<onnx::OptType>(type))
    kind = ValueProtoKind::Optional;
  auto value = readValueProtoFile(path, kind);
  // ONNX 1.12 wrote bfloat16 test data as uint16 tensors of the same bits.
  auto tensorType = llvm::dyn_cast<mlir::TensorType>(type);
  if (value && value->isTensor() && tensorType &&
      tensorType.getElementType().isBF16() &&
      value->tensor.dtype() == DType::UInt16) {
    Tensor bits(DType::BFloat16, value->tensor.shape());
    std::memcpy(bits.raw(), value->tensor.raw(), bits.byteSize());
    value->tensor = bits;
  }
  return value;
}

llvm::Error mncc::writeOutputFiles(llvm::StringRef stem, llvm::StringRef name,
                                   const Value &value) {
  if (!value.isTensor())
    return fileError("output '" + name +
                     "' is not a tensor; only tensors can be written");
  const Tensor &tensor = value.tensor;
  if (tensor.dtype() != DType::BFloat16 && tensor.dtype() != DType::String) {
    reference::Status status =
        reference::writeNpy((stem + ".npy").str(), tensor);
    if (!status.ok())
      return fileError(status.message());
  }
  return writeTensorProtoFile((stem + ".pb").str(), tensor, name);
}

static std::string compareTensors(const Tensor &actual, const Tensor &expected,
                                  double rtol, double atol, bool shapeOnly) {
  if (actual.dtype() != expected.dtype())
    return std::string("element type ") + reference::dtypeName(actual.dtype()) +
           ", expected " + reference::dtypeName(expected.dtype());
  if (actual.shape() != expected.shape())
    return "shape " + reference::shapeToString(actual.shape()) +
           ", expected " + reference::shapeToString(expected.shape());
  if (shapeOnly)
    return "";
  int64_t count = expected.numElements();
  if (expected.dtype() == DType::String) {
    for (int64_t i = 0; i < count; ++i)
      if (actual.strings()[i] != expected.strings()[i])
        return "element " + std::to_string(i) + " is '" +
               actual.strings()[i] + "', expected '" +
               expected.strings()[i] + "'";
    return "";
  }
  bool floating = reference::isFloatingPoint(expected.dtype()) ||
                  expected.dtype() == DType::Complex64 ||
                  expected.dtype() == DType::Complex128;
  if (!floating) {
    if (std::memcmp(actual.raw(), expected.raw(), expected.byteSize()) == 0)
      return "";
    for (int64_t i = 0; i < count; ++i)
      if (actual.elementAsInt64(i) != expected.elementAsInt64(i))
        return "element " + std::to_string(i) + " is " +
               std::to_string(actual.elementAsInt64(i)) + ", expected " +
               std::to_string(expected.elementAsInt64(i));
    return "a value differs";
  }
  // Complex numbers compare as pairs of reals.
  int64_t reals = count;
  const Tensor *a = &actual, *b = &expected;
  Tensor actualReals, expectedReals;
  if (expected.dtype() == DType::Complex64 ||
      expected.dtype() == DType::Complex128) {
    DType part = expected.dtype() == DType::Complex64 ? DType::Float32
                                                      : DType::Float64;
    reals = 2 * count;
    actualReals = Tensor(part, {reals});
    expectedReals = Tensor(part, {reals});
    std::memcpy(actualReals.raw(), actual.raw(), actual.byteSize());
    std::memcpy(expectedReals.raw(), expected.raw(), expected.byteSize());
    a = &actualReals;
    b = &expectedReals;
  }
  int64_t mismatches = 0, first = -1;
  double worst = 0;
  for (int64_t i = 0; i < reals; ++i) {
    double x = a->elementAsDouble(i), y = b->elementAsDouble(i);
    if (std::isnan(x) && std::isnan(y))
      continue;
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y && (++mismatches, first < 0))
        first = i;
      continue;
    }
    double error = std::fabs(x - y);
    if (error > atol + rtol * std::fabs(y) || std::isnan(x) != std::isnan(y)) {
      if (first < 0)
        first = i;
      ++mismatches;
      worst = std::max(worst, error);
    }
  }
  if (!mismatches)
    return "";
  return std::to_string(mismatches) + " of " + std::to_string(reals) +
         " values differ beyond rtol " + std::to_string(rtol) + ", atol " +
         std::to_string(atol) + " (first at " + std::to_string(first) +
         ": " + std::to_string(a->elementAsDouble(first)) + ", expected " +
         std::to_string(b->elementAsDouble(first)) + ")";
}

std::string mncc::compareValues(const Value &actual, const Value &expected,
                                double rtol, double atol, bool shapeOnly) {
  if (actual.kind != expected.kind) {
    auto kindName = [](const Value &value) {
      return value.isTensor() ? "a tensor"
             : value.isSequence() ? "a sequence"
                                  : "an empty optional";
    };
    return std::string("got ") + kindName(actual) + ", expected " +
           kindName(expected);
  }
  if (actual.isTensor())
    return compareTensors(actual.tensor, expected.tensor, rtol, atol,
                          shapeOnly);
  if (actual.isSequence()) {
    if (actual.sequence.size() != expected.sequence.size())
      return "sequence of " + std::to_string(actual.sequence.size()) +
             " tensors, expected " + std::to_string(expected.sequence.size());
    for (size_t i = 0; i < actual.sequence.size(); ++i) {
      std::string problem = compareTensors(
          actual.sequence[i], expected.sequence[i], rtol, atol, shapeOnly);
      if (!problem.empty())
        return "sequence element " + std::to_string(i) + ": " + problem;
    }
  }
  return "";
}
