//===- GemmDevice.cpp - B tiles built on the device -----------------------===//
//
// A B that is not a constant (docs/codegen.md X10) reaches the MABs as the
// raw quads its tiles are made of. The image loader (loadImages) brings
// them into LM0, once for each class of MABs whose tiles agree (T points
// every MAB at its class's quads), in pieces of as many tiles as LM0
// holds; then each tile goes into LM1 as block floats, where the products
// find a constant B's tiles:
//
//   - B stored N x K (Gemm's transB): the tile's matrix rows are quads of
//     B's rows; bfn through T straight into LM1.
//   - B stored K x N: the tile's quads are the rows of its K-chunk (the
//     tile's N-tile of each). mwrite puts them into a matrix register as
//     its rows and mread, a transposed bit copy, hands back its columns:
//     column c is the tile's K values of column c, the quad a matrix row
//     needs. From GRF0 bfn writes them into LM1, row i the column that
//     row computes.
//
// alpha scales the raw quads in LM0 first: one rounding of the exact
// product into the operand format, what the host does for a constant B.
//
//===----------------------------------------------------------------------===//

#include "GemmDetail.h"

#include "mncc/emu/Numerics.h"

#include <cstring>
#include <map>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::gemm;

DeviceBOperand::~DeviceBOperand() = default;

namespace {

/// LM0 slots the raw quads may take (the trash slot lies past them).
constexpr int64_t kRawSlots = 2040;

struct Item {
  int64_t kc = -1, t = -1;
  bool operator==(const Item &o) const { return kc == o.kc && t == o.t; }
};

/// The tiles of every MAB, their classes and whether L1Bs differ.
struct Classes {
  std::array<int64_t, 16> of{};
  std::vector<unsigned> representative;
  /// L1Bs whose tiles differ: each loads its own section (same slots), or,
  /// folded, every L1B's quads lie side by side in one shared image.
  bool perL1b = false;
  bool folded = false;
  int64_t count() const {
    return int64_t(representative.size()) * (folded ? 8 : 1);
  }
};

Item itemAt(const DeviceTiles &tiles, unsigned k, unsigned m, int64_t e) {
  Item it;
  tiles.at(k, m, e, it.kc, it.t);
  if (it.t < 0 || it.kc < 0)
    it = Item();
  return it;
}

Classes classify(const DeviceTiles &tiles) {
  Classes c;
  std::vector<std::vector<Item>> signature(16);
  for (unsigned m = 0; m < 16; ++m)
    for (unsigned k = 0; k < 8; ++k)
      for (int64_t e = 0; e < tiles.items; ++e)
        signature[m].push_back(itemAt(tiles, k, m, e));
  for (unsigned m = 0; m < 16; ++m) {
    size_t i = 0;
    while (i < c.representative.size() &&
           !(signature[c.representative[i]] == signature[m]))
      ++i;
    if (i == c.representative.size())
      c.representative.push_back(m);
    c.of[m] = int64_t(i);
  }
  for (unsigned k = 1; k < 8 && !c.perL1b; ++k)
    for (unsigned m = 0; m < 16 && !c.perL1b; ++m)
      for (int64_t e = 0; e < tiles.items && !c.perL1b; ++e)
        c.perL1b = !(itemAt(tiles, k, m, e) == itemAt(tiles, 0, m, e));
  return c;
}

/// The raw quads of a piece of `count` items from item `first`, `per`
/// items per class, for every group's two L2Bs.
std::vector<LoadUnit> pieceUnits(const MatrixUnit &unit,
                                 const DeviceBOperand &b, int64_t batch,
                                 const DeviceTiles &tiles, const Classes &c,
                                 int64_t first, int64_t count, int64_t per) {
  int rows = unit.tilePeLongWords;
  std::vector<ImageQuad> quads;
  unsigned l1bs = c.perL1b ? 8 : 1;
  int64_t classes = int64_t(c.representative.size());
  for (unsigned k = 0; k < l1bs; ++k)
    for (int64_t cls = 0; cls < classes; ++cls)
      for (int64_t tt = 0; tt < count; ++tt) {
        int64_t place = c.folded ? int64_t(k) * classes + cls : cls;
        Item it = itemAt(tiles, k, c.representative[cls], first + tt);
        for (int i = 0; i < rows; ++i) {
          ImageQuad q;
          q.group = ImageQuad::kZeroQuad;
          if (it.t >= 0) {
            if (b.kRows()) {
              q = b.quad(batch, it.kc * unit.kChunk + i, it.t);
            } else {
              int64_t column = tiles.column(it.t, i);
              if (column >= 0)
                q = b.quad(batch, column, it.kc);
            }
          }
          q.slot = (place * per + tt) * rows + i;
          q.tensor = 0;
          q.l1b = c.perL1b && !c.folded ? int(k) : -1;
          quads.push_back(q);
        }
      }
  std::vector<LoadUnit> units;
  for (unsigned g = 0; g < kDramGroups; ++g)
    for (unsigned l = 0; l < 2; ++l)
      units.push_back({g, l, quads});
  return units;
}

/// Steps placed by index, emitted in order with nops for the gaps.
class Steps {
public:
  void add(int64_t at, const std::string &text) { At[at].push_back(text); }
  void emit(VsmWriter &out) const {
    int64_t next = 0;
    for (const auto &[at, texts] : At) {
      out.nop(unsigned(at - next));
      out.step({texts.size() > 0 ? texts[0] : std::string(),
                texts.size() > 1 ? texts[1] : std::string(),
                texts.size() > 2 ? texts[2] : std::string()});
      next = at + 1;
    }
  }

private:
  std::map<int64_t, std::vector<std::string>> At;
};

} // namespace

