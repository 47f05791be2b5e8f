//===- LayoutAlgebra.cpp - Coalesce, compose, complement, divide ----------===//

#include "mncc/layout/LayoutAlgebra.h"

#include <algorithm>

namespace mncc {
namespace layout {

std::array<int64_t, kNumAxes> evaluateModes(const std::vector<Mode> &modes,
                                            int64_t index) {
  std::array<int64_t, kNumAxes> coords{};
  for (size_t m = modes.size(); m-- > 0;) {
    coords[static_cast<unsigned>(modes[m].axis)] +=
        (index % modes[m].size) * modes[m].stride;
    index /= modes[m].size;
  }
  return coords;
}

std::vector<Mode> coalesceModes(const std::vector<Mode> &modes) {
  std::vector<Mode> result;
  for (const Mode &mode : modes) {
    if (mode.size == 1)
      continue;
    if (!result.empty()) {
      Mode &major = result.back();
      // The major digit steps exactly one full sweep of the minor mode, so
      // the pair counts like a single larger digit.
      if (major.axis == mode.axis && major.stride == mode.size * mode.stride) {
        major = Mode{major.size * mode.size, mode.stride, mode.axis};
        continue;
      }
    }
    result.push_back(mode);
  }
  return result;
}

Layout coalesce(const Layout &layout) {
  Layout result = layout;
  for (std::vector<Mode> &modes : result.dims)
    modes = coalesceModes(modes);
  return result;
}

LayoutResult<std::vector<Mode>> complement(const std::vector<Mode> &modes,
                                           int64_t cosize) {
  std::vector<Mode> sorted;
  for (const Mode &mode : modes)
    if (mode.size > 1)
      sorted.push_back(mode);
  Axis axis = sorted.empty() ? Axis::Address : sorted.front().axis;
  for (const Mode &mode : sorted) {
    if (mode.axis != axis)
      return LayoutError{0, "complement needs modes of a single axis"};
    if (mode.stride == 0)
      return LayoutError{0, "complement of a stride-0 mode is undefined"};
  }
  std::stable_sort(
      sorted.begin(), sorted.end(),
      [](const Mode &x, const Mode &y) { return x.stride < y.stride; });
  // Walk from the smallest stride; `covered` is the extent the modes seen
  // so far fill, and every gap before the next stride becomes a mode.
  std::vector<Mode> minorFirst;
  int64_t covered = 1;
  for (const Mode &mode : sorted) {
    if (mode.stride % covered != 0)
      return LayoutError{0, "stride " + std::to_string(mode.stride) +
                                " is not a multiple of the extent " +
                                std::to_string(covered) +
                                " of the smaller modes"};
    if (mode.stride / covered > 1)
      minorFirst.push_back(Mode{mode.stride / covered, covered, axis});
    covered = mode.stride * mode.size;
  }
  if (cosize % covered != 0)
    return LayoutError{0, "cosize " + std::to_string(cosize) +
                              " is not a multiple of the extent " +
                              std::to_string(covered) + " of the modes"};
  if (cosize / covered > 1)
    minorFirst.push_back(Mode{cosize / covered, covered, axis});
  return coalesceModes(
      std::vector<Mode>(minorFirst.rbegin(), minorFirst.rend()));
}

LayoutResult<std::vector<Mode>> compose(const std::vector<Mode> &a,
                                        const std::vector<Mode> &b) {
  const std::vector<Mode> aMinorFirst(a.rbegin(), a.rend());
  std::vector<Mode> result;
  for (const Mode &bMode : b) {
    if (bMode.size == 1)
      continue;
    if (bMode.stride == 0) {
      result.push_back(Mode{bMode.size, 0, Axis::Address});
      continue;
    }
    // Skip the first `stride` positions of A's index: whole minor modes
    // disappear, and the mode that is cut keeps every stride-th digit.
    std::vector<Mode> rest = aMinorFirst;
    size_t next = 0;
    int64_t skip = bMode.stride;
    while (skip > 1) {
      if (next == rest.size())
        return LayoutError{0, "composition: stride " +
                                  std::to_string(bMode.stride) +
                                  " reaches past the size of the first "
                                  "mode list"};
      Mode &mode = rest[next];
      if (skip % mode.size == 0) {
        skip /= mode.size;
        ++next;
      } else if (mode.size % skip == 0) {
        mode = Mode{mode.size / skip, mode.stride * skip, mode.axis};
        skip = 1;
      } else {
        return LayoutError{0, "composition: stride " +
                                  std::to_string(bMode.stride) + " cuts mode " +
                                  std::to_string(mode.size) + " unevenly"};
      }
    }
    // Keep `size` positions of what is left.
    std::vector<Mode> taken;
    int64_t take = bMode.size;
    while (take > 1) {
      if (next == rest.size())
        return LayoutError{0, "composition: mode " +
                                  std::to_string(bMode.size) + ":" +
                                  std::to_string(bMode.stride) +
                                  " reaches past the size of the first "
                                  "mode list"};
      const Mode &mode = rest[next];
      if (take % mode.size == 0) {
        taken.push_back(mode);
        take /= mode.size;
        ++next;
      } else if (mode.size % take == 0) {
        taken.push_back(Mode{take, mode.stride, mode.axis});
        take = 1;
      } else {
        return LayoutError{0, "composition: size " +
                                  std::to_string(bMode.size) + " cuts mode " +
                                  std::to_string(mode.size) + " unevenly"};
      }
    }
    result.insert(result.end(), taken.rbegin(), taken.rend());
  }
  return result;
}

LayoutResult<Layout> divide(const Layout &layout, size_t dim, int64_t tile) {
  if (dim >= layout.rank())
    return LayoutError{0, "divide: no dimension " + std::to_string(dim)};
  int64_t span = layout.span(dim);
  if (tile < 1 || span % tile != 0)
    return LayoutError{0, "divide: tile " + std::to_string(tile) +
                              " does not divide the span " +
                              std::to_string(span) + " of dimension " +
                              std::to_string(dim)};
  if (layout.shape && (*layout.shape)[dim] % tile != 0)
    return LayoutError{0, "divide: tile " + std::to_string(tile) +
                              " does not divide the logical extent " +
                              std::to_string((*layout.shape)[dim]) +
                              " of dimension " + std::to_string(dim)};
  const std::vector<Mode> &modes = layout.dims[dim];
  LayoutResult<std::vector<Mode>> inner =
      compose(modes, {Mode{tile, 1, Axis::Address}});
  if (!inner)
    return inner.error();
  LayoutResult<std::vector<Mode>> outer =
      compose(modes, {Mode{span / tile, tile, Axis::Address}});
  if (!outer)
    return outer.error();
  Layout result = layout;
  result.dims[dim] = *outer;
  result.dims.insert(result.dims.begin() + dim + 1, *inner);
  if (result.shape) {
    int64_t extent = (*result.shape)[dim];
    (*result.shape)[dim] = extent / tile;
    result.shape->insert(result.shape->begin() + dim + 1, tile);
  }
  return result;
}

} // namespace layout
} // namespace mncc
