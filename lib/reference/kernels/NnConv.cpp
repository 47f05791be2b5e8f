//===- NnConv.cpp - Conv and ConvTranspose --------------------------------===//
//
// Conv is im2col + GEMM per (image, group), the im2col written block by
// block as the GEMM needs it; ConvTranspose is GEMM + col2im. The GEMM is
// the shared one (Eigen, LinalgGemm.cpp). float16 runs through float.
//
//===----------------------------------------------------------------------===//

#include "LinalgGemm.h"
#include "NnConvCommon.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

using namespace mncc::reference;
using namespace mncc::reference::nn;

namespace {

/// Part of a row of the im2col matrix: `count` elements at `dst` (from the
/// row's start) copied from the input plane's element `src` on, `stride`
/// apart, or zeros when src < 0.
struct Segment {
  int64_t dst, src, count;
};

/// Writes one row's segments, the input plane of the row's channel at
/// `plane`.
template <int VectorBytes, typename T>
MNCC_ALWAYS_INLINE void replaySegments(const Segment *segments, int64_t count,
                                       const T *plane, int64_t stride, T *row) {
  static const T zeros[VectorBytes / sizeof(T)] = {};
  constexpr int64_t kZeros = VectorBytes / sizeof(T);
  for (int64_t s = 0; s < count; ++s) {
    const Segment &segment = segments[s];
    T *out = row + segment.dst;
    if (segment.src < 0) {
      for (int64_t i = 0; i < segment.count; i += kZeros)
        copyShort<VectorBytes>(zeros, out + i,
                               std::min(kZeros, segment.count - i));
    } else if (stride == 1) {
      copyShort<VectorBytes>(plane + segment.src, out, segment.count);
    } else if (stride == 2) { // a constant stride vectorizes
      for (int64_t j = 0; j < segment.count; ++j)
        out[j] = plane[segment.src + 2 * j];
    } else {
      for (int64_t j = 0; j < segment.count; ++j)
        out[j] = plane[segment.src + j * stride];
    }
  }
}

using ReplayFn = void (*)(const Segment *, int64_t, const float *, int64_t,
                          float *);

void replayPortable(const Segment *segments, int64_t count, const float *plane,
                    int64_t stride, float *row) {
  replaySegments<16>(segments, count, plane, stride, row);
}

#ifdef MNCC_KERNEL_COPIES_X86
// The same copies with wider vectors.
__attribute__((target("avx2"))) void replayAvx2(const Segment *segments,
                                                int64_t count,
                                                const float *plane,
                                                int64_t stride, float *row) {
  replaySegments<32>(segments, count, plane, stride, row);
}
__attribute__((target("avx512f"))) void
replayAvx512(const Segment *segments, int64_t count, const float *plane,
             int64_t stride, float *row) {
  replaySegments<64>(segments, count, plane, stride, row);
}
#endif

ReplayFn bestReplay() {
#ifdef MNCC_KERNEL_COPIES_X86
  return widestCopy(replayAvx512, replayAvx2, replayPortable);
#else
  return replayPortable;
#endif
}

/// The im2col matrix of one group of channels of one image,
/// ((channels * kernelSize) x outSize): row (c, kd, kh, kw) holds, for
/// each output position, the input that tap reads, or 0 in the padding.
/// Rows of the same tap read the same places of their channel's plane, so
/// each block of columns works out once per tap which segments of the
/// plane go where, and every channel replays that: per row, only copies
/// and fills are left.
class Unfolding {
public:
  explicit Unfolding(const Window &w) : w(w) {
    for (int64_t kd = 0; kd < w.kernel[0]; ++kd)
      for (int64_t kh = 0; kh < w.kernel[1]; ++kh)
        for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
          Tap tap;
          tap.offD = kd * w.dilation[0] - w.padBegin[0];
          tap.offH = kh * w.dilation[1] - w.padBegin[1];
          tap.offW = kw * w.dilation[2] - w.padBegin[2];
          validRange(w.out[2], w.stride[2], tap.offW, w.in[2], tap.wLo,
                     tap.wHi);
          taps.push_back(tap);
        }
  }

