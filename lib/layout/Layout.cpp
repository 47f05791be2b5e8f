//===- Layout.cpp - Layout notation parser, printer, mapping --------------===//

#include "mncc/layout/Layout.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <tuple>

namespace mncc {
namespace layout {

std::string LayoutError::str() const {
  if (column == 0)
    return message;
  return "column " + std::to_string(column) + ": " + message;
}

//===----------------------------------------------------------------------===//
// Vocabulary
//===----------------------------------------------------------------------===//

const char *axisName(Axis axis) {
  switch (axis) {
  case Axis::Address:
    return "";
  case Axis::L2B:
    return "L2B";
  case Axis::L1B:
    return "L1B";
  case Axis::MAB:
    return "MAB";
  case Axis::PE:
    return "PE";
  case Axis::W:
    return "W";
  case Axis::Time:
    return "Time";
  }
  return "";
}

std::optional<Axis> parseAxisName(std::string_view name) {
  for (Axis axis :
       {Axis::L2B, Axis::L1B, Axis::MAB, Axis::PE, Axis::W, Axis::Time})
    if (name == axisName(axis))
      return axis;
  return std::nullopt;
}

bool isHierarchyAxis(Axis axis) {
  return axis == Axis::L2B || axis == Axis::L1B || axis == Axis::MAB ||
         axis == Axis::PE;
}

int64_t hardwareCount(Axis axis) {
  switch (axis) {
  case Axis::L2B:
    return kNumL2B;
  case Axis::L1B:
    return kNumL1B;
  case Axis::MAB:
    return kNumMAB;
  case Axis::PE:
    return kNumPE;
  default:
    return 0;
  }
}

namespace {
struct DTypeInfo {
  DType dtype;
  const char *name;
  unsigned bits;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F16, "f16", 16},  {DType::BF16, "bf16", 16},
    {DType::F32, "f32", 32},  {DType::F64, "f64", 64},
    {DType::I8, "i8", 8},     {DType::I16, "i16", 16},
    {DType::I32, "i32", 32},  {DType::I64, "i64", 64},
    {DType::U8, "u8", 8},     {DType::U16, "u16", 16},
    {DType::U32, "u32", 32},  {DType::U64, "u64", 64},
    {DType::Bool, "bool", 8},
};

struct MemoryInfo {
  MemoryKind kind;
  const char *name;
  int64_t capacityLongWords;
  Axis instanceAxis;
};
// Capacities from the MN-Core 2 software developer manual
// (mncc/target/MNCore2.h): LM0/LM1 2 Ki long words per PE, L1BM 8 Ki per
// L1B, L2BM 32 Ki per L2B, PDM 4 MiB and DRAM 4 GiB per group.
constexpr MemoryInfo kMemories[] = {
    {MemoryKind::LM0, "LM0", target::LmLongWords, Axis::PE},
    {MemoryKind::LM1, "LM1", target::LmLongWords, Axis::PE},
    {MemoryKind::L1BM, "L1BM", target::L1bmLongWords, Axis::L1B},
    {MemoryKind::L2BM, "L2BM", target::L2bmLongWords, Axis::L2B},
    {MemoryKind::PDM, "PDM", target::PdmLongWords, Axis::L2B},
    {MemoryKind::DRAM, "DRAM", int64_t(target::DramLongWords), Axis::L2B},
};
static_assert(target::PdmLongWords * target::LongWordBytes == 4 << 20 &&
                  target::DramLongWords * target::LongWordBytes ==
                      uint64_t(4) << 30,
              "PDM 4 MiB and DRAM 4 GiB per group");
} // namespace

unsigned dtypeBits(DType dtype) {
  for (const DTypeInfo &info : kDTypes)
    if (info.dtype == dtype)
      return info.bits;
  return 8;
}

const char *dtypeName(DType dtype) {
  for (const DTypeInfo &info : kDTypes)
    if (info.dtype == dtype)
      return info.name;
  return "?";
}

std::optional<DType> parseDTypeName(std::string_view name) {
  for (const DTypeInfo &info : kDTypes)
    if (name == info.name)
      return info.dtype;
  return std::nullopt;
}

const char *memoryKindName(MemoryKind kind) {
  for (const MemoryInfo &info : kMemories)
    if (info.kind == kind)
      return info.name;
  return "?";
}

std::optional<MemoryKind> parseMemoryKindName(std::string_view name) {
  for (const MemoryInfo &info : kMemories)
    if (name == info.name)
      return info.kind;
  return std::nullopt;
}

int64_t memoryCapacityLongWords(MemoryKind kind) {
  for (const MemoryInfo &info : kMemories)
    if (info.kind == kind)
      return info.capacityLongWords;
  return 0;
}

Axis memoryInstanceAxis(MemoryKind kind) {
  for (const MemoryInfo &info : kMemories)
    if (info.kind == kind)
      return info.instanceAxis;
  return Axis::PE;
}

//===----------------------------------------------------------------------===//
// Layout queries
//===----------------------------------------------------------------------===//

int64_t Layout::span(size_t dim) const {
  int64_t product = 1;
  for (const Mode &mode : dims[dim])
    product *= mode.size;
  return product;
}

int64_t Layout::extent(size_t dim) const {
  return shape ? (*shape)[dim] : span(dim);
}

std::vector<int64_t> Layout::logicalShape() const {
  std::vector<int64_t> result;
  for (size_t d = 0; d < dims.size(); ++d)
    result.push_back(extent(d));
  return result;
}

int64_t Layout::numElements() const {
  int64_t product = 1;
  for (size_t d = 0; d < dims.size(); ++d)
    product *= extent(d);
  return product;
}

bool Layout::isBroadcast(Axis axis) const {
  return std::find(broadcast.begin(), broadcast.end(), axis) != broadcast.end();
}

int64_t Layout::numReplicas() const {
  int64_t product = 1;
  for (Axis axis : broadcast)
    product *= hardwareCount(axis);
  return product;
}

std::string Layout::str() const { return printLayout(*this); }

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

namespace {

// Larger values cannot be meaningful sizes or strides and would let
// products overflow int64_t.
constexpr int64_t kMaxInteger = int64_t(1) << 40;
constexpr int64_t kMaxPositions = int64_t(1) << 50;

class Parser {
public:
  explicit Parser(std::string_view text) : text(text) {}

