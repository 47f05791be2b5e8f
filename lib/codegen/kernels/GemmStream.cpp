//===- GemmStream.cpp - Large half GEMMs, A streamed through LM0 ----------===//
//
// The streaming plan (docs/codegen.md X7) for C[M, N] = A B with half
// operands and results, every group its own rows, N-tiles = 128 (one per
// MAB, stripes over L1Bs) and B resident in LM1 (K <= 2048):
//
//   * every L2B takes half of its group's rows, in blocks of 12; a block is
//     12 x K/16 quads, each MAB multiplies all of them with its 128 tiles;
//   * A flows DRAM --mvp--> L2BM (three block buffers) --l2bmb--> L1BM
//     (a ring of runs) --l1bmm--> GRF0 (a ring of eight runs of four
//     quads) --hbfn--> LM0, where the next block's block floats are written
//     over the quads the product of the same step reads: a step reading and
//     writing LM0 must touch the same words (manual 3.6.4), so the ring
//     refills itself in place and its slots permute from block to block;
//   * each step issues the product (hmfma, 4 rows), the next tile's write
//     into the other matrix register, one conversion (hbfn), one L1BM run
//     (l1bmm) and, one step in four, an L2BM copy (l2bmb) or an output
//     gather (l2bmd): the matrix unit is busy 384 steps of every 390;
//   * between blocks six steps convert the last block's accumulators to
//     halves (hvfmar) and gather them (l1bmd); l2bmd and mvp store them
//     during the next block.
//
//===----------------------------------------------------------------------===//

#include "GemmDetail.h"

#include "mncc/emu/Numerics.h"

#include <algorithm>
#include <cstring>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::gemm;

namespace {

/// Rows of a block: four rows a product step, three steps per K-chunk so
/// that an accumulator is read three steps after the product that wrote it.
constexpr int64_t kBlockRows = 12;
constexpr int64_t kGroupsPerChunk = kBlockRows / 4;
constexpr int64_t kStagingRuns = 8;
// Memory maps (long words).
constexpr int64_t kGrf0Zero = 40, kGrf0Beta = 42;
constexpr int64_t kGrf1Acc = 0, kGrf1Out = 24, kGrf1Bias = 40, kGrf1T = 48;
constexpr int64_t kL1bmTransit = 0, kL1bmTransitRuns = 128;
constexpr int64_t kL1bmOut = 4096, kL1bmStream = 6144;

struct StreamPlan {
  const ProductSpec *spec = nullptr;
  const DramForm *a = nullptr;
  int64_t kc = 0;         // K-chunks (quads of an A row)
  int64_t rowsPerL2b = 0; // rows of a group each L2B takes
  int64_t blocks = 0;     // blocks per L2B
  int64_t runs = 0;       // runs of four quads per block (= product steps)
  int64_t aBlockLw = 0, cBlockLw = 0;
  int64_t l2bmA = 0, l2bmOut = 0, l2bmStream = 0;
  bool bias = false;
};

bool plan(const ProductSpec &s, StreamPlan &p) {
  const MatrixUnit &u = *s.unit;
  if (u.type != DeviceType::Half || s.outType != DeviceType::Half ||
      !s.plainA || s.subProblems.size() != 1)
    return false;
  const DramForm &a = *s.plainA, &c = s.out;
  if (a.groups != kDramGroups || c.groups != kDramGroups ||
      a.rowsPerGroup() != c.rowsPerGroup() || a.rows() != c.rows())
    return false;
  // Rows of whole MV units, no padding elements along K, 128 N-tiles and
  // every tile of a MAB resident.
  if (s.k % u.kChunk != 0 || a.rowLongWords() % kMvUnitLongWords != 0 ||
      c.rowLongWords() % kMvUnitLongWords != 0)
    return false;
  if (ceilDiv(s.n, int64_t(u.nTile)) != 128)
    return false;
  p.kc = s.k / u.kChunk;
  if (p.kc * u.tilePeLongWords > 2048 || p.kc % 4 != 0)
    return false;
  if (s.bias.kind != BiasSpec::Kind::None &&
      s.bias.kind != BiasSpec::Kind::Row)
    return false;
  // Worth it only with many blocks per L2B.
  int64_t rpg = c.rowsPerGroup();
  if (rpg < 8 * kBlockRows)
    return false;
  p.spec = &s;
  p.a = &a;
  p.bias = s.bias.kind == BiasSpec::Kind::Row;
  p.rowsPerL2b = roundUp(ceilDiv(rpg, 2), kBlockRows);
  p.blocks = p.rowsPerL2b / kBlockRows;
  p.runs = kBlockRows * p.kc / 4;
  p.aBlockLw = kBlockRows * a.rowLongWords();
  p.cBlockLw = kBlockRows * c.rowLongWords();
  p.l2bmA = 0;
  p.l2bmOut = 3 * p.aBlockLw;
  p.l2bmStream = p.l2bmOut; // the B stream passes before any output
  return p.l2bmOut + 2 * p.cBlockLw <= kL2bmLongWords &&
         p.l2bmStream + 4 * 2048 <= kL2bmLongWords;
}

/// The stripe layout of B: L1B k, MAB m holds N-tile 16 (m / 2) + 2 k +
/// m % 2 (its output quads are long words 8k..8k+7 of each 64-long-word
/// stripe of a C row, which l2bmd gathers), every K-chunk in LM1.
int64_t tileOf(unsigned k, unsigned m) {
  return 16 * int64_t(m / 2) + 2 * int64_t(k) + m % 2;
}

ConstantStream bStream(const StreamPlan &p) {
  ConstantStream cs;
  cs.peLongWords = p.kc * p.spec->unit->tilePeLongWords;
  cs.l1bDistinct = true;
  cs.mabBroadcast = false;
  return cs;
}

/// One step of the timeline: an expression per issue group, MV statements
/// issued before it, and the tags it waits for.
struct Step {
  std::string l2bm, l1bm, calc, mwrite, alu;
  std::vector<std::string> mv;
  std::vector<unsigned> waits;
  bool used() const {
    return !l2bm.empty() || !l1bm.empty() || !calc.empty() ||
           !mwrite.empty() || !alu.empty();
  }
};

} // namespace

