//===- Random.cpp - RandomNormal, RandomUniform, Bernoulli, Multinomial ---===//
//
// ONNX leaves the generator unspecified, so conformance compares only shape
// and element type. The generator here is our own (SplitMix64 and
// Box-Muller) rather than <random>'s distributions, whose output differs
// between standard libraries: the same seed gives the same numbers on every
// host.
//
//===----------------------------------------------------------------------===//

#include "mncc/reference/Broadcast.h"
#include "mncc/reference/Kernel.h"

#include <cmath>
#include <cstring>
#include <type_traits>

using namespace mncc::reference;

namespace {

// M_PI is POSIX, not standard C++.
constexpr double kPi = 3.14159265358979323846;

/// SplitMix64 (Steele, Lea, Flood 2014): small, fast, and good enough for
/// test data; every 64-bit state is valid, so any seed works.
class Generator {
public:
  explicit Generator(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1), with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Standard normal by Box-Muller; 1 - uniform() lies in (0, 1], so the
  /// logarithm is finite.
  double normal() {
    double u1 = 1.0 - uniform();
    double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
  }

private:
  uint64_t state_;
};

/// The seed attribute (a float) by its bits, so 1.0 and 1.5 differ, or the
/// context's per-node default.
Generator makeGenerator(const KernelContext &context) {
  const Attribute *seed = context.attribute("seed");
  if (seed && seed->kind == Attribute::Kind::Float) {
    uint32_t bits;
    std::memcpy(&bits, &seed->f, sizeof bits);
    return Generator(bits);
  }
  return Generator(context.defaultSeed());
}

template <typename T> T fromDouble(double value) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
    return T(static_cast<float>(value));
  else
    return static_cast<T>(value);
}

/// Fills a new tensor of `dtype` (a floating type) with draw().
template <typename Draw>
Status fillFloating(const char *opName, DType dtype, std::vector<int64_t> shape,
                    Draw &&draw, Tensor &result) {
  if (!isFloatingPoint(dtype))
    return Status::error(std::string(opName) + ": dtype " + dtypeName(dtype) +
                         " is not a floating type");
  result = Tensor(dtype, std::move(shape));
  dispatchNumeric(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                  std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      T *out = result.data<T>();
      for (int64_t i = 0, e = result.numElements(); i < e; ++i)
        out[i] = fromDouble<T>(draw());
    }
  });
  return Status::success();
}

/// The shape attribute of RandomNormal / RandomUniform.
Status readShape(const KernelContext &context, const char *opName,
                 std::vector<int64_t> &shape) {
  const Attribute *attribute = context.attribute("shape");
  if (!attribute || attribute->kind != Attribute::Kind::Ints)
    return Status::error(std::string(opName) +
                         ": the shape attribute is required");
  for (int64_t dim : attribute->ints)
    if (dim < 0)
      return Status::error(std::string(opName) + ": shape " +
                           shapeToString(attribute->ints) +
                           " has a negative dimension");
  shape = attribute->ints;
  return Status::success();
}

/// The *Like operators take the shape from the input and the element type
/// from dtype, defaulting to the input's.
Status readLike(const KernelContext &context, const char *opName,
                std::vector<int64_t> &shape, DType &dtype) {
  const Tensor *input = context.inputTensor(0);
  if (!input)
    return Status::error(std::string(opName) + ": input 0 must be a tensor");
  shape = input->shape();
  dtype = static_cast<DType>(
      context.getInt("dtype", static_cast<int64_t>(input->dtype())));
  return Status::success();
}

Status randomNormal(KernelContext &context, const char *opName,
                    std::vector<int64_t> shape, DType dtype) {
  double mean = context.getFloat("mean", 0.0f);
  double scale = context.getFloat("scale", 1.0f);
  Generator generator = makeGenerator(context);
  Tensor result;
  if (Status status = fillFloating(
          opName, dtype, std::move(shape),
          [&] { return mean + scale * generator.normal(); }, result);
      !status)
    return status;
  context.setOutput(0, Value(std::move(result)));
  return Status::success();
}

Status randomUniform(KernelContext &context, const char *opName,
                     std::vector<int64_t> shape, DType dtype) {
  double low = context.getFloat("low", 0.0f);
  double high = context.getFloat("high", 1.0f);
  if (!(low <= high))
    return Status::error(std::string(opName) + ": low " + std::to_string(low) +
                         " exceeds high " + std::to_string(high));
  Generator generator = makeGenerator(context);
  Tensor result;
  if (Status status = fillFloating(
          opName, dtype, std::move(shape),
          [&] { return low + (high - low) * generator.uniform(); }, result);
      !status)
    return status;
  context.setOutput(0, Value(std::move(result)));
  return Status::success();
}

Status randomNormalKernel(KernelContext &context) {
  std::vector<int64_t> shape;
  if (Status status = readShape(context, "RandomNormal", shape); !status)
    return status;
  return randomNormal(context, "RandomNormal", std::move(shape),
                      static_cast<DType>(context.getInt("dtype", 1)));
}

