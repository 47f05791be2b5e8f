//===- MiscVision.cpp - NonMaxSuppression, RoiAlign -----------------------===//
//
// Detection post-processing. Both follow the behaviour that ONNX's own
// backend test data encodes (from its reference implementation and
// onnxruntime), including the details the schemas leave open: ties in
// score keep the lower box index, boxes of no area never suppress, and
// RoiAlign's "max" mode takes the maximum of the weighted corner values.
//
//===----------------------------------------------------------------------===//

#include "mncc/reference/Broadcast.h"
#include "mncc/reference/Kernel.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

using namespace mncc::reference;

namespace {

/// An optional scalar input, as a double; `fallback` when omitted.
Status readOptionalScalar(const KernelContext &context, size_t index,
                          const char *opName, const char *what, double fallback,
                          double &value) {
  value = fallback;
  if (index >= context.numInputs() || !context.input(index))
    return Status::success();
  const Tensor *tensor = context.inputTensor(index);
  if (!tensor || tensor->numElements() != 1 || tensor->dtype() == DType::String)
    return Status::error(std::string(opName) + ": " + what +
                         " must be a single number");
  value = tensor->elementAsDouble(0);
  return Status::success();
}

struct Box {
  double y1, x1, y2, x2; // y1 <= y2, x1 <= x2
  double area() const { return (y2 - y1) * (x2 - x1); }
};

double intersectionOverUnion(const Box &a, const Box &b) {
  double areaA = a.area(), areaB = b.area();
  if (areaA <= 0 || areaB <= 0)
    return 0;
  double height = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  double width = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (height <= 0 || width <= 0)
    return 0;
  double intersection = height * width;
  return intersection / (areaA + areaB - intersection);
}

/// NonMaxSuppression: per batch and class, greedily keeps the best-scoring
/// box and drops the boxes overlapping it by more than iou_threshold.
Status nonMaxSuppressionKernel(KernelContext &context) {
  const Tensor *boxes = context.inputTensor(0);
  const Tensor *scores = context.inputTensor(1);
  if (!boxes || boxes->rank() != 3 || boxes->shape()[2] != 4 ||
      !isFloatingPoint(boxes->dtype()))
    return Status::error("NonMaxSuppression: boxes must be a floating "
                         "tensor of shape batches x boxes x 4");
  int64_t batches = boxes->shape()[0], numBoxes = boxes->shape()[1];
  if (!scores || scores->rank() != 3 || scores->shape()[0] != batches ||
      scores->shape()[2] != numBoxes || !isFloatingPoint(scores->dtype()))
    return Status::error("NonMaxSuppression: scores must be a floating "
                         "tensor of shape " +
                         std::to_string(batches) + " x classes x " +
                         std::to_string(numBoxes));
  double maxOutput = 0, iouThreshold = 0, scoreThreshold = 0;
  if (Status status =
          readOptionalScalar(context, 2, "NonMaxSuppression",
                             "max_output_boxes_per_class", 0, maxOutput);
      !status)
    return status;
  if (Status status = readOptionalScalar(context, 3, "NonMaxSuppression",
                                         "iou_threshold", 0, iouThreshold);
      !status)
    return status;
  bool hasScoreThreshold = context.numInputs() > 4 && context.input(4);
  if (Status status = readOptionalScalar(context, 4, "NonMaxSuppression",
                                         "score_threshold", 0, scoreThreshold);
      !status)
    return status;
  if (iouThreshold < 0 || iouThreshold > 1)
    return Status::error("NonMaxSuppression: iou_threshold " +
                         std::to_string(iouThreshold) + " must lie in [0, 1]");
  int64_t centerPointBox = context.getInt("center_point_box", 0);
  if (centerPointBox != 0 && centerPointBox != 1)
    return Status::error("NonMaxSuppression: center_point_box must be 0 or "
                         "1");
  int64_t classes = scores->shape()[1];
  int64_t limit = static_cast<int64_t>(maxOutput);

  std::vector<int64_t> selected; // triples
  std::vector<Box> corners(numBoxes);
  std::vector<int64_t> order(numBoxes);
  std::vector<int64_t> kept;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i = 0; i < numBoxes; ++i) {
      double v[4];
      for (int k = 0; k < 4; ++k)
        v[k] = boxes->elementAsDouble((b * numBoxes + i) * 4 + k);
      if (centerPointBox) { // x_center, y_center, width, height
        corners[i] = {v[1] - v[3] / 2, v[0] - v[2] / 2, v[1] + v[3] / 2,
                      v[0] + v[2] / 2};
      } else { // any two opposite corners, y before x
        corners[i] = {std::min(v[0], v[2]), std::min(v[1], v[3]),
                      std::max(v[0], v[2]), std::max(v[1], v[3])};
      }
    }
    for (int64_t c = 0; c < classes && limit > 0; ++c) {
      auto score = [&](int64_t i) {
        return scores->elementAsDouble((b * classes + c) * numBoxes + i);
      };
      order.clear();
      for (int64_t i = 0; i < numBoxes; ++i)
        if (!hasScoreThreshold || score(i) > scoreThreshold)
          order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](int64_t l, int64_t r) {
        return score(l) > score(r);
      });
      kept.clear();
      for (int64_t candidate : order) {
        if (static_cast<int64_t>(kept.size()) >= limit)
          break;
        bool suppressed = false;
        for (int64_t k : kept)
          if (intersectionOverUnion(corners[k], corners[candidate]) >
              iouThreshold) {
            suppressed = true;
            break;
          }
        if (suppressed)
          continue;
        kept.push_back(candidate);
        selected.insert(selected.end(), {b, c, candidate});
      }
    }
  }
  int64_t count = static_cast<int64_t>(selected.size() / 3);
  context.setOutput(0, Value(Tensor::fromVector<int64_t>(
                           DType::Int64, {count, 3}, selected)));
  return Status::success();
}

