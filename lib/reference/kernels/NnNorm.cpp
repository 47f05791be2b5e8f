//===- NnNorm.cpp - Normalization operators -------------------------------===//
//
// BatchNormalization, InstanceNormalization, LayerNormalization,
// LpNormalization, MeanVarianceNormalization and LRN. Statistics are
// accumulated in double (in a fixed order) and the result rounded once to
// the element type; float16/bfloat16 run through float.
//
//===----------------------------------------------------------------------===//

#include "LinalgGemm.h"
#include "NnUtil.h"

#include "mncc/reference/Broadcast.h"

#include <cmath>

using namespace mncc::reference;
using namespace mncc::reference::nn;

namespace {

/// A per-channel parameter (scale, bias, mean, var) of any float type as
/// doubles, checked to have shape [channels].
Status readChannelParam(KernelContext &context, size_t index, const char *name,
                        int64_t channels, std::vector<double> &values) {
  if (Status s = requireFloatInput(context, index, name); !s)
    return s;
  const Tensor *t = context.inputTensor(index);
  if (t->rank() != 1 || t->shape()[0] != channels)
    return opError(context, std::string(name) + " must have shape [" +
                                std::to_string(channels) + "], not " +
                                shapeToString(t->shape()));
  values.resize(channels);
  for (int64_t i = 0; i < channels; ++i)
    values[i] = t->elementAsDouble(i);
  return Status::success();
}

/// Y[n, c, ...] = X[n, c, ...] * a[c or n*C+c] + b[...], over planes.
template <typename T>
void affinePlanes(const Tensor &x, const std::vector<double> &a,
                  const std::vector<double> &b, bool perImage, Tensor &y) {
  int64_t batch = x.shape()[0], channels = x.rank() > 1 ? x.shape()[1] : 1;
  int64_t planes = batch * channels;
  int64_t size = planes ? x.numElements() / planes : 0;
  const T *in = x.data<T>();
  T *out = y.data<T>();
  linalg::parallelFor(planes,
                      std::max<int64_t>(1, 32768 / std::max<int64_t>(size, 1)),
                      [&](int64_t begin, int64_t end) {
                        for (int64_t p = begin; p < end; ++p) {
                          int64_t i = perImage ? p : p % channels;
                          T scale = T(a[i]), shift = T(b[i]);
                          const T *src = in + p * size;
                          T *dst = out + p * size;
                          for (int64_t k = 0; k < size; ++k)
                            dst[k] = src[k] * scale + shift;
                        }
                      });
}

/// Mean and population variance of each (image, channel) plane, or of
/// each channel over images when `overImages`.
void planeStats(const Tensor &x, bool overImages, std::vector<double> &mean,
                std::vector<double> &var) {
  int64_t batch = x.shape()[0], channels = x.shape()[1];
  int64_t size =
      batch * channels != 0 ? x.numElements() / (batch * channels) : 0;
  int64_t groups = overImages ? channels : batch * channels;
  mean.assign(groups, 0);
  var.assign(groups, 0);
  std::vector<double> sum(groups, 0), squares(groups, 0);
  dispatchNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T *in = x.data<T>();
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t c = 0; c < channels; ++c) {
          int64_t g = overImages ? c : n * channels + c;
          const T *p = in + (n * channels + c) * size;
          for (int64_t k = 0; k < size; ++k)
            sum[g] += p[k];
        }
      int64_t count = overImages ? batch * size : size;
      for (int64_t g = 0; g < groups; ++g)
        mean[g] = count ? sum[g] / count : 0;
      // Two passes: the variance of values around their mean.
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t c = 0; c < channels; ++c) {
          int64_t g = overImages ? c : n * channels + c;
          const T *p = in + (n * channels + c) * size;
          for (int64_t k = 0; k < size; ++k)
            squares[g] += (p[k] - mean[g]) * (p[k] - mean[g]);
        }
      for (int64_t g = 0; g < groups; ++g)
        var[g] = count ? squares[g] / count : 0;
    }
  });
}

Tensor applyAffine(const Tensor &x, const std::vector<double> &a,
                   const std::vector<double> &b, bool perImage) {
  DType work = computeType(x.dtype());
  Tensor xw = castFloat(x, work);
  Tensor y(work, x.shape());
  if (work == DType::Float64)
    affinePlanes<double>(xw, a, b, perImage, y);
  else
    affinePlanes<float>(xw, a, b, perImage, y);
  return castFloat(y, x.dtype());
}

