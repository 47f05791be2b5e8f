//===- NnResize.cpp - Resize and Upsample ---------------------------------===//
//
// Resize (opset 13 semantics) follows ONNX's reference interpolation
// exactly: per dimension, each output coordinate maps to a position in
// the input (coordinate_transformation_mode), which selects n neighbours
// (2 for nearest and linear, 4 for cubic; the input is edge-padded) with
// n coefficients; dimensions combine separably, outermost last, and
// tf_crop_and_resize returns extrapolation_value outside the input.
// Computed in double, stored in the input type.
//
//===----------------------------------------------------------------------===//

#include "NnUtil.h"

#include "mncc/reference/Broadcast.h"
#include "mncc/reference/ResizeSampling.h"

#include <cmath>
#include <functional>

using namespace mncc::reference;
using namespace mncc::reference::nn;

namespace {

std::vector<double> coefficients(const ResizeOptions &o, double ratio) {
  if (o.mode == "linear")
    return {1 - ratio, ratio};
  if (o.mode == "cubic") {
    double a = o.cubicA, r = ratio, s = 1 - ratio;
    return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1,
            ((a + 2) * s - (a + 3)) * s * s + 1,
            ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
  }
  // nearest: ratio 1 means the position is exactly on the right neighbour.
  if (ratio == 1)
    return {0, 1};
  bool right;
  if (o.nearestMode == "round_prefer_ceil")
    right = ratio >= 0.5;
  else if (o.nearestMode == "floor")
    right = false;
  else if (o.nearestMode == "ceil")
    right = true;
  else
    right = ratio > 0.5;
  return {right ? 0.0 : 1.0, right ? 1.0 : 0.0};
}

} // namespace

ResizeSample mncc::reference::resizeSampleAt(const ResizeOptions &o, int64_t x,
                                             int64_t in, double scale,
                                             double roiStart, double roiEnd) {
  ResizeSample sample;
  // ONNX's reference uses scale * in (not the rounded output size) here.
  double outWidth = scale * static_cast<double>(in);
  double pos;
  const std::string &t = o.transform;
  if (t == "align_corners") {
    pos = outWidth == 1 ? 0 : x * (in - 1) / (outWidth - 1);
  } else if (t == "asymmetric") {
    pos = x / scale;
  } else if (t == "tf_crop_and_resize") {
    pos = outWidth == 1 ? (roiEnd - roiStart) * (in - 1) / 2
                        : x * (roiEnd - roiStart) * (in - 1) / (outWidth - 1);
    pos += roiStart * (in - 1);
    if (pos < 0 || pos > in - 1) {
      sample.outside = true;
      return sample;
    }
  } else if (t == "tf_half_pixel_for_nn") {
    pos = (x + 0.5) / scale; // opset 11 only
  } else if (t == "pytorch_half_pixel") {
    pos = outWidth == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  } else {
    pos = (x + 0.5) / scale - 0.5;
  }
  double floorPos = std::floor(pos);
  double ratio = pos == floorPos ? 1.0 : pos - floorPos;
  // The left neighbour: the one below pos, or pos - 1 when pos is exact.
  int64_t base = static_cast<int64_t>(ratio == 1.0 ? pos - 1 : floorPos);
  sample.coeff = coefficients(o, ratio);
  int64_t n = static_cast<int64_t>(sample.coeff.size());
  double total = 0;
  for (int64_t j = 0; j < n; ++j) {
    int64_t i = base - n / 2 + 1 + j;
    if (o.excludeOutside && (i < 0 || i >= in))
      sample.coeff[j] = 0;
    total += sample.coeff[j];
    sample.index.push_back(std::min(std::max<int64_t>(i, 0), in - 1));
  }
  if (o.excludeOutside && total != 0)
    for (double &c : sample.coeff)
      c /= total;
  return sample;
}

