//===- SwitchPlan.cpp - Transfers between two layouts of a tensor ---------===//

#include "mncc/layout/LayoutAlgebra.h"

#include <algorithm>
#include <array>
#include <optional>

namespace mncc {
namespace layout {

const char *transferKindName(TransferKind kind) {
  switch (kind) {
  case TransferKind::SamePE:
    return "same-PE";
  case TransferKind::WithinMAB:
    return "within-MAB";
  case TransferKind::WithinL1B:
    return "within-L1B";
  case TransferKind::WithinL2B:
    return "within-L2B";
  case TransferKind::WithinGroup:
    return "within-group";
  case TransferKind::ThroughDRAM:
    return "through-DRAM";
  }
  return "?";
}

PlaceStep PlaceStep::between(const Place &from, const Place &to) {
  PlaceStep step;
  step.l2b = to.l2b - from.l2b;
  step.l1b = to.l1b - from.l1b;
  step.mab = to.mab - from.mab;
  step.pe = to.pe - from.pe;
  step.w = to.w - from.w;
  step.time = to.time - from.time;
  step.addressLw = to.addressLw - from.addressLw;
  return step;
}

std::string PlaceStep::str() const {
  std::string out;
  auto add = [&](const char *name, int64_t value) {
    if (value == 0)
      return;
    if (!out.empty())
      out += ' ';
    out += name;
    out += value > 0 ? "+" : "";
    out += std::to_string(value);
  };
  add("l2b", l2b);
  add("l1b", l1b);
  add("mab", mab);
  add("pe", pe);
  add("time", time);
  add("addr", addressLw);
  add("w", w);
  return out.empty() ? "none" : out;
}

namespace {

std::string formatIndex(const std::vector<int64_t> &index) {
  std::string out = "[";
  for (size_t i = 0; i < index.size(); ++i) {
    if (i)
      out += ",";
    out += std::to_string(index[i]);
  }
  return out + "]";
}

std::string shortPlace(const Place &place) {
  return "(l2b " + std::to_string(place.l2b) + " l1b " +
         std::to_string(place.l1b) + " mab " + std::to_string(place.mab) +
         " pe " + std::to_string(place.pe) + " time " +
         std::to_string(place.time) + " addr " +
         std::to_string(place.addressLw) + " w " + std::to_string(place.w) +
         ")";
}

} // namespace

std::string SwitchPlan::str() const {
  int64_t moved = 0;
  for (int64_t count : elementsPerKind)
    moved += count;
  std::string out = "switch plan: " + std::to_string(moved) +
                    " element copies in " + std::to_string(runs.size()) +
                    " runs, " + std::to_string(elementsInPlace) +
                    " already in place\n";
  for (unsigned k = 0; k < elementsPerKind.size(); ++k) {
    TransferKind kind = static_cast<TransferKind>(k);
    int64_t numRuns =
        std::count_if(runs.begin(), runs.end(),
                      [&](const TransferRun &run) { return run.kind == kind; });
    if (numRuns == 0)
      continue;
    out += transferKindName(kind);
    out += ": " + std::to_string(numRuns) + " runs, " +
           std::to_string(elementsPerKind[k]) + " elements\n";
    for (const TransferRun &run : runs) {
      if (run.kind != kind)
        continue;
      out += "  " + formatIndex(run.firstIndex) + " x" +
             std::to_string(run.length) + ": " + shortPlace(run.source) +
             " step " + run.sourceStep.str() + " -> " +
             shortPlace(run.destination) + " step " +
             run.destinationStep.str() + "\n";
    }
  }
  return out;
}

namespace {

// The coordinates of a place that can differ between two layouts, in
// PlaceStep's order; the group follows from the L2B.
constexpr size_t kNumCoords = 7;
using Coords = std::array<int64_t, kNumCoords>;

size_t coordOf(Axis axis) {
  switch (axis) {
  case Axis::L2B:
    return 0;
  case Axis::L1B:
    return 1;
  case Axis::MAB:
    return 2;
  case Axis::PE:
    return 3;
  case Axis::W:
    return 4;
  case Axis::Time:
    return 5;
  case Axis::Address:
    break;
  }
  return 6;
}

Place placeOf(const Coords &c) {
  Place place;
  place.group = c[0] / 2;
  place.l2b = c[0];
  place.l1b = c[1];
  place.mab = c[2];
  place.pe = c[3];
  place.w = c[4];
  place.time = c[5];
  place.addressLw = c[6];
  return place;
}

PlaceStep stepOf(const Coords &c) {
  PlaceStep step;
  step.l2b = c[0];
  step.l1b = c[1];
  step.mab = c[2];
  step.pe = c[3];
  step.w = c[4];
  step.time = c[5];
  step.addressLw = c[6];
  return step;
}

Coords operator+(const Coords &a, const Coords &b) {
  Coords sum;
  for (size_t i = 0; i < kNumCoords; ++i)
    sum[i] = a[i] + b[i];
  return sum;
}

Coords operator-(const Coords &a, const Coords &b) {
  Coords difference;
  for (size_t i = 0; i < kNumCoords; ++i)
    difference[i] = a[i] - b[i];
  return difference;
}

// How far an element moves (docs/layout.md, "Algebra for the planner");
// nullopt when it is already in place.
std::optional<TransferKind> classifyCoords(const Coords &source,
                                           const Coords &destination) {
  if (source == destination)
    return std::nullopt;
  if (source[5] != destination[5] || source[0] / 2 != destination[0] / 2)
    return TransferKind::ThroughDRAM;
  if (source[0] != destination[0])
    return TransferKind::WithinGroup;
  if (source[1] != destination[1])
    return TransferKind::WithinL2B;
  if (source[2] != destination[2])
    return TransferKind::WithinL1B;
  if (source[3] != destination[3])
    return TransferKind::WithinMAB;
  return TransferKind::SamePE;
}

// One loop of the row-major walk over both layouts: either affine (each
// index step moves both places by constant steps) or, for a dimension whose
// modes cannot be split into common affine digits (padding, sizes that do
// not divide), a table of the dimension's per-index contributions.
struct WalkLevel {
  int64_t size = 1;
  int64_t positionStep = 0; // row-major element position
  Coords sourceStep{}, destinationStep{};
  std::vector<Coords> sourceTable, destinationTable; // table levels only
  // Both places move alike at every index: a block that starts in place
  // stays in place.
  bool uniform = false;
};

// Contribution of dimension index `index` to the coordinates.
Coords contributionOf(const std::vector<Mode> &modes, int64_t index) {
  Coords coords{};
  for (size_t m = modes.size(); m-- > 0;) {
    coords[coordOf(modes[m].axis)] += (index % modes[m].size) * modes[m].stride;
    index /= modes[m].size;
  }
  return coords;
}

// Suffix products of the mode sizes (1 first, the span last) and, per
// boundary interval, the mode it belongs to; size-1 modes are skipped.
struct ModeBoundaries {
  std::vector<int64_t> products; // ascending
  std::vector<size_t> modeOf;    // products.size() - 1 entries
};

ModeBoundaries boundariesOf(const std::vector<Mode> &modes) {
  ModeBoundaries result;
  result.products.push_back(1);
  for (size_t m = modes.size(); m-- > 0;) {
    if (modes[m].size == 1)
      continue;
    result.products.push_back(result.products.back() * modes[m].size);
    result.modeOf.push_back(m);
  }
  return result;
}

// The step a common digit of weight `weight` (a product of inner sizes)
// makes in a layout whose boundaries are `bounds`; it lies inside one mode.
Coords digitStep(const std::vector<Mode> &modes, const ModeBoundaries &bounds,
                 int64_t weight) {
  Coords step{};
  for (size_t i = 0; i + 1 < bounds.products.size(); ++i)
    if (bounds.products[i] <= weight && weight < bounds.products[i + 1]) {
      const Mode &mode = modes[bounds.modeOf[i]];
      step[coordOf(mode.axis)] = weight / bounds.products[i] * mode.stride;
    }
  return step;
}

// Appends the loops of dimension `d` to `levels`: common affine digits
// when both layouts' mode boundaries form one divisibility chain over the
// whole extent, else one table level.
void addDimensionLevels(const Layout &from, const Layout &to, size_t d,
                        int64_t positionStride,
                        std::vector<WalkLevel> &levels) {
  const int64_t extent = from.extent(d);
  ModeBoundaries source = boundariesOf(from.dims[d]);
  ModeBoundaries destination = boundariesOf(to.dims[d]);
  std::vector<int64_t> chain = source.products;
  chain.insert(chain.end(), destination.products.begin(),
               destination.products.end());
  std::sort(chain.begin(), chain.end());
  chain.erase(std::unique(chain.begin(), chain.end()), chain.end());
  bool affine = from.span(d) == extent && to.span(d) == extent;
  for (size_t i = 0; affine && i + 1 < chain.size(); ++i)
    affine = chain[i + 1] % chain[i] == 0;
  if (affine) {
    for (size_t i = chain.size() - 1; i-- > 0;) {
      WalkLevel level;
      level.size = chain[i + 1] / chain[i];
      level.positionStep = chain[i] * positionStride;
      level.sourceStep = digitStep(from.dims[d], source, chain[i]);
      level.destinationStep = digitStep(to.dims[d], destination, chain[i]);
      levels.push_back(std::move(level));
    }
    return;
  }
  WalkLevel level;
  level.size = extent;
  level.positionStep = positionStride;
  for (int64_t i = 0; i < extent; ++i) {
    level.sourceTable.push_back(contributionOf(from.dims[d], i));
    level.destinationTable.push_back(contributionOf(to.dims[d], i));
  }
  levels.push_back(std::move(level));
}

// The element-by-element run builder of docs/layout.md, fed in row-major
// order, with whole in-place blocks taken at once.
class PlanBuilder {
public:
  PlanBuilder(SwitchPlan &plan, std::vector<int64_t> shape)
      : plan(plan), shape(std::move(shape)) {}

