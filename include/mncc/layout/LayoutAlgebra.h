//===- LayoutAlgebra.h - Layout transformations for planners ----*- C++ -*-===//
//
// Coalescing, composition, complement and division of mode lists, and the
// switch plan that turns one layout of a tensor into another.
//
// A mode list (the modes of one dimension, major to minor) is read as a
// function from a linear index in [0, product of sizes) to coordinates:
// the index is split in the mixed radix of the sizes and every digit adds
// digit * stride to the coordinate of its mode's axis.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LAYOUT_LAYOUTALGEBRA_H
#define MNCC_LAYOUT_LAYOUTALGEBRA_H

#include "mncc/layout/Layout.h"

#include <array>
#include <string>
#include <vector>

namespace mncc {
namespace layout {

/// Evaluates a mode list at linear index `index`; returns the coordinate of
/// every axis, indexed by static_cast<unsigned>(Axis).
std::array<int64_t, kNumAxes> evaluateModes(const std::vector<Mode> &modes,
                                            int64_t index);

/// Same function with fewest modes: drops size-1 modes and merges a mode
/// into its minor neighbour when both are on the same axis and the major
/// stride equals minor size * minor stride.
std::vector<Mode> coalesceModes(const std::vector<Mode> &modes);
/// coalesceModes on every dimension; the mapping is unchanged.
Layout coalesce(const Layout &layout);

/// Modes R on the same single axis as `modes` such that the list
/// (R..., modes...) (R major) maps [0, cosize) one-to-one onto [0, cosize).
/// Requires every stride to be a multiple of the extent of the smaller
/// modes and cosize to be a multiple of the total extent.
LayoutResult<std::vector<Mode>> complement(const std::vector<Mode> &modes,
                                           int64_t cosize);

/// Mode list C with C(i) == A(B(i)) for i in [0, size of B), where B only
/// computes indices (its axes are ignored, its strides step through A's
/// linear index). Each B mode becomes one or more modes of C, so C keeps
/// B's shape. Fails when a stride or size of B cuts a mode of A unevenly or
/// B reaches past A's size.
LayoutResult<std::vector<Mode>> compose(const std::vector<Mode> &a,
                                        const std::vector<Mode> &b);

/// Splits dimension `dim` into two dimensions (outer, inner) with index
/// i = outer * tile + inner. Fails unless the dimension's span (and its
/// logical extent, if the layout has a shape) is a multiple of `tile` and
/// the modes can be cut at `tile`.
LayoutResult<Layout> divide(const Layout &layout, size_t dim, int64_t tile);

//===----------------------------------------------------------------------===//
// Switch plan
//===----------------------------------------------------------------------===//

/// How far data moves, from cheapest to dearest. A change of time slice
/// goes through DRAM: the source slice is gone before the destination
/// slice exists.
enum class TransferKind : uint8_t {
  SamePE,      // another address / word of the same PE
  WithinMAB,   // another PE of the same MAB
  WithinL1B,   // another MAB under the same L1B
  WithinL2B,   // another L1B under the same L2B
  WithinGroup, // the other L2B of the group
  ThroughDRAM  // another group, or another time slice
};
const char *transferKindName(TransferKind kind);

/// Difference between consecutive places of a run.
struct PlaceStep {
  int64_t l2b = 0, l1b = 0, mab = 0, pe = 0, w = 0, time = 0, addressLw = 0;
  bool operator==(const PlaceStep &o) const {
    return l2b == o.l2b && l1b == o.l1b && mab == o.mab && pe == o.pe &&
           w == o.w && time == o.time && addressLw == o.addressLw;
  }
  static PlaceStep between(const Place &from, const Place &to);
  std::string str() const;
};

/// `length` logical elements, consecutive in row-major order starting at
/// `firstIndex`, whose k-th element moves from source + k * sourceStep to
/// destination + k * destinationStep (group follows l2b).
struct TransferRun {
  TransferKind kind = TransferKind::SamePE;
  std::vector<int64_t> firstIndex;
  int64_t length = 0;
  Place source;
  PlaceStep sourceStep;
  Place destination;
  PlaceStep destinationStep;
};

struct SwitchPlan {
  /// Runs sorted by kind (cheapest first), then by destination replica and
  /// element order. Elements already in place produce no run.
  std::vector<TransferRun> runs;
  int64_t elementsInPlace = 0;
  /// Elements moved per kind, indexed by static_cast<unsigned>(kind).
  std::array<int64_t, 6> elementsPerKind{};

  std::string str() const;
};

/// Transfers turning a tensor laid out as `from` into `to`. Every replica of
/// the destination is fed from the source replica nearest to it. Fails if
/// the logical shapes differ. Correct but element by element: the cost is
/// linear in elements times destination replicas.
LayoutResult<SwitchPlan> planSwitch(const Layout &from, const Layout &to);

} // namespace layout
} // namespace mncc

#endif // MNCC_LAYOUT_LAYOUTALGEBRA_H
