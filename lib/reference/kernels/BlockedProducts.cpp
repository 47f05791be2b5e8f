//===- BlockedProducts.cpp - Products summed block by block ---------------===//
//
// Conv, Gemm and MatMul summed the way a matrix unit sums them: K is cut
// into blocks, each block's products are summed exactly (in double: the
// operands a caller gives here are block floats of a few significant bits,
// so the sum of one block's products has no rounding), and each block's sum
// is added to a single-precision accumulator that starts at the bias, with
// one rounding per block, in the order of K. Not ONNX's kernels: the device
// reference of `mncc run --verify` (runtime/DeviceReference.cpp) runs these
// in place of them.
//
//===----------------------------------------------------------------------===//

#include "NnConvCommon.h"

#include "mncc/reference/BlockedProducts.h"

using namespace mncc;
using namespace mncc::reference;
using namespace mncc::reference::nn;

namespace {

std::vector<double> asDoubles(const Tensor &tensor) {
  std::vector<double> values(tensor.numElements());
  for (int64_t i = 0; i < int64_t(values.size()); ++i)
    values[i] = tensor.elementAsDouble(i);
  return values;
}

/// The accumulator after adding `sum`: the exact sum rounded once to
/// single.
float accumulate(float accumulator, double sum) {
  return float(double(accumulator) + sum);
}

Tensor fromDoubles(const std::vector<double> &values,
                   std::vector<int64_t> shape) {
  Tensor tensor = Tensor::uninitialized(DType::Float64, std::move(shape));
  std::copy(values.begin(), values.end(), tensor.data<double>());
  return tensor;
}

} // namespace

Status reference::blockedConv(KernelContext &context, int64_t block) {
  const Value *xv = context.input(0), *wv = context.input(1);
  const Value *bv = context.numInputs() > 2 ? context.input(2) : nullptr;
  if (!xv || !wv || !xv->isTensor() || !wv->isTensor() || block < 1)
    return opError(context, "needs X and W");
  const Tensor &x = xv->tensor, &w = wv->tensor;
  int64_t groups = context.getInt("group", 1);
  if (x.rank() < 3 || w.rank() != x.rank() || groups < 1 ||
      w.shape()[0] % groups || x.shape()[1] != w.shape()[1] * groups)
    return opError(context, "X, W and group do not agree");
  std::vector<int64_t> spatial(x.shape().begin() + 2, x.shape().end());
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  Window win;
  if (Status status = resolveWindow(context, spatial, kernel, false, true, win);
      !status.ok())
    return status;
  int64_t batches = x.shape()[0], channels = x.shape()[1];
  int64_t outChannels = w.shape()[0], groupChannels = w.shape()[1];
  int64_t perGroup = outChannels / groups;
  std::vector<double> xs = asDoubles(x), ws = asDoubles(w), bs;
  if (bv && bv->isTensor())
    bs = asDoubles(bv->tensor);
  // X channels last and W as [M, taps, C/group]: a block's products are
  // consecutive in both.
  int64_t inSize = win.inSize(), taps = win.kernelSize();
  std::vector<double> xl(xs.size()), wl(ws.size());
  for (int64_t n = 0; n < batches; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t p = 0; p < inSize; ++p)
        xl[(n * inSize + p) * channels + c] =
            xs[(n * channels + c) * inSize + p];
  for (int64_t m = 0; m < outChannels; ++m)
    for (int64_t c = 0; c < groupChannels; ++c)
      for (int64_t t = 0; t < taps; ++t)
        wl[(m * taps + t) * groupChannels + c] =
            ws[(m * groupChannels + c) * taps + t];
  int64_t outSize = win.outSize();
  std::vector<double> out(batches * outChannels * outSize);
  for (int64_t n = 0; n < batches; ++n)
    for (int64_t m = 0; m < outChannels; ++m) {
      // In the dense product over every channel (grouped convolutions
      // have zeros elsewhere), m's channels start at its group's first.
      int64_t first = m / perGroup * groupChannels;
      for (int64_t od = 0; od < win.out[0]; ++od)
        for (int64_t oh = 0; oh < win.out[1]; ++oh)
          for (int64_t ow = 0; ow < win.out[2]; ++ow) {
            float accumulator = bs.empty() ? 0.0f : float(bs[m]);
            int64_t tap = 0;
            for (int64_t kd = 0; kd < win.kernel[0]; ++kd)
              for (int64_t kh = 0; kh < win.kernel[1]; ++kh)
                for (int64_t kw = 0; kw < win.kernel[2]; ++kw, ++tap) {
                  int64_t id = od * win.stride[0] - win.padBegin[0] +
                               kd * win.dilation[0];
                  int64_t ih = oh * win.stride[1] - win.padBegin[1] +
                               kh * win.dilation[1];
                  int64_t iw = ow * win.stride[2] - win.padBegin[2] +
                               kw * win.dilation[2];
                  // A tap in the padding adds blocks of zeros.
                  if (id < 0 || id >= win.in[0] || ih < 0 || ih >= win.in[1] ||
                      iw < 0 || iw >= win.in[2])
                    continue;
                  int64_t pixel = (id * win.in[1] + ih) * win.in[2] + iw;
                  const double *xp =
                      &xl[(n * inSize + pixel) * channels + first];
                  const double *wp = &wl[(m * taps + tap) * groupChannels];
                  for (int64_t c = 0; c < groupChannels;) {
                    int64_t end =
                        std::min(groupChannels,
                                 ((first + c) / block + 1) * block - first);
                    double sum = 0;
                    for (int64_t i = c; i < end; ++i)
                      sum += xp[i] * wp[i];
                    accumulator = accumulate(accumulator, sum);
                    c = end;
                  }
                }
            out[((n * outChannels + m) * win.out[0] + od) * win.out[1] *
                    win.out[2] +
                oh * win.out[2] + ow] = accumulator;
          }
    }
  std::vector<int64_t> shape = {batches, outChannels};
  for (int64_t d : win.outShape())
    shape.push_back(d);
  context.setOutput(0, fromDoubles(out, shape));
  return Status::success();
}