bool gemm::streamApplies(const ProductSpec &spec, int64_t &bImageLongWords) {
  StreamPlan p;
  if (spec.deviceB || spec.activation || !plan(spec, p))
    return false;
  bImageLongWords = constantStreamLongWords(bStream(p));
  return true;
}

void gemm::packStreamB(const ProductSpec &spec, DramImage &image) {
  StreamPlan p;
  plan(spec, p);
  const MatrixUnit &u = *spec.unit;
  ConstantStream cs = bStream(p);
  int64_t size = constantStreamLongWords(cs);
  std::vector<uint64_t> data(size_t(size), 0);
  std::vector<uint64_t> tile(size_t(4 * u.tilePeLongWords));
  int64_t columns[16];
  for (unsigned k = 0; k < 8; ++k)
    for (unsigned m = 0; m < 16; ++m)
      for (int64_t kc = 0; kc < p.kc; ++kc) {
        int64_t t = tileOf(k, m);
        for (int i = 0; i < u.tilePeLongWords; ++i) {
          int64_t column = t * u.nTile + i;
          columns[i] = column < spec.n ? column : -1;
        }
        std::fill(tile.begin(), tile.end(), 0);
        spec.b->tile(0, kc, columns, tile.data());
        for (unsigned pe = 0; pe < 4; ++pe)
          for (int i = 0; i < u.tilePeLongWords; ++i)
            data[size_t(constantStreamOffset(cs, kc * u.tilePeLongWords + i,
                                             k, m, pe))] =
                tile[size_t(pe * u.tilePeLongWords + i)];
      }
  image.groups = kDramGroups;
  image.longWordsPerGroup = size;
  for (unsigned g = 0; g < kDramGroups; ++g)
    image.data[g] = data;
}

