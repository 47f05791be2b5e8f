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
  int tensor = 0;
  int group = 0;
  int64_t start = 0;
  int64_t longWords = 0;
  int64_t l2bm = 0;
};

/// Where every quad of a section of a unit lands: the ranges, and per slot
/// its position in the section's L2BM image (long words from the section's
/// start) and its valid elements.
struct SlotPlace {
  int64_t slot = 0;
  /// Long words from the section's start.
  int64_t l2bm = 0;
  int valid = 0;
  /// The range holding the quad.
  size_t range = 0;
  /// ImageQuad::shift.
  int shift = 0;
};
struct Layout {
  std::vector<Range> ranges;
  /// Sorted by slot, one entry per slot: the planners compare thousands of
  /// layouts per convolution, so lookups are binary searches over a vector.
  std::vector<SlotPlace> slots;
  std::vector<int64_t> zeroSlots;
  int64_t longWords = 0;
};

const SlotPlace *findSlot(const Layout &layout, int64_t slot) {
  auto it = std::lower_bound(
      layout.slots.begin(), layout.slots.end(), slot,
      [](const SlotPlace &p, int64_t s) { return p.slot < s; });
  return it != layout.slots.end() && it->slot == slot ? &*it : nullptr;
}

/// Units of 64 long words a range may skip and still be one transfer: the
/// skipped units cost 3 cycles each on the DRAM, a new transfer an MV slot
/// (16 cycles).
constexpr int64_t kMergeGapUnits = 4;

/// A quad's place in a layout's order: tensor, group, address.
uint64_t placeKey(const ImageQuad &q) {
  return (uint64_t(q.tensor) << 60) | (uint64_t(q.group) << 56) |
         uint64_t(q.address);
}