Status reference::blockedPackedConv(
    KernelContext &context, int64_t block, int64_t pixels, int64_t quads,
    const std::function<void(double *, unsigned)> &blockFloat) {
  const Value *xv = context.input(0), *wv = context.input(1);
  const Value *bv = context.numInputs() > 2 ? context.input(2) : nullptr;
  if (!xv || !wv || !xv->isTensor() || !wv->isTensor() || block < 4 ||
      block % 4 || pixels < 1 || quads < 1)
    return opError(context, "needs X and W");
  const Tensor &x = xv->tensor, &w = wv->tensor;
  int64_t groups = context.getInt("group", 1);
  if (x.rank() != 4 || w.rank() != 4 || groups < 1 || w.shape()[0] % groups ||
      x.shape()[1] != w.shape()[1] * groups)
    return opError(context, "X, W and group do not agree");
  std::vector<int64_t> spatial(x.shape().begin() + 2, x.shape().end());
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  Window win;
  if (Status status = resolveWindow(context, spatial, kernel, false, true, win);
      !status.ok())
    return status;
  int64_t batches = x.shape()[0], channels = x.shape()[1];
  int64_t outChannels = w.shape()[0], groupChannels = w.shape()[1];
  int64_t perGroup = outChannels / groups;
  int64_t inH = win.in[1], inW = win.in[2], outH = win.out[1],
          outW = win.out[2];
  int64_t kh = win.kernel[1], kw = win.kernel[2];
  if (outW % pixels)
    return opError(context, "an output width the packed pixels do not divide");
  int64_t perLw = block / 4;
  int64_t padLeft = win.padBegin[2];
  int64_t phase = ((-padLeft) % perLw + perLw) % perLw;
  std::vector<double> xs = asDoubles(x), ws = asDoubles(w), bs;
  if (bv && bv->isTensor())
    bs = asDoubles(bv->tensor);
  // W's blocks, [kh][c][q] by (pixel, m), block-floated once.
  int64_t kChunks = kh * channels * quads;
  std::vector<double> wb(size_t(kChunks * pixels * outChannels * block), 0.0);
  for (int64_t kc = 0; kc < kChunks; ++kc) {
    int64_t r = kc / (channels * quads), c = kc / quads % channels,
            q = kc % quads;
    for (int64_t g = 0; g < pixels; ++g)
      for (int64_t m = 0; m < outChannels; ++m) {
        double *values =
            &wb[size_t(((kc * pixels + g) * outChannels + m) * block)];
        if (c / groupChannels != m / perGroup)
          continue;
        for (int64_t e = 0; e < block; ++e) {
          int64_t offset = q * block + e - phase - g * win.stride[2];
          if (offset < 0 || offset % win.dilation[2] ||
              offset / win.dilation[2] >= kw)
            continue;
          values[e] = ws[size_t(
              ((m * groupChannels + c % groupChannels) * kh + r) * kw +
              offset / win.dilation[2])];
        }
        blockFloat(values, unsigned(block));
      }
  }
  std::vector<double> out(size_t(batches * outChannels * outH * outW));
  std::vector<float> acc(size_t(pixels * outChannels));
  std::vector<double> a(static_cast<size_t>(block), 0.0);
  for (int64_t n = 0; n < batches; ++n)
    for (int64_t oh = 0; oh < outH; ++oh)
      for (int64_t b = 0; b < outW / pixels; ++b) {
        for (int64_t g = 0; g < pixels; ++g)
          for (int64_t m = 0; m < outChannels; ++m)
            acc[size_t(g * outChannels + m)] =
                bs.empty() ? 0.0f : float(bs[size_t(m)]);
        int64_t start = b * pixels * win.stride[2] - padLeft;
        int64_t firstLw = (start - phase) / perLw;
        for (int64_t kc = 0; kc < kChunks; ++kc) {
          int64_t r = kc / (channels * quads), c = kc / quads % channels,
                  q = kc % quads;
          int64_t ih =
              oh * win.stride[1] - win.padBegin[1] + r * win.dilation[1];
          // A block of zeros adds nothing.
          if (ih < 0 || ih >= inH)
            continue;
          int64_t first = (firstLw + 4 * q) * perLw;
          for (int64_t e = 0; e < block; ++e) {
            int64_t iw = first + e;
            a[size_t(e)] =
                iw >= 0 && iw < inW
                    ? xs[size_t(((n * channels + c) * inH + ih) * inW + iw)]
                    : 0.0;
          }
          blockFloat(a.data(), unsigned(block));
          for (int64_t g = 0; g < pixels; ++g)
            for (int64_t m = 0; m < outChannels; ++m) {
              const double *values =
                  &wb[size_t(((kc * pixels + g) * outChannels + m) * block)];
              double sum = 0;
              for (int64_t e = 0; e < block; ++e)
                sum += a[size_t(e)] * values[e];
              float &accumulator = acc[size_t(g * outChannels + m)];
              accumulator = accumulate(accumulator, sum);
            }
        }
        for (int64_t g = 0; g < pixels; ++g)
          for (int64_t m = 0; m < outChannels; ++m)
            out[size_t(((n * outChannels + m) * outH + oh) * outW + b * pixels +
                       g)] = acc[size_t(g * outChannels + m)];
      }
  context.setOutput(0, fromDoubles(out, {batches, outChannels, outH, outW}));
  return Status::success();
}

