//===- Staging.cpp - Host tensors <-> device memory images ----------------===//
//
// Every coordinate of a place is a sum over modes of digit * stride, so
// both the site (time slice + hierarchy position, numbered densely) and the
// byte offset inside the site's block are linear in the digits. Staging
// compiles the layout into a loop nest over long words and copies tiles of
// it with loops specialized per shape of a long word ("Tiled staging"
// below). Layouts whose W modes sit in a padded dimension, and images not
// laid out as pack() lays them out, use a row walk with per-index tables.
//
//===----------------------------------------------------------------------===//

#include "mncc/layout/Staging.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <tuple>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mncc {
namespace layout {

bool SiteKey::operator<(const SiteKey &o) const {
  return std::tie(time, l2b, l1b, mab, pe) <
         std::tie(o.time, o.l2b, o.l1b, o.mab, o.pe);
}

std::string SiteKey::str() const {
  return "time " + std::to_string(time) + " l2b " + std::to_string(l2b) +
         " l1b " + std::to_string(l1b) + " mab " + std::to_string(mab) +
         " pe " + std::to_string(pe);
}

std::vector<std::pair<SiteKey, size_t>>::const_iterator
MemoryImage::lowerBound(const SiteKey &site) const {
  return std::lower_bound(blockOffsets.begin(), blockOffsets.end(), site,
                          [](const std::pair<SiteKey, size_t> &entry,
                             const SiteKey &key) { return entry.first < key; });
}

uint8_t *MemoryImage::getOrCreateBlock(const SiteKey &site) {
  auto it = lowerBound(site);
  if (it != blockOffsets.end() && it->first == site)
    return arena.data() + it->second;
  size_t offset = arena.size();
  arena.resize(offset + blockBytes(), 0);
  blockOffsets.insert(blockOffsets.begin() + (it - blockOffsets.begin()),
                      std::make_pair(site, offset));
  return arena.data() + offset;
}

const uint8_t *MemoryImage::findBlock(const SiteKey &site) const {
  auto it = lowerBound(site);
  return it == blockOffsets.end() || !(it->first == site)
             ? nullptr
             : arena.data() + it->second;
}

uint8_t *MemoryImage::findBlock(const SiteKey &site) {
  auto it = lowerBound(site);
  return it == blockOffsets.end() || !(it->first == site)
             ? nullptr
             : arena.data() + it->second;
}

std::vector<SiteKey> MemoryImage::sites() const {
  std::vector<SiteKey> result;
  for (const auto &entry : blockOffsets)
    result.push_back(entry.first);
  return result;
}

uint64_t MemoryImage::readLongWord(const SiteKey &site,
                                   int64_t addressLw) const {
  const uint8_t *block = findBlock(site);
  if (!block || addressLw < 0 || addressLw >= blockLw)
    return 0;
  uint64_t value;
  std::memcpy(&value, block + addressLw * kLongWordBytes, sizeof(value));
  return value;
}

std::map<SiteKey, std::vector<uint8_t>>
MemoryImage::instanceImages(const Layout &layout) const {
  InstanceGeometry geometry = instanceGeometry(layout, memoryKind);
  Axis instanceAxis = memoryInstanceAxis(memoryKind);
  bool groupLevel =
      memoryKind == MemoryKind::DRAM || memoryKind == MemoryKind::PDM;
  std::map<SiteKey, std::vector<uint8_t>> images;
  for (const auto &entry : blockOffsets) {
    const SiteKey &site = entry.first;
    SiteKey key = site;
    if (groupLevel) {
      key = SiteKey{0, site.l2b / 2 * 2, 0, 0, 0};
    } else {
      if (instanceAxis == Axis::L2B)
        key.l1b = 0;
      if (instanceAxis == Axis::L2B || instanceAxis == Axis::L1B)
        key.mab = 0;
      if (instanceAxis != Axis::PE)
        key.pe = 0;
    }
    std::vector<uint8_t> &image = images[key];
    if (image.empty())
      image.assign(geometry.footprintLongWords() * kLongWordBytes, 0);
    Place place;
    place.setCoordinate(Axis::Time, site.time);
    place.setCoordinate(Axis::L2B, site.l2b);
    place.l1b = site.l1b;
    place.mab = site.mab;
    place.pe = site.pe;
    size_t offset = geometry.blockIndex(place) * blockBytes();
    size_t count = std::min(blockBytes(), image.size() - offset);
    std::memcpy(image.data() + offset, arena.data() + entry.second, count);
  }
  return images;
}

unsigned stagingThreadCount(int64_t requested) {
  int64_t hardware = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::clamp<int64_t>(requested, 1, hardware));
}

namespace {

constexpr int64_t kMaxStagedTimeSlices = 65536;

// Hierarchy level of a broadcastable axis, outermost first.
int level(Axis axis) {
  return axis == Axis::L2B   ? 0
         : axis == Axis::L1B ? 1
         : axis == Axis::MAB ? 2
                             : 3;
}

// The site axes, outermost first, in the order dense site ids nest.
constexpr Axis kSiteAxes[] = {Axis::Time, Axis::L2B, Axis::L1B, Axis::MAB,
                              Axis::PE};

struct Contribution {
  int64_t site;   // dense site id
  int64_t offset; // bytes inside the block
  int64_t bytes;  // site * blockBytes + offset: position in a dense arena
};

// Everything the row walkers need, computed once per pack/unpack.
//
// Sites are numbered densely in the mixed radix of the per-axis extents
// the layout reaches (time major, PE minor). That numbering is linear in
// the coordinates, so one precomputed sum per index value gives the byte
// position of an element in an arena holding the blocks in site order.
struct StagingTables {
  std::vector<int64_t> extents; // logical shape; a scalar becomes {1}
  std::vector<std::vector<Contribution>> perDim;
  std::vector<int64_t> replicaSites; // site deltas, primary (0) first
  int64_t siteExtent[kNumAxes] = {};
  int64_t siteWeight[kNumAxes] = {};
  int64_t numSites = 1;
  int64_t blockBytes = 0;
  std::vector<char> reached; // per dense site: some element lands there

  SiteKey siteOf(int64_t site) const {
    int64_t coords[kNumAxes] = {};
    for (size_t a = std::size(kSiteAxes); a-- > 0;) {
      unsigned axis = static_cast<unsigned>(kSiteAxes[a]);
      coords[axis] = site % siteExtent[axis];
      site /= siteExtent[axis];
    }
    return SiteKey{coords[static_cast<unsigned>(Axis::Time)],
                   coords[static_cast<unsigned>(Axis::L2B)],
                   coords[static_cast<unsigned>(Axis::L1B)],
                   coords[static_cast<unsigned>(Axis::MAB)],
                   coords[static_cast<unsigned>(Axis::PE)]};
  }