bool gemm::emitStream(const ProductSpec &spec, VsmWriter &out,
                      KernelDescription &description, std::string &error) {
  StreamPlan p;
  if (!plan(spec, p)) {
    error = "the streaming plan does not take this product";
    return false;
  }
  const MatrixUnit &u = *spec.unit;
  const DramForm &A = *p.a, &C = spec.out;
  description.generator = "gemm";
  description.variant = "half, rows streamed through LM0, stripes over L1Bs, "
                        "four groups";
  description.parameters.push_back(
      {"blocks per L2B", std::to_string(p.blocks)});
  description.parameters.push_back(
      {"rows per block", std::to_string(kBlockRows)});

  PeSetup setup(out);
  // Constants: a zero long word (the conversion's addends) and beta.
  out.step({"zero " + llFixed(PeMemory::GRF0, kGrf0Zero)});
  out.nop(2);

  // B: every MAB's tiles into LM1, long word 16 kc + row.
  ConstantStream cs = bStream(p);
  cs.base = spec.bBase;
  loadConstantStream(out, cs, PeMemory::LM1, 0, p.l2bmStream, kL1bmStream);

  // The bias: beta * the MAB's tile of the bias row, as four singles a PE,
  // the addend of every block's first products.
  if (p.bias) {
    const BiasSpec &bias = spec.bias;
    std::vector<LoadUnit> units;
    for (unsigned g = 0; g < kDramGroups; ++g)
      for (unsigned l = 0; l < 2; ++l) {
        LoadUnit unit;
        unit.group = g;
        unit.l2b = l;
        for (int64_t t = 0; t < 128; ++t) {
          ImageQuad q;
          if (t < bias.form.rowLongWords() / kQuadLongWords)
            q = rowQuad(bias.form, 0, t, u.kChunk);
          else
            q.group = ImageQuad::kZeroQuad;
          q.slot = t;
          unit.quads.push_back(q);
        }
        units.push_back(unit);
      }
    LoadBudget budget;
    budget.l2bmBase = 0;
    budget.l2bmLongWords = 4096;
    budget.l1bmBase = kL1bmTransit;
    budget.l1bmLongWords = 2048;
    budget.trashSlot = 2047;
    if (!loadImages(out, setup, u, units, budget, error))
      return false;
    std::vector<int64_t> l1b(8), mab(16);
    for (unsigned k = 0; k < 8; ++k)
      l1b[k] = 2 * tileOf(k, 0);
    for (unsigned m = 0; m < 16; ++m)
      mab[m] = 2 * tileOf(0, m);
    setup.offsetTable({}, l1b, mab, kGrf1T);
    setup.loadT(kGrf1T);
    uint32_t fbits;
    std::memcpy(&fbits, &bias.beta, 4);
    uint16_t h = emu::singleToHalf(fbits);
    out.step({"imm " + immWord(uint32_t(h) << 16 | h) + " " +
              lwFixed(PeMemory::GRF0, kGrf0Beta)});
    out.nop(2);
    out.step({(bias.beta == 1 ? "hvpassa $lmt0"
                              : "hvmul $lmt0 " +
                                    lwFixed(PeMemory::GRF0, kGrf0Beta)) +
              std::string(" ") + llFixed(PeMemory::GRF1, kGrf1Bias)});
    out.nop(2);
  }

  //===--------------------------------------------------------------------===//
  // The timeline
  //===--------------------------------------------------------------------===//
  std::vector<Step> steps;
  auto at = [&](int64_t t) -> Step & {
    if (t >= int64_t(steps.size()))
      steps.resize(size_t(t + 1));
    return steps[size_t(t)];
  };
  int64_t kcCount = p.kc;
  int64_t runs = p.runs;
  int64_t totalRuns = p.blocks * runs;
  int64_t aRowLw = A.rowLongWords();

  // A's block b of L2B l: rows l * rowsPerL2b + 12 b of every group's block,
  // clipped to the block.
  auto aTransfer = [&](int64_t b, std::vector<std::string> &mv,
                       std::vector<unsigned> &tags) {
    for (unsigned l = 0; l < 2; ++l) {
      int64_t row = int64_t(l) * p.rowsPerL2b + b * kBlockRows;
      int64_t address = A.base + row * aRowLw;
      int64_t length = std::min(p.aBlockLw,
                                A.base + A.groupLongWords() - address);
      if (length <= 0)
        continue;
      unsigned tag = out.newTag();
      tags.push_back(tag);
      mv.push_back("mvp/n" + std::to_string(length) + VsmWriter::tagName(tag) +
                   " $d" + std::to_string(address) + " $lc" +
                   std::to_string(p.l2bmA + (b % 3) * p.aBlockLw) + "@." +
                   std::to_string(l));
    }
  };
  std::vector<std::vector<unsigned>> aTags(static_cast<size_t>(p.blocks));

  // The stream of runs: run U = block U / runs, run U % runs. consume[U] is
  // the step whose hbfn converts it, deliver[U] the step of its l1bmm.
  std::vector<int64_t> consume(static_cast<size_t>(totalRuns), -1);
  // Slots of every quad of a block: slot[q] for quad q = row * kc + kc.
  std::vector<int64_t> slotNow(size_t(kBlockRows * kcCount)),
      slotNext(slotNow.size());
  for (size_t q = 0; q < slotNow.size(); ++q)
    slotNow[q] = int64_t(q);

  int64_t t = 0;
  // The first two blocks' transfers, then the fill of block 0 into LM0.
  aTransfer(0, at(0).mv, aTags[0]);
  if (p.blocks > 1)
    aTransfer(1, at(0).mv, aTags[1]);
  t = 8; // lead for the first copies and deliveries
  for (int64_t r = 0; r < runs; ++r, ++t) {
    consume[size_t(r)] = t;
    std::array<int64_t, 4> dest;
    for (int c = 0; c < 4; ++c)
      dest[c] = slotNow[size_t(4 * r + c)];
    at(t).alu = "hbfn " + lwRun(PeMemory::GRF0, 4 * (r % kStagingRuns)) +
                " " + lwAny(PeMemory::LM0, dest);
  }
  // Tile 0 into register x before the first block.
  at(t - 2).mwrite = "hmwrite " + llRun(PeMemory::LM1, 0) + " $llx0";
  at(t - 1).mwrite = "hmwrite " + llRun(PeMemory::LM1, 8) + " $llx8";

  std::vector<unsigned> outTags[2];
  int64_t pendingGather = -1; // block whose output waits for l2bmd
  int64_t gatherFrom = 0;     // first step its l2bmd may use
  auto placeOutput = [&](int64_t b, int64_t from) {
    // l2bmd of block b's L1BM image into its L2BM buffer on free l2bm
    // slots, then its store. The buffer's previous store must be done.
    int64_t buffer = p.l2bmOut + (b % 2) * p.cBlockLw;
    int64_t pieces = ceilDiv(p.cBlockLw, 256);
    int64_t s = from;
    bool first = true;
    for (int64_t i = 0; i < pieces; ++i) {
      while (!at(s).l2bm.empty())
        ++s;
      at(s).l2bm = "l2bmd " + l1bmOperand(kL1bmOut + 32 * i) + " " +
                   l2bmOperand(buffer + 256 * i);
      if (first) {
        for (unsigned tag : outTags[b % 2])
          at(s).waits.push_back(tag);
        outTags[b % 2].clear();
        first = false;
      }
      ++s;
    }
    // The MV reads the L2BM once the l2bmd writes have landed.
    s += 2;
    for (unsigned l = 0; l < 2; ++l) {
      int64_t row = int64_t(l) * p.rowsPerL2b + b * kBlockRows;
      int64_t address = C.base + row * C.rowLongWords();
      int64_t length = std::min(p.cBlockLw,
                                C.base + C.groupLongWords() - address);
      if (length <= 0)
        continue;
      unsigned tag = out.newTag();
      outTags[b % 2].push_back(tag);
      at(s).mv.push_back("mvp/n" + std::to_string(length) +
                         VsmWriter::tagName(tag) + " $lc" +
                         std::to_string(buffer) + "@." + std::to_string(l) +
                         " $d" + std::to_string(address));
    }
    return s;
  };

  for (int64_t b = 0; b < p.blocks; ++b) {
    if (b > 0) {
      // Six steps: the last block's accumulators into halves, then into
      // the L1BM (quad j of MAB m at 64 j + 4 m).
      for (int64_t g = 0; g < kGroupsPerChunk; ++g)
        at(t + g).calc = "hvfmar " + lwFixed(PeMemory::GRF0, kGrf0Zero) +
                         " " + lwFixed(PeMemory::GRF0, kGrf0Zero) + " " +
                         llRun(PeMemory::GRF1, kGrf1Acc + 8 * g) + " " +
                         lwRun(PeMemory::GRF1, kGrf1Out + 4 * g);
      for (int64_t g = 0; g < kGroupsPerChunk; ++g)
        at(t + 3 + g).l1bm = "l1bmd " +
                             lwRun(PeMemory::GRF1, kGrf1Out + 4 * g) + " " +
                             l1bmOperand(kL1bmOut + 256 * g);
      t += 6;
      pendingGather = b - 1;
      gatherFrom = t + 1;
    }
    if (b + 2 < p.blocks)
      aTransfer(b + 2, at(t).mv, aTags[size_t(b + 2)]);
    for (int64_t s = 0; s < runs; ++s, ++t) {
      int64_t kc = s / kGroupsPerChunk, g = s % kGroupsPerChunk;
      int which = int(kc % 2);
      std::array<int64_t, 4> slots;
      for (int c = 0; c < 4; ++c)
        slots[c] = slotNow[size_t((4 * g + c) * kcCount + kc)];
      std::string m = std::string(" $l") + (which ? "y" : "x") + " ";
      std::string acc = llRun(PeMemory::GRF1, kGrf1Acc + 8 * g);
      if (kc == 0)
        at(t).calc = p.bias ? "hmfma" + m + lwAny(PeMemory::LM0, slots) + " " +
                                  llFixed(PeMemory::GRF1, kGrf1Bias) + " " +
                                  acc
                            : "hmmul" + m + lwAny(PeMemory::LM0, slots) + " " +
                                  acc;
      else
        at(t).calc = "hmfma" + m + lwAny(PeMemory::LM0, slots) + " " + acc +
                     " " + acc;
      // The next tile into the other register.
      if (g < 2) {
        int64_t next = (kc + 1) % kcCount;
        bool lastTile = kc + 1 == kcCount;
        if (!lastTile || b + 1 < p.blocks) {
          std::string r = (next % 2) ? "y" : "x";
          at(t).mwrite = "hmwrite " +
                         llRun(PeMemory::LM1,
                               next * u.tilePeLongWords + 8 * g) +
                         " $ll" + r + std::to_string(8 * g);
        }
      }
      // The next block's run s into the slots this product reads.
      if (b + 1 < p.blocks) {
        int64_t U = (b + 1) * runs + s;
        consume[size_t(U)] = t;
        for (int c = 0; c < 4; ++c)
          slotNext[size_t(4 * s + c)] = slots[c];
        at(t).alu = "hbfn " + lwRun(PeMemory::GRF0, 4 * (U % kStagingRuns)) +
                    " " + lwAny(PeMemory::LM0, slots);
      }
    }
    if (pendingGather >= 0) {
      placeOutput(pendingGather, gatherFrom);
      pendingGather = -1;
    }
    if (b + 1 < p.blocks)
      slotNow.swap(slotNext);
  }
  // The last block's output.
  for (int64_t g = 0; g < kGroupsPerChunk; ++g)
    at(t + g).calc = "hvfmar " + lwFixed(PeMemory::GRF0, kGrf0Zero) + " " +
                     lwFixed(PeMemory::GRF0, kGrf0Zero) + " " +
                     llRun(PeMemory::GRF1, kGrf1Acc + 8 * g) + " " +
                     lwRun(PeMemory::GRF1, kGrf1Out + 4 * g);
  for (int64_t g = 0; g < kGroupsPerChunk; ++g)
    at(t + 3 + g).l1bm = "l1bmd " + lwRun(PeMemory::GRF1, kGrf1Out + 4 * g) +
                         " " + l1bmOperand(kL1bmOut + 256 * g);
  t += 6;
  int64_t end = placeOutput(p.blocks - 1, t + 1);

  // Deliveries: run U's l1bmm two steps (or more) before its conversion,
  // on a step whose l1bm slot is free; its transit copy (l2bmb, four runs
  // a step) at least two steps before that, after the block's MV.
  std::vector<int64_t> deliver(static_cast<size_t>(totalRuns));
  for (int64_t U = 0; U < totalRuns; ++U) {
    int64_t s = consume[size_t(U)] - 2;
    while (s >= 0 && !at(s).l1bm.empty())
      --s;
    // Its staging slot is free once the run eight before is converted.
    int64_t freed = U >= kStagingRuns ? consume[size_t(U - kStagingRuns)] : 0;
    if (s < freed) {
      error = "no L1BM slot to deliver run " + std::to_string(U);
      return false;
    }
    deliver[size_t(U)] = s;
    at(s).l1bm = "l1bmm " +
                 l1bmOperand(kL1bmTransit + 16 * (U % kL1bmTransitRuns)) +
                 " " + lwRun(PeMemory::GRF0, 4 * (U % kStagingRuns));
  }
  // Transit copies, four runs (64 long words) a step, two steps before the
  // first of them is delivered, after the ring's previous occupants are.
  for (int64_t U0 = 0; U0 < totalRuns; U0 += 4) {
    int64_t need = deliver[size_t(U0)];
    for (int64_t U = U0; U < std::min(U0 + 4, totalRuns); ++U)
      need = std::min(need, deliver[size_t(U)]);
    need -= 2;
    int64_t floor = 0;
    for (int64_t U = U0 - kL1bmTransitRuns; U < U0 + 4 - kL1bmTransitRuns; ++U)
      if (U >= 0)
        floor = std::max(floor, deliver[size_t(U)]);
    int64_t s = need;
    while (s >= floor && !at(s).l2bm.empty())
      --s;
    if (s < floor) {
      error = "no L2BM slot for the transit of run " + std::to_string(U0);
      return false;
    }
    int64_t b = U0 / runs, r = U0 % runs;
    at(s).l2bm = "l2bmb " +
                 l2bmOperand(p.l2bmA + (b % 3) * p.aBlockLw + 16 * r) + " " +
                 l1bmOperand(kL1bmTransit + 16 * (U0 % kL1bmTransitRuns));
    // The block's MV is done before its first copy.
    if (r == 0)
      for (unsigned tag : aTags[size_t(b)])
        at(s).waits.push_back(tag);
  }
  (void)end;

  // Print the timeline.
  int64_t idle = 0;
  for (const Step &step : steps) {
    for (const std::string &mv : step.mv)
      out.statement(mv);
    if (!step.used() && step.waits.empty()) {
      ++idle;
      continue;
    }
    out.nop(unsigned(idle));
    idle = 0;
    std::string waits;
    for (size_t i = 0; i < step.waits.size(); ++i) {
      if (i + 1 < step.waits.size())
        out.wait(step.waits[i]);
      else
        waits = "wait " + VsmWriter::tagName(step.waits[i]);
    }
    if (!step.used())
      out.step({"nop", waits});
    else
      out.step({step.l2bm, step.l1bm, step.calc, step.mwrite, step.alu,
                waits});
  }
  out.nop(unsigned(idle));
  for (int i = 0; i < 2; ++i)
    for (unsigned tag : outTags[i])
      out.wait(tag);
  return true;
}
