//===- Reorder.cpp - Transposes, layout switches and repacks of any size --===//
//
// A reorder moves every element of a tensor to another place in DRAM: an
// ONNX Transpose, the planner's switch between two DRAM orders of one
// tensor (a Transpose with the identity perm, docs/codegen.md C4), or a
// Reshape / Flatten whose padded rows differ. The general kernel does them
// for small tensors in one PE; this kernel does them at any size, with the
// 64 L1Bs working on different *tiles* of the output at once.
//
// A tile is what one L1B does in one round: it needs runs of input long
// words (its *pieces*), which it gathers into a *window*, and it writes
// runs of output long words (its *segments*), which it builds in a
// *buffer*. Eight tiles make an L2B's share of a round, a *box*:
//
//   DRAM --mvp--> L2BM staging --l2bmb@k--> L1BM window --l1bmp--> LM0
//   LM0 --element copies--> LM1 buffer --l1bmd (base 2 $peid)--> L1BM
//   L1BM --l2bm@k--> L2BM assembly --mvp--> DRAM
//
// The box's pieces arrive merged (one MV per run of adjacent input), its
// segments leave merged (one MV per run of adjacent output). Every L1B
// runs the same instruction stream, so the boxes of one round agree: the
// same tile *class* (piece and segment lengths, the map from buffer words
// to window words) and the same L2BM layout.
//
// Two planners make tiles (docs/codegen.md R decisions):
//  * chunks: the output cut into 64-long-word-aligned ranges, whatever the
//    rows (repacks, and any reorder);
//  * boxes of a batched transpose [B][X][Y] -> [B][Y][X] (layout switches
//    NCHW <-> NHWC, [M,N] transposes): x and y ranges chosen so that the
//    inputs or the outputs of a box are long runs.
// The cheapest plan by an estimate of its cycles wins.
//
//===----------------------------------------------------------------------===//

#include "ActivationSpread.h"
#include "GeneralLowering.h"
#include "Generators.h"
#include "ResizeSamples.h"

#include "mncc/codegen/Transfer.h"
#include "mncc/reference/PadSource.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <numeric>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::general;

namespace {

/// Long words of LM0 a window and of LM1 a buffer may take (below
/// ElemProgram's scratch).
constexpr int64_t kWindowLimit = 1984;
/// Where the gathered buffer goes in the L1BM (above any window).
constexpr int64_t kL1bmBuffer = 4096;
/// Requests whose images together fit this are left to the general
/// kernel, which does them in one PE without rounds.
constexpr int64_t kSmallLongWords = 2048;
constexpr unsigned kL2bs = kDramGroups * kL2bsPerGroup;

/// An element's place in an image: group block, long word in the block,
/// and its first *unit* in the long word. A unit is what the element
/// copies address: a word (32- and 64-bit elements, 2 a long word) or a
/// half (16-bit elements, 4 a long word, two to a word, the first the
/// word's most significant).
struct Place {
  unsigned group;
  int64_t longWord;
  unsigned unit;
};

/// A run of long words of one group's block of an image. For the inputs
/// `group` is the *source*: input k's group g is k * kDramGroups + g (a
/// Concat reads several tensors).
struct Run {
  unsigned group;
  int64_t first;
  int64_t longWords;
  bool operator<(const Run &o) const {
    return std::tie(group, first) < std::tie(o.group, o.first);
  }
};

/// Units an element takes, and a long word holds.
unsigned elementUnits(DeviceType type) {
  return type == DeviceType::Double ? 2 : 1;
}
unsigned unitsPerLongWord(DeviceType type) {
  return type == DeviceType::Half ? 4 : 2;
}

Place placeOf(const DramForm &form, const std::vector<int64_t> &index,
              unsigned input = 0) {
  DramForm::Location at = form.locate(index);
  unsigned units = elementUnits(form.type);
  return {input * kDramGroups + at.group, at.address - form.base,
          units == 2 ? 0 : at.slot};
}

/// The DRAM group of a source (Run).
unsigned dramGroupOf(unsigned source) { return source % kDramGroups; }

/// What one tile does, independent of where: the lengths of its pieces
/// and segments, where they lie in the window and the buffer, and for
/// every buffer unit the window unit it copies (-1: zero).
struct TileClass {
  std::vector<int64_t> pieceLongWords, windowOffset;
  int64_t windowLongWords = 0;
  std::vector<int64_t> segmentLongWords, bufferOffset;
  int64_t bufferLongWords = 0;
  /// Units of a long word (Place): 2 words, or 4 halves.
  unsigned unitsPerLongWord = 2;
  std::vector<int32_t> local;

  auto key() const { return std::tie(pieceLongWords, segmentLongWords, local); }
};

struct Tile {
  std::vector<Run> pieces, segments;
  int cls = -1;
};

/// An element of a tile: where it goes, where it comes from.
struct Move {
  Place to, from;
};

/// Builds a tile and its class from its elements. Input long words less
/// than `gap` apart join one piece; output long words form segments,
/// each extended to the end of its row's padding when the tile holds the
/// row's last element (`rowEnds`: output long words where a row's data
/// ends, with the padded end). False when the window or the buffer does
/// not fit.
bool buildTile(const std::vector<Move> &moves,
               const std::vector<std::pair<Place, int64_t>> &rowEnds,
               int64_t gap, DeviceType type, Tile &tile, TileClass &cls) {
  std::vector<std::pair<unsigned, int64_t>> in, out;
  for (const Move &m : moves) {
    in.push_back({m.from.group, m.from.longWord});
    out.push_back({m.to.group, m.to.longWord});
  }
  for (const auto &[end, padded] : rowEnds)
    for (int64_t w = end.longWord; w < padded; ++w)
      out.push_back({end.group, w});
  auto runs = [](std::vector<std::pair<unsigned, int64_t>> &longWords,
                 int64_t join, std::vector<Run> &result,
                 std::vector<int64_t> &offsets, int64_t &total) {
    std::sort(longWords.begin(), longWords.end());
    longWords.erase(std::unique(longWords.begin(), longWords.end()),
                    longWords.end());
    for (size_t i = 0; i < longWords.size();) {
      size_t j = i + 1;
      while (j < longWords.size() && longWords[j].first == longWords[i].first &&
             longWords[j].second - longWords[j - 1].second <= join)
        ++j;
      int64_t length = longWords[j - 1].second - longWords[i].second + 1;
      result.push_back({longWords[i].first, longWords[i].second, length});
      offsets.push_back(total);
      total += length;
      i = j;
    }
  };
  tile = Tile();
  cls = TileClass();
  runs(in, gap, tile.pieces, cls.windowOffset, cls.windowLongWords);
  runs(out, 1, tile.segments, cls.bufferOffset, cls.bufferLongWords);
  if (cls.windowLongWords > kWindowLimit || cls.bufferLongWords > kWindowLimit)
    return false;
  for (const Run &r : tile.pieces)
    cls.pieceLongWords.push_back(r.longWords);
  for (const Run &r : tile.segments)
    cls.segmentLongWords.push_back(r.longWords);
  cls.windowLongWords = roundUp(std::max<int64_t>(cls.windowLongWords, 1), 8);
  cls.bufferLongWords = roundUp(std::max<int64_t>(cls.bufferLongWords, 1), 4);
  unsigned perLongWord = unitsPerLongWord(type), units = elementUnits(type);
  cls.unitsPerLongWord = perLongWord;
  cls.local.assign(size_t(perLongWord * cls.bufferLongWords), -1);
  auto locate = [](const std::vector<Run> &list,
                   const std::vector<int64_t> &offsets, unsigned group,
                   int64_t longWord) {
    Run probe{group, longWord, 0};
    auto it = std::upper_bound(list.begin(), list.end(), probe);
    size_t i = size_t(it - list.begin()) - 1;
    return offsets[i] + (longWord - list[i].first);
  };
  for (const Move &m : moves) {
    int64_t window =
        locate(tile.pieces, cls.windowOffset, m.from.group, m.from.longWord);
    int64_t buffer =
        locate(tile.segments, cls.bufferOffset, m.to.group, m.to.longWord);
    for (unsigned u = 0; u < units; ++u)
      cls.local[size_t(perLongWord * buffer + m.to.unit + u)] =
          int32_t(perLongWord * window + m.from.unit + u);
  }
  return true;
}

/// An L2B's share of a round: a tile (or none) per L1B.
struct Box {
  std::array<int, kL1bsPerL2b> tiles;
  Box() { tiles.fill(-1); }
};

/// Where a box's pieces and segments lie in the L2BM, and the transfers
/// (whole MV units each) that bring and take them.
struct BoxLayout {
  std::vector<Run> staging, assembly;
  std::vector<int64_t> stagingAt, assemblyAt;
  /// Per L1B slot, per piece / segment: its L2BM address.
  std::array<std::vector<int64_t>, kL1bsPerL2b> pieceAt, segmentAt;
  int cls = -1;
  unsigned slots = 0; // bit k: L1B k has a tile

