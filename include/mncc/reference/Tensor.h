//===- Tensor.h - Host tensors of the reference executor ------*- C++ -*-===//
//
// pfvm:cpu, the host reference executor, computes on these: a dense
// row-major tensor of any ONNX element type, and the values ONNX passes
// between nodes (a tensor, a sequence of tensors, or an empty optional).
// Nothing here depends on MLIR, so kernels build and test on their own.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_REFERENCE_TENSOR_H
#define MNCC_REFERENCE_TENSOR_H

#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mncc::reference {

/// ONNX element types, numbered as TensorProto.DataType.
enum class DType : int32_t {
  Undefined = 0,
  Float32 = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Float64 = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
};

/// Bytes per element (0 for String and Undefined).
size_t dtypeSize(DType dtype);
/// ONNX's name: "float", "int64", "float16", ...
const char *dtypeName(DType dtype);
bool isFloatingPoint(DType dtype); // float16, bfloat16, float, double
bool isSignedInteger(DType dtype);
bool isUnsignedInteger(DType dtype);

//===----------------------------------------------------------------------===//
// The size check of every allocation whose size comes from data
//===----------------------------------------------------------------------===//
//
// A shape computed at run time (ConstantOfShape, Range, Expand, Tile, a
// broadcast of two small tensors), a .npy header or an initializer's dims
// can ask for any number of elements. Every tensor allocation goes through
// checkTensorSize: an element count or byte size that does not fit in 63
// bits, or tensor data beyond the memory limit, is an error that names the
// type and shape, never a wrapped-around count, a crash or an abort.
//
// The limit counts the bytes of every live tensor of the process (views
// share their storage and count once): a model whose tensors together do
// not fit fails as cleanly as one huge tensor. Its default is three
// quarters of the machine's physical memory, leaving room for the rest of
// the process; the tools set it with --max-memory.

/// Elements and bytes of a tensor, or why it cannot be allocated.
struct TensorSize {
  int64_t elements = 0;
  uint64_t bytes = 0;
  /// Empty when the tensor can be allocated now.
  std::string error;
  bool ok() const { return error.empty(); }
};

/// The element count and byte size of a `dtype` tensor of `shape`, checked:
/// a negative dimension, an overflow of the count or the bytes, or more
/// bytes than the memory limit leaves free make `error` say so.
TensorSize checkTensorSize(DType dtype, const std::vector<int64_t> &shape);

/// The most bytes of tensor data that may be live at once.
uint64_t memoryLimit();
/// Sets it; 0 restores the default.
void setMemoryLimit(uint64_t bytes);
/// Three quarters of the machine's physical memory.
uint64_t defaultMemoryLimit();
/// Bytes of tensor data live now.
uint64_t liveTensorBytes();
/// Parses a --max-memory value: bytes, or a number with K, M, G or T
/// (powers of 1024), e.g. "512M", "16G". False when malformed or 0.
bool parseMemorySize(std::string_view text, uint64_t &bytes);
/// "12.5 GiB", "300 MiB", "512 bytes".
std::string formatBytes(uint64_t bytes);

/// What a tensor allocation throws when checkTensorSize fails while a
/// kernel runs (runKernel in Kernel.h catches it and returns the message
/// as the node's error). Outside a kernel nothing is thrown: callers check
/// first (the .npy and .pb readers, the initializers), and an unchecked
/// allocation that fails ends the process with the message and exit
/// status 1 rather than crash. Exceptions never leave the reference
/// library, which alone is built with them.
struct AllocationError {
  std::string message;
};

namespace detail {
/// While one is alive on a thread, a failed allocation on that thread
/// throws AllocationError (runKernel makes one around each kernel).
struct KernelScope {
  KernelScope();
  ~KernelScope();
  KernelScope(const KernelScope &) = delete;
  /// Whether the calling thread is inside one.
  static bool active();
};
} // namespace detail

/// IEEE half and bfloat16, stored as their bits; arithmetic goes through
/// float (ONNX's reference does the same).
struct Float16 {
  uint16_t bits = 0;
  Float16() = default;
  explicit Float16(float value);
  operator float() const;
};
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float value); // round to nearest even, like ONNX
  operator float() const;
};