  // Calls visit(site, key) for every reached site in ascending order,
  // counting the key up instead of dividing per site.
  template <typename Visit> void forEachReachedSite(Visit visit) const {
    SiteKey key;
    int64_t *digits[] = {&key.time, &key.l2b, &key.l1b, &key.mab, &key.pe};
    for (int64_t site = 0; site < numSites; ++site) {
      if (reached[site])
        visit(site, key);
      for (size_t a = std::size(kSiteAxes); a-- > 0;) {
        if (++*digits[a] < siteExtent[static_cast<unsigned>(kSiteAxes[a])])
          break;
        *digits[a] = 0;
      }
    }
  }
};

StagingTables buildTables(const Layout &layout, DType dtype,
                          MemoryKind memory) {
  StagingTables tables;
  tables.blockBytes =
      (maxCoordinate(layout, Axis::Address) + 1) * kLongWordBytes;

  // Replicas materialize on broadcast axes at or above the instance axis;
  // for group-level memories one copy per group (L2B 0, 2, 4, 6).
  Axis instanceAxis = memoryInstanceAxis(memory);
  bool groupLevel = memory == MemoryKind::DRAM || memory == MemoryKind::PDM;
  std::vector<std::pair<Axis, int64_t>> replicaAxes; // axis, step
  for (Axis axis : layout.broadcast)
    if (level(axis) <= level(instanceAxis))
      replicaAxes.emplace_back(axis, groupLevel && axis == Axis::L2B ? 2 : 1);

  for (Axis axis : kSiteAxes) {
    unsigned a = static_cast<unsigned>(axis);
    tables.siteExtent[a] = maxCoordinate(layout, axis) + 1;
    for (const auto &replica : replicaAxes)
      if (replica.first == axis)
        tables.siteExtent[a] =
            (hardwareCount(axis) - 1) / replica.second * replica.second + 1;
  }
  for (size_t a = std::size(kSiteAxes); a-- > 0;) {
    unsigned axis = static_cast<unsigned>(kSiteAxes[a]);
    tables.siteWeight[axis] = tables.numSites;
    tables.numSites *= tables.siteExtent[axis];
  }

  int64_t elementBytes = dtypeBytes(dtype);
  for (size_t d = 0; d < layout.rank(); ++d) {
    const std::vector<Mode> &modes = layout.dims[d];
    std::vector<Contribution> table(layout.extent(d));
    for (int64_t i = 0; i < layout.extent(d); ++i) {
      int64_t rest = i;
      Contribution c{0, 0, 0};
      for (size_t m = modes.size(); m-- > 0;) {
        int64_t digit = rest % modes[m].size;
        rest /= modes[m].size;
        int64_t value = digit * modes[m].stride;
        c.site +=
            value * tables.siteWeight[static_cast<unsigned>(modes[m].axis)];
        if (modes[m].axis == Axis::Address)
          c.offset += value * kLongWordBytes;
        else if (modes[m].axis == Axis::W)
          c.offset += value * elementBytes;
      }
      c.bytes = c.site * tables.blockBytes + c.offset;
      table[i] = c;
    }
    tables.perDim.push_back(std::move(table));
    tables.extents.push_back(layout.extent(d));
  }
  if (tables.extents.empty()) {
    tables.extents.push_back(1);
    tables.perDim.push_back({Contribution{0, 0, 0}});
  }

  tables.replicaSites = {0};
  for (const auto &replica : replicaAxes) {
    unsigned a = static_cast<unsigned>(replica.first);
    std::vector<int64_t> expanded;
    for (int64_t base : tables.replicaSites)
      for (int64_t i = 0; i < tables.siteExtent[a]; i += replica.second)
        expanded.push_back(base + i * tables.siteWeight[a]);
    tables.replicaSites = std::move(expanded);
  }

  // Sites reached by logical elements: sums of one distinct site value per
  // dimension, plus the replica deltas. Every partial sum is a site id, so
  // a per-site mark removes duplicates without sorting.
  tables.reached.assign(tables.numSites, 0);
  std::vector<char> seen(tables.numSites, 0);
  std::vector<int64_t> sums{0};
  for (const std::vector<Contribution> &table : tables.perDim) {
    std::vector<int64_t> values;
    for (const Contribution &c : table)
      if (!seen[c.site]) {
        seen[c.site] = 1;
        values.push_back(c.site);
      }
    for (int64_t value : values)
      seen[value] = 0;
    std::vector<int64_t> next;
    for (int64_t sum : sums)
      for (int64_t value : values)
        if (!seen[sum + value]) {
          seen[sum + value] = 1;
          next.push_back(sum + value);
        }
    for (int64_t sum : next)
      seen[sum] = 0;
    sums = std::move(next);
  }
  for (int64_t sum : sums)
    for (int64_t replica : tables.replicaSites)
      tables.reached[sum + replica] = 1;
  return tables;
}

// Runs `work(firstRow, endRow)` on `numThreads` threads over `numRows`.
template <typename Work>
void parallelRows(int64_t numRows, unsigned numThreads, Work work) {
  unsigned threads = static_cast<unsigned>(
      std::max<int64_t>(1, std::min<int64_t>(numThreads, numRows)));
  if (threads == 1) {
    work(0, numRows);
    return;
  }
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    int64_t first = numRows * t / threads;
    int64_t end = numRows * (t + 1) / threads;
    workers.emplace_back([=]() { work(first, end); });
  }
  for (std::thread &worker : workers)
    worker.join();
}

// Calls visit(row, base) for rows [first, end), where `base` sums the
// contributions of all but the last dimension.
template <typename Visit>
void forEachRow(const StagingTables &tables, int64_t first, int64_t end,
                Visit visit) {
  size_t leading = tables.extents.size() - 1;
  std::vector<int64_t> index(leading, 0);
  int64_t rest = first;
  for (size_t d = leading; d-- > 0;) {
    index[d] = rest % tables.extents[d];
    rest /= tables.extents[d];
  }
  for (int64_t row = first; row < end; ++row) {
    Contribution base{0, 0, 0};
    for (size_t d = 0; d < leading; ++d) {
      const Contribution &c = tables.perDim[d][index[d]];
      base.site += c.site;
      base.offset += c.offset;
      base.bytes += c.bytes;
    }
    visit(row, base);
    for (size_t d = leading; d-- > 0;) {
      if (++index[d] < tables.extents[d])
        break;
      index[d] = 0;
    }
  }
}

// Writes rows into an arena holding every dense site's block in order.
template <size_t ElementBytes>
void packRows(const StagingTables &tables, const uint8_t *host, uint8_t *arena,
              int64_t first, int64_t end) {
  // Plain locals: byte stores may alias anything behind a pointer, which
  // would make the compiler reload the table pointer for every element.
  const Contribution *inner = tables.perDim.back().data();
  const int64_t innerExtent = tables.extents.back();
  const int64_t blockBytes = tables.blockBytes;
  forEachRow(tables, first, end, [&](int64_t row, Contribution base) {
    const uint8_t *source = host + row * innerExtent * ElementBytes;
    for (int64_t replica : tables.replicaSites) {
      uint8_t *destination = arena + base.bytes + replica * blockBytes;
      for (int64_t j = 0; j < innerExtent; ++j)
        std::memcpy(destination + inner[j].bytes, source + j * ElementBytes,
                    ElementBytes);
    }
  });
}

// Reads rows from a dense arena (the layout pack() produces); `first` is
// the block of site `firstSite`, the lowest reached.
template <size_t ElementBytes>
void unpackRowsDense(const StagingTables &tables, uint8_t *host,
                     const uint8_t *firstBlock, int64_t firstSite,
                     int64_t first, int64_t end) {
  const Contribution *inner = tables.perDim.back().data();
  const int64_t innerExtent = tables.extents.back();
  const int64_t origin = firstSite * tables.blockBytes;
  forEachRow(tables, first, end, [&](int64_t row, Contribution base) {
    uint8_t *destination = host + row * innerExtent * ElementBytes;
    const uint8_t *source = firstBlock + (base.bytes - origin);
    for (int64_t j = 0; j < innerExtent; ++j)
      std::memcpy(destination + j * ElementBytes, source + inner[j].bytes,
                  ElementBytes);
  });
}

// Reads rows from blocks found one by one (images built by hand).
template <size_t ElementBytes>
void unpackRowsScattered(const StagingTables &tables, uint8_t *host,
                         const uint8_t *const *sitePointers, int64_t first,
                         int64_t end) {
  const Contribution *inner = tables.perDim.back().data();
  const int64_t innerExtent = tables.extents.back();
  forEachRow(tables, first, end, [&](int64_t row, Contribution base) {
    uint8_t *destination = host + row * innerExtent * ElementBytes;
    for (int64_t j = 0; j < innerExtent; ++j)
      std::memcpy(destination + j * ElementBytes,
                  sitePointers[base.site + inner[j].site] + base.offset +
                      inner[j].offset,
                  ElementBytes);
  });
}

