//===- ConvWindow.h - A 2-D Conv's window as ONNX defines it ----*- C++ -*-===//
//
// The conv and depthwise kernels read a Conv's kernel_shape, strides,
// dilations, pads and auto_pad the same way, and place output pixels by
// the same window arithmetic as pfvm:cpu.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_CODEGEN_KERNELS_CONVWINDOW_H
#define MNCC_LIB_CODEGEN_KERNELS_CONVWINDOW_H

#include "mncc/codegen/Kernel.h"

#include <cstdint>
#include <string>

namespace mncc::codegen {

/// The window of a 2-D Conv over an h x w input with a kh x kw kernel.
struct ConvWindow2d {
  int64_t strideH = 1, strideW = 1, dilH = 1, dilW = 1;
  /// The output's extent, and the padding before the first input, in each
  /// spatial dimension.
  int64_t oh = 0, ow = 0;
  int64_t padTop = 0, padLeft = 0;
};

/// The window of `r`'s attributes; false with the reason when they are
/// malformed (sizes, non-positive strides or dilations, negative pads, an
/// unknown auto_pad) or the window is larger than the padded input.
bool convWindow2d(const KernelRequest &r, int64_t h, int64_t w, int64_t kh,
                  int64_t kw, ConvWindow2d &window, std::string &whyNot);

} // namespace mncc::codegen

#endif // MNCC_LIB_CODEGEN_KERNELS_CONVWINDOW_H