/// One bilinear sample: four corner offsets and their weights.
struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  double weight[4] = {0, 0, 0, 0};
};

/// The bilinear sample at (y, x) of a height x width plane, following
/// onnxruntime: points more than one pixel outside contribute nothing,
/// points just outside clamp to the border.
Sample bilinearSample(double y, double x, int64_t height, int64_t width) {
  Sample sample;
  if (y < -1.0 || y > height || x < -1.0 || x > width)
    return sample;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t yLow = static_cast<int64_t>(y), xLow = static_cast<int64_t>(x);
  int64_t yHigh, xHigh;
  if (yLow >= height - 1) {
    yHigh = yLow = height - 1;
    y = static_cast<double>(yLow);
  } else {
    yHigh = yLow + 1;
  }
  if (xLow >= width - 1) {
    xHigh = xLow = width - 1;
    x = static_cast<double>(xLow);
  } else {
    xHigh = xLow + 1;
  }
  double ly = y - yLow, lx = x - xLow, hy = 1 - ly, hx = 1 - lx;
  sample.pos[0] = yLow * width + xLow;
  sample.pos[1] = yLow * width + xHigh;
  sample.pos[2] = yHigh * width + xLow;
  sample.pos[3] = yHigh * width + xHigh;
  sample.weight[0] = hy * hx;
  sample.weight[1] = hy * lx;
  sample.weight[2] = ly * hx;
  sample.weight[3] = ly * lx;
  return sample;
}

