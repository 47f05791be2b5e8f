//===- GemmSplit.cpp - Few rows: K split over the MABs of an L1B ----------===//
//
// The split plan (docs/codegen.md X11) for products with few rows and a
// long K (an MLP layer at batch 1 or 16), where rows alone cannot keep the
// machine busy and every row block would read all of B again:
//
//   * C's rows, as an image of 64-long-word units (the MV unit), are dealt
//     to the L2Bs: stripes of 16 N-tiles (whole units of every row) when a
//     row is a multiple of a unit or C is one row, else blocks of rows
//     (a unit holds several rows); L2B lambda is L2B lambda / 4 of group
//     lambda % 4, so two stripes already read two groups' DRAMs;
//   * inside an L2B, L1B k owns long words 8k..8k+7 of every unit (two
//     output quads, the layout l2bmd gathers), which makes its work a grid
//     of rows by N-tiles;
//   * the sixteen MABs of an L1B split K: MAB m multiplies K-chunks
//     [m kcm, (m + 1) kcm) of every tile of the L1B, its B tiles alone in
//     LM1 (B is packed per group, per L2B, per L1B and per MAB, so no
//     group reads a tile another group needs), A's rows shared by every
//     MAB and read through T;
//   * l1bmr adds the sixteen partial sums in the L1BM (single precision),
//     l1bmm brings the sums back, one conversion adds beta * bias and
//     rounds once, MAB 0 writes the L1B's quads, l2bmd gathers the L2B's
//     units and mvp stores them.
//
//===----------------------------------------------------------------------===//

#include "GemmDetail.h"
#include "MathLib.h"

#include "mncc/emu/Numerics.h"

#include <algorithm>
#include <cstring>
#include <map>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::gemm;

namespace {

// Memory maps (long words).
constexpr int64_t kGrf1Acc = 0; // accumulators, [0, 224)
constexpr int64_t kGrf1Ta = 224, kGrf1Tb = 226;
constexpr int64_t kGrf0Out = 0; // converted outputs, [0, 224)
constexpr int64_t kLm1Tiles = 2016;
constexpr int64_t kLm1Zero = 2032, kLm1Beta = 2033;
// A fused activation's bounds (ProductSpec::activation).
constexpr int64_t kLm1ClampLo = 2034, kLm1ClampHi = 2035;
constexpr int64_t kLm0Slots = 2040, kTrashSlot = 2047;
constexpr int64_t kL2bmImage = 0, kL2bmImageLw = 16 * 1024;
constexpr int64_t kL2bmOut = 24 * 1024;
constexpr int64_t kL2bmOutLw = 8 * 1024;
constexpr int64_t kL1bmTransit = 0, kL1bmStream = 0;
constexpr int64_t kL1bmSums = 4096, kL1bmOut = 6144;

struct SplitPlan {
  const ProductSpec *spec = nullptr;
  const MatrixUnit *unit = nullptr;
  /// Stripes of 16 N-tiles per L2B (rows a multiple of a unit) or blocks
  /// of rows (a unit holds rho rows of nqRow quads).
  bool stripes = false;
  int64_t rows = 0, rowLw = 0, nqRow = 0, nt = 0;
  int64_t stripeCount = 0, ns = 0; // stripes, stripes per L2B
  int64_t rho = 0, nu = 0;         // rows per unit, units per L2B (blocks)
  int64_t units = 0;               // units each L2B writes
  int active = 0;                  // L2Bs with work
  int64_t kc = 0, kcm = 0, kcPad = 0;
  /// Every L1B: tiles tBase + tOff[j] (j < J) by rows rBase + rOff[i]
  /// (i < I, padded to Ip).
  int64_t J = 0, I = 0, Ip = 0;
  std::vector<int64_t> tOff, rOff;
  /// A: image rows of kc slots each (K-chunks past A's read the next
  /// row's quads, or zeros at the end, against B tiles of zeros); copied
  /// as block floats into GRF0 per MAB (local) or converted in place.
  int64_t imageRows = 0, aSlots = 0;
  bool local = false;
  int64_t aLocal = 0;
  int64_t biasBase = 0, nqBias = 0;
  int64_t tileLw = 0;