namespace {

/// C[r, n] = start(r, n) + sum over k of A(r, k) B(k, n), blocked.
template <typename A, typename B, typename Start>
void blockedProduct(int64_t rows, int64_t depth, int64_t columns, int64_t block,
                    A a, B b, Start start, double *c) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t n = 0; n < columns; ++n) {
      float accumulator = start(r, n);
      for (int64_t k = 0; k < depth; k += block) {
        double sum = 0;
        for (int64_t i = k; i < std::min(depth, k + block); ++i)
          sum += a(r, i) * b(i, n);
        accumulator = accumulate(accumulator, sum);
      }
      c[r * columns + n] = accumulator;
    }
}

} // namespace

Status reference::blockedGemm(KernelContext &context, int64_t block,
                              bool alphaInB) {
  const Value *av = context.input(0), *bv = context.input(1);
  const Value *cv = context.numInputs() > 2 ? context.input(2) : nullptr;
  if (!av || !bv || !av->isTensor() || !bv->isTensor() ||
      av->tensor.rank() != 2 || bv->tensor.rank() != 2 || block < 1)
    return opError(context, "needs A and B of rank 2");
  bool transA = context.getInt("transA", 0),
       transB = context.getInt("transB", 0);
  double alpha = alphaInB ? 1.0 : context.getFloat("alpha", 1.0f);
  double beta = context.getFloat("beta", 1.0f);
  const std::vector<int64_t> &as = av->tensor.shape(), &bs = bv->tensor.shape();
  int64_t rows = transA ? as[1] : as[0], depth = transA ? as[0] : as[1];
  int64_t columns = transB ? bs[0] : bs[1];
  if ((transB ? bs[1] : bs[0]) != depth)
    return opError(context, "A and B do not agree on K");
  std::vector<double> a = asDoubles(av->tensor), b = asDoubles(bv->tensor), c;
  std::vector<int64_t> cStrides = {0, 0};
  if (cv && cv->isTensor() && beta != 0) {
    c = asDoubles(cv->tensor);
    cStrides = broadcastStrides(cv->tensor.shape(), {rows, columns});
  }
  std::vector<double> out(rows * columns);
  blockedProduct(
      rows, depth, columns, block,
      [&](int64_t r, int64_t k) {
        return alpha * (transA ? a[k * rows + r] : a[r * depth + k]);
      },
      [&](int64_t k, int64_t n) {
        return transB ? b[n * depth + k] : b[k * columns + n];
      },
      [&](int64_t r, int64_t n) {
        return c.empty() ? 0.0f
                         : float(beta * c[r * cStrides[0] + n * cStrides[1]]);
      },
      out.data());
  context.setOutput(0, fromDoubles(out, {rows, columns}));
  return Status::success();
}

