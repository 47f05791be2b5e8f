//===- NnPool.cpp - MaxPool, AveragePool, LpPool and their Global forms ---===//
//
// Every pool walks the same windows: for each output position, the input
// positions of the window that lie inside the input (padding is never
// read). Planes (image, channel) run in parallel; each output is reduced
// in a fixed order, so the result does not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "LinalgGemm.h"
#include "NnConvCommon.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define MNCC_MAXPOOL_AVX512 1
#include <immintrin.h>
#endif

using namespace mncc::reference;
using namespace mncc::reference::nn;

namespace {

/// Per dimension and output index: the window positions that lie inside
/// the input (`count` of them from `first`, `dilation` apart), and how many
/// lie inside the padded input (the divisor of AveragePool with
/// count_include_pad).
struct Taps {
  struct Span {
    int64_t first = 0, count = 0, padded = 0;
  };
  std::array<std::vector<Span>, 3> spans;

  explicit Taps(const Window &w) {
    for (int d = 0; d < 3; ++d) {
      spans[d].resize(w.out[d]);
      for (int64_t o = 0; o < w.out[d]; ++o) {
        Span &span = spans[d][o];
        int64_t start = o * w.stride[d] - w.padBegin[d];
        span.first = -1;
        for (int64_t k = 0; k < w.kernel[d]; ++k) {
          int64_t i = start + k * w.dilation[d];
          if (i >= 0 && i < w.in[d]) {
            if (span.first < 0)
              span.first = i;
            ++span.count;
          }
          if (i >= -w.padBegin[d] && i < w.in[d] + w.padEnd[d])
            ++span.padded;
        }
      }
    }
  }
};

/// Calls visit(plane, outIndex, taps, paddedCount) for every output of
/// every plane, where taps(fn) calls fn(spatialIndex, d, h, w) for each
/// window position inside the input, row-major.
template <typename Visit>
void forEachWindow(const Window &w, int64_t planes, Visit &&visit) {
  Taps taps(w);
  int64_t grain = linalg::balancedGrain(planes, w.outSize() * w.kernelSize());
  linalg::parallelFor(planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      int64_t outIndex = 0;
      for (int64_t od = 0; od < w.out[0]; ++od)
        for (int64_t oh = 0; oh < w.out[1]; ++oh)
          for (int64_t ow = 0; ow < w.out[2]; ++ow, ++outIndex) {
            const Taps::Span &sd = taps.spans[0][od];
            const Taps::Span &sh = taps.spans[1][oh];
            const Taps::Span &sw = taps.spans[2][ow];
            auto each = [&](auto &&fn) {
              for (int64_t kd = 0, d = sd.first; kd < sd.count;
                   ++kd, d += w.dilation[0])
                for (int64_t kh = 0, h = sh.first; kh < sh.count;
                     ++kh, h += w.dilation[1]) {
                  int64_t row = (d * w.in[1] + h) * w.in[2];
                  for (int64_t kw = 0, x = sw.first; kw < sw.count;
                       ++kw, x += w.dilation[2])
                    fn(row + x, d, h, x);
                }
            };
            visit(plane, outIndex, each, sd.padded * sh.padded * sw.padded);
          }
    }
  });
}