/// layoutOf by sorting: the quads in place order (ties in the listed
/// order) make the ranges, the slots sorted after.
Layout layoutBySorting(const std::vector<const ImageQuad *> &section) {
  Layout layout;
  std::vector<const ImageQuad *> quads;
  for (const ImageQuad *q : section) {
    if (q->group == ImageQuad::kZeroQuad)
      layout.zeroSlots.push_back(q->slot);
    else if (q->group >= 0)
      quads.push_back(q);
  }
  auto byPlace = [](const ImageQuad *a, const ImageQuad *b) {
    return placeKey(*a) < placeKey(*b);
  };
  if (!std::is_sorted(quads.begin(), quads.end(), byPlace)) {
    std::vector<std::pair<uint64_t, uint32_t>> keys(quads.size());
    for (size_t i = 0; i < quads.size(); ++i)
      keys[i] = {placeKey(*quads[i]), uint32_t(i)};
    std::sort(keys.begin(), keys.end());
    std::vector<const ImageQuad *> sorted(quads.size());
    for (size_t i = 0; i < keys.size(); ++i)
      sorted[i] = quads[keys[i].second];
    quads.swap(sorted);
  }
  for (const ImageQuad *q : quads) {
    int64_t unitStart = q->address / kMvUnitLongWords * kMvUnitLongWords;
    int64_t unitEnd = roundUp(q->address + kQuadLongWords, kMvUnitLongWords);
    if (layout.ranges.empty() || layout.ranges.back().group != q->group ||
        layout.ranges.back().tensor != q->tensor ||
        unitStart > layout.ranges.back().start +
                        layout.ranges.back().longWords +
                        kMergeGapUnits * kMvUnitLongWords) {
      Range r;
      r.tensor = q->tensor;
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
    layout.slots.push_back({q->slot, r.l2bm + (q->address - r.start), q->valid,
                            layout.ranges.size() - 1, q->shift});
  }
  // One entry per slot, the last quad's as a map assignment would keep.
  auto bySlot = [](const SlotPlace &a, const SlotPlace &b) {
    return a.slot < b.slot;
  };
  if (!std::is_sorted(layout.slots.begin(), layout.slots.end(), bySlot)) {
    std::vector<std::pair<int64_t, uint32_t>> keys(layout.slots.size());
    for (size_t i = 0; i < keys.size(); ++i)
      keys[i] = {layout.slots[i].slot, uint32_t(i)};
    std::sort(keys.begin(), keys.end());
    std::vector<SlotPlace> sorted(keys.size());
    for (size_t i = 0; i < keys.size(); ++i)
      sorted[i] = layout.slots[keys[i].second];
    layout.slots.swap(sorted);
  }
  size_t kept = 0;
  for (size_t i = 0; i < layout.slots.size(); ++i) {
    if (i + 1 < layout.slots.size() &&
        layout.slots[i + 1].slot == layout.slots[i].slot)
      continue;
    layout.slots[kept++] = layout.slots[i];
  }
  layout.slots.resize(kept);
  std::sort(layout.zeroSlots.begin(), layout.zeroSlots.end());
  return layout;
}

/// The layout of `quads`, the quads of a unit with one L1B (or shared):
/// the quads in place order (tensor, group, address; ties in the listed
/// order) make the ranges, runs of the MV units they fall in with gaps of
/// at most kMergeGapUnits; each slot keeps the place of its last quad in
/// that order. The planners build thousands of layouts per convolution
/// (every chunk of a batch-8 ResNet layer, in every mode tried), so
/// instead of sorting the quads this marks the units they fall in on a
/// table over each (tensor, group)'s span of units, and the slots on a
/// table over the slot numbers; layoutBySorting, the same by sorting,
/// takes spans too wide for tables.
Layout layoutOf(const std::vector<const ImageQuad *> &section) {
  // The spans of units per (tensor, group), in place order.
  struct Span {
    int tensor, group;
    int64_t first, last, offset = 0;
  };
  std::vector<Span> spans;
  int64_t maxSlot = -1;
  size_t data = 0;
  for (const ImageQuad *q : section) {
    maxSlot = std::max(maxSlot, q->slot);
    if (q->slot < 0)
      return layoutBySorting(section);
    if (q->group < 0)
      continue;
    ++data;
    int64_t first = q->address / kMvUnitLongWords;
    int64_t last = (q->address + kQuadLongWords - 1) / kMvUnitLongWords;
    if (q->address < 0)
      return layoutBySorting(section);
    auto it = std::find_if(spans.begin(), spans.end(), [&](const Span &s) {
      return s.tensor == q->tensor && s.group == q->group;
    });
    if (it == spans.end()) {
      spans.push_back({q->tensor, q->group, first, last});
    } else {
      it->first = std::min(it->first, first);
      it->last = std::max(it->last, last);
    }
  }
  std::sort(spans.begin(), spans.end(), [](const Span &a, const Span &b) {
    return std::make_pair(a.tensor, a.group) <
           std::make_pair(b.tensor, b.group);
  });
  int64_t units = 0;
  for (Span &sp : spans) {
    sp.offset = units;
    units += sp.last - sp.first + 1;
  }
  int64_t tableLimit = 4 * int64_t(section.size()) + 4096;
  if (units > tableLimit || maxSlot >= tableLimit)
    return layoutBySorting(section);
  auto spanOf = [&](const ImageQuad &q) -> const Span & {
    for (const Span &sp : spans)
      if (sp.tensor == q.tensor && sp.group == q.group)
        return sp;
    return spans.front();
  };

  // The units in use, then the ranges over them: each unit's L2BM place
  // (long words from the layout's start) and range.
  std::vector<int64_t> unitPlace(size_t(units), -1);
  std::vector<uint32_t> unitRange(size_t(units), 0);
  for (const ImageQuad *q : section) {
    if (q->group < 0)
      continue;
    const Span &sp = spanOf(*q);
    int64_t first = q->address / kMvUnitLongWords;
    int64_t last = (q->address + kQuadLongWords - 1) / kMvUnitLongWords;
    for (int64_t u = first; u <= last; ++u)
      unitPlace[size_t(sp.offset + u - sp.first)] = 0;
  }
  Layout layout;
  for (const Span &sp : spans) {
    bool open = false;
    for (int64_t u = sp.first; u <= sp.last; ++u) {
      size_t at = size_t(sp.offset + u - sp.first);
      if (unitPlace[at] < 0)
        continue;
      int64_t start = u * kMvUnitLongWords;
      if (!open || start > layout.ranges.back().start +
                               layout.ranges.back().longWords +
                               kMergeGapUnits * kMvUnitLongWords) {
        Range r;
        r.tensor = sp.tensor;
        r.group = sp.group;
        r.start = start;
        r.l2bm = layout.longWords;
        layout.ranges.push_back(r);
        open = true;
      }
      Range &r = layout.ranges.back();
      int64_t end = start + kMvUnitLongWords;
      layout.longWords += end - (r.start + r.longWords);
      r.longWords = end - r.start;
      unitPlace[at] = r.l2bm + (start - r.start);
      unitRange[at] = uint32_t(layout.ranges.size() - 1);
    }
  }

  // Each slot's last quad in place order: the largest (place, index).
  std::vector<int64_t> winner(size_t(maxSlot + 1), -1);
  std::vector<uint32_t> zeros(size_t(maxSlot + 1), 0);
  for (size_t i = 0; i < section.size(); ++i) {
    const ImageQuad &q = *section[i];
    if (q.group == ImageQuad::kZeroQuad) {
      ++zeros[size_t(q.slot)];
      continue;
    }
    if (q.group < 0)
      continue;
    int64_t &w = winner[size_t(q.slot)];
    if (w < 0 || placeKey(*section[size_t(w)]) <= placeKey(q))
      w = int64_t(i);
  }
  layout.slots.reserve(data);
  for (int64_t slot = 0; slot <= maxSlot; ++slot) {
    for (uint32_t z = 0; z < zeros[size_t(slot)]; ++z)
      layout.zeroSlots.push_back(slot);
    int64_t w = winner[size_t(slot)];
    if (w < 0)
      continue;
    const ImageQuad &q = *section[size_t(w)];
    const Span &sp = spanOf(q);
    size_t at = size_t(sp.offset + q.address / kMvUnitLongWords - sp.first);
    layout.slots.push_back({slot, unitPlace[at] + q.address % kMvUnitLongWords,
                            q.valid, unitRange[at], q.shift});
  }
  return layout;
}

/// A DRAM range of a unit that lands `shift` long words into a range of
/// the reference layout (match).
struct Piece {
  Range range;
  int64_t shift = 0;
};

/// How `x`, the image of a unit in group `group`, loads by the
/// instructions of `ref`: pieces[j] are the DRAM ranges of x that land in
/// ref's range j, each `shift` long words into it, so that every quad
/// meets its slot at ref's place. A range of x whose quads all sit in one
/// range of ref at one offset is a piece whole (a unit may lack the start
/// of a range: the rows before a tensor's first); one whose quads sit in
/// several is cut into one piece each. A ref range may take several
/// pieces, or none: an image whose rows border another group's block reads
/// those rows from that group where the image of the same rows elsewhere
/// is one range, or zeros at the tensor's edge. The pieces of a ref range
/// hold disjoint parts of it, the unit's own group's first. One range of x
/// landing in one ref range at two offsets is refused (allowed, it gave
/// ResNet-50 wrong outputs, docs/codegen.md X22). Its data slots
/// are ref's with the same valid elements; its zeros where ref has data go
/// to `masked` (zeroed afterwards only where x loads), the others are
/// zeroed everywhere. Rows a unit lacks (past the tensor) receive whatever
/// the L2BM held, and their results are never stored.
bool match(const Layout &ref, const Layout &x, unsigned group,
           std::vector<std::vector<Piece>> &pieces,
           std::vector<int64_t> &masked) {
  size_t refRanges = ref.ranges.size();
  pieces.assign(refRanges, {});
  // The quads of one range of x at one offset (DRAM address minus place
  // in the ref range) in one ref range: the DRAM span they take.
  struct Feed {
    size_t from;
    int64_t offset, first, last;
  };
  std::vector<std::vector<Feed>> feeds(refRanges);
  std::vector<unsigned> feedsOf(x.ranges.size(), 0);
  // Both slot lists are sorted: walk them together.
  auto it = ref.slots.begin();
  for (const SlotPlace &where : x.slots) {
    while (it != ref.slots.end() && it->slot < where.slot)
      ++it;
    if (it == ref.slots.end() || it->slot != where.slot ||
        it->valid != where.valid || it->shift != where.shift)
      return false;
    size_t i = where.range, j = it->range;
    int64_t address = x.ranges[i].start + (where.l2bm - x.ranges[i].l2bm);
    int64_t offset = address - (it->l2bm - ref.ranges[j].l2bm);
    auto same = [&](const Feed &f) { return f.from == i; };
    auto f = std::find_if(feeds[j].begin(), feeds[j].end(), same);
    if (f != feeds[j].end() && f->offset != offset)
      return false;
    if (f == feeds[j].end()) {
      feeds[j].push_back({i, offset, address, address});
      ++feedsOf[i];
      continue;
    }
    f->first = std::min(f->first, address);
    f->last = std::max(f->last, address);
  }
  for (size_t j = 0; j < refRanges; ++j) {
    for (const Feed &f : feeds[j]) {
      Piece piece;
      piece.range = x.ranges[f.from];
      if (feedsOf[f.from] != 1) {
        piece.range.start = f.first / kMvUnitLongWords * kMvUnitLongWords;
        piece.range.longWords =
            roundUp(f.last + kQuadLongWords, kMvUnitLongWords) -
            piece.range.start;
      }
      piece.shift = piece.range.start - f.offset;
      if (piece.shift < 0 || piece.shift % kMvUnitLongWords != 0 ||
          piece.shift + piece.range.longWords > ref.ranges[j].longWords)
        return false;
      pieces[j].push_back(piece);
    }
    // Two pieces must not write one long word of the L2BM.
    std::vector<Piece> &in = pieces[j];
    std::sort(in.begin(), in.end(),
              [](const Piece &a, const Piece &b) { return a.shift < b.shift; });
    for (size_t k = 1; k < in.size(); ++k)
      if (in[k - 1].shift + in[k - 1].range.longWords > in[k].shift)
        return false;
    // The unit's own group's pieces first, so that the units of every
    // group issue their own ranges by one parallel transfer.
    std::stable_partition(in.begin(), in.end(), [&](const Piece &p) {
      return p.range.group == int(group);
    });
  }
  masked.clear();
  for (int64_t z : x.zeroSlots)
    if (findSlot(ref, z))
      masked.push_back(z);
  return true;
}

/// The data slots, then the zeros: which section leads.
std::pair<size_t, size_t> weight(const Layout &l) {
  return {l.slots.size(), l.zeroSlots.size()};
}
bool empty(const Layout &l) { return l.slots.empty() && l.zeroSlots.empty(); }

/// A unit's image in sections: the shared quads, then each L1B's own; the
/// L1B sections load by the same runs.
struct Sections {
  Layout shared;
  bool distinct = false;
  std::array<Layout, 8> l1b;
};

Sections sectionsOf(const LoadUnit &unit) {
  Sections s;
  std::vector<const ImageQuad *> shared;
  std::array<std::vector<const ImageQuad *>, 8> perL1b;
  for (const ImageQuad &q : unit.quads) {
    if (q.l1b < 0) {
      if (q.l1b == -1)
        shared.push_back(&q);
      continue;
    }
    s.distinct = true;
    if (q.l1b < 8)
      perL1b[size_t(q.l1b)].push_back(&q);
  }
  s.shared = layoutOf(shared);
  if (s.distinct)
    for (int k = 0; k < 8; ++k)
      s.l1b[size_t(k)] = layoutOf(perL1b[size_t(k)]);
  return s;
}

/// The layouts every unit's sections load by: the fullest shared section
/// and the fullest L1B section; their zeros the union of every unit's
/// (but those where some unit has data); per unit and section the shifts
/// of its ranges; the zeros that apply only where some sections load, by
/// the set of (group, L2B, L1B) places they apply to (bit 16 group +
/// 8 l2b + l1b, PeSetup::placeMask).
struct Reference {
  Layout shared, l1b;
  bool distinct = false;
  /// L1Bs with quads in some unit; the others load nothing.
  std::array<bool, 8> l1bUsed{};
  int64_t sharedBase = 0;
  std::array<int64_t, 8> l1bBase{};
  int64_t longWords = 0;
  /// Per unit and section, the unit's DRAM ranges feeding each of ref's
  /// (match), and the most pieces any unit's section has per ref range.
  std::vector<std::vector<std::vector<Piece>>> sharedPieces;
  std::vector<std::array<std::vector<std::vector<Piece>>, 8>> l1bPieces;
  std::vector<size_t> sharedWidth, l1bWidth;
  std::map<uint64_t, std::vector<int64_t>> masked;
};

bool referenceOf(const std::vector<Sections> &all,
                 const std::vector<LoadUnit> &units, Reference &ref) {
  for (const Sections &s : all) {
    if (weight(s.shared) > weight(ref.shared))
      ref.shared = s.shared;
    ref.distinct |= s.distinct;
    if (s.distinct)
      for (int k = 0; k < 8; ++k) {
        const Layout &l = s.l1b[size_t(k)];
        if (weight(l) > weight(ref.l1b))
          ref.l1b = l;
        ref.l1bUsed[size_t(k)] = ref.l1bUsed[size_t(k)] || !empty(l);
      }
  }
  // Zeros where some section has data: per slot, the places that zero it.
  std::map<int64_t, uint64_t> zeroAt;
  std::set<int64_t> sharedZeros, l1bZeros;
  ref.sharedPieces.resize(all.size());
  ref.l1bPieces.resize(all.size());
  std::vector<int64_t> masked;
  for (size_t u = 0; u < all.size(); ++u) {
    const Sections &s = all[u];
    if (!match(ref.shared, s.shared, units[u].group, ref.sharedPieces[u],
               masked))
      return false;
    auto place = [&](unsigned k) {
      return uint64_t(1) << (16 * units[u].group + 8 * units[u].l2b + k);
    };
    for (int64_t z : masked)
      for (unsigned k = 0; k < 8; ++k)
        zeroAt[z] |= place(k);
    for (int64_t z : s.shared.zeroSlots)
      if (!findSlot(ref.shared, z))
        sharedZeros.insert(z);
    if (!s.distinct)
      continue;
    for (unsigned k = 0; k < 8; ++k) {
      const Layout &l = s.l1b[k];
      if (!match(ref.l1b, l, units[u].group, ref.l1bPieces[u][k], masked))
        return false;
      for (int64_t z : masked)
        zeroAt[z] |= place(k);
      for (int64_t z : l.zeroSlots)
        if (!findSlot(ref.l1b, z))
          l1bZeros.insert(z);
    }
  }
  for (const auto &[slot, places] : zeroAt)
    ref.masked[places].push_back(slot);
  // Every unit issues as many transfers per ref range as the unit with
  // the most pieces there, at least one (empty ones where it has fewer;
  // match gives every section it matched one list per ref range).
  auto widen = [](std::vector<size_t> &width,
                  const std::vector<std::vector<Piece>> &pieces) {
    for (size_t j = 0; j < pieces.size(); ++j)
      width[j] = std::max(width[j], pieces[j].size());
  };
  ref.sharedWidth.assign(ref.shared.ranges.size(), 1);
  ref.l1bWidth.assign(ref.l1b.ranges.size(), 1);
  for (size_t u = 0; u < all.size(); ++u) {
    widen(ref.sharedWidth, ref.sharedPieces[u]);
    if (all[u].distinct)
      for (const auto &pieces : ref.l1bPieces[u])
        widen(ref.l1bWidth, pieces);
  }
  ref.shared.zeroSlots.assign(sharedZeros.begin(), sharedZeros.end());
  ref.l1b.zeroSlots.assign(l1bZeros.begin(), l1bZeros.end());
  int64_t at = roundUp(ref.shared.longWords, kMvUnitLongWords);
  if (ref.distinct)
    for (int k = 0; k < 8; ++k) {
      ref.l1bBase[size_t(k)] = at;
      if (ref.l1bUsed[size_t(k)])
        at += roundUp(ref.l1b.longWords, kMvUnitLongWords);
    }
  ref.longWords = at;
  return true;
}

} // namespace