//===----------------------------------------------------------------------===//
// Tiled staging
//===----------------------------------------------------------------------===//
//
// With no padding in the dimensions that carry W, a layout is a loop nest:
// one loop per mode of size > 1, with a host stride (row-major position of
// a digit step) and an arena stride (digit step times the axis' byte
// weight). The W loops select the slot inside a long word; every other
// loop selects a long word. Staging then moves whole long words:
//
//  * the lanes: the element offsets of one long word's W positions on the
//    host, assembled into (or split out of) one 64-bit value;
//  * the tile: inner parts of the non-W loops that extend the contiguous
//    runs on the host to kHostRunBytes and in the arena to kArenaRunBytes,
//    enumerated into a table of (host offset, arena offset) pairs, so that
//    a tile uses whole cache lines on both sides;
//  * the outer loops: everything else, innermost with the smallest arena
//    stride so consecutive tiles fill neighbouring long words of the same
//    blocks.
//
// A padded dimension is one loop over its logical extent whose arena
// offsets come from a per-index table; it joins the tile whole (when it
// continues the host run) or stays an outer loop.
//
// The copy loop of a tile is specialized (TileKernel): whole long words
// when a long word's elements are host-contiguous, one zero-extended
// element when a long word holds one, an SSE2 transpose of 4 x 4 16-bit or
// 2 x 4 32-bit values when the tile has groups of four host-contiguous
// positions, lane by lane otherwise. A transposing copy prefetches the
// cache lines of the next tile: its lines are spread over dozens of
// blocks, too many streams for the hardware prefetchers. Workers split the
// flattened outer iteration space; each outer iteration writes its own
// long words (pack) or host elements (unpack).

// Contiguous bytes a tile aims for on each side. Measured on the staging
// bench: one or two cache lines per run beat longer runs, whose tiles touch
// more lines than the first-level cache keeps.
constexpr int64_t kHostRunBytes = 128;
constexpr int64_t kArenaRunBytes = 64;
// Fewest long words per tile worth the outer loop's bookkeeping.
constexpr int64_t kMinTileLongWords = 256;
// Long words transposed together by the 16-bit kernels.
constexpr int64_t kGroup = 4;
// Largest part of one loop a tile takes.
constexpr int64_t kMaxTilePart = 4096;
// Largest tile span (in cache lines) for which the lines to prefetch are
// listed.
constexpr int64_t kMaxPrefetchSpanLines = int64_t(1) << 20;

struct OuterLoop {
  int64_t size = 1;
  int64_t hostStride = 0;  // bytes
  int64_t arenaStride = 0; // bytes, unless `table` is set
  const std::vector<Contribution> *table = nullptr; // padded dimension
  int64_t orderKey = 0; // arena step of one index; outer loops sort on it

  int64_t arenaOffset(int64_t index) const {
    return table ? (*table)[index].bytes : index * arenaStride;
  }
};

struct TilePlan {
  std::vector<OuterLoop> outer;      // outermost first
  int64_t numOuter = 1;              // product of outer sizes
  std::vector<int64_t> tileHost;     // bytes from the tile's host base
  std::vector<int64_t> tileArena;    // bytes from the tile's arena base
  std::vector<int64_t> laneHost;     // bytes from a long word's first element
  std::vector<unsigned> laneShift;   // bit position of each lane's element
  std::vector<int64_t> replicaBytes; // arena offsets of the copies
  bool coversArena = false;          // the stores write every byte of the arena
  // The tile's positions come in groups of kGroup host-contiguous elements.
  bool grouped = false;
  int64_t groupArenaStride = 0; // between the long words of a group
  // Lane w sits at byte w * elementBytes of the long word (and of a
  // little-endian uint64_t).
  bool lanesInOrder = true;
  // Cache lines a tile touches, relative to its bases, for prefetching the
  // next tile while the current one is copied.
  std::vector<int64_t> hostLines, arenaLines;
};

// The bit position of an element stored at byte `slot` of a long word kept
// as a host-order uint64_t.
unsigned slotShift(int64_t slot, int64_t elementBytes) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return static_cast<unsigned>(8 * (kLongWordBytes - elementBytes - slot));
#else
  (void)elementBytes;
  return static_cast<unsigned>(8 * slot);
#endif
}

// Enumerates the (host, arena) offsets of a set of affine loops, the last
// loop varying fastest.
struct AffineLoop {
  int64_t size;
  int64_t hostStride;  // bytes
  int64_t arenaStride; // bytes (W loops: byte offset inside the long word)
  // A padded dimension: arena offsets per index instead of a stride. Such a
  // loop is never split.
  const std::vector<Contribution> *table = nullptr;

  int64_t arenaOffset(int64_t index) const {
    return table ? (*table)[index].bytes : index * arenaStride;
  }
  // For ordering loops: the arena step of one index.
  int64_t arenaStep() const {
    return table ? (size > 1 ? std::abs((*table)[1].bytes - (*table)[0].bytes)
                             : 0)
                 : std::abs(arenaStride);
  }
};

void enumerate(const std::vector<AffineLoop> &loops, std::vector<int64_t> &host,
               std::vector<int64_t> &arena) {
  host.assign(1, 0);
  arena.assign(1, 0);
  for (const AffineLoop &loop : loops) {
    std::vector<int64_t> nextHost, nextArena;
    nextHost.reserve(host.size() * loop.size);
    nextArena.reserve(host.size() * loop.size);
    for (size_t i = 0; i < host.size(); ++i)
      for (int64_t digit = 0; digit < loop.size; ++digit) {
        nextHost.push_back(host[i] + digit * loop.hostStride);
        nextArena.push_back(arena[i] + loop.arenaOffset(digit));
      }
    host = std::move(nextHost);
    arena = std::move(nextArena);
  }
}