  auto key() const {
    std::vector<int64_t> stagingLengths, assemblyLengths;
    for (const Run &r : staging)
      stagingLengths.push_back(r.longWords);
    for (const Run &r : assembly)
      assemblyLengths.push_back(r.longWords);
    return std::make_tuple(cls, slots, stagingLengths, assemblyLengths, pieceAt,
                           segmentAt);
  }
};

/// Lays a box out: the union of its pieces merged into staging runs
/// (gaps of up to an MV unit read along), the union of its segments into
/// assembly runs, each at whole MV units in the L2BM. False when it does
/// not fit the L2BM, or when an assembly run would write past its end
/// into another tile's output: a run is a whole number of MV units or ends
/// at its block's data.
bool layoutBox(const Box &box, const std::vector<Tile> &tiles,
               const DramForm &out, int64_t stagingJoin, BoxLayout &layout) {
  layout = BoxLayout();
  std::vector<Run> pieces, segments;
  for (unsigned k = 0; k < kL1bsPerL2b; ++k) {
    if (box.tiles[k] < 0)
      continue;
    const Tile &tile = tiles[size_t(box.tiles[k])];
    if (layout.cls >= 0 && tile.cls != layout.cls)
      return false;
    layout.cls = tile.cls;
    layout.slots |= 1u << k;
    pieces.insert(pieces.end(), tile.pieces.begin(), tile.pieces.end());
    segments.insert(segments.end(), tile.segments.begin(), tile.segments.end());
  }
  auto merge = [](std::vector<Run> list, int64_t join) {
    std::sort(list.begin(), list.end());
    std::vector<Run> merged;
    for (const Run &r : list) {
      if (!merged.empty() && merged.back().group == r.group &&
          r.first <= merged.back().first + merged.back().longWords + join) {
        Run &m = merged.back();
        m.longWords = std::max(m.longWords, r.first + r.longWords - m.first);
        continue;
      }
      merged.push_back(r);
    }
    return merged;
  };
  layout.staging = merge(pieces, stagingJoin);
  layout.assembly = merge(segments, 0);
  int64_t next = 0;
  for (const Run &r : layout.staging) {
    layout.stagingAt.push_back(next);
    next += roundUp(r.longWords, kMvUnitLongWords);
  }
  if (next > kL2bmLongWords)
    return false;
  int64_t block = out.groupLongWords();
  next = 0;
  for (const Run &r : layout.assembly) {
    bool whole = r.longWords % kMvUnitLongWords == 0;
    // The data of a block ends with its last row; the block's tail up to
    // whole MV units holds nothing.
    unsigned g = r.group;
    int64_t dataEnd = out.rowsInGroup(g) * out.rowLongWords();
    if (!whole && !(r.first + r.longWords == dataEnd &&
                    r.first + roundUp(r.longWords, kMvUnitLongWords) <= block))
      return false;
    layout.assemblyAt.push_back(next);
    next += roundUp(r.longWords, kMvUnitLongWords);
  }
  // The last l2bm@k step may run one MV unit past the assembly.
  if (next + kMvUnitLongWords > kL2bmLongWords)
    return false;
  auto addressIn = [](const std::vector<Run> &runs,
                      const std::vector<int64_t> &at, const Run &r) {
    auto it = std::upper_bound(runs.begin(), runs.end(), r);
    size_t i = size_t(it - runs.begin()) - 1;
    return at[i] + (r.first - runs[i].first);
  };
  for (unsigned k = 0; k < kL1bsPerL2b; ++k) {
    if (box.tiles[k] < 0)
      continue;
    const Tile &tile = tiles[size_t(box.tiles[k])];
    for (const Run &r : tile.pieces)
      layout.pieceAt[k].push_back(
          addressIn(layout.staging, layout.stagingAt, r));
    for (const Run &r : tile.segments)
      layout.segmentAt[k].push_back(
          addressIn(layout.assembly, layout.assemblyAt, r));
  }
  return true;
}

/// A round's empty L2B.
constexpr size_t kNoBox = ~size_t(0);

/// A plan: the tiles, their classes, the boxes laid out, and the rounds
/// (for each of the eight L2Bs a box of one layout key, or kNoBox).
struct Plan {
  std::string planner;
  std::vector<Tile> tiles;
  std::vector<TileClass> classes;
  std::vector<BoxLayout> boxes;
  std::vector<std::vector<size_t>> rounds;
  double cycles = 0;
  /// Staging runs of a box join across gaps of up to this many long words
  /// (read along): one MV issue slot costs 16 cycles, the DRAM's time for
  /// about 300 long words.
  int64_t stagingJoin = kMvUnitLongWords;
  /// Whether some box of eight tiles did not lay out and was split (R8).
  bool split = false;
};

/// How the buffer's words are made from the window's (emitRound): a word
/// zeroed, copied, or for halves assembled from two halves of other words.
struct BufferFill {
  /// Runs of words to zero: (first, count).
  std::vector<std::pair<int32_t, int32_t>> zeros;
  /// Word copies (buffer word, window word), merged by recordCopies.
  std::vector<std::pair<Slot, Slot>> copies;
  /// Half assemblies: buffer word, and the window half of each of its
  /// halves (-1: zero).
  struct Assembly {
    int32_t word;
    int32_t high, low;
  };
  std::vector<Assembly> assemblies;
};

BufferFill bufferFill(const TileClass &cls) {
  BufferFill fill;
  bool halves = cls.unitsPerLongWord == 4;
  size_t words = size_t(2 * cls.bufferLongWords);
  auto unitsOf = [&](size_t w) -> std::pair<int32_t, int32_t> {
    if (!halves)
      return {cls.local[w], -1};
    return {cls.local[2 * w], cls.local[2 * w + 1]};
  };
  for (size_t w = 0; w < words;) {
    auto [high, low] = unitsOf(w);
    bool empty = high < 0 && (!halves || low < 0);
    if (empty) {
      size_t end = w;
      while (end < words) {
        auto [h, l] = unitsOf(end);
        if (h >= 0 || (halves && l >= 0))
          break;
        ++end;
      }
      fill.zeros.push_back({int32_t(w), int32_t(end - w)});
      w = end;
      continue;
    }
    if (!halves)
      fill.copies.push_back(
          {{PeMemory::LM1, int32_t(w)}, {PeMemory::LM0, high}});
    else if (high >= 0 && high % 2 == 0 && low == high + 1)
      fill.copies.push_back(
          {{PeMemory::LM1, int32_t(w)}, {PeMemory::LM0, high / 2}});
    else
      fill.assemblies.push_back({int32_t(w), high, low});
    ++w;
  }
  return fill;
}

/// Copy operations a class's element copies take once merged (as
/// recordCopies merges them: runs aligned alike on both sides), and the
/// integer operations of half assemblies.
int64_t copyOperations(const TileClass &cls) {
  BufferFill fill = bufferFill(cls);
  int64_t operations = 0;
  for (const BufferFill::Assembly &a : fill.assemblies)
    operations += a.high >= 0 && a.low >= 0 ? 3 : 1;
  const auto &copies = fill.copies;
  size_t i = 0;
  while (i < copies.size()) {
    size_t end = i + 1;
    while (end < copies.size() &&
           copies[end].first.word == copies[end - 1].first.word + 1 &&
           copies[end].second.word == copies[end - 1].second.word + 1)
      ++end;
    while (i < end) {
      size_t left = end - i, step = 1;
      int32_t w = copies[i].first.word, from = copies[i].second.word;
      if (w % 4 == 0 && from % 4 == 0 && left >= 4)
        step = 4;
      else if (w % 2 == 0 && from % 2 == 0 && left >= 2)
        step = 2;
      ++operations;
      i += step;
    }
  }
  return operations;
}

/// Records the buffer's fill: zeros, merged copies, and each assembled
/// word of halves as its high half (`iand` with 0xffff0000 of a word's
/// high half, or `ilsl` 16 of its low half), its low half (`iand` with
/// 0xffff of a low half, `uilsr` 16 of a high one) in a GRF0 word, and
/// `ior` of the two.
void recordBufferFill(ElemProgram &program, const TileClass &cls) {
  BufferFill fill = bufferFill(cls);
  for (const auto &[first, count] : fill.zeros)
    program.zeroRange({PeMemory::LM1, first}, count);
  recordCopies(program, fill.copies);
  if (fill.assemblies.empty())
    return;
  constexpr int32_t kTemporaries = 256;
  std::optional<Slot> temporaries =
      program.allocate(PeMemory::GRF0, kTemporaries);
  Slot highMask = program.constantBits(0xffff0000u),
       lowMask = program.constantBits(0x0000ffffu),
       sixteen = program.constantBits(16);
  int32_t next = 0;
  for (const BufferFill::Assembly &a : fill.assemblies) {
    Slot dst{PeMemory::LM1, a.word};
    auto part = [&](int32_t half, bool high, Slot to) {
      Slot from{PeMemory::LM0, half / 2};
      bool fromHigh = half % 2 == 0;
      if (high == fromHigh)
        program.integer(ElemOpcode::IAnd, to, from, high ? highMask : lowMask);
      else
        program.integer(high ? ElemOpcode::ILsl : ElemOpcode::ILsrU, to, from,
                        sixteen);
    };
    if (a.high < 0) {
      part(a.low, false, dst);
      continue;
    }
    part(a.high, true, dst);
    if (a.low < 0)
      continue;
    Slot low = temporaries->offset(next);
    next = (next + 1) % kTemporaries;
    part(a.low, false, low);
    program.integer(ElemOpcode::IOr, dst, dst, low);
  }
}

/// Estimated cycles of a round (R6): the MV issue slots (16 cycles each,
/// one stream for the board) or the data's time through the DRAMs and
/// links, whichever is longer, and four cycles a PE step.
size_t firstBox(const std::vector<size_t> &round) {
  for (size_t b : round)
    if (b != kNoBox)
      return b;
  return kNoBox;
}

double roundCycles(const Plan &plan, const std::vector<size_t> &round) {
  // Per source or destination DRAM: its transfers one after another, at
  // the link's rate (8 long words a cycle) when they cross groups, the
  // DRAM's (64 per 3 cycles) when not.
  std::array<double, kDramGroups> port{};
  double issue = 0;
  for (size_t l2b = 0; l2b < round.size(); ++l2b) {
    if (round[l2b] == kNoBox)
      continue;
    const BoxLayout &layout = plan.boxes[round[l2b]];
    unsigned group = unsigned(l2b / kL2bsPerGroup);
    issue += 16.0 * double(layout.staging.size() + layout.assembly.size());
    for (const std::vector<Run> *runs : {&layout.staging, &layout.assembly})
      for (const Run &r : *runs)
        port[dramGroupOf(r.group)] +=
            double(roundUp(r.longWords, kMvUnitLongWords)) / kMvUnitLongWords *
            (dramGroupOf(r.group) == group ? 3 : 8);
  }
  double data = *std::max_element(port.begin(), port.end());
  const BoxLayout &first = plan.boxes[firstBox(round)];
  const TileClass &c = plan.classes[size_t(first.cls)];
  unsigned tiles = unsigned(__builtin_popcount(first.slots));
  int64_t pieceSteps = 0, segmentSteps = 0;
  for (int64_t length : c.pieceLongWords)
    pieceSteps += ceilDiv(length, kL2bmStepLongWords);
  for (int64_t length : c.segmentLongWords)
    segmentSteps += ceilDiv(length, kL2bmStepLongWords);
  int64_t steps = tiles * (pieceSteps + segmentSteps) + c.windowLongWords / 8 +
                  ceilDiv(copyOperations(c), 4) +
                  ceilDiv(c.bufferLongWords, 4 * kPesPerL1b) + 24;
  return std::max(issue, data) + 4.0 * double(steps);
}

/// Classes the tiles, lays the boxes out and forms the rounds. False when
/// a box does not lay out.
bool finishPlan(const DramForm &out, std::vector<Box> planned, Plan &plan) {
  // A box's L1Bs run one instruction stream: tiles of different classes
  // go in different boxes, at the same L1B slots.
  std::vector<Box> boxes;
  for (const Box &box : planned) {
    std::map<int, Box> byClass;
    for (unsigned k = 0; k < kL1bsPerL2b; ++k)
      if (box.tiles[k] >= 0)
        byClass[plan.tiles[size_t(box.tiles[k])].cls].tiles[k] = box.tiles[k];
    for (auto &entry : byClass)
      boxes.push_back(entry.second);
  }
  std::map<decltype(std::declval<BoxLayout>().key()), std::vector<size_t>>
      byKey;
  std::vector<decltype(std::declval<BoxLayout>().key())> keyOrder;
  // A box whose staging or assembly does not fit the L2BM is split in two
  // by its slots, down to single tiles: a chunk tile alone always fits
  // (R8).
  std::vector<BoxLayout> laid;
  std::function<bool(const Box &)> lay = [&](const Box &box) {
    BoxLayout layout;
    if (layoutBox(box, plan.tiles, out, plan.stagingJoin, layout)) {
      laid.push_back(std::move(layout));
      return true;
    }
    std::vector<unsigned> used;
    for (unsigned k = 0; k < kL1bsPerL2b; ++k)
      if (box.tiles[k] >= 0)
        used.push_back(k);
    if (used.size() < 2)
      return false;
    plan.split = true;
    Box first, second;
    for (size_t i = 0; i < used.size(); ++i)
      (i < used.size() / 2 ? first : second).tiles[used[i]] =
          box.tiles[used[i]];
    return lay(first) && lay(second);
  };
  for (const Box &box : boxes)
    if (!lay(box))
      return false;
  for (BoxLayout &layout : laid) {
    if (layout.cls < 0)
      continue;
    auto key = layout.key();
    auto &list = byKey[key];
    if (list.empty())
      keyOrder.push_back(key);
    list.push_back(plan.boxes.size());
    plan.boxes.push_back(std::move(layout));
  }
  // Rounds: each box on an L2B of the group its output goes to where
  // there is one (its transfers back stay in the group), the others
  // filling the L2Bs left.
  for (const auto &key : keyOrder) {
    std::array<std::vector<size_t>, kDramGroups> home;
    for (size_t b : byKey[key]) {
      const BoxLayout &layout = plan.boxes[b];
      unsigned g = layout.assembly.empty() ? 0 : layout.assembly[0].group;
      home[g].push_back(b);
    }
    std::array<size_t, kDramGroups> next{};
    auto left = [&](unsigned g) { return home[g].size() - next[g]; };
    while (true) {
      std::vector<size_t> round(kL2bs, kNoBox);
      bool any = false;
      for (unsigned g = 0; g < kDramGroups; ++g)
        for (unsigned l = 0; l < kL2bsPerGroup && left(g); ++l) {
          round[g * kL2bsPerGroup + l] = home[g][next[g]++];
          any = true;
        }
      for (size_t l2b = 0; l2b < kL2bs; ++l2b) {
        if (round[l2b] != kNoBox)
          continue;
        unsigned most = 0;
        for (unsigned g = 1; g < kDramGroups; ++g)
          if (left(g) > left(most))
            most = g;
        if (!left(most))
          break;
        round[l2b] = home[most][next[most]++];
        any = true;
      }
      if (!any)
        break;
      plan.rounds.push_back(std::move(round));
    }
  }
  plan.cycles = 0;
  for (const auto &round : plan.rounds)
    plan.cycles += roundCycles(plan, round);
  return true;
}

/// Adds a tile, giving it the class of an equal one.
struct TileSet {
  Plan &plan;
  std::map<std::tuple<std::vector<int64_t>, std::vector<int64_t>,
                      std::vector<int32_t>>,
           int>
      ids;