Status batchNormalizationKernel(KernelContext &context) {
  if (Status s = requireFloatInput(context, 0, "X"); !s)
    return s;
  const Tensor *x = context.inputTensor(0);
  if (x->rank() < 2)
    return opError(context,
                   "X must be N x C x ..., not " + shapeToString(x->shape()));
  int64_t channels = x->shape()[1];
  std::vector<double> scale, bias, mean, var;
  for (auto [index, name, values] :
       {std::tuple<size_t, const char *, std::vector<double> *>{1, "scale",
                                                                &scale},
        {2, "B", &bias},
        {3, "input_mean", &mean},
        {4, "input_var", &var}})
    if (Status s = readChannelParam(context, index, name, channels, *values);
        !s)
      return s;
  double epsilon = context.getFloat("epsilon", 1e-5f);
  double momentum = context.getFloat("momentum", 0.9f);
  bool training = context.getInt("training_mode", 0) != 0;
  std::vector<double> useMean = mean, useVar = var;
  if (training) {
    Tensor xw = castFloat(*x, computeType(x->dtype()));
    planeStats(xw, true, useMean, useVar);
  }
  std::vector<double> a(channels), b(channels);
  for (int64_t c = 0; c < channels; ++c) {
    a[c] = scale[c] / std::sqrt(useVar[c] + epsilon);
    b[c] = bias[c] - useMean[c] * a[c];
  }
  context.setOutput(0, applyAffine(*x, a, b, false));
  if (training) {
    // running = input * momentum + current * (1 - momentum), in the
    // types of input_mean and input_var.
    for (size_t out = 1; out <= 2; ++out) {
      if (context.numOutputs() <= out || !context.wantsOutput(out))
        continue;
      const Tensor *stat = context.inputTensor(out + 2);
      const std::vector<double> &input = out == 1 ? mean : var;
      const std::vector<double> &current = out == 1 ? useMean : useVar;
      Tensor running(DType::Float64, {channels});
      for (int64_t c = 0; c < channels; ++c)
        running.data<double>()[c] =
            input[c] * momentum + current[c] * (1 - momentum);
      context.setOutput(out, castFloat(running, stat->dtype()));
    }
  }
  return Status::success();
}

Status instanceNormalizationKernel(KernelContext &context) {
  if (Status s = requireFloatInput(context, 0, "input"); !s)
    return s;
  const Tensor *x = context.inputTensor(0);
  if (x->rank() < 3)
    return opError(context, "input must be N x C x spatial..., not " +
                                shapeToString(x->shape()));
  int64_t batch = x->shape()[0], channels = x->shape()[1];
  std::vector<double> scale, bias, mean, var;
  if (Status s = readChannelParam(context, 1, "scale", channels, scale); !s)
    return s;
  if (Status s = readChannelParam(context, 2, "B", channels, bias); !s)
    return s;
  double epsilon = context.getFloat("epsilon", 1e-5f);
  planeStats(castFloat(*x, computeType(x->dtype())), false, mean, var);
  std::vector<double> a(batch * channels), b(batch * channels);
  for (int64_t p = 0; p < batch * channels; ++p) {
    int64_t c = p % channels;
    a[p] = scale[c] / std::sqrt(var[p] + epsilon);
    b[p] = bias[c] - mean[p] * a[p];
  }
  context.setOutput(0, applyAffine(*x, a, b, true));
  return Status::success();
}

/// X (any float type) as doubles.
std::vector<double> toDoubles(const Tensor &x) {
  Tensor d = castFloat(x, DType::Float64);
  return std::vector<double>(d.data<double>(),
                             d.data<double>() + d.numElements());
}

Tensor fromDoubles(const std::vector<double> &values,
                   const std::vector<int64_t> &shape, DType dtype) {
  Tensor d(DType::Float64, shape);
  std::copy(values.begin(), values.end(), d.data<double>());
  return castFloat(d, dtype);
}