bool gemm::buildDeviceB(VsmWriter &out, PeSetup &setup,
                        const MatrixUnit &unit, const DeviceBOperand &b,
                        int64_t batch, const DeviceTiles &tiles,
                        const LoadBudget &budget, int64_t alphaLm1Lw,
                        std::string &error) {
  if (tiles.items <= 0)
    return true;
  const int rows = unit.tilePeLongWords;
  Classes c = classify(tiles);
  // Items per piece: what LM0 holds, fewer while the pieces' quads do not
  // lie out alike or overflow the L2BM; L1Bs folded into one image when
  // their sections never lie out alike.
  int64_t per = 0;
  for (int attempt = 0; attempt < 2 && per == 0; ++attempt) {
    c.folded = attempt == 1;
    if (c.folded && !c.perL1b)
      break;
    per = std::min(tiles.items, kRawSlots / (c.count() * rows));
    while (per > 0) {
      bool ok = true;
      for (int64_t e = 0; e < tiles.items && ok; e += per)
        ok = sameLayout(pieceUnits(unit, b, batch, tiles, c, e,
                                   std::min(per, tiles.items - e), per),
                        budget);
      if (ok)
        break;
      per = per == 1 ? 0 : (per + 1) / 2;
    }
  }
  if (per == 0) {
    error = "the raw quads of B do not load alike for every L2B";
    return false;
  }
  int64_t classes = c.count();

  // T: the MAB's class's quads (and its L1B's, folded); alpha in LM1.
  int64_t mabClasses = int64_t(c.representative.size());
  std::vector<int64_t> mabTable(16), l1bTable(8, 0);
  for (unsigned m = 0; m < 16; ++m)
    mabTable[m] = 2 * c.of[m] * per * rows;
  if (c.folded)
    for (unsigned k = 0; k < 8; ++k)
      l1bTable[k] = 2 * int64_t(k) * mabClasses * per * rows;
  setup.offsetTable({}, l1bTable, mabTable, kDeviceTGrf1);
  double alpha = b.alpha();
  bool scaled = alpha != 1;
  std::string alphaOp = lwFixed(PeMemory::LM1, alphaLm1Lw);
  if (scaled) {
    float f = float(alpha);
    uint32_t fbits;
    std::memcpy(&fbits, &f, 4);
    switch (unit.type) {
    case DeviceType::Half: {
      uint16_t h = emu::singleToHalf(fbits);
      out.step({"imm " + immWord(uint32_t(h) << 16 | h) + " " + alphaOp});
      break;
    }
    case DeviceType::Single:
      out.step({"imm " + immWord(fbits) + " " + alphaOp});
      break;
    default: {
      uint64_t bits;
      std::memcpy(&bits, &alpha, 8);
      if (uint32_t(bits) != 0) {
        error = "a double alpha needs a 32-bit payload";
        return false;
      }
      out.step({"immu " + immWord(uint32_t(bits >> 32)) + " " + alphaOp});
      break;
    }
    }
    out.nop(2);
  }
  setup.loadT(kDeviceTGrf1);

  const std::string p(1, unit.prefix);
  for (int64_t e0 = 0; e0 < tiles.items; e0 += per) {
    int64_t count = std::min(per, tiles.items - e0);
    if (!loadImages(out, setup, unit,
                    pieceUnits(unit, b, batch, tiles, c, e0, count, per),
                    budget, error))
      return false;
    int64_t slots = classes * per * rows;
    if (scaled) {
      for (int64_t s = 0; s < slots; s += 4) {
        std::string x = lwRun(PeMemory::LM0, s);
        switch (unit.type) {
        case DeviceType::Half:
          out.step({"hvmulr " + x + " " + alphaOp + " " + x});
          break;
        case DeviceType::Single:
          out.step({"fvmul " + x + " " + alphaOp + " " + x});
          break;
        default:
          out.step({"dvmulu " + x + " " + alphaOp + " $nowrite"});
          out.step({"dvfmad " + x + " " + alphaOp + " $mauf " + x});
          break;
        }
      }
      out.nop(2);
    }
    Steps steps;
    if (!b.kRows()) {
      // The quads are the matrix rows.
      int64_t s = 0;
      for (int64_t tt = 0; tt < count; ++tt)
        for (int i = 0; i < rows; i += 4, ++s) {
          int64_t raw = tt * rows + i;
          steps.add(s, p + "bfn " + lwFlatT({raw, raw + 1, raw + 2, raw + 3}) +
                           " " + lwRun(PeMemory::LM1, (e0 + tt) * rows + i));
        }
    } else {
      // Through a matrix register: rows in (rows / 4 steps), columns out
      // into a GRF0 buffer (two steps, one for double), bfn two steps
      // later, the next tile's rows meanwhile.
      int writes = rows / 4, reads = unit.type == DeviceType::Double ? 1 : 2;
      int64_t period = writes + reads;
      for (int64_t tt = 0; tt < count; ++tt) {
        int64_t s0 = tt * period;
        int64_t raw = tt * rows;
        int64_t stage = kDeviceStageGrf0 + 16 * (tt % 2);
        for (int w = 0; w < writes; ++w) {
          int64_t r = raw + 4 * w;
          steps.add(s0 + w, p + "mwrite " + lwFlatT({r, r + 1, r + 2, r + 3}) +
                                " $lx" + std::to_string(4 * w));
        }
        for (int r = 0; r < reads; ++r) {
          int64_t column = int64_t(r) * rows / reads;
          std::string dest = unit.type == DeviceType::Half
                                 ? " $llx" + std::to_string(column) + " " +
                                       llRun(PeMemory::GRF0, stage + column)
                                 : " $lx" + std::to_string(column) + " " +
                                       lwRun(PeMemory::GRF0, stage + column);
          steps.add(s0 + writes + r, p + "mread" + dest);
        }
        for (int i = 0; i < rows; i += 4) {
          std::array<int64_t, 4> src;
          for (int cc = 0; cc < 4; ++cc) {
            // Row i + cc computes the tile's column column(t, i + cc); the
            // tile of every class has the same interleave.
            int64_t offset = i + cc;
            int64_t col = tiles.column(0, i + cc);
            if (col >= 0)
              offset = col % unit.nTile;
            src[size_t(cc)] = stage + offset;
          }
          steps.add(s0 + period + 1 + i / 4,
                    p + "bfn " + lwAny(PeMemory::GRF0, src) + " " +
                        lwRun(PeMemory::LM1, (e0 + tt) * rows + i));
        }
      }
    }
    steps.emit(out);
    out.nop(2);
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Transposed images of A
//===----------------------------------------------------------------------===//

namespace {

/// Steps placed first-fit under resource rules: one matrix instruction
/// and one ALU instruction a step, and no LM0 write beside an LM0 read.
class Placer {
public:
  enum : unsigned { Matrix = 1, Alu = 2, Lm0Read = 4, Lm0Write = 8 };

  int64_t place(int64_t earliest, unsigned uses, const std::string &text) {
    for (int64_t s = std::max<int64_t>(earliest, 0);; ++s) {
      unsigned have = s < int64_t(Used.size()) ? Used[size_t(s)] : 0;
      bool clash = (have & uses & (Matrix | Alu)) ||
                   ((uses & Lm0Read) && (have & Lm0Write)) ||
                   ((uses & Lm0Write) && (have & Lm0Read));
      if (clash)
        continue;
      if (s >= int64_t(Used.size())) {
        Used.resize(size_t(s + 1), 0);
        Texts.resize(size_t(s + 1));
      }
      Used[size_t(s)] |= uses;
      Texts[size_t(s)].push_back(text);
      return s;
    }
  }
  void emit(VsmWriter &out) const {
    unsigned idle = 0;
    for (const std::vector<std::string> &t : Texts) {
      if (t.empty()) {
        ++idle;
        continue;
      }
      out.nop(idle);
      idle = 0;
      out.step({t[0], t.size() > 1 ? t[1] : std::string()});
    }
  }

private:
  std::vector<unsigned> Used;
  std::vector<std::vector<std::string>> Texts;
};

constexpr int64_t kTransposeStage = 64;
constexpr int64_t kTransposeBuffers = 8;

} // namespace

void gemm::transposeImage(VsmWriter &out, const MatrixUnit &unit,
                          const std::vector<int64_t> &blocks) {
  const int rows = unit.kChunk;
  const std::string p(1, unit.prefix);
  int64_t count = int64_t(blocks.size()) / rows;
  int writes = rows / 4, reads = unit.type == DeviceType::Double ? 1 : 2;
  // Per block: its rows into x, its columns out into a staging buffer,
  // then bfn back to the block's slots. The next block's rows go in
  // before this block's columns come back (the order places them).
  std::vector<int64_t> lastRead(size_t(count), 0), lastBfn(size_t(count), 0);
  Placer placer;
  int64_t matrixFree = 0;
  auto rowsIn = [&](int64_t b) {
    const int64_t *slot = &blocks[size_t(b * rows)];
    int64_t stage = kTransposeStage + 16 * (b % kTransposeBuffers);
    int64_t at = matrixFree;
    if (b >= kTransposeBuffers)
      at = std::max(at, lastBfn[size_t(b - kTransposeBuffers)] + 1);
    for (int w = 0; w < writes; ++w)
      at = placer.place(at, Placer::Matrix | Placer::Lm0Read,
                        p + "mwrite " +
                            lwAny(PeMemory::LM0,
                                  {slot[4 * w], slot[4 * w + 1],
                                   slot[4 * w + 2], slot[4 * w + 3]}) +
                            " $lx" + std::to_string(4 * w)) +
           1;
    for (int r = 0; r < reads; ++r) {
      int64_t column = int64_t(r) * rows / reads;
      std::string text =
          unit.type == DeviceType::Half
              ? " $llx" + std::to_string(column) + " " +
                    llRun(PeMemory::GRF0, stage + column)
              : " $lx" + std::to_string(column) + " " +
                    lwRun(PeMemory::GRF0, stage + column);
      at = placer.place(at, Placer::Matrix, p + "mread" + text) + 1;
    }
    matrixFree = at;
    lastRead[size_t(b)] = at - 1;
  };
  auto columnsBack = [&](int64_t b) {
    const int64_t *slot = &blocks[size_t(b * rows)];
    int64_t stage = kTransposeStage + 16 * (b % kTransposeBuffers);
    int64_t at = lastRead[size_t(b)] + 2;
    for (int j = 0; j < rows; j += 4)
      at = placer.place(at, Placer::Alu | Placer::Lm0Write,
                        p + "bfn " + lwRun(PeMemory::GRF0, stage + j) + " " +
                            lwAny(PeMemory::LM0, {slot[j], slot[j + 1],
                                                  slot[j + 2], slot[j + 3]})) +
           1;
    lastBfn[size_t(b)] = at - 1;
  };
  for (int64_t b = 0; b < count; ++b) {
    rowsIn(b);
    if (b > 0)
      columnsBack(b - 1);
  }
  if (count > 0)
    columnsBack(count - 1);
  placer.emit(out);
  out.nop(2);
}
