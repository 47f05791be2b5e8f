//===- GemmEngine.cpp - Matrix products on the MAU's matrix unit ---------===//
//
// The resident plan (docs/codegen.md X4-X8): rows of C go to groups (each
// its own DRAM block) or all to group 0, then in chunks to L2Bs and L1Bs;
// inside an L1B the sixteen MABs share the L1B's rows either by output quad
// ("slot" mode: MAB m takes the quads q of the L1B's image with q mod 16 =
// m, which the gather l1bmd collects back in order) or by rows ("rows"
// mode: MAB m takes a block of rows with all their N-tiles, collected with
// l1bmm@m runs). A is loaded once per chunk into LM0 of every PE of the L2B
// and block-floated in place; a MAB reads its rows through T. B tiles sit
// in LM1, packed per MAB by the host (constant B) and loaded once (or once
// per K phase), or built on the device from a B read at run time
// (GemmDevice.cpp). Accumulators live in GRF1.
//
//===----------------------------------------------------------------------===//

#include "GemmDetail.h"
#include "MathLib.h"

#include "mncc/emu/Numerics.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
#include <unordered_map>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::gemm;

void gemm::packTileRow(const MatrixUnit &unit, const double *values, int row,
                       uint64_t *peLongWords) {
  int kw = unit.kChunk;
  uint64_t bits[16] = {};
  switch (unit.type) {
  case DeviceType::Half: {
    uint16_t in[16] = {}, out[16] = {};
    for (int j = 0; j < kw; ++j) {
      uint64_t d;
      std::memcpy(&d, &values[j], 8);
      in[j] = emu::reduceFormat<emu::Double, emu::Half>(d);
    }
    emu::toBlockFloatHalf(in, out, unsigned(kw));
    for (int j = 0; j < kw; ++j)
      bits[j] = out[j];
    break;
  }
  case DeviceType::Single: {
    uint32_t in[8] = {}, out[8] = {};
    for (int j = 0; j < kw; ++j) {
      uint64_t d;
      std::memcpy(&d, &values[j], 8);
      in[j] = emu::doubleToSingle(d);
    }
    emu::toBlockFloatPseudoSingle(in, out, unsigned(kw));
    for (int j = 0; j < kw; ++j)
      bits[j] = out[j];
    break;
  }
  default: {
    uint64_t in[4] = {}, out[4] = {};
    for (int j = 0; j < kw; ++j)
      std::memcpy(&in[j], &values[j], 8);
    emu::toBlockFloatDouble(in, out, unsigned(kw));
    for (int j = 0; j < kw; ++j)
      bits[j] = out[j];
    break;
  }
  }
  int per = unit.perLongWord, width = 64 / per, rows = unit.tilePeLongWords;
  for (int pe = 0; pe < 4; ++pe) {
    uint64_t word = 0;
    for (int e = 0; e < per; ++e) {
      uint64_t v = bits[pe * per + e];
      word |= width == 64 ? v : v << (64 - width * (e + 1));
    }
    peLongWords[pe * rows + row] = word;
  }
}

AOperand::~AOperand() = default;

int64_t AOperand::imageSlots(int64_t count, int64_t kcWidth) const {
  AImage image;
  this->image(0, count, 0, kcWidth, image);
  return image.slots;
}
BOperand::~BOperand() = default;

const MatrixUnit &gemm::matrixUnitFor(DeviceType type) {
  static const MatrixUnit half{DeviceType::Half, 'h', 16, 16, 4, 16, 2, 2, 1};
  static const MatrixUnit single{DeviceType::Single, 'g', 8, 8, 2, 8, 1, 2, 1};
  static const MatrixUnit dbl{DeviceType::Double, 'd', 4, 4, 1, 4, 1, 1, 2};
  switch (type) {
  case DeviceType::Single:
    return single;
  case DeviceType::Double:
    return dbl;
  default:
    return half;
  }
}

namespace {

//===----------------------------------------------------------------------===//
// Budgets (long words per PE or per memory)
//===----------------------------------------------------------------------===//

constexpr int64_t kLm0Slots = 2040;      // A and bias images; 2047 is trash
constexpr int64_t kTrashSlot = 2047;
constexpr int64_t kLm1Tiles = 2016;      // B tiles; E tile and constants after
constexpr int64_t kGrf1Data = 224;       // accumulators and outputs
constexpr int64_t kTaLw = 224;           // GRF1: T offsets of A and bias
constexpr int64_t kTbLw = 226;
// X20: the B stream a (chunk, phase) loads, at least this long (16 MV
// chunks), streams in beside the products of the phase before.
constexpr int64_t kOverlappedStreamLw = 32 * 1024;
// L2BM map: the image may take all of it (the B stream before it and the
// outputs after it are not live while it is); an image that leaves the
// stream's buffers alone loads beside the stream (X21).
constexpr int64_t kL2bmImage = 0;
constexpr int64_t kL2bmImageLw = 32 * 1024;
constexpr int64_t kL2bmStream = 16 * 1024;
constexpr int64_t kL2bmOut = 24 * 1024;
constexpr int64_t kL2bmOutLw = 8 * 1024;
constexpr int64_t kL1bmTransit = 0;      // L1BM map
constexpr int64_t kL1bmTransitLw = 2048;
// The B stream's two buffers share the output image's place: the stream
// is done before any gather, and clear of the transit buffer an image
// loading beside it uses (X21).
constexpr int64_t kL1bmStream = 4096;
constexpr int64_t kL1bmOut = 4096;
constexpr int64_t kL1bmOutLw = 4096;
// A padded grid's compacted rows: the transit buffer and the rest of the
// L1BM's first half, spent by the time a chunk's outputs are gathered.
constexpr int64_t kL1bmCompact = 0;
constexpr int64_t kL1bmCompactLw = 4096;

/// How an L1B's sixteen MABs share its work: by output quad, each MAB the
/// quads of the L1B's image with index = m mod 16 (gathered by l1bmd), or
/// by blocks of rows with all their tiles (gathered by l1bmm@m runs).
enum class MabMode { Slot, Rows };
/// How an L2B's eight L1Bs share its rows: blocks of rows (each L1B its
/// 64-long-word pieces of C, l2bm@k), or stripes of columns (every row,
/// L1B k the long words 8k..8k+7 of every 64, l2bmd).
enum class L1bMode { Rows, Stripe };

struct Chunk {
  /// Group whose block holds the rows (group 0 mode), or 0 (uniform).
  unsigned group = 0;
  /// First row: local to each group's block (uniform) or global.
  int64_t first = 0;
  int64_t rows = 0;
  int64_t batch = 0;
  /// L2Bs that take part (1 or 2); L2B l takes rows from first + l * r2,
  /// or with a stride (X18) L2B 0 `rows` rows from first and L2B 1
  /// `secondRows` from first + stride: each L2B its half of the rows.
  unsigned l2bs = 1;
  int64_t stride = 0, secondRows = 0;
};

struct Plan {
  const ProductSpec *spec = nullptr;
  const MatrixUnit *unit = nullptr;
  MabMode mode = MabMode::Slot;
  L1bMode l1bMode = L1bMode::Rows;
  /// Rows mode: each L1B loads only its own rows (else every L1B the
  /// L2B's rows, read through T).
  bool distinct = false;
  /// L1Bs holding rows of some chunk (the others compute nothing stored).
  unsigned activeL1bs = 8;
  /// Slot mode over a padded grid of nt tiles: the L1B's image is compacted
  /// into C's rows of nqo quads before it leaves the L1BM.
  bool compact = false;
  bool uniform = false;
  int64_t nt = 0, nqo = 0, outPerTile = 1;
  /// Rows of a chunk per L2B, per L1B (all of them in stripe mode), per
  /// MAB (rows mode).
  int64_t r2 = 0, r1 = 0, r0 = 0;
  /// What every MAB computes: tilesPerMab tiles (tile(k, m, ti)), each for
  /// mabRows rows, row r at image row rowOff(k, m) + r * rowStep. Slot mode
  /// puts row r of tile ti at the MAB's output quad r * tilesPerMab + ti.
  int64_t tilesPerMab = 1, mabRows = 0, rowStep = 1, tileStep = 1;
  std::array<int64_t, 8> rowOffL1b{}, tileOffL1b{};
  std::array<int64_t, 16> rowOffMab{}, tileOffMab{};
  int64_t kc = 0, kcPerPhase = 0, phases = 1;
  int64_t rowStride = 0;
  // Bias.
  bool biasMatrixPath = false;
  int64_t biasRowQuads = 0;
  // Memory.
  int64_t aSlots = 0, biasBase = 0;
  int64_t accBase = 0, accRowsPad = 0, outBase = 0;
  int64_t tileLw = 0, eTile = 0, zeroLw = 0, betaLw = 0, alphaLw = 0;
  /// The fused activation's bounds (ProductSpec::activation).
  int64_t clampLoLw = 0, clampHiLw = 0;
  std::vector<Chunk> chunks;
  /// The chunks run as a pipeline (X17, pipelinesChunks), set by planMode.
  bool pipelined = false;
  /// LM1 buffers of tileLw long words: two when K runs in phases with a B
  /// stream of kOverlappedStreamLw or more a load, so that the next
  /// phase's B streams in beside this phase's products (X20).
  int64_t lm1Buffers = 1;
  BLayout b;

