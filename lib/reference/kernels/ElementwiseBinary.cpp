//===- ElementwiseBinary.cpp - Binary elementwise operators ---------------===//
//
// Arithmetic, comparisons, logic and bit shifts with multidirectional
// broadcasting (binaryKernel), plus Pow (base and exponent types differ)
// and PRelu (the slope broadcasts to X only).
//
//===----------------------------------------------------------------------===//

#include "Elementwise.h"

using namespace mncc::reference;
using namespace mncc::reference::elementwise;

namespace {

struct Add {
  template <typename C> C operator()(C a, C b) const { return wrapAdd(a, b); }
};
struct Sub {
  template <typename C> C operator()(C a, C b) const { return wrapSub(a, b); }
};
struct Mul {
  template <typename C> C operator()(C a, C b) const { return wrapMul(a, b); }
};
struct Div {
  // Integers truncate like C. Division by zero gives 0 (numpy's answer)
  // and MIN / -1 wraps, where C would trap.
  template <typename C> C operator()(C a, C b) const {
    if constexpr (isFloat<C>) {
      return a / b;
    } else {
      if (b == 0)
        return 0;
      if constexpr (std::is_signed_v<C>)
        if (b == -1)
          return wrapSub(C(0), a);
      return static_cast<C>(a / b);
    }
  }
};
struct Mod {
  bool fmod;
  explicit Mod(const KernelContext &c) : fmod(c.getInt("fmod", 0) != 0) {}
  // fmod=1 takes the sign of the dividend (C's % and fmod); fmod=0, for
  // integers only, the sign of the divisor (Python's %). x mod 0 is 0.
  template <typename C> C operator()(C a, C b) const {
    if constexpr (isFloat<C>) {
      return std::fmod(a, b);
    } else {
      if (b == 0)
        return 0;
      if constexpr (std::is_signed_v<C>) {
        if (b == -1)
          return 0;
        C r = static_cast<C>(a % b);
        if (!fmod && r != 0 && (r < 0) != (b < 0))
          r = static_cast<C>(r + b);
        return r;
      } else {
        return static_cast<C>(a % b);
      }
    }
  }
};
struct BitShift {
  bool left;
  explicit BitShift(const KernelContext &c)
      : left(c.getString("direction", "") == "LEFT") {}
  // Shifting by the width or more gives 0 (C leaves it undefined).
  template <typename C> C operator()(C a, C b) const {
    if (b >= C(sizeof(C) * 8))
      return 0;
    return static_cast<C>(left ? a << b : a >> b);
  }
};
struct And {
  bool operator()(bool a, bool b) const { return a && b; }
};
struct Or {
  bool operator()(bool a, bool b) const { return a || b; }
};
struct Xor {
  bool operator()(bool a, bool b) const { return a != b; }
};
struct Equal {
  template <typename C> bool operator()(const C &a, const C &b) const {
    return a == b;
  }
};
struct Less {
  template <typename C> bool operator()(C a, C b) const { return a < b; }
};
struct LessOrEqual {
  template <typename C> bool operator()(C a, C b) const { return a <= b; }
};
struct Greater {
  template <typename C> bool operator()(C a, C b) const { return a > b; }
};
struct GreaterOrEqual {
  template <typename C> bool operator()(C a, C b) const { return a >= b; }
};

Status modKernel(KernelContext &context) {
  const Tensor *a = context.inputTensor(0);
  if (a && isFloatingPoint(a->dtype()) && context.getInt("fmod", 0) == 0)
    return fail(context, "floating-point inputs need fmod=1");
  return binaryKernel<kNumeric, Mod>(context);
}

Status bitShiftKernel(KernelContext &context) {
  std::string direction = context.getString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return fail(context,
                "direction must be LEFT or RIGHT, got '" + direction + "'");
  return binaryKernel<kUnsigned, BitShift>(context);
}

/// base^exponent for integers: wraps on overflow; a negative exponent gives
/// the truncated 1 / base^-exponent (0 unless base is 1 or -1).
template <typename B, typename E> B integerPow(B base, E exponent) {
  if constexpr (std::is_signed_v<E>) {
    if (exponent < 0) {
      if (base == 1)
        return 1;
      if (base == -1)
        return (uint64_t(exponent) & 1) ? -1 : 1;
      return 0;
    }
  }
  uint64_t result = 1, factor = uint64_t(base);
  for (uint64_t e = uint64_t(exponent); e; e >>= 1) {
    if (e & 1)
      result *= factor;
    factor *= factor;
  }
  return static_cast<B>(result);
}

/// Pow: the output has the base's type; the exponent may be any number
/// type. Floating results are computed in double and rounded once.
Status powKernel(KernelContext &context) {
  const Tensor *x, *y;
  if (Status s = requireTensor(context, 0, x); !s)
    return s;
  if (Status s = requireTensor(context, 1, y); !s)
    return s;
  auto shape = broadcastShapes({x->shape(), y->shape()});
  if (!shape)
    return fail(context, "shapes " + shapeToString(x->shape()) + " and " +
                             shapeToString(y->shape()) + " do not broadcast");
  constexpr uint32_t kBase = kFloat | bit(DType::Int32) | bit(DType::Int64);
  bool exponentOk = true;
  bool baseOk = dispatchIn<kBase>(x->dtype(), [&](auto baseTag) {
    using B = decltype(baseTag);
    exponentOk = dispatchIn<kNumeric>(y->dtype(), [&](auto exponentTag) {
      using E = decltype(exponentTag);
      Tensor out(x->dtype(), *shape);
      mapBinary<B, E, B>(*x, *y, out, [](auto base, auto exponent) {
        using CB = decltype(base);
        if constexpr (!isFloat<CB> && !isFloat<decltype(exponent)>)
          return integerPow(base, exponent);
        else if constexpr (isFloat<CB>)
          return static_cast<CB>(std::pow(static_cast<double>(base),
                                          static_cast<double>(exponent)));
        else
          return floatToInt<CB>(std::pow(static_cast<double>(base),
                                         static_cast<double>(exponent)));
      });
      context.setOutput(0, Value(std::move(out)));
    });
  });
  if (!baseOk)
    return unsupportedType(context, x->dtype());
  if (!exponentOk)
    return fail(context, std::string("exponent type ") + dtypeName(y->dtype()) +
                             " is not supported");
  return Status::success();
}

/// PRelu: y = x < 0 ? slope * x : x, the slope broadcasting
/// unidirectionally to X's shape.
Status preluKernel(KernelContext &context) {
  const Tensor *x, *slope;
  if (Status s = requireTensor(context, 0, x); !s)
    return s;
  if (Status s = requireTensor(context, 1, slope); !s)
    return s;
  if (x->dtype() != slope->dtype())
    return fail(context,
                std::string("slope type ") + dtypeName(slope->dtype()) +
                    " differs from input type " + dtypeName(x->dtype()));
  // PRelu up to opset 6 took a 1-D slope of one value per channel (shape
  // [C] for X of shape [N, C, ...]), and ONNX's version converter keeps that
  // slope, which modern unidirectional broadcasting would align with X's
  // last dim instead. Where the two readings differ (size C, not the last
  // dim's size), apply it per channel, as if shaped [C, 1, ..., 1].
  Tensor channelSlope;
  const std::vector<int64_t> &xShape = x->shape();
  if (slope->rank() == 1 && x->rank() >= 2 && slope->shape()[0] == xShape[1] &&
      slope->shape()[0] != xShape.back()) {
    std::vector<int64_t> perChannel(xShape.size() - 1, 1);
    perChannel[0] = xShape[1];
    channelSlope = slope->reshaped(perChannel);
    slope = &channelSlope;
  }
  auto shape = broadcastShapes({x->shape(), slope->shape()});
  if (!shape || *shape != x->shape())
    return fail(context, "slope shape " + shapeToString(slope->shape()) +
                             " does not broadcast to input shape " +
                             shapeToString(x->shape()));
  constexpr uint32_t kTypes = kFloat | bit(DType::Int32) | bit(DType::Int64) |
                              bit(DType::UInt32) | bit(DType::UInt64);
  bool supported = dispatchIn<kTypes>(x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    Tensor out(x->dtype(), x->shape());
    mapBinary<T, T, T>(*x, *slope, out, [](auto v, auto a) {
      if constexpr (std::is_unsigned_v<decltype(v)>)
        return v; // never negative
      else
        return v < 0 ? wrapMul(a, v) : v;
    });
    context.setOutput(0, Value(std::move(out)));
  });
  return supported ? Status::success() : unsupportedType(context, x->dtype());
}

} // namespace