/// The fast path of MaxPool without Indices and of AveragePool: whole
/// output rows at a time. Each output still combines its taps in
/// forEachWindow's (d, h, w) order, so the two paths agree bit for bit.
/// finishRow(row, spanD, spanH, spansW) runs after a row is combined.
template <typename T, typename Combine, typename FinishRow>
void rowPool(const Window &w, int64_t planes, const T *in, T *out, T init,
             Combine combine, FinishRow finishRow) {
  Taps taps(w);
  int64_t kw = w.kernel[2];
  std::vector<int64_t> lo(kw), hi(kw), offset(kw);
  for (int64_t k = 0; k < kw; ++k) {
    offset[k] = k * w.dilation[2] - w.padBegin[2];
    validRange(w.out[2], w.stride[2], offset[k], w.in[2], lo[k], hi[k]);
  }
  int64_t grain = linalg::balancedGrain(planes, w.outSize() * w.kernelSize());
  int64_t stride = w.stride[2];
  linalg::parallelFor(planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      const T *p = in + plane * w.inSize();
      for (int64_t od = 0; od < w.out[0]; ++od)
        for (int64_t oh = 0; oh < w.out[1]; ++oh) {
          T *row = out + plane * w.outSize() + (od * w.out[1] + oh) * w.out[2];
          std::fill(row, row + w.out[2], init);
          const Taps::Span &sd = taps.spans[0][od];
          const Taps::Span &sh = taps.spans[1][oh];
          for (int64_t kd = 0, d = sd.first; kd < sd.count;
               ++kd, d += w.dilation[0])
            for (int64_t kh = 0, h = sh.first; kh < sh.count;
                 ++kh, h += w.dilation[1]) {
              const T *src = p + (d * w.in[1] + h) * w.in[2];
              // Constant strides for the common cases let the compiler
              // vectorize the loads (a runtime stride stays scalar).
              for (int64_t k = 0; k < kw; ++k) {
                const T *from = src + offset[k];
                if (stride == 1)
                  for (int64_t ow = lo[k]; ow < hi[k]; ++ow)
                    row[ow] = combine(row[ow], from[ow]);
                else if (stride == 2)
                  for (int64_t ow = lo[k]; ow < hi[k]; ++ow)
                    row[ow] = combine(row[ow], from[2 * ow]);
                else
                  for (int64_t ow = lo[k]; ow < hi[k]; ++ow)
                    row[ow] = combine(row[ow], from[ow * stride]);
              }
            }
          finishRow(row, sd, sh, taps.spans[2]);
        }
    }
  });
}

/// max() that propagates NaN (like numpy's max): once NaN, always NaN.
template <typename T> MNCC_ALWAYS_INLINE T maxWithNaN(T best, T value) {
  // | rather than ||: no branch, so loops over it vectorize.
  bool take = (value > best) | (value != value);
  return take ? value : best;
}

/// One output row of a pool: out[ow] = the taps combined in order from
/// `init`, tap t read from src[t][ow]. A 3 x 3 window (the common one)
/// has its taps fixed at compile time so each output is combined in
/// registers in one pass.
template <int FixedTaps, typename T, typename Combine>
MNCC_ALWAYS_INLINE void combineTaps(const T *const *rows, int64_t taps, T init,
                                    int64_t width, Combine combine, T *out) {
  if constexpr (FixedTaps > 0) {
    const T *src[FixedTaps];
    for (int t = 0; t < FixedTaps; ++t)
      src[t] = rows[t];
    T *__restrict dst = out;
    for (int64_t ow = 0; ow < width; ++ow) {
      T best = init;
#pragma GCC unroll 16
      for (int t = 0; t < FixedTaps; ++t)
        best = combine(best, src[t][ow]);
      dst[ow] = best;
    }
  } else {
    std::fill(out, out + width, init);
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t ow = 0; ow < width; ++ow)
        out[ow] = combine(out[ow], rows[t][ow]);
  }
}

/// One plane of MaxPool without Indices, padded with `lowest` (which no
/// value loses to, so the padding changes nothing) and split by column
/// phase: every output row combines its taps in forEachWindow's (d, h, w)
/// order with unit-stride loads. maxWithNaN is a plain max when no NaN
/// shows up and vectorizes (compare, compare-unordered, blend), so one
/// pass does for both; scanning the input for NaN first cost a whole
/// extra read of it.
template <typename T, typename RowFn>
MNCC_ALWAYS_INLINE void
maxPoolPlane(const T *in, const Window &w, const PaddedPlane &shape,
             const int64_t *columnOffset, T lowest, T *padded, const T **rows,
             T *out, RowFn maxRow) {
  padPlane(in, w, shape, lowest, padded);
  int64_t taps = w.kernelSize();
  auto combine = [](T best, T value) { return maxWithNaN(best, value); };
  for (int64_t od = 0; od < w.out[0]; ++od)
    for (int64_t oh = 0; oh < w.out[1]; ++oh) {
      shape.tapRows<T>(padded, w, columnOffset, od, oh, rows);
      T *row = out + (od * w.out[1] + oh) * w.out[2];
      if (taps == 9 && w.kernel[2] == 3)
        maxRow(rows, lowest, w.out[2], row);
      else
        combineTaps<0>(rows, taps, lowest, w.out[2], combine, row);
    }
}

/// The 3 x 3 row of maxPoolPlane in plain C++.
template <typename T> struct MaxRow9 {
  void operator()(const T *const *rows, T init, int64_t width, T *out) const {
    combineTaps<9>(
        rows, 9, init, width,
        [](T best, T value) { return maxWithNaN(best, value); }, out);
  }
};