  LayoutResult<Layout> parse() {
    Layout layout;
    skipSpace();
    size_t shapeStart = pos;
    if (looksLikeShapePrefix()) {
      std::vector<int64_t> shape;
      if (!parseShape(shape))
        return takeError();
      layout.shape = std::move(shape);
    }
    if (!parseBody(layout))
      return takeError();
    skipSpace();
    if (pos != text.size())
      return makeError(pos, "unexpected '" + std::string(1, text[pos]) +
                                "' after the end of the layout");
    if (layout.shape) {
      const std::vector<int64_t> &shape = *layout.shape;
      if (shape.size() != layout.dims.size())
        return makeError(
            shapeStart, "shape has " + std::to_string(shape.size()) +
                            " extents but the layout has " +
                            std::to_string(layout.dims.size()) + " dimensions");
      for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d] > layout.span(d))
          return makeError(
              dimStarts[d],
              "dimension " + std::to_string(d) + ": logical extent " +
                  std::to_string(shape[d]) + " exceeds the " +
                  std::to_string(layout.span(d)) + " positions of its modes");
    }
    return layout;
  }

private:
  std::string_view text;
  size_t pos = 0;
  std::vector<size_t> dimStarts;
  int64_t totalPositions = 1; // product of all mode sizes so far
  std::optional<LayoutError> error;

  LayoutError makeError(size_t at, std::string message) {
    return LayoutError{static_cast<unsigned>(at + 1), std::move(message)};
  }
  bool fail(size_t at, std::string message) {
    if (!error)
      error = makeError(at, std::move(message));
    return false;
  }
  LayoutError takeError() { return *error; }

