//===- ElementwiseUnary.cpp - Unary elementwise operators -----------------===//
//
// Abs ... Clip: one map loop (unaryKernel) and one small functor per
// operator over the compute type (float for float16/bfloat16).
//
//===----------------------------------------------------------------------===//

#include "Elementwise.h"
#include "LinalgGemm.h"

using namespace mncc::reference;
using namespace mncc::reference::elementwise;

namespace {

/// y = op(x) elementwise over the types of Mask; y is bool when op returns
/// bool (IsNaN, IsInf), else the type of x.
template <uint32_t Mask, typename Op>
Status unaryKernel(KernelContext &context) {
  const Tensor *x;
  if (Status s = requireTensor(context, 0, x); !s)
    return s;
  Op op = makeOp<Op>(context);
  bool supported = dispatchIn<Mask>(x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    using Out = ResultOf<T, decltype(op(std::declval<Compute<T>>()))>;
    Tensor y = Tensor::uninitialized(dtypeOf<Out>(), x->shape());
    const T *in = x->data<T>();
    Out *out = y.data<Out>();
    int64_t count = x->numElements();
    forRange(count, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        out[i] = store<Out>(op(load(in[i])));
    });
    context.setOutput(0, Value(std::move(y)));
  });
  return supported ? Status::success() : unsupportedType(context, x->dtype());
}

struct Abs {
  template <typename C> C operator()(C x) const {
    if constexpr (isFloat<C>)
      return std::fabs(x);
    else if constexpr (std::is_signed_v<C>)
      return x < 0 ? wrapSub(C(0), x) : x;
    else
      return x;
  }
};
struct Neg {
  template <typename C> C operator()(C x) const { return wrapSub(C(0), x); }
};
struct Reciprocal {
  template <typename C> C operator()(C x) const { return C(1) / x; }
};
struct Floor {
  template <typename C> C operator()(C x) const { return std::floor(x); }
};
struct Ceil {
  template <typename C> C operator()(C x) const { return std::ceil(x); }
};
struct Round {
  // The default rounding mode rounds halves to even, as ONNX asks.
  template <typename C> C operator()(C x) const { return std::nearbyint(x); }
};
struct Sign {
  template <typename C> C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>)
      return x > C(0) ? C(1) : C(0);
    else if (x != x) // NaN stays NaN, like np.sign
      return x;
    else
      return x > C(0) ? C(1) : x < C(0) ? C(-1) : C(0);
  }
};

#define MNCC_MATH_FUNCTOR(NAME, FN)                                            \
  struct NAME {                                                                \
    template <typename C> C operator()(C x) const { return std::FN(x); }       \
  };
MNCC_MATH_FUNCTOR(Sqrt, sqrt)
MNCC_MATH_FUNCTOR(Exp, exp)
MNCC_MATH_FUNCTOR(Log, log)
MNCC_MATH_FUNCTOR(Sin, sin)
MNCC_MATH_FUNCTOR(Cos, cos)
MNCC_MATH_FUNCTOR(Tan, tan)
MNCC_MATH_FUNCTOR(Asin, asin)
MNCC_MATH_FUNCTOR(Acos, acos)
MNCC_MATH_FUNCTOR(Atan, atan)
MNCC_MATH_FUNCTOR(Sinh, sinh)
MNCC_MATH_FUNCTOR(Cosh, cosh)
MNCC_MATH_FUNCTOR(Tanh, tanh)
MNCC_MATH_FUNCTOR(Asinh, asinh)
MNCC_MATH_FUNCTOR(Acosh, acosh)
MNCC_MATH_FUNCTOR(Atanh, atanh)
#undef MNCC_MATH_FUNCTOR

struct Erf {
  // Erf also takes integers: erf of the value, truncated back.
  template <typename C> C operator()(C x) const {
    if constexpr (isFloat<C>)
      return std::erf(x);
    else
      return floatToInt<C>(std::erf(static_cast<double>(x)));
  }
};
struct Sigmoid {
  // Split on the sign so exp never overflows.
  template <typename C> C operator()(C x) const {
    if (x >= 0)
      return C(1) / (C(1) + std::exp(-x));
    C e = std::exp(x);
    return e / (C(1) + e);
  }
};

/// Reads the float attributes alpha and beta with an operator's defaults.
struct AlphaBeta {
  float alpha, beta;
  AlphaBeta(const KernelContext &context, float alphaDefault, float betaDefault,
            const char *betaName = "beta")
      : alpha(context.getFloat("alpha", alphaDefault)),
        beta(context.getFloat(betaName, betaDefault)) {}
};

