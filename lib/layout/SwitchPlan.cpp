//===- SwitchPlan.cpp - Transfers between two layouts of a tensor ---------===//

#include "mncc/layout/LayoutAlgebra.h"

#include <algorithm>

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

std::optional<TransferKind> classify(const Place &source,
                                     const Place &destination) {
  if (source == destination)
    return std::nullopt;
  if (source.time != destination.time || source.group != destination.group)
    return TransferKind::ThroughDRAM;
  if (source.l2b != destination.l2b)
    return TransferKind::WithinGroup;
  if (source.l1b != destination.l1b)
    return TransferKind::WithinL2B;
  if (source.mab != destination.mab)
    return TransferKind::WithinL1B;
  if (source.pe != destination.pe)
    return TransferKind::WithinMAB;
  return TransferKind::SamePE;
}

// Advances a row-major multi-index; false after the last one.
bool nextIndex(std::vector<int64_t> &index, const std::vector<int64_t> &shape) {
  for (size_t d = index.size(); d-- > 0;) {
    if (++index[d] < shape[d])
      return true;
    index[d] = 0;
  }
  return false;
}

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

  std::optional<TransferRun> open;
  Place lastSource, lastDestination;
  auto close = [&]() {
    if (open)
      plan.runs.push_back(std::move(*open));
    open.reset();
  };

  for (const std::vector<int64_t> &replica : replicas) {
    std::vector<int64_t> index(shape.size(), 0);
    do {
      Place destination = locatePrimaryUnchecked(to, index);
      for (size_t b = 0; b < to.broadcast.size(); ++b)
        destination.setCoordinate(to.broadcast[b], replica[b]);
      // The nearest source copy agrees with the destination on every axis
      // the source is broadcast over.
      Place source = locatePrimaryUnchecked(from, index);
      for (Axis axis : from.broadcast)
        source.setCoordinate(axis, destination.coordinate(axis));

      std::optional<TransferKind> kind = classify(source, destination);
      if (!kind) {
        ++plan.elementsInPlace;
        close();
        continue;
      }
      ++plan.elementsPerKind[static_cast<unsigned>(*kind)];
      bool extends = false;
      if (open && open->kind == *kind) {
        PlaceStep sourceStep = PlaceStep::between(lastSource, source);
        PlaceStep destinationStep =
            PlaceStep::between(lastDestination, destination);
        if (open->length == 1) {
          open->sourceStep = sourceStep;
          open->destinationStep = destinationStep;
          extends = true;
        } else {
          extends = sourceStep == open->sourceStep &&
                    destinationStep == open->destinationStep;
        }
      }
      if (extends) {
        ++open->length;
      } else {
        close();
        open = TransferRun{*kind,       index,       1,          source,
                           PlaceStep(), destination, PlaceStep()};
      }
      lastSource = source;
      lastDestination = destination;
    } while (nextIndex(index, shape));
    close();
  }
  std::stable_sort(plan.runs.begin(), plan.runs.end(),
                   [](const TransferRun &x, const TransferRun &y) {
                     return x.kind < y.kind;
                   });
  return plan;
}

} // namespace layout
} // namespace mncc