  int64_t tile(unsigned k, unsigned m, int64_t ti) const {
    return tileOffL1b[k] + tileOffMab[m] + ti * tileStep;
  }
  int64_t mabQuads() const { return mabRows * tilesPerMab; }
};

int64_t rowsPerL2b(const Plan &p) { return p.r2; }

/// How far L2B 1's rows of a chunk start after L2B 0's.
int64_t l2bOffset(const Plan &p, const Chunk &c) {
  return c.stride ? c.stride : rowsPerL2b(p);
}

/// The rows L2B l takes of a chunk.
int64_t rowsOfL2b(const Plan &p, const Chunk &c, unsigned l) {
  if (c.stride)
    return l == 0 ? c.rows : c.secondRows;
  return std::clamp<int64_t>(c.rows - int64_t(l) * rowsPerL2b(p), 0,
                             rowsPerL2b(p));
}

/// Fills the MAB work descriptor for a mode and rows per L2B (r2); false
/// when r2 does not fit the mode.
bool describe(Plan &p, int64_t r2, unsigned l1bs = 8) {
  p.r2 = r2;
  p.rowOffL1b.fill(0);
  p.tileOffL1b.fill(0);
  p.rowOffMab.fill(0);
  p.tileOffMab.fill(0);
  p.rowStep = 1;
  p.tileStep = 1;
  int64_t nq = p.nt;
  if (p.l1bMode == L1bMode::Stripe) {
    p.r1 = r2;
    int64_t b = nq / 16;
    for (unsigned k = 0; k < 8; ++k)
      p.tileOffL1b[k] = 2 * int64_t(k);
    if (8 % b == 0) {
      int64_t rho = 8 / b;
      if (r2 % rho != 0)
        return false;
      p.tilesPerMab = 1;
      p.mabRows = r2 / rho;
      p.rowStep = rho;
      for (unsigned m = 0; m < 16; ++m) {
        p.rowOffMab[m] = int64_t(m) / (2 * b);
        p.tileOffMab[m] = 16 * ((int64_t(m) % (2 * b)) / 2) + m % 2;
      }
    } else {
      p.tilesPerMab = b / 8;
      p.mabRows = r2;
      p.tileStep = 128;
      for (unsigned m = 0; m < 16; ++m)
        p.tileOffMab[m] = 16 * (int64_t(m) / 2) + m % 2;
    }
    return true;
  }
  if (l1bs < 1 || l1bs > 8 || r2 % l1bs != 0)
    return false;
  p.r1 = r2 / l1bs;
  p.activeL1bs = l1bs;
  for (unsigned k = 0; k < 8; ++k)
    p.rowOffL1b[k] = int64_t(k) * p.r1;
  if (p.mode == MabMode::Rows) {
    if (p.r1 % 16 != 0)
      return false;
    p.r0 = p.r1 / 16;
    p.tilesPerMab = p.nt;
    p.mabRows = p.r0;
    for (unsigned m = 0; m < 16; ++m)
      p.rowOffMab[m] = int64_t(m) * p.r0;
    return true;
  }
  if (16 % nq == 0) {
    if ((p.r1 * nq) % 16 != 0)
      return false;
    p.tilesPerMab = 1;
    p.mabRows = p.r1 * nq / 16;
    p.rowStep = 16 / nq;
    for (unsigned m = 0; m < 16; ++m) {
      p.rowOffMab[m] = int64_t(m) / nq;
      p.tileOffMab[m] = int64_t(m) % nq;
    }
    return true;
  }
  p.tilesPerMab = nq / 16;
  p.mabRows = p.r1;
  p.tileStep = 16;
  for (unsigned m = 0; m < 16; ++m)
    p.tileOffMab[m] = m;
  return true;
}

/// The output column matrix row i of tile t computes. Half operands with
/// a single output interleave a tile's columns so that PE p's four singles
/// are long word p of two consecutive output quads (high, low).
int64_t tileColumn(const Plan &p, int64_t t, int i) {
  const MatrixUnit &u = *p.unit;
  if (p.outPerTile == 2) {
    int pe = i / 4, s = i % 4;
    return 16 * t + (s < 2 ? 2 * pe + s : 8 + 2 * pe + (s - 2));
  }
  return t * u.nTile + i;
}

} // namespace

void gemm::appendPlanKey(std::string &key, int64_t value) {
  key.append(reinterpret_cast<const char *>(&value), sizeof value);
}

void gemm::appendPlanKey(std::string &key, const DramForm &form) {
  appendPlanKey(key, int64_t(form.type));
  appendPlanKey(key, int64_t(form.shape.size()));
  for (int64_t e : form.shape)
    appendPlanKey(key, e);
  appendPlanKey(key, int64_t(form.order.size()));
  for (unsigned d : form.order)
    appendPlanKey(key, int64_t(d));
  appendPlanKey(key, int64_t(form.groups));
  appendPlanKey(key, form.base % kMvUnitLongWords);
}

ImageQuad gemm::rowQuad(const DramForm &form, int64_t row, int64_t quad,
                        int perQuad) {
  return RowQuads(form, perQuad)(row, quad);
}

RowQuads::RowQuads(const DramForm &form, int perQuad)
    : Base(form.base), BlockRows(form.rowsPerGroup()),
      RowLongWords(form.rowLongWords()), InnerExtent(form.innerExtent()),
      Groups(form.groups), PerQuad(perQuad) {}

namespace {

/// The rows of the image a unit (group g, L2B l) loads for a chunk.
int64_t unitFirstRow(const Plan &p, const Chunk &c, unsigned g, unsigned l) {
  int64_t first = c.first + int64_t(l) * l2bOffset(p, c);
  if (p.uniform)
    first += int64_t(g) * p.spec->out.rowsPerGroup();
  return first;
}

/// The A and bias quads of one unit for a chunk and K phase.
LoadUnit unitImage(const Plan &p, const Chunk &c, unsigned g, unsigned l,
                   int64_t phase) {
  LoadUnit unit;
  unit.group = g;
  unit.l2b = l;
  const ProductSpec &s = *p.spec;
  int64_t first = unitFirstRow(p, c, g, l);
  // Rows past the L2B's share of the chunk belong to others (or to no
  // one): not loaded.
  int64_t end = first + rowsOfL2b(p, c, l);
  auto clip = [&](int64_t from, int64_t count) {
    return std::clamp<int64_t>(end - from, 0, count);
  };
  if (p.distinct) {
    unit.quads.reserve(size_t(p.activeL1bs * p.r1 * p.kcPerPhase));
    for (unsigned k = 0; k < p.activeL1bs; ++k) {
      AImage image;
      int64_t from = first + int64_t(k) * p.r1;
      s.a->image(from, clip(from, p.r1), phase * p.kcPerPhase, p.kcPerPhase,
                 image);
      for (ImageQuad &q : image.quads) {
        q.l1b = int(k);
        unit.quads.push_back(q);
      }
    }
  } else {
    AImage image;
    s.a->image(first, clip(first, rowsPerL2b(p)), phase * p.kcPerPhase,
               p.kcPerPhase, image);
    unit.quads = std::move(image.quads);
  }
  // The bias: one row of quads, or the rows' quads, after the A image.
  const BiasSpec &bias = s.bias;
  if (bias.kind != BiasSpec::Kind::None && phase == 0) {
    const DramForm &f = bias.form;
    int64_t rq = f.rowLongWords() / kQuadLongWords;
    int perQuad = p.unit->kChunk;
    (void)rq;
    auto add = [&](int64_t slot, int64_t row, int64_t quad) {
      ImageQuad q;
      // Quads past the bias's row (tiles of a padded grid) are zeros.
      if (quad < f.rowLongWords() / kQuadLongWords)
        q = rowQuad(f, row, quad, perQuad);
      else
        q.group = ImageQuad::kZeroQuad;
      q.slot = p.biasBase + slot;
      q.tensor = 1;
      if (bias.kind == BiasSpec::Kind::Scalar ||
          bias.kind == BiasSpec::Kind::Column)
        q.valid = std::min(q.valid, 1);
      unit.quads.push_back(q);
    };
    switch (bias.kind) {
    case BiasSpec::Kind::Row:
      for (int64_t t = 0; t < p.biasRowQuads; ++t)
        add(t, 0, bias.rowPeriodQuads ? t % bias.rowPeriodQuads : t);
      break;
    case BiasSpec::Kind::Scalar:
      add(0, 0, 0);
      break;
    case BiasSpec::Kind::Column:
    case BiasSpec::Kind::Matrix: {
      // By rows, like A: per L1B when A is.
      int64_t perRow = bias.kind == BiasSpec::Kind::Matrix ? p.biasRowQuads : 1;
      unsigned l1bs = p.distinct ? p.activeL1bs : 1;
      int64_t rows = p.distinct ? p.r1 : rowsPerL2b(p);
      for (unsigned k = 0; k < l1bs; ++k)
        for (int64_t r = 0; r < clip(first + int64_t(k) * rows, rows); ++r)
          for (int64_t t = 0; t < perRow; ++t) {
            add(r * perRow + t, first + int64_t(k) * rows + r, t);
            if (p.distinct)
              unit.quads.back().l1b = int(k);
          }
      break;
    }
    default:
      break;
    }
  }
  return unit;
}

std::vector<LoadUnit> chunkUnits(const Plan &p, const Chunk &c,
                                 int64_t phase) {
  std::vector<LoadUnit> units;
  unsigned groups = p.uniform ? kDramGroups : 1;
  for (unsigned g = 0; g < groups; ++g)
    for (unsigned l = 0; l < c.l2bs; ++l)
      units.push_back(unitImage(p, c, g, l, phase));
  return units;
}

LoadBudget imageBudget() {
  LoadBudget budget;
  budget.l2bmBase = kL2bmImage;
  budget.l2bmLongWords = kL2bmImageLw;
  budget.l1bmBase = kL1bmTransit;
  budget.l1bmLongWords = kL1bmTransitLw;
  budget.trashSlot = kTrashSlot;
  return budget;
}

/// imageBudget short of the L2BM's output area: images that a chunk's
/// store, still reading that area, leaves alone (X17).
LoadBudget pipelineBudget() {
  LoadBudget budget = imageBudget();
  budget.l2bmLongWords = kL2bmOut - kL2bmImage;
  return budget;
}

/// Whether the chunks run as a pipeline (X17): one batch and one K phase
/// (B loaded once), and every image clear of the L2BM's output area, which
/// a chunk's store still reads while the next chunk's image lands.
bool pipelinesChunks(const Plan &p) {
  if (p.phases != 1 || p.chunks.size() < 2)
    return false;
  for (const Chunk &c : p.chunks) {
    if (c.batch != p.chunks[0].batch)
      return false;
    int64_t image = imageL2bmLongWords(chunkUnits(p, c, 0), imageBudget());
    if (image < 0 || kL2bmImage + image > kL2bmOut)
      return false;
  }
  return true;
}

ConstantStream stream(const Plan &p) {
  ConstantStream s;
  s.peLongWords = p.tileLw;
  s.mabBroadcast = p.mode == MabMode::Rows;
  s.l1bDistinct = p.l1bMode == L1bMode::Stripe;
  return s;
}

/// Chooses the plan (or explains why none fits).
/// One way of sharing the work among MABs and L1Bs.
struct ModeChoice {
  MabMode mode;
  L1bMode l1bMode;
  /// Slot mode over a grid padded to this many tiles, compacted into C's
  /// rows in the L1BM (0: no padding).
  int64_t paddedTiles = 0;
};

/// Plans one mode with K in `phaseFactor` times the phases LM1 needs
/// (each phase a smaller A image in LM0); false with the reason otherwise,
/// `phasesLeft` false when no more phases are possible. With `toBeat`,
/// also false (without placing any chunk) when no plan of the mode can
/// estimate fewer cycles than *toBeat.
bool planMode(const ProductSpec &s, Plan &p, const ModeChoice &choice,
              int64_t phaseFactor, bool &phasesLeft, std::string &error,
              std::optional<double> toBeat = std::nullopt);

/// A rough cycle count of a plan, to rank the modes: B's stream for every
/// (chunk, phase) whose batch or phase differs from the last (about a
/// cycle per 16 long words of DRAM, L2BM and L1BM traffic), A's image per
/// (chunk, phase) (about a cycle a slot), and the products (four cycles a
/// step; a tile's two mwrite steps hide behind at least two products).
double estimatedCycles(const Plan &p) {
  const MatrixUnit &u = *p.unit;
  int64_t loads = 0, batch = -1, phase = -1;
  for (const Chunk &c : p.chunks)
    for (int64_t ph = 0; ph < p.phases; ++ph)
      if (c.batch != batch || ph != phase) {
        ++loads;
        batch = c.batch;
        phase = ph;
      }
  double bCycles = double(loads) * double(constantStreamLongWords(stream(p))) /
                   16.0;
  double passes = double(p.chunks.size()) * double(p.phases);
  double aCycles = passes * double(p.aSlots);
  int64_t productSteps = ceilDiv(p.mabRows, 4) *
                         (u.type == DeviceType::Double ? 2 : 1);
  double products = passes * double(p.tilesPerMab) * double(p.kcPerPhase) *
                    double(std::max<int64_t>(productSteps, 2)) * 4.0;
  return bCycles + aCycles + products;
}

/// Chooses the plan (or explains why none fits): of the modes the tile
/// count allows, the one of the fewest estimated cycles (the first fit in
/// the order stripes, quads over MABs, rows over MABs, padded grid took
/// stripes for ResNet-18's layer3 3x3 convolution, K 2304, N 256, whose B
/// streams a copy per MAB and is reloaded per chunk and phase: 576176
/// cycles; rows over L1Bs 25136); then the same with K in twice, four
/// times ... as many phases, until every K-chunk is a phase of its own.
/// More phases reload B per phase but shrink A's image, which LM0 (2040
/// slots) bounds: rows x K-chunks of a phase (double Gemm 16 x 512 x 10:
/// 16 rows of 128 K-chunks take two phases).
bool planProduct(const ProductSpec &s, Plan &p, std::string &error) {
  const MatrixUnit &u = *s.unit;
  if (s.outType != u.type &&
      !(u.type == DeviceType::Half && s.outType == DeviceType::Single)) {
    error = "no matrix product from " + std::string(deviceTypeName(u.type)) +
            " operands into a " + std::string(deviceTypeName(s.outType)) +
            " result";
    return false;
  }
  int64_t nt = ceilDiv(std::max<int64_t>(s.n, 1), u.nTile);
  if (nt > 2048) {
    error = "N of " + std::to_string(s.n) + " is more than the kernel tiles";
    return false;
  }
  std::vector<ModeChoice> choices;
  bool oneQuad = s.outType == u.type;
  bool regular = 16 % nt == 0 || nt % 16 == 0;
  int64_t stripes = nt / 16;
  if (oneQuad && regular && nt % 16 == 0 &&
      (8 % stripes == 0 || stripes % 8 == 0))
    choices.push_back({MabMode::Slot, L1bMode::Stripe, 0});
  if (oneQuad && regular)
    choices.push_back({MabMode::Slot, L1bMode::Rows, 0});
  choices.push_back({MabMode::Rows, L1bMode::Rows, 0});
  if (oneQuad && !regular) {
    int64_t padded = nt < 16 ? 16 : roundUp(nt, 16);
    for (int64_t t = 1; t < 16; t *= 2)
      if (t >= nt) {
        padded = t;
        break;
      }
    choices.push_back({MabMode::Slot, L1bMode::Rows, padded});
  }
  std::string first;
  for (int64_t factor = 1;; factor *= 2) {
    bool anyPhasesLeft = false, found = false;
    double bestCycles = 0;
    for (const ModeChoice &choice : choices) {
      Plan trial;
      std::string why;
      bool phasesLeft = false;
      std::optional<double> toBeat;
      if (found)
        toBeat = bestCycles;
      if (planMode(s, trial, choice, factor, phasesLeft, why, toBeat)) {
        double cycles = estimatedCycles(trial);
        if (!found || cycles < bestCycles) {
          p = trial;
          bestCycles = cycles;
        }
        found = true;
        continue;
      }
      anyPhasesLeft |= phasesLeft;
      if (first.empty())
        first = why;
    }
    if (found)
      return true;
    if (!anyPhasesLeft)
      break;
  }
  error = first;
  return false;
}

/// Everything planProduct reads of a spec, or empty when the A operand
/// gives no key (its images then may depend on more than the key says).
/// B's tiles and the bias's values are not read by the planner, only
/// whether they are constants; bBase only by the emission.
std::string planKey(const ProductSpec &s) {
  std::string a = s.a->planKey();
  if (a.empty())
    return a;
  std::string key = std::move(a);
  appendPlanKey(key, int64_t(s.unit->type));
  appendPlanKey(key, int64_t(s.outType));
  appendPlanKey(key, s.out);
  appendPlanKey(key, s.n);
  appendPlanKey(key, s.k);
  appendPlanKey(key, int64_t(s.subProblems.size()));
  for (const SubProblem &sp : s.subProblems) {
    appendPlanKey(key, sp.firstRow);
    appendPlanKey(key, sp.rows);
    appendPlanKey(key, sp.batch);
  }
  appendPlanKey(key, int64_t(s.b != nullptr) |
                         int64_t(s.deviceB != nullptr) << 1 |
                         int64_t(s.plainA != nullptr) << 2);
  if (s.plainA)
    appendPlanKey(key, *s.plainA);
  appendPlanKey(key, int64_t(s.bias.kind));
  if (s.bias.kind != BiasSpec::Kind::None) {
    appendPlanKey(key, s.bias.form);
    appendPlanKey(key, s.bias.rowPeriodQuads);
    uint32_t beta;
    std::memcpy(&beta, &s.bias.beta, sizeof beta);
    appendPlanKey(key, int64_t(beta));
    appendPlanKey(key, int64_t(s.bias.constant));
  }
  return key;
}

/// The plans made so far, by planKey. One Conv is planned up to seven
/// times in a compile (the layout planner's and the selection's matches,
/// the selection's dry run, the constant's size and packing, the
/// emission), twice more per try of a layout, and a batch-8 ResNet
/// convolution's plan checks hundreds of chunks' images (ResNet-50 at
/// batch 8: 26 of its 31 s CPU were the planner's). Kept for the process
/// (a compile, a test binary), dropped whole when it grows past
/// kPlanCacheEntries.
class PlanCache {
public:
  static constexpr size_t kPlanCacheEntries = 1024;

