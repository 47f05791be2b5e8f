//===- PoolWindow.h - A 2-D pool's window as ONNX defines it ----*- C++ -*-===//
//
// The pool kernel and the depthwise kernel's MaxPool form read MaxPool's
// and AveragePool's kernel_shape, strides, dilations, pads, auto_pad and
// ceil_mode the same way (ceil_mode as PyTorch: no window starts in the
// end padding), so both place output pixels as pfvm:cpu does.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_CODEGEN_KERNELS_POOLWINDOW_H
#define MNCC_LIB_CODEGEN_KERNELS_POOLWINDOW_H

#include "mncc/codegen/Kernel.h"

#include <cstdint>
#include <string>

namespace mncc::codegen {

/// The window of a 2-D MaxPool or AveragePool over an h x w input.
struct PoolWindow2d {
  int64_t kh = 1, kw = 1, strideH = 1, strideW = 1, dilH = 1, dilW = 1;
  /// The output's extent, and the padding before the first input and
  /// after the last, in each spatial dimension.
  int64_t oh = 0, ow = 0;
  int64_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
};

/// The window of `r`'s attributes; false with the reason when they are
/// malformed (sizes, non-positive kernel, strides or dilations, an unknown
/// auto_pad, AveragePool's dilations) or the window is larger than the
/// padded input.
bool poolWindow2d(const KernelRequest &r, int64_t h, int64_t w,
                  PoolWindow2d &window, std::string &whyNot);

/// A window's strides, dilations, output extent and leading pads into a
/// kernel's geometry (PoolWindow2d, ConvWindow2d: the same field names).
template <typename Geometry, typename Window>
void takeWindow(Geometry &g, const Window &window) {
  g.sh = window.strideH;
  g.sw = window.strideW;
  g.dh = window.dilH;
  g.dw = window.dilW;
  g.oh = window.oh;
  g.ow = window.ow;
  g.padTop = window.padTop;
  g.padLeft = window.padLeft;
}

} // namespace mncc::codegen

#endif // MNCC_LIB_CODEGEN_KERNELS_POOLWINDOW_H