Status layerNormalizationKernel(KernelContext &context) {
  if (Status s = requireFloatInput(context, 0, "X"); !s)
    return s;
  if (Status s = requireFloatInput(context, 1, "Scale"); !s)
    return s;
  const Tensor *x = context.inputTensor(0);
  const Tensor *scale = context.inputTensor(1);
  const Tensor *bias = context.inputTensor(2);
  if (bias && !isFloatType(bias->dtype()))
    return opError(context, "B must be a float tensor");
  int64_t axis = context.getInt("axis", -1);
  if (!normalizeAxis(axis, x->rank()))
    return opError(context, "axis " + std::to_string(axis) +
                                " is out of range for rank " +
                                std::to_string(x->rank()));
  double epsilon = context.getFloat("epsilon", 1e-5f);
  int64_t stashType = context.getInt("stash_type", 1);
  std::vector<int64_t> normShape(x->shape().begin() + axis, x->shape().end());
  for (const Tensor *param : {scale, bias}) {
    if (!param)
      continue;
    auto shape = broadcastShapes({param->shape(), normShape});
    if (!shape || *shape != normShape)
      return opError(context,
                     "Scale/B of shape " + shapeToString(param->shape()) +
                         " do not broadcast to " + shapeToString(normShape));
  }
  int64_t inner = 1;
  for (int64_t d : normShape)
    inner *= d;
  int64_t outer = inner ? x->numElements() / inner : 0;
  std::vector<double> in = toDoubles(*x), y(in.size());
  std::vector<double> scaleValues = toDoubles(*scale), biasValues;
  if (bias)
    biasValues = toDoubles(*bias);
  std::vector<int64_t> scaleStrides =
      broadcastStrides(scale->shape(), normShape);
  std::vector<int64_t> biasStrides =
      bias ? broadcastStrides(bias->shape(), normShape) : scaleStrides;
  // Offsets of Scale and B for each normalized position.
  std::vector<int64_t> scaleAt(inner), biasAt(inner);
  forEachBroadcast<2>(normShape, {scaleStrides, biasStrides},
                      [&](int64_t i, const std::array<int64_t, 2> &offsets) {
                        scaleAt[i] = offsets[0];
                        biasAt[i] = offsets[1];
                      });
  std::vector<double> means(outer), invStd(outer);
  bool stashFloat = stashType == 1;
  for (int64_t o = 0; o < outer; ++o) {
    const double *row = in.data() + o * inner;
    double sum = 0, squares = 0;
    for (int64_t i = 0; i < inner; ++i)
      sum += row[i];
    double mean = sum / inner;
    for (int64_t i = 0; i < inner; ++i)
      squares += (row[i] - mean) * (row[i] - mean);
    double inv = 1 / std::sqrt(squares / inner + epsilon);
    if (stashFloat) {
      // The statistics are stashed as float (stash_type 1).
      mean = static_cast<float>(mean);
      inv = static_cast<float>(inv);
    }
    means[o] = mean;
    invStd[o] = inv;
    for (int64_t i = 0; i < inner; ++i)
      y[o * inner + i] = (row[i] - mean) * inv * scaleValues[scaleAt[i]] +
                         (bias ? biasValues[biasAt[i]] : 0.0);
  }
  context.setOutput(0, fromDoubles(y, x->shape(), x->dtype()));
  std::vector<int64_t> statShape = x->shape();
  for (size_t d = axis; d < statShape.size(); ++d)
    statShape[d] = 1;
  DType statType = stashFloat ? DType::Float32 : x->dtype();
  if (context.numOutputs() > 1 && context.wantsOutput(1))
    context.setOutput(1, fromDoubles(means, statShape, statType));
  if (context.numOutputs() > 2 && context.wantsOutput(2))
    context.setOutput(2, fromDoubles(invStd, statShape, statType));
  return Status::success();
}

Status lpNormalizationKernel(KernelContext &context) {
  if (Status s = requireFloatInput(context, 0, "input"); !s)
    return s;
  const Tensor *x = context.inputTensor(0);
  int64_t axis = context.getInt("axis", -1);
  int64_t p = context.getInt("p", 2);
  if (p != 1 && p != 2)
    return opError(context, "p must be 1 or 2, not " + std::to_string(p));
  if (!normalizeAxis(axis, std::max<int64_t>(x->rank(), 1)) || x->rank() == 0)
    return opError(context, "axis is out of range");
  int64_t length = x->shape()[axis], inner = 1;
  for (int64_t d = axis + 1; d < x->rank(); ++d)
    inner *= x->shape()[d];
  int64_t outer = length * inner != 0 ? x->numElements() / (length * inner) : 0;
  std::vector<double> v = toDoubles(*x);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double *base = v.data() + o * length * inner + i;
      double norm = 0;
      for (int64_t k = 0; k < length; ++k)
        norm += p == 1 ? std::abs(base[k * inner])
                       : base[k * inner] * base[k * inner];
      if (p == 2)
        norm = std::sqrt(norm);
      for (int64_t k = 0; k < length; ++k)
        base[k * inner] /= norm;
    }
  context.setOutput(0, fromDoubles(v, x->shape(), x->dtype()));
  return Status::success();
}