// Builds the loop nest, or nullopt when a dimension carrying W is padded
// (its long words are partly padding; the row walk handles it).
std::optional<TilePlan> planTiles(const Layout &layout, DType dtype,
                                  const StagingTables &tables) {
  const int64_t elementBytes = dtypeBytes(dtype);
  const size_t rank = layout.rank();
  TilePlan plan;
  std::vector<AffineLoop> lanes, candidates;
  int64_t hostStride = elementBytes; // of the current dimension's index
  bool padded = false;
  for (size_t d = rank; d-- > 0;) {
    const std::vector<Mode> &modes = layout.dims[d];
    if (layout.extent(d) != layout.span(d)) {
      padded = true;
      for (const Mode &mode : modes)
        if (mode.axis == Axis::W && mode.size > 1)
          return std::nullopt;
      if (layout.extent(d) > 1)
        candidates.push_back(
            AffineLoop{layout.extent(d), hostStride, 0, &tables.perDim[d]});
    } else {
      int64_t digitStride = hostStride;
      for (size_t m = modes.size(); m-- > 0;) {
        const Mode &mode = modes[m];
        if (mode.size > 1) {
          int64_t weight =
              mode.axis == Axis::Address ? kLongWordBytes
              : mode.axis == Axis::W
                  ? elementBytes
                  : tables.siteWeight[static_cast<unsigned>(mode.axis)] *
                        tables.blockBytes;
          AffineLoop loop{mode.size, digitStride, mode.stride * weight};
          (mode.axis == Axis::W ? lanes : candidates).push_back(loop);
        }
        digitStride *= mode.size;
      }
    }
    hostStride *= layout.extent(d);
  }

  // The tile grows two chains of loops, each continuing the contiguous run
  // of the previous ones: in host order (lanes included where they continue
  // it) and in arena order (starting with one long word). Each chain stops
  // once its run reaches its target, taking only the inner part of a loop
  // (a divisor of its size) when that is enough.
  std::vector<int64_t> tileExtent(candidates.size(), 1);
  int64_t hostTarget = kHostRunBytes;
  // `lanesInChain`: the lanes are always whole in a tile, so they extend
  // the host chain where they continue it.
  auto growChain = [&](int64_t run, bool lanesInChain, auto strideOf) {
    const int64_t target = lanesInChain ? hostTarget : kArenaRunBytes;
    struct Link {
      int64_t stride;
      int64_t size;
      int64_t candidate; // -1 for a lane
    };
    std::vector<Link> chain;
    for (size_t i = 0; i < candidates.size(); ++i)
      if (lanesInChain || !candidates[i].table)
        chain.push_back(Link{strideOf(candidates[i]), candidates[i].size,
                             static_cast<int64_t>(i)});
    if (lanesInChain)
      for (const AffineLoop &lane : lanes)
        chain.push_back(Link{lane.hostStride, lane.size, -1});
    std::stable_sort(
        chain.begin(), chain.end(),
        [](const Link &a, const Link &b) { return a.stride < b.stride; });
    for (const Link &link : chain) {
      if (run >= target || link.stride != run)
        break;
      if (link.candidate < 0) {
        run *= link.size;
        continue;
      }
      // The smallest divisor of the size that reaches the target; loops
      // without a small one end the chain (their sizes are rarely prime).
      int64_t part = (target + run - 1) / run;
      if (candidates[link.candidate].table) {
        // A padded dimension goes into the tile whole or not at all.
        if (link.size > kMaxTilePart)
          break;
        part = link.size;
      }
      while (part < link.size && link.size % part != 0 && part < kMaxTilePart)
        ++part;
      if (part >= link.size)
        part = link.size;
      else if (link.size % part != 0)
        break;
      int64_t &extent = tileExtent[link.candidate];
      extent = std::max(extent, part);
      run *= part;
    }
  };
  // Small tiles spend their time in the outer loop: lengthen the host run
  // until the tile has kMinTileLongWords long words or stops growing.
  for (int64_t previous = -1;;) {
    std::fill(tileExtent.begin(), tileExtent.end(), 1);
    growChain(elementBytes, true,
              [](const AffineLoop &loop) { return loop.hostStride; });
    growChain(kLongWordBytes, false,
              [](const AffineLoop &loop) { return loop.arenaStride; });
    int64_t tileLongWords = 1;
    for (int64_t extent : tileExtent)
      tileLongWords *= extent;
    if (tileLongWords >= kMinTileLongWords || tileLongWords == previous)
      break;
    previous = tileLongWords;
    hostTarget *= 2;
  }

  // Tile loops are enumerated in arena order (largest arena stride first),
  // so a tile writes (pack) or reads (unpack) its arena runs in sequence.
  std::vector<AffineLoop> tile, rest;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const AffineLoop &loop = candidates[i];
    int64_t part = tileExtent[i];
    if (loop.table) {
      (part > 1 ? tile : rest).push_back(loop);
      continue;
    }
    if (part > 1)
      tile.push_back(AffineLoop{part, loop.hostStride, loop.arenaStride});
    if (part < loop.size)
      rest.push_back(AffineLoop{loop.size / part, loop.hostStride * part,
                                loop.arenaStride * part});
  }
  std::stable_sort(tile.begin(), tile.end(),
                   [](const AffineLoop &a, const AffineLoop &b) {
                     return a.arenaStep() > b.arenaStep();
                   });
  // Except that a host-contiguous loop of a multiple of kGroup positions
  // goes innermost: kGroup neighbouring long words then read (or write)
  // kGroup neighbouring elements per lane, a small transpose.
  auto contiguous =
      std::find_if(tile.begin(), tile.end(), [&](const AffineLoop &loop) {
        return loop.hostStride == elementBytes && loop.size % kGroup == 0 &&
               !loop.table;
      });
  if (contiguous != tile.end()) {
    plan.groupArenaStride = contiguous->arenaStride;
    std::rotate(contiguous, contiguous + 1, tile.end());
    plan.grouped = true;
  }
  enumerate(tile, plan.tileHost, plan.tileArena);
  std::vector<int64_t> laneSlots;
  enumerate(lanes, plan.laneHost, laneSlots);
  for (int64_t slot : laneSlots)
    plan.laneShift.push_back(slotShift(slot, elementBytes));
  for (size_t w = 0; w < laneSlots.size(); ++w)
    plan.lanesInOrder = plan.lanesInOrder &&
                        plan.laneShift[w] == 8 * w * elementBytes &&
                        laneSlots[w] == static_cast<int64_t>(w) * elementBytes;
  // The distinct lines of each side, ascending, found with a mark per line
  // of the tile's span (offsets are non-negative: strides are).
  auto collectLines = [](const std::vector<int64_t> &offsets,
                         const std::vector<int64_t> &extra,
                         std::vector<int64_t> &lines) {
    int64_t last = 0;
    for (int64_t offset : offsets)
      for (int64_t more : extra)
        last = std::max(last, offset + more);
    if (last / 64 > kMaxPrefetchSpanLines)
      return; // too sparse to list; the tile goes without prefetching
    std::vector<char> marked(last / 64 + 1, 0);
    for (int64_t offset : offsets)
      for (int64_t more : extra)
        marked[(offset + more) / 64] = 1;
    for (size_t line = 0; line < marked.size(); ++line)
      if (marked[line])
        lines.push_back(static_cast<int64_t>(line) * 64);
  };
  collectLines(plan.tileHost, plan.laneHost, plan.hostLines);
  collectLines(plan.tileArena, {0}, plan.arenaLines);

  for (const AffineLoop &affine : rest) {
    OuterLoop loop;
    loop.size = affine.size;
    loop.hostStride = affine.hostStride;
    loop.arenaStride = affine.arenaStride;
    loop.table = affine.table;
    loop.orderKey = affine.arenaStep();
    plan.outer.push_back(loop);
  }
  std::stable_sort(plan.outer.begin(), plan.outer.end(),
                   [](const OuterLoop &a, const OuterLoop &b) {
                     return a.orderKey > b.orderKey;
                   });
  for (const OuterLoop &loop : plan.outer)
    plan.numOuter *= loop.size;

  for (int64_t site : tables.replicaSites)
    plan.replicaBytes.push_back(site * tables.blockBytes);
  // Stores go to distinct long words (the layout is collision-free and
  // replicas sit on distinct sites) and write whole long words, so with no
  // padding, as many stores as the arena has long words cover all of it.
  int64_t stores = plan.numOuter * static_cast<int64_t>(plan.tileHost.size()) *
                   static_cast<int64_t>(plan.replicaBytes.size());
  plan.coversArena =
      !padded && stores * kLongWordBytes == tables.numSites * tables.blockBytes;
  return plan;
}

// Calls visit(hostBase, arenaBase) for the outer iterations [first, end).
template <typename Visit>
void forEachTile(const TilePlan &plan, int64_t first, int64_t end,
                 Visit visit) {
  const size_t depth = plan.outer.size();
  std::vector<int64_t> index(depth, 0);
  int64_t hostBase = 0, arenaBase = 0;
  int64_t rest = first;
  for (size_t k = depth; k-- > 0;) {
    const OuterLoop &loop = plan.outer[k];
    index[k] = rest % loop.size;
    rest /= loop.size;
    hostBase += index[k] * loop.hostStride;
    arenaBase += loop.arenaOffset(index[k]);
  }
  for (int64_t iteration = first; iteration < end; ++iteration) {
    visit(hostBase, arenaBase);
    for (size_t k = depth; k-- > 0;) {
      const OuterLoop &loop = plan.outer[k];
      if (++index[k] < loop.size) {
        hostBase += loop.hostStride;
        arenaBase +=
            loop.arenaOffset(index[k]) - loop.arenaOffset(index[k] - 1);
        break;
      }
      hostBase -= (loop.size - 1) * loop.hostStride;
      arenaBase -= loop.arenaOffset(loop.size - 1) - loop.arenaOffset(0);
      index[k] = 0;
    }
  }
}

template <size_t ElementBytes> struct ElementWord;
template <> struct ElementWord<1> { using type = uint8_t; };
template <> struct ElementWord<2> { using type = uint16_t; };
template <> struct ElementWord<4> { using type = uint32_t; };
template <> struct ElementWord<8> { using type = uint64_t; };

template <size_t ElementBytes> uint64_t loadElement(const uint8_t *at) {
  typename ElementWord<ElementBytes>::type value;
  std::memcpy(&value, at, ElementBytes);
  return value;
}

template <size_t ElementBytes> void storeElement(uint8_t *at, uint64_t word) {
  auto value = static_cast<typename ElementWord<ElementBytes>::type>(word);
  std::memcpy(at, &value, ElementBytes);
}