struct HardSigmoid : AlphaBeta {
  explicit HardSigmoid(const KernelContext &c) : AlphaBeta(c, 0.2f, 0.5f) {}
  template <typename C> C operator()(C x) const {
    return std::max(C(0), std::min(C(1), C(alpha) * x + C(beta)));
  }
};
struct HardSwish {
  template <typename C> C operator()(C x) const {
    return x * std::max(C(0), std::min(C(1), x / C(6) + C(0.5)));
  }
};
struct Relu {
  // Written so that NaN passes through, as np.maximum(x, 0) does.
  template <typename C> C operator()(C x) const { return x < C(0) ? C(0) : x; }
};
struct LeakyRelu : AlphaBeta {
  explicit LeakyRelu(const KernelContext &c) : AlphaBeta(c, 0.01f, 0) {}
  template <typename C> C operator()(C x) const {
    return x < C(0) ? C(alpha) * x : x;
  }
};
struct Elu : AlphaBeta {
  explicit Elu(const KernelContext &c) : AlphaBeta(c, 1.0f, 0) {}
  template <typename C> C operator()(C x) const {
    return x < C(0) ? C(alpha) * std::expm1(x) : x;
  }
};
struct Selu : AlphaBeta {
  explicit Selu(const KernelContext &c)
      : AlphaBeta(c, 1.67326319217681884765625f, 1.05070102214813232421875f,
                  "gamma") {}
  template <typename C> C operator()(C x) const {
    return x <= C(0) ? C(beta) * (C(alpha) * std::exp(x) - C(alpha))
                     : C(beta) * x;
  }
};
struct Celu : AlphaBeta {
  explicit Celu(const KernelContext &c) : AlphaBeta(c, 1.0f, 0) {}
  template <typename C> C operator()(C x) const {
    return std::max(C(0), x) +
           std::min(C(0), C(alpha) * std::expm1(x / C(alpha)));
  }
};
struct ThresholdedRelu : AlphaBeta {
  explicit ThresholdedRelu(const KernelContext &c) : AlphaBeta(c, 1.0f, 0) {}
  template <typename C> C operator()(C x) const {
    return x > C(alpha) ? x : C(0);
  }
};
/// ln(exp(x) + 1), rearranged so that large |x| neither overflows nor loses
/// the small term.
template <typename C> C softplus(C x) {
  return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
struct Softplus {
  template <typename C> C operator()(C x) const { return softplus(x); }
};
struct Softsign {
  template <typename C> C operator()(C x) const {
    return x / (C(1) + std::fabs(x));
  }
};
struct Mish {
  template <typename C> C operator()(C x) const {
    return x * std::tanh(softplus(x));
  }
};
struct Shrink {
  double lambd, bias;
  explicit Shrink(const KernelContext &c)
      : lambd(c.getFloat("lambd", 0.5f)), bias(c.getFloat("bias", 0.0f)) {}
  // Through double so that integer inputs meet the float attributes
  // exactly; the result is converted back by truncation.
  template <typename C> C operator()(C x) const {
    double v = static_cast<double>(x);
    double r = v < -lambd ? v + bias : v > lambd ? v - bias : 0.0;
    if constexpr (isFloat<C>)
      return static_cast<C>(r);
    else
      return floatToInt<C>(r);
  }
};
struct IsNaN {
  template <typename C> bool operator()(C x) const { return std::isnan(x); }
};
struct IsInf {
  bool negative, positive;
  explicit IsInf(const KernelContext &c)
      : negative(c.getInt("detect_negative", 1) != 0),
        positive(c.getInt("detect_positive", 1) != 0) {}
  template <typename C> bool operator()(C x) const {
    return std::isinf(x) && (x > 0 ? positive : negative);
  }
};
struct Not {
  bool operator()(bool x) const { return !x; }
};

/// Clip: min and max are optional scalar inputs (opset 11+), or float
/// attributes in opset 6 models; absent bounds do not clip.
Status clipKernel(KernelContext &context) {
  const Tensor *x;
  if (Status s = requireTensor(context, 0, x); !s)
    return s;
  const Tensor *bounds[2] = {context.inputTensor(1), context.inputTensor(2)};
  for (const Tensor *bound : bounds) {
    if (!bound)
      continue;
    if (bound->dtype() != x->dtype())
      return fail(context,
                  std::string("bound type ") + dtypeName(bound->dtype()) +
                      " differs from input type " + dtypeName(x->dtype()));
    if (bound->numElements() != 1)
      return fail(context, "bounds must be scalars, got shape " +
                               shapeToString(bound->shape()));
  }
  bool supported = dispatchIn<kNumeric>(x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    auto bound = [&](int index, const char *name, C fallback) {
      if (bounds[index])
        return C(load(bounds[index]->data<T>()[0]));
      if constexpr (isFloat<C>)
        return C(context.getFloat(name, float(fallback)));
      return fallback;
    };
    C lo = bound(0, "min", std::numeric_limits<C>::lowest());
    C hi = bound(1, "max", std::numeric_limits<C>::max());
    Tensor y = Tensor::uninitialized(x->dtype(), x->shape());
    const T *in = x->data<T>();
    T *out = y.data<T>();
    int64_t count = x->numElements();
    // min(max(x, lo), hi) like numpy: NaN passes, and hi wins if lo > hi.
    forRange(count, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        C v = load(in[i]);
        v = v < lo ? lo : v;
        out[i] = store<T>(v > hi ? hi : v);
      }
    });
    context.setOutput(0, Value(std::move(y)));
  });
  return supported ? Status::success() : unsupportedType(context, x->dtype());
}

} // namespace