/// One plane: its input, window and padded shape, the columns' offsets,
/// the padding value, then the worker's padded plane and taps' rows.
using MaxPoolPlaneFn = void (*)(const float *, const Window &,
                                const PaddedPlane &, const int64_t *, float,
                                float *, const float **, float *);

void maxPoolPlanePortable(const float *in, const Window &w,
                          const PaddedPlane &shape, const int64_t *offsets,
                          float lowest, float *padded, const float **rows,
                          float *out) {
  maxPoolPlane(in, w, shape, offsets, lowest, padded, rows, out,
               MaxRow9<float>());
}

#ifdef MNCC_MAXPOOL_AVX512

/// MaxRow9 with AVX-512 by hand (GCC leaves the 9-tap select chain
/// scalar): take the tap where it is greater (ordered) or NaN, exactly
/// maxWithNaN's rule, so the bits match the portable build.
__attribute__((target("avx512f"))) void
maxRow9Avx512(const float *const *rows, float init, int64_t width, float *out) {
  const __m512 start = _mm512_set1_ps(init);
  for (int64_t ow = 0; ow < width; ow += 16) {
    __mmask16 lanes = width - ow >= 16 ? __mmask16(0xffff)
                                       : __mmask16((1u << (width - ow)) - 1);
    __m512 best = start;
    for (int t = 0; t < 9; ++t) {
      __m512 value = _mm512_maskz_loadu_ps(lanes, rows[t] + ow);
      __mmask16 take = _mm512_cmp_ps_mask(value, best, _CMP_GT_OQ) |
                       _mm512_cmp_ps_mask(value, value, _CMP_UNORD_Q);
      best = _mm512_mask_blend_ps(take, best, value);
    }
    _mm512_mask_storeu_ps(out + ow, lanes, best);
  }
}

__attribute__((target("avx512f"))) void
maxPoolPlaneAvx512(const float *in, const Window &w, const PaddedPlane &shape,
                   const int64_t *offsets, float lowest, float *padded,
                   const float **rows, float *out) {
  maxPoolPlane(in, w, shape, offsets, lowest, padded, rows, out,
               [](const float *const *rows, float init, int64_t width,
                  float *row) { maxRow9Avx512(rows, init, width, row); });
}
#endif

template <typename T>
void paddedMaxPool(const Window &w, int64_t planes, const T *in, T *out,
                   T lowest) {
  PaddedPlane shape(w);
  std::vector<int64_t> columnOffset = shape.columnOffsets(w);
  int64_t grain = linalg::balancedGrain(planes, w.outSize() * w.kernelSize());
  linalg::parallelFor(planes, grain, [&](int64_t begin, int64_t end) {
    std::vector<T> padded(shape.size());
    std::vector<const T *> rows(w.kernelSize());
    for (int64_t plane = begin; plane < end; ++plane) {
      const T *source = in + plane * w.inSize();
      T *target = out + plane * w.outSize();
      if constexpr (std::is_same_v<T, float>) {
        static const MaxPoolPlaneFn run = [] {
#ifdef MNCC_MAXPOOL_AVX512
          if (__builtin_cpu_supports("avx512f"))
            return maxPoolPlaneAvx512;
#endif
          return maxPoolPlanePortable;
        }();
        run(source, w, shape, columnOffset.data(), lowest, padded.data(),
            rows.data(), target);
      } else {
        maxPoolPlane(source, w, shape, columnOffset.data(), lowest,
                     padded.data(), rows.data(), target, MaxRow9<T>());
      }
    }
  });
}

bool isFloatOr8Bit(DType dtype) {
  return isFloatType(dtype) || dtype == DType::Int8 || dtype == DType::UInt8;
}

/// Reads X and resolves the window of a (non-global) pool.
Status poolSetup(KernelContext &context, bool integersToo, const Tensor *&x,
                 Window &w, std::vector<int64_t> &outShape) {
  x = context.inputTensor(0);
  if (!x)
    return opError(context, "missing input X");
  if (!(integersToo ? isFloatOr8Bit(x->dtype()) : isFloatType(x->dtype())))
    return opError(context,
                   std::string("unsupported type ") + dtypeName(x->dtype()));
  if (x->rank() < 3)
    return opError(context, "X must be N x C x spatial..., not " +
                                shapeToString(x->shape()));
  if (!context.hasAttribute("kernel_shape"))
    return opError(context, "needs kernel_shape");
  std::vector<int64_t> spatial(x->shape().begin() + 2, x->shape().end());
  if (Status s = resolveWindow(context, spatial, {},
                               context.getInt("ceil_mode", 0) != 0, true, w);
      !s)
    return s;
  outShape = {x->shape()[0], x->shape()[1]};
  for (int64_t d : w.outShape())
    outShape.push_back(d);
  return Status::success();
}

