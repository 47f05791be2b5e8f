//===- GemmLoad.cpp - Images of quads into LM0, constants into every PE ---===//
//
// An image load brings each quad an L2B's MABs need into one LM0 slot of
// every PE: MV copies the DRAM ranges holding the quads (64-long-word
// units, clipped to nothing else: a range never leaves its tensor's block)
// into the L2BM, l2bmb broadcasts them to every L1BM in pieces, and l1bmm
// hands every MAB the same runs of four quads, each cycle's quad to its
// slot (flat destinations). The quads of every L2B of every group arrive
// by the same instructions, so their layouts in the L2BMs must agree.
//
//===----------------------------------------------------------------------===//

#include "GemmDetail.h"

#include <algorithm>
#include <set>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::gemm;

namespace {

/// A DRAM range of whole MV units that lands in the L2BM at `l2bm`.
struct Range {
  int group = 0;
  int64_t start = 0;
  int64_t longWords = 0;
  int64_t l2bm = 0;
};

/// Where every quad of a unit lands: the ranges, and per slot its quad
/// position in the L2BM image (long word offset from the image base) and
/// its valid elements.
struct Layout {
  std::vector<Range> ranges;
  std::map<int64_t, std::pair<int64_t, int>> slots;
  std::vector<int64_t> zeroSlots;
  int64_t longWords = 0;
};

/// Units of 64 long words a range may skip and still be one transfer: the
/// skipped units cost 3 cycles each on the DRAM, a new transfer an MV slot
/// (16 cycles).
constexpr int64_t kMergeGapUnits = 4;

Layout layoutOf(const LoadUnit &unit) {
  Layout layout;
  std::vector<const ImageQuad *> quads;
  for (const ImageQuad &q : unit.quads) {
    if (q.group == ImageQuad::kZeroQuad)
      layout.zeroSlots.push_back(q.slot);
    else if (q.group >= 0)
      quads.push_back(&q);
  }
  std::sort(quads.begin(), quads.end(),
            [](const ImageQuad *a, const ImageQuad *b) {
              return a->group != b->group ? a->group < b->group
                                          : a->address < b->address;
            });
  for (const ImageQuad *q : quads) {
    int64_t unitStart = q->address / kMvUnitLongWords * kMvUnitLongWords;
    int64_t unitEnd =
        roundUp(q->address + kQuadLongWords, kMvUnitLongWords);
    if (layout.ranges.empty() || layout.ranges.back().group != q->group ||
        unitStart > layout.ranges.back().start +
                        layout.ranges.back().longWords +
                        kMergeGapUnits * kMvUnitLongWords) {
      Range r;
      r.group = q->group;
      r.start = unitStart;
      r.longWords = 0;
      r.l2bm = layout.longWords;
      layout.ranges.push_back(r);
    }
    Range &r = layout.ranges.back();
    int64_t end = std::max(r.start + r.longWords, unitEnd);
    layout.longWords += end - (r.start + r.longWords);
    r.longWords = end - r.start;
    layout.slots[q->slot] = {r.l2bm + (q->address - r.start), q->valid};
  }
  std::sort(layout.zeroSlots.begin(), layout.zeroSlots.end());
  return layout;
}

bool sameShape(const Layout &a, const Layout &b) {
  if (a.ranges.size() != b.ranges.size() || a.slots != b.slots ||
      a.zeroSlots != b.zeroSlots)
    return false;
  for (size_t i = 0; i < a.ranges.size(); ++i)
    if (a.ranges[i].longWords != b.ranges[i].longWords ||
        a.ranges[i].l2bm != b.ranges[i].l2bm)
      return false;
  return true;
}

} // namespace

bool gemm::sameLayout(const std::vector<LoadUnit> &units,
                      const LoadBudget &budget) {
  if (units.empty())
    return true;
  Layout first = layoutOf(units[0]);
  if (first.longWords > budget.l2bmLongWords)
    return false;
  for (size_t u = 1; u < units.size(); ++u)
    if (!sameShape(first, layoutOf(units[u])))
      return false;
  return true;
}

