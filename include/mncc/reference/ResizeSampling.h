//===- ResizeSampling.h - Where Resize reads each output from ---*- C++ -*-===//
//
// ONNX's Resize (opset 13 semantics) is separable: along each dimension an
// output coordinate maps to a position in the input, which selects a few
// neighbours (2 for nearest and linear, 4 for cubic; the input edge-padded)
// with coefficients. pfvm:cpu's kernel interpolates with these samples, and
// the code generator builds its device kernels (constant weights, nearest
// index maps) from the same ones, so that both sides agree by
// construction.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_REFERENCE_RESIZESAMPLING_H
#define MNCC_REFERENCE_RESIZESAMPLING_H

#include <cstdint>
#include <string>
#include <vector>

namespace mncc::reference {

struct ResizeOptions {
  std::string mode = "nearest";
  std::string transform = "half_pixel";
  std::string nearestMode = "round_prefer_floor";
  double cubicA = -0.75;
  bool excludeOutside = false;
  double extrapolation = 0;
};

/// One output coordinate of one dimension: outside the input
/// (tf_crop_and_resize's extrapolation), or neighbour indices (clamped to
/// the input) and their coefficients (some may be 0).
struct ResizeSample {
  bool outside = false;
  std::vector<int64_t> index;
  std::vector<double> coeff;
};

/// The sample of output coordinate `x` along a dimension of input extent
/// `in`, resized by `scale` (the scales input, or output / input extent
/// when sizes are given); `roiStart` and `roiEnd` matter for
/// tf_crop_and_resize only.
ResizeSample resizeSampleAt(const ResizeOptions &options, int64_t x, int64_t in,
                            double scale, double roiStart, double roiEnd);

/// Whether `options` names a mode and a coordinate transformation that
/// resizeSampleAt knows; `error` says which does not.
bool knownResizeOptions(const ResizeOptions &options, std::string &error);

} // namespace mncc::reference

#endif // MNCC_REFERENCE_RESIZESAMPLING_H
