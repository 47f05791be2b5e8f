//===- Tensor.cpp - Host tensors of the reference executor ----------------===//

#include "mncc/reference/Tensor.h"

#include <algorithm>
#include <atomic>
#include <cerrno> // program_invocation_short_name
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

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

//===----------------------------------------------------------------------===//
// The size check and the memory limit
//===----------------------------------------------------------------------===//

namespace {

std::atomic<uint64_t> liveBytes{0};
std::atomic<uint64_t> limitBytes{0}; // 0: the default
thread_local int kernelScopeDepth = 0;

std::string describeTensor(DType dtype, const std::vector<int64_t> &shape) {
  std::string text = dtypeName(dtype);
  text += shape.empty() ? " scalar" : " ";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "x" : "") + std::to_string(shape[i]);
  return text;
}

/// Bytes an element takes in memory: a String element is a std::string.
uint64_t storedElementSize(DType dtype) {
  return dtype == DType::String ? sizeof(std::string) : dtypeSize(dtype);
}

} // namespace

detail::KernelScope::KernelScope() { ++kernelScopeDepth; }
detail::KernelScope::~KernelScope() { --kernelScopeDepth; }
bool detail::KernelScope::active() { return kernelScopeDepth > 0; }

uint64_t mncc::reference::defaultMemoryLimit() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return uint64_t(16) << 30; // unknown: assume a 16 GiB machine
  return uint64_t(pages) / 4 * 3 * uint64_t(pageSize);
}

uint64_t mncc::reference::memoryLimit() {
  uint64_t limit = limitBytes.load(std::memory_order_relaxed);
  return limit ? limit : defaultMemoryLimit();
}

void mncc::reference::setMemoryLimit(uint64_t bytes) {
  limitBytes.store(bytes, std::memory_order_relaxed);
}

uint64_t mncc::reference::liveTensorBytes() {
  return liveBytes.load(std::memory_order_relaxed);
}

std::string mncc::reference::formatBytes(uint64_t bytes) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB",
                                      "EiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + " bytes";
  double value = double(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", value, units[unit]);
  return text;
}

bool mncc::reference::parseMemorySize(std::string_view text, uint64_t &bytes) {
  if (text.empty())
    return false;
  unsigned shift = 0;
  switch (text.back()) {
  case 'K': case 'k': shift = 10; break;
  case 'M': case 'm': shift = 20; break;
  case 'G': case 'g': shift = 30; break;
  case 'T': case 't': shift = 40; break;
  default: break;
  }
  if (shift)
    text.remove_suffix(1);
  if (text.empty() || text.size() > 19)
    return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    value = value * 10 + uint64_t(c - '0');
  }
  if (value == 0 || (shift && value > (UINT64_MAX >> shift)))
    return false;
  bytes = value << shift;
  return true;
}

namespace {

/// The element count and bytes, checked for negative dimensions and
/// overflow but not against the limit.
TensorSize countTensor(DType dtype, const std::vector<int64_t> &shape) {
  TensorSize size;
  for (int64_t dim : shape)
    if (dim < 0) {
      size.error = describeTensor(dtype, shape) + ": negative dimension";
      return size;
    }
  int64_t count = 1;
  bool overflow = false;
  for (int64_t dim : shape)
    overflow |= __builtin_mul_overflow(count, dim, &count);
  // A zero anywhere makes the tensor empty, whatever the other dimensions.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end())
    return TensorSize{0, 0, ""};
  uint64_t bytes = 0;
  if (overflow || __builtin_mul_overflow(uint64_t(count),
                                         storedElementSize(dtype), &bytes) ||
      bytes > uint64_t(INT64_MAX)) {
    size.error = describeTensor(dtype, shape) +
                 (overflow ? " has more than 2^63 elements"
                           : " needs more than 2^63 bytes");
    return size;
  }
  size.elements = count;
  size.bytes = bytes;
  return size;
}

} // namespace

TensorSize mncc::reference::checkTensorSize(DType dtype,
                                            const std::vector<int64_t> &shape) {
  TensorSize size = countTensor(dtype, shape);
  if (!size.ok())
    return size;
  uint64_t limit = memoryLimit(), live = liveTensorBytes();
  if (size.bytes > limit || live > limit - size.bytes)
    size.error = describeTensor(dtype, shape) + " needs " +
                 formatBytes(size.bytes) +
                 (size.bytes <= limit ? ", with " + formatBytes(live) +
                                            " of tensors live"
                                      : std::string()) +
                 ", over the memory limit of " + formatBytes(limit) +
                 " (--max-memory)";
  return size;
}

Tensor::Storage::~Storage() {
  liveBytes.fetch_sub(counted, std::memory_order_relaxed);
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape)
    : Tensor(dtype, std::move(shape), true) {}

Tensor Tensor::uninitialized(DType dtype, std::vector<int64_t> shape) {
  return Tensor(dtype, std::move(shape), false);
}

std::optional<Tensor> Tensor::tryAllocate(DType dtype,
                                          std::vector<int64_t> shape,
                                          std::string &error, bool zero) {
  TensorSize size = checkTensorSize(dtype, shape);
  Tensor tensor;
  tensor.dtype_ = dtype;
  tensor.shape_ = std::move(shape);
  if (size.ok() && !tensor.allocate(size, zero))
    size.error = describeTensor(dtype, tensor.shape_) + " needs " +
                 formatBytes(size.bytes) + ": out of memory";
  if (!size.ok()) {
    error = size.error;
    return std::nullopt;
  }
  return tensor;
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape, bool zero)
    : dtype_(dtype), shape_(std::move(shape)) {
  TensorSize size = checkTensorSize(dtype, shape_);
  if (size.ok() && !allocate(size, zero))
    size.error = describeTensor(dtype, shape_) + " needs " +
                 formatBytes(size.bytes) + ": out of memory";
  if (size.ok())
    return;
  if (detail::KernelScope::active())
    throw AllocationError{size.error};
  // An allocation outside a kernel that nobody checked: end cleanly rather
  // than hand out a tensor without storage.
  std::fprintf(stderr, "%s: error: %s\n", program_invocation_short_name,
               size.error.c_str());
  std::fflush(stderr);
  std::_Exit(1);
}

bool Tensor::allocate(const TensorSize &size, bool zero) {
  auto storage = std::make_shared<Storage>();
  if (dtype_ == DType::String) {
    storage->strings.resize(size.elements);
  } else {
    // 64-byte aligned, and never a null pointer, even for empty tensors.
    size_t rounded = ((size.bytes + 63) / 64) * 64;
    if (!rounded)
      rounded = 64;
    void *memory = std::aligned_alloc(64, rounded);
    if (!memory)
      return false;
    if (zero)
      std::memset(memory, 0, rounded);
    storage->bytes = {static_cast<unsigned char *>(memory),
                      [](unsigned char *p) { std::free(p); }};
    storage->size = size.bytes;
  }
  storage->counted = size.bytes;
  liveBytes.fetch_add(size.bytes, std::memory_order_relaxed);
  storage_ = std::move(storage);
  return true;
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
  TensorSize size = countTensor(dtype, shape);
  if (!size.ok() || byteOffset > whole.byteSize() ||
      size.bytes > whole.byteSize() - byteOffset)
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
