//===- NnSoftmax.cpp - Softmax, LogSoftmax, Hardmax and Dropout -----------===//
//
// Softmax and its relatives use the opset-13 semantics: one axis (default
// -1), not the flattened 2-D view of the earlier opsets. Sums run in
// double, in a fixed order.
//
//===----------------------------------------------------------------------===//

#include "NnUtil.h"

#include "mncc/reference/Broadcast.h"

#include <cmath>
#include <limits>
#include <random>

using namespace mncc::reference;
using namespace mncc::reference::nn;

namespace {

enum class Mode { Softmax, LogSoftmax, Hardmax };

Status softmaxFamily(KernelContext &context, Mode mode) {
  if (Status s = requireFloatInput(context, 0, "input"); !s)
    return s;
  const Tensor *x = context.inputTensor(0);
  int64_t axis = context.getInt("axis", -1);
  if (x->rank() == 0)
    return opError(context, "input must have rank >= 1");
  if (!normalizeAxis(axis, x->rank()))
    return opError(context, "axis " + std::to_string(axis) +
                                " is out of range for rank " +
                                std::to_string(x->rank()));
  int64_t length = x->shape()[axis], inner = 1;
  for (int64_t d = axis + 1; d < x->rank(); ++d)
    inner *= x->shape()[d];
  int64_t outer = length * inner != 0 ? x->numElements() / (length * inner) : 0;
  Tensor v = castFloat(*x, DType::Float64).clone();
  double *data = v.data<double>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double *base = data + o * length * inner + i;
      // The maximum keeps exp() in range. Hardmax takes the first one,
      // and like numpy's argmax counts a NaN as the maximum.
      double best = -std::numeric_limits<double>::infinity();
      int64_t bestAt = 0;
      for (int64_t k = 0; k < length; ++k) {
        double v = base[k * inner];
        if ((v > best || std::isnan(v)) && !std::isnan(best)) {
          best = v;
          bestAt = k;
        }
      }
      if (mode == Mode::Hardmax) {
        for (int64_t k = 0; k < length; ++k)
          base[k * inner] = k == bestAt ? 1.0 : 0.0;
        continue;
      }
      double sum = 0;
      for (int64_t k = 0; k < length; ++k)
        sum += std::exp(base[k * inner] - best);
      for (int64_t k = 0; k < length; ++k) {
        double shifted = base[k * inner] - best;
        base[k * inner] = mode == Mode::Softmax ? std::exp(shifted) / sum
                                                : shifted - std::log(sum);
      }
    }
  context.setOutput(0, castFloat(v, x->dtype()));
  return Status::success();
}

Status softmaxKernel(KernelContext &context) {
  return softmaxFamily(context, Mode::Softmax);
}
Status logSoftmaxKernel(KernelContext &context) {
  return softmaxFamily(context, Mode::LogSoftmax);
}
Status hardmaxKernel(KernelContext &context) {
  return softmaxFamily(context, Mode::Hardmax);
}

Status dropoutKernel(KernelContext &context) {
  if (Status s = requireFloatInput(context, 0, "data"); !s)
    return s;
  const Tensor *x = context.inputTensor(0);
  const Tensor *ratioIn = context.inputTensor(1);
  const Tensor *trainingIn = context.inputTensor(2);
  double ratio = 0.5;
  if (ratioIn) {
    if (!isFloatType(ratioIn->dtype()) || ratioIn->numElements() != 1)
      return opError(context, "ratio must be a float scalar");
    ratio = ratioIn->elementAsDouble(0);
  }
  bool training = false;
  if (trainingIn) {
    if (trainingIn->dtype() != DType::Bool || trainingIn->numElements() != 1)
      return opError(context, "training_mode must be a bool scalar");
    training = trainingIn->data<bool>()[0];
  }
  if (training && !(ratio >= 0 && ratio < 1))
    return opError(context,
                   "ratio must be in [0, 1), not " + std::to_string(ratio));
  bool wantMask = context.numOutputs() > 1 && context.wantsOutput(1);
  Tensor mask(DType::Bool, x->shape());
  if (!training || ratio == 0) {
    // Inference (or nothing to drop): the identity, every element kept.
    context.setOutput(0, *x);
    if (wantMask) {
      std::fill(mask.data<bool>(), mask.data<bool>() + mask.numElements(),
                true);
      context.setOutput(1, mask);
    }
    return Status::success();
  }
  uint64_t seed = context.hasAttribute("seed")
                      ? static_cast<uint64_t>(context.getInt("seed", 0))
                      : context.defaultSeed();
  // A fixed generator and a fixed draw-to-[0,1) mapping, so a seed gives
  // the same mask on every platform.
  std::mt19937_64 generator(seed);
  Tensor v = castFloat(*x, DType::Float64).clone();
  double *data = v.data<double>();
  bool *keep = mask.data<bool>();
  double scale = 1 / (1 - ratio);
  for (int64_t i = 0; i < v.numElements(); ++i) {
    double draw = static_cast<double>(generator() >> 11) * 0x1.0p-53;
    keep[i] = draw >= ratio;
    data[i] = keep[i] ? data[i] * scale : 0.0;
  }
  context.setOutput(0, castFloat(v, x->dtype()));
  if (wantMask)
    context.setOutput(1, mask);
  return Status::success();
}

} // namespace

MNCC_REFERENCE_KERNEL("", Softmax, softmaxKernel);
MNCC_REFERENCE_KERNEL("", LogSoftmax, logSoftmaxKernel);
MNCC_REFERENCE_KERNEL("", Hardmax, hardmaxKernel);
MNCC_REFERENCE_KERNEL("", Dropout, dropoutKernel);
