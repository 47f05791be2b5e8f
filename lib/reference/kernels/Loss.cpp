//===- Loss.cpp - NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss ---===//
//
// Both losses use the opset-13 semantics: input [N, C] or [N, C, d1, ...]
// with the class axis 1, targets [N] or [N, d1, ...], an optional per-class
// weight, ignore_index, and reduction none/sum/mean. The mean divides the
// sum of the weighted losses by the sum of the weights actually applied
// (not by the element count), as ONNX defines it. Everything computes in
// double, in a fixed order, and rounds once to the output type.
//
//===----------------------------------------------------------------------===//

#include "NnUtil.h"

#include "mncc/reference/Broadcast.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

using namespace mncc::reference;
using namespace mncc::reference::nn;

namespace {

enum class Reduction { None, Sum, Mean };

bool isLossType(DType dtype) {
  return dtype == DType::Float16 || dtype == DType::Float32 ||
         dtype == DType::Float64;
}

/// The operands shared by both losses, checked against each other.
struct LossInputs {
  const Tensor *input = nullptr;  // [N, C, d...]
  const Tensor *target = nullptr; // [N, d...]
  const Tensor *weight = nullptr; // [C] or nullptr
  Reduction reduction = Reduction::Mean;
  std::optional<int64_t> ignoreIndex;
  int64_t n = 0, classes = 0, inner = 0; // inner: product of d...
};

Status readLossInputs(const KernelContext &context, LossInputs &in) {
  in.input = context.inputTensor(0);
  in.target = context.inputTensor(1);
  in.weight = context.inputTensor(2);
  if (!in.input)
    return opError(context, "missing input 0 (the scores)");
  if (!in.target)
    return opError(context, "missing input 1 (the targets)");
  if (!isLossType(in.input->dtype()))
    return opError(context, std::string("input must be float16, float or "
                                        "double, not ") +
                                dtypeName(in.input->dtype()));
  if (in.target->dtype() != DType::Int32 && in.target->dtype() != DType::Int64)
    return opError(context, std::string("target must be int32 or int64, not ") +
                                dtypeName(in.target->dtype()));
  const std::vector<int64_t> &shape = in.input->shape();
  if (shape.size() < 2)
    return opError(context, "input must have rank >= 2 ([N, C, ...]), not " +
                                std::to_string(shape.size()));
  std::vector<int64_t> expected = shape;
  expected.erase(expected.begin() + 1);
  if (in.target->shape() != expected)
    return opError(context, "target shape " +
                                shapeToString(in.target->shape()) +
                                " does not match input shape " +
                                shapeToString(shape) + " without its axis 1");
  in.n = shape[0];
  in.classes = shape[1];
  in.inner = 1;
  for (size_t d = 2; d < shape.size(); ++d)
    in.inner *= shape[d];
  if (in.weight) {
    if (in.weight->dtype() != in.input->dtype())
      return opError(context, std::string("weight type ") +
                                  dtypeName(in.weight->dtype()) +
                                  " differs from input type " +
                                  dtypeName(in.input->dtype()));
    if (in.weight->shape() != std::vector<int64_t>{in.classes})
      return opError(context,
                     "weight shape " + shapeToString(in.weight->shape()) +
                         " must be [C] = [" + std::to_string(in.classes) + "]");
  }
  std::string reduction = context.getString("reduction", "mean");
  if (reduction == "none")
    in.reduction = Reduction::None;
  else if (reduction == "sum")
    in.reduction = Reduction::Sum;
  else if (reduction == "mean")
    in.reduction = Reduction::Mean;
  else
    return opError(context, "reduction must be none, sum or mean, not '" +
                                reduction + "'");
  // ignore_index has no default: without it every target counts.
  if (context.hasAttribute("ignore_index"))
    in.ignoreIndex = context.getInt("ignore_index", 0);
  return Status::success();
}

/// Writes `values` (double) into a new tensor of `dtype` and `shape`.
Tensor fromDoubles(DType dtype, std::vector<int64_t> shape,
                   const std::vector<double> &values) {
  Tensor wide =
      Tensor::fromVector<double>(DType::Float64, std::move(shape), values);
  return castFloat(wide, dtype);
}

/// The loss from log-probabilities `logProb` laid out as the input
/// ([N, C, inner] row-major); sets output 0.
Status negativeLogLikelihood(KernelContext &context, const LossInputs &in,
                             const std::vector<double> &logProb) {
  Tensor weight64;
  const double *weight = nullptr;
  if (in.weight) {
    weight64 = castFloat(*in.weight, DType::Float64);
    weight = weight64.data<double>();
  }
  int64_t count = in.n * in.inner;
  std::vector<double> losses(count);
  double lossSum = 0, weightSum = 0;
  for (int64_t b = 0; b < in.n; ++b) {
    for (int64_t i = 0; i < in.inner; ++i) {
      int64_t k = b * in.inner + i;
      int64_t cls = in.target->elementAsInt64(k);
      if (in.ignoreIndex && cls == *in.ignoreIndex) {
        losses[k] = 0; // and its weight counts as 0 in the mean
        continue;
      }
      if (cls < 0 || cls >= in.classes)
        return opError(context, "target " + std::to_string(cls) + " at index " +
                                    std::to_string(k) + " is outside [0, " +
                                    std::to_string(in.classes) + ")");
      double w = weight ? weight[cls] : 1.0;
      losses[k] = -logProb[(b * in.classes + cls) * in.inner + i] * w;
      lossSum += losses[k];
      weightSum += w;
    }
  }
  DType dtype = in.input->dtype();
  if (in.reduction == Reduction::None) {
    context.setOutput(0, Value(fromDoubles(dtype, in.target->shape(), losses)));
    return Status::success();
  }
  // With every target ignored the mean is 0 / 0 = NaN, as in ONNX's
  // reference (numpy's division).
  double result =
      in.reduction == Reduction::Sum ? lossSum : lossSum / weightSum;
  context.setOutput(0, Value(fromDoubles(dtype, {}, {result})));
  return Status::success();
}

Status nllKernel(KernelContext &context) {
  LossInputs in;
  if (Status s = readLossInputs(context, in); !s)
    return s;
  Tensor input = castFloat(*in.input, DType::Float64);
  std::vector<double> logProb = input.toVector<double>();
  return negativeLogLikelihood(context, in, logProb);
}

Status sceKernel(KernelContext &context) {
  LossInputs in;
  if (Status s = readLossInputs(context, in); !s)
    return s;
  Tensor input = castFloat(*in.input, DType::Float64);
  const double *x = input.data<double>();
  // log_softmax over the class axis, shifted by the maximum so exp never
  // overflows.
  std::vector<double> logProb(input.numElements());
  for (int64_t b = 0; b < in.n; ++b) {
    for (int64_t i = 0; i < in.inner; ++i) {
      int64_t base = b * in.classes * in.inner + i;
      double maximum = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < in.classes; ++c)
        maximum = std::max(maximum, x[base + c * in.inner]);
      double sum = 0;
      for (int64_t c = 0; c < in.classes; ++c)
        sum += std::exp(x[base + c * in.inner] - maximum);
      double logSum = maximum + std::log(sum);
      for (int64_t c = 0; c < in.classes; ++c)
        logProb[base + c * in.inner] = x[base + c * in.inner] - logSum;
    }
  }
  if (Status s = negativeLogLikelihood(context, in, logProb); !s)
    return s;
  if (context.numOutputs() > 1 && context.wantsOutput(1))
    context.setOutput(
        1, Value(fromDoubles(in.input->dtype(), in.input->shape(), logProb)));
  return Status::success();
}

} // namespace

MNCC_REFERENCE_KERNEL("", NegativeLogLikelihoodLoss, nllKernel);
MNCC_REFERENCE_KERNEL("", SoftmaxCrossEntropyLoss, sceKernel);