template <typename T>
void maxPool(const Tensor &x, const Window &w, int64_t storageOrder,
             Tensor &out, Tensor *indices) {
  int64_t planes = x.shape()[0] * x.shape()[1];
  const T *in = x.data<T>();
  T *outData = out.data<T>();
  int64_t *indexData = indices ? indices->data<int64_t>() : nullptr;
  T lowest = std::numeric_limits<T>::lowest();
  if constexpr (std::numeric_limits<T>::has_infinity)
    lowest = -std::numeric_limits<T>::infinity();
  if (!indexData) {
    paddedMaxPool(w, planes, in, outData, lowest);
    return;
  }
  forEachWindow(w, planes, [&](int64_t plane, int64_t o, auto &&taps, int64_t) {
    const T *p = in + plane * w.inSize();
    T best = lowest;
    int64_t bestIndex = -1, bestD = 0, bestH = 0, bestW = 0;
    taps([&](int64_t i, int64_t d, int64_t h, int64_t x) {
      // The first maximum wins; a NaN is the maximum (the first NaN).
      if (bestIndex < 0 || (maxWithNaN(best, p[i]) != best && best == best)) {
        best = p[i];
        bestIndex = i;
        bestD = d;
        bestH = h;
        bestW = x;
      }
    });
    outData[plane * w.outSize() + o] = best;
    if (indexData) {
      // Indices flatten the whole input; storage_order 1 is column-major
      // over the spatial dimensions.
      int64_t spatial = storageOrder == 1
                            ? bestD + (bestH + bestW * w.in[1]) * w.in[0]
                            : bestIndex;
      indexData[plane * w.outSize() + o] = plane * w.inSize() + spatial;
    }
  });
}

Status maxPoolKernel(KernelContext &context) {
  const Tensor *x;
  Window w;
  std::vector<int64_t> outShape;
  if (Status s = poolSetup(context, true, x, w, outShape); !s)
    return s;
  int64_t storageOrder = context.getInt("storage_order", 0);
  if (storageOrder != 0 && storageOrder != 1)
    return opError(context, "storage_order must be 0 or 1");
  bool wantIndices = context.numOutputs() > 1 && context.wantsOutput(1);
  Tensor indices(DType::Int64,
                 wantIndices ? outShape : std::vector<int64_t>{0});
  DType dtype = x->dtype();
  // Max selects an input value, so float16/bfloat16 via float is exact.
  DType work = isFloatType(dtype) ? computeType(dtype) : dtype;
  Tensor xw = isFloatType(dtype) ? castFloat(*x, work) : *x;
  // Both paths of maxPool write every output.
  Tensor out = Tensor::uninitialized(work, outShape);
  Tensor *indexOut = wantIndices ? &indices : nullptr;
  switch (work) {
  case DType::Float64:
    maxPool<double>(xw, w, storageOrder, out, indexOut);
    break;
  case DType::Int8:
    maxPool<int8_t>(xw, w, storageOrder, out, indexOut);
    break;
  case DType::UInt8:
    maxPool<uint8_t>(xw, w, storageOrder, out, indexOut);
    break;
  default:
    maxPool<float>(xw, w, storageOrder, out, indexOut);
    break;
  }
  context.setOutput(0, isFloatType(dtype) ? castFloat(out, dtype) : out);
  if (wantIndices)
    context.setOutput(1, indices);
  return Status::success();
}

template <typename T>
void averagePool(const Tensor &x, const Window &w, bool countPad, Tensor &out) {
  rowPool(
      w, x.shape()[0] * x.shape()[1], x.data<T>(), out.data<T>(), T(0),
      [](T sum, T value) { return sum + value; },
      [&](T *row, const Taps::Span &sd, const Taps::Span &sh,
          const std::vector<Taps::Span> &spansW) {
        for (int64_t ow = 0; ow < w.out[2]; ++ow) {
          const Taps::Span &sw = spansW[ow];
          int64_t divisor = countPad ? sd.padded * sh.padded * sw.padded
                                     : sd.count * sh.count * sw.count;
          row[ow] = divisor ? row[ow] / T(divisor)
                            : std::numeric_limits<T>::quiet_NaN();
        }
      });
}

