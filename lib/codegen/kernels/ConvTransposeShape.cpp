//===- ConvTransposeShape.cpp - ConvTranspose's output and padding -------===//

#include "ConvTransposeShape.h"

using namespace mncc;
using namespace mncc::codegen;

bool codegen::resolveScatter(const KernelRequest &r,
                             const std::vector<int64_t> &xs,
                             const std::vector<int64_t> &ws, Scatter &s,
                             std::string &whyNot) {
  auto fail = [&](std::string message) {
    whyNot = std::move(message);
    return false;
  };
  if (xs.size() < 3 || ws.size() != xs.size())
    return fail("ConvTranspose needs X and W of one rank, at least 3");
  size_t rank = xs.size() - 2;
  s.in.assign(xs.begin() + 2, xs.end());
  s.kernel.assign(ws.begin() + 2, ws.end());
  if (r.getInts("kernel_shape", s.kernel) != s.kernel)
    return fail("ConvTranspose's kernel_shape differs from W's");
  s.stride = r.getInts("strides", std::vector<int64_t>(rank, 1));
  s.dilation = r.getInts("dilations", std::vector<int64_t>(rank, 1));
  std::vector<int64_t> pads =
      r.getInts("pads", std::vector<int64_t>(2 * rank, 0));
  std::vector<int64_t> outputPadding =
      r.getInts("output_padding", std::vector<int64_t>(rank, 0));
  std::vector<int64_t> outputShape = r.getInts("output_shape");
  std::string autoPad = r.getString("auto_pad", "NOTSET");
  if (outputShape.size() == rank + 2)
    outputShape.erase(outputShape.begin(), outputShape.begin() + 2);
  if (s.stride.size() != rank || s.dilation.size() != rank ||
      pads.size() != 2 * rank || outputPadding.size() != rank ||
      (!outputShape.empty() && outputShape.size() != rank))
    return fail("ConvTranspose's strides, dilations, pads, "
                "output_padding or output_shape do not match its rank");
  if (autoPad != "NOTSET" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER" && autoPad != "VALID" && !autoPad.empty())
    return fail("ConvTranspose's auto_pad '" + autoPad + "' is unknown");
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  s.out.resize(rank);
  s.padBegin.assign(rank, 0);
  for (size_t d = 0; d < rank; ++d) {
    if (s.stride[d] < 1 || s.dilation[d] < 1)
      return fail("ConvTranspose's strides and dilations must be positive");
    int64_t natural = s.stride[d] * (s.in[d] - 1) + outputPadding[d] +
                      (s.kernel[d] - 1) * s.dilation[d] + 1;
    if (!outputShape.empty() || same) {
      int64_t target =
          !outputShape.empty() ? outputShape[d] : s.in[d] * s.stride[d];
      int64_t total = natural - target;
      // ONNX's floor division: SAME_UPPER keeps the odd unit at the end.
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      s.padBegin[d] = autoPad == "SAME_UPPER" ? half : total - half;
      s.out[d] = target;
    } else {
      int64_t padEnd = 0;
      if (autoPad != "VALID") {
        s.padBegin[d] = pads[d];
        padEnd = pads[d + rank];
      }
      s.out[d] = natural - s.padBegin[d] - padEnd;
    }
    if (s.out[d] < 0)
      return fail("ConvTranspose's output would have a negative size");
  }
  return true;
}
