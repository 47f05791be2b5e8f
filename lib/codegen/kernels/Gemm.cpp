//===- Gemm.cpp - Gemm and MatMul on the MAU's matrix unit ----------------===//
//
// Both operators become one product for the engine (GemmEngine.h): the rows
// of C are the compute rows, A is read row by row from its DRAM form, and
// B, a constant, is packed on the host into block-float tiles in the order
// the MABs load them, alpha folded in. Batched MatMul with one B for every
// batch is a single product over all rows; batches with their own B become
// one product per batch when each batch of C starts on an MV unit, and
// otherwise one product whose K runs over every batch's B with A's other
// batches zero (small problems only).
//
//===----------------------------------------------------------------------===//

#include "GemmDetail.h"
#include "GemmEngine.h"
#include "Generators.h"

#include "mncc/emu/Numerics.h"

#include <algorithm>
#include <cstring>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::gemm;

namespace {

//===----------------------------------------------------------------------===//
// The problem
//===----------------------------------------------------------------------===//

/// A Gemm or MatMul request reduced to C[rows, N] = A B (+ bias): the batch
/// structure, where A's rows are and which B each row uses.
struct Problem {
  DeviceType operandType = DeviceType::Half;
  DeviceType outType = DeviceType::Half;
  int64_t m = 0, n = 0, k = 0;
  /// Output batches (1 for Gemm) and, per output batch, the batch of A and
  /// of B it reads.
  int64_t batches = 1;
  std::vector<int64_t> aBatch, bBatch;
  int64_t bBatches = 1;
  bool transA = false, transB = false;
  float alpha = 1;
  const KernelTensor *a = nullptr;
  const KernelTensor *b = nullptr;
  const KernelTensor *c = nullptr;
  BiasSpec::Kind biasKind = BiasSpec::Kind::None;
  float beta = 1;
  /// One product over every batch with a block-diagonal A (see the file
  /// comment), or one product per B batch.
  bool blockDiagonal = false;
};

/// The row-major strides of a shape broadcast to `to` (0 where it is 1).
std::vector<int64_t> broadcastStrides(const std::vector<int64_t> &shape,
                                      const std::vector<int64_t> &to) {
  std::vector<int64_t> strides(to.size(), 0);
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    size_t j = to.size() - (shape.size() - i);
    strides[j] = shape[i] == 1 ? 0 : stride;
    stride *= shape[i];
  }
  return strides;
}

bool isMatmulType(DeviceType t) {
  return t == DeviceType::Half || t == DeviceType::Single ||
         t == DeviceType::Double;
}