  unsigned group(int lambda) const { return unsigned(lambda % 4); }
  unsigned l2b(int lambda) const { return unsigned(lambda / 4); }
  /// The first row of L2B lambda's A image, and the first tile of its
  /// bias image.
  int64_t rFirst(int lambda) const {
    return stripes ? 0 : int64_t(lambda) * nu * rho;
  }
  int64_t tFirst(int lambda) const {
    return stripes ? 16 * int64_t(lambda) * ns : 0;
  }
  /// L1B k's rows and tiles relative to its L2B's firsts.
  int64_t rShift(unsigned k) const {
    if (stripes)
      return 0;
    return nqRow == 1 ? 2 * int64_t(k) : 2 * int64_t(k) / nqRow;
  }
  int64_t tShift(unsigned k) const {
    if (stripes)
      return 2 * int64_t(k);
    return nqRow == 1 ? 0 : 2 * int64_t(k) % nqRow;
  }
  /// The (row index, tile index) of quad e of unit c of an L1B.
  std::pair<int64_t, int64_t> quadOf(int64_t c, int e) const {
    if (stripes)
      return {c / ns, 2 * (c % ns) + e};
    if (nqRow == 1)
      return {2 * c + e, 0};
    return {c, e};
  }
  /// C's DRAM (group, address) of unit c of L2B lambda; false when the
  /// unit lies past C.
  bool unitAddress(int lambda, int64_t c, unsigned &g, int64_t &address) const {
    const DramForm &C = spec->out;
    int64_t row, offset;
    if (stripes) {
      row = c / ns;
      int64_t s = int64_t(lambda) * ns + c % ns;
      if (s >= stripeCount)
        return false;
      offset = 64 * s;
    } else {
      row = (int64_t(lambda) * nu + c) * rho;
      offset = 0;
    }
    if (row >= rows)
      return false;
    int64_t rpg = C.groups == kDramGroups ? C.rowsPerGroup() : rows;
    g = unsigned(row / std::max<int64_t>(rpg, 1));
    address = C.base + (row - int64_t(g) * rpg) * rowLw + offset;
    return true;
  }
};

ConstantStream bStream(const SplitPlan &p) {
  ConstantStream cs;
  cs.base = p.spec->bBase;
  cs.peLongWords = p.tileLw;
  cs.mabBroadcast = false;
  cs.l1bDistinct = true;
  cs.l2bDistinct = p.active > 4;
  return cs;
}

LoadBudget budget() {
  LoadBudget b;
  b.l2bmBase = kL2bmImage;
  b.l2bmLongWords = kL2bmImageLw;
  b.l1bmBase = kL1bmTransit;
  b.l1bmLongWords = 2048;
  b.trashSlot = kTrashSlot;
  return b;
}

/// The A and bias quads L2B lambda loads.
LoadUnit unitOf(const SplitPlan &p, int lambda) {
  const ProductSpec &s = *p.spec;
  LoadUnit unit;
  unit.group = p.group(lambda);
  unit.l2b = p.l2b(lambda);
  int64_t first = p.rFirst(lambda);
  int64_t count = std::clamp<int64_t>(p.rows - first, 0, p.imageRows);
  AImage image;
  s.a->image(first, count, 0, p.kc, image);
  unit.quads = image.quads;
  // Slots past the rows: zeros (what K-chunks past A's read there meets
  // B tiles of zeros; it must be finite).
  for (int64_t slot = count * p.kc; slot < p.aSlots; ++slot) {
    ImageQuad q;
    q.group = ImageQuad::kZeroQuad;
    q.slot = slot;
    unit.quads.push_back(q);
  }
  const BiasSpec &bias = s.bias;
  if (bias.kind == BiasSpec::Kind::None)
    return unit;
  int64_t biasQuads = bias.form.rowLongWords() / kQuadLongWords;
  int64_t t0 = p.tFirst(lambda);
  auto add = [&](int64_t slot, int64_t row, int64_t t) {
    ImageQuad q;
    if (t < biasQuads) {
      q = rowQuad(bias.form, row, t, p.unit->kChunk);
      // A constant's last quad whole (its padding is zero): the stripes
      // then agree on the valid elements of every bias slot.
      if (bias.constant && q.group >= 0)
        q.valid = p.unit->kChunk;
    } else {
      q.group = ImageQuad::kZeroQuad;
    }
    q.slot = p.biasBase + slot;
    q.tensor = 1;
    unit.quads.push_back(q);
  };
  if (bias.kind == BiasSpec::Kind::Row) {
    for (int64_t t = 0; t < p.nqBias; ++t)
      add(t, 0, t0 + t);
  } else {
    for (int64_t r = 0; r < count; ++r)
      for (int64_t t = 0; t < p.nqBias; ++t)
        add(r * p.nqBias + t, first + r, t0 + t);
  }
  return unit;
}

std::vector<LoadUnit> unitsOf(const SplitPlan &p) {
  std::vector<LoadUnit> units;
  for (int lambda = 0; lambda < p.active; ++lambda)
    units.push_back(unitOf(p, lambda));
  return units;
}

bool plan(const ProductSpec &s, SplitPlan &p) {
  const MatrixUnit &u = *s.unit;
  if ((u.type != DeviceType::Half && u.type != DeviceType::Single) ||
      s.outType != u.type || !s.b || s.subProblems.size() != 1)
    return false;
  const BiasSpec &bias = s.bias;
  if (bias.kind != BiasSpec::Kind::None && bias.kind != BiasSpec::Kind::Row &&
      bias.kind != BiasSpec::Kind::Matrix)
    return false;
  if (bias.kind != BiasSpec::Kind::None && bias.form.type != u.type)
    return false;
  if (bias.rowPeriodQuads != 0)
    return false;
  const DramForm &C = s.out;
  p.spec = &s;
  p.unit = &u;
  p.rows = C.rows();
  if (s.subProblems[0].firstRow != 0 || s.subProblems[0].rows != p.rows)
    return false;
  p.kc = s.a->kChunks();
  // Few rows, a long K: what the plan is for.
  if (p.rows > 32 || p.kc < 16)
    return false;
  p.rowLw = C.rowLongWords();
  p.nqRow = p.rowLw / kQuadLongWords;
  p.nt = ceilDiv(std::max<int64_t>(s.n, 1), u.nTile);
  p.kcm = ceilDiv(p.kc, 16);
  p.kcPad = 16 * p.kcm;
  // Stripes when a row is whole units, or when C is one row that no unit
  // count divides (a classifier at batch 1, N 1000): its last stripe
  // computes tiles past N from zero tiles of B and stores the whole unit,
  // whose long words past the row are the tail of C's block.
  bool oneRow = p.rows == 1 && 16 % p.nqRow != 0;
  if (p.nqRow % 16 == 0 || oneRow) {
    p.stripes = true;
    p.stripeCount = ceilDiv(p.nqRow, 16);
    p.ns = ceilDiv(p.stripeCount, 8);
    p.active = int(ceilDiv(p.stripeCount, p.ns));
    p.units = p.rows * p.ns;
    p.J = 2 * p.ns;
    p.I = p.rows;
    for (int64_t j = 0; j < p.J; ++j)
      p.tOff.push_back(16 * (j / 2) + j % 2);
    for (int64_t i = 0; i < p.I; ++i)
      p.rOff.push_back(i);
    p.imageRows = p.rows;
    p.nqBias = 16 * p.ns;
  } else if (16 % p.nqRow == 0) {
    p.rho = 16 / p.nqRow;
    int64_t all = ceilDiv(p.rows, p.rho);
    p.nu = ceilDiv(all, 8);
    p.active = int(ceilDiv(all, p.nu));
    p.units = p.nu;
    if (C.groups == kDramGroups && C.rowsPerGroup() % p.rho != 0)
      return false;
    if (p.nqRow == 1) {
      p.J = 1;
      p.I = 2 * p.nu;
      p.tOff = {0};
      for (int64_t i = 0; i < p.I; ++i)
        p.rOff.push_back(p.rho * (i / 2) + i % 2);
    } else {
      p.J = 2;
      p.I = p.nu;
      p.tOff = {0, 1};
      for (int64_t i = 0; i < p.I; ++i)
        p.rOff.push_back(p.rho * i);
    }
    p.imageRows = p.nu * p.rho;
    p.nqBias = p.nqRow;
  } else {
    return false;
  }
  p.Ip = roundUp(p.I, 4);
  while (int64_t(p.rOff.size()) < p.Ip)
    p.rOff.push_back(p.rOff.back());
  // Memories: accumulators and outputs, B tiles, the image.
  if (p.J * p.Ip * u.accPeLongWords > 224 || p.J * p.Ip > 224)
    return false;
  p.tileLw = p.J * p.kcm * u.tilePeLongWords;
  if (p.tileLw > kLm1Tiles)
    return false;
  AImage image;
  s.a->image(0, std::min(p.imageRows, p.rows), 0, p.kc, image);
  if (image.rowStride != p.kc || !image.transpose.empty())
    return false;
  for (int64_t i = 0; i < p.kc; ++i)
    if (image.kcSlot[size_t(i)] != i)
      return false;
  p.aSlots = std::max(p.imageRows * p.kc, (p.imageRows - 1) * p.kc + p.kcPad);
  p.aLocal = roundUp(p.J * p.Ip, 4);
  p.local = p.aLocal + p.Ip * p.kcm <= 224;
  // A's block-float conversion runs four slots at a time in place: the
  // bias starts past its last run.
  p.biasBase = roundUp(p.aSlots, 4);
  int64_t biasSlots = bias.kind == BiasSpec::Kind::Row      ? p.nqBias
                      : bias.kind == BiasSpec::Kind::Matrix ? p.imageRows *
                                                                  p.nqBias
                                                            : 0;
  if (p.biasBase + biasSlots > kLm0Slots)
    return false;
  // The output image: eight long words per unit and L1B.
  if (8 * p.units > 2048 || 64 * p.units > kL2bmOutLw)
    return false;
  return sameLayout(unitsOf(p), budget());
}

} // namespace