// The copy loops specialized for common shapes of a long word.
enum class TileKernel {
  // Anything: element by element, lanes assembled with shifts.
  Generic,
  // One element per long word, at slot 0 (no W): the element zero-extended.
  Single,
  // A long word's elements are host-contiguous and in slot order, so a long
  // word is an 8-byte copy (always the case for 64-bit types).
  Words,
  // Four 16-bit (two 32-bit) lanes in slot order, and groups of kGroup
  // host-contiguous positions: four (two) loads, a transpose in registers,
  // kGroup 8-byte stores.
  Transpose16,
  // Transpose16 on two groups whose long words are arena neighbours (the
  // next loop out has an arena stride of one long word, as consecutive
  // addresses of a PE do): each PE gets one 16-byte store (load, unpack)
  // instead of two 8-byte ones, and the loop half the steps.
  Transpose16Pairs,
  Transpose32,
};

// Whether the groups of a grouped tile come in pairs whose long words sit
// one long word apart in the arena.
bool groupsPairUp(const TilePlan &plan) {
  const int64_t numGroups =
      static_cast<int64_t>(plan.tileArena.size()) / kGroup;
  if (numGroups % 2 != 0)
    return false;
  for (int64_t g = 0; g < numGroups; g += 2)
    if (plan.tileArena[(g + 1) * kGroup] !=
        plan.tileArena[g * kGroup] + kLongWordBytes)
      return false;
  return true;
}

TileKernel chooseKernel(const TilePlan &plan, unsigned elementBytes) {
  size_t numLanes = plan.laneHost.size();
  if (numLanes == 1 && plan.laneHost[0] == 0 && plan.laneShift[0] == 0 &&
      elementBytes < kLongWordBytes)
    return TileKernel::Single;
  if (!plan.lanesInOrder || numLanes * elementBytes != kLongWordBytes)
    return TileKernel::Generic;
  bool contiguousLanes = true;
  for (size_t w = 0; w < numLanes; ++w)
    contiguousLanes =
        contiguousLanes &&
        plan.laneHost[w] == static_cast<int64_t>(w * elementBytes);
  if (contiguousLanes)
    return TileKernel::Words;
#if defined(__SSE2__)
  if (plan.grouped && elementBytes == 2)
    return groupsPairUp(plan) ? TileKernel::Transpose16Pairs
                              : TileKernel::Transpose16;
  if (plan.grouped && elementBytes == 4)
    return TileKernel::Transpose32;
#endif
  return TileKernel::Generic;
}

#if defined(__SSE2__)
inline __m128i load64(const uint8_t *at) {
  return _mm_loadl_epi64(reinterpret_cast<const __m128i *>(at));
}
inline __m128i load128(const uint8_t *at) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i *>(at));
}
inline void storeLow64(uint8_t *at, __m128i value) {
  _mm_storel_epi64(reinterpret_cast<__m128i *>(at), value);
}
inline void storeHigh64(uint8_t *at, __m128i value) {
  _mm_storeh_pd(reinterpret_cast<double *>(at), _mm_castsi128_pd(value));
}
inline void store128(uint8_t *at, __m128i value) {
  _mm_storeu_si128(reinterpret_cast<__m128i *>(at), value);
}

// Four rows of four 16-bit values (in the low halves) to four columns: the
// long words 0 and 1 in `columns01`, 2 and 3 in `columns23`. The transpose
// is its own inverse, so it serves both directions.
inline void transpose16(__m128i row0, __m128i row1, __m128i row2, __m128i row3,
                        __m128i &columns01, __m128i &columns23) {
  __m128i low = _mm_unpacklo_epi16(row0, row1);
  __m128i high = _mm_unpacklo_epi16(row2, row3);
  columns01 = _mm_unpacklo_epi32(low, high);
  columns23 = _mm_unpackhi_epi32(low, high);
}

// Two rows of four 32-bit values to four long words of two lanes.
inline void transpose32(__m128i row0, __m128i row1, __m128i &columns01,
                        __m128i &columns23) {
  columns01 = _mm_unpacklo_epi32(row0, row1);
  columns23 = _mm_unpackhi_epi32(row0, row1);
}

// Four long words of two 32-bit lanes back to two rows of four values.
inline void untranspose32(__m128i words01, __m128i words23, __m128i &row0,
                          __m128i &row1) {
  __m128i mixed0 = _mm_shuffle_epi32(words01, _MM_SHUFFLE(3, 1, 2, 0));
  __m128i mixed1 = _mm_shuffle_epi32(words23, _MM_SHUFFLE(3, 1, 2, 0));
  row0 = _mm_unpacklo_epi64(mixed0, mixed1);
  row1 = _mm_unpackhi_epi64(mixed0, mixed1);
}
#endif

// One step of a copy loop: a run of long words contiguous on both sides
// (Words) or a group of kGroup long words (transposes) at these offsets
// from the tile's bases, and a line of the next tile to prefetch on each
// side (each line once, then repeats of the last one, which cost an L1
// hit).
struct CopyStep {
  int64_t host;
  int64_t arena;
  int64_t prefetchHost;
  int64_t prefetchArena;
  int64_t bytes;    // Words: the run of contiguous long words at this step
  int64_t pairHost; // Transpose16Pairs: the second group's host offset
};

std::vector<CopyStep> copySteps(const TilePlan &plan, TileKernel kernel) {
  const int64_t step =
      kernel == TileKernel::Transpose16Pairs ? 2 * kGroup
      : kernel == TileKernel::Transpose16 || kernel == TileKernel::Transpose32
          ? kGroup
          : 1;
  const int64_t count = static_cast<int64_t>(plan.tileHost.size()) / step;
  std::vector<CopyStep> steps;
  steps.reserve(count);
  for (int64_t i = 0; i < count; ++i) {
    int64_t host = plan.tileHost[i * step], arena = plan.tileArena[i * step];
    // Long words contiguous on both sides make one copy.
    if (kernel == TileKernel::Words && !steps.empty() &&
        steps.back().host + steps.back().bytes == host &&
        steps.back().arena + steps.back().bytes == arena) {
      steps.back().bytes += kLongWordBytes;
      continue;
    }
    int64_t pairHost = kernel == TileKernel::Transpose16Pairs
                           ? plan.tileHost[i * step + kGroup]
                           : 0;
    steps.push_back(CopyStep{host, arena, 0, 0, kLongWordBytes, pairHost});
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!plan.hostLines.empty())
      steps[i].prefetchHost =
          plan.hostLines[std::min(i, plan.hostLines.size() - 1)];
    if (!plan.arenaLines.empty())
      steps[i].prefetchArena =
          plan.arenaLines[std::min(i, plan.arenaLines.size() - 1)];
  }
  return steps;
}

// What the copy loops read per tile, copied out of the plan so that the
// compiler keeps it in registers: the byte stores may alias anything
// reached through a pointer.
struct TileView {
  const CopyStep *steps;
  int64_t numSteps;
  int64_t lane1, lane2, lane3; // host offsets of lanes 1..3 (if any)
  int64_t stride;              // arena step inside a group
  int64_t numLanes;            // Generic: lanes per long word
  int64_t laneHost[8];
  unsigned laneShift[8];

  TileView(const TilePlan &plan, const std::vector<CopyStep> &copySteps)
      : steps(copySteps.data()),
        numSteps(static_cast<int64_t>(copySteps.size())),
        lane1(plan.laneHost.size() > 1 ? plan.laneHost[1] : 0),
        lane2(plan.laneHost.size() > 2 ? plan.laneHost[2] : 0),
        lane3(plan.laneHost.size() > 3 ? plan.laneHost[3] : 0),
        stride(plan.groupArenaStride),
        numLanes(static_cast<int64_t>(plan.laneHost.size())), laneHost(),
        laneShift() {
    // At most 8 lanes: W stays inside a long word and the layout is
    // collision-free.
    for (int64_t w = 0; w < numLanes && w < 8; ++w) {
      laneHost[w] = plan.laneHost[w];
      laneShift[w] = plan.laneShift[w];
    }
  }
};