  /// Rows [row, row + rows) and columns [col, col + cols) of the matrix of
  /// input `in`, written as PackBFn says.
  template <typename T>
  void write(const T *in, int64_t row, int64_t rows, int64_t col, int64_t cols,
             T *dst, int64_t panel, int64_t panelStride) const {
    int64_t kernelSize = static_cast<int64_t>(taps.size());
    int64_t channel = row / kernelSize, tap = row % kernelSize;
    int64_t line = col / w.out[2];
    Line start{line, line / w.out[1], line % w.out[1]};
    // The segments of each tap ([first, second) of `segments`), built
    // when a row first needs them.
    Scratch &scratch = threadScratch();
    std::vector<Segment> &segments = scratch.segments;
    std::vector<std::pair<int64_t, int64_t>> &programs = scratch.programs;
    segments.clear();
    programs.assign(kernelSize, {-1, -1});
    for (int64_t r = 0; r < rows; ++r) {
      auto &program = programs[tap];
      if (program.first < 0) {
        program.first = static_cast<int64_t>(segments.size());
        addSegments(taps[tap], start, col, col + cols, panel, panelStride,
                    segments);
        program.second = static_cast<int64_t>(segments.size());
      }
      const T *plane = in + channel * w.inSize();
      const Segment *first = segments.data() + program.first;
      int64_t count = program.second - program.first;
      if constexpr (std::is_same_v<T, float>) {
        static const ReplayFn replay = bestReplay();
        replay(first, count, plane, w.stride[2], dst + r * panel);
      } else {
        replaySegments<16>(first, count, plane, w.stride[2], dst + r * panel);
      }
      if (++tap == kernelSize) {
        tap = 0;
        ++channel;
      }
    }
  }

private:
  struct Tap {
    int64_t offD, offH, offW;
    /// Output columns [wLo, wHi) of a line read inside the input.
    int64_t wLo, wHi;
  };
  /// An output line: its index and its (depth, height) position.
  struct Line {
    int64_t index, od, oh;
  };

  /// Per-thread buffers of write(), reached once per call: a
  /// thread_local in a shared library costs a call to reach.
  struct Scratch {
    std::vector<Segment> segments;
    std::vector<std::pair<int64_t, int64_t>> programs;
  };
  static Scratch &threadScratch() {
    thread_local Scratch scratch;
    return scratch;
  }

  /// Appends the segments of one tap's row over columns [colBegin, colEnd)
  /// (output lines from `line` on), in panels of `panel` columns
  /// `panelStride` apart: the pieces of each line that lie in one panel,
  /// each a fill, a copy and a fill.
  void addSegments(const Tap &tap, Line line, int64_t colBegin, int64_t colEnd,
                   int64_t panel, int64_t panelStride,
                   std::vector<Segment> &out) const {
    auto add = [&](int64_t dst, int64_t src, int64_t count) {
      if (count <= 0)
        return;
      if (!out.empty()) {
        // Zeros that continue zeros merge; so do copies that continue
        // copies in the plane and in the row.
        Segment &last = out.back();
        bool continues = last.dst + last.count == dst &&
                         ((src < 0 && last.src < 0) ||
                          (src >= 0 && last.src >= 0 && w.stride[2] == 1 &&
                           last.src + last.count == src));
        if (continues) {
          last.count += count;
          return;
        }
      }
      out.push_back({dst, src, count});
    };
    int64_t width = w.out[2];
    int64_t panelStart = 0, inPanel = 0;
    for (int64_t col = colBegin; col < colEnd; ++line.index) {
      int64_t first = col - line.index * width;
      int64_t last = std::min(width, first + colEnd - col);
      col += last - first;
      int64_t id = line.od * w.stride[0] + tap.offD;
      int64_t ih = line.oh * w.stride[1] + tap.offH;
      if (++line.oh == w.out[1]) {
        line.oh = 0;
        ++line.od;
      }
      bool padding = id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1];
      // The plane element output column ow reads is lineSrc + ow * stride.
      int64_t lineSrc = (id * w.in[1] + ih) * w.in[2] + tap.offW;
      for (int64_t begin = first; begin < last;) {
        int64_t end = std::min(last, begin + panel - inPanel);
        // Output column ow goes to base + ow.
        int64_t base = panelStart + inPanel - begin;
        inPanel += end - begin;
        if (inPanel == panel) {
          inPanel = 0;
          panelStart += panelStride;
        }
        if (padding) {
          add(base + begin, -1, end - begin);
        } else {
          int64_t lo = std::clamp(tap.wLo, begin, end);
          int64_t hi = std::clamp(tap.wHi, lo, end);
          add(base + begin, -1, lo - begin);
          add(base + lo, lineSrc + lo * w.stride[2], hi - lo);
          add(base + hi, -1, end - hi);
        }
        begin = end;
      }
    }
  }

  const Window &w;
  std::vector<Tap> taps;
};