bool gemm::sameLayout(const std::vector<LoadUnit> &units,
                      const LoadBudget &budget) {
  std::vector<Sections> all;
  for (const LoadUnit &u : units)
    all.push_back(sectionsOf(u));
  Reference ref;
  return referenceOf(all, units, ref) &&
         ref.longWords <= budget.l2bmLongWords;
}

int64_t gemm::imageL2bmLongWords(const std::vector<LoadUnit> &units,
                                 const LoadBudget &budget) {
  std::vector<Sections> all;
  for (const LoadUnit &u : units)
    all.push_back(sectionsOf(u));
  Reference ref;
  if (!referenceOf(all, units, ref) || ref.longWords > budget.l2bmLongWords)
    return -1;
  return ref.longWords;
}

bool gemm::loadImages(VsmWriter &out, PeSetup &setup, const MatrixUnit &unit,
                      const std::vector<LoadUnit> &units,
                      const LoadBudget &budget, std::string &error,
                      const std::function<void()> &afterIssue) {
  if (units.empty()) {
    if (afterIssue)
      afterIssue();
    return true;
  }
  std::vector<Sections> sections;
  for (const LoadUnit &u : units)
    sections.push_back(sectionsOf(u));
  Reference layout;
  if (!referenceOf(sections, units, layout)) {
    error = "the images of the L2Bs or L1Bs do not lie out alike";
    return false;
  }
  if (layout.longWords > budget.l2bmLongWords) {
    error = "an image of " + std::to_string(layout.longWords) +
            " long words does not fit the L2BM budget";
    return false;
  }

  // MV: one parallel transfer per range when every unit reads its own
  // group at the same address (mvb2 when both L2Bs of every group take
  // the same range), else one transfer per unit that has the range.
  std::set<unsigned> groups, l2bs;
  for (const LoadUnit &u : units) {
    groups.insert(u.group);
    l2bs.insert(u.l2b);
  }
  bool everyGroup = groups.size() == kDramGroups &&
                    units.size() == groups.size() * l2bs.size();
  std::vector<unsigned> tags;
  // A unit's ranges with their L2BM addresses, section by section; a
  // range it lacks is empty.
  auto rangesOf = [&](size_t u) {
    const Sections &s = sections[u];
    std::vector<Range> all;
    auto add = [&](const std::vector<std::vector<Piece>> &pieces,
                   const std::vector<size_t> &width, const Layout &ref,
                   int64_t base) {
      for (size_t j = 0; j < ref.ranges.size(); ++j)
        for (size_t k = 0; k < width[j]; ++k) {
          Piece piece;
          if (j < pieces.size() && k < pieces[j].size())
            piece = pieces[j][k];
          Range r = piece.range;
          r.l2bm = budget.l2bmBase + base + ref.ranges[j].l2bm + piece.shift;
          all.push_back(r);
        }
    };
    add(layout.sharedPieces[u], layout.sharedWidth, layout.shared,
        layout.sharedBase);
    if (layout.distinct)
      for (int k = 0; k < 8; ++k)
        if (layout.l1bUsed[size_t(k)])
          add(s.distinct ? layout.l1bPieces[u][size_t(k)]
                         : std::vector<std::vector<Piece>>(),
              layout.l1bWidth, layout.l1b, layout.l1bBase[size_t(k)]);
    return all;
  };
  std::vector<std::vector<Range>> ranges;
  for (size_t u = 0; u < sections.size(); ++u)
    ranges.push_back(rangesOf(u));
  for (size_t i = 0; i < ranges[0].size(); ++i) {
    bool parallel = everyGroup;
    bool bothSame = l2bs.size() == 2;
    int64_t length = ranges[0][i].longWords;
    for (size_t u = 0; u < units.size() && parallel; ++u) {
      const Range &r = ranges[u][i];
      parallel = r.longWords > 0 && r.longWords == length &&
                 r.group == int(units[u].group) &&
                 r.l2bm == ranges[0][i].l2bm;
      for (size_t v = 0; v < units.size() && parallel; ++v)
        if (units[v].l2b == units[u].l2b)
          parallel = ranges[v][i].start == r.start;
      for (size_t v = 0; v < units.size(); ++v)
        if (units[v].l2b != units[u].l2b && ranges[v][i].start != r.start)
          bothSame = false;
    }
    std::string size = "/n" + std::to_string(length);
    if (parallel && bothSame) {
      unsigned tag = out.newTag();
      tags.push_back(tag);
      out.statement("mvb2" + size + VsmWriter::tagName(tag) + " $d" +
                    std::to_string(ranges[0][i].start) + " $lc" +
                    std::to_string(ranges[0][i].l2bm));
      continue;
    }
    // Every unit the same range of one group: one broadcast to every
    // L2BM (over the links, 8 cycles per 64 long words, where separate
    // copies would queue at the one DRAM).
    bool identical = units.size() > 2 && length > 0;
    for (size_t u = 1; u < units.size() && identical; ++u)
      identical = ranges[u][i].longWords == length &&
                  ranges[u][i].group == ranges[0][i].group &&
                  ranges[u][i].start == ranges[0][i].start &&
                  ranges[u][i].l2bm == ranges[0][i].l2bm;
    if (identical) {
      unsigned tag = out.newTag();
      tags.push_back(tag);
      out.statement("mvb" + size + VsmWriter::tagName(tag) + " $d" +
                    std::to_string(ranges[0][i].start) + "@" +
                    std::to_string(ranges[0][i].group) + " $lc" +
                    std::to_string(ranges[0][i].l2bm));
      continue;
    }
    if (parallel) {
      for (unsigned l2b : l2bs) {
        int64_t start = 0;
        for (size_t u = 0; u < units.size(); ++u)
          if (units[u].l2b == l2b)
            start = ranges[u][i].start;
        unsigned tag = out.newTag();
        tags.push_back(tag);
        out.statement("mvp" + size + VsmWriter::tagName(tag) + " $d" +
                      std::to_string(start) + " $lc" +
                      std::to_string(ranges[0][i].l2bm) + "@." +
                      std::to_string(l2b));
      }
      continue;
    }
    for (size_t u = 0; u < units.size(); ++u) {
      const Range &r = ranges[u][i];
      if (r.longWords <= 0)
        continue;
      unsigned tag = out.newTag();
      tags.push_back(tag);
      out.statement("mvp/n" + std::to_string(r.longWords) +
                    VsmWriter::tagName(tag) + " $d" + std::to_string(r.start) +
                    "@" + std::to_string(r.group) + " $lc" +
                    std::to_string(r.l2bm) + "@" +
                    std::to_string(units[u].group) + "." +
                    std::to_string(units[u].l2b));
    }
  }

  // Transit jobs: pieces of a section through the two halves of the L1BM
  // transit buffer (l2bmb for the shared section, l2bmb@k for each L1B's),
  // each followed by its runs of l1bmm; the copies of the next piece go
  // out beside the runs of this one.
  int64_t piece = budget.l1bmLongWords / 2 / kL2bmStepLongWords *
                  kL2bmStepLongWords;
  if (piece <= 0) {
    error = "no L1BM transit buffer";
    return false;
  }
  struct Job {
    std::vector<std::string> copies, runs;
  };
  std::vector<Job> jobs;
  int half = 0;
  // The l1bmm runs of four quads 4 long words apart from `source` (L1BM)
  // to the slots each feeds, one instruction per pass (a quad feeding
  // several slots is read once per slot).
  using Feeds = std::vector<std::pair<int64_t, int>>;
  auto addRuns = [&](Job &job, int64_t source,
                     const std::array<const Feeds *, 4> &quads) -> bool {
    for (size_t pass = 0;; ++pass) {
      bool any = false;
      std::array<int64_t, 4> dest;
      std::array<int, 4> valid;
      for (int c = 0; c < 4; ++c) {
        dest[c] = budget.trashSlot;
        valid[c] = 4 * unit.perLongWord;
        if (quads[c] && pass < quads[c]->size()) {
          dest[c] = (*quads[c])[pass].first;
          valid[c] = (*quads[c])[pass].second;
          any = true;
        }
      }
      if (!any)
        return true;
      std::optional<unsigned> mask =
          setup.laneMask(valid, unit.perLongWord, error);
      if (!error.empty())
        return false;
      std::string opcode = "l1bmm";
      if (mask)
        opcode += "/$imr" + std::to_string(*mask);
      job.runs.push_back(opcode + " " + l1bmOperand(source) + " " +
                         lwAny(PeMemory::LM0, dest));
    }
  };
  // A section with quads at any long word (a window read from the middle
  // of a DRAM row) or shifted: each quad is read from the long word its
  // PE 0 takes (ImageQuad::shift long words early), runs take four quads
  // 4 long words apart from any start, and each piece's copy reaches a
  // copy step past either end, so that a quad near a piece's edge is
  // whole in the transit buffer (position `first` of a piece lands one
  // step into its half).
  auto addUnalignedJobs = [&](const Layout &l,
                              const std::vector<std::pair<int, int64_t>>
                                  &bases,
                              bool perL1b) -> bool {
    int64_t step = kL2bmStepLongWords;
    int64_t halfLw = budget.l1bmLongWords / 2 / step * step;
    int64_t inner = halfLw - 2 * step;
    if (inner <= 0) {
      error = "no L1BM transit buffer";
      return false;
    }
    std::map<int64_t, Feeds> bySource;
    for (const SlotPlace &where : l.slots)
      bySource[where.l2bm - where.shift].push_back({where.slot, where.valid});
    for (int64_t first = 0; first < l.longWords; first += inner) {
      Job job;
      int64_t count = std::min(inner, l.longWords - first);
      int64_t transit = budget.l1bmBase + (half ? halfLw : 0);
      half ^= 1;
      int64_t from = std::max<int64_t>(0, first - step);
      int64_t to = std::min(l.longWords, first + count + step);
      for (int64_t o = from; o < to; o += step)
        for (const auto &[k, base] : bases)
          job.copies.push_back(
              (perL1b ? "l2bmb@" + std::to_string(k) : std::string("l2bmb")) +
              " " + l2bmOperand(base + o) + " " +
              l1bmOperand(transit + step + (o - first)));
      // This piece's sources (the first piece's also those before the
      // section: a shifted quad at its start), by long word mod 4.
      auto lo = first == 0 ? bySource.begin() : bySource.lower_bound(first);
      auto hi = bySource.lower_bound(first + count);
      std::array<std::vector<int64_t>, 4> classes;
      for (auto it = lo; it != hi; ++it)
        classes[size_t(((it->first % kQuadLongWords) + kQuadLongWords) %
                       kQuadLongWords)]
            .push_back(it->first);
      for (const std::vector<int64_t> &sources : classes)
        for (size_t i = 0; i < sources.size();) {
          int64_t start = sources[i];
          std::array<const Feeds *, 4> quads{};
          for (int c = 0; c < 4; ++c)
            if (i < sources.size() &&
                sources[i] == start + c * kQuadLongWords)
              quads[size_t(c)] = &bySource[sources[i++]];
          if (!addRuns(job, transit + step + (start - first), quads))
            return false;
        }
      jobs.push_back(std::move(job));
    }
    return true;
  };
  auto addJobs = [&](const Layout &l,
                     const std::vector<std::pair<int, int64_t>> &bases,
                     bool perL1b) -> bool {
    bool aligned = std::all_of(
        l.slots.begin(), l.slots.end(), [](const SlotPlace &where) {
          return where.l2bm % kQuadLongWords == 0 && where.shift == 0;
        });
    if (!aligned)
      return addUnalignedJobs(l, bases, perL1b);
    // Which slots each quad position of the section feeds.
    std::map<int64_t, Feeds> feeds;
    for (const SlotPlace &where : l.slots)
      feeds[where.l2bm / kQuadLongWords].push_back({where.slot, where.valid});
    for (int64_t first = 0; first < l.longWords; first += piece) {
      Job job;
      int64_t count = std::min(piece, l.longWords - first);
      int64_t transit = budget.l1bmBase + (half ? piece : 0);
      half ^= 1;
      for (int64_t o = 0; o < count; o += kL2bmStepLongWords)
        for (const auto &[k, base] : bases)
          job.copies.push_back(
              (perL1b ? "l2bmb@" + std::to_string(k) : std::string("l2bmb")) +
              " " + l2bmOperand(base + first + o) + " " +
              l1bmOperand(transit + o));
      for (int64_t run = 0; run < count; run += 16) {
        int64_t quad0 = (first + run) / kQuadLongWords;
        std::array<const Feeds *, 4> quads{};
        for (int c = 0; c < 4; ++c) {
          auto it = feeds.find(quad0 + c);
          if (it != feeds.end())
            quads[size_t(c)] = &it->second;
        }
        if (!addRuns(job, transit + run, quads))
          return false;
      }
      jobs.push_back(std::move(job));
    }
    return true;
  };
  if (afterIssue)
    afterIssue();
  // The masks are set up (by addJobs) while the transfers run.
  if (!addJobs(layout.shared, {{-1, budget.l2bmBase + layout.sharedBase}},
               false))
    return false;
  if (layout.distinct) {
    std::vector<std::pair<int, int64_t>> bases;
    for (int k = 0; k < 8; ++k)
      if (layout.l1bUsed[size_t(k)])
        bases.push_back({k, budget.l2bmBase + layout.l1bBase[size_t(k)]});
    if (!addJobs(layout.l1b, bases, true))
      return false;
  }
  for (unsigned tag : tags)
    out.wait(tag);
  if (!jobs.empty())
    for (const std::string &s : jobs[0].copies)
      out.step({s});
  for (size_t j = 0; j < jobs.size(); ++j) {
    // The L1BM writes of this piece land a step before its first run.
    out.nop();
    const std::vector<std::string> &runs = jobs[j].runs;
    const std::vector<std::string> none;
    const std::vector<std::string> &next =
        j + 1 < jobs.size() ? jobs[j + 1].copies : none;
    size_t n = std::max(runs.size(), next.size());
    for (size_t i = 0; i < n; ++i)
      out.step({i < runs.size() ? runs[i] : "", i < next.size() ? next[i] : ""});
  }
  // Quads of zeros, four slots a step.
  std::vector<int64_t> zeros = layout.shared.zeroSlots;
  if (layout.distinct)
    zeros.insert(zeros.end(), layout.l1b.zeroSlots.begin(),
                 layout.l1b.zeroSlots.end());
  for (size_t i = 0; i < zeros.size(); i += 4) {
    std::array<int64_t, 4> dest;
    for (size_t c = 0; c < 4; ++c)
      dest[c] = i + c < zeros.size() ? zeros[i + c] : budget.trashSlot;
    out.step({"zero " + lwAny(PeMemory::LM0, dest)});
  }
  // Zeros only some L2Bs and L1Bs take (where others have data), under a
  // write mask of those places.
  for (const auto &[pattern, slots] : layout.masked) {
    unsigned entry = setup.placeMask(pattern);
    for (size_t i = 0; i < slots.size(); i += 4) {
      std::array<int64_t, 4> dest;
      for (size_t c = 0; c < 4; ++c)
        dest[c] = i + c < slots.size() ? slots[i + c] : slots[i];
      out.step({"zero " + lwAny(PeMemory::LM0, dest) + "/$imr" +
                std::to_string(entry)});
    }
    out.nop(2);
  }
  // The long words of shifted quads before their DRAM row: cleared PE by
  // PE once their l1bmm writes have landed.
  std::array<std::vector<int64_t>, kQuadLongWords - 1> below;
  auto belowOf = [&](const Layout &l) {
    for (const SlotPlace &where : l.slots)
      for (int pe = 0; pe < where.shift && pe < int(below.size()); ++pe)
        below[size_t(pe)].push_back(where.slot);
  };
  belowOf(layout.shared);
  if (layout.distinct)
    belowOf(layout.l1b);
  bool landed = false;
  for (size_t pe = 0; pe < below.size(); ++pe) {
    const std::vector<int64_t> &slots = below[pe];
    if (slots.empty())
      continue;
    std::optional<unsigned> entry = setup.peMask(unsigned(pe), error);
    if (!entry)
      return false;
    if (!landed)
      out.nop(2);
    landed = true;
    for (size_t i = 0; i < slots.size(); i += 4) {
      std::array<int64_t, 4> dest;
      for (size_t c = 0; c < 4; ++c)
        dest[c] = i + c < slots.size() ? slots[i + c] : slots[i];
      out.step({"zero " + lwAny(PeMemory::LM0, dest) + "/$imr" +
                std::to_string(*entry)});
    }
    out.nop(2);
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
/// L1BM buffer (an eighth of it per L1B when they differ); smaller for a
/// stream that needs less.
constexpr int64_t kMaxChunk = 2048;
/// PEs one chunk long word reaches: per L1B (l2bmd splits a chunk eight
/// ways) and per MAB (l1bmd deals a long word to one PE, l1bmm to all 16
/// MABs' PEs of one position).
int64_t spreadOf(const ConstantStream &s) {
  return (s.mabBroadcast ? 4 : 64) * (s.l1bDistinct ? 8 : 1);
}
int64_t chunkLongWords(const ConstantStream &s) {
  // l1bmm moves eight long words a PE and step, l1bmd four; l2bmd 256 L2BM
  // long words a step.
  int64_t step = s.mabBroadcast ? 8 : 4;
  int64_t need = roundUp(roundUp(s.peLongWords, step) * spreadOf(s),
                         s.l1bDistinct ? 256 : kMvUnitLongWords);
  return std::min(kMaxChunk, need);
}
int64_t peLongWordsPerChunk(const ConstantStream &s) {
  return chunkLongWords(s) / spreadOf(s);
}
} // namespace

int64_t gemm::constantStreamLongWords(const ConstantStream &stream) {
  return ceilDiv(stream.peLongWords, peLongWordsPerChunk(stream)) *
         chunkLongWords(stream) * (stream.l2bDistinct ? 2 : 1);
}

int64_t gemm::constantStreamOffset(const ConstantStream &stream, int64_t j,
                                   unsigned l1b, unsigned mab, unsigned pe,
                                   unsigned l2b) {
  int64_t size = chunkLongWords(stream);
  int64_t perChunk = peLongWordsPerChunk(stream);
  int64_t chunk = j / perChunk, local = j % perChunk;
  // The long word's place in its L1BM chunk buffer...
  int64_t y = stream.mabBroadcast ? 4 * local + pe : 64 * local + 4 * mab + pe;
  // ... and in the L2BM: l2bmd gives L1B k long words 8k..8k+7 of every 64
  // (manual 3.6.7, decision S23).
  int64_t x = stream.l1bDistinct ? 64 * (y / 8) + 8 * l1b + y % 8 : y;
  if (stream.l2bDistinct)
    return (2 * chunk + l2b) * size + x;
  return chunk * size + x;
}

void gemm::loadConstantStream(VsmWriter &out, const ConstantStream &stream,
                              PeMemory memory, int64_t peLongWord,
                              int64_t l2bmBase, int64_t l1bmBase) {
  ConstantStreamLoad load(out, stream, memory, peLongWord, l2bmBase,
                          l1bmBase);
  load.start();
  load.finish();
}

ConstantStreamLoad::ConstantStreamLoad(VsmWriter &out,
                                       const ConstantStream &stream,
                                       PeMemory memory, int64_t peLongWord,
                                       int64_t l2bmBase, int64_t l1bmBase,
                                       int64_t l2bmLongWords)
    : Out(out), Stream(stream), Memory(memory), PeLongWord(peLongWord),
      L2bmBase(l2bmBase), L1bmBase(l1bmBase) {
  ChunkLw = chunkLongWords(stream);
  PerChunk = peLongWordsPerChunk(stream);
  Chunks = ceilDiv(stream.peLongWords, PerChunk);
  Tags.assign(size_t(Chunks), 0);
  // Chunks in flight in the L2BM (two in the L1BM).
  InFlight = std::max<int64_t>(1, l2bmLongWords / ChunkLw);
}

void ConstantStreamLoad::issue(int64_t c) {
  VsmWriter &out = Out;
  const ConstantStream &stream = Stream;
  const int64_t kChunk = ChunkLw;
  std::vector<unsigned> &tags = Tags;
  tags[size_t(c)] = out.newTag();
  int64_t l2bm = L2bmBase + (c % InFlight) * kChunk;
  if (stream.l2bDistinct) {
    // Every group at once, from its own DRAM, one L2B at a time.
    for (unsigned l = 0; l < 2; ++l)
      out.statement("mvp/n" + std::to_string(kChunk) +
                    VsmWriter::tagName(tags[size_t(c)]) + " $d" +
                    std::to_string(stream.base + (2 * c + l) * kChunk) +
                    " $lc" + std::to_string(l2bm) + "@." + std::to_string(l));
    return;
  }
  out.statement("mvb2/n" + std::to_string(kChunk) +
                VsmWriter::tagName(tags[size_t(c)]) + " $d" +
                std::to_string(stream.base + c * kChunk) + " $lc" +
                std::to_string(l2bm));
}

void ConstantStreamLoad::start() {
  for (int64_t c = 0; c < std::min(Chunks, InFlight); ++c)
    issue(c);
}

void ConstantStreamLoad::finish() {
  VsmWriter &out = Out;
  const ConstantStream &stream = Stream;
  const int64_t kChunk = ChunkLw;
  int64_t perChunk = PerChunk, chunks = Chunks;
  int64_t l2bmBase = L2bmBase, l1bmBase = L1bmBase;
  PeMemory memory = Memory;
  int64_t peLongWord = PeLongWord;
  std::vector<unsigned> &tags = Tags;
  int64_t l1bmChunk = stream.l1bDistinct ? kChunk / 8 : kChunk;
  // Chunk c's L2BM -> L1BM copies into L1BM buffer c % 2.
  auto copies = [&](VsmWriter &run, int64_t c) {
    int64_t l2bm = l2bmBase + (c % InFlight) * kChunk;
    int64_t l1bm = l1bmBase + (c % 2) * l1bmChunk;
    if (stream.l1bDistinct) {
      for (int64_t o = 0; o < kChunk; o += 256)
        run.step({"l2bmd " + l2bmOperand(l2bm + o) + " " +
                  l1bmOperand(l1bm + o / 8)});
    } else {
      for (int64_t o = 0; o < kChunk; o += kL2bmStepLongWords)
        run.step(
            {"l2bmb " + l2bmOperand(l2bm + o) + " " + l1bmOperand(l1bm + o)});
    }
  };
  // Chunk c's L1BM -> PE distribution from L1BM buffer c % 2.
  auto distribution = [&](VsmWriter &run, int64_t c) {
    int64_t l1bm = l1bmBase + (c % 2) * l1bmChunk;
    int64_t j0 = c * perChunk;
    int64_t count = std::min(perChunk, stream.peLongWords - j0);
    if (stream.mabBroadcast) {
      for (int64_t j = 0; j < count; j += 8)
        run.step({"l1bmm " + l1bmOperand(l1bm + 4 * j, true) + " " +
                  llRun(memory, peLongWord + j0 + j)});
    } else {
      for (int64_t j = 0; j < count; j += 4)
        run.step({"l1bmd " + l1bmOperand(l1bm + 64 * j) + " " +
                  lwRun(memory, peLongWord + j0 + j)});
    }
  };
  // A software pipeline over the two L1BM buffers: chunk c + 1's copies
  // into one issue in the same steps as chunk c's distribution out of the
  // other (an L2BM and an L1BM transfer, two units), so that the stream
  // takes the copies' steps alone instead of the copies' plus the
  // distributions' (X19: ResNet-50's layer4 3x3 convolutions, 32 l2bmb
  // and 8 l1bmd steps a chunk, take 32).
  for (int64_t c = 0; c <= chunks; ++c) {
    VsmWriter copy, spread;
    if (c < chunks) {
      out.wait(tags[size_t(c)]);
      copies(copy, c);
    }
    if (c > 0)
      distribution(spread, c - 1);
    out.sideBySide(copy, spread);
    if (c == chunks)
      break;
    // The L2BM buffer is free once copied: refill it.
    if (c + InFlight < chunks) {
      out.nop(); // the copy reads the L2BM before the MV overwrites it
      issue(c + InFlight);
    }
    out.nop();
  }
  out.nop();
}