// Copies one tile from `host` to `arena` (Pack) or back, both pointing at
// the tile's bases, and spreads the prefetches of the next tile's lines
// (at `nextHost` and `nextArena`) over the copy.
template <TileKernel Kernel, size_t ElementBytes, bool Pack>
void copyTile(const TileView tile, const uint8_t *host, const uint8_t *arena,
              const uint8_t *nextHost, const uint8_t *nextArena) {
  const CopyStep *const steps = tile.steps;
  const int64_t numSteps = tile.numSteps;
  const int64_t lane1 = tile.lane1, lane2 = tile.lane2, lane3 = tile.lane3;
  const int64_t stride1 = tile.stride, stride2 = 2 * stride1,
                stride3 = 3 * stride1;
  // The side written is only written through these.
  uint8_t *const hostOut = const_cast<uint8_t *>(host);
  uint8_t *const arenaOut = const_cast<uint8_t *>(arena);
  for (int64_t i = 0; i < numSteps; ++i) {
    const CopyStep step = steps[i];
    // The transposes interleave many short runs, more than the hardware
    // prefetchers follow; the other loops walk runs they do follow.
    constexpr bool prefetch = Kernel == TileKernel::Transpose16 ||
                              Kernel == TileKernel::Transpose16Pairs ||
                              Kernel == TileKernel::Transpose32;
    if (prefetch) {
      __builtin_prefetch(nextHost + step.prefetchHost, Pack ? 0 : 1, 3);
      __builtin_prefetch(nextArena + step.prefetchArena, Pack ? 1 : 0, 3);
    }
    if constexpr (Kernel == TileKernel::Single) {
      if (Pack) {
        uint64_t word = loadElement<ElementBytes>(host + step.host);
        std::memcpy(arenaOut + step.arena, &word, sizeof(word));
      } else {
        uint64_t word;
        std::memcpy(&word, arena + step.arena, sizeof(word));
        storeElement<ElementBytes>(hostOut + step.host, word);
      }
    }
    if constexpr (Kernel == TileKernel::Generic) {
      if (Pack) {
        const uint8_t *element = host + step.host;
        uint64_t word = 0;
        for (int64_t w = 0; w < tile.numLanes; ++w)
          word |= loadElement<ElementBytes>(element + tile.laneHost[w])
                  << tile.laneShift[w];
        std::memcpy(arenaOut + step.arena, &word, sizeof(word));
      } else {
        uint64_t word;
        std::memcpy(&word, arena + step.arena, sizeof(word));
        uint8_t *element = hostOut + step.host;
        for (int64_t w = 0; w < tile.numLanes; ++w)
          storeElement<ElementBytes>(element + tile.laneHost[w],
                                     word >> tile.laneShift[w]);
      }
    }
    if constexpr (Kernel == TileKernel::Words) {
      uint8_t *out = Pack ? arenaOut + step.arena : hostOut + step.host;
      const uint8_t *in = Pack ? host + step.host : arena + step.arena;
      if (step.bytes == kLongWordBytes)
        std::memcpy(out, in, kLongWordBytes);
      else
        std::memcpy(out, in, step.bytes);
    }
#if defined(__SSE2__)
    if constexpr (Kernel == TileKernel::Transpose16) {
      __m128i low, high;
      if (Pack) {
        const uint8_t *elements = host + step.host;
        transpose16(load64(elements), load64(elements + lane1),
                    load64(elements + lane2), load64(elements + lane3), low,
                    high);
        uint8_t *out = arenaOut + step.arena;
        storeLow64(out, low);
        storeHigh64(out + stride1, low);
        storeLow64(out + stride2, high);
        storeHigh64(out + stride3, high);
      } else {
        const uint8_t *words = arena + step.arena;
        transpose16(load64(words), load64(words + stride1),
                    load64(words + stride2), load64(words + stride3), low,
                    high);
        uint8_t *out = hostOut + step.host;
        storeLow64(out, low);
        storeHigh64(out + lane1, low);
        storeLow64(out + lane2, high);
        storeHigh64(out + lane3, high);
      }
    }
    if constexpr (Kernel == TileKernel::Transpose16Pairs) {
      // Where the second group continues the first on the host (the pair
      // loop is host-contiguous too), each lane is one 16-byte access.
      const bool hostPair = step.pairHost == step.host + kLongWordBytes;
      const uint8_t *in = Pack ? host + step.host : arena + step.arena;
      const int64_t inStride1 = Pack ? lane1 : stride1,
                    inStride2 = Pack ? lane2 : stride2,
                    inStride3 = Pack ? lane3 : stride3;
      __m128i rows[4];
      if (Pack && !hostPair) {
        const uint8_t *second = host + step.pairHost;
        rows[0] = _mm_unpacklo_epi64(load64(in), load64(second));
        rows[1] =
            _mm_unpacklo_epi64(load64(in + lane1), load64(second + lane1));
        rows[2] =
            _mm_unpacklo_epi64(load64(in + lane2), load64(second + lane2));
        rows[3] =
            _mm_unpacklo_epi64(load64(in + lane3), load64(second + lane3));
      } else {
        rows[0] = load128(in);
        rows[1] = load128(in + inStride1);
        rows[2] = load128(in + inStride2);
        rows[3] = load128(in + inStride3);
      }
      __m128i columns01, columns23, pairColumns01, pairColumns23;
      transpose16(rows[0], rows[1], rows[2], rows[3], columns01, columns23);
      transpose16(_mm_unpackhi_epi64(rows[0], rows[0]),
                  _mm_unpackhi_epi64(rows[1], rows[1]),
                  _mm_unpackhi_epi64(rows[2], rows[2]),
                  _mm_unpackhi_epi64(rows[3], rows[3]), pairColumns01,
                  pairColumns23);
      uint8_t *out = Pack ? arenaOut + step.arena : hostOut + step.host;
      const int64_t outStride1 = Pack ? stride1 : lane1,
                    outStride2 = Pack ? stride2 : lane2,
                    outStride3 = Pack ? stride3 : lane3;
      if (Pack || hostPair) {
        store128(out, _mm_unpacklo_epi64(columns01, pairColumns01));
        store128(out + outStride1,
                 _mm_unpackhi_epi64(columns01, pairColumns01));
        store128(out + outStride2,
                 _mm_unpacklo_epi64(columns23, pairColumns23));
        store128(out + outStride3,
                 _mm_unpackhi_epi64(columns23, pairColumns23));
      } else {
        uint8_t *pairOut = hostOut + step.pairHost;
        storeLow64(out, columns01);
        storeHigh64(out + lane1, columns01);
        storeLow64(out + lane2, columns23);
        storeHigh64(out + lane3, columns23);
        storeLow64(pairOut, pairColumns01);
        storeHigh64(pairOut + lane1, pairColumns01);
        storeLow64(pairOut + lane2, pairColumns23);
        storeHigh64(pairOut + lane3, pairColumns23);
      }
    }
    if constexpr (Kernel == TileKernel::Transpose32) {
      if (Pack) {
        const uint8_t *elements = host + step.host;
        __m128i low, high;
        transpose32(load128(elements), load128(elements + lane1), low, high);
        uint8_t *out = arenaOut + step.arena;
        storeLow64(out, low);
        storeHigh64(out + stride1, low);
        storeLow64(out + stride2, high);
        storeHigh64(out + stride3, high);
      } else {
        const uint8_t *words = arena + step.arena;
        __m128i words01 =
            _mm_unpacklo_epi64(load64(words), load64(words + stride1));
        __m128i words23 = _mm_unpacklo_epi64(load64(words + stride2),
                                             load64(words + stride3));
        __m128i row0, row1;
        untranspose32(words01, words23, row0, row1);
        uint8_t *out = hostOut + step.host;
        store128(out, row0);
        store128(out + lane1, row1);
      }
    }
#else
    (void)lane1, (void)lane2, (void)lane3, (void)stride2, (void)stride3;
#endif
  }
}

