//===- Conv.cpp - 2-D convolutions on the MAU's matrix unit ---------------===//
//
// A convolution is the engine's product (GemmEngine.h) over output pixels:
// with X and Y in NHWC, an output pixel is a row of Y, and its A row is the
// im2col row of X: for each tap (kh, kw) of the window, the input pixel's
// channel quads (a quad of zeros where the tap falls in the padding). The
// engine gathers those quads from the L1BM into LM0 slots, one slot per
// (pixel, tap, channel quad), so every row is linear and a MAB reads its
// own pixels through T. W, a constant, becomes B over K = taps x C: its
// tiles, packed by the host, hold W[m, c, kh, kw] at row m, column (tap, c)
// (zeros where c is not in m's group, so grouped and depthwise
// convolutions are the same product).
//
//===----------------------------------------------------------------------===//

#include "GemmEngine.h"
#include "ActivationSpread.h"
#include "ConvWindow.h"
#include "Generators.h"

#include "mncc/emu/Numerics.h"

#include <algorithm>
#include <cstring>
#include <numeric>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::gemm;

namespace {

const std::vector<unsigned> kNhwc = {0, 2, 3, 1};
/// X of a Conv over packed taps: a DRAM row is one channel of one image
/// row, W innermost.
const std::vector<unsigned> kNhcw = {0, 2, 1, 3};

/// A Conv over packed taps (docs/codegen.md X9): with X in N, H, C, W a
/// quad of a DRAM row holds kChunk neighbouring pixels of one channel, so
/// one quad read from the right long word holds a whole row of the
/// window's taps (and more: those of G neighbouring output pixels). A
/// compute row is G output pixels along W, a K-chunk (kh, c, q) the q-th
/// quad of channel c's window row kh from the long word holding the
/// group's first tap, and N is G x M (the pixel, then the channel: Y's
/// NHWC rows of G pixels are one row of C). G output pixels advance the
/// window by a whole number of long words, so every row's quads hold the
/// taps at the same elements (`phase` from the quad's start).
struct PackedTaps {
  int64_t pixels = 1; // G
  int64_t quads = 1;  // Q, per (kh, c)
  int64_t phase = 0;  // the first tap's element in its long word
  int64_t blocks = 0; // OW / G
};

struct ConvProblem {
  DeviceType type = DeviceType::Half;
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t m = 0, kh = 0, kw = 0, group = 1;
  int64_t oh = 0, ow = 0;
  int64_t strideH = 1, strideW = 1, dilH = 1, dilW = 1;
  int64_t padTop = 0, padLeft = 0;
  /// X in N, H, C, W and the taps packed (PackedTaps), else X in NHWC.
  bool packed = false;
  PackedTaps taps;
  const KernelTensor *x = nullptr;
  const KernelTensor *weights = nullptr;
  const KernelTensor *bias = nullptr;
};

bool analyse(const KernelRequest &r, ConvProblem &p, std::string &whyNot) {
  if (r.inputs.size() < 2 || r.outputs.size() != 1 || !r.hasInput(0) ||
      !r.hasInput(1)) {
    whyNot = "expects X, W and one output";
    return false;
  }
  p.x = &r.inputs[0];
  p.weights = &r.inputs[1];
  p.bias = r.hasInput(2) ? &r.inputs[2] : nullptr;
  p.type = p.x->form.type;
  if (p.type != DeviceType::Half && p.type != DeviceType::Single &&
      p.type != DeviceType::Double) {
    whyNot = "a floating format";
    return false;
  }
  const DramForm &y = r.outputs[0].form;
  if (p.weights->form.type != p.type || y.type != p.type ||
      (p.bias && p.bias->form.type != p.type)) {
    whyNot = "X, W, B and Y of one format";
    return false;
  }
  const std::vector<int64_t> &xs = p.x->form.shape, &ws = p.weights->form.shape;
  if (xs.size() != 4 || ws.size() != 4 || y.shape.size() != 4) {
    whyNot = "2-D convolutions only";
    return false;
  }
  if ((p.x->form.order != kNhwc && p.x->form.order != kNhcw) ||
      y.order != kNhwc) {
    whyNot = "X in NHWC (or N, H, C, W for few channels) and Y in NHWC";
    return false;
  }
  p.packed = p.x->form.order == kNhcw;
  p.n = xs[0];
  p.c = xs[1];
  p.h = xs[2];
  p.w = xs[3];
  p.m = ws[0];
  p.kh = ws[2];
  p.kw = ws[3];
  p.group = r.getInt("group", 1);
  if (p.group < 1 || p.c % p.group || p.m % p.group ||
      ws[1] != p.c / p.group) {
    whyNot = "channels that do not split into the groups";
    return false;
  }
  // W read at run time: its rows (m, kh, kw) hold the channels of one tap,
  // the quads of a K-chunk (X10); a group's channels would not start on a
  // quad.
  if (!p.weights->constant &&
      (p.group != 1 || p.weights->form.order != kNhwc)) {
    whyNot = "W read at run time with one group, in the order M, KH, KW, C";
    return false;
  }
  ConvWindow2d window;
  if (!convWindow2d(r, p.h, p.w, p.kh, p.kw, window, whyNot))
    return false;
  p.strideH = window.strideH;
  p.strideW = window.strideW;
  p.dilH = window.dilH;
  p.dilW = window.dilW;
  p.oh = window.oh;
  p.ow = window.ow;
  p.padTop = window.padTop;
  p.padLeft = window.padLeft;
  if (y.shape != std::vector<int64_t>{p.n, p.m, p.oh, p.ow}) {
    whyNot = "an output shape Conv does not give";
    return false;
  }
  if (p.bias && (p.bias->form.shape != std::vector<int64_t>{p.m})) {
    whyNot = "a bias of M elements";
    return false;
  }
  return true;
}

/// Whether the taps of a Conv pack (PackedTaps) and pay: a constant W, X's
/// channels less than a quad, M whole N-tiles (Y's rows of G pixels are
/// then C's rows without padding between them), OW a multiple of G. Per
/// output pixel the packed product takes C KH Q K-chunks times M's
/// N-tiles (whatever G) and C KH Q / G image slots, im2col's KH KW
/// ceil(C / kChunk) of both: of the G that keep the products at most
/// im2col's (Q grows with G's window) the one of the fewest slots, if
/// those are at most two thirds of im2col's.
constexpr int64_t kMaxPackedTiles = 16;

bool packedTaps(const ConvProblem &p, PackedTaps &taps) {
  const gemm::MatrixUnit &u = gemm::matrixUnitFor(p.type);
  if (!p.weights->constant || p.c >= u.kChunk || p.m % u.nTile != 0)
    return false;
  int64_t perLw = u.perLongWord;
  taps.phase = ((-p.padLeft) % perLw + perLw) % perLw;
  int64_t im2col = p.kh * p.kw * ceilDiv(p.c, u.kChunk);
  // G pixels advance the window by G strideW elements: whole long words.
  int64_t least = perLw / std::gcd<int64_t>(p.strideW, perLw);
  int64_t bestSlots = 0;
  taps.pixels = 0;
  for (int64_t g = least; g * p.m <= kMaxPackedTiles * u.nTile; g *= 2) {
    if (p.ow % g != 0)
      break;
    int64_t span = (g - 1) * p.strideW + (p.kw - 1) * p.dilW + 1;
    int64_t quads = ceilDiv(taps.phase + span, u.kChunk);
    int64_t kChunks = p.c * p.kh * quads; // slots per G pixels
    if (kChunks > im2col)
      break;
    if (taps.pixels == 0 || kChunks * taps.pixels < bestSlots * g) {
      taps.pixels = g;
      taps.quads = quads;
      bestSlots = kChunks;
    }
  }
  if (taps.pixels == 0)
    return false;
  taps.blocks = p.ow / taps.pixels;
  return 3 * bestSlots <= 2 * im2col * taps.pixels;
}

/// A Conv's plan key: its window's geometry, X's form and the unit, then
/// what the operand adds (AOperand::planKey).
std::string convPlanKey(const char *name, const ConvProblem &P,
                        const MatrixUnit &unit,
                        std::initializer_list<int64_t> extra) {
  std::string key = name;
  for (int64_t v : {P.n, P.c, P.h, P.w, P.m, P.kh, P.kw, P.group, P.oh, P.ow,
                    P.strideH, P.strideW, P.dilH, P.dilW, P.padTop, P.padLeft})
    appendPlanKey(key, v);
  for (int64_t v : extra)
    appendPlanKey(key, v);
  appendPlanKey(key, int64_t(unit.kChunk));
  appendPlanKey(key, P.x->form);
  return key;
}

/// An image of `count` compute rows of kcWidth K-chunks each, row after
/// row, K-chunk kc at slot kc - kcBegin of its row; no quads yet.
void startRowImage(AImage &image, int64_t count, int64_t kcBegin,
                   int64_t kcWidth) {
  image.rowStride = kcWidth;
  image.kcSlot.clear();
  for (int64_t kc = kcBegin; kc < kcBegin + kcWidth; ++kc)
    image.kcSlot.push_back(kc - kcBegin);
  image.slots = count * kcWidth;
  image.quads.clear();
}

/// The im2col rows of X: row r is output pixel r (NHWC order), K-chunk kc
/// is tap kc / cq, channel quad kc % cq.
class ConvA : public AOperand {
public:
  ConvA(const ConvProblem &p, const MatrixUnit &unit) : P(p), Unit(unit) {
    Quads = ceilDiv(p.c, unit.kChunk);
  }
  int64_t kChunks() const override { return P.kh * P.kw * Quads; }
  int64_t rowStride(int64_t kcWidth) const override { return kcWidth; }
  /// The window's geometry and X's form: all image() reads.
  std::string planKey() const override {
    return convPlanKey("conv", P, Unit, {});
  }
  int64_t imageSlots(int64_t count, int64_t kcWidth) const override {
    return count * kcWidth;
  }
  void image(int64_t first, int64_t count, int64_t kcBegin, int64_t kcWidth,
             AImage &image) const override {
    startRowImage(image, count, kcBegin, kcWidth);
    int64_t pixels = P.n * P.oh * P.ow;
    int64_t kcEnd = std::min(kcBegin + kcWidth, kChunks());
    image.quads.reserve(size_t(count * std::max<int64_t>(kcEnd - kcBegin, 0)));
    // Each K-chunk's tap offset and channel quad, worked out once.
    struct KChunk {
      int64_t dh, dw, quad;
    };
    std::vector<KChunk> kChunkAt;
    for (int64_t kc = kcBegin; kc < kcEnd; ++kc) {
      int64_t tap = kc / Quads;
      kChunkAt.push_back(
          {(tap / P.kw) * P.dilH, (tap % P.kw) * P.dilW, kc % Quads});
    }
    RowQuads xQuad(P.x->form, Unit.kChunk);
    for (int64_t r = first; r < first + count; ++r) {
      int64_t n = r / (P.oh * P.ow), o = r % (P.oh * P.ow);
      int64_t ih0 = (o / P.ow) * P.strideH - P.padTop;
      int64_t iw0 = (o % P.ow) * P.strideW - P.padLeft;
      int64_t slot = (r - first) * kcWidth;
      for (const KChunk &k : kChunkAt) {
        ImageQuad q;
        int64_t ih = ih0 + k.dh, iw = iw0 + k.dw;
        if (r >= pixels) {
          q.group = ImageQuad::kNoQuad;
        } else if (ih < 0 || ih >= P.h || iw < 0 || iw >= P.w) {
          q.group = ImageQuad::kZeroQuad;
        } else {
          q = xQuad((n * P.h + ih) * P.w + iw, k.quad);
        }
        q.slot = slot++;
        image.quads.push_back(q);
      }
    }
  }

private:
  const ConvProblem &P;
  const MatrixUnit &Unit;
  int64_t Quads;
};

/// W as B over K = (tap, channel): B[(tap, c)][m] = W[m, c - g C/G, kh, kw]
/// for c in output channel m's group g, else 0; rounded once into the
/// device format and block-floated row by row.
class ConvB : public BOperand {
public:
  ConvB(const ConvProblem &p, const MatrixUnit &unit) : P(p), Unit(unit) {
    Quads = ceilDiv(p.c, unit.kChunk);
  }
  void tile(int64_t, int64_t kc, const int64_t *columns,
            uint64_t *peLongWords) const override {
    const reference::Tensor &wt = *P.weights->constant;
    int kwid = Unit.kChunk;
    int rows = Unit.tilePeLongWords;
    int64_t tap = kc / Quads, quad = kc % Quads;
    int64_t kh = tap / P.kw, kw = tap % P.kw;
    int64_t cPerGroup = P.c / P.group, mPerGroup = P.m / P.group;
    for (int i = 0; i < rows; ++i) {
      double values[16] = {};
      int64_t m = columns[i];
      for (int j = 0; j < kwid && m >= 0; ++j) {
        int64_t c = quad * kwid + j;
        int64_t g = m / mPerGroup;
        if (c >= P.c || c / cPerGroup != g)
          continue;
        int64_t index = ((m * cPerGroup + (c - g * cPerGroup)) * P.kh + kh) *
                            P.kw +
                        kw;
        values[j] = wt.elementAsDouble(index);
      }
      packTileRow(Unit, values, i, peLongWords);
    }
  }

private:
  const ConvProblem &P;
  const MatrixUnit &Unit;
  int64_t Quads;
};

/// W read at run time, in DRAM order [M, KH, KW, C]: matrix row m of the
/// tile of K-chunk (tap, channel quad) is quad `channel quad` of W's DRAM
/// row (m, tap).
class ConvDeviceB : public DeviceBOperand {
public:
  ConvDeviceB(const ConvProblem &p, const MatrixUnit &unit) : P(p), Unit(unit) {
    Quads = ceilDiv(p.c, unit.kChunk);
  }
  bool kRows() const override { return false; }
  ImageQuad quad(int64_t, int64_t row, int64_t quad) const override {
    int64_t taps = P.kh * P.kw;
    int64_t tap = quad / Quads;
    if (row >= P.m || tap >= taps) {
      ImageQuad zero;
      zero.group = ImageQuad::kZeroQuad;
      return zero;
    }
    return rowQuad(P.weights->form, row * taps + tap, quad % Quads,
                   Unit.kChunk);
  }
  double alpha() const override { return 1; }

private:
  const ConvProblem &P;
  const MatrixUnit &Unit;
  int64_t Quads;
};

/// The rows of a Conv over packed taps: compute row r is output pixels
/// [G b, G b + G) of image row (n, oh), K-chunk kc is (kh, c, q) with kc =
/// (kh C + c) Q + q: the quad of X's DRAM row (n, ih, c) from long word
/// floor((G b strideW - padLeft) / perLongWord) + 4 q. Long words before
/// the row (the left padding) come by a shifted quad of the row's start
/// (ImageQuad::shift), elements past W are cleared as padding.
class ConvPackedA : public AOperand {
public:
  ConvPackedA(const ConvProblem &p, const MatrixUnit &unit)
      : P(p), Unit(unit) {}
  int64_t kChunks() const override { return P.kh * P.c * P.taps.quads; }
  int64_t rowStride(int64_t kcWidth) const override { return kcWidth; }
  std::string planKey() const override {
    return convPlanKey("conv-packed", P, Unit,
                       {P.taps.pixels, P.taps.quads});
  }
  int64_t imageSlots(int64_t count, int64_t kcWidth) const override {
    return count * kcWidth;
  }
  void image(int64_t first, int64_t count, int64_t kcBegin, int64_t kcWidth,
             AImage &image) const override {
    startRowImage(image, count, kcBegin, kcWidth);
    int64_t kcEnd = std::min(kcBegin + kcWidth, kChunks());
    image.quads.reserve(size_t(count * std::max<int64_t>(kcEnd - kcBegin, 0)));
    const DramForm &x = P.x->form;
    int64_t perLw = Unit.perLongWord;
    int64_t rowLw = x.rowLongWords(), blockRows = x.rowsPerGroup();
    int64_t rows = P.n * P.oh * P.taps.blocks;
    for (int64_t r = first; r < first + count; ++r) {
      int64_t n = r / (P.oh * P.taps.blocks), o = r % (P.oh * P.taps.blocks);
      int64_t oh = o / P.taps.blocks, b = o % P.taps.blocks;
      // The long word holding the group's first tap, from the row's start.
      int64_t start = b * P.taps.pixels * P.strideW - P.padLeft;
      int64_t firstLw = (start - P.taps.phase) / perLw;
      int64_t slot = (r - first) * kcWidth;
      for (int64_t kc = kcBegin; kc < kcEnd; ++kc) {
        int64_t kh = kc / (P.c * P.taps.quads);
        int64_t c = kc / P.taps.quads % P.c, q = kc % P.taps.quads;
        int64_t ih = oh * P.strideH - P.padTop + kh * P.dilH;
        int64_t lw = firstLw + q * kQuadLongWords;
        ImageQuad quad;
        quad.group = ImageQuad::kZeroQuad;
        if (r >= rows) {
          quad.group = ImageQuad::kNoQuad;
        } else if (ih >= 0 && ih < P.h && lw > -kQuadLongWords &&
                   lw * perLw < P.w) {
          int64_t row = (n * P.h + ih) * P.c + c;
          int64_t group = row / std::max<int64_t>(blockRows, 1);
          int shift = int(std::max<int64_t>(0, -lw));
          quad.group = int(group);
          quad.address =
              x.base + (row - group * blockRows) * rowLw + lw + shift;
          quad.shift = shift;
          quad.valid =
              int(std::clamp<int64_t>(P.w - lw * perLw, 0, Unit.kChunk));
        }
        quad.slot = slot++;
        image.quads.push_back(quad);
      }
    }
  }

private:
  const ConvProblem &P;
  const MatrixUnit &Unit;
};

/// W over packed taps: the tile of K-chunk (kh, c, q) has, in the matrix
/// row of output column (pixel g, channel m), W[m, c, kh, kw] at element
/// phase + g strideW + kw dilW - 16 q (when that is in the quad), zeros
/// elsewhere and where c is not in m's group.
class ConvPackedB : public BOperand {
public:
  ConvPackedB(const ConvProblem &p, const MatrixUnit &unit)
      : P(p), Unit(unit) {}
  void tile(int64_t, int64_t kc, const int64_t *columns,
            uint64_t *peLongWords) const override {
    const reference::Tensor &wt = *P.weights->constant;
    int kwid = Unit.kChunk;
    int64_t kh = kc / (P.c * P.taps.quads);
    int64_t c = kc / P.taps.quads % P.c, q = kc % P.taps.quads;
    int64_t cPerGroup = P.c / P.group, mPerGroup = P.m / P.group;
    for (int i = 0; i < Unit.tilePeLongWords; ++i) {
      double values[16] = {};
      int64_t column = columns[i];
      int64_t g = column / P.m, m = column % P.m;
      int64_t mGroup = m / mPerGroup;
      if (column >= 0 && c / cPerGroup == mGroup)
        for (int j = 0; j < kwid; ++j) {
          int64_t offset =
              q * kwid + j - P.taps.phase - g * P.strideW; // kw dilW
          if (offset < 0 || offset % P.dilW != 0 || offset / P.dilW >= P.kw)
            continue;
          int64_t index =
              ((m * cPerGroup + (c - mGroup * cPerGroup)) * P.kh + kh) * P.kw +
              offset / P.dilW;
          values[j] = wt.elementAsDouble(index);
        }
      packTileRow(Unit, values, i, peLongWords);
    }
  }

private:
  const ConvProblem &P;
  const MatrixUnit &Unit;
};

struct Built {
  ConvProblem problem;
  std::unique_ptr<ConvA> a;
  std::unique_ptr<ConvPackedA> packedA;
  std::unique_ptr<ConvPackedB> packedB;
  std::unique_ptr<ConvB> b;
  std::unique_ptr<ConvDeviceB> deviceB;
  ProductSpec spec;
};

bool build(const KernelRequest &r, Built &built, std::string &error) {
  ConvProblem &p = built.problem;
  if (!analyse(r, p, error))
    return false;
  const MatrixUnit &unit = matrixUnitFor(p.type);
  ProductSpec &s = built.spec;
  s.unit = &unit;
  s.outType = p.type;
  s.out = r.outputs[0].form;
  s.activation = r.activation;
  if (p.packed) {
    if (!packedTaps(p, p.taps)) {
      error = "X in N, H, C, W for a Conv whose taps do not pack";
      return false;
    }
    // C: Y's NHWC rows, G pixels a row: the same DRAM bytes and groups,
    // both split images or, at batch 1, the rows of OH (4-D, as Y).
    DramForm &out = s.out;
    out.shape = {p.n, p.oh, p.taps.blocks, p.taps.pixels * p.m};
    out.order = {0, 1, 2, 3};
    s.n = p.taps.pixels * p.m;
    s.k = p.kh * p.c * p.taps.quads * unit.kChunk;
    s.bBase = p.weights->form.base;
    s.subProblems.push_back({0, out.rows(), 0});
    if (p.bias) {
      s.bias.kind = BiasSpec::Kind::Row;
      s.bias.form = p.bias->form;
      s.bias.constant = p.bias->constant;
      s.bias.rowPeriodQuads = p.m / unit.nTile;
    }
    built.packedA = std::make_unique<ConvPackedA>(p, unit);
    s.a = built.packedA.get();
    built.packedB = std::make_unique<ConvPackedB>(p, unit);
    s.b = built.packedB.get();
    return true;
  }
  s.n = p.m;
  s.k = p.kh * p.kw * p.c;
  s.bBase = p.weights->form.base;
  s.subProblems.push_back({0, p.n * p.oh * p.ow, 0});
  if (p.bias) {
    s.bias.kind = p.m > 1 ? BiasSpec::Kind::Row : BiasSpec::Kind::Scalar;
    s.bias.form = p.bias->form;
    s.bias.constant = p.bias->constant;
  }
  built.a = std::make_unique<ConvA>(p, unit);
  s.a = built.a.get();
  if (p.weights->constant) {
    built.b = std::make_unique<ConvB>(p, unit);
    s.b = built.b.get();
  } else {
    built.deviceB = std::make_unique<ConvDeviceB>(p, unit);
    s.deviceB = built.deviceB.get();
  }
  return true;
}

/// Whether the request's X should be in N, H, C, W for packed taps: they
/// pack (PackedTaps), and the engine's estimate of the packed product is
/// below the im2col product's. The slots alone do not say: MobileNetV2's
/// first convolution has a quarter of im2col's slots per pixel, but
/// im2col's L1Bs each load their own rows (NHWC rows move by whole MV
/// units per output row there) where the packed images are shared, and
/// packed it took 9133 steps against 6879.
bool packs(const KernelRequest &request) {
  if (request.inputs.empty() || request.outputs.size() != 1 ||
      request.inputs[0].form.shape.size() != 4 ||
      request.outputs[0].form.shape.size() != 4)
    return false;
  KernelRequest packedRequest = request, im2colRequest = request;
  packedRequest.inputs[0].form.order = kNhcw;
  im2colRequest.inputs[0].form.order = kNhwc;
  for (KernelRequest *r : {&packedRequest, &im2colRequest})
    r->outputs[0].form.order = kNhwc;
  Built packed, im2col;
  std::string whyNot;
  double packedCycles = 0, im2colCycles = 0;
  if (!build(packedRequest, packed, whyNot) ||
      !gemm::estimateCycles(packed.spec, packedCycles, whyNot))
    return false;
  if (!build(im2colRequest, im2col, whyNot) ||
      !gemm::estimateCycles(im2col.spec, im2colCycles, whyNot))
    return true;
  return packedCycles < im2colCycles;
}

class ConvGenerator : public KernelGenerator {
public:
  const char *name() const override { return "conv"; }

