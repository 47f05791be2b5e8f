//===- NnConvCommon.h - Window geometry of Conv and pooling ----*- C++ -*-===//
//
// Private to the Nn kernels. Conv, ConvTranspose, ConvInteger, QLinearConv
// and the pooling operators share ONNX's window attributes (kernel_shape,
// strides, dilations, pads, auto_pad); they are resolved here once, with
// the spatial rank padded to 3 (leading size-1 dimensions) so that every
// kernel needs only one 3-D loop nest for 1-D, 2-D and 3-D.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_REFERENCE_KERNELS_NNCONVCOMMON_H
#define MNCC_LIB_REFERENCE_KERNELS_NNCONVCOMMON_H

#include "NnUtil.h"

#include "mncc/reference/Broadcast.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

/// For the helpers of a kernel compiled once per instruction set
/// (target("avx512f") copies): inlined, they are compiled for the copy's
/// instruction set instead of being one shared baseline function.
#if defined(__GNUC__)
#define MNCC_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define MNCC_ALWAYS_INLINE inline
#endif

namespace mncc::reference::nn {

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
/// Kernels with target("avx2") and target("avx512f") copies of their
/// inner loops build them here.
#define MNCC_KERNEL_COPIES_X86 1
#endif

/// The copy of a kernel for the widest instruction set this CPU runs, out
/// of one for AVX-512, one for AVX2 and a portable one.
template <typename Fn> Fn widestCopy(Fn avx512, Fn avx2, Fn portable) {
#ifdef MNCC_KERNEL_COPIES_X86
  if (__builtin_cpu_supports("avx512f"))
    return avx512;
  if (__builtin_cpu_supports("avx2"))
    return avx2;
#else
  (void)avx512;
  (void)avx2;
#endif
  return portable;
}

/// A window geometry over 3 spatial dimensions (D, H, W).
struct Window {
  int64_t spatialRank = 0; // as given: 1, 2 or 3
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1},
      stride{1, 1, 1}, dilation{1, 1, 1}, padBegin{0, 0, 0}, padEnd{0, 0, 0};

  int64_t inSize() const { return in[0] * in[1] * in[2]; }
  int64_t outSize() const { return out[0] * out[1] * out[2]; }
  int64_t kernelSize() const { return kernel[0] * kernel[1] * kernel[2]; }
  /// The output's spatial shape, unpadded to the given rank.
  std::vector<int64_t> outShape() const {
    return std::vector<int64_t>(out.end() - spatialRank, out.end());
  }
};

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Output indices o in [lo, hi) of one dimension whose input position
/// o * stride + offset lies in [0, inSize).
inline void validRange(int64_t outSize, int64_t stride, int64_t offset,
                       int64_t inSize, int64_t &lo, int64_t &hi) {
  lo = offset >= 0 ? 0 : ceilDiv(-offset, stride);
  hi = inSize - offset <= 0 ? 0 : ceilDiv(inSize - offset, stride);
  lo = std::min(lo, outSize);
  hi = std::max(lo, std::min(hi, outSize));
}