// Runs copy(base, nextBase) over the tiles of outer iterations [first,
// end), `nextBase` being the following tile's (the last tile's own) so that
// the copy can prefetch it.
template <typename Copy>
void forEachTileWithNext(const TilePlan &plan, int64_t first, int64_t end,
                         Copy copy) {
  bool pending = false;
  int64_t pendingHost = 0, pendingArena = 0;
  forEachTile(plan, first, end, [&](int64_t hostBase, int64_t arenaBase) {
    if (pending)
      copy(pendingHost, pendingArena, hostBase, arenaBase);
    pending = true;
    pendingHost = hostBase;
    pendingArena = arenaBase;
  });
  if (pending)
    copy(pendingHost, pendingArena, pendingHost, pendingArena);
}

template <TileKernel Kernel, size_t ElementBytes>
void packKernelTiles(const TilePlan &plan, const std::vector<CopyStep> &steps,
                     const uint8_t *host, uint8_t *arena, int64_t first,
                     int64_t end) {
  const TileView tile(plan, steps);
  forEachTileWithNext(plan, first, end,
                      [&](int64_t hostBase, int64_t arenaBase, int64_t nextHost,
                          int64_t nextArena) {
                        for (int64_t replica : plan.replicaBytes)
                          copyTile<Kernel, ElementBytes, true>(
                              tile, host + hostBase,
                              arena + arenaBase + replica, host + nextHost,
                              arena + nextArena + replica);
                      });
}

// `image` holds the dense arena from byte `origin` on.
template <TileKernel Kernel, size_t ElementBytes>
void unpackKernelTiles(const TilePlan &plan, const std::vector<CopyStep> &steps,
                       uint8_t *host, const uint8_t *image, int64_t origin,
                       int64_t first, int64_t end) {
  const TileView tile(plan, steps);
  forEachTileWithNext(plan, first, end,
                      [&](int64_t hostBase, int64_t arenaBase, int64_t nextHost,
                          int64_t nextArena) {
                        copyTile<Kernel, ElementBytes, false>(
                            tile, host + hostBase, image + (arenaBase - origin),
                            host + nextHost, image + (nextArena - origin));
                      });
}

// Runs tiles(std::integral_constant<TileKernel, K>,
// std::integral_constant<size_t, ElementBytes>) for `kernel`.
template <typename Tiles>
void dispatchKernel(TileKernel kernel, unsigned elementBytes, Tiles tiles) {
  using std::integral_constant;
  using Generic = integral_constant<TileKernel, TileKernel::Generic>;
  switch (kernel) {
  case TileKernel::Words:
    tiles(integral_constant<TileKernel, TileKernel::Words>(),
          integral_constant<size_t, 8>());
    return;
#if defined(__SSE2__)
  case TileKernel::Transpose16:
    tiles(integral_constant<TileKernel, TileKernel::Transpose16>(),
          integral_constant<size_t, 2>());
    return;
  case TileKernel::Transpose16Pairs:
    tiles(integral_constant<TileKernel, TileKernel::Transpose16Pairs>(),
          integral_constant<size_t, 2>());
    return;
  case TileKernel::Transpose32:
    tiles(integral_constant<TileKernel, TileKernel::Transpose32>(),
          integral_constant<size_t, 4>());
    return;
#endif
  default:
    break;
  }
  using Single = integral_constant<TileKernel, TileKernel::Single>;
  if (kernel == TileKernel::Single) {
    switch (elementBytes) {
    case 1:
      tiles(Single(), integral_constant<size_t, 1>());
      return;
    case 2:
      tiles(Single(), integral_constant<size_t, 2>());
      return;
    default:
      tiles(Single(), integral_constant<size_t, 4>());
      return;
    }
  }
  switch (elementBytes) {
  case 1:
    tiles(Generic(), integral_constant<size_t, 1>());
    break;
  case 2:
    tiles(Generic(), integral_constant<size_t, 2>());
    break;
  case 4:
    tiles(Generic(), integral_constant<size_t, 4>());
    break;
  default:
    tiles(Generic(), integral_constant<size_t, 8>());
    break;
  }
}

template <typename Rows>
void dispatchByElementSize(unsigned elementBytes, Rows rows) {
  switch (elementBytes) {
  case 1:
    rows(std::integral_constant<size_t, 1>());
    break;
  case 2:
    rows(std::integral_constant<size_t, 2>());
    break;
  case 4:
    rows(std::integral_constant<size_t, 4>());
    break;
  default:
    rows(std::integral_constant<size_t, 8>());
    break;
  }
}

std::optional<LayoutError> checkStageable(const Layout &layout, DType dtype,
                                          size_t numBytes,
                                          const StagingOptions &options) {
  ValidationOptions validation;
  validation.dtype = dtype;
  validation.memory = options.memory;
  std::vector<LayoutError> errors = validateLayout(layout, validation);
  if (!errors.empty())
    return LayoutError{0, "cannot stage: " + errors.front().message};
  // The staging tables have one entry per (time slice, position) reached.
  if (maxCoordinate(layout, Axis::Time) >= kMaxStagedTimeSlices)
    return LayoutError{0, "cannot stage: more than " +
                              std::to_string(kMaxStagedTimeSlices) +
                              " time slices"};
  size_t expected =
      static_cast<size_t>(layout.numElements()) * dtypeBytes(dtype);
  if (numBytes != expected)
    return LayoutError{0, "cannot stage: host tensor has " +
                              std::to_string(numBytes) + " bytes but the " +
                              "layout's shape needs " +
                              std::to_string(expected)};
  return std::nullopt;
}

} // namespace

// Gives pack() a dense arena: every dense site's block at
// site * blockBytes, with only the reached sites registered as blocks. The
// bytes are left unset; the caller zeroes them unless its stores cover the
// whole arena.
class MemoryImageBuilder {
public:
  // Reuses the image's arena where it is large enough: resizing a vector to
  // a size it already has allocates nothing, and its pages are already
  // mapped, which a fresh allocation pays for on first touch.
  static uint8_t *makeDense(MemoryImage &image, const StagingTables &tables) {
    // Emptied first, so that growing past the capacity copies nothing.
    image.arena.clear();
    image.arena.resize(tables.numSites * tables.blockBytes);
    image.blockOffsets.clear();
    // Dense site ids ascend in SiteKey order: the entries come sorted.
    image.blockOffsets.reserve(tables.numSites);
    tables.forEachReachedSite([&](int64_t site, const SiteKey &key) {
      image.blockOffsets.emplace_back(key, site * tables.blockBytes);
    });
    return image.arena.data();
  }

  // The block of every reached site (nullptr where the image has none),
  // merging the image's sorted blocks with the ascending sites.
  static std::vector<const uint8_t *>
  reachedBlocks(const MemoryImage &image, const StagingTables &tables) {
    std::vector<const uint8_t *> blocks(tables.numSites, nullptr);
    auto entry = image.blockOffsets.begin();
    const auto end = image.blockOffsets.end();
    tables.forEachReachedSite([&](int64_t site, const SiteKey &key) {
      while (entry != end && entry->first < key)
        ++entry;
      if (entry != end && entry->first == key)
        blocks[site] = image.arena.data() + entry->second;
    });
    return blocks;
  }
};

LayoutResult<std::string> describeStaging(const Layout &layout, DType dtype,
                                          const StagingOptions &options) {
  size_t numBytes =
      static_cast<size_t>(layout.numElements()) * dtypeBytes(dtype);
  if (std::optional<LayoutError> error =
          checkStageable(layout, dtype, numBytes, options))
    return *error;
  if (layout.numElements() == 0)
    return std::string("nothing to copy");
  StagingTables tables = buildTables(layout, dtype, options.memory);
  std::optional<TilePlan> plan = planTiles(layout, dtype, tables);
  if (!plan)
    return std::string("row walk");
  switch (chooseKernel(*plan, dtypeBytes(dtype))) {
  case TileKernel::Words:
    return std::string("tiled, whole long words");
  case TileKernel::Single:
    return std::string("tiled, one element per long word");
  case TileKernel::Transpose16:
    return std::string("tiled, 16-bit transposes");
  case TileKernel::Transpose16Pairs:
    return std::string("tiled, 16-bit transposes in pairs");
  case TileKernel::Transpose32:
    return std::string("tiled, 32-bit transposes");
  case TileKernel::Generic:
    break;
  }
  return std::string("tiled, lane by lane");
}