/// The C++ type of each element type, for templates.
template <DType D> struct CppTypeOf;
template <> struct CppTypeOf<DType::Float32> { using type = float; };
template <> struct CppTypeOf<DType::Float64> { using type = double; };
template <> struct CppTypeOf<DType::Float16> { using type = Float16; };
template <> struct CppTypeOf<DType::BFloat16> { using type = BFloat16; };
template <> struct CppTypeOf<DType::Int8> { using type = int8_t; };
template <> struct CppTypeOf<DType::Int16> { using type = int16_t; };
template <> struct CppTypeOf<DType::Int32> { using type = int32_t; };
template <> struct CppTypeOf<DType::Int64> { using type = int64_t; };
template <> struct CppTypeOf<DType::UInt8> { using type = uint8_t; };
template <> struct CppTypeOf<DType::UInt16> { using type = uint16_t; };
template <> struct CppTypeOf<DType::UInt32> { using type = uint32_t; };
template <> struct CppTypeOf<DType::UInt64> { using type = uint64_t; };
template <> struct CppTypeOf<DType::Bool> { using type = bool; };
template <> struct CppTypeOf<DType::Complex64> {
  using type = std::complex<float>;
};
template <> struct CppTypeOf<DType::Complex128> {
  using type = std::complex<double>;
};
template <> struct CppTypeOf<DType::String> { using type = std::string; };

/// A dense, row-major tensor. Copies share storage (like a handle); use
/// clone() for a deep copy. Numeric storage is 64-byte aligned.
class Tensor {
public:
  Tensor() = default;
  /// Zero-filled (empty strings for String). The size is checked
  /// (checkTensorSize; see AllocationError for what a failure does).
  Tensor(DType dtype, std::vector<int64_t> shape);
  /// Like the constructor, but a size that fails the check gives
  /// std::nullopt and the message in `error`, anywhere: for code outside
  /// the kernels whose shapes come from data.
  static std::optional<Tensor> tryAllocate(DType dtype,
                                           std::vector<int64_t> shape,
                                           std::string &error,
                                           bool zero = true);
  /// Like the constructor but leaves numeric elements unset, for kernels
  /// that write every element anyway: zero-filling large activations costs
  /// a pass over memory per operator.
  static Tensor uninitialized(DType dtype, std::vector<int64_t> shape);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  /// Checked when the tensor was made, so it cannot overflow.
  int64_t numElements() const;
  size_t byteSize() const { return numElements() * dtypeSize(dtype_); }
  bool defined() const { return dtype_ != DType::Undefined; }

  template <typename T> T *data() { return static_cast<T *>(raw()); }
  template <typename T> const T *data() const {
    return static_cast<const T *>(raw());
  }
  void *raw();
  const void *raw() const;
  /// The elements of a String tensor.
  std::vector<std::string> &strings() { return storage_->strings; }
  const std::vector<std::string> &strings() const { return storage_->strings; }

  /// Same data, new shape (the element count must match).
  Tensor reshaped(std::vector<int64_t> shape) const;
  /// A numeric tensor over part of `whole`'s elements, from byte
  /// `byteOffset` on, sharing its storage: how a producer writes straight
  /// into its part of a later Concat's output. Null when the part does
  /// not fit inside `whole`.
  static std::optional<Tensor> view(const Tensor &whole, size_t byteOffset,
                                    DType dtype, std::vector<int64_t> shape);
  Tensor clone() const;

  /// Element `index` (row-major) converted to double / int64, for kernels
  /// that read index tensors or scalars of any type.
  double elementAsDouble(int64_t index) const;
  int64_t elementAsInt64(int64_t index) const;

  template <typename T>
  static Tensor fromVector(DType dtype, std::vector<int64_t> shape,
                           const std::vector<T> &values) {
    Tensor tensor(dtype, std::move(shape));
    if constexpr (std::is_same_v<T, std::string>)
      tensor.strings() = values;
    else
      for (size_t i = 0; i < values.size(); ++i)
        tensor.template data<T>()[i] = values[i];
    return tensor;
  }
  template <typename T> std::vector<T> toVector() const {
    if constexpr (std::is_same_v<T, std::string>)
      return strings();
    else
      return std::vector<T>(data<T>(), data<T>() + numElements());
  }

private:
  Tensor(DType dtype, std::vector<int64_t> shape, bool zero);
  /// Allocates the storage of a size that passed the check (counted in
  /// liveTensorBytes); false when the system has no memory for it.
  bool allocate(const TensorSize &size, bool zero);
  struct Storage {
    std::unique_ptr<unsigned char[], void (*)(unsigned char *)> bytes{
        nullptr, [](unsigned char *) {}};
    size_t size = 0;
    /// The bytes liveTensorBytes counts for this storage.
    uint64_t counted = 0;
    std::vector<std::string> strings;
    Storage() = default;
    Storage(const Storage &) = delete;
    ~Storage();
  };
  DType dtype_ = DType::Undefined;
  std::vector<int64_t> shape_;
  std::shared_ptr<Storage> storage_;
  /// Where this tensor's elements start in the storage (views).
  size_t offset_ = 0;
};