bool gemm::loadImages(VsmWriter &out, PeSetup &setup, const MatrixUnit &unit,
                      const std::vector<LoadUnit> &units,
                      const LoadBudget &budget, std::string &error) {
  if (units.empty())
    return true;
  std::vector<Layout> layouts;
  for (const LoadUnit &u : units)
    layouts.push_back(layoutOf(u));
  const Layout &layout = layouts[0];
  for (size_t u = 1; u < units.size(); ++u)
    if (!sameShape(layout, layouts[u])) {
      error = "the L2Bs' images do not lie out alike";
      return false;
    }
  if (layout.longWords > budget.l2bmLongWords) {
    error = "an image of " + std::to_string(layout.longWords) +
            " long words does not fit the L2BM budget";
    return false;
  }

  // MV: one parallel transfer per range when every unit reads its own
  // group at the same address (mvb2 when both L2Bs of every group take
  // the same range), else one transfer per unit.
  std::set<unsigned> groups, l2bs;
  for (const LoadUnit &u : units) {
    groups.insert(u.group);
    l2bs.insert(u.l2b);
  }
  bool everyGroup = groups.size() == kDramGroups &&
                    units.size() == groups.size() * l2bs.size();
  std::vector<unsigned> tags;
  for (size_t i = 0; i < layout.ranges.size(); ++i) {
    const Range &r0 = layout.ranges[i];
    int64_t l2bm = budget.l2bmBase + r0.l2bm;
    bool parallel = everyGroup;
    bool bothSame = l2bs.size() == 2;
    for (size_t u = 0; u < units.size() && parallel; ++u) {
      const Range &r = layouts[u].ranges[i];
      parallel = r.group == int(units[u].group);
      // Every group at the same address, per L2B.
      for (size_t v = 0; v < units.size() && parallel; ++v)
        if (units[v].l2b == units[u].l2b)
          parallel = layouts[v].ranges[i].start == r.start;
      for (size_t v = 0; v < units.size(); ++v)
        if (units[v].l2b != units[u].l2b &&
            layouts[v].ranges[i].start != r.start)
          bothSame = false;
    }
    std::string size = "/n" + std::to_string(r0.longWords);
    if (parallel && bothSame) {
      unsigned tag = out.newTag();
      tags.push_back(tag);
      out.statement("mvb2" + size + VsmWriter::tagName(tag) + " $d" +
                    std::to_string(r0.start) + " $lc" + std::to_string(l2bm));
      continue;
    }
    if (parallel) {
      for (unsigned l2b : l2bs) {
        int64_t start = 0;
        for (size_t u = 0; u < units.size(); ++u)
          if (units[u].l2b == l2b)
            start = layouts[u].ranges[i].start;
        unsigned tag = out.newTag();
        tags.push_back(tag);
        out.statement("mvp" + size + VsmWriter::tagName(tag) + " $d" +
                      std::to_string(start) + " $lc" + std::to_string(l2bm) +
                      "@." + std::to_string(l2b));
      }
      continue;
    }
    for (size_t u = 0; u < units.size(); ++u) {
      const Range &r = layouts[u].ranges[i];
      unsigned tag = out.newTag();
      tags.push_back(tag);
      out.statement("mvp" + size + VsmWriter::tagName(tag) + " $d" +
                    std::to_string(r.start) + "@" + std::to_string(r.group) +
                    " $lc" + std::to_string(l2bm) + "@" +
                    std::to_string(units[u].group) + "." +
                    std::to_string(units[u].l2b));
    }
  }
  // Which slots each L2BM quad feeds, in slot order (a quad may feed
  // several).
  std::map<int64_t, std::vector<std::pair<int64_t, int>>> feeds;
  for (const auto &[slot, where] : layout.slots)
    feeds[where.first / kQuadLongWords].push_back({slot, where.second});

  // Pieces of the L2BM image through the two halves of the L1BM transit
  // buffer: l2bmb the next piece while the runs of this one go out.
  int64_t piece = budget.l1bmLongWords / 2 / kL2bmStepLongWords *
                  kL2bmStepLongWords;
  if (piece <= 0) {
    error = "no L1BM transit buffer";
    return false;
  }
  int64_t pieces = ceilDiv(layout.longWords, piece);
  auto l2bmbSteps = [&](int64_t p) {
    std::vector<std::string> steps;
    int64_t first = p * piece;
    int64_t count = std::min(piece, layout.longWords - first);
    int64_t half = p % 2 ? piece : 0;
    for (int64_t o = 0; o < count; o += kL2bmStepLongWords)
      steps.push_back("l2bmb " + l2bmOperand(budget.l2bmBase + first + o) +
                      " " + l1bmOperand(budget.l1bmBase + half + o));
    return steps;
  };
  auto runSteps = [&](int64_t p, std::vector<std::string> &steps) -> bool {
    int64_t first = p * piece;
    int64_t count = std::min(piece, layout.longWords - first);
    int64_t half = p % 2 ? piece : 0;
    int perLw = unit.perLongWord;
    for (int64_t run = 0; run < count; run += 16) {
      int64_t quad0 = (first + run) / kQuadLongWords;
      // Passes: the k-th destination of every quad of the run.
      for (size_t pass = 0;; ++pass) {
        bool any = false;
        std::array<int64_t, 4> dest;
        std::array<int, 4> valid;
        for (int c = 0; c < 4; ++c) {
          dest[c] = budget.trashSlot;
          valid[c] = 4 * perLw;
          auto it = feeds.find(quad0 + c);
          if (it != feeds.end() && pass < it->second.size()) {
            dest[c] = it->second[pass].first;
            valid[c] = it->second[pass].second;
            any = true;
          }
        }
        if (!any)
          break;
        std::optional<unsigned> mask = setup.laneMask(valid, perLw, error);
        if (!error.empty())
          return false;
        std::string opcode = "l1bmm";
        if (mask)
          opcode += "/$imr" + std::to_string(*mask);
        steps.push_back(opcode + " " +
                        l1bmOperand(budget.l1bmBase + half + run) + " " +
                        lwAny(PeMemory::LM0, dest));
      }
    }
    return true;
  };
  // The masks are set up before the first transfer that needs them: build
  // every run first (which emits the setup), then the transfers.
  std::vector<std::vector<std::string>> runs(static_cast<size_t>(pieces)),
      copies(static_cast<size_t>(pieces));
  for (int64_t p = 0; p < pieces; ++p) {
    copies[size_t(p)] = l2bmbSteps(p);
    if (!runSteps(p, runs[size_t(p)]))
      return false;
  }
  // Wait for the transfers only now: the masks were set up meanwhile.
  for (unsigned tag : tags)
    out.wait(tag);
  for (const std::string &s : copies[0])
    out.step({s});
  for (int64_t p = 0; p < pieces; ++p) {
    // The L1BM writes of this piece land a step before its first run.
    out.nop();
    const std::vector<std::string> &next =
        p + 1 < pieces ? copies[size_t(p + 1)] : std::vector<std::string>();
    size_t n = std::max(runs[size_t(p)].size(), next.size());
    for (size_t i = 0; i < n; ++i)
      out.step({i < runs[size_t(p)].size() ? runs[size_t(p)][i] : "",
                i < next.size() ? next[i] : ""});
  }
  // Quads of zeros, four slots a step.
  for (size_t i = 0; i < layout.zeroSlots.size(); i += 4) {
    std::array<int64_t, 4> dest;
    for (size_t c = 0; c < 4; ++c)
      dest[c] = i + c < layout.zeroSlots.size() ? layout.zeroSlots[i + c]
                                                : budget.trashSlot;
    out.step({"zero " + lwAny(PeMemory::LM0, dest)});
  }
  // LM0 writes land before the next reader's step.
  out.nop();
  return true;
}