  void skipSpace() {
    while (pos < text.size() &&
           std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }

  std::string describeCurrent() const {
    if (pos >= text.size())
      return "end of input";
    return "'" + std::string(1, text[pos]) + "'";
  }

  bool expect(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return fail(pos, std::string("expected '") + c + "' but found " +
                         describeCurrent());
  }

  bool peek(char c) {
    skipSpace();
    return pos < text.size() && text[pos] == c;
  }

  // The shape prefix and the layout body both open with '('. The body's
  // first token is '(', ')' or ';'; the shape's is an integer, or ')'
  // followed by '/'.
  bool looksLikeShapePrefix() {
    size_t probe = pos;
    if (probe >= text.size() || text[probe] != '(')
      return false;
    ++probe;
    while (probe < text.size() &&
           std::isspace(static_cast<unsigned char>(text[probe])))
      ++probe;
    if (probe < text.size() &&
        std::isdigit(static_cast<unsigned char>(text[probe])))
      return true;
    if (probe >= text.size() || text[probe] != ')')
      return false;
    ++probe;
    while (probe < text.size() &&
           std::isspace(static_cast<unsigned char>(text[probe])))
      ++probe;
    return probe < text.size() && text[probe] == '/';
  }

  bool parseInteger(int64_t &value, const char *what) {
    skipSpace();
    size_t start = pos;
    if (pos >= text.size() ||
        !std::isdigit(static_cast<unsigned char>(text[pos])))
      return fail(pos, std::string("expected ") + what + " but found " +
                           describeCurrent());
    value = 0;
    while (pos < text.size() &&
           std::isdigit(static_cast<unsigned char>(text[pos]))) {
      value = value * 10 + (text[pos] - '0');
      if (value > kMaxInteger)
        return fail(start, std::string(what) + " is too large");
      ++pos;
    }
    return true;
  }

  bool parseShape(std::vector<int64_t> &shape) {
    if (!expect('('))
      return false;
    if (!peek(')')) {
      do {
        int64_t extent;
        if (!parseInteger(extent, "an extent"))
          return false;
        shape.push_back(extent);
      } while (peek(',') && (++pos, true));
    }
    return expect(')') && expect('/');
  }

  bool parseAxisToken(Axis &axis, size_t &start) {
    skipSpace();
    start = pos;
    while (pos < text.size() &&
           std::isalnum(static_cast<unsigned char>(text[pos])))
      ++pos;
    std::string_view name = text.substr(start, pos - start);
    if (name.empty())
      return fail(start,
                  "expected an axis name but found " + describeCurrent());
    std::optional<Axis> parsed = parseAxisName(name);
    if (!parsed)
      return fail(start, "unknown axis '" + std::string(name) + "'");
    axis = *parsed;
    return true;
  }

  bool parseMode(Mode &mode) {
    skipSpace();
    size_t start = pos;
    if (!parseInteger(mode.size, "a mode size"))
      return false;
    if (mode.size < 1)
      return fail(start, "mode size must be at least 1");
    mode.axis = Axis::Address;
    if (pos < text.size() && text[pos] == '_') {
      ++pos;
      size_t axisStart;
      if (!parseAxisToken(mode.axis, axisStart))
        return false;
    }
    if (!expect(':') || !parseInteger(mode.stride, "a stride"))
      return false;
    int64_t reach;
    if (__builtin_mul_overflow(mode.size - 1, mode.stride, &reach) ||
        reach > kMaxPositions)
      return fail(start, "mode reaches past coordinate 2^50");
    return true;
  }

  bool parseDim(std::vector<Mode> &modes) {
    skipSpace();
    dimStarts.push_back(pos);
    if (!expect('('))
      return false;
    if (!peek(')')) {
      do {
        Mode mode;
        skipSpace();
        size_t modeStart = pos;
        if (!parseMode(mode))
          return false;
        // Keeps every product of sizes (spans, element counts) and every
        // coordinate far from int64_t overflow.
        if (__builtin_mul_overflow(totalPositions, mode.size,
                                   &totalPositions) ||
            totalPositions > kMaxPositions)
          return fail(modeStart, "layout holds more than 2^50 positions");
        modes.push_back(mode);
      } while (peek(',') && (++pos, true));
    }
    return expect(')');
  }

  bool parseBroadcast(Layout &layout) {
    skipSpace();
    if (pos >= text.size() || text[pos] != 'B')
      return fail(pos, "expected 'B@[' but found " + describeCurrent());
    ++pos;
    if (!expect('@') || !expect('['))
      return false;
    std::vector<std::pair<Axis, size_t>> listed;
    do {
      Axis axis;
      size_t start;
      if (!parseAxisToken(axis, start))
        return false;
      if (!isHierarchyAxis(axis))
        return fail(start, "cannot broadcast over axis '" +
                               std::string(axisName(axis)) +
                               "'; only L2B, L1B, MAB and PE");
      for (const auto &seen : listed)
        if (seen.first == axis)
          return fail(start, "axis '" + std::string(axisName(axis)) +
                                 "' is listed twice in B@[...]");
      for (const std::vector<Mode> &dim : layout.dims)
        for (const Mode &mode : dim)
          if (mode.axis == axis)
            return fail(start, "axis '" + std::string(axisName(axis)) +
                                   "' is broadcast but also used by a mode");
      listed.emplace_back(axis, start);
    } while (peek(',') && (++pos, true));
    if (!expect(']'))
      return false;
    for (Axis axis : {Axis::L2B, Axis::L1B, Axis::MAB, Axis::PE})
      for (const auto &seen : listed)
        if (seen.first == axis)
          layout.broadcast.push_back(axis);
    return true;
  }

  bool parseBody(Layout &layout) {
    if (!expect('('))
      return false;
    if (peek('(')) {
      do {
        std::vector<Mode> modes;
        if (!parseDim(modes))
          return false;
        layout.dims.push_back(std::move(modes));
      } while (peek(',') && (++pos, true));
    }
    if (peek(';')) {
      ++pos;
      if (!parseBroadcast(layout))
        return false;
    }
    return expect(')');
  }
};

} // namespace