  int add(Tile tile, TileClass cls) {
    auto key =
        std::make_tuple(cls.pieceLongWords, cls.segmentLongWords, cls.local);
    auto [it, inserted] = ids.emplace(key, int(plan.classes.size()));
    if (inserted)
      plan.classes.push_back(std::move(cls));
    tile.cls = it->second;
    plan.tiles.push_back(std::move(tile));
    return int(plan.tiles.size()) - 1;
  }
};

/// Where output element `index` comes from: input `input` at `from`; false
/// where it is zero (Pad's border).
using SourceFn =
    std::function<bool(const std::vector<int64_t> &index, unsigned &input,
                       std::vector<int64_t> &from)>;

/// The output long words where rows' data end, with their padded ends,
/// for the elements among `indices` that end a row.
void noteRowEnd(const DramForm &out, const std::vector<int64_t> &index,
                const Place &to,
                std::vector<std::pair<Place, int64_t>> &rowEnds) {
  if (out.shape.empty() || index[out.order.back()] != out.innerExtent() - 1)
    return;
  int64_t rowStart = to.longWord / out.rowLongWords() * out.rowLongWords();
  int64_t padded = rowStart + out.rowLongWords();
  if (to.longWord + 1 < padded)
    rowEnds.push_back({{to.group, to.longWord + 1, 0}, padded});
}

//===----------------------------------------------------------------------===//
// Chunk planner
//===----------------------------------------------------------------------===//

/// Tiles of `size` output long words (64-aligned ranges of each group
/// block, whatever the rows), eight a box: consecutive ones, or with
/// `bySource` the ones whose inputs start nearest (the chunks of one
/// channel range over several pixels, whose staging is one run: R10).
/// Every output element with a source, where it goes and where from (the
/// same for every chunk plan: computed once).
std::vector<Move> allMoves(const std::vector<DramForm> &ins,
                           const DramForm &out, const SourceFn &source) {
  std::vector<Move> moves;
  std::vector<int64_t> from;
  forEachIndex(out.shape, [&](const std::vector<int64_t> &index) {
    unsigned input = 0;
    if (source(index, input, from))
      moves.push_back({placeOf(out, index), placeOf(ins[input], from, input)});
  });
  return moves;
}

bool planChunks(const DramForm &out, const std::vector<Move> &all, int64_t size,
                int64_t gap, bool bySource, int64_t stagingJoin, Plan &plan) {
  plan = Plan();
  plan.planner =
      "chunks of " + std::to_string(size) + (bySource ? " by source" : "");
  plan.stagingJoin = stagingJoin;
  int64_t block = out.groupLongWords();
  int64_t perGroup = ceilDiv(block, size);
  size_t chunks = size_t(out.groups * perGroup);
  std::vector<std::vector<Move>> moves(chunks);
  for (const Move &m : all)
    moves[size_t(m.to.group * perGroup + m.to.longWord / size)].push_back(m);
  TileSet set{plan, {}};
  std::vector<Box> boxes;
  std::vector<int> ids;
  for (size_t c = 0; c < chunks; ++c) {
    unsigned g = unsigned(c / size_t(perGroup));
    int64_t first = int64_t(c % size_t(perGroup)) * size;
    int64_t length = std::min(size, block - first);
    // The whole chunk is a segment (its padding and the block's tail are
    // zeroed): a range from its first to its last long word.
    std::vector<std::pair<Place, int64_t>> rowEnds = {
        {{g, first, 0}, first + length}};
    Tile tile;
    TileClass cls;
    if (!buildTile(moves[c], rowEnds, gap, out.type, tile, cls))
      return false;
    ids.push_back(set.add(std::move(tile), std::move(cls)));
  }
  std::vector<size_t> order(chunks);
  std::iota(order.begin(), order.end(), size_t(0));
  if (bySource) {
    auto firstSource = [&](size_t c) {
      const Tile &tile = plan.tiles[size_t(ids[c])];
      return tile.pieces.empty() ? Run{~0u, 0, 0} : tile.pieces.front();
    };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return firstSource(a) < firstSource(b);
    });
  }
  for (size_t i = 0; i < chunks; ++i) {
    if (i % kL1bsPerL2b == 0)
      boxes.emplace_back();
    boxes.back().tiles[i % kL1bsPerL2b] = ids[order[i]];
  }
  return finishPlan(out, std::move(boxes), plan);
}

