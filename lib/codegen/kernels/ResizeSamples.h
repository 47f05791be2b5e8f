//===- ResizeSamples.h - Resize's samples from a kernel request -*- C++ -*-===//
//
// The device kernels of Resize work from the same per-dimension samples as
// pfvm:cpu (mncc/reference/ResizeSampling.h): the reorder kernel takes a
// nearest Resize whose every output element is one input element (an index
// map), the resample kernel any mode as constant weights. Both need the
// scales or sizes (and tf_crop_and_resize's roi) known at compile time.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_CODEGEN_KERNELS_RESIZESAMPLES_H
#define MNCC_LIB_CODEGEN_KERNELS_RESIZESAMPLES_H

#include "mncc/codegen/Kernel.h"
#include "mncc/reference/ResizeSampling.h"

#include <map>
#include <string>
#include <vector>

namespace mncc::codegen {

struct ResizeSamples {
  reference::ResizeOptions options;
  /// samples[d][i]: where output coordinate i of dimension d reads.
  std::vector<std::vector<reference::ResizeSample>> samples;
};

/// The samples of a Resize request: its attributes (opset 13 to 17), its
/// constant roi, scales or sizes, checked against the output's shape.
bool resizeSamples(const KernelRequest &request, ResizeSamples &result,
                   std::string &whyNot);

/// Output element `index` as ONNX's separable interpolation makes it:
/// `constant` plus the sum of weight * input over `taps` (input index ->
/// weight, repeated indices merged), every product of coefficients
/// computed in double.
struct ResizeTerms {
  double constant = 0;
  std::map<std::vector<int64_t>, double> taps;
};
ResizeTerms resizeTerms(const ResizeSamples &samples,
                        const std::vector<int64_t> &index);

} // namespace mncc::codegen

#endif // MNCC_LIB_CODEGEN_KERNELS_RESIZESAMPLES_H