Status meanVarianceNormalizationKernel(KernelContext &context) {
  if (Status s = requireFloatInput(context, 0, "X"); !s)
    return s;
  const Tensor *x = context.inputTensor(0);
  std::vector<int64_t> axes = context.getInts("axes", {0, 2, 3});
  int64_t rank = x->rank();
  std::vector<bool> reduced(rank, false);
  for (int64_t axis : axes) {
    if (!normalizeAxis(axis, rank))
      return opError(context, "axis " + std::to_string(axis) +
                                  " is out of range for rank " +
                                  std::to_string(rank));
    reduced[axis] = true;
  }
  // Each element's group: its index with the reduced axes dropped.
  std::vector<int64_t> groupShape = x->shape();
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[d])
      groupShape[d] = 1;
  std::vector<int64_t> groupOf(x->numElements());
  forEachBroadcast<1>(x->shape(), {broadcastStrides(groupShape, x->shape())},
                      [&](int64_t i, const std::array<int64_t, 1> &offsets) {
                        groupOf[i] = offsets[0];
                      });
  int64_t groups = 1;
  for (int64_t d : groupShape)
    groups *= d;
  std::vector<double> v = toDoubles(*x), sum(groups, 0), squares(groups, 0);
  std::vector<int64_t> count(groups, 0);
  for (size_t i = 0; i < v.size(); ++i) {
    sum[groupOf[i]] += v[i];
    squares[groupOf[i]] += v[i] * v[i];
    ++count[groupOf[i]];
  }
  // As ONNX's function body: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9).
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t g = groupOf[i];
    double mean = sum[g] / count[g];
    double variance = squares[g] / count[g] - mean * mean;
    v[i] = (v[i] - mean) / (std::sqrt(std::max(variance, 0.0)) + 1e-9);
  }
  context.setOutput(0, fromDoubles(v, x->shape(), x->dtype()));
  return Status::success();
}

Status lrnKernel(KernelContext &context) {
  if (Status s = requireFloatInput(context, 0, "X"); !s)
    return s;
  const Tensor *x = context.inputTensor(0);
  if (x->rank() < 2)
    return opError(context,
                   "X must be N x C x ..., not " + shapeToString(x->shape()));
  if (!context.hasAttribute("size") || context.getInt("size", 0) < 1)
    return opError(context, "needs a positive size");
  int64_t size = context.getInt("size", 1);
  double alpha = context.getFloat("alpha", 1e-4f);
  double beta = context.getFloat("beta", 0.75f);
  double bias = context.getFloat("bias", 1.0f);
  int64_t batch = x->shape()[0], channels = x->shape()[1];
  int64_t plane =
      batch * channels != 0 ? x->numElements() / (batch * channels) : 0;
  // The window over channels: [c - floor((size-1)/2), c + ceil((size-1)/2)].
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  std::vector<double> v = toDoubles(*x), y(v.size());
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < plane; ++i) {
        double squares = 0;
        for (int64_t k = std::max<int64_t>(0, c - before);
             k <= std::min(channels - 1, c + after); ++k) {
          double value = v[(n * channels + k) * plane + i];
          squares += value * value;
        }
        int64_t at = (n * channels + c) * plane + i;
        y[at] = v[at] / std::pow(bias + alpha / size * squares, beta);
      }
  context.setOutput(0, fromDoubles(y, x->shape(), x->dtype()));
  return Status::success();
}

} // namespace

MNCC_REFERENCE_KERNEL("", BatchNormalization, batchNormalizationKernel);
MNCC_REFERENCE_KERNEL("", InstanceNormalization, instanceNormalizationKernel);
MNCC_REFERENCE_KERNEL("", LayerNormalization, layerNormalizationKernel);
MNCC_REFERENCE_KERNEL("", LpNormalization, lpNormalizationKernel);
MNCC_REFERENCE_KERNEL("", MeanVarianceNormalization,
                      meanVarianceNormalizationKernel);
MNCC_REFERENCE_KERNEL("", LRN, lrnKernel);