bool gemm::splitApplies(const ProductSpec &spec, int64_t &bImageLongWords) {
  SplitPlan p;
  if (!plan(spec, p))
    return false;
  bImageLongWords = constantStreamLongWords(bStream(p));
  return true;
}

void gemm::packSplitB(const ProductSpec &spec, DramImage &image) {
  SplitPlan p;
  plan(spec, p);
  const MatrixUnit &u = *spec.unit;
  ConstantStream cs = bStream(p);
  int64_t size = constantStreamLongWords(cs);
  image.groups = kDramGroups;
  image.longWordsPerGroup = size;
  std::vector<uint64_t> tile(size_t(4 * u.tilePeLongWords));
  int64_t columns[16];
  int rows = u.tilePeLongWords;
  for (unsigned g = 0; g < kDramGroups; ++g) {
    std::vector<uint64_t> data(size_t(size), 0);
    for (unsigned l = 0; l < (cs.l2bDistinct ? 2u : 1u); ++l) {
      int lambda = int(g + 4 * l);
      if (lambda >= p.active)
        continue;
      for (unsigned k = 0; k < 8; ++k)
        for (unsigned m = 0; m < 16; ++m)
          for (int64_t j = 0; j < p.J; ++j)
            for (int64_t kcl = 0; kcl < p.kcm; ++kcl) {
              int64_t kc = int64_t(m) * p.kcm + kcl;
              int64_t t = p.tFirst(lambda) + p.tShift(k) + p.tOff[size_t(j)];
              if (kc >= p.kc || t >= p.nt)
                continue;
              for (int i = 0; i < rows; ++i) {
                int64_t column = t * u.nTile + i;
                columns[i] = column < spec.n ? column : -1;
              }
              std::fill(tile.begin(), tile.end(), 0);
              spec.b->tile(0, kc, columns, tile.data());
              int64_t j0 = (j * p.kcm + kcl) * rows;
              for (unsigned pe = 0; pe < 4; ++pe)
                for (int i = 0; i < rows; ++i)
                  data[size_t(constantStreamOffset(cs, j0 + i, k, m, pe, l))] =
                      tile[size_t(pe * rows + i)];
            }
    }
    image.data[g] = std::move(data);
  }
}