//===----------------------------------------------------------------------===//
// Box planner: batched transposes [B][X][Y] -> [B][Y][X]
//===----------------------------------------------------------------------===//

/// The dimensions of a batched transpose, as the input's logical
/// dimensions: the batch B leads both DRAM orders, the input's ends with
/// Y and the output's with X.
struct Transposition {
  std::vector<unsigned> batch, x, y;
};

std::optional<Transposition> asTransposition(const DramForm &in,
                                             const DramForm &out,
                                             const std::vector<int64_t> &perm) {
  std::vector<unsigned> lin = in.order, lout;
  for (unsigned d : out.order)
    lout.push_back(unsigned(perm[d]));
  size_t prefix = 0;
  while (prefix < lin.size() && lin[prefix] == lout[prefix])
    ++prefix;
  size_t rest = lin.size() - prefix;
  for (size_t split = 1; split < rest; ++split) {
    // lin = B X Y with |X| = split; lout = B Y X.
    bool match = true;
    for (size_t i = 0; i < rest && match; ++i) {
      size_t j = i < split ? rest - split + i : i - split;
      match = lin[prefix + i] == lout[prefix + j];
    }
    if (!match)
      continue;
    Transposition t;
    t.batch.assign(lin.begin(), lin.begin() + prefix);
    t.x.assign(lin.begin() + prefix, lin.begin() + prefix + split);
    t.y.assign(lin.begin() + prefix + split, lin.end());
    return t;
  }
  return std::nullopt;
}

int64_t extentOf(const DramForm &form, const std::vector<unsigned> &dims) {
  int64_t n = 1;
  for (unsigned d : dims)
    n *= form.shape[d];
  return n;
}

/// Writes flat index `value` of `dims` (row-major) into `index`.
void spread(const DramForm &form, const std::vector<unsigned> &dims,
            int64_t value, std::vector<int64_t> &index) {
  for (size_t i = dims.size(); i-- > 0;) {
    int64_t extent = form.shape[dims[i]];
    index[dims[i]] = value % extent;
    value /= extent;
  }
}