LayoutResult<Layout> parseLayout(std::string_view text) {
  return Parser(text).parse();
}

//===----------------------------------------------------------------------===//
// Printer
//===----------------------------------------------------------------------===//

std::string printLayout(const Layout &layout) {
  std::string out;
  if (layout.shape) {
    out += '(';
    for (size_t d = 0; d < layout.shape->size(); ++d) {
      if (d)
        out += ',';
      out += std::to_string((*layout.shape)[d]);
    }
    out += ")/";
  }
  out += '(';
  for (size_t d = 0; d < layout.dims.size(); ++d) {
    if (d)
      out += ", ";
    out += '(';
    for (size_t m = 0; m < layout.dims[d].size(); ++m) {
      const Mode &mode = layout.dims[d][m];
      if (m)
        out += ", ";
      out += std::to_string(mode.size);
      if (mode.axis != Axis::Address) {
        out += '_';
        out += axisName(mode.axis);
      }
      out += ':';
      out += std::to_string(mode.stride);
    }
    out += ')';
  }
  if (!layout.broadcast.empty()) {
    out += "; B@[";
    for (size_t i = 0; i < layout.broadcast.size(); ++i) {
      if (i)
        out += ", ";
      out += axisName(layout.broadcast[i]);
    }
    out += ']';
  }
  out += ')';
  return out;
}

LayoutResult<Layout> withShape(const Layout &layout,
                               const std::vector<int64_t> &shape) {
  if (shape.size() != layout.rank())
    return LayoutError{0, "shape has " + std::to_string(shape.size()) +
                              " extents but the layout has " +
                              std::to_string(layout.rank()) + " dimensions"};
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] < 0 || shape[d] > layout.span(d))
      return LayoutError{
          0, "dimension " + std::to_string(d) + ": logical extent " +
                 std::to_string(shape[d]) + " exceeds the " +
                 std::to_string(layout.span(d)) + " positions of its modes"};
  Layout result = layout;
  result.shape = shape;
  return result;
}

