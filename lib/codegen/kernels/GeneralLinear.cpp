//===- GeneralLinear.cpp - Gemm, MatMul and Conv element by element -------===//
//
// Each output is a chain of vector multiply-adds (fvfma, one single per
// cycle) over its taps; the list scheduler interleaves the chains of
// different outputs, so with a dozen outputs in flight the MAU issues four
// multiply-adds a step despite its 10-cycle latency. The two factors and
// the accumulator of an fvfma must lie in three different memories (one
// read port each, and an LM accumulator is written where it is read), so
// each operator tries a few placements, the first that fits winning:
//
//   1. the large factor in LM0, the other in GRF0, the output in LM1;
//   2. the other way round;
//   3. both factors in LM, the accumulators densely in GRF0, copied to
//      the output image at the end.
//
//===----------------------------------------------------------------------===//

#include "GeneralLowering.h"

#include <algorithm>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::general;

namespace {

constexpr auto LM0 = PeMemory::LM0;
constexpr auto LM1 = PeMemory::LM1;
constexpr auto GRF0 = PeMemory::GRF0;
constexpr auto GRF1 = PeMemory::GRF1;

/// Where the factors and the accumulators went.
struct ProductPlacement {
  const PeImage *a = nullptr, *b = nullptr, *out = nullptr;
  /// Dense accumulators (option 3), or none: accumulate in the output.
  std::optional<Slot> accumulators;
};

/// Places inputs `ia` and `ib` and output 0 by the first option that fits
/// (see the file comment); the bias (input `ic`, if any) goes wherever
/// there is room. `accWords` is the number of outputs.
bool placeProduct(Lowering &l, size_t ia, size_t ib, int32_t accWords,
                  ProductPlacement &place) {
  int32_t aWords = l.inputWords(ia), bWords = l.inputWords(ib),
          outWords = l.outputWords(0);
  if (l.fits({{LM0, aWords}, {GRF0, bWords}, {LM1, outWords}})) {
    place.a = l.placeInput(ia, {LM0});
    place.b = l.placeInput(ib, {GRF0});
    place.out = l.placeOutput(0, {LM1});
  } else if (l.fits({{GRF0, aWords}, {LM0, bWords}, {LM1, outWords}})) {
    place.a = l.placeInput(ia, {GRF0});
    place.b = l.placeInput(ib, {LM0});
    place.out = l.placeOutput(0, {LM1});
  } else if (l.fits({{LM0, aWords},
                     {LM1, bWords},
                     {GRF0, accWords * l.elementWords()}}) &&
             (l.fits({{LM0, aWords + outWords}, {LM1, bWords}}) ||
              l.fits({{LM0, aWords}, {LM1, bWords + outWords}}))) {
    place.a = l.placeInput(ia, {LM0});
    place.b = l.placeInput(ib, {LM1});
    place.accumulators = l.allocate({GRF0}, accWords * l.elementWords());
    place.out = l.placeOutput(0, {LM0, LM1});
  } else {
    return l.fail("the factors (" + std::to_string(aWords) + " and " +
                  std::to_string(bWords) + " words) and the result (" +
                  std::to_string(outWords) +
                  " words) do not fit one PE's memories");
  }
  return place.a && place.b && place.out;
}

/// One output: dst = sum over taps of a * b (+ the bias, first).
void chain(ElemProgram &p, Slot dst,
           const std::vector<std::pair<Slot, Slot>> &taps,
           std::optional<Slot> bias) {
  size_t first = 0;
  if (bias) {
    p.copy(dst, *bias);
  } else if (taps.empty()) {
    p.zero(dst);
    return;
  } else {
    p.mul(dst, taps[0].first, taps[0].second);
    first = 1;
  }
  for (size_t k = first; k < taps.size(); ++k)
    p.fma(dst, taps[k].first, taps[k].second, dst);
}

Slot at(const PeImage &image, const std::vector<int64_t> &index) {
  return {image.memory, image.wordOf(index)};
}

//===----------------------------------------------------------------------===//
// Gemm
//===----------------------------------------------------------------------===//

bool lowerGemm(Lowering &l) {
  const KernelRequest &r = l.request();
  if (r.inputs.size() < 2 || r.inputs.size() > 3 || r.outputs.size() != 1)
    return l.fail("Gemm takes two or three inputs and one output");
  const DramForm &fa = r.inputs[0].form, &fb = r.inputs[1].form,
                 &fy = r.outputs[0].form;
  if (fa.shape.size() != 2 || fb.shape.size() != 2 || fy.shape.size() != 2)
    return l.fail("Gemm needs matrices");
  bool transA = r.getInt("transA", 0) != 0, transB = r.getInt("transB", 0) != 0;
  float alpha = r.getFloat("alpha", 1), beta = r.getFloat("beta", 1);
  int64_t m = transA ? fa.shape[1] : fa.shape[0];
  int64_t k = transA ? fa.shape[0] : fa.shape[1];
  int64_t kb = transB ? fb.shape[1] : fb.shape[0];
  int64_t n = transB ? fb.shape[0] : fb.shape[1];
  if (k != kb || fy.shape != std::vector<int64_t>{m, n})
    return l.fail("Gemm shapes do not agree");
  bool hasC = r.hasInput(2) && beta != 0;
  if (hasC) {
    const std::vector<int64_t> &cs = r.inputs[2].form.shape;
    if (cs.size() > 2 || (cs.size() >= 1 && cs.back() != 1 && cs.back() != n) ||
        (cs.size() == 2 && cs[0] != 1 && cs[0] != m))
      return l.fail("C " + shapeText(cs) + " does not broadcast to " +
                    shapeText(fy.shape));
  }
  ProductPlacement place;
  if (!placeProduct(l, 0, 1, int32_t(m * n), place))
    return false;
  const PeImage *c = nullptr;
  if (hasC && !(c = l.placeInput(2, {GRF0, LM0, LM1, GRF1})))
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      Slot dst = place.accumulators ? l.element(*place.accumulators, i * n + j)
                                    : at(*place.out, {i, j});
      std::vector<std::pair<Slot, Slot>> taps;
      for (int64_t t = 0; t < k; ++t)
        taps.push_back({at(*place.a, transA ? std::vector<int64_t>{t, i}
                                            : std::vector<int64_t>{i, t}),
                        at(*place.b, transB ? std::vector<int64_t>{j, t}
                                            : std::vector<int64_t>{t, j})});
      chain(p, dst, taps, std::nullopt);
      if (alpha != 1)
        p.mul(dst, dst, p.constant(alpha));
      if (c) {
        Slot cs = at(*c, broadcastIndex({i, j}, c->form.shape));
        if (beta == 1)
          p.add(dst, dst, cs);
        else
          p.fma(dst, cs, p.constant(beta), dst);
      }
      if (place.accumulators)
        p.copy(at(*place.out, {i, j}), dst);
    }
  return true;
}