bool analyse(const KernelRequest &r, Problem &p, std::string &whyNot) {
  bool gemmOp = r.opType == "Gemm";
  if (r.inputs.size() < 2 || r.outputs.size() != 1 || !r.hasInput(0) ||
      !r.hasInput(1)) {
    whyNot = "expects A, B and one output";
    return false;
  }
  p.a = &r.inputs[0];
  p.b = &r.inputs[1];
  p.operandType = p.a->form.type;
  p.outType = r.outputs[0].form.type;
  if (!isMatmulType(p.operandType) || p.b->form.type != p.operandType) {
    whyNot = "operands of floating formats alike";
    return false;
  }
  if (p.outType != p.operandType &&
      !(p.operandType == DeviceType::Half && p.outType == DeviceType::Single)) {
    whyNot = "a result of the operands' format (or single from half)";
    return false;
  }
  const std::vector<int64_t> &as = p.a->form.shape, &bs = p.b->form.shape;
  const std::vector<int64_t> &ys = r.outputs[0].form.shape;
  for (const KernelTensor *t : {p.a, p.b})
    for (size_t i = 0; i + 1 < t->form.order.size(); ++i)
      if (t->form.order[i] != i) {
        whyNot = "operands in the identity DRAM order";
        return false;
      }
  if (gemmOp) {
    if (as.size() != 2 || bs.size() != 2 || ys.size() != 2) {
      whyNot = "Gemm of 2-D tensors";
      return false;
    }
    p.transA = r.getInt("transA", 0) != 0;
    p.transB = r.getInt("transB", 0) != 0;
    p.m = p.transA ? as[1] : as[0];
    p.k = p.transA ? as[0] : as[1];
    p.n = p.transB ? bs[0] : bs[1];
    if ((p.transB ? bs[1] : bs[0]) != p.k || ys[0] != p.m || ys[1] != p.n) {
      whyNot = "shapes that do not multiply";
      return false;
    }
    p.alpha = r.getFloat("alpha", 1);
    p.beta = r.getFloat("beta", 1);
    p.batches = 1;
    p.aBatch = {0};
    p.bBatch = {0};
    if (r.hasInput(2)) {
      p.c = &r.inputs[2];
      const std::vector<int64_t> &cs = p.c->form.shape;
      int64_t rows = cs.size() == 2 ? cs[0] : 1;
      int64_t cols = cs.empty() ? 1 : cs.back();
      if (cs.size() > 2 || (rows != 1 && rows != p.m) ||
          (cols != 1 && cols != p.n)) {
        whyNot = "a bias that does not broadcast to Y";
        return false;
      }
      if (p.c->form.type != p.operandType) {
        whyNot = "a bias of the operands' format";
        return false;
      }
      p.biasKind = rows == p.m && p.m > 1
                       ? (cols == p.n && p.n > 1 ? BiasSpec::Kind::Matrix
                                                 : BiasSpec::Kind::Column)
                   : cols == p.n && p.n > 1 ? BiasSpec::Kind::Row
                                            : BiasSpec::Kind::Scalar;
      if (rows == p.m && p.m == 1)
        p.biasKind =
            cols == p.n && p.n > 1 ? BiasSpec::Kind::Row : BiasSpec::Kind::Scalar;
      if (p.beta == 0)
        p.biasKind = BiasSpec::Kind::None;
    }
    return true;
  }
  // MatMul (numpy semantics).
  if (as.empty() || bs.empty()) {
    whyNot = "MatMul of scalars";
    return false;
  }
  if (bs.size() == 1) {
    whyNot = "MatMul with a 1-D B is not supported";
    return false;
  }
  std::vector<int64_t> a2 = as;
  if (a2.size() == 1)
    a2.insert(a2.begin(), 1);
  p.m = a2[a2.size() - 2];
  p.k = a2.back();
  p.n = bs.back();
  if (bs[bs.size() - 2] != p.k) {
    whyNot = "shapes that do not multiply";
    return false;
  }
  std::vector<int64_t> aBatchShape(a2.begin(), a2.end() - 2),
      bBatchShape(bs.begin(), bs.end() - 2);
  size_t rank = std::max(aBatchShape.size(), bBatchShape.size());
  std::vector<int64_t> out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i + aBatchShape.size() >= rank
                    ? aBatchShape[i + aBatchShape.size() - rank]
                    : 1;
    int64_t y = i + bBatchShape.size() >= rank
                    ? bBatchShape[i + bBatchShape.size() - rank]
                    : 1;
    if (x != y && x != 1 && y != 1) {
      whyNot = "batch dimensions that do not broadcast";
      return false;
    }
    out[i] = std::max(x, y);
  }
  p.batches = 1;
  for (int64_t e : out)
    p.batches *= e;
  std::vector<int64_t> expected = out;
  if (as.size() > 1)
    expected.push_back(p.m);
  expected.push_back(p.n);
  if (ys != expected) {
    whyNot = "an output shape MatMul does not give";
    return false;
  }
  std::vector<int64_t> sa = broadcastStrides(aBatchShape, out),
                       sb = broadcastStrides(bBatchShape, out);
  p.bBatches = 1;
  for (int64_t e : bBatchShape)
    p.bBatches *= e;
  p.aBatch.assign(size_t(p.batches), 0);
  p.bBatch.assign(size_t(p.batches), 0);
  std::vector<int64_t> index(rank, 0);
  for (int64_t beta = 0; beta < p.batches; ++beta) {
    int64_t ia = 0, ib = 0;
    for (size_t i = 0; i < rank; ++i) {
      ia += index[i] * sa[i];
      ib += index[i] * sb[i];
    }
    p.aBatch[size_t(beta)] = ia;
    p.bBatch[size_t(beta)] = ib;
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < out[d])
        break;
      index[d] = 0;
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Operands
//===----------------------------------------------------------------------===//