//===----------------------------------------------------------------------===//
// Mapping
//===----------------------------------------------------------------------===//

int64_t Place::coordinate(Axis axis) const {
  switch (axis) {
  case Axis::Address:
    return addressLw;
  case Axis::L2B:
    return l2b;
  case Axis::L1B:
    return l1b;
  case Axis::MAB:
    return mab;
  case Axis::PE:
    return pe;
  case Axis::W:
    return w;
  case Axis::Time:
    return time;
  }
  return 0;
}

void Place::setCoordinate(Axis axis, int64_t value) {
  switch (axis) {
  case Axis::Address:
    addressLw = value;
    break;
  case Axis::L2B:
    l2b = value;
    group = value / 2;
    break;
  case Axis::L1B:
    l1b = value;
    break;
  case Axis::MAB:
    mab = value;
    break;
  case Axis::PE:
    pe = value;
    break;
  case Axis::W:
    w = value;
    break;
  case Axis::Time:
    time = value;
    break;
  }
}

bool Place::operator<(const Place &o) const {
  auto key = [](const Place &p) {
    return std::make_tuple(p.time, p.group, p.l2b, p.l1b, p.mab, p.pe,
                           p.addressLw, p.w);
  };
  return key(*this) < key(o);
}

std::string Place::toJson() const {
  return "{\"group\": " + std::to_string(group) +
         ", \"l2b\": " + std::to_string(l2b) +
         ", \"l1b\": " + std::to_string(l1b) +
         ", \"mab\": " + std::to_string(mab) +
         ", \"pe\": " + std::to_string(pe) + ", \"w\": " + std::to_string(w) +
         ", \"time\": " + std::to_string(time) +
         ", \"address_lw\": " + std::to_string(addressLw) + "}";
}

std::string Place::str() const {
  return "group " + std::to_string(group) + " l2b " + std::to_string(l2b) +
         " l1b " + std::to_string(l1b) + " mab " + std::to_string(mab) +
         " pe " + std::to_string(pe) + " time " + std::to_string(time) +
         " addr " + std::to_string(addressLw) + " w " + std::to_string(w);
}

Place locatePrimaryUnchecked(const Layout &layout,
                             const std::vector<int64_t> &index) {
  int64_t coords[kNumAxes] = {};
  for (size_t d = 0; d < layout.dims.size(); ++d) {
    int64_t rest = index[d];
    const std::vector<Mode> &modes = layout.dims[d];
    for (size_t m = modes.size(); m-- > 0;) {
      const Mode &mode = modes[m];
      coords[static_cast<unsigned>(mode.axis)] +=
          (rest % mode.size) * mode.stride;
      rest /= mode.size;
    }
  }
  Place place;
  for (unsigned a = 0; a < kNumAxes; ++a)
    place.setCoordinate(static_cast<Axis>(a), coords[a]);
  return place;
}

LayoutResult<std::vector<Place>> locate(const Layout &layout,
                                        const std::vector<int64_t> &index) {
  if (index.size() != layout.rank())
    return LayoutError{0, "index has " + std::to_string(index.size()) +
                              " components but the layout has " +
                              std::to_string(layout.rank()) + " dimensions"};
  for (size_t d = 0; d < index.size(); ++d)
    if (index[d] < 0 || index[d] >= layout.extent(d))
      return LayoutError{0, "index " + std::to_string(index[d]) +
                                " is outside dimension " + std::to_string(d) +
                                " of extent " +
                                std::to_string(layout.extent(d))};
  Place primary = locatePrimaryUnchecked(layout, index);
  std::vector<Place> places{primary};
  // Odometer over the broadcast axes, the last listed varying fastest.
  for (Axis axis : layout.broadcast) {
    std::vector<Place> expanded;
    for (const Place &place : places)
      for (int64_t i = 0; i < hardwareCount(axis); ++i) {
        Place copy = place;
        copy.setCoordinate(axis, i);
        expanded.push_back(copy);
      }
    places = std::move(expanded);
  }
  return places;
}