/// Tiles of bx x by elements of one batch, eight tiles along x (or y) a
/// box.
bool planBoxes(const DramForm &in, const DramForm &out,
               const std::vector<int64_t> &perm, const Transposition &t,
               int64_t bx, int64_t by, bool alongX, int64_t gap, Plan &plan) {
  plan = Plan();
  plan.planner = "boxes of " + std::to_string(bx) + " x " + std::to_string(by) +
                 (alongX ? " along x" : " along y");
  int64_t batches = extentOf(in, t.batch), X = extentOf(in, t.x),
          Y = extentOf(in, t.y);
  int64_t tilesX = ceilDiv(X, bx), tilesY = ceilDiv(Y, by);
  TileSet set{plan, {}};
  std::vector<Box> boxes;
  std::vector<int64_t> index(in.shape.size()), outIndex(in.shape.size());
  for (int64_t b = 0; b < batches; ++b) {
    spread(in, t.batch, b, index);
    // Boxes: eight tiles along the chosen dimension.
    int64_t outer = alongX ? tilesY : tilesX, inner = alongX ? tilesX : tilesY;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i0 = 0; i0 < inner; i0 += kL1bsPerL2b) {
        Box box;
        for (int64_t i = i0; i < std::min(inner, i0 + int64_t(kL1bsPerL2b));
             ++i) {
          int64_t tx = alongX ? i : o, ty = alongX ? o : i;
          std::vector<Move> moves;
          std::vector<std::pair<Place, int64_t>> rowEnds;
          for (int64_t x = tx * bx; x < std::min(X, (tx + 1) * bx); ++x) {
            spread(in, t.x, x, index);
            for (int64_t y = ty * by; y < std::min(Y, (ty + 1) * by); ++y) {
              spread(in, t.y, y, index);
              for (size_t k = 0; k < perm.size(); ++k)
                outIndex[k] = index[size_t(perm[k])];
              Place to = placeOf(out, outIndex);
              moves.push_back({to, placeOf(in, index)});
              noteRowEnd(out, outIndex, to, rowEnds);
            }
          }
          Tile tile;
          TileClass cls;
          if (!buildTile(moves, rowEnds, gap, out.type, tile, cls))
            return false;
          box.tiles[size_t(i - i0)] = set.add(std::move(tile), std::move(cls));
        }
        // A shape whose first box does not lay out is dropped before the
        // rest are built.
        BoxLayout probe;
        if (boxes.empty() &&
            !layoutBox(box, plan.tiles, out, plan.stagingJoin, probe))
          return false;
        boxes.push_back(box);
      }
  }
  return finishPlan(out, std::move(boxes), plan);
}

/// Tile extents worth trying for a dimension of `n`: n itself, its
/// divisors and multiples of 8 below it, up to `most`.
std::vector<int64_t> extentsFor(int64_t n, int64_t most) {
  std::vector<int64_t> result;
  for (int64_t v = 1; v <= std::min(n, most); ++v)
    if (v == n || n % v == 0 || v % 8 == 0)
      result.push_back(v);
  return result;
}

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

void emitRound(VsmWriter &out, const std::vector<DramForm> &ins,
               const DramForm &outForm, const Plan &plan,
               const std::vector<size_t> &round) {
  const BoxLayout &first = plan.boxes[firstBox(round)];
  const TileClass &c = plan.classes[size_t(first.cls)];
  auto l2bName = [](size_t l2b) {
    return "@" + std::to_string(l2b / kL2bsPerGroup) + "." +
           std::to_string(l2b % kL2bsPerGroup);
  };
  // Each box's input runs into its L2B's staging. A transfer holds its
  // DRAM, link and L2BM until it is done and the ports serve in issue
  // order (docs/target/mncore2.md T4), so the L2Bs take turns, each
  // starting at another source group: transfers issued together mostly
  // use different ports.
  std::vector<unsigned> tags;
  std::vector<std::pair<size_t, size_t>> issue; // (l2b, run)
  size_t most = 0;
  for (size_t b : round)
    if (b != kNoBox)
      most = std::max(most, plan.boxes[b].staging.size());
  std::vector<std::vector<size_t>> turns(round.size());
  for (size_t l2b = 0; l2b < round.size(); ++l2b) {
    if (round[l2b] == kNoBox)
      continue;
    const BoxLayout &layout = plan.boxes[round[l2b]];
    std::vector<size_t> order(layout.staging.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      auto turn = [&](size_t r) {
        return (dramGroupOf(layout.staging[r].group) + kDramGroups -
                l2b % kDramGroups) %
               kDramGroups;
      };
      return turn(a) < turn(b);
    });
    turns[l2b] = std::move(order);
  }
  for (size_t i = 0; i < most; ++i)
    for (size_t l2b = 0; l2b < round.size(); ++l2b)
      if (i < turns[l2b].size())
        issue.push_back({l2b, turns[l2b][i]});
  for (const auto &[l2b, r] : issue) {
    const BoxLayout &layout = plan.boxes[round[l2b]];
    {
      const Run &run = layout.staging[r];
      unsigned tag = out.newTag();
      tags.push_back(tag);
      out.statement(
          "mvp/n" + std::to_string(roundUp(run.longWords, kMvUnitLongWords)) +
          VsmWriter::tagName(tag) + " $d" +
          std::to_string(ins[run.group / kDramGroups].base + run.first) + "@" +
          std::to_string(dramGroupOf(run.group)) + " " +
          l2bmOperand(layout.stagingAt[r]) + l2bName(l2b));
    }
  }
  for (unsigned tag : tags)
    out.wait(tag);
  // Each L1B's window, piece by piece in window order (a step's overrun
  // past a piece is overwritten by the next). The layouts of the round's
  // boxes agree, so one instruction serves every L2B.
  for (unsigned k = 0; k < kL1bsPerL2b; ++k) {
    if (!(first.slots & (1u << k)))
      continue;
    for (size_t i = 0; i < c.pieceLongWords.size(); ++i)
      for (int64_t t = 0; t < c.pieceLongWords[i]; t += kL2bmStepLongWords)
        out.step({"l2bmb@" + std::to_string(k) + " " +
                  l2bmOperand(first.pieceAt[k][i] + t) + " " +
                  l1bmOperand(c.windowOffset[i] + t)});
  }
  out.nop();
  for (int64_t j = 0; j < c.windowLongWords; j += 8)
    out.step({"l1bmp " + l1bmOperand(j, true) + " " +
              peOperand(PeMemory::LM0, Width::DoubleLong, int32_t(2 * j))});
  out.nop();
  // The buffer in LM1, word by word from the window in LM0.
  ElemProgram program;
  recordBufferFill(program, c);
  program.flush(out);
  // Gather the buffer of every L1B into its L1BM: PE p reads long words
  // 64 j + p through a base address of 2 $peid (as the general kernel's
  // store does).
  out.step({"imm i\"1\" " + peOperand(PeMemory::GRF0, Width::Word, 0, 0)});
  out.nop();
  out.step(
      {"ilsl $peid " + peOperand(PeMemory::GRF0, Width::Word, 0, 0) + " $nb"});
  out.nop(2);
  for (int64_t j = 0; j < c.bufferLongWords; j += 4 * kPesPerL1b)
    out.step(
        {"l1bmd " +
         peOperand(PeMemory::LM1, Width::Long, int32_t(2 * j), 2 * kPesPerL1b) +
         " " + l1bmOperand(kL1bmBuffer + j)});
  out.step({"zero $nb"});
  // Segments into the assembly in address order, so that a step's overrun
  // past a segment lands before the segment that belongs there.
  std::vector<std::tuple<int64_t, unsigned, size_t>> order;
  for (unsigned k = 0; k < kL1bsPerL2b; ++k)
    if (first.slots & (1u << k))
      for (size_t s = 0; s < c.segmentLongWords.size(); ++s)
        order.push_back({first.segmentAt[k][s], k, s});
  std::sort(order.begin(), order.end());
  for (const auto &[at, k, s] : order)
    for (int64_t t = 0; t < c.segmentLongWords[s]; t += kL2bmStepLongWords)
      out.step({"l2bm@" + std::to_string(k) + " " +
                l1bmOperand(kL1bmBuffer + c.bufferOffset[s] + t) + " " +
                l2bmOperand(at + t)});
  out.nop(2);
  tags.clear();
  for (size_t l2b = 0; l2b < round.size(); ++l2b) {
    if (round[l2b] == kNoBox)
      continue;
    const BoxLayout &layout = plan.boxes[round[l2b]];
    for (size_t r = 0; r < layout.assembly.size(); ++r) {
      const Run &run = layout.assembly[r];
      unsigned tag = out.newTag();
      tags.push_back(tag);
      out.statement(
          "mvp/n" + std::to_string(roundUp(run.longWords, kMvUnitLongWords)) +
          VsmWriter::tagName(tag) + " " + l2bmOperand(layout.assemblyAt[r]) +
          l2bName(l2b) + " $d" + std::to_string(outForm.base + run.first) +
          "@" + std::to_string(run.group));
    }
  }
  for (unsigned tag : tags)
    out.wait(tag);
}

