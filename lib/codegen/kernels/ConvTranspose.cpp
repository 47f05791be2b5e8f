//===- ConvTranspose.cpp - 2-D transposed convolutions on the matrix unit -===//
//
// A transposed convolution is the engine's product (GemmEngine.h) over
// output pixels, as the conv kernel's: with X and Y in NHWC, output pixel
// (oh, ow) is a row of Y, and its A row holds, for each tap (kh, kw), the
// channel quads of the input pixel the tap gathers from
// (ConvTransposeShape.h: (o + padBegin - k * dilation) / stride where that
// divides and lies in X) or a quad of zeros. So the zeros a strided
// ConvTranspose inserts between input pixels are never stored: they are
// zero quads of the im2col image. W, a constant [C, M / group, kH, kW],
// becomes B over K = taps x C: B[(tap, c)][m] = W[c, m - g M / group, kh,
// kw] for c in output channel m's group g, else 0, packed by the host.
//
// With stride s along both axes only 1 / s^2 of the taps of a row hold
// data, and the product still spends its steps on the zero quads: the
// cost of one plan for every row (the rows of one output phase are not
// contiguous in Y).
//
//===----------------------------------------------------------------------===//

#include "ConvTransposeShape.h"
#include "GemmEngine.h"
#include "ActivationSpread.h"
#include "Generators.h"

#include <algorithm>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::gemm;

namespace {

const std::vector<unsigned> kNhwc = {0, 2, 3, 1};

struct Problem {
  DeviceType type = DeviceType::Half;
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t m = 0, kh = 0, kw = 0, group = 1;
  int64_t oh = 0, ow = 0;
  Scatter scatter;
  const KernelTensor *x = nullptr;
  const KernelTensor *weights = nullptr;
  const KernelTensor *bias = nullptr;
};

bool analyse(const KernelRequest &r, Problem &p, std::string &whyNot) {
  if (r.inputs.size() < 2 || r.inputs.size() > 3 || r.outputs.size() != 1 ||
      !r.hasInput(0) || !r.hasInput(1)) {
    whyNot = "expects X, W, an optional B and one output";
    return false;
  }
  p.x = &r.inputs[0];
  p.weights = &r.inputs[1];
  p.bias = r.hasInput(2) ? &r.inputs[2] : nullptr;
  p.type = p.x->form.type;
  const DramForm &y = r.outputs[0].form;
  if (p.type != DeviceType::Half && p.type != DeviceType::Single &&
      p.type != DeviceType::Double) {
    whyNot = "a floating format";
    return false;
  }
  if (p.weights->form.type != p.type || y.type != p.type ||
      (p.bias && p.bias->form.type != p.type)) {
    whyNot = "X, W, B and Y of one format";
    return false;
  }
  if (!p.weights->constant) {
    whyNot = "W must be a constant (the resample kernel takes small ones "
             "read at run time)";
    return false;
  }
  const std::vector<int64_t> &xs = p.x->form.shape, &ws = p.weights->form.shape;
  if (xs.size() != 4 || ws.size() != 4 || y.shape.size() != 4) {
    whyNot = "2-D transposed convolutions only";
    return false;
  }
  if (p.x->form.order != kNhwc || y.order != kNhwc) {
    whyNot = "X and Y in NHWC";
    return false;
  }
  p.n = xs[0];
  p.c = xs[1];
  p.h = xs[2];
  p.w = xs[3];
  p.kh = ws[2];
  p.kw = ws[3];
  p.group = r.getInt("group", 1);
  if (p.group < 1 || p.c % p.group || ws[0] != p.c) {
    whyNot = "channels that do not split into the groups";
    return false;
  }
  p.m = ws[1] * p.group;
  if (!resolveScatter(r, xs, ws, p.scatter, whyNot))
    return false;
  p.oh = p.scatter.out[0];
  p.ow = p.scatter.out[1];
  if (y.shape != std::vector<int64_t>{p.n, p.m, p.oh, p.ow}) {
    whyNot = "an output shape ConvTranspose does not give";
    return false;
  }
  if (p.bias && p.bias->form.shape != std::vector<int64_t>{p.m}) {
    whyNot = "a bias of M elements";
    return false;
  }
  return true;
}

/// The gathered im2col rows of X: row r is output pixel r (NHWC order),
/// K-chunk kc is tap kc / cq, channel quad kc % cq.
class GatherA : public AOperand {
public:
  GatherA(const Problem &p, const MatrixUnit &unit) : P(p), Unit(unit) {
    Quads = ceilDiv(p.c, unit.kChunk);
  }
  int64_t kChunks() const override { return P.kh * P.kw * Quads; }
  int64_t rowStride(int64_t kcWidth) const override { return kcWidth; }
  void image(int64_t first, int64_t count, int64_t kcBegin, int64_t kcWidth,
             AImage &image) const override {
    image.rowStride = kcWidth;
    image.kcSlot.clear();
    for (int64_t kc = kcBegin; kc < kcBegin + kcWidth; ++kc)
      image.kcSlot.push_back(kc - kcBegin);
    image.slots = count * kcWidth;
    image.quads.clear();
    int64_t pixels = P.n * P.oh * P.ow;
    int64_t kcEnd = std::min(kcBegin + kcWidth, kChunks());
    for (int64_t r = first; r < first + count; ++r) {
      int64_t n = r / (P.oh * P.ow), o = r % (P.oh * P.ow);
      int64_t oh = o / P.ow, ow = o % P.ow;
      for (int64_t kc = kcBegin; kc < kcEnd; ++kc) {
        ImageQuad q;
        int64_t tap = kc / Quads, quad = kc % Quads;
        int64_t ih = P.scatter.source(0, oh, tap / P.kw);
        int64_t iw = P.scatter.source(1, ow, tap % P.kw);
        if (r >= pixels)
          q.group = ImageQuad::kNoQuad;
        else if (ih < 0 || iw < 0)
          q.group = ImageQuad::kZeroQuad;
        else
          q = rowQuad(P.x->form, (n * P.h + ih) * P.w + iw, quad, Unit.kChunk);
        q.slot = (r - first) * kcWidth + (kc - kcBegin);
        image.quads.push_back(q);
      }
    }
  }

private:
  const Problem &P;
  const MatrixUnit &Unit;
  int64_t Quads;
};

/// W as B over K = (tap, channel), rounded once into the device format
/// and block-floated row by row.
class ScatterB : public BOperand {
public:
  ScatterB(const Problem &p, const MatrixUnit &unit) : P(p), Unit(unit) {
    Quads = ceilDiv(p.c, unit.kChunk);
  }
  void tile(int64_t, int64_t kc, const int64_t *columns,
            uint64_t *peLongWords) const override {
    const reference::Tensor &wt = *P.weights->constant;
    int64_t tap = kc / Quads, quad = kc % Quads;
    int64_t kh = tap / P.kw, kw = tap % P.kw;
    int64_t cPerGroup = P.c / P.group, mPerGroup = P.m / P.group;
    for (int i = 0; i < Unit.tilePeLongWords; ++i) {
      double values[16] = {};
      int64_t m = columns[i];
      for (int j = 0; j < Unit.kChunk && m >= 0; ++j) {
        int64_t c = quad * Unit.kChunk + j;
        int64_t g = m / mPerGroup;
        if (c >= P.c || c / cPerGroup != g)
          continue;
        int64_t index =
            ((c * mPerGroup + (m - g * mPerGroup)) * P.kh + kh) * P.kw + kw;
        values[j] = wt.elementAsDouble(index);
      }
      packTileRow(Unit, values, i, peLongWords);
    }
  }

private:
  const Problem &P;
  const MatrixUnit &Unit;
  int64_t Quads;
};

struct Built {
  Problem problem;
  std::unique_ptr<GatherA> a;
  std::unique_ptr<ScatterB> b;
  ProductSpec spec;
};

bool build(const KernelRequest &r, Built &built, std::string &error) {
  Problem &p = built.problem;
  if (!analyse(r, p, error))
    return false;
  const MatrixUnit &unit = matrixUnitFor(p.type);
  ProductSpec &s = built.spec;
  s.unit = &unit;
  s.outType = p.type;
  s.out = r.outputs[0].form;
  s.n = p.m;
  s.k = p.kh * p.kw * p.c;
  s.bBase = p.weights->form.base;
  s.subProblems.push_back({0, p.n * p.oh * p.ow, 0});
  if (p.bias) {
    s.bias.kind = p.m > 1 ? BiasSpec::Kind::Row : BiasSpec::Kind::Scalar;
    s.bias.form = p.bias->form;
    s.bias.constant = p.bias->constant;
  }
  built.a = std::make_unique<GatherA>(p, unit);
  s.a = built.a.get();
  built.b = std::make_unique<ScatterB>(p, unit);
  s.b = built.b.get();
  return true;
}

class ConvTransposeGenerator : public KernelGenerator {
public:
  const char *name() const override { return "convtranspose"; }