/// The GEMM's packer of op(B) for a Conv: blocks of the im2col matrix of
/// input `in`. The GEMM calls it block by block, just before the block's
/// product, and has it write straight into the kernel's panels, so the
/// unfolded input is written once and stays in cache.
template <typename T>
linalg::PackBFn<T> convInputPacker(const T *in, const Unfolding &unfolding) {
  return [in, &unfolding](int64_t row, int64_t rows, int64_t col, int64_t cols,
                          T *dst, int64_t panel, int64_t panelStride) {
    unfolding.write(in, row, rows, col, cols, dst, panel, panelStride);
  };
}

/// Folds `col` ((channels * kernelSize) x inSize, the transpose-conv
/// contributions) back into `out` (channels x outSize), adding overlaps.
/// Parallel over output channels, each summed in a fixed order.
template <typename T>
void col2im(const T *col, int64_t channels, const Window &w, T *out) {
  // Here `w.in` is ConvTranspose's input and `w.out` its output.
  int64_t inSize = w.inSize();
  linalg::parallelFor(channels, 1, [&](int64_t cBegin, int64_t cEnd) {
    for (int64_t c = cBegin; c < cEnd; ++c) {
      T *plane = out + c * w.outSize();
      for (int64_t kd = 0; kd < w.kernel[0]; ++kd)
        for (int64_t kh = 0; kh < w.kernel[1]; ++kh)
          for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
            int64_t row =
                ((c * w.kernel[0] + kd) * w.kernel[1] + kh) * w.kernel[2] + kw;
            const T *src = col + row * inSize;
            int64_t offD = kd * w.dilation[0] - w.padBegin[0];
            int64_t offH = kh * w.dilation[1] - w.padBegin[1];
            int64_t offW = kw * w.dilation[2] - w.padBegin[2];
            int64_t wLo, wHi;
            validRange(w.in[2], w.stride[2], offW, w.out[2], wLo, wHi);
            for (int64_t id = 0; id < w.in[0]; ++id) {
              int64_t od = id * w.stride[0] + offD;
              for (int64_t ih = 0; ih < w.in[1]; ++ih) {
                int64_t oh = ih * w.stride[1] + offH;
                if (od < 0 || od >= w.out[0] || oh < 0 || oh >= w.out[1])
                  continue;
                const T *line = src + (id * w.in[1] + ih) * w.in[2];
                T *dst = plane + (od * w.out[1] + oh) * w.out[2];
                for (int64_t iw = wLo; iw < wHi; ++iw)
                  dst[iw * w.stride[2] + offW] += line[iw];
              }
            }
          }
    }
  });
}

