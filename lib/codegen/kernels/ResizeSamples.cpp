//===- ResizeSamples.cpp - Resize's samples from a kernel request ---------===//

#include "ResizeSamples.h"

#include <cmath>
#include <functional>

using namespace mncc;
using namespace mncc::codegen;

namespace {

/// Input `i` as a constant: nullptr with `runtime` set when it is given
/// but only known at run time; nullptr when absent or empty (ONNX's way
/// of leaving scales out when sizes are given).
const reference::Tensor *constantInput(const KernelRequest &request, size_t i,
                                       bool &runtime) {
  if (!request.hasInput(i))
    return nullptr;
  const reference::Tensor *tensor = request.inputs[i].constant;
  if (!tensor) {
    runtime = true;
    return nullptr;
  }
  return tensor->numElements() == 0 ? nullptr : tensor;
}

} // namespace

bool codegen::resizeSamples(const KernelRequest &request, ResizeSamples &result,
                            std::string &whyNot) {
  if (request.inputs.empty() || request.inputs[0].omitted ||
      request.outputs.size() != 1) {
    whyNot = "Resize takes X (with roi, scales or sizes) and one output";
    return false;
  }
  reference::ResizeOptions &o = result.options;
  o.mode = request.getString("mode", "nearest");
  o.transform =
      request.getString("coordinate_transformation_mode", "half_pixel");
  o.nearestMode = request.getString("nearest_mode", "round_prefer_floor");
  o.cubicA = request.getFloat("cubic_coeff_a", -0.75f);
  o.excludeOutside = request.getInt("exclude_outside", 0) != 0;
  o.extrapolation = request.getFloat("extrapolation_value", 0.0f);
  if (!reference::knownResizeOptions(o, whyNot))
    return false;
  if (request.getInt("antialias", 0) != 0 || request.hasAttribute("axes") ||
      request.getString("keep_aspect_ratio_policy", "stretch") != "stretch") {
    whyNot = "Resize's antialias, axes and keep_aspect_ratio_policy (opset "
             "18) are not supported";
    return false;
  }
  const std::vector<int64_t> &in = request.inputs[0].form.shape,
                             &out = request.outputs[0].form.shape;
  size_t rank = in.size();
  if (out.size() != rank) {
    whyNot = "Resize's output has another rank than its input";
    return false;
  }
  bool runtimeRoi = false, runtimeScales = false, runtimeSizes = false;
  const reference::Tensor *roi = constantInput(request, 1, runtimeRoi),
                          *scales = constantInput(request, 2, runtimeScales),
                          *sizes = constantInput(request, 3, runtimeSizes);
  // Sizes known only at run time are the output's static extents (any
  // other value contradicts the graph's types, G8); a scale at run time
  // moves every sample whatever the output's extent.
  bool sizesFromOutput = runtimeSizes && !scales && !runtimeScales;
  if (runtimeScales || (runtimeSizes && !sizesFromOutput)) {
    whyNot = "Resize's scales must be constants (its sizes may be given at "
             "run time)";
    return false;
  }
  bool crop = o.transform == "tf_crop_and_resize";
  if (runtimeRoi && crop) {
    whyNot = "tf_crop_and_resize's roi must be a constant";
    return false;
  }
  if (!sizesFromOutput &&
      ((scales == nullptr) == (sizes == nullptr) ||
       int64_t((scales ? scales : sizes)->numElements()) != int64_t(rank))) {
    whyNot = "Resize needs one of scales and sizes, a value per dimension";
    return false;
  }
  if (crop && (!roi || roi->numElements() != int64_t(2 * rank))) {
    whyNot = "tf_crop_and_resize needs a constant roi of twice the rank";
    return false;
  }
  result.samples.assign(rank, {});
  for (size_t d = 0; d < rank; ++d) {
    double scale;
    int64_t extent;
    if (scales) {
      scale = scales->elementAsDouble(int64_t(d));
      if (!(scale > 0)) {
        whyNot = "Resize's scales must be positive";
        return false;
      }
      extent = int64_t(std::floor(scale * double(in[d])));
    } else {
      extent = sizesFromOutput ? out[d]
                               : int64_t(sizes->elementAsDouble(int64_t(d)));
      scale = in[d] ? double(extent) / double(in[d]) : 1.0;
    }
    if (extent != out[d] || (in[d] == 0 && out[d] != 0)) {
      whyNot = "Resize's output extent " + std::to_string(out[d]) +
               " along dimension " + std::to_string(d) +
               " is not its scales' or sizes'";
      return false;
    }
    double start = crop ? roi->elementAsDouble(int64_t(d)) : 0;
    double end = crop ? roi->elementAsDouble(int64_t(rank + d)) : 1;
    for (int64_t x = 0; x < out[d]; ++x)
      result.samples[d].push_back(
          reference::resizeSampleAt(o, x, in[d], scale, start, end));
  }
  return true;
}

ResizeTerms codegen::resizeTerms(const ResizeSamples &samples,
                                 const std::vector<int64_t> &index) {
  // As pfvm:cpu's recursion: outermost dimension first, an outside
  // sample standing for extrapolation_value, zero coefficients skipped.
  ResizeTerms terms;
  size_t rank = samples.samples.size();
  std::vector<int64_t> from(rank);
  std::function<void(size_t, double)> expand = [&](size_t d, double weight) {
    if (d == rank) {
      terms.taps[from] += weight;
      return;
    }
    const reference::ResizeSample &s = samples.samples[d][size_t(index[d])];
    if (s.outside) {
      terms.constant += weight * samples.options.extrapolation;
      return;
    }
    for (size_t j = 0; j < s.coeff.size(); ++j)
      if (s.coeff[j] != 0) {
        from[d] = s.index[j];
        expand(d + 1, weight * s.coeff[j]);
      }
  };
  expand(0, 1.0);
  return terms;
}