/// Reads kernel_shape (or takes `kernelFromWeights`), strides, dilations,
/// pads and auto_pad for an input of spatial shape `spatial`, and computes
/// the output size the way Conv and the pools do (`ceilMode` for pools).
inline Status resolveWindow(const KernelContext &context,
                            const std::vector<int64_t> &spatial,
                            const std::vector<int64_t> &kernelFromWeights,
                            bool ceilMode, bool allowDilations,
                            Window &window) {
  int64_t rank = static_cast<int64_t>(spatial.size());
  if (rank < 1 || rank > 3)
    return opError(context, "supports 1 to 3 spatial dimensions, not " +
                                std::to_string(rank));
  std::vector<int64_t> kernel = context.getInts("kernel_shape");
  if (kernel.empty())
    kernel = kernelFromWeights;
  if (static_cast<int64_t>(kernel.size()) != rank)
    return opError(context,
                   "kernel_shape needs " + std::to_string(rank) + " values");
  if (!kernelFromWeights.empty() && kernel != kernelFromWeights)
    return opError(context, "kernel_shape " + shapeToString(kernel) +
                                " differs from the weights' " +
                                shapeToString(kernelFromWeights));
  std::vector<int64_t> strides =
      context.getInts("strides", std::vector<int64_t>(rank, 1));
  std::vector<int64_t> dilations =
      context.getInts("dilations", std::vector<int64_t>(rank, 1));
  std::vector<int64_t> pads =
      context.getInts("pads", std::vector<int64_t>(2 * rank, 0));
  std::string autoPad = context.getString("auto_pad", "NOTSET");
  if (static_cast<int64_t>(strides.size()) != rank ||
      static_cast<int64_t>(dilations.size()) != rank ||
      static_cast<int64_t>(pads.size()) != 2 * rank)
    return opError(context, "strides/dilations need " + std::to_string(rank) +
                                " values and pads " + std::to_string(2 * rank));
  if (!allowDilations)
    for (int64_t d : dilations)
      if (d != 1)
        return opError(context, "has no dilations");
  window = Window();
  window.spatialRank = rank;
  for (int64_t i = 0; i < rank; ++i) {
    size_t at = 3 - rank + i;
    if (kernel[i] < 1 || strides[i] < 1 || dilations[i] < 1)
      return opError(context,
                     "kernel_shape, strides and dilations must be positive");
    if (pads[i] < 0 || pads[i + rank] < 0)
      return opError(context, "pads must not be negative");
    window.in[at] = spatial[i];
    window.kernel[at] = kernel[i];
    window.stride[at] = strides[i];
    window.dilation[at] = dilations[i];
    int64_t extent = (kernel[i] - 1) * dilations[i] + 1;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t out = ceilDiv(spatial[i], strides[i]);
      int64_t total =
          std::max<int64_t>(0, (out - 1) * strides[i] + extent - spatial[i]);
      // SAME_UPPER puts the odd padding at the end, SAME_LOWER at the start.
      window.padBegin[at] =
          autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      window.padEnd[at] = total - window.padBegin[at];
      window.out[at] = out;
      continue;
    }
    if (autoPad == "VALID") {
      window.padBegin[at] = window.padEnd[at] = 0;
    } else if (autoPad == "NOTSET" || autoPad.empty()) {
      window.padBegin[at] = pads[i];
      window.padEnd[at] = pads[i + rank];
    } else {
      return opError(context, "unknown auto_pad '" + autoPad + "'");
    }
    int64_t span =
        spatial[i] + window.padBegin[at] + window.padEnd[at] - extent;
    if (span < 0)
      return opError(context, "the window (extent " + std::to_string(extent) +
                                  ") is larger than the padded input (" +
                                  std::to_string(span + extent) + ")");
    int64_t out =
        (ceilMode ? ceilDiv(span, strides[i]) : span / strides[i]) + 1;
    // In ceil mode the last window must start inside the input or the
    // begin padding (PyTorch's rule, which ONNX's reference follows).
    if (ceilMode && (out - 1) * strides[i] >= spatial[i] + window.padBegin[at])
      --out;
    window.out[at] = out;
  }
  return Status::success();
}

/// One channel plane copied into a padded buffer (padding 0 for Conv,
/// -infinity for MaxPool), so that the taps of a window need no bounds
/// checks, with each row split by column phase (column c of the padded row
/// goes to phase c % strideW, index c / strideW): the taps of a strided
/// window then read consecutive elements too, and every inner loop is a
/// plain unit-stride loop the compiler vectorizes. The padded extent is
/// what the output's windows cover, so MaxPool's ceil_mode windows that
/// run past the padding read the pad value too.
struct PaddedPlane {
  std::array<int64_t, 3> extent; // padded rows covered by the output
  int64_t phaseLength, rowLength;
  /// Per phase, the padded indices [lo, hi) that hold input columns.
  std::vector<int64_t> phaseLo, phaseHi;
  /// With stride 1 everywhere the plane is one flat vector: output (od,
  /// oh, ow) sits at flat index (od * extent[1] + oh) * rowLength + ow,
  /// and tap t reads flat index + tapOffset[t] (see depthwiseFlat).
  bool flat;