  bool plan(const ProductSpec &s, Plan &p, std::string &error) {
    std::string key = planKey(s);
    if (key.empty())
      return planProduct(s, p, error);
    {
      std::lock_guard<std::mutex> lock(Mutex);
      auto it = Entries.find(key);
      if (it != Entries.end()) {
        ++Counts.reused;
        return answer(it->second, s, p, error);
      }
    }
    Entry entry;
    entry.ok = planProduct(s, entry.plan, entry.error);
    entry.plan.spec = nullptr;
    std::lock_guard<std::mutex> lock(Mutex);
    ++Counts.planned;
    if (Entries.size() >= kPlanCacheEntries)
      Entries.clear();
    return answer(
        Entries.emplace(std::move(key), std::move(entry)).first->second, s, p,
        error);
  }

  PlanCacheCounts counts() {
    std::lock_guard<std::mutex> lock(Mutex);
    return Counts;
  }

private:
  struct Entry {
    bool ok = false;
    Plan plan;
    std::string error;
  };

  static bool answer(const Entry &entry, const ProductSpec &s, Plan &p,
                     std::string &error) {
    if (!entry.ok) {
      error = entry.error;
      return false;
    }
    p = entry.plan;
    p.spec = &s;
    p.unit = s.unit;
    return true;
  }