Status randomUniformKernel(KernelContext &context) {
  std::vector<int64_t> shape;
  if (Status status = readShape(context, "RandomUniform", shape); !status)
    return status;
  return randomUniform(context, "RandomUniform", std::move(shape),
                       static_cast<DType>(context.getInt("dtype", 1)));
}

Status randomNormalLikeKernel(KernelContext &context) {
  std::vector<int64_t> shape;
  DType dtype;
  if (Status status = readLike(context, "RandomNormalLike", shape, dtype);
      !status)
    return status;
  return randomNormal(context, "RandomNormalLike", std::move(shape), dtype);
}

Status randomUniformLikeKernel(KernelContext &context) {
  std::vector<int64_t> shape;
  DType dtype;
  if (Status status = readLike(context, "RandomUniformLike", shape, dtype);
      !status)
    return status;
  return randomUniform(context, "RandomUniformLike", std::move(shape), dtype);
}

/// Bernoulli: 1 with the probability given by each input element.
Status bernoulliKernel(KernelContext &context) {
  const Tensor *input = context.inputTensor(0);
  if (!input || !isFloatingPoint(input->dtype()))
    return Status::error("Bernoulli: input 0 must be a floating tensor");
  DType dtype = static_cast<DType>(
      context.getInt("dtype", static_cast<int64_t>(input->dtype())));
  Tensor result(dtype, input->shape());
  Generator generator = makeGenerator(context);
  bool supported = dispatchNumeric(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, std::complex<float>> &&
                  !std::is_same_v<T, std::complex<double>>) {
      T *out = result.data<T>();
      for (int64_t i = 0, e = input->numElements(); i < e; ++i)
        out[i] = fromDouble<T>(
            generator.uniform() < input->elementAsDouble(i) ? 1.0 : 0.0);
    }
  });
  if (!supported || dtype == DType::Complex64 || dtype == DType::Complex128)
    return Status::error(std::string("Bernoulli: dtype ") + dtypeName(dtype) +
                         " is not supported");
  context.setOutput(0, Value(std::move(result)));
  return Status::success();
}

/// Multinomial: sample_size class indices per batch row, drawn with
/// probabilities proportional to exp(input).
Status multinomialKernel(KernelContext &context) {
  const Tensor *input = context.inputTensor(0);
  if (!input || !isFloatingPoint(input->dtype()) || input->rank() != 2)
    return Status::error("Multinomial: input 0 must be a floating tensor of "
                         "shape batch x classes");
  int64_t sampleSize = context.getInt("sample_size", 1);
  if (sampleSize < 0)
    return Status::error("Multinomial: sample_size must not be negative");
  DType dtype = static_cast<DType>(context.getInt("dtype", 6));
  if (dtype != DType::Int32 && dtype != DType::Int64)
    return Status::error(std::string("Multinomial: dtype ") + dtypeName(dtype) +
                         " must be int32 or int64");
  int64_t batch = input->shape()[0], classes = input->shape()[1];
  if (classes == 0 && sampleSize > 0)
    return Status::error("Multinomial: there is no class to draw from");
  Tensor result(dtype, {batch, sampleSize});
  Generator generator = makeGenerator(context);
  std::vector<double> cumulative(classes);
  for (int64_t b = 0; b < batch; ++b) {
    // Subtract the row maximum before exp so large logits do not overflow.
    double maximum = -INFINITY;
    for (int64_t c = 0; c < classes; ++c)
      maximum = std::max(maximum, input->elementAsDouble(b * classes + c));
    double total = 0;
    for (int64_t c = 0; c < classes; ++c) {
      total += std::exp(input->elementAsDouble(b * classes + c) - maximum);
      cumulative[c] = total;
    }
    for (int64_t s = 0; s < sampleSize; ++s) {
      double target = generator.uniform() * total;
      int64_t chosen = classes - 1;
      for (int64_t c = 0; c < classes; ++c)
        if (target < cumulative[c]) {
          chosen = c;
          break;
        }
      if (dtype == DType::Int32)
        result.data<int32_t>()[b * sampleSize + s] =
            static_cast<int32_t>(chosen);
      else
        result.data<int64_t>()[b * sampleSize + s] = chosen;
    }
  }
  context.setOutput(0, Value(std::move(result)));
  return Status::success();
}

} // namespace

MNCC_REFERENCE_KERNEL("", RandomNormal, randomNormalKernel);
MNCC_REFERENCE_KERNEL("", RandomUniform, randomUniformKernel);
MNCC_REFERENCE_KERNEL("", RandomNormalLike, randomNormalLikeKernel);
MNCC_REFERENCE_KERNEL("", RandomUniformLike, randomUniformLikeKernel);
MNCC_REFERENCE_KERNEL("", Bernoulli, bernoulliKernel);
MNCC_REFERENCE_KERNEL("", Multinomial, multinomialKernel);