class GemmA : public AOperand {
public:
  GemmA(const Problem &p, const MatrixUnit &unit) : P(p), Unit(unit) {
    KcPerBlock = ceilDiv(std::max<int64_t>(p.k, 1), unit.kChunk);
  }
  int64_t kChunks() const override {
    return KcPerBlock * (P.blockDiagonal ? P.bBatches : 1);
  }
  int64_t rowStride(int64_t kcWidth) const override { return kcWidth; }
  int64_t rowAlign() const override { return P.transA ? Unit.kChunk : 1; }
  /// Transposed, every K index of an image is a DRAM row of its own: at
  /// most two MV units each in the L2BM's 16 Ki long words.
  int64_t maxKcWidth() const override {
    return P.transA ? 16 * 1024 / (Unit.kChunk * 2 * kMvUnitLongWords) : 0;
  }
  /// Transposed, the rows come in whole blocks of kChunk.
  int64_t imageSlots(int64_t count, int64_t kcWidth) const override {
    return (P.transA ? roundUp(count, Unit.kChunk) : count) * kcWidth;
  }
  void image(int64_t first, int64_t count, int64_t kcBegin, int64_t kcWidth,
             AImage &image) const override {
    if (P.transA) {
      transposedImage(first, count, kcBegin, kcWidth, image);
      return;
    }
    image.rowStride = kcWidth;
    int64_t kcEnd = std::min(kcBegin + kcWidth, kChunks());
    image.kcSlot.clear();
    for (int64_t kc = kcBegin; kc < kcBegin + kcWidth; ++kc)
      image.kcSlot.push_back(kc - kcBegin);
    image.slots = imageSlots(count, kcWidth);
    image.quads.clear();
    int64_t rows = P.batches * P.m;
    const DramForm &form = P.a->form;
    for (int64_t r = first; r < first + count; ++r) {
      // A's row: the row of its batch, or past the tensor (rowQuad reads
      // the block's tail or zeros).
      int64_t aRow, batch = 0;
      if (r < rows) {
        batch = r / P.m;
        aRow = P.aBatch[size_t(batch)] * P.m + r % P.m;
      } else {
        aRow = form.rows() + (r - rows);
      }
      for (int64_t kc = kcBegin; kc < kcEnd; ++kc) {
        int64_t block = kc / KcPerBlock, quad = kc % KcPerBlock;
        ImageQuad q;
        if (P.blockDiagonal && r < rows &&
            block != P.bBatch[size_t(batch)]) {
          q.group = -1;
        } else {
          q = rowQuad(form, aRow, quad, Unit.kChunk);
        }
        q.slot = (r - first) * kcWidth + (kc - kcBegin);
        image.quads.push_back(q);
      }
    }
  }

private:
  /// A stored K x M: block (kc, m-quad) of kChunk K rows by one quad of
  /// M goes into the slots of its kChunk compute rows, row i of the block
  /// (K index kc * kChunk + i) where compute row i wants K-chunk kc; the
  /// engine transposes it in place. Images start on a block (rowAlign).
  void transposedImage(int64_t first, int64_t count, int64_t kcBegin,
                       int64_t kcWidth, AImage &image) const {
    int w = Unit.kChunk;
    int64_t rows = roundUp(count, w);
    image.rowStride = kcWidth;
    image.kcSlot.clear();
    for (int64_t kc = kcBegin; kc < kcBegin + kcWidth; ++kc)
      image.kcSlot.push_back(kc - kcBegin);
    image.slots = imageSlots(count, kcWidth);
    image.quads.clear();
    image.transpose.clear();
    int64_t kcEnd = std::min(kcBegin + kcWidth, kChunks());
    for (int64_t b = 0; b < rows / w; ++b) {
      int64_t mQuad = (first + b * w) / w;
      for (int64_t kc = kcBegin; kc < kcEnd; ++kc)
        for (int i = 0; i < w; ++i) {
          int64_t k = kc * w + i;
          ImageQuad q;
          if (k >= P.k)
            q.group = ImageQuad::kZeroQuad;
          else if (mQuad * w >= P.m)
            q.group = ImageQuad::kNoQuad;
          else
            q = rowQuad(P.a->form, k, mQuad, w);
          q.slot = (b * w + i) * kcWidth + (kc - kcBegin);
          image.quads.push_back(q);
          image.transpose.push_back(q.slot);
        }
    }
  }