/// out[i] = bias + the taps in (kd, kh, kw) order, one rounding per
/// multiply and per add, then clamped to [lo, hi] as FusedActivation does
/// (infinite bounds leave every value as it is, NaN and -0 included), for
/// i in [0, count): tap t reads src[t][i]. The same source compiles for
/// every instruction set without FMA contraction (-ffp-contract=off), so
/// the bits do not depend on the CPU. The common 3 x 3 case has its tap
/// count fixed at compile time so the whole sum stays in registers.
template <int FixedTaps, typename T>
MNCC_ALWAYS_INLINE void sumTaps(const T *const *rows, const T *weights,
                                int64_t taps, T bias, T lo, T hi, int64_t count,
                                T *out) {
  if constexpr (FixedTaps > 0) {
    // Locals and a restrict output let the compiler keep the taps in
    // registers and vectorize without alias checks.
    const T *src[FixedTaps];
    T weight[FixedTaps];
    for (int t = 0; t < FixedTaps; ++t) {
      src[t] = rows[t];
      weight[t] = weights[t];
    }
    T *__restrict dst = out;
    for (int64_t i = 0; i < count; ++i) {
      T acc = bias;
#pragma GCC unroll 16
      for (int t = 0; t < FixedTaps; ++t)
        acc += weight[t] * src[t][i];
      acc = acc < lo ? lo : acc;
      dst[i] = acc > hi ? hi : acc;
    }
  } else {
    std::fill(out, out + count, bias);
    for (int64_t t = 0; t < taps; ++t) {
      const T *src = rows[t];
      T weight = weights[t];
      for (int64_t i = 0; i < count; ++i)
        out[i] += weight * src[i];
    }
    for (int64_t i = 0; i < count; ++i) {
      T value = out[i] < lo ? lo : out[i];
      out[i] = value > hi ? hi : value;
    }
  }
}

/// What every plane of a depthwise Conv shares, worked out once per Conv:
/// a network has thousands of small planes, and allocating per plane cost
/// more than some planes' sums.
struct DepthwisePlan {
  explicit DepthwisePlan(const Window &w)
      : shape(w), columnOffset(shape.columnOffsets(w)) {
    // With stride 1, tap (kd, kh, kw) reads the flat padded plane this far
    // from the output's own position.
    for (int64_t kd = 0; kd < w.kernel[0]; ++kd)
      for (int64_t kh = 0; kh < w.kernel[1]; ++kh)
        for (int64_t kw = 0; kw < w.kernel[2]; ++kw)
          flatTapOffset.push_back(
              (kd * w.dilation[0] * shape.extent[1] + kh * w.dilation[1]) *
                  shape.rowLength +
              kw * w.dilation[2]);
  }
  PaddedPlane shape;
  std::vector<int64_t> columnOffset, flatTapOffset;
};

/// Scratch of one depthwise worker: the padded plane, the taps' rows and,
/// for the flat loop, its output with the padding columns still in.
template <typename T> struct DepthwiseScratch {
  std::vector<T> padded, flatOut;
  std::vector<const T *> rows;
};

/// One channel of a depthwise convolution into `out`.
template <int VectorBytes, typename T>
MNCC_ALWAYS_INLINE void
depthwisePlane(const T *in, const T *kernel, T bias, const Window &w,
               const DepthwisePlan &plan, const FusedActivation *clamp,
               DepthwiseScratch<T> &scratch, T *out) {
  // The fused activation's bounds, or none.
  T lo = clamp ? T(clamp->lo) : -std::numeric_limits<T>::infinity();
  T hi = clamp ? T(clamp->hi) : std::numeric_limits<T>::infinity();
  const PaddedPlane &shape = plan.shape;
  scratch.padded.resize(shape.size());
  T *padded = scratch.padded.data();
  padPlane(in, w, shape, T(0), padded);
  int64_t taps = w.kernelSize();
  bool threeByThree = taps == 9 && w.kernel[2] == 3;
  scratch.rows.resize(taps);
  const T **rows = scratch.rows.data();
  if (shape.flat) {
    // All strides 1: one loop over the whole plane, so small planes (7 x 7,
    // 14 x 14) still fill whole vectors. It also computes the columns
    // between out[2] and the padded row length, which are dropped.
    for (int64_t t = 0; t < taps; ++t)
      rows[t] = padded + plan.flatTapOffset[t];
    int64_t count = shape.flatCount(w);
    scratch.flatOut.resize(count);
    T *flatOut = scratch.flatOut.data();
    if (threeByThree)
      sumTaps<9>(rows, kernel, taps, bias, lo, hi, count, flatOut);
    else
      sumTaps<0>(rows, kernel, taps, bias, lo, hi, count, flatOut);
    for (int64_t od = 0; od < w.out[0]; ++od)
      for (int64_t oh = 0; oh < w.out[1]; ++oh) {
        T *dst = out + (od * w.out[1] + oh) * w.out[2];
        const T *src = flatOut + (od * shape.extent[1] + oh) * shape.rowLength;
        copyShort<VectorBytes>(src, dst, w.out[2]);
      }
    return;
  }
  // Strided: one output row at a time, each tap from its phase.
  for (int64_t od = 0; od < w.out[0]; ++od)
    for (int64_t oh = 0; oh < w.out[1]; ++oh) {
      shape.tapRows<T>(padded, w, plan.columnOffset.data(), od, oh, rows);
      T *dst = out + (od * w.out[1] + oh) * w.out[2];
      if (threeByThree)
        sumTaps<9>(rows, kernel, taps, bias, lo, hi, w.out[2], dst);
      else
        sumTaps<0>(rows, kernel, taps, bias, lo, hi, w.out[2], dst);
    }
}