  bool matches(const KernelRequest &request,
               std::string &whyNot) const override {
    if (request.opType != "Conv")
      return false;
    // The planner gives X and Y the order preferredOrder asks for; judge
    // the request as it will be emitted.
    // The plan points into the request: keep it alive beside it.
    KernelRequest ordered = withPreferredOrders(request, *this);
    Built built;
    if (!build(ordered, built, whyNot))
      return false;
    BLayout layout;
    return planBLayout(built.spec, layout, whyNot);
  }

  /// The resident plan clamps C before it leaves the PEs.
  bool fusesActivation(const KernelRequest &request) const override {
    return request.opType == "Conv";
  }

  std::vector<unsigned> preferredOrder(const KernelRequest &request,
                                       size_t operand) const override {
    // X (input 0) and Y (the output) in NHWC, a W read at run time in
    // M, KH, KW, C (the same permutation); X in N, H, C, W when the taps
    // pack.
    if (operand == 0 && packs(request))
      return kNhcw;
    if (operand == 0 || operand == request.inputs.size())
      return kNhwc;
    if (operand == 1 && request.inputs.size() > 1 &&
        !request.inputs[1].constant)
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
      error = "conv packs only a constant W";
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
            KernelDescription &description,
            std::string &error) const override {
    Built built;
    if (!build(request, built, error))
      return false;
    if (!emitProduct(built.spec, out, description, error))
      return false;
    description.generator = "conv";
    if (built.problem.packed) {
      const PackedTaps &taps = built.problem.taps;
      description.variant = "packed taps (" + std::to_string(taps.pixels) +
                            " pixels a row, " + std::to_string(taps.quads) +
                            " quads a window row), " + description.variant;
      // The device reference of --verify cuts the blocks as the kernel
      // does (manifest.json "packed_taps").
      description.parameters.push_back(
          {"packed_taps",
           std::to_string(taps.pixels) + "x" + std::to_string(taps.quads)});
    }
    return true;
  }
};

std::unique_ptr<KernelGenerator> createConvGenerator() {
  return std::make_unique<ConvGenerator>();
}

} // namespace

MNCC_KERNEL_GENERATOR(Conv, 200, createConvGenerator);