/// The constant integers of input `i` (Slice's starts, Pad's pads).
std::optional<std::vector<int64_t>> constantInts(const KernelRequest &request,
                                                 size_t i) {
  if (!request.hasInput(i) || !request.inputs[i].constant)
    return std::nullopt;
  const reference::Tensor &tensor = *request.inputs[i].constant;
  std::vector<int64_t> values;
  for (int64_t k = 0; k < tensor.numElements(); ++k)
    values.push_back(tensor.elementAsInt64(k));
  return values;
}

/// What a reorder reads: its data inputs (Concat's every input, the
/// others' first).
std::vector<DramForm> dataInputs(const KernelRequest &request) {
  std::vector<DramForm> forms;
  size_t count = request.opType == "Concat" ? request.inputs.size() : 1;
  for (size_t i = 0; i < count && i < request.inputs.size(); ++i)
    forms.push_back(request.inputs[i].form);
  return forms;
}

/// Whether output `o` of the request is a reorder of its data inputs, and
/// the index map of its elements (and the perm, for Transposes).
bool reorderSource(const KernelRequest &request, size_t o, SourceFn &source,
                   std::vector<int64_t> &perm, std::string &whyNot) {
  const std::string &op = request.opType;
  const DramForm &in = request.inputs[0].form, &out = request.outputs[o].form;
  size_t rank = out.shape.size();
  perm.clear();
  auto axisOf = [&](int64_t fallback) -> std::optional<size_t> {
    int64_t axis = request.getInt("axis", fallback);
    if (axis < 0)
      axis += int64_t(rank);
    if (axis < 0 || axis >= int64_t(rank))
      return std::nullopt;
    return size_t(axis);
  };
  if (op == "Concat" || op == "Split") {
    std::optional<size_t> axis = axisOf(0);
    if (!axis) {
      whyNot = "the axis is out of range";
      return false;
    }
    size_t a = *axis;
    // The pieces along the axis: Concat's inputs, Split's outputs.
    std::vector<const DramForm *> parts;
    if (op == "Concat")
      for (const KernelTensor &t : request.inputs)
        parts.push_back(&t.form);
    else
      for (const KernelTensor &t : request.outputs)
        parts.push_back(&t.form);
    const DramForm &whole = op == "Concat" ? out : in;
    int64_t total = 0;
    std::vector<int64_t> offsets;
    for (const DramForm *part : parts) {
      bool agrees = part->shape.size() == rank;
      for (size_t d = 0; agrees && d < rank; ++d)
        agrees = d == a || part->shape[d] == whole.shape[d];
      if (!agrees) {
        whyNot = shapeText(part->shape) + " does not agree with " +
                 shapeText(whole.shape) + " but along axis " +
                 std::to_string(a);
        return false;
      }
      offsets.push_back(total);
      total += part->shape[a];
    }
    if (total != whole.shape[a]) {
      whyNot = "the parts' extents along the axis add up to " +
               std::to_string(total) + ", not " +
               std::to_string(whole.shape[a]);
      return false;
    }
    if (op == "Concat") {
      source = [offsets, a](const std::vector<int64_t> &index, unsigned &input,
                            std::vector<int64_t> &from) {
        size_t k = std::upper_bound(offsets.begin(), offsets.end(), index[a]) -
                   offsets.begin() - 1;
        // Parts of extent 0 share their offset with the next: the last
        // of them is the one with elements.
        input = unsigned(k);
        from = index;
        from[a] -= offsets[k];
        return true;
      };
    } else {
      int64_t offset = offsets[o];
      source = [offset, a](const std::vector<int64_t> &index, unsigned &input,
                           std::vector<int64_t> &from) {
        input = 0;
        from = index;
        from[a] += offset;
        return true;
      };
    }
    return true;
  }
  if (op == "Slice") {
    std::optional<std::vector<int64_t>> starts = constantInts(request, 1),
                                        ends = constantInts(request, 2);
    if (!starts || !ends) {
      whyNot = "Slice's starts and ends must be constants";
      return false;
    }
    std::vector<int64_t> axes, steps(starts->size(), 1);
    for (size_t k = 0; k < starts->size(); ++k)
      axes.push_back(int64_t(k));
    if (request.hasInput(3)) {
      std::optional<std::vector<int64_t>> given = constantInts(request, 3);
      if (!given) {
        whyNot = "Slice's axes must be a constant";
        return false;
      }
      axes = *given;
    }
    if (request.hasInput(4)) {
      std::optional<std::vector<int64_t>> given = constantInts(request, 4);
      if (!given) {
        whyNot = "Slice's steps must be a constant";
        return false;
      }
      steps = *given;
    }
    if (axes.size() != starts->size() || ends->size() != starts->size() ||
        steps.size() != starts->size() || in.shape.size() != rank) {
      whyNot = "Slice's starts, ends, axes and steps do not agree";
      return false;
    }
    // ONNX's rule: negative values count from the end, then clamp to
    // [0, extent] for positive steps and [-1, extent - 1] for negative.
    std::vector<int64_t> first(rank, 0), step(rank, 1);
    for (size_t k = 0; k < axes.size(); ++k) {
      int64_t axis = axes[k] < 0 ? axes[k] + int64_t(rank) : axes[k];
      if (axis < 0 || axis >= int64_t(rank) || steps[k] == 0) {
        whyNot = "Slice's axes or steps are out of range";
        return false;
      }
      int64_t extent = in.shape[size_t(axis)], start = (*starts)[k];
      if (start < 0)
        start += extent;
      start = steps[k] > 0 ? std::clamp<int64_t>(start, 0, extent)
                           : std::clamp<int64_t>(start, -1, extent - 1);
      first[size_t(axis)] = start;
      step[size_t(axis)] = steps[k];
    }
    for (size_t d = 0; d < rank; ++d)
      if (out.shape[d] > 0 &&
          (first[d] + (out.shape[d] - 1) * step[d] < 0 ||
           first[d] + (out.shape[d] - 1) * step[d] >= in.shape[d])) {
        whyNot = "the output " + shapeText(out.shape) +
                 " reaches past the input " + shapeText(in.shape);
        return false;
      }
    source = [first, step](const std::vector<int64_t> &index, unsigned &input,
                           std::vector<int64_t> &from) {
      input = 0;
      from.resize(index.size());
      for (size_t d = 0; d < index.size(); ++d)
        from[d] = first[d] + index[d] * step[d];
      return true;
    };
    return true;
  }
  if (op == "Pad") {
    std::string mode = request.getString("mode", "constant");
    if (mode != "constant" && mode != "edge" && mode != "reflect" &&
        mode != "wrap") {
      whyNot = "Pad's " + mode + " mode is not supported";
      return false;
    }
    std::optional<std::vector<int64_t>> pads = constantInts(request, 1);
    if (!pads || pads->size() != 2 * rank || in.shape.size() != rank) {
      whyNot = "Pad's pads must be a constant of twice the rank";
      return false;
    }
    if (request.hasInput(3)) {
      whyNot = "Pad with axes is not supported";
      return false;
    }
    if (request.hasInput(2) && mode == "constant") {
      const reference::Tensor *value = request.inputs[2].constant;
      if (!value || value->numElements() != 1 ||
          value->elementAsDouble(0) != 0) {
        whyNot = "Pad's constant_value must be a constant zero";
        return false;
      }
    }
    std::vector<int64_t> begin(pads->begin(), pads->begin() + int64_t(rank));
    for (size_t d = 0; d < rank; ++d)
      if (out.shape[d] != in.shape[d] + (*pads)[d] + (*pads)[d + rank]) {
        whyNot = "the output " + shapeText(out.shape) + " is not the padded " +
                 shapeText(in.shape);
        return false;
      }
    std::vector<int64_t> inShape = in.shape;
    if (mode != "constant" && elementCount(out.shape) != 0)
      for (size_t d = 0; d < rank; ++d)
        if (inShape[d] == 0) {
          whyNot = "Pad's " + mode + " mode needs input elements to repeat";
          return false;
        }
    // Edge, reflect and wrap are index maps with no zeros (pfvm:cpu's
    // padSource).
    source = [begin, inShape, mode](const std::vector<int64_t> &index,
                                    unsigned &input,
                                    std::vector<int64_t> &from) {
      input = 0;
      from.resize(index.size());
      for (size_t d = 0; d < index.size(); ++d) {
        from[d] = reference::padSource(mode, index[d], begin[d], inShape[d]);
        if (from[d] < 0)
          return false;
      }
      return true;
    };
    return true;
  }
  if (op == "Tile") {
    // The output's static extents fix the repeats (out = in x repeats),
    // whether the repeats input is a constant or known only at run time.
    if (in.shape.size() != rank) {
      whyNot = "Tile's output has another rank than its input";
      return false;
    }
    for (size_t d = 0; d < rank; ++d)
      if (in.shape[d] == 0 ? out.shape[d] != 0 : out.shape[d] % in.shape[d]) {
        whyNot = "the output " + shapeText(out.shape) + " is not a tiling of " +
                 shapeText(in.shape);
        return false;
      }
    std::vector<int64_t> inShape = in.shape;
    source = [inShape](const std::vector<int64_t> &index, unsigned &input,
                       std::vector<int64_t> &from) {
      input = 0;
      from.resize(index.size());
      for (size_t d = 0; d < index.size(); ++d)
        from[d] = index[d] % inShape[d];
      return true;
    };
    return true;
  }
  if (op == "Resize") {
    ResizeSamples samples;
    if (!resizeSamples(request, samples, whyNot))
      return false;
    // A selection along every dimension: one coefficient 1 (or none, an
    // element outside the input: zero), as nearest mode gives.
    std::vector<std::vector<int64_t>> pick(rank);
    for (size_t d = 0; d < rank; ++d)
      for (const reference::ResizeSample &s : samples.samples[d]) {
        int64_t chosen = -1;
        bool selection = !s.outside || samples.options.extrapolation == 0;
        for (size_t j = 0; j < s.coeff.size() && selection; ++j)
          if (s.coeff[j] == 1 && chosen < 0)
            chosen = s.index[j];
          else if (s.coeff[j] != 0)
            selection = false;
        if (!selection) {
          whyNot =
              "Resize in " + samples.options.mode + " mode is not an index map";
          return false;
        }
        pick[d].push_back(s.outside ? -1 : chosen);
      }
    source = [pick](const std::vector<int64_t> &index, unsigned &input,
                    std::vector<int64_t> &from) {
      input = 0;
      from.resize(index.size());
      for (size_t d = 0; d < index.size(); ++d) {
        from[d] = pick[d][size_t(index[d])];
        if (from[d] < 0)
          return false;
      }
      return true;
    };
    return true;
  }
  if (elementCount(in.shape) != elementCount(out.shape)) {
    whyNot = "the output's element count differs from the input's";
    return false;
  }
  if (op == "Transpose") {
    size_t rank = in.shape.size();
    perm = request.getInts("perm");
    if (perm.empty())
      for (size_t d = rank; d-- > 0;)
        perm.push_back(int64_t(d));
    std::vector<bool> seen(rank, false);
    if (perm.size() != rank) {
      whyNot = "perm does not match the rank";
      return false;
    }
    for (size_t k = 0; k < rank; ++k) {
      if (perm[k] < 0 || perm[k] >= int64_t(rank) || seen[size_t(perm[k])] ||
          out.shape[k] != in.shape[size_t(perm[k])]) {
        whyNot = "perm is not a permutation of the input into the output";
        return false;
      }
      seen[size_t(perm[k])] = true;
    }
    std::vector<int64_t> p = perm;
    source = [p, rank](const std::vector<int64_t> &index, unsigned &input,
                       std::vector<int64_t> &from) {
      input = 0;
      from.resize(rank);
      for (size_t k = 0; k < rank; ++k)
        from[size_t(p[k])] = index[k];
      return true;
    };
    return true;
  }
  // Reshape, Flatten, Identity: the same row-major order.
  std::vector<int64_t> inShape = in.shape, outShape = out.shape;
  source = [inShape, outShape](const std::vector<int64_t> &index,
                               unsigned &input, std::vector<int64_t> &from) {
    input = 0;
    int64_t position = 0;
    for (size_t d = 0; d < index.size(); ++d)
      position = position * outShape[d] + index[d];
    from = unravel(position, inShape);
    return true;
  };
  return true;
}