using DepthwisePlaneFn = void (*)(const float *, const float *, float,
                                  const Window &, const DepthwisePlan &,
                                  const FusedActivation *,
                                  DepthwiseScratch<float> &, float *);

void depthwisePlanePortable(const float *in, const float *kernel, float bias,
                            const Window &w, const DepthwisePlan &plan,
                            const FusedActivation *clamp,
                            DepthwiseScratch<float> &scratch, float *out) {
  depthwisePlane<16>(in, kernel, bias, w, plan, clamp, scratch, out);
}

#ifdef MNCC_KERNEL_COPIES_X86
// The same code compiled for wider vectors; -ffp-contract=off keeps the
// multiplies and adds apart, so the bits match the portable build.
__attribute__((target("avx2"))) void
depthwisePlaneAvx2(const float *in, const float *kernel, float bias,
                   const Window &w, const DepthwisePlan &plan,
                   const FusedActivation *clamp,
                   DepthwiseScratch<float> &scratch, float *out) {
  depthwisePlane<32>(in, kernel, bias, w, plan, clamp, scratch, out);
}
__attribute__((target("avx512f"))) void
depthwisePlaneAvx512(const float *in, const float *kernel, float bias,
                     const Window &w, const DepthwisePlan &plan,
                     const FusedActivation *clamp,
                     DepthwiseScratch<float> &scratch, float *out) {
  depthwisePlane<64>(in, kernel, bias, w, plan, clamp, scratch, out);
}
#endif

DepthwisePlaneFn bestDepthwisePlane() {
#ifdef MNCC_KERNEL_COPIES_X86
  return widestCopy(depthwisePlaneAvx512, depthwisePlaneAvx2,
                    depthwisePlanePortable);
#else
  return depthwisePlanePortable;
#endif
}

/// Depthwise convolution (one input and one output channel per group),
/// computed directly: im2col + a 1 x K GEMM per channel spends most of its
/// time unfolding. Channels are independent, so the result does not depend
/// on how they are split over threads.
template <typename T>
void depthwiseConv(const T *xData, const T *wData, const T *bData,
                   int64_t planes, int64_t channels, const Window &w,
                   const FusedActivation *clamp, T *outData) {
  int64_t kSize = w.kernelSize();
  int64_t grain = linalg::balancedGrain(planes, w.outSize());
  DepthwisePlan plan(w);
  linalg::parallelFor(planes, grain, [&](int64_t begin, int64_t end) {
    DepthwiseScratch<T> scratch;
    for (int64_t plane = begin; plane < end; ++plane) {
      int64_t c = plane % channels;
      const T *in = xData + plane * w.inSize();
      T *out = outData + plane * w.outSize();
      T bias = bData ? bData[c] : T(0);
      if constexpr (std::is_same_v<T, float>) {
        static const DepthwisePlaneFn run = bestDepthwisePlane();
        run(in, wData + c * kSize, bias, w, plan, clamp, scratch, out);
      } else {
        depthwisePlane<16>(in, wData + c * kSize, bias, w, plan, clamp, scratch,
                           out);
      }
    }
  });
}