  const Problem &P;
  const MatrixUnit &Unit;
  int64_t KcPerBlock;
};

/// alpha * B, read from the host tensor, rounded once into the device
/// format and block-floated row by row as hbfn / gbfn / dbfn would.
class GemmB : public BOperand {
public:
  GemmB(const Problem &p, const MatrixUnit &unit) : P(p), Unit(unit) {
    KcPerBlock = ceilDiv(std::max<int64_t>(p.k, 1), unit.kChunk);
  }
  void tile(int64_t batch, int64_t kc, const int64_t *columns,
            uint64_t *peLongWords) const override {
    const reference::Tensor &b = *P.b->constant;
    int64_t bBatch = batch;
    if (P.blockDiagonal) {
      bBatch = kc / KcPerBlock;
      kc %= KcPerBlock;
    }
    int kw = Unit.kChunk;
    int rows = Unit.tilePeLongWords;
    for (int i = 0; i < rows; ++i) {
      double values[16] = {};
      for (int j = 0; j < kw; ++j) {
        int64_t k = kc * kw + j, n = columns[i];
        if (n < 0 || k >= P.k)
          continue;
        int64_t index = P.transB ? n * P.k + k : k * P.n + n;
        values[j] = double(P.alpha) *
                    b.elementAsDouble(bBatch * P.k * P.n + index);
      }
      packTileRow(Unit, values, i, peLongWords);
    }
  }

private:
  const Problem &P;
  const MatrixUnit &Unit;
  int64_t KcPerBlock;
};

/// B read at run time: its DRAM rows, quads of K (transB) or of N.
class GemmDeviceB : public DeviceBOperand {
public:
  GemmDeviceB(const Problem &p, const MatrixUnit &unit) : P(p), Unit(unit) {
    KcPerBlock = ceilDiv(std::max<int64_t>(p.k, 1), unit.kChunk);
  }
  bool kRows() const override { return !P.transB; }
  ImageQuad quad(int64_t batch, int64_t row, int64_t quad) const override {
    ImageQuad zero;
    zero.group = ImageQuad::kZeroQuad;
    int64_t bBatch = batch;
    if (!P.transB) {
      // Row: a K index over every block of a block-diagonal product.
      if (P.blockDiagonal) {
        int64_t span = KcPerBlock * Unit.kChunk;
        bBatch = row / span;
        row %= span;
      }
      if (row >= P.k || quad * Unit.nTile >= P.n)
        return zero;
      return rowQuad(P.b->form, bBatch * P.k + row, quad, Unit.kChunk);
    }
    // Row: an output column; quad: a K-chunk.
    if (P.blockDiagonal) {
      bBatch = quad / KcPerBlock;
      quad %= KcPerBlock;
    }
    if (row >= P.n || quad * Unit.kChunk >= P.k)
      return zero;
    return rowQuad(P.b->form, bBatch * P.n + row, quad, Unit.kChunk);
  }
  double alpha() const override { return P.alpha; }

private:
  const Problem &P;
  const MatrixUnit &Unit;
  int64_t KcPerBlock;
};

