//===- NnGridSample.cpp - GridSample --------------------------------------===//
//
// GridSample, opset 16: input [N, C, H, W] sampled at the normalized
// locations of grid [N, H_out, W_out, 2] (x along W, y along H, both in
// [-1, 1]). ONNX defines it as torch.nn.functional.grid_sample, and its
// test data comes from there, so the coordinate maps, the padding modes
// and the bicubic taps follow PyTorch's CPU kernel step for step. Values
// compute in double and round once to the input type.
//
//===----------------------------------------------------------------------===//

#include "NnUtil.h"

#include "mncc/reference/Broadcast.h"

#include <algorithm>
#include <cmath>

using namespace mncc::reference;
using namespace mncc::reference::nn;

namespace {

enum class Mode { Bilinear, Nearest, Bicubic };
enum class Padding { Zeros, Border, Reflection };

struct Sampler {
  Mode mode = Mode::Bilinear;
  Padding padding = Padding::Zeros;
  bool alignCorners = false;
  const double *input = nullptr; // one [H, W] plane
  int64_t height = 0, width = 0;

  /// [-1, 1] to pixel coordinates: with align_corners the extremes are the
  /// centers of the corner pixels, without it their outer edges.
  double unnormalize(double coord, int64_t size) const {
    if (alignCorners)
      return (coord + 1) / 2 * double(size - 1);
    return ((coord + 1) * double(size) - 1) / 2;
  }

  /// Reflects `coord` into [twiceLow / 2, twiceHigh / 2] (bounds given
  /// doubled so that half-pixel bounds stay exact).
  static double reflect(double coord, int64_t twiceLow, int64_t twiceHigh) {
    if (twiceLow == twiceHigh)
      return 0;
    double low = double(twiceLow) / 2;
    double span = double(twiceHigh - twiceLow) / 2;
    coord = std::fabs(coord - low);
    double extra = std::fmod(coord, span);
    // The flip count stays a double: converting a huge or NaN coordinate
    // to an integer would be undefined.
    double flips = std::floor(coord / span);
    return std::fmod(flips, 2.0) == 0 ? extra + low : span - extra + low;
  }

  static double clip(double coord, int64_t size) {
    return std::min(double(size - 1), std::max(coord, 0.0));
  }

  /// Applies the padding mode to a pixel coordinate: border clamps into
  /// the image, reflection mirrors about its edges (pixel centers with
  /// align_corners, outer edges without) and then clamps; zeros leaves it
  /// for the bounds check of read().
  double pad(double coord, int64_t size) const {
    if (padding == Padding::Border)
      return clip(coord, size);
    if (padding == Padding::Reflection) {
      coord = alignCorners ? reflect(coord, 0, 2 * (size - 1))
                           : reflect(coord, -1, 2 * size - 1);
      return clip(coord, size);
    }
    return coord;
  }

  /// The pixel at (y, x), or 0 outside the image.
  double read(int64_t y, int64_t x) const {
    if (y < 0 || y >= height || x < 0 || x >= width)
      return 0;
    return input[y * width + x];
  }

  // Cubic convolution with A = -0.75, as PyTorch (and OpenCV) use.
  static double cubic1(double t) {
    constexpr double a = -0.75;
    return ((a + 2) * t - (a + 3)) * t * t + 1;
  }
  static double cubic2(double t) {
    constexpr double a = -0.75;
    return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  }