bool gemm::emitSplit(const ProductSpec &spec, VsmWriter &out,
                     KernelDescription &description, std::string &error) {
  SplitPlan p;
  if (!plan(spec, p)) {
    error = "the split plan does not take this product";
    return false;
  }
  const MatrixUnit &u = *spec.unit;
  const BiasSpec &bias = spec.bias;
  bool half = u.type == DeviceType::Half;
  description.generator = "gemm";
  description.variant = std::string(deviceTypeName(u.type)) +
                        ", K split over the MABs of an L1B, " +
                        (p.stripes ? "stripes" : "row blocks") +
                        " over L2Bs" +
                        (spec.activation ? ", then " + spec.activation->opType
                                         : "");
  description.parameters.push_back({"active L2Bs", std::to_string(p.active)});
  description.parameters.push_back(
      {"K-chunks per MAB", std::to_string(p.kcm)});
  description.parameters.push_back(
      {"tiles x rows per L1B",
       std::to_string(p.J) + " x " + std::to_string(p.I)});

  PeSetup setup(out);
  // T: A at the L1B's rows and the MAB's K-chunks; the bias at the L1B's
  // rows and tiles.
  std::vector<int64_t> l1b(8), mab(16);
  for (unsigned k = 0; k < 8; ++k)
    l1b[k] = 2 * p.rShift(k) * p.kc;
  for (unsigned m = 0; m < 16; ++m)
    mab[m] = 2 * int64_t(m) * p.kcm;
  setup.offsetTable({}, l1b, mab, kGrf1Ta);
  if (bias.kind != BiasSpec::Kind::None) {
    for (unsigned k = 0; k < 8; ++k)
      l1b[k] = 2 * (p.tShift(k) + (bias.kind == BiasSpec::Kind::Matrix
                                       ? p.rShift(k) * p.nqBias
                                       : 0));
    setup.offsetTable({}, l1b, {}, kGrf1Tb);
  }
  // Constants: zero, and beta in the operand format.
  float beta = bias.beta;
  uint32_t fbits;
  std::memcpy(&fbits, &beta, 4);
  out.step({"zero " + lwFixed(PeMemory::LM1, kLm1Zero)});
  if (half) {
    uint16_t h = emu::singleToHalf(fbits);
    out.step({"imm " + immWord(uint32_t(h) << 16 | h) + " " +
              lwFixed(PeMemory::LM1, kLm1Beta)});
  } else {
    out.step({"imm " + immWord(fbits) + " " + lwFixed(PeMemory::LM1, kLm1Beta)});
  }
  ClampBounds clamp;
  if (spec.activation)
    clamp = emitClampBounds(out, VectorFormat(spec.outType),
                            spec.activation->bounds, PeMemory::LM1,
                            kLm1ClampLo, kLm1ClampHi, kLm1Zero);
  out.nop(2);

  // A and the bias into LM0, B into LM1: B's first transfers queue
  // behind A's and run while A goes down to the PEs.
  // The stream's L2BM buffers: everything between the image and the
  // outputs, as many chunks in flight as fit.
  int64_t imageLw = imageL2bmLongWords(unitsOf(p), budget());
  int64_t streamBase = roundUp(std::max<int64_t>(imageLw, 0), 2048);
  ConstantStreamLoad bLoad(out, bStream(p), PeMemory::LM1, 0, streamBase,
                           kL1bmStream, kL2bmOut - streamBase);
  if (!loadImages(out, setup, u, unitsOf(p), budget(), error,
                  [&] { bLoad.start(); }))
    return false;
  setup.loadT(kGrf1Ta);
  // Block floats: each MAB its rows and K-chunks into GRF0 (through T),
  // or the whole image in place.
  std::string bfn = std::string(1, u.prefix) + "bfn ";
  auto aSlot = [&](int64_t i, int64_t kcl) {
    return p.rOff[size_t(i)] * p.kc + kcl;
  };
  if (p.local) {
    for (int64_t kcl = 0; kcl < p.kcm; ++kcl)
      for (int64_t i = 0; i < p.Ip; i += 4)
        out.step({bfn +
                  lwAnyT({aSlot(i, kcl), aSlot(i + 1, kcl), aSlot(i + 2, kcl),
                          aSlot(i + 3, kcl)}) +
                  " " +
                  lwRun(PeMemory::GRF0, p.aLocal + i * p.kcm + kcl, p.kcm)});
  } else {
    for (int64_t s = 0; s < p.aSlots; s += 4)
      out.step(
          {bfn + lwRun(PeMemory::LM0, s) + " " + lwRun(PeMemory::LM0, s)});
  }
  bLoad.finish();

  // Products: every tile, every K-chunk of the MAB, four rows a step; the
  // next tile's mwrite into the other register beside them.
  auto acc = [&](int64_t j, int64_t i) {
    return kGrf1Acc + (j * p.Ip + i) * u.accPeLongWords;
  };
  {
    std::map<int64_t, std::vector<std::string>> steps;
    std::map<int64_t, bool> writeUsed;
    int64_t regFree[2] = {0, 0};
    std::map<int64_t, int64_t> ready;
    int64_t next = 0;
    int load = 0;
    for (int64_t j = 0; j < p.J; ++j)
      for (int64_t kcl = 0; kcl < p.kcm; ++kcl, ++load) {
        int which = load % 2;
        std::string reg = which ? "y" : "x";
        int64_t at = (j * p.kcm + kcl) * u.tilePeLongWords;
        int64_t w = regFree[which];
        std::vector<std::string> writes;
        if (half) {
          writes = {"hmwrite " + llRun(PeMemory::LM1, at) + " $ll" + reg + "0",
                    "hmwrite " + llRun(PeMemory::LM1, at + 8) + " $ll" + reg +
                        "8"};
        } else {
          writes = {"gmwrite " + lwRun(PeMemory::LM1, at) + " $l" + reg + "0",
                    "gmwrite " + lwRun(PeMemory::LM1, at + 4) + " $l" + reg +
                        "4"};
        }
        for (const std::string &text : writes) {
          while (writeUsed[w])
            ++w;
          writeUsed[w] = true;
          steps[w].push_back(text);
          ++w;
        }
        int64_t s = std::max(next, w);
        int64_t last = s;
        for (int64_t i = 0; i < p.Ip; i += 4) {
          std::string a;
          if (p.local) {
            a = lwRun(PeMemory::GRF0, p.aLocal + i * p.kcm + kcl, p.kcm);
          } else {
            std::array<int64_t, 4> slots;
            for (int c = 0; c < 4; ++c)
              slots[size_t(c)] = aSlot(i + c, kcl);
            a = lwAnyT(slots);
          }
          int64_t ac = acc(j, i);
          std::string c = half ? llRun(PeMemory::GRF1, ac)
                               : lwRun(PeMemory::GRF1, ac);
          std::string m = " $l" + reg + " ";
          std::string text =
              kcl == 0 ? std::string(half ? "hmmul" : "gmmul") + m + a + " " + c
                       : std::string(half ? "hmfma" : "gmfma") + m + a + " " +
                             c + " " + c;
          s = std::max(s, ready.count(ac) ? ready[ac] : 0);
          steps[s].insert(steps[s].begin(), text);
          ready[ac] = s + 3;
          last = s;
          ++s;
        }
        next = s;
        regFree[which] = last + 1;
      }
    int64_t previous = -1;
    for (const auto &[at, texts] : steps) {
      out.nop(unsigned(at - previous - 1));
      out.step({texts[0], texts.size() > 1 ? texts[1] : std::string()});
      previous = at;
    }
    out.nop(3);
  }

  // The sixteen partial sums of every quad, added in the L1BM, and back.
  int64_t rowLws = half ? 8 : 4; // L1BM long words per row of a tile
  for (int64_t j = 0; j < p.J; ++j)
    for (int64_t i = 0; i < p.Ip; i += 4) {
      std::string src = half ? llRun(PeMemory::GRF1, acc(j, i))
                             : lwRun(PeMemory::GRF1, acc(j, i));
      out.step({"l1bmrffadd " + src + " " +
                l1bmOperand(kL1bmSums + (j * p.Ip + i) * rowLws, half)});
    }
  out.nop(4);
  for (int64_t j = 0; j < p.J; ++j)
    for (int64_t i = 0; i < p.Ip; i += 4) {
      std::string dst = half ? llRun(PeMemory::GRF1, acc(j, i))
                             : lwRun(PeMemory::GRF1, acc(j, i));
      out.step({"l1bmm " +
                l1bmOperand(kL1bmSums + (j * p.Ip + i) * rowLws, half) + " " +
                dst});
    }
  out.nop(2);

  // acc + beta * bias, rounded once into the result format.
  if (bias.kind != BiasSpec::Kind::None)
    setup.loadT(kGrf1Tb);
  std::string zero = lwFixed(PeMemory::LM1, kLm1Zero);
  std::string betaOp = lwFixed(PeMemory::LM1, kLm1Beta);
  auto outLw = [&](int64_t j, int64_t i) { return kGrf0Out + j * p.Ip + i; };
  for (int64_t j = 0; j < p.J; ++j)
    for (int64_t i = 0; i < p.Ip; i += 4) {
      std::string c = half ? llRun(PeMemory::GRF1, acc(j, i))
                           : lwRun(PeMemory::GRF1, acc(j, i));
      std::string dst = lwRun(PeMemory::GRF0, outLw(j, i));
      std::string b;
      if (bias.kind == BiasSpec::Kind::Row) {
        int64_t slot = p.biasBase + p.tOff[size_t(j)];
        b = lwAnyT({slot, slot, slot, slot});
      } else if (bias.kind == BiasSpec::Kind::Matrix) {
        std::array<int64_t, 4> slots;
        for (int cc = 0; cc < 4; ++cc)
          slots[size_t(cc)] = p.biasBase +
                              p.rOff[size_t(i + cc)] * p.nqBias +
                              p.tOff[size_t(j)];
        b = lwAnyT(slots);
      }
      if (half) {
        out.step({b.empty() ? "hvfmar " + zero + " " + zero + " " + c + " " + dst
                            : "hvfmar " + b + " " + betaOp + " " + c + " " +
                                  dst});
      } else {
        out.step({b.empty() ? "lpassa " + c + " " + dst
                            : "fvfma " + b + " " + betaOp + " " + c + " " + dst});
      }
    }
  out.nop(2);
  if (spec.activation) {
    std::vector<std::string> values;
    for (int64_t j = 0; j < p.J; ++j)
      for (int64_t i = 0; i < p.Ip; i += 4)
        values.push_back(lwRun(PeMemory::GRF0, outLw(j, i)));
    emitClamp(out, VectorFormat(spec.outType), clamp, values);
    out.nop(2);
  }

  // MAB 0 writes the L1B's quads, unit by unit; l2bmd gathers the L2B's.
  int64_t quads = 2 * p.units;
  for (int64_t q0 = 0; q0 < quads; q0 += 4) {
    std::array<int64_t, 4> src;
    for (int c = 0; c < 4; ++c) {
      int64_t q = std::min(q0 + c, quads - 1);
      auto [i, j] = p.quadOf(q / 2, int(q % 2));
      src[size_t(c)] = outLw(j, i);
    }
    out.step({"l1bmm@0 " + lwAny(PeMemory::GRF0, src) + " " +
              l1bmOperand(kL1bmOut + 4 * q0)});
  }
  out.nop();
  for (int64_t s = 0; s < ceilDiv(8 * p.units, 32); ++s)
    out.step({"l2bmd " + l1bmOperand(kL1bmOut + 32 * s) + " " +
              l2bmOperand(kL2bmOut + 256 * s)});
  out.nop(2);

  // Stores: runs of units that are consecutive in C's DRAM.
  std::vector<unsigned> tags;
  for (int lambda = 0; lambda < p.active; ++lambda) {
    int64_t c = 0;
    while (c < p.units) {
      unsigned g;
      int64_t address;
      if (!p.unitAddress(lambda, c, g, address)) {
        ++c;
        continue;
      }
      int64_t run = 1;
      unsigned g2;
      int64_t a2;
      while (c + run < p.units && p.unitAddress(lambda, c + run, g2, a2) &&
             g2 == g && a2 == address + 64 * run)
        ++run;
      unsigned tag = out.newTag();
      tags.push_back(tag);
      out.statement("mvp/n" + std::to_string(64 * run) +
                    VsmWriter::tagName(tag) + " $lc" +
                    std::to_string(kL2bmOut + 64 * c) + "@" +
                    std::to_string(p.group(lambda)) + "." +
                    std::to_string(p.l2b(lambda)) + " $d" +
                    std::to_string(address) + "@" + std::to_string(g));
      c += run;
    }
  }
  for (unsigned tag : tags)
    out.wait(tag);
  return true;
}