/// The cheapest plan: chunk plans of each size and gap, and for a batched
/// transpose box plans of the shapes an estimate of their runs ranks
/// first. A 64-long-word chunk plan always exists (R8: a tile of at most
/// 256 elements, each staged in at most one MV unit, in a box of its own).
Plan makePlan(const std::vector<DramForm> &ins, const DramForm &out,
              const SourceFn &source, const std::vector<int64_t> &perm) {
  const DramForm &in = ins[0];
  std::vector<Move> moves = allMoves(ins, out, source);
  Plan best;
  bool found = false;
  auto consider = [&](Plan &candidate) {
    if (!found || candidate.cycles < best.cycles) {
      best = std::move(candidate);
      found = true;
    }
  };
  bool split = false;
  for (int64_t size : {1024, 256, 64})
    for (int64_t gap : {4, 64}) {
      Plan candidate;
      if (planChunks(out, moves, size, gap, false, kMvUnitLongWords,
                     candidate)) {
        split |= candidate.split;
        consider(candidate);
      }
    }
  // Chunks whose inputs lie apart in runs a little longer than an MV
  // unit (a channel's plane in NCHW) are boxed with the chunks that read
  // the same runs, and the runs staged whole (R10): worth planning where
  // consecutive chunks read too widely to share a box.
  for (int64_t size : {256, 64})
    for (int64_t join : {kMvUnitLongWords, 4 * kMvUnitLongWords}) {
      Plan candidate;
      if (split && planChunks(out, moves, size, 4, true, join, candidate))
        consider(candidate);
    }
  std::optional<Transposition> t;
  if (!perm.empty() && ins.size() == 1)
    t = asTransposition(in, out, perm);
  if (t) {
    int64_t X = extentOf(in, t->x), Y = extentOf(in, t->y);
    // Rank the shapes by an estimate: elements per tile near the window,
    // few runs per box (boxes of full y read one run, of full x write one).
    struct Shape {
      double score;
      int64_t bx, by;
      bool alongX;
    };
    std::vector<Shape> shapes;
    // Elements a window holds.
    int64_t most = elementsPerLongWord(in.type) * kWindowLimit;
    for (int64_t bx : extentsFor(X, most))
      for (int64_t by : extentsFor(Y, most)) {
        if (bx * by > most || bx * by * 4 < most)
          continue;
        for (bool alongX : {false, true}) {
          double inRuns = by == Y ? 1 : double(alongX ? 8 * bx : bx);
          double outRuns = bx == X ? 1 : double(alongX ? by : 8 * by);
          double boxes = double(ceilDiv(X, bx) * ceilDiv(Y, by)) / 8;
          shapes.push_back({boxes * (inRuns + outRuns), bx, by, alongX});
        }
      }
    std::sort(shapes.begin(), shapes.end(), [](const Shape &a, const Shape &b) {
      return std::tie(a.score, a.bx, a.by, a.alongX) <
             std::tie(b.score, b.bx, b.by, b.alongX);
    });
    for (size_t i = 0; i < std::min<size_t>(shapes.size(), 8); ++i) {
      Plan candidate;
      if (planBoxes(in, out, perm, *t, shapes[i].bx, shapes[i].by,
                    shapes[i].alongX, 4, candidate))
        consider(candidate);
    }
  }
  return best;
}