//===----------------------------------------------------------------------===//
// Constant streams
//===----------------------------------------------------------------------===//

namespace {
/// Long words of a stream chunk: one MV transfer, one L2BM buffer, one
/// L1BM buffer; smaller for a stream that needs less.
constexpr int64_t kMaxChunk = 2048;
int64_t chunkLongWords(int64_t peLongWords, bool mabBroadcast) {
  int64_t perPe = mabBroadcast ? 4 : 64;
  // l1bmm moves eight long words a PE and step, l1bmd four.
  int64_t step = mabBroadcast ? 8 : 4;
  int64_t need = roundUp(roundUp(peLongWords, step) * perPe, kMvUnitLongWords);
  return std::min(kMaxChunk, need);
}
int64_t peLongWordsPerChunk(int64_t chunk, bool mabBroadcast) {
  return mabBroadcast ? chunk / 4 : chunk / 64;
}
} // namespace

int64_t gemm::constantStreamLongWords(int64_t peLongWords, bool mabBroadcast) {
  int64_t chunk = chunkLongWords(peLongWords, mabBroadcast);
  return ceilDiv(peLongWords, peLongWordsPerChunk(chunk, mabBroadcast)) *
         chunk;
}

int64_t gemm::constantStreamOffset(int64_t j, int64_t peLongWords,
                                   unsigned mab, unsigned pe,
                                   bool mabBroadcast) {
  int64_t size = chunkLongWords(peLongWords, mabBroadcast);
  int64_t perChunk = peLongWordsPerChunk(size, mabBroadcast);
  int64_t chunk = j / perChunk, local = j % perChunk;
  int64_t inChunk = mabBroadcast ? 4 * local + pe : 64 * local + 4 * mab + pe;
  return chunk * size + inChunk;
}