  void element(const Coords &source, const Coords &destination,
               int64_t position) {
    std::optional<TransferKind> kind = classifyCoords(source, destination);
    if (!kind) {
      ++plan.elementsInPlace;
      close();
      return;
    }
    ++plan.elementsPerKind[static_cast<unsigned>(*kind)];
    bool extends = false;
    if (open && kind == openKind) {
      Coords sourceStep = source - lastSource;
      Coords destinationStep = destination - lastDestination;
      if (openLength == 1) {
        openSourceStep = sourceStep;
        openDestinationStep = destinationStep;
        extends = true;
      } else {
        extends = sourceStep == openSourceStep &&
                  destinationStep == openDestinationStep;
      }
    }
    if (extends) {
      ++openLength;
    } else {
      close();
      open = true;
      openKind = *kind;
      openPosition = position;
      openLength = 1;
      openSource = source;
      openDestination = destination;
      openSourceStep = Coords{};
      openDestinationStep = Coords{};
    }
    lastSource = source;
    lastDestination = destination;
  }

  // `count` consecutive elements from (source, destination) on, each
  // moving by (sourceStep, destinationStep) from the previous one, all of
  // one kind and none in place: element() on each, in constant time.
  void line(const Coords &source, const Coords &destination, int64_t position,
            int64_t positionStep, int64_t count, const Coords &sourceStep,
            const Coords &destinationStep) {
    element(source, destination, position);
    if (count == 1)
      return;
    int64_t rest = count - 1;
    plan.elementsPerKind[static_cast<unsigned>(openKind)] += rest;
    if (openLength == 1) {
      openSourceStep = sourceStep;
      openDestinationStep = destinationStep;
      openLength += rest;
    } else if (openSourceStep == sourceStep &&
               openDestinationStep == destinationStep) {
      openLength += rest;
    } else {
      // The second element breaks the run and starts one the others
      // extend.
      TransferKind kind = openKind;
      close();
      open = true;
      openKind = kind;
      openPosition = position + positionStep;
      openLength = rest;
      openSource = source + sourceStep;
      openDestination = destination + destinationStep;
      openSourceStep = rest > 1 ? sourceStep : Coords{};
      openDestinationStep = rest > 1 ? destinationStep : Coords{};
    }
    for (size_t c = 0; c < kNumCoords; ++c) {
      lastSource[c] = source[c] + rest * sourceStep[c];
      lastDestination[c] = destination[c] + rest * destinationStep[c];
    }
  }

