//===- ElementwiseVariadic.cpp - Sum, Mean, Max, Min, Where, Expand -------===//
//
// Operators over several broadcast inputs: the variadic folds, the
// three-way Where, and Expand (one input broadcast to a given shape).
//
//===----------------------------------------------------------------------===//

#include "Elementwise.h"

using namespace mncc::reference;
using namespace mncc::reference::elementwise;

namespace {

struct Plus {
  template <typename C> C operator()(C a, C b) const { return a + b; }
};
/// np.maximum / np.minimum: a NaN on either side wins.
struct Maximum {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (isFloat<C>)
      if (std::isnan(a) || std::isnan(b))
        return a + b;
    return a < b ? b : a;
  }
};
struct Minimum {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (isFloat<C>)
      if (std::isnan(a) || std::isnan(b))
        return a + b;
    return b < a ? b : a;
  }
};

/// Folds every input into an accumulator of the output's shape in the
/// compute type, so float16/bfloat16 round once at the end; Mean divides
/// the sum by the input count.
template <uint32_t Mask, typename Op, bool Mean = false>
Status variadicKernel(KernelContext &context) {
  std::vector<const Tensor *> inputs;
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < context.numInputs(); ++i) {
    const Tensor *input;
    if (Status s = requireTensor(context, i, input); !s)
      return s;
    if (!inputs.empty() && input->dtype() != inputs[0]->dtype())
      return fail(context, std::string("inputs have different types ") +
                               dtypeName(inputs[0]->dtype()) + " and " +
                               dtypeName(input->dtype()));
    inputs.push_back(input);
    shapes.push_back(input->shape());
  }
  if (inputs.empty())
    return fail(context, "needs at least one input");
  auto shape = broadcastShapes(shapes);
  if (!shape) {
    std::string list;
    for (const auto &s : shapes)
      list += (list.empty() ? "" : ", ") + shapeToString(s);
    return fail(context, "shapes " + list + " do not broadcast");
  }
  Op op;
  bool supported = dispatchIn<Mask>(inputs[0]->dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    Tensor out(dtypeOf<T>(), *shape);
    int64_t count = out.numElements();
    // Accumulate in the output itself unless the compute type differs.
    std::vector<C> buffer;
    C *acc;
    if constexpr (std::is_same_v<C, T>) {
      acc = out.data<T>();
    } else {
      buffer.resize(count);
      acc = buffer.data();
    }
    for (size_t k = 0; k < inputs.size(); ++k) {
      const T *in = inputs[k]->data<T>();
      // Both loops take the per-element step as a lambda, so that the
      // first-input test stays out of them.
      auto walk = [&](auto step) {
        if (inputs[k]->shape() == *shape) {
          for (int64_t i = 0; i < count; ++i)
            step(i, i);
        } else {
          forEachBroadcast<1>(
              *shape, {broadcastStrides(inputs[k]->shape(), *shape)},
              [&](int64_t i, const std::array<int64_t, 1> &offsets) {
                step(i, offsets[0]);
              });
        }
      };
      if (k == 0)
        walk([&](int64_t i, int64_t o) { acc[i] = C(load(in[o])); });
      else
        walk(
            [&](int64_t i, int64_t o) { acc[i] = op(acc[i], C(load(in[o]))); });
    }
    if constexpr (Mean)
      for (int64_t i = 0; i < count; ++i)
        acc[i] /= C(inputs.size());
    if constexpr (!std::is_same_v<C, T>)
      for (int64_t i = 0; i < count; ++i)
        out.data<T>()[i] = store<T>(acc[i]);
    context.setOutput(0, Value(std::move(out)));
  });
  return supported ? Status::success()
                   : unsupportedType(context, inputs[0]->dtype());
}