bool mncc::reference::knownResizeOptions(const ResizeOptions &o,
                                         std::string &error) {
  if (o.mode != "nearest" && o.mode != "linear" && o.mode != "cubic") {
    error = "unknown mode '" + o.mode + "'";
    return false;
  }
  for (const char *known :
       {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
        "tf_crop_and_resize", "tf_half_pixel_for_nn"})
    if (o.transform == known)
      return true;
  error = "unknown coordinate_transformation_mode '" + o.transform + "'";
  return false;
}

namespace {

Status resizeCompute(KernelContext &context, const Tensor &x,
                     const ResizeOptions &o, std::vector<double> scales,
                     std::vector<int64_t> outShape,
                     const std::vector<double> &roi) {
  int64_t rank = x.rank();
  std::vector<std::vector<ResizeSample>> samples(rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (outShape[d] < 0 || (x.shape()[d] == 0 && outShape[d] > 0))
      return opError(context, "cannot resize dimension " + std::to_string(d));
    double start = roi.empty() ? 0 : roi[d];
    double end = roi.empty() ? 1 : roi[rank + d];
    for (int64_t i = 0; i < outShape[d]; ++i)
      samples[d].push_back(
          resizeSampleAt(o, i, x.shape()[d], scales[d], start, end));
  }
  Tensor xd = Tensor(DType::Float64, x.shape());
  for (int64_t i = 0; i < x.numElements(); ++i)
    xd.data<double>()[i] = x.elementAsDouble(i);
  std::vector<int64_t> inStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * x.shape()[d + 1];
  Tensor y(x.dtype(), outShape);
  const double *in = xd.data<double>();
  std::vector<int64_t> coord(rank, 0);
  // value(d, offset): the interpolation over dimensions d.. at `offset`.
  std::function<double(int64_t, int64_t)> value = [&](int64_t d,
                                                      int64_t offset) {
    if (d == rank)
      return in[offset];
    const ResizeSample &s = samples[d][coord[d]];
    if (s.outside)
      return o.extrapolation;
    double sum = 0;
    for (size_t j = 0; j < s.coeff.size(); ++j)
      if (s.coeff[j] != 0)
        sum += s.coeff[j] * value(d + 1, offset + s.index[j] * inStrides[d]);
    return sum;
  };
  int64_t total = y.numElements();
  for (int64_t i = 0; i < total; ++i) {
    double result = value(0, 0);
    dispatchNumeric(y.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
        y.data<T>()[i] = T(static_cast<float>(result));
      else if constexpr (std::is_arithmetic_v<T>)
        y.data<T>()[i] = static_cast<T>(result);
    });
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++coord[d] < outShape[d])
        break;
      coord[d] = 0;
    }
  }
  context.setOutput(0, y);
  return Status::success();
}

bool resizableType(DType dtype) {
  return dtype != DType::String && dtype != DType::Bool &&
         dtype != DType::Complex64 && dtype != DType::Complex128 &&
         dtype != DType::Undefined;
}

Status checkMode(KernelContext &context, const ResizeOptions &o) {
  std::string error;
  if (!knownResizeOptions(o, error))
    return opError(context, error);
  return Status::success();
}