namespace {

struct AxisMode {
  size_t dim;
  size_t position;
  int64_t size;
  int64_t stride;
};

// Finds digits d_k in [0, size_k) with sum d_k * stride_k == target, modes
// sorted by decreasing stride. Depth-first with a reachability bound; the
// mode lists are short, and nested strides (the common case) never
// backtrack.
bool solveAxis(const std::vector<AxisMode> &modes,
               const std::vector<int64_t> &maxRest, size_t k, int64_t target,
               std::vector<int64_t> &digits) {
  if (k == modes.size())
    return target == 0;
  if (target < 0 || target > maxRest[k])
    return false;
  const AxisMode &mode = modes[k];
  if (mode.stride == 0) {
    digits[k] = 0;
    return solveAxis(modes, maxRest, k + 1, target, digits);
  }
  int64_t high = std::min(mode.size - 1, target / mode.stride);
  for (int64_t digit = high; digit >= 0; --digit) {
    int64_t rest = target - digit * mode.stride;
    if (k + 1 < modes.size() && rest > maxRest[k + 1])
      break; // smaller digits leave even more to cover
    digits[k] = digit;
    if (solveAxis(modes, maxRest, k + 1, rest, digits))
      return true;
  }
  return false;
}

} // namespace

PlaceContent elementAt(const Layout &layout, const Place &place) {
  PlaceContent unused;
  if (place.group != place.l2b / 2 || place.l2b < 0)
    return unused;
  std::vector<int64_t> index(layout.rank(), 0);
  for (unsigned a = 0; a < kNumAxes; ++a) {
    Axis axis = static_cast<Axis>(a);
    int64_t target = place.coordinate(axis);
    if (layout.isBroadcast(axis)) {
      if (target < 0 || target >= hardwareCount(axis))
        return unused;
      continue;
    }
    std::vector<AxisMode> modes;
    for (size_t d = 0; d < layout.rank(); ++d)
      for (size_t m = 0; m < layout.dims[d].size(); ++m) {
        const Mode &mode = layout.dims[d][m];
        if (mode.axis == axis)
          modes.push_back({d, m, mode.size, mode.stride});
      }
    std::stable_sort(modes.begin(), modes.end(),
                     [](const AxisMode &x, const AxisMode &y) {
                       return x.stride > y.stride;
                     });
    std::vector<int64_t> maxRest(modes.size() + 1, 0);
    for (size_t k = modes.size(); k-- > 0;)
      maxRest[k] = maxRest[k + 1] + (modes[k].size - 1) * modes[k].stride;
    std::vector<int64_t> digits(modes.size(), 0);
    if (!solveAxis(modes, maxRest, 0, target, digits))
      return unused;
    for (size_t k = 0; k < modes.size(); ++k) {
      // Weight of the mode's digit: product of the sizes of the more minor
      // modes of its dimension.
      int64_t weight = 1;
      const std::vector<Mode> &dimModes = layout.dims[modes[k].dim];
      for (size_t m = modes[k].position + 1; m < dimModes.size(); ++m)
        weight *= dimModes[m].size;
      index[modes[k].dim] += digits[k] * weight;
    }
  }
  PlaceContent content;
  content.kind = PlaceContent::Element;
  for (size_t d = 0; d < layout.rank(); ++d)
    if (index[d] >= layout.extent(d))
      content.kind = PlaceContent::Padding;
  content.index = std::move(index);
  return content;
}

int64_t maxCoordinate(const Layout &layout, Axis axis) {
  int64_t result = 0;
  for (const std::vector<Mode> &dim : layout.dims)
    for (const Mode &mode : dim)
      if (mode.axis == axis)
        result += (mode.size - 1) * mode.stride;
  return result;
}

} // namespace layout
} // namespace mncc