/// Where(condition, X, Y) for any element type, strings included.
Status whereKernel(KernelContext &context) {
  const Tensor *inputs[3];
  for (size_t i = 0; i < 3; ++i)
    if (Status s = requireTensor(context, i, inputs[i]); !s)
      return s;
  const Tensor &cond = *inputs[0], &x = *inputs[1], &y = *inputs[2];
  if (cond.dtype() != DType::Bool)
    return fail(context, std::string("condition must be bool, got ") +
                             dtypeName(cond.dtype()));
  if (x.dtype() != y.dtype())
    return fail(context, std::string("X and Y have different types ") +
                             dtypeName(x.dtype()) + " and " +
                             dtypeName(y.dtype()));
  auto shape = broadcastShapes({cond.shape(), x.shape(), y.shape()});
  if (!shape)
    return fail(context, "shapes " + shapeToString(cond.shape()) + ", " +
                             shapeToString(x.shape()) + " and " +
                             shapeToString(y.shape()) + " do not broadcast");
  bool supported = dispatchIn<kAll>(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Tensor out(x.dtype(), *shape);
    const bool *pc = cond.data<bool>();
    const T *px = elements<T>(x), *py = elements<T>(y);
    T *po = elements<T>(out);
    if (cond.shape() == *shape && x.shape() == *shape && y.shape() == *shape) {
      for (int64_t i = 0, e = out.numElements(); i < e; ++i)
        po[i] = pc[i] ? px[i] : py[i];
    } else {
      forEachBroadcast<3>(*shape,
                          {broadcastStrides(cond.shape(), *shape),
                           broadcastStrides(x.shape(), *shape),
                           broadcastStrides(y.shape(), *shape)},
                          [&](int64_t i, const std::array<int64_t, 3> &o) {
                            po[i] = pc[o[0]] ? px[o[1]] : py[o[2]];
                          });
    }
    context.setOutput(0, Value(std::move(out)));
  });
  return supported ? Status::success() : unsupportedType(context, x.dtype());
}

/// Expand(input, shape): the output shape is the broadcast of both, so a 1
/// in `shape` keeps the input's dimension.
Status expandKernel(KernelContext &context) {
  const Tensor *input, *shapeTensor;
  if (Status s = requireTensor(context, 0, input); !s)
    return s;
  if (Status s = requireTensor(context, 1, shapeTensor); !s)
    return s;
  if (shapeTensor->dtype() != DType::Int64 || shapeTensor->rank() != 1)
    return fail(context, "shape must be a 1-D int64 tensor");
  std::vector<int64_t> requested = shapeTensor->toVector<int64_t>();
  for (int64_t dim : requested)
    if (dim < 0)
      return fail(context,
                  "negative dimension in shape " + shapeToString(requested));
  auto shape = broadcastShapes({input->shape(), requested});
  if (!shape)
    return fail(context, "input shape " + shapeToString(input->shape()) +
                             " does not broadcast with " +
                             shapeToString(requested));
  bool supported = dispatchIn<kAll>(input->dtype(), [&](auto tag) {
    using T = decltype(tag);
    Tensor out(input->dtype(), *shape);
    const T *in = elements<T>(*input);
    T *po = elements<T>(out);
    forEachBroadcast<1>(
        *shape, {broadcastStrides(input->shape(), *shape)},
        [&](int64_t i, const std::array<int64_t, 1> &o) { po[i] = in[o[0]]; });
    context.setOutput(0, Value(std::move(out)));
  });
  return supported ? Status::success()
                   : unsupportedType(context, input->dtype());
}

} // namespace

MNCC_REFERENCE_KERNEL("", Sum, (variadicKernel<kFloat, Plus>));
MNCC_REFERENCE_KERNEL("", Mean, (variadicKernel<kFloat, Plus, true>));
MNCC_REFERENCE_KERNEL("", Max, (variadicKernel<kNumeric, Maximum>));
MNCC_REFERENCE_KERNEL("", Min, (variadicKernel<kNumeric, Minimum>));
MNCC_REFERENCE_KERNEL("", Where, whereKernel);
MNCC_REFERENCE_KERNEL("", Expand, expandKernel);
