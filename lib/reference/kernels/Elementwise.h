//===- Elementwise.h - Shared machinery of elementwise kernels -*- C++ -*-===//
//
// Private to the elementwise kernels and Cast: type sets, compile-time
// filtered dispatch, the float16/bfloat16 compute type, and the three loop
// shapes (unary map, binary broadcast, variadic fold). Each operator then
// only supplies a small functor over its compute type.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_REFERENCE_KERNELS_ELEMENTWISE_H
#define MNCC_LIB_REFERENCE_KERNELS_ELEMENTWISE_H

#include "LinalgGemm.h"

#include "mncc/reference/Broadcast.h"
#include "mncc/reference/Kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

namespace mncc::reference::elementwise {

//===----------------------------------------------------------------------===//
// Type sets
//===----------------------------------------------------------------------===//

/// The bit of `dtype` in a type set; none for numbers past 31 (types newer
/// than this executor), so that they fall outside every set.
constexpr uint32_t bit(DType dtype) {
  uint32_t number = static_cast<uint32_t>(dtype);
  return number < 32 ? 1u << number : 0;
}
/// Every floating type. Operators whose opset-17 schema omits bfloat16
/// (Sin, Round, Elu, ...) accept it anyway, as later opsets do.
constexpr uint32_t kFloat = bit(DType::Float16) | bit(DType::Float32) |
                            bit(DType::Float64) | bit(DType::BFloat16);
constexpr uint32_t kSigned = bit(DType::Int8) | bit(DType::Int16) |
                             bit(DType::Int32) | bit(DType::Int64);
constexpr uint32_t kUnsigned = bit(DType::UInt8) | bit(DType::UInt16) |
                               bit(DType::UInt32) | bit(DType::UInt64);
constexpr uint32_t kInteger = kSigned | kUnsigned;
/// Every real number type (ONNX's "all numeric" without complex).
constexpr uint32_t kNumeric = kFloat | kInteger;
constexpr uint32_t kBool = bit(DType::Bool);
constexpr uint32_t kString = bit(DType::String);
/// Cast's types: numbers, bool and string.
constexpr uint32_t kCastable = kNumeric | kBool | kString;
constexpr uint32_t kAll =
    kCastable | bit(DType::Complex64) | bit(DType::Complex128);

/// Calls fn(T{}) for the C++ type T of `dtype` if `dtype` is in Mask, and
/// says whether it did. Types outside Mask are never instantiated, so a
/// functor only needs to compile for the types its operator allows.
template <uint32_t Mask, typename Fn> bool dispatchIn(DType dtype, Fn &&fn) {
  if ((Mask & bit(dtype)) == 0)
    return false;
  if (dtype == DType::String) {
    if constexpr ((Mask & kString) != 0)
      fn(std::string{});
    return true;
  }
  return dispatchNumeric(dtype, [&](auto tag) {
    if constexpr ((Mask & bit(dtypeOf<decltype(tag)>())) != 0)
      fn(tag);
  });
}

//===----------------------------------------------------------------------===//
// Compute types
//===----------------------------------------------------------------------===//

/// float16 and bfloat16 compute through float and round once on output.
template <typename T> struct ComputeOf { using type = T; };
template <> struct ComputeOf<Float16> { using type = float; };
template <> struct ComputeOf<BFloat16> { using type = float; };
template <typename T> using Compute = typename ComputeOf<T>::type;
/// Whether a compute type is floating (float16/bfloat16 compute as float).
template <typename C> constexpr bool isFloat = std::is_floating_point_v<C>;

inline float load(Float16 x) { return float(x); }
inline float load(BFloat16 x) { return float(x); }
template <typename T> const T &load(const T &x) { return x; }

template <typename T, typename C> T store(const C &x) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
    return T(static_cast<float>(x));
  else
    return static_cast<T>(x);
}

/// A floating value to an integer type: truncates toward zero, saturates
/// out of range and maps NaN to 0, because C++ leaves those undefined and
/// the oracle must be deterministic.
template <typename I> I floatToInt(double value) {
  if constexpr (std::is_same_v<I, bool>) {
    return value != 0;
  } else {
    if (std::isnan(value))
      return 0;
    // max() as a double may round up (int64: 2^63), hence >=.
    if (value >= static_cast<double>(std::numeric_limits<I>::max()))
      return std::numeric_limits<I>::max();
    if (value <= static_cast<double>(std::numeric_limits<I>::lowest()))
      return std::numeric_limits<I>::lowest();
    return static_cast<I>(value);
  }
}

/// Integer arithmetic that wraps (two's complement) instead of overflowing,
/// which is undefined for signed types and, through integer promotion,
/// even for uint16 products.
template <typename C> C wrapAdd(C a, C b) {
  if constexpr (std::is_integral_v<C>)
    return static_cast<C>(uint64_t(a) + uint64_t(b));
  else
    return a + b;
}
template <typename C> C wrapSub(C a, C b) {
  if constexpr (std::is_integral_v<C>)
    return static_cast<C>(uint64_t(a) - uint64_t(b));
  else
    return a - b;
}
template <typename C> C wrapMul(C a, C b) {
  if constexpr (std::is_integral_v<C>)
    return static_cast<C>(uint64_t(a) * uint64_t(b));
  else
    return a * b;
}