  void inPlaceBlock(int64_t count) {
    plan.elementsInPlace += count;
    close();
  }

  void close() {
    if (!open)
      return;
    TransferRun run;
    run.kind = openKind;
    run.firstIndex.assign(shape.size(), 0);
    int64_t rest = openPosition;
    for (size_t d = shape.size(); d-- > 0;) {
      run.firstIndex[d] = rest % shape[d];
      rest /= shape[d];
    }
    run.length = openLength;
    run.source = placeOf(openSource);
    run.sourceStep = stepOf(openSourceStep);
    run.destination = placeOf(openDestination);
    run.destinationStep = stepOf(openDestinationStep);
    plan.runs.push_back(std::move(run));
    open = false;
  }

private:
  SwitchPlan &plan;
  std::vector<int64_t> shape;
  bool open = false;
  TransferKind openKind = TransferKind::SamePE;
  int64_t openPosition = 0, openLength = 0;
  Coords openSource{}, openDestination{};
  Coords openSourceStep{}, openDestinationStep{};
  Coords lastSource{}, lastDestination{};
};

// Whether a loop leaves the hierarchy coordinates and W of both places
// alone: then along the loop only the time and address differences change,
// each linearly, and the kind of transfer changes at most where one of them
// crosses zero.
bool onlyTimeAndAddressMove(const WalkLevel &level) {
  for (size_t c = 0; c < 5; ++c)
    if (level.sourceStep[c] != 0 || level.destinationStep[c] != 0)
      return false;
  return true;
}

struct Walker {
  const std::vector<WalkLevel> &levels;
  const std::vector<int64_t> &blockSize; // elements below each level
  const std::vector<char> &uniformBelow; // levels k.. all uniform
  PlanBuilder &builder;