void gemm::loadConstantStream(VsmWriter &out, const ConstantStream &stream,
                              PeMemory memory, int64_t peLongWord,
                              int64_t l2bmBase, int64_t l1bmBase) {
  const int64_t kChunk = chunkLongWords(stream.peLongWords, stream.mabBroadcast);
  int64_t perChunk = peLongWordsPerChunk(kChunk, stream.mabBroadcast);
  int64_t chunks = ceilDiv(stream.peLongWords, perChunk);
  // Up to four chunks in flight in the L2BM, two in the L1BM.
  constexpr int64_t kInFlight = 4;
  std::vector<unsigned> tags(static_cast<size_t>(chunks));
  auto issue = [&](int64_t c) {
    tags[size_t(c)] = out.newTag();
    out.statement("mvb2/n" + std::to_string(kChunk) +
                  VsmWriter::tagName(tags[size_t(c)]) + " $d" +
                  std::to_string(stream.base + c * kChunk) + " $lc" +
                  std::to_string(l2bmBase + (c % kInFlight) * kChunk));
  };
  for (int64_t c = 0; c < std::min(chunks, kInFlight); ++c)
    issue(c);
  for (int64_t c = 0; c < chunks; ++c) {
    out.wait(tags[size_t(c)]);
    int64_t l2bm = l2bmBase + (c % kInFlight) * kChunk;
    int64_t l1bm = l1bmBase + (c % 2) * kChunk;
    for (int64_t o = 0; o < kChunk; o += kL2bmStepLongWords)
      out.step({"l2bmb " + l2bmOperand(l2bm + o) + " " +
                l1bmOperand(l1bm + o)});
    // The L2BM buffer is free once copied: refill it.
    if (c + kInFlight < chunks) {
      out.nop(); // the copy reads the L2BM before the MV overwrites it
      issue(c + kInFlight);
    }
    out.nop();
    int64_t j0 = c * perChunk;
    int64_t count = std::min(perChunk, stream.peLongWords - j0);
    if (stream.mabBroadcast) {
      for (int64_t j = 0; j < count; j += 8)
        out.step({"l1bmm " + l1bmOperand(l1bm + 4 * j, true) + " " +
                  llRun(memory, peLongWord + j0 + j)});
    } else {
      for (int64_t j = 0; j < count; j += 4)
        out.step({"l1bmd " + l1bmOperand(l1bm + 64 * j) + " " +
                  lwRun(memory, peLongWord + j0 + j)});
    }
  }
  out.nop();
}