Status reference::blockedMatMul(KernelContext &context, int64_t block) {
  const Value *av = context.input(0), *bv = context.input(1);
  if (!av || !bv || !av->isTensor() || !bv->isTensor() || block < 1 ||
      av->tensor.rank() < 1 || bv->tensor.rank() < 1)
    return opError(context, "needs A and B");
  std::vector<int64_t> as = av->tensor.shape(), bs = bv->tensor.shape();
  bool vectorA = as.size() == 1, vectorB = bs.size() == 1;
  if (vectorA)
    as.insert(as.begin(), 1);
  if (vectorB)
    bs.push_back(1);
  int64_t rows = as[as.size() - 2], depth = as.back(), columns = bs.back();
  if (bs[bs.size() - 2] != depth)
    return opError(context, "A and B do not agree on K");
  std::vector<int64_t> aBatch(as.begin(), as.end() - 2),
      bBatch(bs.begin(), bs.end() - 2);
  std::optional<std::vector<int64_t>> batch = broadcastShapes({aBatch, bBatch});
  if (!batch)
    return opError(context, "the batch dimensions do not broadcast");
  std::vector<int64_t> aStrides = broadcastStrides(aBatch, *batch),
                       bStrides = broadcastStrides(bBatch, *batch);
  int64_t batches = 1;
  for (int64_t d : *batch)
    batches *= d;
  std::vector<double> a = asDoubles(av->tensor), b = asDoubles(bv->tensor);
  std::vector<double> out(batches * rows * columns);
  for (int64_t i = 0; i < batches; ++i) {
    int64_t aOffset = 0, bOffset = 0, rest = i;
    for (int64_t d = int64_t(batch->size()) - 1; d >= 0; --d) {
      int64_t index = rest % (*batch)[d];
      rest /= (*batch)[d];
      aOffset += index * aStrides[d];
      bOffset += index * bStrides[d];
    }
    const double *ap = &a[aOffset * rows * depth];
    const double *bp = &b[bOffset * depth * columns];
    blockedProduct(
        rows, depth, columns, block,
        [&](int64_t r, int64_t k) { return ap[r * depth + k]; },
        [&](int64_t k, int64_t n) { return bp[k * columns + n]; },
        [](int64_t, int64_t) { return 0.0f; }, &out[i * rows * columns]);
  }
  std::vector<int64_t> shape = *batch;
  if (!vectorA)
    shape.push_back(rows);
  if (!vectorB)
    shape.push_back(columns);
  context.setOutput(0, fromDoubles(out, shape));
  return Status::success();
}
