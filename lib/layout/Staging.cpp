//===- Staging.cpp - Host tensors <-> device memory images ----------------===//
//
// Every coordinate of a place is a sum over modes of digit * stride, so
// both the site (time slice + hierarchy position, numbered densely) and the
// byte offset inside the site's block are linear in the per-dimension
// indices. Staging precomputes, per dimension, the contribution of every
// index value and then walks the tensor row by row adding contributions:
// no division in the inner loop.
//
//===----------------------------------------------------------------------===//

#include "mncc/layout/Staging.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <tuple>

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

uint8_t *MemoryImage::getOrCreateBlock(const SiteKey &site) {
  auto it = blockOffsets.find(site);
  if (it != blockOffsets.end())
    return arena.data() + it->second;
  size_t offset = arena.size();
  arena.resize(offset + blockBytes(), 0);
  blockOffsets.emplace(site, offset);
  return arena.data() + offset;
}

const uint8_t *MemoryImage::findBlock(const SiteKey &site) const {
  auto it = blockOffsets.find(site);
  return it == blockOffsets.end() ? nullptr : arena.data() + it->second;
}

uint8_t *MemoryImage::findBlock(const SiteKey &site) {
  auto it = blockOffsets.find(site);
  return it == blockOffsets.end() ? nullptr : arena.data() + it->second;
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

unsigned stagingThreadCount() {
  long requested = 8;
  if (const char *text = std::getenv("CODEGEN_N_TRANSPOSE_THREADS")) {
    char *end = nullptr;
    long parsed = std::strtol(text, &end, 10);
    if (end != text && *end == '\0' && parsed > 0)
      requested = parsed;
  }
  long hardware = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::clamp(requested, 1L, hardware));
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
  // dimension, plus the replica deltas.
  tables.reached.assign(tables.numSites, 0);
  std::vector<int64_t> sums{0};
  for (const std::vector<Contribution> &table : tables.perDim) {
    std::vector<int64_t> values;
    for (const Contribution &c : table)
      values.push_back(c.site);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    std::vector<int64_t> next;
    for (int64_t sum : sums)
      for (int64_t value : values)
        next.push_back(sum + value);
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
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
// site * blockBytes, with only the reached sites registered as blocks.
class MemoryImageBuilder {
public:
  static uint8_t *makeDense(MemoryImage &image, const StagingTables &tables) {
    image.arena.assign(tables.numSites * tables.blockBytes, 0);
    for (int64_t site = 0; site < tables.numSites; ++site)
      if (tables.reached[site])
        image.blockOffsets.emplace(tables.siteOf(site),
                                   site * tables.blockBytes);
    return image.arena.data();
  }
};

LayoutResult<MemoryImage> pack(const Layout &layout, DType dtype,
                               const void *data, size_t numBytes,
                               const StagingOptions &options) {
  if (std::optional<LayoutError> error =
          checkStageable(layout, dtype, numBytes, options))
    return *error;
  MemoryImage image(options.memory, maxCoordinate(layout, Axis::Address) + 1);
  if (layout.numElements() == 0)
    return image;
  StagingTables tables = buildTables(layout, dtype, options.memory);
  // The arena exists before the workers start: they only write disjoint
  // bytes of it and need no locking.
  uint8_t *arena = MemoryImageBuilder::makeDense(image, tables);
  int64_t numRows = layout.numElements() / tables.extents.back();
  unsigned threads =
      options.numThreads ? options.numThreads : stagingThreadCount();
  const uint8_t *host = static_cast<const uint8_t *>(data);
  dispatchByElementSize(dtypeBytes(dtype), [&](auto size) {
    parallelRows(numRows, threads, [&](int64_t first, int64_t end) {
      packRows<decltype(size)::value>(tables, host, arena, first, end);
    });
  });
  return image;
}

LayoutResult<std::vector<uint8_t>> unpack(const Layout &layout, DType dtype,
                                          const MemoryImage &image,
                                          const StagingOptions &options) {
  size_t numBytes =
      static_cast<size_t>(layout.numElements()) * dtypeBytes(dtype);
  if (std::optional<LayoutError> error =
          checkStageable(layout, dtype, numBytes, options))
    return *error;
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
  std::vector<uint8_t> host(numBytes);
  if (numBytes == 0)
    return host;
  StagingTables tables = buildTables(layout, dtype, options.memory);
  std::vector<const uint8_t *> sitePointers(tables.numSites, nullptr);
  // Images made by pack() keep the blocks in dense site order; detect that
  // to read with linear offsets instead of a pointer per element.
  const uint8_t *firstBlock = nullptr;
  int64_t firstSite = 0;
  bool dense = true;
  for (int64_t site = 0; site < tables.numSites; ++site) {
    if (!tables.reached[site])
      continue;
    sitePointers[site] = image.findBlock(tables.siteOf(site));
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
  int64_t numRows = layout.numElements() / tables.extents.back();
  unsigned threads =
      options.numThreads ? options.numThreads : stagingThreadCount();
  dispatchByElementSize(dtypeBytes(dtype), [&](auto size) {
    parallelRows(numRows, threads, [&](int64_t first, int64_t end) {
      if (dense)
        unpackRowsDense<decltype(size)::value>(tables, host.data(), firstBlock,
                                               firstSite, first, end);
      else
        unpackRowsScattered<decltype(size)::value>(
            tables, host.data(), sitePointers.data(), first, end);
    });
  });
  return host;
}

} // namespace layout
} // namespace mncc