template <typename T>
void lpPool(const Tensor &x, const Window &w, double p, Tensor &out) {
  const T *in = x.data<T>();
  T *outData = out.data<T>();
  forEachWindow(w, x.shape()[0] * x.shape()[1],
                [&](int64_t plane, int64_t o, auto &&taps, int64_t) {
                  const T *data = in + plane * w.inSize();
                  T sum = 0;
                  taps([&](int64_t i, int64_t, int64_t, int64_t) {
                    sum += p == 2 ? data[i] * data[i]
                                  : T(std::pow(std::abs(data[i]), T(p)));
                  });
                  outData[plane * w.outSize() + o] =
                      p == 2 ? std::sqrt(sum) : T(std::pow(sum, T(1 / p)));
                });
}

Status averageOrLpPool(KernelContext &context, bool lp, const Tensor *x,
                       const Window &w, const std::vector<int64_t> &outShape) {
  DType work = computeType(x->dtype());
  Tensor xw = castFloat(*x, work);
  // rowPool and lpPool write every output.
  Tensor out = Tensor::uninitialized(work, outShape);
  bool countPad = context.getInt("count_include_pad", 0) != 0;
  double p = static_cast<double>(context.getInt("p", 2));
  if (lp && p <= 0)
    return opError(context, "p must be positive");
  if (work == DType::Float64) {
    if (lp)
      lpPool<double>(xw, w, p, out);
    else
      averagePool<double>(xw, w, countPad, out);
  } else {
    if (lp)
      lpPool<float>(xw, w, p, out);
    else
      averagePool<float>(xw, w, countPad, out);
  }
  context.setOutput(0, castFloat(out, x->dtype()));
  return Status::success();
}

Status averagePoolKernel(KernelContext &context) {
  const Tensor *x;
  Window w;
  std::vector<int64_t> outShape;
  if (Status s = poolSetup(context, false, x, w, outShape); !s)
    return s;
  return averageOrLpPool(context, false, x, w, outShape);
}

Status lpPoolKernel(KernelContext &context) {
  const Tensor *x;
  Window w;
  std::vector<int64_t> outShape;
  if (Status s = poolSetup(context, false, x, w, outShape); !s)
    return s;
  return averageOrLpPool(context, true, x, w, outShape);
}

/// The Global pools: one window covering all spatial dimensions.
Status globalPool(KernelContext &context, bool integersToo, bool lp, bool max) {
  const Tensor *x = context.inputTensor(0);
  if (!x)
    return opError(context, "missing input X");
  if (!(integersToo ? isFloatOr8Bit(x->dtype()) : isFloatType(x->dtype())))
    return opError(context,
                   std::string("unsupported type ") + dtypeName(x->dtype()));
  if (x->rank() < 2)
    return opError(context, "X must be N x C x spatial..., not " +
                                shapeToString(x->shape()));
  int64_t planes = x->shape()[0] * x->shape()[1];
  int64_t size = planes ? x->numElements() / planes : 0;
  std::vector<int64_t> outShape = x->shape();
  for (size_t i = 2; i < outShape.size(); ++i)
    outShape[i] = 1;
  DType dtype = x->dtype();
  DType work = isFloatType(dtype) ? computeType(dtype) : dtype;
  Tensor xw = isFloatType(dtype) ? castFloat(*x, work) : *x;
  Tensor out(work, outShape);
  double p = static_cast<double>(context.getInt("p", 2));
  if (lp && p <= 0)
    return opError(context, "p must be positive");
  if (max && size == 0 && planes > 0)
    return opError(context, "the input has no spatial elements");
  dispatchNumeric(work, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      const T *in = xw.data<T>();
      T *o = out.data<T>();
      linalg::parallelFor(planes, 16, [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
          const T *data = in + plane * size;
          if (max) {
            T best = data[0];
            for (int64_t i = 1; i < size; ++i)
              best = data[i] > best ? data[i] : best;
            o[plane] = best;
            continue;
          }
          if constexpr (std::is_floating_point_v<T>) {
            T sum = 0;
            for (int64_t i = 0; i < size; ++i)
              sum += lp ? (p == 2 ? data[i] * data[i]
                                  : T(std::pow(std::abs(data[i]), T(p))))
                        : data[i];
            o[plane] =
                lp ? (p == 2 ? std::sqrt(sum) : T(std::pow(sum, T(1 / p))))
                   : sum / T(size);
          }
        }
      });
    }
  });
  context.setOutput(0, isFloatType(dtype) ? castFloat(out, dtype) : out);
  return Status::success();
}