/// Everything a product needs, kept alive while it is planned or emitted.
struct Built {
  Problem problem;
  std::unique_ptr<GemmA> a;
  std::unique_ptr<GemmB> b;
  std::unique_ptr<GemmDeviceB> deviceB;
  ProductSpec spec;
};

bool build(const KernelRequest &r, Built &built, std::string &error) {
  Problem &p = built.problem;
  if (!analyse(r, p, error))
    return false;
  const MatrixUnit &unit = matrixUnitFor(p.operandType);
  ProductSpec &s = built.spec;
  s.unit = &unit;
  s.outType = p.outType;
  s.out = r.outputs[0].form;
  s.activation = r.activation;
  s.n = p.n;
  s.k = p.k;
  s.bBase = p.b->form.base;
  if (p.biasKind != BiasSpec::Kind::None) {
    s.bias.kind = p.biasKind;
    s.bias.form = p.c->form;
    s.bias.beta = p.beta;
    s.bias.constant = p.c->constant;
  }
  // One product per B batch when every batch of C starts an MV unit;
  // else a block-diagonal A over every B batch.
  int64_t rowLw = s.out.rowLongWords();
  bool sharedB = true;
  for (int64_t beta = 0; beta < p.batches; ++beta)
    sharedB &= p.bBatch[size_t(beta)] == p.bBatch[0];
  if (sharedB) {
    s.subProblems.push_back({0, p.batches * p.m, p.bBatch[0]});
  } else {
    bool aligned = (p.m * rowLw) % kMvUnitLongWords == 0;
    if (aligned) {
      for (int64_t beta = 0; beta < p.batches; ++beta)
        s.subProblems.push_back(
            {beta * p.m, p.m, p.bBatch[size_t(beta)]});
    } else {
      p.blockDiagonal = true;
      s.subProblems.push_back({0, p.batches * p.m, 0});
    }
  }
  // A is plain rows when every output row reads the A row of its index.
  bool plain = !p.blockDiagonal && !p.transA &&
               p.a->form.rows() == p.batches * p.m;
  for (int64_t beta = 0; beta < p.batches && plain; ++beta)
    plain = p.aBatch[size_t(beta)] == beta;
  if (plain)
    s.plainA = &p.a->form;
  built.a = std::make_unique<GemmA>(p, unit);
  s.a = built.a.get();
  if (p.b->constant) {
    built.b = std::make_unique<GemmB>(p, unit);
    s.b = built.b.get();
  } else {
    built.deviceB = std::make_unique<GemmDeviceB>(p, unit);
    s.deviceB = built.deviceB.get();
  }
  return true;
}

class GemmGenerator : public KernelGenerator {
public:
  const char *name() const override { return "gemm"; }

  /// The resident and split plans clamp C before it leaves the PEs; a
  /// product the streaming plan takes (large half GEMMs, at their fastest
  /// there) keeps its activation apart.
  bool fusesActivation(const KernelRequest &request) const override {
    if (request.opType != "Gemm" && request.opType != "MatMul")
      return false;
    KernelRequest plain = request;
    plain.activation.reset();
    Built built;
    std::string error;
    int64_t streamed = 0;
    return build(plain, built, error) && !streamApplies(built.spec, streamed);
  }

  bool matches(const KernelRequest &request,
               std::string &whyNot) const override {
    if (request.opType != "Gemm" && request.opType != "MatMul")
      return false;
    Built built;
    if (!build(request, built, whyNot))
      return false;
    BLayout layout;
    return planBLayout(built.spec, layout, whyNot);
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
      error = "gemm packs only a constant B";
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
    return emitProduct(built.spec, out, description, error);
  }
};

std::unique_ptr<KernelGenerator> createGemmGenerator() {
  return std::make_unique<GemmGenerator>();
}

} // namespace

MNCC_KERNEL_GENERATOR(Gemm, 200, createGemmGenerator);