  explicit PaddedPlane(const Window &w) {
    for (int d = 0; d < 3; ++d)
      extent[d] =
          (w.out[d] - 1) * w.stride[d] + (w.kernel[d] - 1) * w.dilation[d] + 1;
    phaseLength = ceilDiv(extent[2], w.stride[2]);
    rowLength = phaseLength * w.stride[2];
    for (int64_t phase = 0; phase < w.stride[2]; ++phase) {
      // Padded column phase + stride * i reads input column
      // phase + stride * i - padBegin.
      int64_t lo, hi;
      validRange(phaseLength, w.stride[2], phase - w.padBegin[2], w.in[2], lo,
                 hi);
      phaseLo.push_back(lo);
      phaseHi.push_back(hi);
    }
    flat = w.stride == std::array<int64_t, 3>{1, 1, 1};
  }
  /// Elements of the buffer: the plane, then room for the flat loop's
  /// last taps, which run past the last row into zeros.
  int64_t size() const { return extent[0] * extent[1] * rowLength + rowLength; }
  /// Where kernel column kw starts inside a phase-split row.
  std::vector<int64_t> columnOffsets(const Window &w) const {
    std::vector<int64_t> offsets(w.kernel[2]);
    for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
      int64_t column = kw * w.dilation[2];
      offsets[kw] = (column % w.stride[2]) * phaseLength + column / w.stride[2];
    }
    return offsets;
  }

  /// For output row (od, oh): rows[t] = where tap t, in (kd, kh, kw)
  /// order, reads output column 0 of that row (the next columns follow).
  template <typename T>
  void tapRows(const T *padded, const Window &w, const int64_t *columnOffset,
               int64_t od, int64_t oh, const T **rows) const {
    int64_t t = 0;
    for (int64_t kd = 0; kd < w.kernel[0]; ++kd)
      for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
        int64_t pd = od * w.stride[0] + kd * w.dilation[0];
        int64_t ph = oh * w.stride[1] + kh * w.dilation[1];
        const T *line = padded + (pd * extent[1] + ph) * rowLength;
        for (int64_t kw = 0; kw < w.kernel[2]; ++kw)
          rows[t++] = line + columnOffset[kw];
      }
  }

  /// Outputs the flat loop computes, the columns past out[2] included.
  int64_t flatCount(const Window &w) const {
    return ((w.out[0] - 1) * extent[1] + w.out[1]) * rowLength;
  }
};

/// Copies `count` elements in blocks of VectorBytes, then halves of it:
/// segments are short (a line of a small image, or its part in one
/// panel), and a call to memmove would cost more than the copy, while
/// fixed-size copies compile to vector moves.
template <int VectorBytes, typename T>
MNCC_ALWAYS_INLINE void copyShort(const T *src, T *dst, int64_t count) {
  constexpr int64_t kBlock = VectorBytes / sizeof(T);
  int64_t i = 0;
  for (; i + kBlock <= count; i += kBlock)
    std::memcpy(dst + i, src + i, VectorBytes);
  if constexpr (VectorBytes > int(sizeof(T))) {
    if (i < count)
      copyShort<VectorBytes / 2>(src + i, dst + i, count - i);
  }
}

/// Sets `count` elements to `value` as copyShort copies: padding runs are
/// short (often one element), and std::fill becomes a call to memset
/// when the value is a constant 0.
template <typename T>
MNCC_ALWAYS_INLINE void fillShort(T *dst, int64_t count, T value) {
  constexpr int64_t kBlock = 32 / sizeof(T);
  T block[kBlock];
  for (int64_t i = 0; i < kBlock; ++i)
    block[i] = value;
  for (int64_t i = 0; i < count; i += kBlock)
    copyShort<32>(block, dst + i, std::min(kBlock, count - i));
}

/// Fills `padded` (shape.size() elements) from one input plane; positions
/// outside the input hold `pad`. Inlined into the callers' wider-vector
/// copies, where its strided reads vectorize better.
template <typename T>
MNCC_ALWAYS_INLINE void padPlane(const T *in, const Window &w,
                                 const PaddedPlane &shape, T pad, T *padded) {
  int64_t strideW = w.stride[2];
  int64_t planeSize = shape.extent[0] * shape.extent[1] * shape.rowLength;
  for (int64_t pd = 0; pd < shape.extent[0]; ++pd)
    for (int64_t ph = 0; ph < shape.extent[1]; ++ph) {
      T *row = padded + (pd * shape.extent[1] + ph) * shape.rowLength;
      int64_t id = pd - w.padBegin[0], ih = ph - w.padBegin[1];
      if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1]) {
        fillShort(row, shape.rowLength, pad);
        continue;
      }
      const T *src = in + (id * w.in[1] + ih) * w.in[2];
      for (int64_t phase = 0; phase < strideW; ++phase) {
        T *dst = row + phase * shape.phaseLength;
        int64_t lo = shape.phaseLo[phase], hi = shape.phaseHi[phase];
        const T *from = src + phase - w.padBegin[2];
        fillShort(dst, lo, pad);
        if (strideW == 1)
          copyShort<32>(from + lo, dst + lo, hi - lo);
        else if (strideW == 2) // a constant stride vectorizes
          for (int64_t i = lo; i < hi; ++i)
            dst[i] = from[2 * i];
        else
          for (int64_t i = lo; i < hi; ++i)
            dst[i] = from[i * strideW];
        fillShort(dst + hi, shape.phaseLength - hi, pad);
      }
    }
  fillShort(padded + planeSize, shape.size() - planeSize, pad);
}

} // namespace mncc::reference::nn

#endif // MNCC_LIB_REFERENCE_KERNELS_NNCONVCOMMON_H