Status checkConvInputs(KernelContext &context, const Tensor *&x,
                       const Tensor *&weights, const Tensor *&bias) {
  if (Status s = requireFloatInput(context, 0, "X"); !s)
    return s;
  if (Status s = requireFloatInput(context, 1, "W"); !s)
    return s;
  x = context.inputTensor(0);
  weights = context.inputTensor(1);
  bias = context.inputTensor(2);
  if (weights->dtype() != x->dtype() || (bias && bias->dtype() != x->dtype()))
    return opError(context, "X, W and B must have the same type");
  if (x->rank() < 3 || weights->rank() != x->rank())
    return opError(context, "X (" + shapeToString(x->shape()) + ") and W (" +
                                shapeToString(weights->shape()) +
                                ") must be N x C x spatial... of one rank");
  return Status::success();
}

/// A Conv's weights packed for the GEMM, one matrix per group: kept in
/// the node's cache when the weights are an initializer, since packing them
/// costs a pass over them on every run otherwise.
template <typename T> struct PackedWeights {
  std::vector<std::shared_ptr<const linalg::PackedA<T>>> groups;
};

template <typename T>
void convCompute(const Tensor &x, const Tensor &weights, const Tensor *bias,
                 int64_t group, const Window &w, const FusedActivation *clamp,
                 NodeCache *weightCache, Tensor &out) {
  int64_t batch = x.shape()[0], channels = x.shape()[1];
  int64_t outChannels = weights.shape()[0];
  int64_t cPerGroup = channels / group, mPerGroup = outChannels / group;
  int64_t rows = cPerGroup * w.kernelSize(), cols = w.outSize();
  const T *xData = x.data<T>();
  const T *wData = weights.data<T>();
  T *outData = out.data<T>();
  if (group == channels && outChannels == channels && channels > 1) {
    depthwiseConv(xData, wData, bias ? bias->data<T>() : nullptr,
                  batch * channels, channels, w, clamp, outData);
    return;
  }
  // A 1x1 kernel with stride 1 and no padding reads the input as is.
  bool direct = w.kernelSize() == 1 &&
                w.stride == std::array<int64_t, 3>{1, 1, 1} &&
                w.padBegin == std::array<int64_t, 3>{0, 0, 0} &&
                w.padEnd == std::array<int64_t, 3>{0, 0, 0};
  Unfolding unfolding(w);
  std::shared_ptr<const PackedWeights<T>> packed;
  if (weightCache)
    packed = weightCache->get<PackedWeights<T>>([&] {
      auto value = std::make_shared<PackedWeights<T>>();
      for (int64_t g = 0; g < group; ++g)
        value->groups.push_back(linalg::packA<T>(
            false, wData + g * mPerGroup * rows, rows, mPerGroup, rows));
      return value;
    });
  auto runTask = [&](int64_t task, bool parallel) {
    int64_t n = task / group, g = task % group;
    const T *in = xData + (n * channels + g * cPerGroup) * w.inSize();
    // The bias and the activation go in as each block of the product is
    // finished, instead of in passes over the whole output.
    linalg::GemmEpilogue<T> epilogue{
        bias ? bias->data<T>() + g * mPerGroup : nullptr, clamp};
    linalg::GemmOperands<T> ops;
    ops.a = wData + g * mPerGroup * rows;
    ops.lda = rows;
    ops.packedA = packed ? packed->groups[g].get() : nullptr;
    linalg::PackBFn<T> packer;
    if (direct) {
      ops.b = in;
      ops.ldb = cols;
    } else {
      packer = convInputPacker(in, unfolding);
      ops.packB = &packer;
    }
    linalg::gemm(mPerGroup, cols, rows, T(1), ops, T(0),
                 outData + (n * outChannels + g * mPerGroup) * cols, cols,
                 parallel, epilogue);
  };
  if (group > 1) {
    // Many small GEMMs: one thread per (image, group).
    linalg::parallelFor(batch * group, 8, [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task)
        runTask(task, false);
    });
  } else {
    for (int64_t n = 0; n < batch; ++n)
      runTask(n, true);
  }
}