/// What flows along an ONNX edge.
struct Value {
  enum class Kind { Tensor, Sequence, Empty };
  Kind kind = Kind::Empty;
  Tensor tensor;
  std::vector<Tensor> sequence;
  /// Whether it is an ONNX optional (Empty is always optional).
  bool optional = false;

  Value() = default;
  Value(Tensor t) : kind(Kind::Tensor), tensor(std::move(t)) {}
  static Value makeSequence(std::vector<Tensor> items) {
    Value value;
    value.kind = Kind::Sequence;
    value.sequence = std::move(items);
    return value;
  }
  static Value makeEmptyOptional() {
    Value value;
    value.optional = true;
    return value;
  }
  bool isTensor() const { return kind == Kind::Tensor; }
  bool isSequence() const { return kind == Kind::Sequence; }
  bool isEmpty() const { return kind == Kind::Empty; }
};

/// Calls fn(T{}) with T the C++ type of a numeric `dtype` (every type but
/// String and Undefined). Returns false for those two.
template <typename Fn> bool dispatchNumeric(DType dtype, Fn &&fn) {
  switch (dtype) {
  case DType::Float32:
    fn(float{});
    return true;
  case DType::Float64:
    fn(double{});
    return true;
  case DType::Float16:
    fn(Float16{});
    return true;
  case DType::BFloat16:
    fn(BFloat16{});
    return true;
  case DType::Int8:
    fn(int8_t{});
    return true;
  case DType::Int16:
    fn(int16_t{});
    return true;
  case DType::Int32:
    fn(int32_t{});
    return true;
  case DType::Int64:
    fn(int64_t{});
    return true;
  case DType::UInt8:
    fn(uint8_t{});
    return true;
  case DType::UInt16:
    fn(uint16_t{});
    return true;
  case DType::UInt32:
    fn(uint32_t{});
    return true;
  case DType::UInt64:
    fn(uint64_t{});
    return true;
  case DType::Bool:
    fn(bool{});
    return true;
  case DType::Complex64:
    fn(std::complex<float>{});
    return true;
  case DType::Complex128:
    fn(std::complex<double>{});
    return true;
  default:
    return false;
  }
}

/// The DType of a C++ element type.
template <typename T> constexpr DType dtypeOf();
template <> constexpr DType dtypeOf<float>() { return DType::Float32; }
template <> constexpr DType dtypeOf<double>() { return DType::Float64; }
template <> constexpr DType dtypeOf<Float16>() { return DType::Float16; }
template <> constexpr DType dtypeOf<BFloat16>() { return DType::BFloat16; }
template <> constexpr DType dtypeOf<int8_t>() { return DType::Int8; }
template <> constexpr DType dtypeOf<int16_t>() { return DType::Int16; }
template <> constexpr DType dtypeOf<int32_t>() { return DType::Int32; }
template <> constexpr DType dtypeOf<int64_t>() { return DType::Int64; }
template <> constexpr DType dtypeOf<uint8_t>() { return DType::UInt8; }
template <> constexpr DType dtypeOf<uint16_t>() { return DType::UInt16; }
template <> constexpr DType dtypeOf<uint32_t>() { return DType::UInt32; }
template <> constexpr DType dtypeOf<uint64_t>() { return DType::UInt64; }
template <> constexpr DType dtypeOf<bool>() { return DType::Bool; }
template <> constexpr DType dtypeOf<std::complex<float>>() {
  return DType::Complex64;
}
template <> constexpr DType dtypeOf<std::complex<double>>() {
  return DType::Complex128;
}
template <> constexpr DType dtypeOf<std::string>() { return DType::String; }

} // namespace mncc::reference

#endif // MNCC_REFERENCE_TENSOR_H