  double sample(double gx, double gy) const {
    double x = unnormalize(gx, width), y = unnormalize(gy, height);
    if (mode == Mode::Bicubic) {
      // The padding applies to each of the 16 taps, not to the location.
      double x0 = std::floor(x), y0 = std::floor(y);
      double tx = x - x0, ty = y - y0;
      double wx[4] = {cubic2(tx + 1), cubic1(tx), cubic1(1 - tx),
                      cubic2(2 - tx)};
      double wy[4] = {cubic2(ty + 1), cubic1(ty), cubic1(1 - ty),
                      cubic2(2 - ty)};
      double result = 0;
      for (int i = 0; i < 4; ++i) {
        double rowSum = 0;
        for (int j = 0; j < 4; ++j) {
          double px = pad(x0 - 1 + j, width), py = pad(y0 - 1 + i, height);
          rowSum += wx[j] * readTap(py, px);
        }
        result += wy[i] * rowSum;
      }
      return result;
    }
    x = pad(x, width);
    y = pad(y, height);
    if (mode == Mode::Nearest) {
      // Halves round to even, like PyTorch's nearbyint.
      return readTap(std::nearbyint(y), std::nearbyint(x));
    }
    double x0 = std::floor(x), y0 = std::floor(y);
    double tx = x - x0, ty = y - y0;
    return (1 - ty) * ((1 - tx) * readTap(y0, x0) + tx * readTap(y0, x0 + 1)) +
           ty * ((1 - tx) * readTap(y0 + 1, x0) + tx * readTap(y0 + 1, x0 + 1));
  }

  /// read() at integral coordinates held as doubles; values far outside the
  /// image (or NaN) read 0 instead of overflowing the conversion.
  double readTap(double y, double x) const {
    if (!(y >= 0 && y < double(height) && x >= 0 && x < double(width)))
      return 0;
    return read(static_cast<int64_t>(y), static_cast<int64_t>(x));
  }
};

Status gridSampleKernel(KernelContext &context) {
  if (Status s = requireFloatInput(context, 0, "X"); !s)
    return s;
  if (Status s = requireFloatInput(context, 1, "grid"); !s)
    return s;
  const Tensor *x = context.inputTensor(0);
  const Tensor *grid = context.inputTensor(1);
  if (x->rank() != 4)
    return opError(context, "input X must have rank 4 ([N, C, H, W]), not " +
                                std::to_string(x->rank()));
  const std::vector<int64_t> &xs = x->shape();
  const std::vector<int64_t> &gs = grid->shape();
  if (grid->rank() != 4 || gs[0] != xs[0] || gs[3] != 2)
    return opError(context, "grid shape " + shapeToString(gs) +
                                " must be [N, H_out, W_out, 2] with N = " +
                                std::to_string(xs[0]));
  Sampler sampler;
  std::string mode = context.getString("mode", "bilinear");
  if (mode == "bilinear")
    sampler.mode = Mode::Bilinear;
  else if (mode == "nearest")
    sampler.mode = Mode::Nearest;
  else if (mode == "bicubic")
    sampler.mode = Mode::Bicubic;
  else
    return opError(context, "mode must be bilinear, nearest or bicubic, not '" +
                                mode + "'");
  std::string padding = context.getString("padding_mode", "zeros");
  if (padding == "zeros")
    sampler.padding = Padding::Zeros;
  else if (padding == "border")
    sampler.padding = Padding::Border;
  else if (padding == "reflection")
    sampler.padding = Padding::Reflection;
  else
    return opError(context,
                   "padding_mode must be zeros, border or reflection, not '" +
                       padding + "'");
  sampler.alignCorners = context.getInt("align_corners", 0) != 0;
  int64_t n = xs[0], channels = xs[1];
  sampler.height = xs[2];
  sampler.width = xs[3];
  int64_t outH = gs[1], outW = gs[2];
  Tensor input = castFloat(*x, DType::Float64);
  Tensor grid64 = castFloat(*grid, DType::Float64);
  const double *in = input.data<double>();
  const double *g = grid64.data<double>();
  Tensor out(DType::Float64, {n, channels, outH, outW});
  double *o = out.data<double>();
  int64_t plane = sampler.height * sampler.width;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t c = 0; c < channels; ++c) {
      sampler.input = in + (b * channels + c) * plane;
      for (int64_t p = 0; p < outH * outW; ++p) {
        const double *loc = g + (b * outH * outW + p) * 2;
        *o++ = sampler.sample(loc[0], loc[1]);
      }
    }
  }
  context.setOutput(0, Value(castFloat(out, x->dtype())));
  return Status::success();
}

} // namespace

MNCC_REFERENCE_KERNEL("", GridSample, gridSampleKernel);