//===----------------------------------------------------------------------===//
// MatMul (numpy semantics: batch broadcasting, 1-D operands)
//===----------------------------------------------------------------------===//

bool lowerMatMul(Lowering &l) {
  const KernelRequest &r = l.request();
  if (r.inputs.size() != 2 || r.outputs.size() != 1)
    return l.fail("MatMul takes two inputs and one output");
  const std::vector<int64_t> &as = r.inputs[0].form.shape,
                             &bs = r.inputs[1].form.shape,
                             &ys = r.outputs[0].form.shape;
  if (as.empty() || bs.empty())
    return l.fail("MatMul needs operands of rank 1 or more");
  bool aVector = as.size() == 1, bVector = bs.size() == 1;
  int64_t k = as.back();
  int64_t kb = bVector ? bs[0] : bs[bs.size() - 2];
  if (k != kb)
    return l.fail("MatMul's inner dimensions differ");
  std::vector<int64_t> aBatch(as.begin(), as.end() - (aVector ? 1 : 2));
  std::vector<int64_t> bBatch(bs.begin(), bs.end() - (bVector ? 1 : 2));
  size_t batchRank = std::max(aBatch.size(), bBatch.size());
  std::vector<int64_t> expected(batchRank, 1);
  for (size_t d = 0; d < batchRank; ++d) {
    auto extent = [&](const std::vector<int64_t> &b) -> int64_t {
      size_t offset = batchRank - b.size();
      return d < offset ? 1 : b[d - offset];
    };
    int64_t ea = extent(aBatch), eb = extent(bBatch);
    if (ea != eb && ea != 1 && eb != 1)
      return l.fail("MatMul's batch dimensions do not broadcast");
    expected[d] = std::max(ea, eb);
  }
  int64_t m = aVector ? 1 : as[as.size() - 2];
  int64_t n = bVector ? 1 : bs.back();
  if (!aVector)
    expected.push_back(m);
  if (!bVector)
    expected.push_back(n);
  if (expected != ys)
    return l.fail("the output shape " + shapeText(ys) + " is not MatMul's " +
                  shapeText(expected));
  ProductPlacement place;
  if (!placeProduct(l, 0, 1, int32_t(elementCount(ys)), place))
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  int32_t position = 0;
  forEachIndex(ys, [&](const std::vector<int64_t> &index) {
    std::vector<int64_t> batch(index.begin(), index.begin() + batchRank);
    int64_t i = aVector ? 0 : index[batchRank];
    int64_t j = bVector ? 0 : index.back();
    std::vector<int64_t> ai = broadcastIndex(batch, aBatch);
    std::vector<int64_t> bi = broadcastIndex(batch, bBatch);
    std::vector<std::pair<Slot, Slot>> taps;
    for (int64_t t = 0; t < k; ++t) {
      std::vector<int64_t> ia = ai, ib = bi;
      if (!aVector)
        ia.push_back(i);
      ia.push_back(t);
      ib.push_back(t);
      if (!bVector)
        ib.push_back(j);
      taps.push_back({at(*place.a, ia), at(*place.b, ib)});
    }
    Slot dst = place.accumulators ? l.element(*place.accumulators, position)
                                  : at(*place.out, index);
    chain(p, dst, taps, std::nullopt);
    if (place.accumulators)
      p.copy(at(*place.out, index), dst);
    ++position;
  });
  return true;
}

