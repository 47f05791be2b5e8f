//===- Validate.cpp - Layout validity checks ------------------------------===//

#include "mncc/layout/Layout.h"

#include <algorithm>

namespace mncc {
namespace layout {

namespace {

std::string formatIndex(const std::vector<int64_t> &index) {
  std::string out = "(";
  for (size_t i = 0; i < index.size(); ++i) {
    if (i)
      out += ", ";
    out += std::to_string(index[i]);
  }
  return out + ")";
}

// Enumerating more positions than this per axis to look for collisions
// would take too long; such layouts get an explicit "cannot verify" error.
constexpr int64_t kMaxEnumeratedPositions = int64_t(1) << 22;

struct AxisTerm {
  size_t dim;
  int64_t weight; // index weight of the mode inside its dimension
  int64_t size;
  int64_t stride;
};

std::vector<AxisTerm> termsOnAxis(const Layout &layout, Axis axis) {
  std::vector<AxisTerm> terms;
  for (size_t d = 0; d < layout.rank(); ++d) {
    int64_t weight = 1;
    const std::vector<Mode> &modes = layout.dims[d];
    for (size_t m = modes.size(); m-- > 0;) {
      if (modes[m].axis == axis && modes[m].size > 1)
        terms.push_back({d, weight, modes[m].size, modes[m].stride});
      weight *= modes[m].size;
    }
  }
  return terms;
}

// The place of a position is a tuple of per-axis coordinates and each
// coordinate depends only on the modes of its axis, so positions never
// share a place iff every axis maps its own modes' digits injectively.
// Returns false and fills the two colliding indices otherwise.
bool findAxisCollision(const Layout &layout, Axis axis,
                       std::vector<int64_t> &first,
                       std::vector<int64_t> &second, bool &tooLarge) {
  tooLarge = false;
  std::vector<AxisTerm> terms = termsOnAxis(layout, axis);
  // Fast proof: with strides sorted ascending, each stride exceeding the
  // largest value all smaller modes reach means digits are recoverable.
  std::vector<AxisTerm> sorted = terms;
  std::sort(
      sorted.begin(), sorted.end(),
      [](const AxisTerm &x, const AxisTerm &y) { return x.stride < y.stride; });
  bool nested = true;
  int64_t reach = 0;
  for (const AxisTerm &term : sorted) {
    if (term.stride <= reach) {
      nested = false;
      break;
    }
    reach += (term.size - 1) * term.stride;
  }
  if (nested)
    return false;

  int64_t count = 1;
  for (const AxisTerm &term : terms) {
    count *= term.size;
    if (count > kMaxEnumeratedPositions) {
      tooLarge = true;
      return false;
    }
  }
  // Enumerate (value, combination) pairs; equal values are collisions.
  std::vector<std::pair<int64_t, int64_t>> values;
  values.reserve(count);
  for (int64_t combo = 0; combo < count; ++combo) {
    int64_t rest = combo, value = 0;
    for (const AxisTerm &term : terms) {
      value += (rest % term.size) * term.stride;
      rest /= term.size;
    }
    values.emplace_back(value, combo);
  }
  std::sort(values.begin(), values.end());
  for (size_t i = 1; i < values.size(); ++i) {
    if (values[i].first != values[i - 1].first)
      continue;
    auto decode = [&](int64_t combo) {
      std::vector<int64_t> index(layout.rank(), 0);
      for (const AxisTerm &term : terms) {
        index[term.dim] += (combo % term.size) * term.weight;
        combo /= term.size;
      }
      return index;
    };
    first = decode(values[i - 1].second);
    second = decode(values[i].second);
    return true;
  }
  return false;
}

} // namespace

int64_t InstanceGeometry::blockIndex(const Place &place) const {
  auto slot = [](int64_t slots, int64_t coordinate) {
    return slots == 1 ? 0 : coordinate;
  };
  int64_t index = slot(timeSlots, place.time);
  index = index * l2bSlots + slot(l2bSlots, place.l2b % 2);
  index = index * l1bSlots + slot(l1bSlots, place.l1b);
  index = index * mabSlots + slot(mabSlots, place.mab);
  index = index * peSlots + slot(peSlots, place.pe);
  return index;
}

InstanceGeometry instanceGeometry(const Layout &layout, MemoryKind memory) {
  InstanceGeometry geometry;
  geometry.blockLongWords = maxCoordinate(layout, Axis::Address) + 1;
  Axis instanceAxis = memoryInstanceAxis(memory);
  bool groupLevel = memory == MemoryKind::DRAM || memory == MemoryKind::PDM;
  auto slots = [&](Axis axis) -> int64_t {
    if (layout.isBroadcast(axis))
      return 1;
    return maxCoordinate(layout, axis) + 1;
  };
  if (groupLevel) {
    geometry.timeSlots = maxCoordinate(layout, Axis::Time) + 1;
    if (!layout.isBroadcast(Axis::L2B) && maxCoordinate(layout, Axis::L2B) >= 1)
      geometry.l2bSlots = 2;
  }
  // Axes strictly below the instance axis distinguish blocks inside it.
  bool below = false;
  for (Axis axis : {Axis::L2B, Axis::L1B, Axis::MAB, Axis::PE}) {
    if (below) {
      int64_t count = slots(axis);
      if (axis == Axis::L1B)
        geometry.l1bSlots = count;
      else if (axis == Axis::MAB)
        geometry.mabSlots = count;
      else if (axis == Axis::PE)
        geometry.peSlots = count;
    }
    if (axis == instanceAxis)
      below = true;
  }
  return geometry;
}

std::vector<LayoutError> validateLayout(const Layout &layout,
                                        const ValidationOptions &options) {
  std::vector<LayoutError> errors;
  auto report = [&](std::string message) {
    errors.push_back(LayoutError{0, std::move(message)});
  };

  const char *parentNames[] = {"", " per L2B", " per L1B", " per MAB"};
  unsigned level = 0;
  for (Axis axis : {Axis::L2B, Axis::L1B, Axis::MAB, Axis::PE}) {
    int64_t reached = maxCoordinate(layout, axis);
    if (reached >= hardwareCount(axis))
      report(std::string(axisName(axis)) + " index reaches " +
             std::to_string(reached) + " but MN-Core 2 has only " +
             std::to_string(hardwareCount(axis)) + " " + axisName(axis) +
             parentNames[level]);
    ++level;
  }

  int64_t wordsPerLw = wordsPerLongWord(options.dtype);
  int64_t maxW = maxCoordinate(layout, Axis::W);
  if (maxW >= wordsPerLw)
    report("W index reaches " + std::to_string(maxW) +
           " but a long word holds only " + std::to_string(wordsPerLw) + " " +
           dtypeName(options.dtype) + " element" +
           (wordsPerLw == 1 ? "" : "s"));

  int64_t maxTime = maxCoordinate(layout, Axis::Time);
  if (options.maxTimeSlices > 0 && maxTime >= options.maxTimeSlices)
    report("layout needs " + std::to_string(maxTime + 1) +
           " time slices but at most " + std::to_string(options.maxTimeSlices) +
           " are allowed");

  int64_t capacity = memoryCapacityLongWords(options.memory);
  const char *memoryName = memoryKindName(options.memory);
  int64_t maxAddress = maxCoordinate(layout, Axis::Address);
  InstanceGeometry geometry = instanceGeometry(layout, options.memory);
  const char *instanceName =
      options.memory == MemoryKind::LM0 || options.memory == MemoryKind::LM1
          ? "PE"
      : options.memory == MemoryKind::L1BM ? "L1B"
      : options.memory == MemoryKind::L2BM ? "L2B"
                                           : "group";
  if (maxAddress >= capacity)
    report("addresses reach long word " + std::to_string(maxAddress) + " but " +
           memoryName + " holds " + std::to_string(capacity) +
           " long words per " + instanceName);
  else if (geometry.footprintLongWords() > capacity)
    report("the layout needs " + std::to_string(geometry.footprintLongWords()) +
           " long words of " + memoryName + " per " + instanceName + " (" +
           std::to_string(geometry.blocksPerInstance()) + " blocks of " +
           std::to_string(geometry.blockLongWords) + ") but it holds " +
           std::to_string(capacity));

  for (unsigned a = 0; a < kNumAxes; ++a) {
    Axis axis = static_cast<Axis>(a);
    std::vector<int64_t> first, second;
    bool tooLarge;
    if (findAxisCollision(layout, axis, first, second, tooLarge)) {
      Place place = locatePrimaryUnchecked(layout, first);
      report("positions " + formatIndex(first) + " and " + formatIndex(second) +
             " share one place (" + place.str() + ") without a broadcast");
    } else if (tooLarge) {
      report(std::string("cannot verify that the ") +
             (axis == Axis::Address ? "address" : axisName(axis)) +
             " modes never collide: too many positions to enumerate");
    }
  }
  return errors;
}

} // namespace layout
} // namespace mncc