  std::mutex Mutex;
  std::unordered_map<std::string, Entry> Entries;
  PlanCacheCounts Counts;
};

PlanCache &planCache() {
  static PlanCache cache;
  return cache;
}

bool makePlan(const ProductSpec &s, Plan &p, std::string &error) {
  return planCache().plan(s, p, error);
}

bool planMode(const ProductSpec &s, Plan &p, const ModeChoice &choice,
              int64_t phaseFactor, bool &phasesLeft, std::string &error,
              std::optional<double> toBeat) {
  phasesLeft = false;
  p.spec = &s;
  p.unit = s.unit;
  const MatrixUnit &u = *s.unit;
  p.nt = choice.paddedTiles ? choice.paddedTiles
                            : ceilDiv(std::max<int64_t>(s.n, 1), u.nTile);
  p.compact = choice.paddedTiles != 0;
  p.nqo = s.out.rowLongWords() / kQuadLongWords;
  p.outPerTile = s.outType == u.type ? 1 : 2;
  p.kc = s.a->kChunks();
  p.mode = choice.mode;
  p.l1bMode = choice.l1bMode;
  int64_t stripes = p.nt / 16;
  if (!describe(p, p.l1bMode == L1bMode::Stripe ? 8 * (stripes < 8 ? 8 / stripes : 1)
                                                : 128)) {
    error = "no MAB layout for " + std::to_string(p.nt) + " N-tiles";
    return false;
  }
  // K phases: the MAB's tiles of one phase fit LM1.
  int64_t perKc = p.tilesPerMab * u.tilePeLongWords;
  p.kcPerPhase = std::min(p.kc, kLm1Tiles / perKc);
  if (s.a->maxKcWidth() > 0)
    p.kcPerPhase = std::min(p.kcPerPhase, s.a->maxKcWidth());
  if (p.kcPerPhase < 1) {
    error = "a MAB's tiles of one K-chunk do not fit LM1";
    return false;
  }
  p.phases = ceilDiv(p.kc, p.kcPerPhase);
  // The previous factor's phases, when they were every K-chunk already.
  if (phaseFactor > 1 && p.phases * (phaseFactor / 2) >= p.kc) {
    error = "no more K phases";
    return false;
  }
  p.phases = std::min(p.kc, p.phases * phaseFactor);
  p.kcPerPhase = ceilDiv(p.kc, p.phases);
  p.phases = ceilDiv(p.kc, p.kcPerPhase);
  p.tileLw = p.tilesPerMab * p.kcPerPhase * u.tilePeLongWords;
  // B is reloaded for every (chunk, phase) once K runs in phases: in two
  // LM1 buffers of half the tiles each, the next phase's B streams in
  // while this phase computes (X20), for the same B traffic in all. Only
  // for a stream long enough to hide the work of the phases it adds (their
  // images and block floats): MobileNetV2's 576 -> 96 convolutions, 6912
  // long words a phase, lost 6272 cycles each (12730 -> 19002).
  p.lm1Buffers = 1;
  if (p.phases > 1 && !s.deviceB && kLm1Tiles / 2 / perKc >= 1 &&
      constantStreamLongWords(stream(p)) >= kOverlappedStreamLw) {
    p.kcPerPhase = std::min(p.kcPerPhase, kLm1Tiles / 2 / perKc);
    p.phases = ceilDiv(p.kc, p.kcPerPhase);
    p.kcPerPhase = ceilDiv(p.kc, p.phases);
    p.lm1Buffers = 2;
  }
  phasesLeft = p.phases < p.kc;
  p.rowStride = s.a->rowStride(p.kcPerPhase);
  p.tileLw = p.tilesPerMab * p.kcPerPhase * u.tilePeLongWords;

  // The bias: vector operations into the accumulators where the lanes
  // match, else a matrix product with a tile that places it.
  const BiasSpec &bias = s.bias;
  p.biasMatrixPath = bias.kind == BiasSpec::Kind::Column ||
                     bias.kind == BiasSpec::Kind::Scalar ||
                     (bias.kind != BiasSpec::Kind::None && p.outPerTile == 2);
  if (bias.kind != BiasSpec::Kind::None) {
    if (bias.form.type != u.type) {
      error = "a " + std::string(deviceTypeName(bias.form.type)) +
              " bias with " + std::string(deviceTypeName(u.type)) +
              " operands";
      return false;
    }
    p.biasRowQuads = bias.form.rowLongWords() / kQuadLongWords;
    if (bias.kind == BiasSpec::Kind::Row ||
        bias.kind == BiasSpec::Kind::Matrix)
      p.biasRowQuads = std::max(p.biasRowQuads, p.nt);
  }

  // Rows: per group (uniform) or everything in group 0.
  const DramForm &out = s.out;
  int64_t rowLw = out.rowLongWords();
  // How many rows the busiest group has.
  int64_t groupRows = out.groups == kDramGroups ? out.rowsPerGroup()
                                                : out.rows();
  // Rows per L2B: as many as the budgets allow, a whole number of 64-long-
  // word units of C (and of the L1Bs' pieces), a whole number of rows per
  // MAB.
  int64_t align = s.a->rowAlign();
  auto aligned = [&](int64_t r2, unsigned l1bs) {
    if (r2 <= 0 || (r2 * rowLw) % kMvUnitLongWords != 0 || r2 % align != 0)
      return false;
    if (p.distinct && (r2 / l1bs) % align != 0)
      return false;
    Plan trial = p;
    if (!describe(trial, r2, l1bs))
      return false;
    if (p.l1bMode == L1bMode::Rows &&
        (trial.r1 * rowLw) % kMvUnitLongWords != 0)
      return false;
    if (p.mode == MabMode::Rows && (trial.r0 * p.nqo) % 4 != 0)
      return false;
    return true;
  };
  auto fits = [&](int64_t r2, unsigned l1bs) {
    Plan trial = p;
    describe(trial, r2, l1bs);
    int64_t rowsPad = roundUp(trial.mabRows, 4);
    int64_t acc = trial.tilesPerMab * rowsPad * u.accPeLongWords;
    int64_t outs = 0;
    if (p.outPerTile == 1 && u.type == DeviceType::Half)
      outs = roundUp(trial.tilesPerMab * rowsPad, 4);
    if (acc + outs > kGrf1Data)
      return false;
    int64_t l1bImage = p.l1bMode == L1bMode::Stripe ? r2 * rowLw / 8
                                                     : trial.r1 * rowLw;
    if (p.compact) {
      // The padded grid at kL1bmOut, C's rows compacted at kL1bmCompact.
      if (l1bImage > kL1bmCompactLw)
        return false;
      l1bImage = trial.r1 * p.nt * kQuadLongWords;
    }
    // The L2BM holds the rows a chunk really has.
    int64_t used = p.l1bMode == L1bMode::Stripe
                       ? r2
                       : std::min(r2, roundUp(groupRows, trial.r1));
    (void)used;
    if (l1bImage > kL1bmOutLw || roundUp(used * rowLw, 256) > kL2bmOutLw)
      return false;
    int64_t imageRows = p.distinct ? trial.r1 : r2;
    int64_t aSlots = s.a->imageSlots(imageRows, p.kcPerPhase);
    int64_t biasSlots = bias.kind == BiasSpec::Kind::Matrix
                            ? imageRows * p.biasRowQuads
                        : bias.kind == BiasSpec::Kind::Column ? imageRows
                        : bias.kind == BiasSpec::Kind::Row   ? p.biasRowQuads
                        : bias.kind == BiasSpec::Kind::Scalar ? 1
                                                              : 0;
    return roundUp(aSlots, 4) + biasSlots <= kLm0Slots;
  };
  // Chunks of a row block size: uniform when every group does the same on
  // its own block and the images agree, else every row in group 0. A chunk
  // takes both L2Bs when their images lie out alike, else one. Each image
  // within placementBudget.
  LoadBudget placementBudget = imageBudget();
  auto placeChunks = [&]() {
    int64_t r2 = rowsPerL2b(p);
    // Every K phase loads its own image (other taps, other channels), and
    // each must lie out alike.
    auto alike = [&](const Chunk &c) {
      for (int64_t phase = 0; phase < p.phases; ++phase)
        if (!sameLayout(chunkUnits(p, c, phase), placementBudget))
          return false;
      return true;
    };
    // Both L2Bs by halves (X18), when two L2Bs' row blocks r2 apart do
    // not lie out alike (ResNet's first convolution over packed taps: its
    // rows move by 12 long words, and by whole MV units only every 112
    // rows): L2B 0 takes rows [row, row + S), L2B 1 [row + S, end), each
    // in blocks of r2, for the first S from half the rows on whose first
    // pair of blocks lies out alike.
    auto addHalves = [&](unsigned group, int64_t row, int64_t end,
                         int64_t batch, std::vector<Chunk> &chunks) {
      int64_t total = end - row, half = ceilDiv(total, 2);
      auto pair = [&](int64_t first, int64_t stride) {
        Chunk c{group,
                first,
                std::min(r2, row + stride - first),
                batch,
                2,
                stride,
                std::clamp<int64_t>(end - first - stride, 0, r2)};
        // L2B 1 done: L2B 0 alone, its store still kept to its own rows.
        if (c.secondRows == 0)
          c.l2bs = 1;
        return c;
      };
      for (int64_t stride = half; stride < total && stride < half + 64;
           ++stride) {
        if ((stride * rowLw) % kMvUnitLongWords != 0 || stride % align != 0)
          continue;
        if (!alike(pair(row, stride)))
          continue;
        chunks.clear();
        for (int64_t first = row; first < row + stride; first += r2) {
          Chunk c = pair(first, stride);
          if (alike(c)) {
            chunks.push_back(c);
            continue;
          }
          // A pair that does not lie out alike (a half's last, shorter
          // block): each block a chunk of L2B 0 alone, kept to its rows.
          Chunk second = c;
          c.l2bs = 1;
          c.secondRows = 0;
          if (!alike(c))
            return false;
          chunks.push_back(c);
          if (second.secondRows > 0) {
            second.first += stride;
            second.rows = second.secondRows;
            second.secondRows = 0;
            second.l2bs = 1;
            if (!alike(second))
              return false;
            chunks.push_back(second);
          }
        }
        return true;
      }
      return false;
    };
    // Pairs of blocks r2 apart, one L2B where a pair does not lie out
    // alike; by halves instead when that takes fewer chunks.
    auto addChunks = [&](unsigned group, int64_t row, int64_t end,
                         int64_t batch) {
      std::vector<Chunk> pairs;
      bool pairFailed = false;
      for (int64_t at = row; at < end;) {
        Chunk c{group, at, std::min(2 * r2, end - at), batch, 2};
        if (c.rows <= r2 || !alike(c)) {
          pairFailed |= c.rows > r2;
          c.l2bs = 1;
          c.rows = std::min(r2, end - at);
          if (!alike(c))
            return false;
        }
        pairs.push_back(c);
        at += c.rows;
      }
      std::vector<Chunk> halves;
      bool byHalves = pairFailed && addHalves(group, row, end, batch, halves) &&
                      halves.size() < pairs.size();
      const std::vector<Chunk> &chosen = byHalves ? halves : pairs;
      p.chunks.insert(p.chunks.end(), chosen.begin(), chosen.end());
      return true;
    };
    // Images start on a multiple of the operand's alignment.
    if (out.groups == kDramGroups && out.rowsPerGroup() % align != 0)
      return false;
    bool uniformCandidate = out.groups == kDramGroups &&
                            s.subProblems.size() == 1 &&
                            s.subProblems[0].firstRow == 0 &&
                            s.subProblems[0].rows == out.rows();
    p.chunks.clear();
    if (uniformCandidate) {
      p.uniform = true;
      if (addChunks(0, 0, out.rowsPerGroup(), 0))
        return true;
    }
    p.uniform = false;
    p.chunks.clear();
    for (const SubProblem &sp : s.subProblems) {
      int64_t row = sp.firstRow, end = sp.firstRow + sp.rows;
      while (row < end) {
        unsigned group = unsigned(row / out.rowsPerGroup());
        int64_t blockEnd =
            std::min(end, int64_t(group + 1) * out.rowsPerGroup());
        if (!addChunks(group, row, blockEnd, sp.batch))
          return false;
        row = blockEnd;
      }
    }
    return true;
  };

  // Per-L1B images first (each L1B loads only its rows), then one image
  // every L1B shares; for each, the largest row block the budgets allow
  // (up to the busiest group's rows), then larger ones, should the images
  // of the first not lie out alike (rows of different batches, groups or
  // border taps in one L1B).
  struct Trial {
    bool distinct;
    int64_t r2;
    unsigned l1bs;
  };
  std::vector<Trial> trials, smallerTrials;
  bool anyFit = false;
  for (int attempt = 0; attempt < 2; ++attempt) {
    p.distinct = attempt == 0;
    if (p.distinct && p.l1bMode != L1bMode::Rows)
      continue;
    // (rows per L2B, L1Bs sharing them): stripes use every L1B; blocks of
    // rows may use fewer, which keeps a shared image small.
    struct Candidate {
      int64_t r2;
      unsigned l1bs;
    };
    std::vector<Candidate> candidates;
    for (unsigned l1bs = 8; l1bs >= 1; --l1bs) {
      if (p.l1bMode == L1bMode::Stripe && l1bs != 8)
        break;
      for (int64_t r2 = l1bs; r2 <= 8192; r2 += l1bs) {
        if (!aligned(r2, l1bs))
          continue;
        if (!fits(r2, l1bs))
          break;
        candidates.push_back({r2, l1bs});
        if (r2 >= groupRows)
          break;
      }
      // Per-L1B images: every L1B takes its rows whatever the count.
      if (p.distinct)
        break;
    }
    if (candidates.empty())
      continue;
    anyFit = true;
    // Most of the group's rows per chunk first, then more L1Bs; then the
    // next sizes.
    auto score = [&](const Candidate &c) {
      return std::make_pair(std::min(c.r2, groupRows), c.l1bs);
    };
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](const Candidate &a, const Candidate &b) {
                       return score(a) > score(b);
                     });
    for (size_t i = 0; i < candidates.size() && i < 6; ++i)
      trials.push_back({p.distinct, candidates[i].r2, candidates[i].l1bs});
    // Smaller blocks, for images that leave the L2BM's output area free
    // (X17): the largest candidates at most 3/4, 1/2 and 1/4 of the first.
    for (int64_t part : {3, 2, 1}) {
      int64_t most = std::min(candidates[0].r2, groupRows) * part / 4;
      for (const Candidate &c : candidates)
        if (c.r2 <= most) {
          smallerTrials.push_back({p.distinct, c.r2, c.l1bs});
          break;
        }
    }
  }
  // A trial's MAB descriptor and image size, all but its chunks.
  auto setUp = [&](Plan &q, const Trial &t) {
    q.distinct = t.distinct;
    describe(q, t.r2, t.l1bs);
    q.accRowsPad = roundUp(q.mabRows, 4);
    if (q.l1bMode == L1bMode::Rows)
      q.activeL1bs = unsigned(std::min<int64_t>(
          q.activeL1bs, ceilDiv(std::min(q.r2, groupRows), q.r1)));
    q.aSlots = s.a->imageSlots(q.distinct ? q.r1 : q.r2, q.kcPerPhase);
    // The block-float conversion runs over A's slots four at a time in
    // place: the bias starts on the next multiple of four, or the last
    // run would convert its first slots as A (ResNet-18's 512 x 512
    // layer4 conv lost its first 32 channels' bias so).
    q.biasBase = roundUp(q.aSlots, 4);
  };
  // The fewest cycles a trial's plan can estimate: its chunks hold at most
  // 2 r2 rows each (both L2Bs), so at least the busiest group's rows (or
  // all the sub-problems' rows, if fewer) over 2 r2 of them; every term
  // of estimatedCycles grows with the chunks. The trials are placed in
  // order and the first placed is the mode's plan, so the mode cannot
  // beat toBeat once no trial left can (the ResNets' and MobileNetV2's
  // rows over MABs, estimated at 2 to 10 times quads over MABs, placed
  // every chunk of a batch-8 layer for nothing).
  std::vector<double> fewestFrom(trials.size() + 1,
                                 std::numeric_limits<double>::infinity());
  if (toBeat) {
    int64_t subRows = 0;
    for (const SubProblem &sp : s.subProblems)
      subRows += sp.rows;
    int64_t rows = std::min(out.rowsPerGroup(), subRows);
    for (size_t j = trials.size(); j-- > 0;) {
      Plan bound = p;
      setUp(bound, trials[j]);
      bound.chunks.assign(size_t(ceilDiv(rows, 2 * bound.r2)), Chunk());
      fewestFrom[j] = std::min(fewestFrom[j + 1], estimatedCycles(bound));
    }
  }
  bool placed = false;
  for (size_t j = 0; j < trials.size() && !placed; ++j) {
    if (toBeat && fewestFrom[j] >= *toBeat) {
      error = "a mode that cannot beat the best estimate";
      return false;
    }
    setUp(p, trials[j]);
    placed = placeChunks();
  }
  // Chunks that cannot pipeline (X17) because their images reach into the
  // L2BM's output area: with one K phase and one batch, the largest
  // smaller block whose images leave it free, so that the transfers run
  // beside the products, unless that takes more than twice the chunks. A
  // plan of one chunk stays: splitting it only adds a chunk's overheads.
  bool oneBatch = std::all_of(
      s.subProblems.begin(), s.subProblems.end(),
      [&](const SubProblem &sp) { return sp.batch == s.subProblems[0].batch; });
  if (placed)
    p.pipelined = pipelinesChunks(p);
  if (placed && p.phases == 1 && oneBatch && p.chunks.size() >= 2 &&
      !p.pipelined) {
    Plan whole = p;
    placementBudget = pipelineBudget();
    std::vector<Trial> all = trials;
    all.insert(all.end(), smallerTrials.begin(), smallerTrials.end());
    bool piped = false;
    for (size_t j = 0; j < all.size() && !piped; ++j) {
      setUp(p, all[j]);
      piped = placeChunks() && pipelinesChunks(p);
    }
    placementBudget = imageBudget();
    if (!piped || p.chunks.size() > 2 * whole.chunks.size())
      p = whole;
    else
      p.pipelined = true;
  }
  if (!anyFit) {
    error = "no row block of C fits the memories (N " + std::to_string(s.n) +
            ", K " + std::to_string(s.k) + ")";
    return false;
  }
  if (!placed) {
    error = "the rows' images do not lie out alike in the L2BMs";
    return false;
  }
  p.accBase = 0;
  p.outBase = p.tilesPerMab * p.accRowsPad * u.accPeLongWords;
  p.eTile = roundUp(p.lm1Buffers * p.tileLw, 16);
  p.zeroLw = p.eTile + 16;
  p.betaLw = p.eTile + 17;
  p.alphaLw = p.eTile + 18;
  p.clampLoLw = p.eTile + 19;
  p.clampHiLw = p.eTile + 20;
  for (size_t i = 1; i < s.subProblems.size(); ++i)
    if ((s.subProblems[i].firstRow * rowLw) % kMvUnitLongWords != 0) {
      error = "batches of C that share an MV unit";
      return false;
    }

  // B.
  BLayout &b = p.b;
  b.kChunks = p.kc;
  b.mabBroadcast = p.mode == MabMode::Rows;
  b.l1bDistinct = p.l1bMode == L1bMode::Stripe;
  b.peLongWords = p.tileLw;
  int64_t batches = 0;
  for (const SubProblem &sp : s.subProblems)
    batches = std::max(batches, sp.batch + 1);
  b.batches = batches;
  b.imageLongWords = batches * p.phases * constantStreamLongWords(stream(p));
  return true;
}

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