/// RoiAlign (opset 16): average or max of bilinear samples on a regular
/// grid in each output bin of each region.
Status roiAlignKernel(KernelContext &context) {
  const Tensor *x = context.inputTensor(0);
  const Tensor *rois = context.inputTensor(1);
  const Tensor *batchIndices = context.inputTensor(2);
  if (!x || x->rank() != 4 || !isFloatingPoint(x->dtype()))
    return Status::error("RoiAlign: X must be a floating tensor of shape "
                         "N x C x H x W");
  if (!rois || rois->rank() != 2 || rois->shape()[1] != 4 ||
      !isFloatingPoint(rois->dtype()))
    return Status::error("RoiAlign: rois must be a floating tensor of shape "
                         "num_rois x 4");
  int64_t numRois = rois->shape()[0];
  if (!batchIndices || batchIndices->rank() != 1 ||
      batchIndices->shape()[0] != numRois ||
      !isSignedInteger(batchIndices->dtype()))
    return Status::error("RoiAlign: batch_indices must be an integer tensor "
                         "of shape " +
                         std::to_string(numRois));
  std::string mode = context.getString("mode", "avg");
  if (mode != "avg" && mode != "max")
    return Status::error("RoiAlign: mode '" + mode +
                         "' is neither 'avg' nor 'max'");
  std::string transform =
      context.getString("coordinate_transformation_mode", "half_pixel");
  if (transform != "half_pixel" && transform != "output_half_pixel")
    return Status::error("RoiAlign: coordinate_transformation_mode '" +
                         transform +
                         "' is neither 'half_pixel' nor 'output_half_pixel'");
  int64_t outHeight = context.getInt("output_height", 1);
  int64_t outWidth = context.getInt("output_width", 1);
  int64_t samplingRatio = context.getInt("sampling_ratio", 0);
  double scale = context.getFloat("spatial_scale", 1.0f);
  if (outHeight < 1 || outWidth < 1 || samplingRatio < 0)
    return Status::error("RoiAlign: output_height and output_width must be "
                         "positive, sampling_ratio not negative");
  bool halfPixel = transform == "half_pixel";
  double offset = halfPixel ? 0.5 : 0.0;
  int64_t batch = x->shape()[0], channels = x->shape()[1];
  int64_t height = x->shape()[2], width = x->shape()[3];
  bool isMax = mode == "max";

  std::vector<double> values(numRois * channels * outHeight * outWidth);
  std::vector<Sample> samples;
  for (int64_t r = 0; r < numRois; ++r) {
    int64_t n = batchIndices->elementAsInt64(r);
    if (n < 0 || n >= batch)
      return Status::error("RoiAlign: batch index " + std::to_string(n) +
                           " of roi " + std::to_string(r) +
                           " is outside the batch of " + std::to_string(batch));
    double startW = rois->elementAsDouble(r * 4) * scale - offset;
    double startH = rois->elementAsDouble(r * 4 + 1) * scale - offset;
    double endW = rois->elementAsDouble(r * 4 + 2) * scale - offset;
    double endH = rois->elementAsDouble(r * 4 + 3) * scale - offset;
    double roiWidth = endW - startW, roiHeight = endH - startH;
    // output_half_pixel (the opset 10 behaviour) makes regions at least
    // one pixel.
    if (!halfPixel) {
      roiWidth = std::max(roiWidth, 1.0);
      roiHeight = std::max(roiHeight, 1.0);
    }
    double binHeight = roiHeight / outHeight, binWidth = roiWidth / outWidth;
    int64_t gridH =
        samplingRatio > 0
            ? samplingRatio
            : static_cast<int64_t>(std::ceil(roiHeight / outHeight));
    int64_t gridW = samplingRatio > 0
                        ? samplingRatio
                        : static_cast<int64_t>(std::ceil(roiWidth / outWidth));
    double count = static_cast<double>(std::max<int64_t>(gridH * gridW, 1));
    // The sample points are the same for every channel.
    samples.clear();
    for (int64_t ph = 0; ph < outHeight; ++ph)
      for (int64_t pw = 0; pw < outWidth; ++pw)
        for (int64_t iy = 0; iy < gridH; ++iy)
          for (int64_t ix = 0; ix < gridW; ++ix) {
            double yy = startH + ph * binHeight +
                        (iy + 0.5) * binHeight / static_cast<double>(gridH);
            double xx = startW + pw * binWidth +
                        (ix + 0.5) * binWidth / static_cast<double>(gridW);
            samples.push_back(bilinearSample(yy, xx, height, width));
          }
    for (int64_t c = 0; c < channels; ++c) {
      int64_t plane = (n * channels + c) * height * width;
      size_t s = 0;
      for (int64_t ph = 0; ph < outHeight; ++ph)
        for (int64_t pw = 0; pw < outWidth; ++pw) {
          double result = 0;
          bool first = true;
          for (int64_t k = 0; k < gridH * gridW; ++k, ++s) {
            const Sample &sample = samples[s];
            for (int corner = 0; corner < 4; ++corner) {
              double value = sample.weight[corner] *
                             x->elementAsDouble(plane + sample.pos[corner]);
              if (!isMax)
                result += value;
              else if (first || value > result)
                result = value;
              first = false;
            }
          }
          values[((r * channels + c) * outHeight + ph) * outWidth + pw] =
              isMax ? result : result / count;
        }
    }
  }
  Tensor result(x->dtype(), {numRois, channels, outHeight, outWidth});
  dispatchNumeric(x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
      for (size_t i = 0; i < values.size(); ++i)
        result.data<T>()[i] = static_cast<T>(values[i]);
    else if constexpr (std::is_same_v<T, Float16> ||
                       std::is_same_v<T, BFloat16>)
      for (size_t i = 0; i < values.size(); ++i)
        result.data<T>()[i] = T(static_cast<float>(values[i]));
  });
  context.setOutput(0, Value(std::move(result)));
  return Status::success();
}

} // namespace

MNCC_REFERENCE_KERNEL("", NonMaxSuppression, nonMaxSuppressionKernel);
MNCC_REFERENCE_KERNEL("", RoiAlign, roiAlignKernel);