MNCC_REFERENCE_KERNEL("", Add, (binaryKernel<kNumeric, Add>));
MNCC_REFERENCE_KERNEL("", Sub, (binaryKernel<kNumeric, Sub>));
MNCC_REFERENCE_KERNEL("", Mul, (binaryKernel<kNumeric, Mul>));
MNCC_REFERENCE_KERNEL("", Div, (binaryKernel<kNumeric, Div>));
MNCC_REFERENCE_KERNEL("", Mod, modKernel);
MNCC_REFERENCE_KERNEL("", Pow, powKernel);
MNCC_REFERENCE_KERNEL("", BitShift, bitShiftKernel);
MNCC_REFERENCE_KERNEL("", And, (binaryKernel<kBool, And>));
MNCC_REFERENCE_KERNEL("", Or, (binaryKernel<kBool, Or>));
MNCC_REFERENCE_KERNEL("", Xor, (binaryKernel<kBool, Xor>));
// Strings compare too, as Equal allows from opset 19.
MNCC_REFERENCE_KERNEL("", Equal,
                      (binaryKernel<kNumeric | kBool | kString, Equal>));
MNCC_REFERENCE_KERNEL("", Less, (binaryKernel<kNumeric, Less>));
MNCC_REFERENCE_KERNEL("", LessOrEqual, (binaryKernel<kNumeric, LessOrEqual>));
MNCC_REFERENCE_KERNEL("", Greater, (binaryKernel<kNumeric, Greater>));
MNCC_REFERENCE_KERNEL("", GreaterOrEqual,
                      (binaryKernel<kNumeric, GreaterOrEqual>));
MNCC_REFERENCE_KERNEL("", PRelu, preluKernel);