  bool matches(const KernelRequest &request,
               std::string &whyNot) const override {
    if (request.opType != "ConvTranspose")
      return false;
    // Judge the request in the orders preferredOrder asks for, as the
    // planner will give them.
    // The plan points into the request: keep it alive beside it.
    KernelRequest ordered = withPreferredOrders(request, *this);
    Built built;
    if (!build(ordered, built, whyNot))
      return false;
    BLayout layout;
    return planBLayout(built.spec, layout, whyNot);
  }

  std::vector<unsigned> preferredOrder(const KernelRequest &request,
                                       size_t operand) const override {
    if (operand == 0 || operand == request.inputs.size())
      return kNhwc;
    return {};
  }

  std::optional<int64_t> constantLongWords(const KernelRequest &request,
                                           size_t input) const override {
    if (input != 1 || !request.inputs[1].constant)
      return std::nullopt;
    Built built;
    std::string error;
    BLayout layout;
    if (!build(request, built, error) ||
        !planBLayout(built.spec, layout, error))
      return std::nullopt;
    return layout.imageLongWords;
  }

  bool packConstant(const KernelRequest &request, size_t input,
                    DramImage &image, std::string &error) const override {
    if (input != 1 || !request.inputs[1].constant) {
      error = "convtranspose packs only a constant W";
      return false;
    }
    Built built;
    BLayout layout;
    if (!build(request, built, error) ||
        !planBLayout(built.spec, layout, error))
      return false;
    packBImage(built.spec, layout, image);
    return true;
  }

  bool emit(const KernelRequest &request, VsmWriter &out,
            KernelDescription &description, std::string &error) const override {
    Built built;
    if (!build(request, built, error))
      return false;
    if (!emitProduct(built.spec, out, description, error))
      return false;
    description.generator = name();
    return true;
  }
};

std::unique_ptr<KernelGenerator> createConvTransposeGenerator() {
  return std::make_unique<ConvTransposeGenerator>();
}

} // namespace

// Below the resample kernel (10): a ConvTranspose that fits one PE is
// computed there with single-precision multiply-adds, where the matrix
// unit's pseudo-single products (docs/target/mncore2.md) miss ONNX's
// relative tolerance on outputs that nearly cancel
// (pytorch-converted/test_ConvTranspose2d_no_bias); the larger ones come
// here.
MNCC_KERNEL_GENERATOR(ConvTranspose, 5, createConvTransposeGenerator);
