//===- ReduceOps.cpp - ReduceSum, ReduceMean and the other reductions -----===//
//
// One reduction engine: the input is walked once in memory order, each
// element accumulated into its output slot; the operators differ only in
// a small functor (initial value, step, finish). Floating types accumulate
// in double and integers in 64 bits (so integer sums wrap as numpy's do
// once cast back); the result is converted to the input type at the end.
//
//===----------------------------------------------------------------------===//

#include "ShapeUtils.h"

#include <limits>

using namespace mncc::reference;
using namespace mncc::reference::shape;

namespace {

template <typename T>
using Accumulator = std::conditional_t<
    isFloatLike<T>, double,
    std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

struct SumOp {
  template <typename T, typename A> static A init() { return 0; }
  template <typename A> static void step(A &acc, A x) {
    acc = addValues(acc, x);
  }
  template <typename A> static A finish(A acc, int64_t) { return acc; }
};

struct MeanOp : SumOp {
  template <typename A> static double finish(A acc, int64_t count) {
    return static_cast<double>(acc) / static_cast<double>(count);
  }
};

struct ProdOp {
  template <typename T, typename A> static A init() { return 1; }
  template <typename A> static void step(A &acc, A x) {
    acc = mulValues(acc, x);
  }
  template <typename A> static A finish(A acc, int64_t) { return acc; }
};

/// Max and min start from the type's lowest / highest value (what ONNX
/// gives for an empty reduction) and let NaN stick.
struct MaxOp {
  template <typename T, typename A> static A init() {
    if constexpr (std::is_floating_point_v<A>)
      return -std::numeric_limits<A>::infinity();
    else
      return std::numeric_limits<T>::lowest();
  }
  template <typename A> static void step(A &acc, A x) {
    if (x > acc || isNaN(x))
      acc = isNaN(acc) ? acc : x;
  }
  template <typename A> static A finish(A acc, int64_t) { return acc; }
};

struct MinOp {
  template <typename T, typename A> static A init() {
    if constexpr (std::is_floating_point_v<A>)
      return std::numeric_limits<A>::infinity();
    else
      return std::numeric_limits<T>::max();
  }
  template <typename A> static void step(A &acc, A x) {
    if (x < acc || isNaN(x))
      acc = isNaN(acc) ? acc : x;
  }
  template <typename A> static A finish(A acc, int64_t) { return acc; }
};

struct L1Op : SumOp {
  template <typename A> static void step(A &acc, A x) {
    if constexpr (std::is_unsigned_v<A>)
      acc = addValues(acc, x);
    else
      acc = addValues(acc, x < 0 ? mulValues(x, A(-1)) : x);
  }
};

struct SumSquareOp : SumOp {
  template <typename A> static void step(A &acc, A x) {
    acc = addValues(acc, mulValues(x, x));
  }
};

struct L2Op : SumSquareOp {
  template <typename A> static double finish(A acc, int64_t) {
    return std::sqrt(static_cast<double>(acc));
  }
};

struct LogSumOp : SumOp {
  template <typename A> static double finish(A acc, int64_t) {
    return std::log(static_cast<double>(acc));
  }
};

/// log(sum(exp(x))) without overflow: a running maximum m and
/// s = sum(exp(x - m)), rescaled when m grows (one pass, deterministic).
struct LogSumExpOp {
  struct State {
    double max = -std::numeric_limits<double>::infinity();
    double sum = 0;
  };
  template <typename T, typename A> static State init() { return {}; }
  template <typename A> static void step(State &acc, A value) {
    double x = static_cast<double>(value);
    if (std::isnan(acc.max))
      return;
    if (std::isnan(x) || x > acc.max) {
      acc.sum = std::isinf(acc.max) ? 1 : acc.sum * std::exp(acc.max - x) + 1;
      acc.max = x;
    } else {
      acc.sum += x == acc.max ? 1 : std::exp(x - acc.max);
    }
  }
  static double finish(const State &acc, int64_t) {
    return std::isinf(acc.max) ? acc.max : acc.max + std::log(acc.sum);
  }
};

template <typename T, typename U> T toResult(U value) {
  if constexpr (std::is_integral_v<T> && std::is_floating_point_v<U>) {
    // Casting NaN or infinity to an integer is undefined in C++.
    if (!std::isfinite(value))
      return 0;
  }
  return toElement<T>(value);
}

template <typename Op> Status reduceKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  int64_t rank = data->rank();
  std::vector<int64_t> axes;
  // Axes are an input for ReduceSum since opset 13 (and for every
  // reduction since 18), an attribute before.
  Status status = readAxes(context, 1, axes);
  if (!status)
    return status;
  if (axes.empty() && context.getInt("noop_with_empty_axes", 0) != 0) {
    context.setOutput(0, *data);
    return Status::success();
  }
  if (!(status = normalizeAxes(context, axes, rank)))
    return status;
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t axis : axes)
    reduced[axis] = true;
  std::vector<int64_t> kept = data->shape(), shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d])
      kept[d] = 1;
    if (!reduced[d] || context.getInt("keepdims", 1) != 0)
      shape.push_back(kept[d]);
  }
  // Output slot of an input element: its index with reduced axes zeroed.
  std::vector<int64_t> strides = stridesOf(kept);
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[d])
      strides[d] = 0;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[d])
      count *= data->shape()[d];
  Tensor result(data->dtype(), shape);
  bool supported = false;
  dispatchNumeric(data->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!isComplex<T> && !std::is_same_v<T, bool>) {
      supported = true;
      using A = Accumulator<T>;
      auto start = Op::template init<T, A>();
      std::vector<decltype(start)> acc(result.numElements(), start);
      const T *in = data->data<T>();
      forEachBroadcast<1>(data->shape(), {strides},
                          [&](int64_t i, const std::array<int64_t, 1> &at) {
                            Op::step(acc[at[0]], static_cast<A>(arith(in[i])));
                          });
      T *out = result.data<T>();
      for (size_t j = 0; j < acc.size(); ++j)
        out[j] = toResult<T>(Op::finish(acc[j], count));
    }
  });
  if (!supported)
    return opError(context,
                   std::string("unsupported type ") + dtypeName(data->dtype()));
  context.setOutput(0, result);
  return Status::success();
}

} // namespace

MNCC_REFERENCE_KERNEL("", ReduceSum, reduceKernel<SumOp>);
MNCC_REFERENCE_KERNEL("", ReduceMean, reduceKernel<MeanOp>);
MNCC_REFERENCE_KERNEL("", ReduceMax, reduceKernel<MaxOp>);
MNCC_REFERENCE_KERNEL("", ReduceMin, reduceKernel<MinOp>);
MNCC_REFERENCE_KERNEL("", ReduceProd, reduceKernel<ProdOp>);
MNCC_REFERENCE_KERNEL("", ReduceL1, reduceKernel<L1Op>);
MNCC_REFERENCE_KERNEL("", ReduceL2, reduceKernel<L2Op>);
MNCC_REFERENCE_KERNEL("", ReduceLogSum, reduceKernel<LogSumOp>);
MNCC_REFERENCE_KERNEL("", ReduceLogSumExp, reduceKernel<LogSumExpOp>);
MNCC_REFERENCE_KERNEL("", ReduceSumSquare, reduceKernel<SumSquareOp>);