//===----------------------------------------------------------------------===//
// Conv (1-D to 3-D, every attribute, groups)
//===----------------------------------------------------------------------===//

bool lowerConv(Lowering &l) {
  const KernelRequest &r = l.request();
  if (r.inputs.size() < 2 || r.inputs.size() > 3 || r.outputs.size() != 1)
    return l.fail("Conv takes two or three inputs and one output");
  const std::vector<int64_t> &xs = r.inputs[0].form.shape,
                             &ws = r.inputs[1].form.shape,
                             &ys = r.outputs[0].form.shape;
  if (xs.size() < 3 || xs.size() > 5 || ws.size() != xs.size())
    return l.fail("Conv needs 1 to 3 spatial dimensions");
  int64_t group = r.getInt("group", 1);
  int64_t channels = xs[1], filters = ws[0];
  if (group < 1 || channels % group || filters % group ||
      ws[1] != channels / group)
    return l.fail("Conv's group " + std::to_string(group) +
                  " does not divide the channels");
  std::vector<int64_t> spatial(xs.begin() + 2, xs.end());
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  Window w;
  if (!resolveWindow(l, spatial, kernel, false, w))
    return false;
  std::vector<int64_t> expected = {xs[0], filters};
  expected.insert(expected.end(), w.out.begin(), w.out.end());
  if (expected != ys)
    return l.fail("the output shape " + shapeText(ys) + " is not Conv's " +
                  shapeText(expected));
  bool hasBias = r.hasInput(2);
  if (hasBias && r.inputs[2].form.shape != std::vector<int64_t>{filters})
    return l.fail("Conv's bias is an [M] vector");
  ProductPlacement place;
  if (!placeProduct(l, 0, 1, int32_t(elementCount(ys)), place))
    return false;
  const PeImage *bias = nullptr;
  if (hasBias && !(bias = l.placeInput(2, {GRF1, GRF0, LM0, LM1})))
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  size_t rank = w.rank();
  int64_t perGroupIn = channels / group, perGroupOut = filters / group;
  int32_t position = 0;
  forEachIndex(ys, [&](const std::vector<int64_t> &index) {
    int64_t batch = index[0], filter = index[1];
    int64_t firstChannel = filter / perGroupOut * perGroupIn;
    std::vector<std::pair<Slot, Slot>> taps;
    std::vector<int64_t> xi(2 + rank), wi(2 + rank);
    xi[0] = batch;
    wi[0] = filter;
    for (int64_t c = 0; c < perGroupIn; ++c) {
      xi[1] = firstChannel + c;
      wi[1] = c;
      forEachIndex(w.kernel, [&](const std::vector<int64_t> &tap) {
        for (size_t d = 0; d < rank; ++d) {
          int64_t i = index[2 + d] * w.stride[d] - w.padBegin[d] +
                      tap[d] * w.dilation[d];
          if (i < 0 || i >= w.in[d])
            return;
          xi[2 + d] = i;
          wi[2 + d] = tap[d];
        }
        taps.push_back({at(*place.a, xi), at(*place.b, wi)});
      });
    }
    Slot dst = place.accumulators ? l.element(*place.accumulators, position)
                                  : at(*place.out, index);
    std::optional<Slot> b;
    if (bias)
      b = at(*bias, {filter});
    chain(p, dst, taps, b);
    if (place.accumulators)
      p.copy(at(*place.out, index), dst);
    ++position;
  });
  return true;
}

struct LinearOp {
  const char *opType;
  LoweringFn lower;
};

const LinearOp kLinearOps[] = {
    {"Gemm", lowerGemm},
    {"MatMul", lowerMatMul},
    {"Conv", lowerConv},
};

} // namespace

LoweringFn general::findLinearLowering(const std::string &opType) {
  for (const LinearOp &op : kLinearOps)
    if (opType == op.opType)
      return op.lower;
  return nullptr;
}
