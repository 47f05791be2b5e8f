//===- Kernel.h - Operator kernels of the reference executor --*- C++ -*-===//
//
// A kernel computes one ONNX operator exactly as ONNX defines it, for every
// element type ONNX allows. It reads its inputs and attributes from a
// KernelContext and sets its outputs; it reports bad input through Status,
// never by throwing or aborting. Kernels are found by (domain, op type) in
// one registry, so dispatch is a table lookup: the interpreter over the
// onnx dialect uses it today, the one over the graph dialect will later.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_REFERENCE_KERNEL_H
#define MNCC_REFERENCE_KERNEL_H

#include "mncc/reference/Tensor.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mncc::reference {

/// Success, or a message saying what is wrong (the interpreter adds which
/// node).
class Status {
public:
  static Status success() { return Status(); }
  static Status error(std::string message) {
    Status status;
    status.message_ = std::move(message);
    status.ok_ = false;
    return status;
  }
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const std::string &message() const { return message_; }

private:
  bool ok_ = true;
  std::string message_;
};

/// An ONNX attribute value.
struct Attribute {
  enum class Kind {
    Float,
    Int,
    String,
    Tensor,
    Graph,
    Floats,
    Ints,
    Strings,
    Tensors,
    Graphs,
    TypeProto
  };
  Kind kind = Kind::Int;
  float f = 0;
  int64_t i = 0;
  std::string s;
  reference::Tensor t;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<reference::Tensor> tensors;
  /// For TypeProto: the element type of the tensor type it names.
  DType elementType = DType::Undefined;
};

/// An activation the interpreter fused into the node before it (Conv or
/// Add, then Relu or Clip): the kernel clamps each output to [lo, hi] exactly
/// as the Clip kernel does (v < lo ? lo : v, then v > hi ? hi : v), while the
/// value is still in cache. Relu is lo = 0, hi = +infinity, so NaN and -0 pass
/// as they do through Relu.
struct FusedActivation {
  float lo, hi;
  /// The clamp on one value, in the compute type T.
  template <typename T> T apply(T value) const {
    value = value < T(lo) ? T(lo) : value;
    return value > T(hi) ? T(hi) : value;
  }
};

/// What a kernel derives once from its node's constant inputs and keeps
/// for later runs of the same prepared program: a Conv's weights packed for
/// the GEMM. Runs may share a program across threads, so get() builds the
/// value once under a lock; kernels read it, never change it.
class NodeCache {
public:
  /// The value `build` returned the first time (build returns a
  /// std::shared_ptr<const T>); later calls return it. A kernel keeps one
  /// type of value in its node's cache.
  template <typename T, typename Build>
  std::shared_ptr<const T> get(Build &&build) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!value_)
      value_ = std::shared_ptr<const T>(build());
    return std::static_pointer_cast<const T>(value_);
  }

private:
  std::mutex mutex_;
  std::shared_ptr<const void> value_;
};

/// What a kernel sees of its node.
class KernelContext {
public:
  virtual ~KernelContext() = default;

  virtual std::string_view opType() const = 0;

  /// Inputs as the node lists them; an omitted optional input is nullptr.
  virtual size_t numInputs() const = 0;
  virtual const Value *input(size_t index) const = 0;
  /// The input as a tensor, or nullptr if omitted or not a tensor.
  const Tensor *inputTensor(size_t index) const {
    const Value *value = index < numInputs() ? input(index) : nullptr;
    return value && value->isTensor() ? &value->tensor : nullptr;
  }