/// Operators the general kernel also does, which it takes when small.
bool isGeneralMove(const std::string &op) {
  return op == "Transpose" || op == "Reshape" || op == "Flatten" ||
         op == "Identity" || op == "Tile";
}

class ReorderGenerator : public KernelGenerator {
public:
  const char *name() const override { return "reorder"; }

  bool matches(const KernelRequest &request,
               std::string &whyNot) const override {
    const std::string &op = request.opType;
    if (!isGeneralMove(op) && op != "Concat" && op != "Split" &&
        op != "Slice" && op != "Pad" && op != "Resize" && op != "Tile")
      return false;
    if (request.inputs.empty() || request.outputs.empty() ||
        request.inputs[0].omitted ||
        (op != "Split" && request.outputs.size() != 1)) {
      whyNot = "a reorder has one data input (Concat: several) and one "
               "output (Split: several)";
      return false;
    }
    std::vector<DramForm> ins = dataInputs(request);
    for (const DramForm &form : ins)
      for (const KernelTensor &output : request.outputs)
        if (form.type != output.form.type || output.omitted) {
          whyNot = "reorders move elements of one type";
          return false;
        }
    if (isGeneralMove(op)) {
      PeImage inImage{ins[0], PeMemory::LM0, 0},
          outImage{request.outputs[0].form, PeMemory::LM0, 0};
      if (inImage.longWords() + outImage.longWords() <= kSmallLongWords) {
        whyNot = "small enough for the general kernel";
        return false;
      }
    }
    // Any reorder has a plan (makePlan).
    for (size_t o = 0; o < request.outputs.size(); ++o) {
      SourceFn source;
      std::vector<int64_t> perm;
      if (!reorderSource(request, o, source, perm, whyNot))
        return false;
    }
    return true;
  }

  /// Concat, Split, Slice, Pad and Resize of 4-D tensors work in the
  /// convolutions' order (channels last), so that they need no layout switches
  /// between convolutions; they take any order.
  std::vector<unsigned> preferredOrder(const KernelRequest &request,
                                       size_t operand) const override {
    const std::string &op = request.opType;
    if (isGeneralMove(op))
      return {};
    size_t rank =
        operand < request.inputs.size()
            ? request.inputs[operand].form.shape.size()
        : operand - request.inputs.size() < request.outputs.size()
            ? request.outputs[operand - request.inputs.size()].form.shape.size()
            : 0;
    bool data =
        operand >= request.inputs.size() || op == "Concat" || operand == 0;
    return data && rank == 4 ? channelsLastOrder(4) : std::vector<unsigned>{};
  }

  /// The plan of output `o`. Kernel selection emits each request once to
  /// try it and the emit phase again, at other DRAM addresses, which plans
  /// do not depend on (runs are relative to each tensor's base): the plans
  /// of the last requests are kept by everything else in them.
  Plan planFor(const KernelRequest &request, size_t o,
               const std::vector<DramForm> &ins, const SourceFn &source,
               const std::vector<int64_t> &perm) const {
    auto formKey = [](const DramForm &form) {
      std::string key = std::to_string(int(form.type)) + ":" +
                        std::to_string(form.groups) + ":";
      for (int64_t extent : form.shape)
        key += std::to_string(extent) + ",";
      key += ":";
      for (unsigned d : form.order)
        key += std::to_string(d) + ",";
      return key + ";";
    };
    std::string key = request.opType + "#" + std::to_string(o) + "#";
    for (const DramForm &form : ins)
      key += formKey(form);
    key += "->" + formKey(request.outputs[o].form);
    for (const auto &[name, attribute] : request.attributes) {
      key += name + "=" + std::to_string(attribute.i) + "/" +
             std::to_string(attribute.f) + attribute.s;
      for (int64_t v : attribute.ints)
        key += "," + std::to_string(v);
      key += ";";
    }
    // Resize's scales are floats: a key of their integer parts would
    // give 2.0 and 2.1 one plan.
    for (size_t i = 1; i < request.inputs.size(); ++i)
      if (const reference::Tensor *constant = request.inputs[i].constant)
        for (int64_t k = 0; k < constant->numElements(); ++k) {
          char text[32];
          std::snprintf(text, sizeof text, "%.17g",
                        constant->elementAsDouble(k));
          key += std::to_string(constant->elementAsInt64(k)) + "/" + text + ",";
        }
    std::lock_guard<std::mutex> lock(CacheMutex);
    auto found = Cache.find(key);
    if (found != Cache.end())
      return found->second;
    Plan plan = makePlan(ins, request.outputs[o].form, source, perm);
    if (Cache.size() >= kCachedPlans)
      Cache.clear();
    Cache.emplace(key, plan);
    return plan;
  }

  bool emit(const KernelRequest &request, VsmWriter &out,
            KernelDescription &description, std::string &error) const override {
    std::vector<DramForm> ins = dataInputs(request);
    description.generator = name();
    int64_t tiles = 0, rounds = 0, classes = 0;
    double cycles = 0;
    std::string planners;
    for (size_t o = 0; o < request.outputs.size(); ++o) {
      SourceFn source;
      std::vector<int64_t> perm;
      if (!reorderSource(request, o, source, perm, error))
        return false;
      const DramForm &outForm = request.outputs[o].form;
      Plan plan = planFor(request, o, ins, source, perm);
      if (plan.rounds.empty() && elementCount(outForm.shape) != 0) {
        error = "no reorder plan";
        return false;
      }
      std::string inText;
      for (const DramForm &form : ins)
        inText += (inText.empty() ? "" : ", ") + form.str();
      out.comment("reorder: " + request.opType + " " + request.nodeName + ", " +
                  inText + " -> " + outForm.str() + ", " + plan.planner);
      for (const auto &round : plan.rounds)
        emitRound(out, ins, outForm, plan, round);
      if (planners.find(plan.planner) == std::string::npos)
        planners += (planners.empty() ? "" : ", ") + plan.planner;
      tiles += int64_t(plan.tiles.size());
      rounds += int64_t(plan.rounds.size());
      classes += int64_t(plan.classes.size());
      cycles += plan.cycles;
    }
    description.variant = request.opType + ", " + planners + ": " +
                          std::to_string(tiles) + " tiles in " +
                          std::to_string(rounds) + " rounds";
    description.parameters.push_back({"classes", std::to_string(classes)});
    description.parameters.push_back(
        {"estimated cycles", std::to_string(int64_t(cycles))});
    return true;
  }

private:
  static constexpr size_t kCachedPlans = 64;
  mutable std::mutex CacheMutex;
  mutable std::map<std::string, Plan> Cache;
};

std::unique_ptr<KernelGenerator> createReorderGenerator() {
  return std::make_unique<ReorderGenerator>();
}

} // namespace

MNCC_KERNEL_GENERATOR(Reorder, 50, createReorderGenerator);