Status globalAveragePoolKernel(KernelContext &context) {
  return globalPool(context, false, false, false);
}
Status globalMaxPoolKernel(KernelContext &context) {
  return globalPool(context, false, false, true);
}
Status globalLpPoolKernel(KernelContext &context) {
  return globalPool(context, false, true, false);
}

/// MaxUnpool: scatters X into a zero tensor at MaxPool's indices (which
/// flatten the whole output tensor).
Status maxUnpoolKernel(KernelContext &context) {
  const Tensor *x = context.inputTensor(0);
  const Tensor *indices = context.inputTensor(1);
  const Tensor *outputShape = context.inputTensor(2);
  if (!x || !indices)
    return opError(context, "needs X and I");
  if (!isFloatType(x->dtype()) || indices->dtype() != DType::Int64 ||
      indices->shape() != x->shape())
    return opError(context, "X must be float and I int64 of X's shape");
  int64_t rank = x->rank() - 2;
  std::vector<int64_t> kernel = context.getInts("kernel_shape");
  std::vector<int64_t> strides =
      context.getInts("strides", std::vector<int64_t>(rank, 1));
  std::vector<int64_t> pads =
      context.getInts("pads", std::vector<int64_t>(2 * rank, 0));
  if (rank < 1 || static_cast<int64_t>(kernel.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank ||
      static_cast<int64_t>(pads.size()) != 2 * rank)
    return opError(context, "needs kernel_shape, strides and pads for " +
                                std::to_string(std::max<int64_t>(rank, 0)) +
                                " spatial dimensions");
  std::vector<int64_t> shape = {x->shape()[0], x->shape()[1]};
  for (int64_t i = 0; i < rank; ++i)
    shape.push_back((x->shape()[2 + i] - 1) * strides[i] + kernel[i] - pads[i] -
                    pads[rank + i]);
  // The indices address the default output; an output_shape pads that
  // (at the end of each dimension), so indices map through coordinates.
  std::vector<int64_t> target = shape;
  if (outputShape) {
    if (outputShape->numElements() != x->rank())
      return opError(context, "output_shape must have rank(X) values");
    for (int64_t i = 0; i < x->rank(); ++i)
      target[i] = outputShape->elementAsInt64(i);
  }
  int64_t defaultSize = 1;
  for (int64_t d : shape)
    defaultSize *= d;
  Tensor out(x->dtype(), target);
  size_t bytes = dtypeSize(x->dtype());
  const unsigned char *src = static_cast<const unsigned char *>(x->raw());
  unsigned char *dst = static_cast<unsigned char *>(out.raw());
  for (int64_t i = 0; i < x->numElements(); ++i) {
    int64_t at = indices->data<int64_t>()[i];
    if (at < 0 || at >= defaultSize)
      return opError(context,
                     "index " + std::to_string(at) + " is outside the output");
    int64_t flat = 0, stride = 1;
    for (int64_t d = x->rank() - 1; d >= 0; --d) {
      int64_t coordinate = at % shape[d];
      at /= shape[d];
      if (coordinate >= target[d])
        return opError(context, "output_shape is smaller than the input "
                                "implies");
      flat += coordinate * stride;
      stride *= target[d];
    }
    std::memcpy(dst + flat * bytes, src + i * bytes, bytes);
  }
  context.setOutput(0, out);
  return Status::success();
}

} // namespace

MNCC_REFERENCE_KERNEL("", MaxUnpool, maxUnpoolKernel);
MNCC_REFERENCE_KERNEL("", MaxPool, maxPoolKernel);
MNCC_REFERENCE_KERNEL("", AveragePool, averagePoolKernel);
MNCC_REFERENCE_KERNEL("", LpPool, lpPoolKernel);
MNCC_REFERENCE_KERNEL("", GlobalAveragePool, globalAveragePoolKernel);
MNCC_REFERENCE_KERNEL("", GlobalMaxPool, globalMaxPoolKernel);
MNCC_REFERENCE_KERNEL("", GlobalLpPool, globalLpPoolKernel);