  /// Outputs the node asks for (trailing optional outputs may be absent).
  virtual size_t numOutputs() const = 0;
  /// Whether the node wants output `index` (it may leave it unnamed).
  virtual bool wantsOutput(size_t index) const = 0;
  virtual void setOutput(size_t index, Value value) = 0;
  /// A numeric tensor for output `index`, its elements unset: the kernel
  /// must write them all. The interpreter may hand out the output's part
  /// of a later Concat's output, which the Concat then need not copy.
  /// Not virtual: the allocation, which may throw AllocationError, happens
  /// here in the kernel's code, never in the context's.
  Tensor allocateOutput(size_t index, DType dtype, std::vector<int64_t> shape) {
    if (std::optional<Tensor> placed = placeOutput(index, dtype, shape))
      return std::move(*placed);
    return Tensor::uninitialized(dtype, std::move(shape));
  }
  /// Where output `index` goes when the context has a place for it (a
  /// part of a tensor it holds); std::nullopt to allocate it. Must not
  /// throw: allocate with Tensor::tryAllocate.
  virtual std::optional<Tensor> placeOutput(size_t index, DType dtype,
                                            const std::vector<int64_t> &shape) {
    (void)index, (void)dtype, (void)shape;
    return std::nullopt;
  }

  virtual const Attribute *attribute(std::string_view name) const = 0;
  bool hasAttribute(std::string_view name) const {
    return attribute(name) != nullptr;
  }
  int64_t getInt(std::string_view name, int64_t fallback) const;
  float getFloat(std::string_view name, float fallback) const;
  std::string getString(std::string_view name, std::string_view fallback) const;
  std::vector<int64_t> getInts(std::string_view name,
                               std::vector<int64_t> fallback = {}) const;
  std::vector<float> getFloats(std::string_view name,
                               std::vector<float> fallback = {}) const;
  std::vector<std::string>
  getStrings(std::string_view name,
             std::vector<std::string> fallback = {}) const;

  /// Runs the subgraph held by graph attribute `name` (If, Loop, Scan) on
  /// `inputs` (its formal inputs, in order); it may read the values of the
  /// enclosing graphs.
  virtual Status runGraph(std::string_view name,
                          const std::vector<Value> &inputs,
                          std::vector<Value> &outputs) = 0;

  /// A seed for random operators without a `seed` attribute: fixed per
  /// node, so the same model and inputs give the same outputs.
  virtual uint64_t defaultSeed() const = 0;

  /// The activation fused into this node, or nullptr. The interpreter
  /// fuses only into float32 Conv and Add.
  virtual const FusedActivation *fusedActivation() const { return nullptr; }

  /// The node's cache when input `index` is, on this run, the initializer
  /// the model gives it (so it is the same on every run and what a kernel
  /// derives from it can be kept); else nullptr.
  virtual NodeCache *cacheForConstantInput(size_t index) const {
    (void)index;
    return nullptr;
  }
};

using KernelFn = Status (*)(KernelContext &context);

/// Runs `kernel` on `context`. Every call of a kernel goes through here: an
/// allocation that fails checkTensorSize (or the system's allocator) while
/// the kernel runs becomes its error Status, so a shape computed from data
/// is an error, never a crash. The kernels build with exceptions for this
/// alone; none leaves this function.
Status runKernel(KernelFn kernel, KernelContext &context);
/// A kernel with parameters of its own (the device reference's products).
using KernelFunction = std::function<Status(KernelContext &context)>;
/// runKernel for such a kernel.
Status runKernelFunction(const KernelFunction &kernel, KernelContext &context);

/// Registers a kernel for an operator of `domain` ("" is ai.onnx).
/// Registering the same operator twice keeps the first.
void registerKernel(std::string_view domain, std::string_view opType,
                    KernelFn kernel);
/// The kernel of an operator, or nullptr.
KernelFn lookupKernel(std::string_view domain, std::string_view opType);
/// Every registered (domain, op type), sorted.
std::vector<std::pair<std::string, std::string>> registeredKernels();

/// Registers at static-initialization time:
///   MNCC_REFERENCE_KERNEL("", Add, addKernel);
#define MNCC_REFERENCE_KERNEL(DOMAIN, OP, FN)                                  \
  static const bool mnccReferenceKernel_##OP##_registered = [] {               \
    ::mncc::reference::registerKernel(DOMAIN, #OP, FN);                        \
    return true;                                                               \
  }()

} // namespace mncc::reference

#endif // MNCC_REFERENCE_KERNEL_H