/// The products of one (chunk, phase), scheduled step by step: at most one
/// matrix write and one product a step, a register written only after the
/// products that read its old tile, an accumulator read three steps after
/// the product that wrote it (MAU results land after ten cycles).
class ProductSchedule {
public:
  explicit ProductSchedule(int64_t firstStep) : First(firstStep) {}

  struct Step {
    std::string write, product;
  };

  int64_t placeWrite(int64_t earliest, const std::string &text) {
    int64_t s = std::max(earliest, First);
    while (at(s).write.size())
      ++s;
    at(s).write = text;
    return s;
  }
  int64_t placeProduct(int64_t earliest, const std::vector<std::string> &texts) {
    int64_t s = std::max(earliest, First);
    for (;; ++s) {
      bool free = true;
      for (size_t i = 0; i < texts.size(); ++i)
        free &= at(s + int64_t(i)).product.empty();
      if (free)
        break;
    }
    for (size_t i = 0; i < texts.size(); ++i)
      at(s + int64_t(i)).product = texts[i];
    return s + int64_t(texts.size()) - 1;
  }
  void emit(VsmWriter &out) const {
    int64_t idle = 0;
    for (const Step &step : Steps) {
      if (step.write.empty() && step.product.empty()) {
        ++idle;
        continue;
      }
      out.nop(unsigned(idle));
      idle = 0;
      out.step({step.product, step.write});
    }
  }
  int64_t end() const { return First + int64_t(Steps.size()); }

private:
  Step &at(int64_t s) {
    size_t i = size_t(s - First);
    if (i >= Steps.size())
      Steps.resize(i + 1);
    return Steps[i];
  }
  int64_t First;
  std::vector<Step> Steps;
};

std::string reg(int which) { return which ? "y" : "x"; }

/// mwrite of the tile at LM1 long word `at` into register `which`.
std::vector<std::string> tileWrites(const MatrixUnit &u, int64_t at,
                                    int which) {
  std::vector<std::string> steps;
  std::string prefix(1, u.prefix);
  switch (u.prefix) {
  case 'h':
    steps.push_back("hmwrite " + llRun(PeMemory::LM1, at) + " $ll" +
                    reg(which) + "0");
    steps.push_back("hmwrite " + llRun(PeMemory::LM1, at + 8) + " $ll" +
                    reg(which) + "8");
    break;
  case 'g':
    steps.push_back("gmwrite " + lwRun(PeMemory::LM1, at) + " $l" +
                    reg(which) + "0");
    steps.push_back("gmwrite " + lwRun(PeMemory::LM1, at + 4) + " $l" +
                    reg(which) + "4");
    break;
  default:
    steps.push_back("dmwrite " + lwRun(PeMemory::LM1, at) + " $l" +
                    reg(which) + "0");
    break;
  }
  return steps;
}

/// The product step(s) of four rows: A through T at `a`, accumulators at
/// GRF1 long word `acc`; `first` without an addend.
std::vector<std::string> productSteps(const MatrixUnit &u, int which,
                                      const std::array<int64_t, 4> &a,
                                      int64_t acc, bool first) {
  std::string m = " $l" + reg(which) + " ";
  std::string aOp = lwAnyT(a);
  switch (u.prefix) {
  case 'h': {
    std::string c = llRun(PeMemory::GRF1, acc);
    return {first ? "hmmul" + m + aOp + " " + c
                  : "hmfma" + m + aOp + " " + c + " " + c};
  }
  case 'g': {
    std::string c = lwRun(PeMemory::GRF1, acc);
    return {first ? "gmmul" + m + aOp + " " + c
                  : "gmfma" + m + aOp + " " + c + " " + c};
  }
  default: {
    // Rows 0, 1 into PEs 0, 1 (the others pass the addend), then rows 2, 3
    // with the first step's result as the addend.
    std::string c = lwRun(PeMemory::GRF1, acc);
    return {first ? "dmmulu" + m + aOp + " $nowrite"
                  : "dmfmau" + m + aOp + " " + c + " $nowrite",
            "dmfmad" + m + aOp + " $mauf " + c};
  }
  }
}

/// Slots (relative to the MAB's T offset) of four consecutive rows of a MAB
/// starting at row j, for K-chunk slot `kcSlot`.
std::array<int64_t, 4> rowSlots(const Plan &p, int64_t j, int64_t kcSlot) {
  std::array<int64_t, 4> slots;
  for (int c = 0; c < 4; ++c)
    slots[c] = (j + c) * p.rowStep * p.rowStride + kcSlot;
  return slots;
}

int64_t accAt(const Plan &p, int64_t ti, int64_t row) {
  return p.accBase + (ti * p.accRowsPad + row) * p.unit->accPeLongWords;
}

/// A step of block-float conversions in place: `cycles` LM0 slots from
/// `first` (relative to the MAB's base address), one a cycle.
struct BfnRun {
  int64_t first = 0;
  int cycles = 4;
};

/// The runs that cover the LM0 slots a MAB's products read in a phase
/// (relative to its base, the T offset of its first row), each once, a
/// run's last cycles left out where they would pass its last such slot;
/// empty when that is no fewer steps than the whole image (aEnd slots),
/// or when some MAB's runs would reach the bias quads or the slots kept
/// free.
std::vector<BfnRun> ownBfnRuns(const Plan &p, const AImage &image, int64_t kcs,
                               int64_t aEnd) {
  std::vector<int64_t> needed;
  for (int64_t j = 0; j < p.mabRows; ++j)
    for (int64_t k = 0; k < kcs; ++k)
      needed.push_back(j * p.rowStep * p.rowStride + image.kcSlot[size_t(k)]);
  std::sort(needed.begin(), needed.end());
  std::vector<BfnRun> runs;
  for (int64_t s : needed) {
    if (!runs.empty() && s < runs.back().first + 4) {
      runs.back().cycles = int(s - runs.back().first) + 1;
      continue;
    }
    runs.push_back({s, 1});
  }
  if (runs.empty() || int64_t(runs.size()) >= ceilDiv(aEnd, 4))
    return {};
  int64_t last = runs.back().first + runs.back().cycles - 1;
  int64_t limit =
      p.spec->bias.kind != BiasSpec::Kind::None ? p.biasBase : kLm0Slots;
  // L1Bs past the active ones compute rows nobody stores.
  unsigned l1bs = p.l1bMode == L1bMode::Stripe ? 8 : p.activeL1bs;
  for (unsigned k = 0; k < l1bs; ++k)
    for (unsigned m = 0; m < 16; ++m) {
      int64_t base = (p.distinct ? 0 : p.rowOffL1b[k]) * p.rowStride +
                     p.rowOffMab[m] * p.rowStride;
      // The base address register holds the low 12 bits of a word
      // address.
      if (base + last >= limit || 2 * base >= 4096)
        return {};
    }
  return runs;
}

