//===- ConvTransposeShape.h - ConvTranspose's output and padding -*- C++
//-*-===//
//
// ConvTranspose scatters each input element over a window of the output:
// input position i and tap k reach output position
//
//   o = i * stride - padBegin + k * dilation,
//
// so output o gathers, for each tap, the input at (o + padBegin - k *
// dilation) / stride where that divides exactly and lies in the input.
// The resample kernel (small tensors, one PE) and the convtranspose
// kernel (the matrix unit) both resolve the output extents and padBegin
// here, as ONNX and pfvm:cpu do (output_padding, output_shape, auto_pad).
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_CODEGEN_KERNELS_CONVTRANSPOSESHAPE_H
#define MNCC_LIB_CODEGEN_KERNELS_CONVTRANSPOSESHAPE_H

#include "mncc/codegen/Kernel.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mncc::codegen {

struct Scatter {
  std::vector<int64_t> in, out, kernel, stride, dilation, padBegin;
  /// The input index tap `k` of output `o` reads along axis `d`, or -1.
  int64_t source(size_t d, int64_t o, int64_t k) const {
    int64_t scaled = o + padBegin[d] - k * dilation[d];
    if (scaled < 0 || scaled % stride[d] || scaled / stride[d] >= in[d])
      return -1;
    return scaled / stride[d];
  }
};

/// The spatial extents and padding of ConvTranspose on X of shape `xs`
/// with W of shape `ws` ([C, M / group, k...]); false with the reason
/// when the attributes do not fit.
bool resolveScatter(const KernelRequest &request,
                    const std::vector<int64_t> &xs,
                    const std::vector<int64_t> &ws, Scatter &scatter,
                    std::string &whyNot);

} // namespace mncc::codegen

#endif // MNCC_LIB_CODEGEN_KERNELS_CONVTRANSPOSESHAPE_H