  void walk(size_t k, const Coords &source, const Coords &destination,
            int64_t position) {
    if (k == levels.size()) {
      builder.element(source, destination, position);
      return;
    }
    if (uniformBelow[k] && source == destination) {
      builder.inPlaceBlock(blockSize[k]);
      return;
    }
    const WalkLevel &level = levels[k];
    if (k + 1 == levels.size() && level.sourceTable.empty() &&
        onlyTimeAndAddressMove(level)) {
      innermostLine(level, source, destination, position);
      return;
    }
    if (!level.sourceTable.empty()) {
      for (int64_t i = 0; i < level.size; ++i)
        walk(k + 1, source + level.sourceTable[i],
             destination + level.destinationTable[i],
             position + i * level.positionStep);
      return;
    }
    Coords s = source, t = destination;
    for (int64_t i = 0; i < level.size; ++i) {
      walk(k + 1, s, t, position + i * level.positionStep);
      s = s + level.sourceStep;
      t = t + level.destinationStep;
    }
  }

  // The innermost loop in pieces of constant kind (see
  // onlyTimeAndAddressMove): the pieces end where the time or the address
  // difference is zero.
  void innermostLine(const WalkLevel &level, const Coords &source,
                     const Coords &destination, int64_t position) {
    const int64_t size = level.size;
    std::array<int64_t, 6> cuts{};
    size_t numCuts = 0;
    cuts[numCuts++] = 0;
    cuts[numCuts++] = size;
    for (size_t c : {size_t(5), size_t(6)}) {
      int64_t slope = level.sourceStep[c] - level.destinationStep[c];
      int64_t offset = source[c] - destination[c];
      if (slope == 0 || offset % slope != 0)
        continue;
      int64_t zero = -offset / slope;
      if (zero < 0 || zero >= size)
        continue;
      cuts[numCuts++] = zero;
      cuts[numCuts++] = zero + 1;
    }
    for (size_t i = 1; i < numCuts; ++i) // insertion sort of at most 6
      for (size_t j = i; j > 0 && cuts[j - 1] > cuts[j]; --j)
        std::swap(cuts[j - 1], cuts[j]);
    for (size_t i = 0; i + 1 < numCuts; ++i) {
      int64_t first = cuts[i], end = cuts[i + 1];
      if (first == end)
        continue;
      Coords s = source, t = destination;
      for (size_t c = 0; c < kNumCoords; ++c) {
        s[c] += first * level.sourceStep[c];
        t[c] += first * level.destinationStep[c];
      }
      if (s == t)
        builder.inPlaceBlock(end - first);
      else
        builder.line(s, t, position + first * level.positionStep,
                     level.positionStep, end - first, level.sourceStep,
                     level.destinationStep);
    }
  }
};

} // namespace

LayoutResult<SwitchPlan> planSwitch(const Layout &from, const Layout &to) {
  std::vector<int64_t> shape = from.logicalShape();
  if (shape != to.logicalShape())
    return LayoutError{0, "switch plan: the layouts have different logical "
                          "shapes"};
  SwitchPlan plan;
  if (from.numElements() == 0)
    return plan;

  // Destination replicas: every combination of the destination's
  // broadcast axes, the last axis varying fastest.
  std::vector<std::vector<int64_t>> replicas{{}};
  for (Axis axis : to.broadcast) {
    std::vector<std::vector<int64_t>> expanded;
    for (const std::vector<int64_t> &replica : replicas)
      for (int64_t i = 0; i < hardwareCount(axis); ++i) {
        expanded.push_back(replica);
        expanded.back().push_back(i);
      }
    replicas = std::move(expanded);
  }

  // The walk visits elements in row-major order like a plain index loop,
  // but as a loop nest over digits that move both places by constant
  // steps, so that a block that starts in place and whose loops move both
  // places alike is counted at once instead of element by element.
  std::vector<WalkLevel> levels;
  int64_t positionStride = 1;
  std::vector<int64_t> strides(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = positionStride;
    positionStride *= shape[d];
  }
  for (size_t d = 0; d < shape.size(); ++d)
    addDimensionLevels(from, to, d, strides[d], levels);
  // The nearest source copy agrees with the destination on every axis the
  // source is broadcast over: there the source moves as the destination.
  for (WalkLevel &level : levels) {
    // A destination replica's coordinate on a broadcast axis is the
    // replica's, whatever a mode on that axis (which the parser rejects)
    // would add.
    for (Axis axis : to.broadcast) {
      size_t c = coordOf(axis);
      level.destinationStep[c] = 0;
      for (Coords &coords : level.destinationTable)
        coords[c] = 0;
    }
    for (Axis axis : from.broadcast) {
      size_t c = coordOf(axis);
      level.sourceStep[c] = level.destinationStep[c];
      for (size_t i = 0; i < level.sourceTable.size(); ++i)
        level.sourceTable[i][c] = level.destinationTable[i][c];
    }
    level.uniform = level.sourceTable.empty()
                        ? level.sourceStep == level.destinationStep
                        : level.sourceTable == level.destinationTable;
  }
  std::vector<int64_t> blockSize(levels.size() + 1, 1);
  std::vector<char> uniformBelow(levels.size() + 1, 1);
  for (size_t k = levels.size(); k-- > 0;) {
    blockSize[k] = blockSize[k + 1] * levels[k].size;
    uniformBelow[k] = uniformBelow[k + 1] && levels[k].uniform;
  }

  PlanBuilder builder(plan, shape);
  Walker walker{levels, blockSize, uniformBelow, builder};
  for (const std::vector<int64_t> &replica : replicas) {
    Coords destination{};
    for (size_t b = 0; b < to.broadcast.size(); ++b)
      destination[coordOf(to.broadcast[b])] = replica[b];
    Coords source{};
    for (Axis axis : from.broadcast)
      source[coordOf(axis)] = destination[coordOf(axis)];
    walker.walk(0, source, destination, 0);
    builder.close();
  }
  std::stable_sort(plan.runs.begin(), plan.runs.end(),
                   [](const TransferRun &x, const TransferRun &y) {
                     return x.kind < y.kind;
                   });
  return plan;
}

} // namespace layout
} // namespace mncc