Status resizeKernel(KernelContext &context) {
  const Tensor *x = context.inputTensor(0);
  if (!x || !resizableType(x->dtype()))
    return opError(context, "needs a numeric input X");
  const Tensor *roiIn = context.inputTensor(1);
  const Tensor *scalesIn = context.inputTensor(2);
  const Tensor *sizesIn = context.inputTensor(3);
  if (scalesIn && scalesIn->numElements() == 0)
    scalesIn = nullptr;
  if (sizesIn && sizesIn->numElements() == 0)
    sizesIn = nullptr;
  if ((scalesIn == nullptr) == (sizesIn == nullptr))
    return opError(context, "needs exactly one of scales and sizes");
  ResizeOptions o;
  o.mode = context.getString("mode", "nearest");
  o.transform =
      context.getString("coordinate_transformation_mode", "half_pixel");
  o.nearestMode = context.getString("nearest_mode", "round_prefer_floor");
  o.cubicA = context.getFloat("cubic_coeff_a", -0.75f);
  o.excludeOutside = context.getInt("exclude_outside", 0) != 0;
  o.extrapolation = context.getFloat("extrapolation_value", 0.0f);
  if (Status s = checkMode(context, o); !s)
    return s;
  // Opset 18's additions change the output; refuse rather than ignore them.
  if (context.getInt("antialias", 0) != 0 || context.hasAttribute("axes") ||
      context.getString("keep_aspect_ratio_policy", "stretch") != "stretch")
    return opError(context, "antialias, axes and keep_aspect_ratio_policy "
                            "(opset 18) are not supported");
  int64_t rank = x->rank();
  std::vector<double> scales(rank), roi;
  std::vector<int64_t> outShape(rank);
  if (scalesIn) {
    if (scalesIn->numElements() != rank || !isFloatType(scalesIn->dtype()))
      return opError(context,
                     "scales must hold " + std::to_string(rank) + " floats");
    for (int64_t d = 0; d < rank; ++d) {
      scales[d] = scalesIn->elementAsDouble(d);
      if (!(scales[d] > 0))
        return opError(context, "scales must be positive");
      outShape[d] = static_cast<int64_t>(
          std::floor(scales[d] * static_cast<double>(x->shape()[d])));
    }
  } else {
    if (sizesIn->numElements() != rank || sizesIn->dtype() != DType::Int64)
      return opError(context, "sizes must hold " + std::to_string(rank) +
                                  " int64 values");
    for (int64_t d = 0; d < rank; ++d) {
      outShape[d] = sizesIn->data<int64_t>()[d];
      scales[d] = x->shape()[d] ? static_cast<double>(outShape[d]) /
                                      static_cast<double>(x->shape()[d])
                                : 1.0;
    }
  }
  if (o.transform == "tf_crop_and_resize") {
    if (!roiIn || roiIn->numElements() != 2 * rank)
      return opError(context, "tf_crop_and_resize needs roi with " +
                                  std::to_string(2 * rank) + " values");
    for (int64_t i = 0; i < 2 * rank; ++i)
      roi.push_back(roiIn->elementAsDouble(i));
  }
  return resizeCompute(context, *x, o, scales, outShape, roi);
}

/// Upsample (deprecated since opset 10): Resize with asymmetric
/// coordinates and, for nearest, the floor neighbour.
Status upsampleKernel(KernelContext &context) {
  const Tensor *x = context.inputTensor(0);
  const Tensor *scalesIn = context.inputTensor(1);
  if (!x || !resizableType(x->dtype()))
    return opError(context, "needs a numeric input X");
  std::vector<float> attrScales = context.getFloats("scales");
  int64_t rank = x->rank();
  std::vector<double> scales(rank);
  std::vector<int64_t> outShape(rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (scalesIn && scalesIn->numElements() == rank)
      scales[d] = scalesIn->elementAsDouble(d);
    else if (static_cast<int64_t>(attrScales.size()) == rank)
      scales[d] = attrScales[d];
    else
      return opError(context, "needs " + std::to_string(rank) + " scales");
    if (!(scales[d] >= 1))
      return opError(context, "scales must be >= 1");
    outShape[d] = static_cast<int64_t>(
        std::floor(scales[d] * static_cast<double>(x->shape()[d])));
  }
  ResizeOptions o;
  o.mode = context.getString("mode", "nearest");
  o.transform = "asymmetric";
  o.nearestMode = "floor";
  if (o.mode != "nearest" && o.mode != "linear")
    return opError(context, "mode must be nearest or linear");
  return resizeCompute(context, *x, o, scales, outShape, {});
}

} // namespace

MNCC_REFERENCE_KERNEL("", Resize, resizeKernel);
MNCC_REFERENCE_KERNEL("", Upsample, upsampleKernel);