Status convKernel(KernelContext &context) {
  const Tensor *x, *weights, *bias;
  if (Status s = checkConvInputs(context, x, weights, bias); !s)
    return s;
  int64_t group = context.getInt("group", 1);
  int64_t channels = x->shape()[1], outChannels = weights->shape()[0];
  if (group < 1 || channels % group != 0 || outChannels % group != 0 ||
      weights->shape()[1] * group != channels)
    return opError(context, "group " + std::to_string(group) +
                                " does not fit X " + shapeToString(x->shape()) +
                                " and W " + shapeToString(weights->shape()));
  if (bias && (bias->rank() != 1 || bias->shape()[0] != outChannels))
    return opError(context,
                   "B must have shape [" + std::to_string(outChannels) + "]");
  std::vector<int64_t> spatial(x->shape().begin() + 2, x->shape().end());
  std::vector<int64_t> kernel(weights->shape().begin() + 2,
                              weights->shape().end());
  Window w;
  if (Status s = resolveWindow(context, spatial, kernel, false, true, w); !s)
    return s;
  DType work = computeType(x->dtype());
  Tensor xw = castFloat(*x, work), ww = castFloat(*weights, work), bw;
  if (bias)
    bw = castFloat(*bias, work);
  std::vector<int64_t> outShape = {x->shape()[0], outChannels};
  for (int64_t d : w.outShape())
    outShape.push_back(d);
  // Every element is written: by the GEMM (beta 0) or the depthwise path.
  Tensor out = work == x->dtype() ? context.allocateOutput(0, work, outShape)
                                  : Tensor::uninitialized(work, outShape);
  // The interpreter fuses activations only into float32 Conv.
  const FusedActivation *clamp = context.fusedActivation();
  if (clamp && x->dtype() != DType::Float32)
    return opError(context, "an activation was fused into a non-float32 Conv");
  NodeCache *weightCache = context.cacheForConstantInput(1);
  if (work == DType::Float64)
    convCompute<double>(xw, ww, bias ? &bw : nullptr, group, w, clamp,
                        weightCache, out);
  else
    convCompute<float>(xw, ww, bias ? &bw : nullptr, group, w, clamp,
                       weightCache, out);
  context.setOutput(0, castFloat(out, x->dtype()));
  return Status::success();
}

template <typename T>
void convTransposeCompute(const Tensor &x, const Tensor &weights,
                          const Tensor *bias, int64_t group, const Window &w,
                          Tensor &out) {
  int64_t batch = x.shape()[0], channels = x.shape()[1];
  int64_t mPerGroup = weights.shape()[1], outChannels = mPerGroup * group;
  int64_t cPerGroup = channels / group;
  int64_t rows = mPerGroup * w.kernelSize(), cols = w.inSize();
  std::vector<T> col(rows * cols);
  const T *xData = x.data<T>();
  const T *wData = weights.data<T>();
  T *outData = out.data<T>();
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t g = 0; g < group; ++g) {
      // col = W_g^T * X_g, with W_g stored as cPerGroup x rows.
      linalg::gemm(true, false, rows, cols, cPerGroup, T(1),
                   wData + g * cPerGroup * rows, rows,
                   xData + (n * channels + g * cPerGroup) * cols, cols, T(0),
                   col.data(), cols);
      col2im(col.data(), mPerGroup, w,
             outData + (n * outChannels + g * mPerGroup) * w.outSize());
    }
  if (bias) {
    const T *b = bias->data<T>();
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t m = 0; m < outChannels; ++m) {
        T *plane = outData + (n * outChannels + m) * w.outSize();
        for (int64_t i = 0; i < w.outSize(); ++i)
          plane[i] += b[m];
      }
  }
}