LayoutResult<MemoryImage> pack(const Layout &layout, DType dtype,
                               const void *data, size_t numBytes,
                               const StagingOptions &options) {
  MemoryImage image(options.memory, 0);
  LayoutResult<size_t> packed =
      packInto(layout, dtype, data, numBytes, image, options);
  if (!packed)
    return packed.error();
  // Moved explicitly: LayoutResult takes its value by value, where the
  // implicit move on return need not apply.
  return std::move(image);
}

LayoutResult<size_t> packInto(const Layout &layout, DType dtype,
                              const void *data, size_t numBytes,
                              MemoryImage &image,
                              const StagingOptions &options) {
  if (std::optional<LayoutError> error =
          checkStageable(layout, dtype, numBytes, options))
    return *error;
  image.memoryKind = options.memory;
  image.blockLw = maxCoordinate(layout, Axis::Address) + 1;
  if (layout.numElements() == 0) {
    image.arena.clear();
    image.blockOffsets.clear();
    return numBytes;
  }
  StagingTables tables = buildTables(layout, dtype, options.memory);
  std::optional<TilePlan> plan = planTiles(layout, dtype, tables);
  // The arena exists before the workers start: they only write disjoint
  // bytes of it and need no locking.
  uint8_t *arena = MemoryImageBuilder::makeDense(image, tables);
  unsigned threads =
      options.numThreads ? options.numThreads : stagingThreadCount();
  if (!plan || !plan->coversArena) {
    // Padding, holes and sites reached only by padding read as zero.
    const int64_t arenaBytes = tables.numSites * tables.blockBytes;
    constexpr int64_t kZeroChunk = 1 << 20;
    parallelRows((arenaBytes + kZeroChunk - 1) / kZeroChunk, threads,
                 [&](int64_t first, int64_t end) {
                   int64_t from = first * kZeroChunk;
                   int64_t to = std::min(arenaBytes, end * kZeroChunk);
                   std::memset(arena + from, 0, to - from);
                 });
  }
  const uint8_t *host = static_cast<const uint8_t *>(data);
  if (plan) {
    TileKernel kernel = chooseKernel(*plan, dtypeBytes(dtype));
    std::vector<CopyStep> steps = copySteps(*plan, kernel);
    dispatchKernel(kernel, dtypeBytes(dtype), [&](auto kind, auto size) {
      parallelRows(plan->numOuter, threads, [&](int64_t first, int64_t end) {
        packKernelTiles<decltype(kind)::value, decltype(size)::value>(
            *plan, steps, host, arena, first, end);
      });
    });
    return numBytes;
  }
  int64_t numRows = layout.numElements() / tables.extents.back();
  dispatchByElementSize(dtypeBytes(dtype), [&](auto size) {
    parallelRows(numRows, threads, [&](int64_t first, int64_t end) {
      packRows<decltype(size)::value>(tables, host, arena, first, end);
    });
  });
  return numBytes;
}

namespace {

// The checks unpack and unpackInto share; `numBytes` is what the caller
// provides.
std::optional<LayoutError> checkUnpackable(const Layout &layout, DType dtype,
                                           const MemoryImage &image,
                                           size_t numBytes,
                                           const StagingOptions &options) {
  if (std::optional<LayoutError> error =
          checkStageable(layout, dtype, numBytes, options))
    return error;
  if (image.kind() != options.memory)
    return LayoutError{0, std::string("cannot unpack: image is for ") +
                              memoryKindName(image.kind()) + ", not " +
                              memoryKindName(options.memory)};
  if (image.blockLongWords() != maxCoordinate(layout, Axis::Address) + 1)
    return LayoutError{
        0, "cannot unpack: image blocks have " +
               std::to_string(image.blockLongWords()) +
               " long words but the layout's have " +
               std::to_string(maxCoordinate(layout, Axis::Address) + 1)};
  return std::nullopt;
}

// Unpacks into `host` (the layout's whole logical tensor) after the checks.
std::optional<LayoutError> unpackChecked(const Layout &layout, DType dtype,
                                         const MemoryImage &image,
                                         uint8_t *host,
                                         const StagingOptions &options) {
  StagingTables tables = buildTables(layout, dtype, options.memory);
  std::vector<const uint8_t *> sitePointers =
      MemoryImageBuilder::reachedBlocks(image, tables);
  // Images made by pack() keep the blocks in dense site order; detect that
  // to read with linear offsets instead of a pointer per element.
  const uint8_t *firstBlock = nullptr;
  int64_t firstSite = 0;
  bool dense = true;
  for (int64_t site = 0; site < tables.numSites; ++site) {
    if (!tables.reached[site])
      continue;
    if (!sitePointers[site])
      return LayoutError{0, "cannot unpack: image has no block for " +
                                tables.siteOf(site).str()};
    if (!firstBlock) {
      firstBlock = sitePointers[site];
      firstSite = site;
    }
    dense = dense && reinterpret_cast<uintptr_t>(sitePointers[site]) ==
                         reinterpret_cast<uintptr_t>(firstBlock) +
                             (site - firstSite) * tables.blockBytes;
  }
  unsigned threads =
      options.numThreads ? options.numThreads : stagingThreadCount();
  std::optional<TilePlan> plan;
  if (dense)
    plan = planTiles(layout, dtype, tables);
  if (plan) {
    // Tile offsets count from site 0; the image starts at `firstSite`.
    const uint8_t *arena = firstBlock;
    const int64_t origin = firstSite * tables.blockBytes;
    const TilePlan &tiles = *plan;
    TileKernel kernel = chooseKernel(tiles, dtypeBytes(dtype));
    std::vector<CopyStep> steps = copySteps(tiles, kernel);
    dispatchKernel(kernel, dtypeBytes(dtype), [&](auto kind, auto size) {
      parallelRows(tiles.numOuter, threads, [&](int64_t first, int64_t end) {
        unpackKernelTiles<decltype(kind)::value, decltype(size)::value>(
            tiles, steps, host, arena, origin, first, end);
      });
    });
    return std::nullopt;
  }
  int64_t numRows = layout.numElements() / tables.extents.back();
  dispatchByElementSize(dtypeBytes(dtype), [&](auto size) {
    parallelRows(numRows, threads, [&](int64_t first, int64_t end) {
      if (dense)
        unpackRowsDense<decltype(size)::value>(tables, host, firstBlock,
                                               firstSite, first, end);
      else
        unpackRowsScattered<decltype(size)::value>(
            tables, host, sitePointers.data(), first, end);
    });
  });
  return std::nullopt;
}

} // namespace

LayoutResult<HostBytes> unpack(const Layout &layout, DType dtype,
                               const MemoryImage &image,
                               const StagingOptions &options) {
  size_t numBytes =
      static_cast<size_t>(layout.numElements()) * dtypeBytes(dtype);
  if (std::optional<LayoutError> error =
          checkUnpackable(layout, dtype, image, numBytes, options))
    return *error;
  // Left uninitialized: unpackChecked writes every byte, on the workers,
  // which also take the page faults of a fresh allocation in parallel.
  HostBytes host(numBytes);
  if (numBytes == 0)
    return std::move(host);
  if (std::optional<LayoutError> error =
          unpackChecked(layout, dtype, image, host.data(), options))
    return *error;
  return std::move(host);
}

LayoutResult<size_t> unpackInto(const Layout &layout, DType dtype,
                                const MemoryImage &image, void *data,
                                size_t numBytes,
                                const StagingOptions &options) {
  if (std::optional<LayoutError> error =
          checkUnpackable(layout, dtype, image, numBytes, options))
    return *error;
  if (numBytes == 0)
    return numBytes;
  if (std::optional<LayoutError> error = unpackChecked(
          layout, dtype, image, static_cast<uint8_t *>(data), options))
    return *error;
  return numBytes;
}

} // namespace layout
} // namespace mncc