/// The T offset tables (words) of an image read by rows (perRow slots a
/// row) and by tiles (perTile slots a tile).
void offsetTables(const Plan &p, std::vector<int64_t> &l1b,
                  std::vector<int64_t> &mab, int64_t perRow,
                  int64_t perTile) {
  l1b.assign(8, 0);
  mab.assign(16, 0);
  // Per-L1B images start at the L1B's own first row.
  for (unsigned k = 0; k < 8; ++k)
    l1b[k] = 2 * ((p.distinct ? 0 : p.rowOffL1b[k]) * perRow +
                  p.tileOffL1b[k] * perTile);
  for (unsigned m = 0; m < 16; ++m)
    mab[m] = 2 * (p.rowOffMab[m] * perRow + p.tileOffMab[m] * perTile);
}

/// Builds the bias tile of the matrix path into LM1: row i takes beta at
/// one element (column 0 of the bias quad for a Column or Scalar bias, the
/// column the row computes for interleaved single outputs), zeros
/// elsewhere, then block floats.
bool buildBiasTile(VsmWriter &out, PeSetup &setup, const Plan &p,
                   std::string &error) {
  const MatrixUnit &u = *p.unit;
  float beta = p.spec->bias.beta;
  uint32_t fbits;
  std::memcpy(&fbits, &beta, 4);
  int rows = u.tilePeLongWords;
  for (int r = 0; r < rows; r += 4)
    out.step({"zero " + lwRun(PeMemory::LM1, p.eTile + r)});
  out.nop(2);
  bool column = p.spec->bias.kind == BiasSpec::Kind::Column ||
                p.spec->bias.kind == BiasSpec::Kind::Scalar;
  for (int i = 0; i < rows; ++i) {
    int element = column ? 0 : int(tileColumn(p, 0, i));
    std::string dest = lwFixed(PeMemory::LM1, p.eTile + i);
    if (u.type == DeviceType::Half) {
      // beta in every lane, written only where the element lives.
      uint16_t h = emu::singleToHalf(fbits);
      unsigned entry = setup.halfElementScratch(element);
      out.step({"imm " + immWord(uint32_t(h) << 16 | h) + " " + dest +
                "/$imr" + std::to_string(entry)});
      out.nop(2);
      continue;
    }
    // Single and double tiles need element 0 only: PE 0's first word.
    std::optional<unsigned> mask = setup.peMask(0, error);
    if (!mask)
      return false;
    uint32_t word = fbits;
    if (u.type == DeviceType::Double) {
      double d = beta;
      uint64_t bits;
      std::memcpy(&bits, &d, 8);
      if (uint32_t(bits) != 0) {
        error = "a double bias scale needs a 32-bit payload";
        return false;
      }
      word = uint32_t(bits >> 32);
    }
    out.step({"immu " + immWord(word) + " " + dest + "/$imr" +
              std::to_string(*mask)});
  }
  out.nop(2);
  for (int r = 0; r < rows; r += 4)
    out.step({std::string(1, u.prefix) + "bfn " +
              lwRun(PeMemory::LM1, p.eTile + r) + " " +
              lwRun(PeMemory::LM1, p.eTile + r)});
  out.nop(2);
  return true;
}

/// beta in every element of LM1's beta long word, zero in the zero long
/// word.
void emitConstants(VsmWriter &out, const Plan &p) {
  const MatrixUnit &u = *p.unit;
  float beta = p.spec->bias.beta;
  uint32_t fbits;
  std::memcpy(&fbits, &beta, 4);
  out.step({"zero " + lwFixed(PeMemory::LM1, p.zeroLw)});
  if (u.type == DeviceType::Half) {
    uint16_t h = emu::singleToHalf(fbits);
    out.step({"imm " + immWord(uint32_t(h) << 16 | h) + " " +
              lwFixed(PeMemory::LM1, p.betaLw)});
  } else if (u.type == DeviceType::Single) {
    out.step({"imm " + immWord(fbits) + " " + lwFixed(PeMemory::LM1, p.betaLw)});
  }
  out.nop(2);
}

/// Accumulators start at beta * bias: vector products where the bias
/// quads' lanes are the accumulators' (T = bias offsets).
void emitBiasVector(VsmWriter &out, const Plan &p, int64_t &lastWrite) {
  const MatrixUnit &u = *p.unit;
  const BiasSpec &bias = p.spec->bias;
  bool scaled = bias.beta != 1;
  for (int64_t ti = 0; ti < p.tilesPerMab; ++ti) {
    int64_t tileOffset = ti * p.tileStep;
    for (int64_t j = 0; j < p.mabRows; j += 4) {
      std::array<int64_t, 4> slots;
      for (int c = 0; c < 4; ++c) {
        int64_t row = (j + c) * p.rowStep;
        slots[c] = p.biasBase + tileOffset +
                   (bias.kind == BiasSpec::Kind::Matrix
                        ? row * p.biasRowQuads
                        : 0);
      }
      std::string a = lwAnyT(slots);
      int64_t acc = accAt(p, ti, j);
      std::string beta = lwFixed(PeMemory::LM1, p.betaLw);
      switch (u.prefix) {
      case 'h':
        out.step({(scaled ? "hvmul " + a + " " + beta : "hvpassa " + a) + " " +
                  llRun(PeMemory::GRF1, acc)});
        break;
      case 'g':
        out.step({(scaled ? "fvmul " + a + " " + beta : "fvpassa " + a) + " " +
                  lwRun(PeMemory::GRF1, acc)});
        break;
      default:
        if (!scaled) {
          out.step({"lpassa " + a + " " + lwRun(PeMemory::GRF1, acc)});
        } else {
          // beta for double sits in GRF0 (see emitProduct).
          std::string b = lwFixed(PeMemory::GRF0, 0);
          out.step({"dvmulu " + a + " " + b + " $nowrite"});
          out.step({"dvfmad " + a + " " + b + " $mauf " +
                    lwRun(PeMemory::GRF1, acc)});
        }
        break;
      }
    }
  }
  out.nop(2);
  lastWrite = 0;
}

/// The same through the matrix unit: acc = tile(bias) x quad, the tile in
/// register y, the bias quads block floats through T.
void emitBiasMatrix(VsmWriter &out, const Plan &p) {
  const MatrixUnit &u = *p.unit;
  const BiasSpec &bias = p.spec->bias;
  for (const std::string &w : tileWrites(u, p.eTile, 1))
    out.step({w});
  for (int64_t ti = 0; ti < p.tilesPerMab; ++ti) {
    int64_t tileOffset = ti * p.tileStep;
    for (int64_t j = 0; j < p.mabRows; j += 4) {
      std::array<int64_t, 4> slots;
      for (int c = 0; c < 4; ++c) {
        int64_t row = (j + c) * p.rowStep;
        switch (bias.kind) {
        case BiasSpec::Kind::Column:
          slots[c] = p.biasBase + row;
          break;
        case BiasSpec::Kind::Scalar:
          slots[c] = p.biasBase;
          break;
        case BiasSpec::Kind::Matrix:
          slots[c] = p.biasBase + row * p.biasRowQuads + tileOffset;
          break;
        default:
          slots[c] = p.biasBase + tileOffset;
          break;
        }
      }
      for (const std::string &s :
           productSteps(u, 1, slots, accAt(p, ti, j), true))
        out.step({s});
    }
  }
  out.nop(2);
}

} // namespace

PlanCacheCounts gemm::planCacheCounts() { return planCache().counts(); }

bool gemm::estimateCycles(const ProductSpec &spec, double &cycles,
                          std::string &error) {
  Plan p;
  if (!makePlan(spec, p, error))
    return false;
  cycles = estimatedCycles(p);
  return true;
}

bool gemm::planBLayout(const ProductSpec &spec, BLayout &layout,
                       std::string &error) {
  int64_t streamed = 0;
  if (splitApplies(spec, streamed)) {
    layout = BLayout();
    layout.imageLongWords = streamed;
    layout.split = true;
    return true;
  }
  if (streamApplies(spec, streamed)) {
    layout = BLayout();
    layout.imageLongWords = streamed;
    layout.streamed = true;
    return true;
  }
  Plan p;
  if (!makePlan(spec, p, error))
    return false;
  layout = p.b;
  return true;
}

void gemm::packBImage(const ProductSpec &spec, const BLayout &layout,
                      DramImage &image) {
  if (layout.split) {
    packSplitB(spec, image);
    return;
  }
  if (layout.streamed) {
    packStreamB(spec, image);
    return;
  }
  Plan p;
  std::string error;
  makePlan(spec, p, error);
  const MatrixUnit &u = *spec.unit;
  image.groups = kDramGroups;
  image.longWordsPerGroup = layout.imageLongWords;
  std::vector<uint64_t> data(size_t(layout.imageLongWords), 0);
  ConstantStream cs = stream(p);
  int64_t streamLw = constantStreamLongWords(cs);
  std::vector<uint64_t> tile(size_t(4 * u.tilePeLongWords));
  int64_t columns[16];
  unsigned l1bs = cs.l1bDistinct ? 8 : 1;
  unsigned mabs = cs.mabBroadcast ? 1 : 16;
  for (int64_t batch = 0; batch < layout.batches; ++batch)
    for (int64_t phase = 0; phase < p.phases; ++phase) {
      int64_t base = (batch * p.phases + phase) * streamLw;
      for (unsigned k = 0; k < l1bs; ++k)
        for (unsigned m = 0; m < mabs; ++m)
          for (int64_t ti = 0; ti < p.tilesPerMab; ++ti)
            for (int64_t kk = 0; kk < p.kcPerPhase; ++kk) {
              int64_t kc = phase * p.kcPerPhase + kk;
              int64_t t = p.tile(k, m, ti);
              for (int i = 0; i < u.tilePeLongWords; ++i) {
                int64_t column = tileColumn(p, t, i);
                columns[i] = kc < p.kc && column < spec.n ? column : -1;
              }
              std::fill(tile.begin(), tile.end(), 0);
              if (kc < p.kc)
                spec.b->tile(batch, kc, columns, tile.data());
              int64_t j0 = (ti * p.kcPerPhase + kk) * u.tilePeLongWords;
              for (unsigned pe = 0; pe < 4; ++pe)
                for (int i = 0; i < u.tilePeLongWords; ++i)
                  data[size_t(base + constantStreamOffset(cs, j0 + i, k, m,
                                                          pe))] =
                      tile[size_t(pe * u.tilePeLongWords + i)];
            }
    }
  for (unsigned g = 0; g < kDramGroups; ++g)
    image.data[g] = data;
}

bool gemm::emitProduct(const ProductSpec &spec, VsmWriter &out,
                       KernelDescription &description, std::string &error);

