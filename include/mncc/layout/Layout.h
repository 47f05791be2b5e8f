//===- Layout.h - MN-Core 2 tensor layouts ----------------------*- C++ -*-===//
//
// Data model, parser, printer and element mapping of the MLSDK layout
// notation, e.g.
//
//   ((75_Time:4, 8_L2B:1, 16_MAB:1, 4:1, 4:4), (4_Time:1, 24:16, 4_W:1,
//    4_PE:1); B@[L1B])
//
// docs/layout.md describes the notation and every decision taken here. The
// library is plain C++17 and never throws: failures come back as
// LayoutError values.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LAYOUT_LAYOUT_H
#define MNCC_LAYOUT_LAYOUT_H

#include "mncc/target/MNCore2.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace mncc {
namespace layout {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// A failure with a 1-based column into the text it came from; column 0
/// means the error is not tied to a position in a layout string.
struct LayoutError {
  unsigned column = 0;
  std::string message;

  /// "column N: message", or just the message when column is 0.
  std::string str() const;
};

/// Either a value or a LayoutError; the project builds with -fno-exceptions,
/// so every fallible function returns one of these.
template <typename T> class LayoutResult {
public:
  LayoutResult(T value) : storage(std::move(value)) {}
  LayoutResult(LayoutError error) : storage(std::move(error)) {}

  bool ok() const { return storage.index() == 0; }
  explicit operator bool() const { return ok(); }

  T &value() { return *std::get_if<0>(&storage); }
  const T &value() const { return *std::get_if<0>(&storage); }
  T &operator*() { return value(); }
  const T &operator*() const { return value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

  const LayoutError &error() const { return *std::get_if<1>(&storage); }

private:
  std::variant<T, LayoutError> storage;
};

//===----------------------------------------------------------------------===//
// Hardware vocabulary
//===----------------------------------------------------------------------===//

/// What a mode's index is mapped onto. Address is the plain `size:stride`
/// form: an offset in long words (64 bit) inside the memory that holds the
/// tensor.
enum class Axis : uint8_t { Address, L2B, L1B, MAB, PE, W, Time };
constexpr unsigned kNumAxes = 7;

/// The notation's spelling ("L2B", "Time", ...); "" for Address.
const char *axisName(Axis axis);
/// Inverse of axisName for the named axes; nullopt for anything else.
std::optional<Axis> parseAxisName(std::string_view name);

/// Whether the axis is one of the four levels of the PE hierarchy, the only
/// axes a tensor can be broadcast over.
bool isHierarchyAxis(Axis axis);

/// Hardware counts of MN-Core 2 (one board): 4 groups x 2 L2B, 8 L1B per
/// L2B, 16 MAB per L1B, 4 PE per MAB.
/// (mncc/target/MNCore2.h defines them for every component.)
constexpr int64_t kNumGroups = target::NumGroups;
// global L2B index, group * 2 + l2b-in-group
constexpr int64_t kNumL2B = target::NumL2bs;
constexpr int64_t kNumL1B = target::L1bsPerL2b;
constexpr int64_t kNumMAB = target::MabsPerL1b;
constexpr int64_t kNumPE = target::PesPerMab;
constexpr int64_t kLongWordBytes = target::LongWordBytes;

/// Number of positions on a hierarchy axis; 0 for unbounded axes (Address,
/// Time) and for W, whose count depends on the element type.
int64_t hardwareCount(Axis axis);

/// Element types. W counts elements inside one 64-bit long word, so it is
/// 64 / bits of the element type.
enum class DType : uint8_t {
  F16,
  BF16,
  F32,
  F64,
  I8,
  I16,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64,
  Bool
};

unsigned dtypeBits(DType dtype);
inline unsigned dtypeBytes(DType dtype) { return dtypeBits(dtype) / 8; }
/// Elements per long word: the size of the W axis for this dtype.
inline int64_t wordsPerLongWord(DType dtype) { return 64 / dtypeBits(dtype); }
const char *dtypeName(DType dtype);
std::optional<DType> parseDTypeName(std::string_view name);

/// The memories a layout's addresses can refer to. Capacities are in long
/// words per instance; an instance is one PE (LM0/LM1), one L1B (L1BM), one
/// L2B (L2BM) or one group (PDM, DRAM).
enum class MemoryKind : uint8_t { LM0, LM1, L1BM, L2BM, PDM, DRAM };

const char *memoryKindName(MemoryKind kind);
std::optional<MemoryKind> parseMemoryKindName(std::string_view name);
int64_t memoryCapacityLongWords(MemoryKind kind);
/// The finest hierarchy axis that selects an instance of the memory: PE for
/// LM0/LM1, L1B for L1BM, L2B for L2BM and PDM/DRAM (whose instance is the
/// group, i.e. the L2B index divided by 2).
Axis memoryInstanceAxis(MemoryKind kind);

//===----------------------------------------------------------------------===//
// Layout data model
//===----------------------------------------------------------------------===//

/// One `size_Axis:stride` (or `size:stride`) term.
struct Mode {
  int64_t size = 1;
  int64_t stride = 0;
  Axis axis = Axis::Address;

  bool operator==(const Mode &other) const {
    return size == other.size && stride == other.stride && axis == other.axis;
  }
  bool operator!=(const Mode &other) const { return !(*this == other); }
};

/// A parsed layout. `dims[d]` lists the modes of tensor dimension d from
/// major to minor: the logical index i of that dimension is written in the
/// mixed radix of the mode sizes, the last mode varying fastest.
struct Layout {
  std::vector<std::vector<Mode>> dims;
  /// Hierarchy axes the tensor is replicated over, in hierarchy order
  /// (L2B, L1B, MAB, PE), without duplicates.
  std::vector<Axis> broadcast;
  /// The `(shape)/` prefix; when absent the logical extent of a dimension
  /// is the product of its mode sizes.
  std::optional<std::vector<int64_t>> shape;

  size_t rank() const { return dims.size(); }
  /// Product of the mode sizes of dimension `dim`: how many index values
  /// the layout has room for, padding included.
  int64_t span(size_t dim) const;
  /// Logical extent of dimension `dim` (shape if given, else span).
  int64_t extent(size_t dim) const;
  std::vector<int64_t> logicalShape() const;
  /// Number of logical elements (product of extents).
  int64_t numElements() const;
  bool isBroadcast(Axis axis) const;
  /// Number of copies of every element (product of the counts of the
  /// broadcast axes).
  int64_t numReplicas() const;

  /// Canonical text; parseLayout(str()) reproduces *this exactly.
  std::string str() const;

  bool operator==(const Layout &other) const {
    return dims == other.dims && broadcast == other.broadcast &&
           shape == other.shape;
  }
  bool operator!=(const Layout &other) const { return !(*this == other); }
};

/// Parses the notation. Whitespace between tokens is ignored. Errors carry
/// the 1-based column of the offending character.
LayoutResult<Layout> parseLayout(std::string_view text);

/// Canonical printing: `(shape)/` prefix only when present, ", " between
/// modes and dimensions, "; B@[...]" with axes in hierarchy order.
std::string printLayout(const Layout &layout);

/// Returns a copy with the `(shape)/` prefix set to `shape` (or an error if
/// the rank differs or an extent exceeds its dimension's span).
LayoutResult<Layout> withShape(const Layout &layout,
                               const std::vector<int64_t> &shape);

//===----------------------------------------------------------------------===//
// Element <-> place mapping
//===----------------------------------------------------------------------===//

/// Where one copy of an element lives. `l2b` is the global L2B index 0..7
/// and `group` is always l2b / 2 (MN-Core 2 numbers L2Bs as
/// group * 2 + l2b-in-group). `w` is the element's slot inside the long word
/// at `addressLw`, `time` the time slice.
struct Place {
  int64_t group = 0;
  int64_t l2b = 0;
  int64_t l1b = 0;
  int64_t mab = 0;
  int64_t pe = 0;
  int64_t w = 0;
  int64_t time = 0;
  int64_t addressLw = 0;

  /// Coordinate of an axis (Address gives addressLw).
  int64_t coordinate(Axis axis) const;
  void setCoordinate(Axis axis, int64_t value);

  bool operator==(const Place &o) const {
    return group == o.group && l2b == o.l2b && l1b == o.l1b && mab == o.mab &&
           pe == o.pe && w == o.w && time == o.time && addressLw == o.addressLw;
  }
  bool operator!=(const Place &o) const { return !(*this == o); }
  bool operator<(const Place &o) const;

  /// JSON object {"group":..,"l2b":..,...,"address_lw":..}.
  std::string toJson() const;
  std::string str() const;
};

/// Places of the element at logical `index`, one per replica; the first is
/// the primary copy (coordinate 0 on every broadcast axis), the rest follow
/// in hierarchy order. Fails if the rank differs or an index is outside its
/// logical extent.
LayoutResult<std::vector<Place>> locate(const Layout &layout,
                                        const std::vector<int64_t> &index);

/// Place of the position with padded index `index` (each component below
/// the dimension's span), primary replica only; no range checks. This is
/// the hot path used by staging and planning.
Place locatePrimaryUnchecked(const Layout &layout,
                             const std::vector<int64_t> &index);

/// What a place holds under a layout.
struct PlaceContent {
  enum Kind { Element, Padding, Unused } kind = Unused;
  /// The (padded) logical index for Element and Padding.
  std::vector<int64_t> index;
};

/// Inverse of locate: which element (if any) lives at `place`. Coordinates
/// on broadcast axes may take any in-range value. A place the layout does
/// not reach gives Unused; one reached only by an index beyond a logical
/// extent gives Padding.
PlaceContent elementAt(const Layout &layout, const Place &place);

//===----------------------------------------------------------------------===//
// Validity
//===----------------------------------------------------------------------===//

struct ValidationOptions {
  DType dtype = DType::F32;
  MemoryKind memory = MemoryKind::LM0;
  /// Upper bound on the number of time slices; 0 means unlimited.
  int64_t maxTimeSlices = 0;
};

/// Every problem found, each with a self-contained message; empty means
/// the layout is valid for the given dtype and memory. Checks: each
/// hierarchy axis and W stays inside its hardware count, addresses stay
/// inside the memory, time slices inside maxTimeSlices, and no two
/// positions share a storage location (see docs/layout.md).
std::vector<LayoutError> validateLayout(const Layout &layout,
                                        const ValidationOptions &options);

/// Largest coordinate any position reaches on `axis` (0 if unused).
int64_t maxCoordinate(const Layout &layout, Axis axis);

/// How the layout occupies one instance of a memory (one PE's LM0, one
/// L1B's L1BM, one group's DRAM, ...). Every (time slice, hierarchy place)
/// owns a block of `blockLongWords` long words addressed by the layout's
/// Address modes; the blocks of the places that share an instance are laid
/// out back to back, time slice major, then l2b-in-group, L1B, MAB, PE.
/// On-chip memories hold one time slice at a time (timeSlots is 1); PDM and
/// DRAM hold the whole tensor. A slot count is 1 for axes that select the
/// instance and for broadcast axes below it (one copy is shared).
struct InstanceGeometry {
  int64_t blockLongWords = 1;
  int64_t timeSlots = 1;
  int64_t l2bSlots = 1; // l2b inside a group; only for PDM and DRAM
  int64_t l1bSlots = 1;
  int64_t mabSlots = 1;
  int64_t peSlots = 1;

  int64_t blocksPerInstance() const {
    return timeSlots * l2bSlots * l1bSlots * mabSlots * peSlots;
  }
  int64_t footprintLongWords() const {
    return blocksPerInstance() * blockLongWords;
  }
  /// Index of the block of `place` inside its instance.
  int64_t blockIndex(const Place &place) const;
};

InstanceGeometry instanceGeometry(const Layout &layout, MemoryKind memory);

} // namespace layout
} // namespace mncc

#endif // MNCC_LAYOUT_LAYOUT_H