Status convTransposeKernel(KernelContext &context) {
  const Tensor *x, *weights, *bias;
  if (Status s = checkConvInputs(context, x, weights, bias); !s)
    return s;
  int64_t group = context.getInt("group", 1);
  int64_t channels = x->shape()[1];
  if (group < 1 || channels % group != 0 || weights->shape()[0] != channels)
    return opError(context, "group " + std::to_string(group) +
                                " does not fit X " + shapeToString(x->shape()) +
                                " and W " + shapeToString(weights->shape()));
  int64_t outChannels = weights->shape()[1] * group;
  if (bias && (bias->rank() != 1 || bias->shape()[0] != outChannels))
    return opError(context,
                   "B must have shape [" + std::to_string(outChannels) + "]");
  int64_t rank = x->rank() - 2;
  if (rank > 3)
    return opError(context, "supports 1 to 3 spatial dimensions");
  std::vector<int64_t> kernel(weights->shape().begin() + 2,
                              weights->shape().end());
  std::vector<int64_t> kernelAttr = context.getInts("kernel_shape", kernel);
  if (kernelAttr != kernel)
    return opError(context, "kernel_shape differs from the weights' shape");
  std::vector<int64_t> strides =
      context.getInts("strides", std::vector<int64_t>(rank, 1));
  std::vector<int64_t> dilations =
      context.getInts("dilations", std::vector<int64_t>(rank, 1));
  std::vector<int64_t> pads =
      context.getInts("pads", std::vector<int64_t>(2 * rank, 0));
  std::vector<int64_t> outputPadding =
      context.getInts("output_padding", std::vector<int64_t>(rank, 0));
  std::vector<int64_t> outputShape = context.getInts("output_shape");
  std::string autoPad = context.getString("auto_pad", "NOTSET");
  // output_shape may name the whole output; only its spatial part matters.
  if (static_cast<int64_t>(outputShape.size()) == rank + 2)
    outputShape.erase(outputShape.begin(), outputShape.begin() + 2);
  if (static_cast<int64_t>(strides.size()) != rank ||
      static_cast<int64_t>(dilations.size()) != rank ||
      static_cast<int64_t>(pads.size()) != 2 * rank ||
      static_cast<int64_t>(outputPadding.size()) != rank ||
      (!outputShape.empty() &&
       static_cast<int64_t>(outputShape.size()) != rank))
    return opError(context, "strides, dilations, output_padding, "
                            "output_shape need one value per spatial "
                            "dimension and pads two");
  if (autoPad != "NOTSET" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER" && autoPad != "VALID" && !autoPad.empty())
    return opError(context, "unknown auto_pad '" + autoPad + "'");
  Window w;
  w.spatialRank = rank;
  for (int64_t i = 0; i < rank; ++i) {
    size_t at = 3 - rank + i;
    int64_t in = x->shape()[2 + i];
    if (strides[i] < 1 || dilations[i] < 1)
      return opError(context, "strides and dilations must be positive");
    w.in[at] = in;
    w.kernel[at] = kernel[i];
    w.stride[at] = strides[i];
    w.dilation[at] = dilations[i];
    int64_t natural = strides[i] * (in - 1) + outputPadding[i] +
                      (kernel[i] - 1) * dilations[i] + 1;
    bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
    if (!outputShape.empty() || same) {
      int64_t target = !outputShape.empty() ? outputShape[i] : in * strides[i];
      int64_t total = natural - target;
      // As ONNX specifies, with floor division: SAME_UPPER keeps the odd
      // unit at the end. A negative total (a larger output_shape) extends
      // the output with zero contributions.
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      if (autoPad == "SAME_UPPER") {
        w.padBegin[at] = half;
        w.padEnd[at] = total - half;
      } else {
        w.padBegin[at] = total - half;
        w.padEnd[at] = half;
      }
      w.out[at] = target;
    } else {
      if (autoPad != "VALID") {
        w.padBegin[at] = pads[i];
        w.padEnd[at] = pads[i + rank];
      }
      w.out[at] = natural - w.padBegin[at] - w.padEnd[at];
    }
    if (w.out[at] < 0)
      return opError(context, "the output would have a negative size");
  }
  DType work = computeType(x->dtype());
  Tensor xw = castFloat(*x, work), ww = castFloat(*weights, work), bw;
  if (bias)
    bw = castFloat(*bias, work);
  std::vector<int64_t> outShape = {x->shape()[0], outChannels};
  for (int64_t d : w.outShape())
    outShape.push_back(d);
  Tensor out(work, outShape);
  if (work == DType::Float64)
    convTransposeCompute<double>(xw, ww, bias ? &bw : nullptr, group, w, out);
  else
    convTransposeCompute<float>(xw, ww, bias ? &bw : nullptr, group, w, out);
  context.setOutput(0, castFloat(out, x->dtype()));
  return Status::success();
}

} // namespace

MNCC_REFERENCE_KERNEL("", Conv, convKernel);
MNCC_REFERENCE_KERNEL("", ConvTranspose, convTransposeKernel);
