//===- ConvWindow.cpp - A 2-D Conv's window as ONNX defines it ------------===//

#include "ConvWindow.h"

#include "mncc/codegen/DramForm.h"

#include <algorithm>
#include <vector>

using namespace mncc;
using namespace mncc::codegen;

namespace {

/// Output size and the padding at the start of one spatial dimension, as
/// ONNX (and pfvm:cpu) compute them.
bool window(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
            int64_t padBegin, int64_t padEnd, const std::string &autoPad,
            int64_t &out, int64_t &begin) {
  int64_t extent = (kernel - 1) * dilation + 1;
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    out = ceilDiv(in, stride);
    int64_t total = std::max<int64_t>(0, (out - 1) * stride + extent - in);
    begin = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
    return true;
  }
  if (autoPad == "VALID")
    padBegin = padEnd = 0;
  else if (autoPad != "NOTSET" && !autoPad.empty())
    return false;
  int64_t span = in + padBegin + padEnd - extent;
  if (span < 0)
    return false;
  out = span / stride + 1;
  begin = padBegin;
  return true;
}

} // namespace

bool codegen::convWindow2d(const KernelRequest &r, int64_t h, int64_t w,
                           int64_t kh, int64_t kw, ConvWindow2d &result,
                           std::string &whyNot) {
  std::vector<int64_t> kernel = r.getInts("kernel_shape", {kh, kw});
  std::vector<int64_t> strides = r.getInts("strides", {1, 1});
  std::vector<int64_t> dilations = r.getInts("dilations", {1, 1});
  std::vector<int64_t> pads = r.getInts("pads", {0, 0, 0, 0});
  std::string autoPad = r.getString("auto_pad", "NOTSET");
  if (kernel != std::vector<int64_t>{kh, kw} || strides.size() != 2 ||
      dilations.size() != 2 || pads.size() != 4) {
    whyNot = "kernel_shape, strides, dilations or pads of the wrong size";
    return false;
  }
  if (std::any_of(strides.begin(), strides.end(),
                  [](int64_t v) { return v < 1; })) {
    whyNot = "strides must be positive";
    return false;
  }
  if (std::any_of(dilations.begin(), dilations.end(),
                  [](int64_t v) { return v < 1; })) {
    whyNot = "dilations must be positive";
    return false;
  }
  if (std::any_of(pads.begin(), pads.end(), [](int64_t v) { return v < 0; })) {
    whyNot = "pads must not be negative";
    return false;
  }
  result.strideH = strides[0];
  result.strideW = strides[1];
  result.dilH = dilations[0];
  result.dilW = dilations[1];
  if (!window(h, kh, result.strideH, result.dilH, pads[0], pads[2], autoPad,
              result.oh, result.padTop) ||
      !window(w, kw, result.strideW, result.dilW, pads[1], pads[3], autoPad,
              result.ow, result.padLeft)) {
    whyNot = "a window larger than the padded input or an unknown auto_pad";
    return false;
  }
  return true;
}