MNCC_REFERENCE_KERNEL("", Abs, (unaryKernel<kNumeric, Abs>));
MNCC_REFERENCE_KERNEL("", Neg, (unaryKernel<kFloat | kSigned, Neg>));
MNCC_REFERENCE_KERNEL("", Reciprocal, (unaryKernel<kFloat, Reciprocal>));
MNCC_REFERENCE_KERNEL("", Floor, (unaryKernel<kFloat, Floor>));
MNCC_REFERENCE_KERNEL("", Ceil, (unaryKernel<kFloat, Ceil>));
MNCC_REFERENCE_KERNEL("", Round, (unaryKernel<kFloat, Round>));
MNCC_REFERENCE_KERNEL("", Sign, (unaryKernel<kNumeric, Sign>));
MNCC_REFERENCE_KERNEL("", Sqrt, (unaryKernel<kFloat, Sqrt>));
MNCC_REFERENCE_KERNEL("", Exp, (unaryKernel<kFloat, Exp>));
MNCC_REFERENCE_KERNEL("", Log, (unaryKernel<kFloat, Log>));
MNCC_REFERENCE_KERNEL("", Sin, (unaryKernel<kFloat, Sin>));
MNCC_REFERENCE_KERNEL("", Cos, (unaryKernel<kFloat, Cos>));
MNCC_REFERENCE_KERNEL("", Tan, (unaryKernel<kFloat, Tan>));
MNCC_REFERENCE_KERNEL("", Asin, (unaryKernel<kFloat, Asin>));
MNCC_REFERENCE_KERNEL("", Acos, (unaryKernel<kFloat, Acos>));
MNCC_REFERENCE_KERNEL("", Atan, (unaryKernel<kFloat, Atan>));
MNCC_REFERENCE_KERNEL("", Sinh, (unaryKernel<kFloat, Sinh>));
MNCC_REFERENCE_KERNEL("", Cosh, (unaryKernel<kFloat, Cosh>));
MNCC_REFERENCE_KERNEL("", Tanh, (unaryKernel<kFloat, Tanh>));
MNCC_REFERENCE_KERNEL("", Asinh, (unaryKernel<kFloat, Asinh>));
MNCC_REFERENCE_KERNEL("", Acosh, (unaryKernel<kFloat, Acosh>));
MNCC_REFERENCE_KERNEL("", Atanh, (unaryKernel<kFloat, Atanh>));
MNCC_REFERENCE_KERNEL("", Erf, (unaryKernel<kNumeric, Erf>));
MNCC_REFERENCE_KERNEL("", Sigmoid, (unaryKernel<kFloat, Sigmoid>));
MNCC_REFERENCE_KERNEL("", HardSigmoid, (unaryKernel<kFloat, HardSigmoid>));
MNCC_REFERENCE_KERNEL("", HardSwish, (unaryKernel<kFloat, HardSwish>));
MNCC_REFERENCE_KERNEL("", Relu, (unaryKernel<kFloat | kSigned, Relu>));
MNCC_REFERENCE_KERNEL("", LeakyRelu, (unaryKernel<kFloat, LeakyRelu>));
MNCC_REFERENCE_KERNEL("", Elu, (unaryKernel<kFloat, Elu>));
MNCC_REFERENCE_KERNEL("", Selu, (unaryKernel<kFloat, Selu>));
MNCC_REFERENCE_KERNEL("", Celu, (unaryKernel<kFloat, Celu>));
MNCC_REFERENCE_KERNEL("", ThresholdedRelu,
                      (unaryKernel<kFloat, ThresholdedRelu>));
MNCC_REFERENCE_KERNEL("", Softplus, (unaryKernel<kFloat, Softplus>));
MNCC_REFERENCE_KERNEL("", Softsign, (unaryKernel<kFloat, Softsign>));
MNCC_REFERENCE_KERNEL("", Mish, (unaryKernel<kFloat, Mish>));
MNCC_REFERENCE_KERNEL("", Shrink, (unaryKernel<kNumeric, Shrink>));
MNCC_REFERENCE_KERNEL("", IsNaN, (unaryKernel<kFloat, IsNaN>));
MNCC_REFERENCE_KERNEL("", IsInf, (unaryKernel<kFloat, IsInf>));
MNCC_REFERENCE_KERNEL("", Not, (unaryKernel<kBool, Not>));
MNCC_REFERENCE_KERNEL("", Clip, clipKernel);