namespace {

/// The long word in GRF1 that holds output quad `q` of MAB row `row`
/// (q counts the row's output quads: tile q / outPerTile): the converted
/// half, or the accumulator itself.
int64_t outputLongWord(const Plan &p, int64_t row, int64_t q) {
  const MatrixUnit &u = *p.unit;
  int64_t ti = q / p.outPerTile;
  if (u.type == DeviceType::Half && p.outPerTile == 1)
    return p.outBase + row * p.tilesPerMab + ti;
  return accAt(p, ti, row) + q % p.outPerTile;
}

/// Converts the accumulators of half products into half outputs.
void emitConversion(VsmWriter &out, const Plan &p) {
  const MatrixUnit &u = *p.unit;
  if (!(u.type == DeviceType::Half && p.outPerTile == 1))
    return;
  std::string zero = lwFixed(PeMemory::LM1, p.zeroLw);
  for (int64_t ti = 0; ti < p.tilesPerMab; ++ti)
    for (int64_t j = 0; j < p.mabRows; j += 4)
      out.step({"hvfmar " + zero + " " + zero + " " +
                llRun(PeMemory::GRF1, accAt(p, ti, j)) + " " +
                lwRun(PeMemory::GRF1, outputLongWord(p, j, ti),
                      p.tilesPerMab)});
  out.nop(2);
}

/// Clamps every output long word of the MAB (the converted halves, or the
/// accumulators) to the fused activation's bounds.
void emitActivation(VsmWriter &out, const Plan &p, const ClampBounds &bounds) {
  const MatrixUnit &u = *p.unit;
  bool halfOut = u.type == DeviceType::Half && p.outPerTile == 1;
  // Four rows a step: output long words of consecutive rows lie a tile
  // row apart (halves) or an accumulator apart.
  int64_t rowStride = halfOut ? p.tilesPerMab : u.accPeLongWords;
  std::vector<std::string> values;
  for (int64_t q = 0; q < p.tilesPerMab * p.outPerTile; ++q)
    for (int64_t j = 0; j < p.mabRows; j += 4)
      values.push_back(
          lwRun(PeMemory::GRF1, outputLongWord(p, j, q), rowStride));
  emitClamp(out, VectorFormat(p.spec->outType), bounds, values);
  out.nop(2);
}

/// Gathers every MAB's outputs into its L1BM in the order of C's rows, then
/// every L1BM's share into the L2BM.
void emitGather(VsmWriter &out, const Plan &p) {
  int64_t rowLw = p.spec->out.rowLongWords();
  if (p.mode == MabMode::Slot) {
    // Quad j of MAB m lands at L1BM quad 16 j + m: the L1B's order.
    for (int64_t j = 0; j < p.mabQuads(); j += 4) {
      std::array<int64_t, 4> src;
      for (int c = 0; c < 4; ++c) {
        int64_t q = std::min(j + c, p.mabQuads() - 1);
        src[c] = outputLongWord(p, q / p.tilesPerMab, q % p.tilesPerMab);
      }
      out.step({"l1bmd " + lwAny(PeMemory::GRF1, src) + " " +
                l1bmOperand(kL1bmOut + 64 * j)});
    }
  } else {
    // Runs of four quads, each from the MAB whose rows they are.
    int64_t perMab = p.r0 * p.nqo;
    for (unsigned m = 0; m < 16; ++m)
      for (int64_t q0 = 0; q0 < perMab; q0 += 4) {
        std::array<int64_t, 4> src;
        for (int c = 0; c < 4; ++c) {
          int64_t q = std::min(q0 + c, perMab - 1);
          src[c] = outputLongWord(p, q / p.nqo, q % p.nqo);
        }
        out.step({"l1bmm@" + std::to_string(m) + " " +
                  lwAny(PeMemory::GRF1, src) + " " +
                  l1bmOperand(kL1bmOut + 4 * (int64_t(m) * perMab + q0))});
      }
  }
  out.nop();
  int64_t image = kL1bmOut;
  if (p.compact) {
    // Every MAB's PEs take the L1B's padded image (l1bmm, eight quads a
    // step) into LM0, whose A image is spent; MAB 0 writes C's rows back
    // in runs of four quads.
    int64_t padded = p.r1 * p.nt;
    for (int64_t q = 0; q < padded; q += 8)
      out.step({"l1bmm " + l1bmOperand(kL1bmOut + 4 * q, true) + " " +
                llRun(PeMemory::LM0, q)});
    out.nop();
    image = kL1bmCompact;
    int64_t real = p.r1 * p.nqo;
    for (int64_t q0 = 0; q0 < real; q0 += 4) {
      std::array<int64_t, 4> src;
      for (int c = 0; c < 4; ++c) {
        int64_t q = std::min(q0 + c, real - 1);
        src[c] = (q / p.nqo) * p.nt + q % p.nqo;
      }
      out.step({"l1bmm@0 " + lwAny(PeMemory::LM0, src) + " " +
                l1bmOperand(image + 4 * q0)});
    }
    out.nop();
  }
  if (p.l1bMode == L1bMode::Stripe) {
    // L1B k's long words 8c..8c+7 are long words 8k..8k+7 of the image's
    // 64-long-word stripe c (l2bmd, 256 a step).
    int64_t steps = ceilDiv(p.r2 * rowLw, 256);
    for (int64_t i = 0; i < steps; ++i)
      out.step({"l2bmd " + l1bmOperand(kL1bmOut + 32 * i) + " " +
                l2bmOperand(kL2bmOut + 256 * i)});
  } else {
    int64_t pieces = p.r1 * rowLw / kL2bmStepLongWords;
    for (unsigned k = 0; k < p.activeL1bs; ++k)
      for (int64_t i = 0; i < pieces; ++i)
        out.step({"l2bm@" + std::to_string(k) + " " +
                  l1bmOperand(image + 64 * i) + " " +
                  l2bmOperand(kL2bmOut + (int64_t(k) * pieces + i) * 64)});
  }
  // An MV may read the L2BM once the writes have landed.
  out.nop(2);
}

/// Stores each active L2B's image of C rows; with `deferred`, the
/// transfers' tags go there instead of being waited for.
void emitStore(VsmWriter &out, const Plan &p, const Chunk &c,
               std::vector<unsigned> *deferred = nullptr) {
  const DramForm &C = p.spec->out;
  int64_t rowLw = C.rowLongWords();
  int64_t imageLw = (p.l1bMode == L1bMode::Rows
                         ? std::min<int64_t>(rowsPerL2b(p), p.activeL1bs * p.r1)
                         : rowsPerL2b(p)) *
                    rowLw;
  int64_t blockEnd = C.base + C.groupLongWords();
  std::vector<unsigned> tags;
  for (unsigned l = 0; l < c.l2bs; ++l) {
    int64_t firstRow = int64_t(l) * l2bOffset(p, c);
    if (rowsOfL2b(p, c, l) <= 0)
      break;
    int64_t local = c.first + firstRow -
                    (p.uniform ? 0 : int64_t(c.group) * C.rowsPerGroup());
    int64_t address = C.base + local * rowLw;
    int64_t length = std::min(imageLw, blockEnd - address);
    // Halves (X18): no further than the L2B's own rows, which the other
    // L2B's follow.
    if (c.stride)
      length = std::min(length, rowsOfL2b(p, c, l) * rowLw);
    length = roundUp(length, kMvUnitLongWords);
    if (length <= 0)
      continue;
    unsigned tag = out.newTag();
    tags.push_back(tag);
    std::string size = "/n" + std::to_string(length) + VsmWriter::tagName(tag);
    if (p.uniform)
      out.statement("mvp" + size + " $lc" + std::to_string(kL2bmOut) + "@." +
                    std::to_string(l) + " $d" + std::to_string(address));
    else
      out.statement("mvp" + size + " $lc" + std::to_string(kL2bmOut) + "@0." +
                    std::to_string(l) + " $d" + std::to_string(address) + "@" +
                    std::to_string(c.group));
  }
  if (deferred) {
    deferred->insert(deferred->end(), tags.begin(), tags.end());
    return;
  }
  for (unsigned tag : tags)
    out.wait(tag);
}

/// The tiles of one batch and K phase from a B read at run time.
bool buildB(VsmWriter &out, PeSetup &setup, const Plan &p, int64_t batch,
            int64_t phase, std::string &error) {
  DeviceTiles tiles;
  tiles.items = p.tilesPerMab * p.kcPerPhase;
  tiles.at = [&p, phase](unsigned k, unsigned m, int64_t e, int64_t &kc,
                         int64_t &t) {
    kc = phase * p.kcPerPhase + e % p.kcPerPhase;
    t = p.tile(k, m, e / p.kcPerPhase);
    if (kc >= p.kc || t >= p.nt)
      t = -1;
  };
  tiles.column = [&p](int64_t t, int i) {
    int64_t column = tileColumn(p, t, i);
    return column < p.spec->n ? column : -1;
  };
  return buildDeviceB(out, setup, *p.unit, *p.spec->deviceB, batch, tiles,
                      imageBudget(), p.alphaLw, error);
}

} // namespace