/// Strings are elements too (Where, Expand, Cast).
template <typename T> const T *elements(const Tensor &tensor) {
  if constexpr (std::is_same_v<T, std::string>)
    return tensor.strings().data();
  else
    return tensor.data<T>();
}
template <typename T> T *elements(Tensor &tensor) {
  if constexpr (std::is_same_v<T, std::string>)
    return tensor.strings().data();
  else
    return tensor.data<T>();
}

//===----------------------------------------------------------------------===//
// Errors and inputs
//===----------------------------------------------------------------------===//

inline Status fail(const KernelContext &context, const std::string &message) {
  return Status::error(std::string(context.opType()) + ": " + message);
}

/// Input `index` as a tensor, or an error naming it.
inline Status requireTensor(const KernelContext &context, size_t index,
                            const Tensor *&tensor) {
  tensor = context.inputTensor(index);
  if (!tensor)
    return fail(context, "input " + std::to_string(index) +
                             " is missing or not a tensor");
  return Status::success();
}

inline Status unsupportedType(const KernelContext &context, DType dtype) {
  return fail(context, std::string("element type ") + dtypeName(dtype) +
                           " is not supported");
}

/// The functor of an operator, reading its attributes if it takes any.
template <typename Op> Op makeOp(const KernelContext &context) {
  if constexpr (std::is_constructible_v<Op, const KernelContext &>)
    return Op(context);
  else
    return Op{};
}

/// An operator's result type from input type T: bool for predicates and
/// comparisons (functors returning bool), T otherwise.
template <typename T, typename R>
using ResultOf = std::conditional_t<std::is_same_v<R, bool>, bool, T>;

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

/// out[i] = f(a[i], b[i]) with a and b broadcast to out's shape. The common
/// cases (same shapes, one scalar side) are plain loops the compiler can
/// vectorize; the rest walks the broadcast.
/// Runs fn(begin, end) over [0, count): split over the threads in fixed
/// chunks when large (elementwise results do not depend on the split), so
/// that big activations (ReLU6 on MobileNet's 112x112x96 maps) use every
/// thread; small tensors stay on the calling thread to skip the dispatch.
template <typename Fn> void forRange(int64_t count, const Fn &fn) {
  constexpr int64_t kGrain = 1 << 15;
  if (count < 2 * kGrain)
    fn(int64_t(0), count);
  else
    linalg::parallelFor(count, kGrain, fn);
}

template <typename A, typename B, typename Out, typename F>
void mapBinary(const Tensor &a, const Tensor &b, Tensor &out, const F &f) {
  const A *pa = elements<A>(a);
  const B *pb = elements<B>(b);
  Out *po = elements<Out>(out);
  int64_t count = out.numElements();
  bool aFull = a.shape() == out.shape();
  bool bFull = b.shape() == out.shape();
  // The flat cases split over the threads; each element is independent.
  if (aFull && bFull) {
    forRange(count, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        po[i] = store<Out>(f(load(pa[i]), load(pb[i])));
    });
  } else if (aFull && b.numElements() == 1) {
    auto scalar = load(pb[0]);
    forRange(count, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        po[i] = store<Out>(f(load(pa[i]), scalar));
    });
  } else if (bFull && a.numElements() == 1) {
    auto scalar = load(pa[0]);
    forRange(count, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        po[i] = store<Out>(f(scalar, load(pb[i])));
    });
  } else {
    forEachBroadcast<2>(out.shape(),
                        {broadcastStrides(a.shape(), out.shape()),
                         broadcastStrides(b.shape(), out.shape())},
                        [&](int64_t i, const std::array<int64_t, 2> &offsets) {
                          po[i] = store<Out>(
                              f(load(pa[offsets[0]]), load(pb[offsets[1]])));
                        });
  }
}

/// Binary operator with multidirectional broadcasting over the types of
/// Mask; Op is a functor over the compute type.
template <uint32_t Mask, typename Op>
Status binaryKernel(KernelContext &context) {
  const Tensor *a, *b;
  if (Status s = requireTensor(context, 0, a); !s)
    return s;
  if (Status s = requireTensor(context, 1, b); !s)
    return s;
  if (a->dtype() != b->dtype())
    return fail(context, std::string("inputs have different types ") +
                             dtypeName(a->dtype()) + " and " +
                             dtypeName(b->dtype()));
  auto shape = broadcastShapes({a->shape(), b->shape()});
  if (!shape)
    return fail(context, "shapes " + shapeToString(a->shape()) + " and " +
                             shapeToString(b->shape()) + " do not broadcast");
  Op op = makeOp<Op>(context);
  bool supported = dispatchIn<Mask>(a->dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    using Out = ResultOf<T, decltype(op(std::declval<C>(), std::declval<C>()))>;
    // mapBinary writes every element.
    Tensor out = Tensor::uninitialized(dtypeOf<Out>(), *shape);
    const FusedActivation *clamp = context.fusedActivation();
    if constexpr (std::is_same_v<Out, float> && std::is_same_v<C, float>) {
      if (clamp) {
        // An activation fused into this node (Add then Relu): clamped as
        // the Clip kernel does, in the same pass.
        mapBinary<T, T, Out>(*a, *b, out,
                             [&](C x, C y) { return clamp->apply(op(x, y)); });
        context.setOutput(0, Value(std::move(out)));
        return;
      }
    }
    mapBinary<T, T, Out>(*a, *b, out, op);
    context.setOutput(0, Value(std::move(out)));
  });
  return supported ? Status::success() : unsupportedType(context, a->dtype());
}

} // namespace mncc::reference::elementwise

#endif // MNCC_LIB_REFERENCE_KERNELS_ELEMENTWISE_H
