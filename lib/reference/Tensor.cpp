//===- Tensor.cpp - Host tensors of the reference executor ----------------===//

#include "mncc/reference/Tensor.h"

#include <cmath>
#include <cstdlib>

using namespace mncc::reference;

size_t mncc::reference::dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::UInt8:
  case DType::Int8:
  case DType::Bool:
    return 1;
  case DType::UInt16:
  case DType::Int16:
  case DType::Float16:
  case DType::BFloat16:
    return 2;
  case DType::Float32:
  case DType::Int32:
  case DType::UInt32:
    return 4;
  case DType::Int64:
  case DType::Float64:
  case DType::UInt64:
  case DType::Complex64:
    return 8;
  case DType::Complex128:
    return 16;
  default:
    return 0;
  }
}

const char *mncc::reference::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::Float32:
    return "float";
  case DType::UInt8:
    return "uint8";
  case DType::Int8:
    return "int8";
  case DType::UInt16:
    return "uint16";
  case DType::Int16:
    return "int16";
  case DType::Int32:
    return "int32";
  case DType::Int64:
    return "int64";
  case DType::String:
    return "string";
  case DType::Bool:
    return "bool";
  case DType::Float16:
    return "float16";
  case DType::Float64:
    return "double";
  case DType::UInt32:
    return "uint32";
  case DType::UInt64:
    return "uint64";
  case DType::Complex64:
    return "complex64";
  case DType::Complex128:
    return "complex128";
  case DType::BFloat16:
    return "bfloat16";
  default:
    return "undefined";
  }
}

bool mncc::reference::isFloatingPoint(DType dtype) {
  return dtype == DType::Float32 || dtype == DType::Float64 ||
         dtype == DType::Float16 || dtype == DType::BFloat16;
}

bool mncc::reference::isSignedInteger(DType dtype) {
  return dtype == DType::Int8 || dtype == DType::Int16 ||
         dtype == DType::Int32 || dtype == DType::Int64;
}

bool mncc::reference::isUnsignedInteger(DType dtype) {
  return dtype == DType::UInt8 || dtype == DType::UInt16 ||
         dtype == DType::UInt32 || dtype == DType::UInt64;
}

Float16::Float16(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t magnitude = x & 0x7fffffff;
  if (magnitude > 0x7f800000) { // NaN: keep it quiet
    bits = sign | 0x7e00;
    return;
  }
  if (magnitude >= 0x477ff000) { // rounds to infinity
    bits = sign | 0x7c00;
    return;
  }
  if (magnitude < 0x38800000) {                    // subnormal or zero in half
    float scaled = std::fabs(value) * 16777216.0f; // 2^24
    uint32_t rounded = static_cast<uint32_t>(std::nearbyint(scaled));
    bits = sign | rounded;
    return;
  }
  // Normal: round the 13 dropped bits to nearest even.
  uint32_t exponent = ((magnitude >> 23) - 112) << 10;
  uint32_t mantissa = (magnitude >> 13) & 0x3ff;
  uint32_t rest = magnitude & 0x1fff;
  uint32_t half = exponent | mantissa;
  if (rest > 0x1000 || (rest == 0x1000 && (mantissa & 1)))
    ++half;
  bits = sign | half;
}

Float16::operator float() const {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  uint32_t x;
  if (exponent == 0) {
    float value = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -value : value;
  }
  if (exponent == 31)
    x = sign | 0x7f800000 | (mantissa << 13);
  else
    x = sign | ((exponent + 112) << 23) | (mantissa << 13);
  float value;
  std::memcpy(&value, &x, 4);
  return value;
}

BFloat16::BFloat16(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  if ((x & 0x7fffffff) > 0x7f800000) {
    bits = static_cast<uint16_t>((x >> 16) | 0x40);
    return;
  }
  uint32_t roundingBias = 0x7fff + ((x >> 16) & 1);
  bits = static_cast<uint16_t>((x + roundingBias) >> 16);
}

BFloat16::operator float() const {
  uint32_t x = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &x, 4);
  return value;
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape)
    : Tensor(dtype, std::move(shape), true) {}

Tensor Tensor::uninitialized(DType dtype, std::vector<int64_t> shape) {
  return Tensor(dtype, std::move(shape), false);
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape, bool zero)
    : dtype_(dtype), shape_(std::move(shape)),
      storage_(std::make_shared<Storage>()) {
  int64_t count = numElements();
  if (dtype == DType::String) {
    storage_->strings.resize(count);
    return;
  }
  size_t bytes = count * dtypeSize(dtype);
  // 64-byte aligned, and never a null pointer, even for empty tensors.
  size_t rounded = ((bytes + 63) / 64) * 64;
  void *memory = std::aligned_alloc(64, rounded ? rounded : 64);
  if (memory && zero)
    std::memset(memory, 0, rounded ? rounded : 64);
  storage_->bytes = {static_cast<unsigned char *>(memory),
                     [](unsigned char *p) { std::free(p); }};
  storage_->size = bytes;
}

int64_t Tensor::numElements() const {
  int64_t count = 1;
  for (int64_t dim : shape_)
    count *= dim;
  return count;
}

void *Tensor::raw() {
  return storage_ ? storage_->bytes.get() + offset_ : nullptr;
}
const void *Tensor::raw() const {
  return storage_ ? storage_->bytes.get() + offset_ : nullptr;
}

Tensor Tensor::reshaped(std::vector<int64_t> shape) const {
  Tensor result = *this;
  result.shape_ = std::move(shape);
  return result;
}

std::optional<Tensor> Tensor::view(const Tensor &whole, size_t byteOffset,
                                   DType dtype, std::vector<int64_t> shape) {
  if (!whole.storage_ || whole.dtype_ == DType::String ||
      dtype == DType::String)
    return std::nullopt;
  Tensor part;
  part.dtype_ = dtype;
  part.shape_ = std::move(shape);
  if (byteOffset + part.byteSize() > whole.byteSize())
    return std::nullopt;
  part.storage_ = whole.storage_;
  part.offset_ = whole.offset_ + byteOffset;
  return part;
}

Tensor Tensor::clone() const {
  Tensor copy(dtype_, shape_);
  if (dtype_ == DType::String)
    copy.strings() = strings();
  else if (byteSize())
    std::memcpy(copy.raw(), raw(), byteSize());
  return copy;
}

double Tensor::elementAsDouble(int64_t index) const {
  double result = 0;
  dispatchNumeric(dtype_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::complex<float>> ||
                  std::is_same_v<T, std::complex<double>>)
      result = static_cast<double>(data<T>()[index].real());
    else
      result = static_cast<double>(data<T>()[index]);
  });
  return result;
}

int64_t Tensor::elementAsInt64(int64_t index) const {
  switch (dtype_) {
  case DType::Int64:
    return data<int64_t>()[index];
  case DType::Int32:
    return data<int32_t>()[index];
  case DType::UInt64:
    return static_cast<int64_t>(data<uint64_t>()[index]);
  default:
    return static_cast<int64_t>(elementAsDouble(index));
  }
}