bool gemm::emitProduct(const ProductSpec &spec, VsmWriter &out,
                       KernelDescription &description, std::string &error) {
  description.matrixUnit = spec.unit->type == DeviceType::Single
                               ? "pseudo-single"
                               : std::string(deviceTypeName(spec.unit->type));
  int64_t streamed = 0;
  if (splitApplies(spec, streamed))
    return emitSplit(spec, out, description, error);
  if (streamApplies(spec, streamed))
    return emitStream(spec, out, description, error);
  Plan p;
  if (!makePlan(spec, p, error))
    return false;
  const MatrixUnit &u = *spec.unit;
  const BiasSpec &bias = spec.bias;
  description.generator = "gemm";
  description.variant =
      std::string(deviceTypeName(u.type)) +
      (p.mode == MabMode::Slot ? ", quads over MABs" : ", rows over MABs") +
      (p.l1bMode == L1bMode::Stripe ? ", stripes over L1Bs"
                                    : ", rows over L1Bs") +
      (p.compact ? ", padded and compacted" : "") +
      (p.distinct ? ", per-L1B images" : "") +
      (p.uniform ? ", four groups" : ", group 0") +
      (spec.activation ? ", then " + spec.activation->opType : "");
  description.parameters.push_back({"rows per L2B", std::to_string(p.r2)});
  description.parameters.push_back(
      {"tiles per MAB", std::to_string(p.tilesPerMab)});
  description.parameters.push_back({"K phases", std::to_string(p.phases)});
  description.parameters.push_back({"chunks", std::to_string(p.chunks.size())});

  PeSetup setup(out);
  // T offsets of A and of the bias, each in GRF1.
  std::vector<int64_t> l1b, mab;
  offsetTables(p, l1b, mab, p.rowStride, 0);
  setup.offsetTable({}, l1b, mab, kTaLw);
  bool halfOut = u.type == DeviceType::Half && p.outPerTile == 1;
  if (bias.kind != BiasSpec::Kind::None) {
    int64_t perRow = bias.kind == BiasSpec::Kind::Matrix ? p.biasRowQuads
                     : bias.kind == BiasSpec::Kind::Column ? 1
                                                           : 0;
    int64_t perTile =
        bias.kind == BiasSpec::Kind::Row || bias.kind == BiasSpec::Kind::Matrix
            ? 1
            : 0;
    offsetTables(p, l1b, mab, perRow, perTile);
    setup.offsetTable({}, l1b, mab, kTbLw);
    if (p.biasMatrixPath && !buildBiasTile(out, setup, p, error))
      return false;
    if (u.type == DeviceType::Double && bias.beta != 1 && !p.biasMatrixPath) {
      double d = bias.beta;
      uint64_t bits;
      std::memcpy(&bits, &d, 8);
      if (uint32_t(bits) != 0) {
        error = "a double bias scale needs a 32-bit payload";
        return false;
      }
      out.step({"immu " + immWord(uint32_t(bits >> 32)) + " " +
                llFixed(PeMemory::GRF0, 0)});
      out.nop(2);
    }
  }
  if (halfOut || bias.kind != BiasSpec::Kind::None || spec.activation)
    emitConstants(out, p);
  ClampBounds clamp;
  if (spec.activation) {
    clamp = emitClampBounds(out, VectorFormat(spec.outType),
                            spec.activation->bounds, PeMemory::LM1,
                            p.clampLoLw, p.clampHiLw, p.zeroLw);
    out.nop();
  }

  // What a (chunk, phase) computes once its image is in LM0: the block
  // floats, the bias, the products.
  auto computePhase = [&](VsmWriter &w, const Chunk &c, int64_t phase,
                          const std::vector<LoadUnit> &units,
                          int64_t tileBase) {
    // Block floats in place: the A image (transposed first, if its
    // operand asks), and the bias quads the matrix path multiplies.
    int64_t aEnd = 0, bEnd = 0;
    for (const ImageQuad &q : units[0].quads) {
      if (q.slot < p.biasBase)
        aEnd = std::max(aEnd, q.slot + 1);
      else
        bEnd = std::max(bEnd, q.slot + 1);
    }
    if (spec.a->rowAlign() > 1) {
      AImage full;
      spec.a->image(unitFirstRow(p, c, 0, 0), p.distinct ? p.r1 : p.r2,
                    phase * p.kcPerPhase, p.kcPerPhase, full);
      transposeImage(w, u, full.transpose);
      aEnd = 0;
    }
    // The K-chunk slots of this phase's image.
    AImage image;
    spec.a->image(unitFirstRow(p, c, 0, 0), rowsPerL2b(p), phase * p.kcPerPhase,
                  p.kcPerPhase, image);
    std::string bfn = std::string(1, u.prefix) + "bfn ";
    int64_t kcs = std::min(p.kcPerPhase, p.kc - phase * p.kcPerPhase);
    std::vector<BfnRun> own = ownBfnRuns(p, image, kcs, aEnd);
    if (!own.empty()) {
      // Only the slots the MAB's own products read, at its base address
      // (the T offset of its first row): a quarter of the image when four
      // MABs share each row (X16).
      w.step({"lpassa " + lwFixed(PeMemory::GRF1, kTaLw) + " $mb"});
      w.nop(2);
      static const char *const kFirstCycles[] = {"", "/1000", "/1100", "/1110",
                                                 ""};
      for (const BfnRun &run : own)
        w.step({bfn + lwRun(PeMemory::LM0, run.first) + " " +
                lwRun(PeMemory::LM0, run.first) + kFirstCycles[run.cycles]});
      w.step({"zero $mb"});
      w.nop(2);
    } else {
      for (int64_t s = 0; s < aEnd; s += 4)
        w.step({bfn + lwRun(PeMemory::LM0, s) + " " + lwRun(PeMemory::LM0, s)});
    }
    if (p.biasMatrixPath && phase == 0)
      for (int64_t s = p.biasBase; s < bEnd; s += 4)
        w.step({bfn + lwRun(PeMemory::LM0, s) + " " + lwRun(PeMemory::LM0, s)});
    w.nop(2);
    bool biased = bias.kind != BiasSpec::Kind::None && phase == 0;
    if (biased) {
      PeSetup(w).loadT(kTbLw);
      if (p.biasMatrixPath) {
        emitBiasMatrix(w, p);
      } else {
        int64_t unused;
        emitBiasVector(w, p, unused);
      }
    }
    PeSetup(w).loadT(kTaLw);
    ProductSchedule schedule(0);
    int64_t regFree[2] = {0, 0};
    std::map<int64_t, int64_t> accReady;
    int load = 0;
    for (int64_t ti = 0; ti < p.tilesPerMab; ++ti)
      for (int64_t k = 0; k < kcs; ++k, ++load) {
        int which = load % 2;
        int64_t at = tileBase + (ti * p.kcPerPhase + k) * u.tilePeLongWords;
        int64_t written = regFree[which] - 1;
        for (const std::string &w : tileWrites(u, at, which))
          written = schedule.placeWrite(written + 1, w);
        int64_t last = written;
        for (int64_t j = 0; j < p.mabRows; j += 4) {
          int64_t acc = accAt(p, ti, j);
          bool first = !biased && phase == 0 && k == 0;
          std::vector<std::string> steps = productSteps(
              u, which, rowSlots(p, j, image.kcSlot[size_t(k)]), acc, first);
          int64_t ready = accReady.count(acc) ? accReady[acc] : 0;
          int64_t end =
              schedule.placeProduct(std::max(written + 1, ready), steps);
          accReady[acc] = end + 3;
          last = std::max(last, end);
        }
        regFree[which] = last + 1;
      }
    schedule.emit(w);
    w.nop(2);
  };
  // After a chunk's last phase: its outputs to the L2BM and on to DRAM;
  // with `storeTags`, the store's transfers are waited for later (before
  // the next gather writes the L2BM they read), else at once.
  auto finishChunk = [&](const Chunk &c, std::vector<unsigned> *storeTags) {
    emitConversion(out, p);
    if (spec.activation)
      emitActivation(out, p, clamp);
    if (storeTags) {
      for (unsigned tag : *storeTags)
        out.wait(tag);
      storeTags->clear();
    }
    emitGather(out, p);
    emitStore(out, p, c, storeTags);
  };

  ConstantStream bStream = stream(p);
  int64_t streamLw = constantStreamLongWords(bStream);
  // Where a (batch, phase)'s B stream lies in DRAM.
  auto streamBase = [&](int64_t batch, int64_t phase) {
    return spec.bBase + (batch * p.phases + phase) * streamLw;
  };
  // A constant B's load (from `base`, into LM1 from `tileBase`) and then an
  // image: side by side where the image leaves the stream's L2BM buffers
  // alone (X21), the stream's L2BM -> L1BM copies issuing beside the
  // image's moves to the PEs and its zeros.
  auto loadBAndImage = [&](int64_t base, int64_t tileBase,
                           const std::vector<LoadUnit> &units) {
    bStream.base = base;
    int64_t imageLw = imageL2bmLongWords(units, imageBudget());
    if (imageLw < 0 || kL2bmImage + imageLw > kL2bmStream) {
      loadConstantStream(out, bStream, PeMemory::LM1, tileBase, kL2bmStream,
                         kL1bmStream);
      return loadImages(out, setup, u, units, imageBudget(), error);
    }
    VsmWriter::Mark at = out.mark();
    if (!loadImages(out, setup, u, units, imageBudget(), error))
      return false;
    VsmWriter image = out.cut(at);
    VsmWriter stream = image.branch();
    loadConstantStream(stream, bStream, PeMemory::LM1, tileBase, kL2bmStream,
                       kL1bmStream);
    out.sideBySide(image, stream);
    return true;
  };
  if (p.pipelined) {
    // One batch and one K phase, so B loads once; then each chunk's image
    // transfers go out before the chunk before it computes, and a chunk's
    // store runs beside the next chunk's work, so that the DRAM moves
    // while the PEs compute (docs/codegen.md X17).
    std::vector<LoadUnit> current = chunkUnits(p, p.chunks[0], 0);
    if (spec.deviceB) {
      if (!buildB(out, setup, p, p.chunks[0].batch, 0, error) ||
          !loadImages(out, setup, u, current, imageBudget(), error))
        return false;
    } else if (!loadBAndImage(streamBase(p.chunks[0].batch, 0), 0, current)) {
      return false;
    }
    std::vector<unsigned> storeTags;
    for (size_t i = 0; i < p.chunks.size(); ++i) {
      auto work = [&, i] {
        computePhase(out, p.chunks[i], 0, current, 0);
        finishChunk(p.chunks[i], &storeTags);
      };
      if (i + 1 == p.chunks.size()) {
        work();
        break;
      }
      std::vector<LoadUnit> next = chunkUnits(p, p.chunks[i + 1], 0);
      // The image's last L2BM reads (its copies to the L1BM) have landed
      // before the next image's transfers write there.
      out.nop(2);
      if (!loadImages(out, setup, u, next, imageBudget(), error, work))
        return false;
      current = std::move(next);
    }
    for (unsigned tag : storeTags)
      out.wait(tag);
    return true;
  }
  // The (chunk, phase) passes in order; a pass loads B when its batch or
  // phase differs from the pass before. With two LM1 buffers (X20) each
  // load after the first streams in beside the products of the pass
  // before it, into the buffer that pass does not read.
  struct Pass {
    const Chunk *chunk;
    int64_t phase;
    bool loadsB;
  };
  std::vector<Pass> passes;
  for (const Chunk &c : p.chunks)
    for (int64_t phase = 0; phase < p.phases; ++phase)
      passes.push_back({&c, phase,
                        passes.empty() ||
                            c.batch != passes.back().chunk->batch ||
                            phase != passes.back().phase});
  int64_t loads = 0, tileBase = 0;
  for (size_t i = 0; i < passes.size(); ++i) {
    const Pass &pass = passes[i];
    const Chunk &c = *pass.chunk;
    std::vector<LoadUnit> units = chunkUnits(p, c, pass.phase);
    // B loaded beside the pass before (X20), or now, beside the image.
    bool loadNow = pass.loadsB && (p.lm1Buffers == 1 || i == 0);
    if (pass.loadsB) {
      tileBase = (loads % p.lm1Buffers) * p.tileLw;
      ++loads;
    }
    if (loadNow && !spec.deviceB) {
      if (!loadBAndImage(streamBase(c.batch, pass.phase), tileBase, units))
        return false;
    } else {
      if (loadNow && !buildB(out, setup, p, c.batch, pass.phase, error))
        return false;
      if (!loadImages(out, setup, u, units, imageBudget(), error))
        return false;
    }
    if (p.lm1Buffers == 2 && i + 1 < passes.size() && passes[i + 1].loadsB) {
      // The image's last L2BM and L1BM reads land before the stream's
      // transfers write there.
      out.nop(2);
      VsmWriter compute = out.branch();
      computePhase(compute, c, pass.phase, units, tileBase);
      VsmWriter next = compute.branch();
      bStream.base =
          streamBase(passes[i + 1].chunk->batch, passes[i + 1].phase);
      loadConstantStream(next, bStream, PeMemory::LM1,
                         (loads % p.lm1Buffers) * p.tileLw, kL2bmStream,
                         kL1bmStream);
      out.sideBySide(compute, next);
    } else {
      computePhase(out, c, pass.phase, units, tileBase);
    }
    if (pass.phase + 1 == p.phases)
      finishChunk(c, nullptr);
  }
  return true;
}
