//===- Staging.h - Host tensors <-> device memory images --------*- C++ -*-===//
//
// Packs a row-major host tensor into the memory images a layout implies and
// unpacks it back, with std::thread workers (CODEGEN_N_TRANSPOSE_THREADS,
// which the caller passes in StagingOptions::numThreads).
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LAYOUT_STAGING_H
#define MNCC_LAYOUT_STAGING_H

#include "mncc/layout/Layout.h"

#include <cstddef>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace mncc {
namespace layout {

namespace detail {
/// std::allocator whose value-less construct() default-initializes, so that
/// resize() leaves bytes unset: pack() writes every byte of an arena that
/// its elements cover completely and skips zero-filling it first.
template <typename T> struct DefaultInitAllocator : std::allocator<T> {
  using std::allocator<T>::allocator;
  template <typename U> struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  template <typename U> void construct(U *pointer) {
    ::new (static_cast<void *>(pointer)) U;
  }
  template <typename U, typename... Args>
  void construct(U *pointer, Args &&...args) {
    ::new (static_cast<void *>(pointer)) U(std::forward<Args>(args)...);
  }
};
} // namespace detail

/// A time slice and hierarchy position: the unit that owns one block of a
/// layout's addresses.
struct SiteKey {
  int64_t time = 0;
  int64_t l2b = 0; // global L2B index; the group is l2b / 2
  int64_t l1b = 0;
  int64_t mab = 0;
  int64_t pe = 0;

  static SiteKey of(const Place &place) {
    return SiteKey{place.time, place.l2b, place.l1b, place.mab, place.pe};
  }
  bool operator<(const SiteKey &o) const;
  bool operator==(const SiteKey &o) const {
    return time == o.time && l2b == o.l2b && l1b == o.l1b && mab == o.mab &&
           pe == o.pe;
  }
  std::string str() const;
};

struct StagingOptions;

/// The bytes a layout puts into one kind of memory: one zero-initialized
/// block of blockLongWords long words per site, addressed in long words.
/// Inside a long word, element w occupies bytes [w * size, (w + 1) * size)
/// in host byte order. Blocks live in one arena so that staging can address
/// them linearly; a pointer to a block stays valid until the next block is
/// created.
class MemoryImage {
public:
  MemoryImage(MemoryKind kind, int64_t blockLongWords)
      : memoryKind(kind), blockLw(blockLongWords) {}

  MemoryKind kind() const { return memoryKind; }
  int64_t blockLongWords() const { return blockLw; }
  size_t blockBytes() const {
    return static_cast<size_t>(blockLw) * kLongWordBytes;
  }

  /// The block of `site`, created zero-filled on first use.
  uint8_t *getOrCreateBlock(const SiteKey &site);
  /// The block of `site`, or nullptr if the layout never reaches it.
  const uint8_t *findBlock(const SiteKey &site) const;
  uint8_t *findBlock(const SiteKey &site);
  /// Sites that have a block, ascending.
  std::vector<SiteKey> sites() const;
  size_t numBlocks() const { return blockOffsets.size(); }
  /// The long word at `addressLw` of the block of `site`; 0 when the site
  /// has no block or the address is outside it.
  uint64_t readLongWord(const SiteKey &site, int64_t addressLw) const;

  /// Contiguous images of the memory instances (one PE's LM0, one group's
  /// DRAM, ...) with the blocks arranged as instanceGeometry(layout, kind())
  /// describes. Keys keep the coordinates that select the instance (and the
  /// time slice for on-chip memories) and zero the others; for PDM and
  /// DRAM the key's l2b is the group's first L2B (group * 2).
  std::map<SiteKey, std::vector<uint8_t>>
  instanceImages(const Layout &layout) const;

private:
  friend class MemoryImageBuilder; // lays out blocks for pack()
  friend LayoutResult<size_t> packInto(const Layout &, DType, const void *,
                                       size_t, MemoryImage &,
                                       const StagingOptions &);

  MemoryKind memoryKind;
  int64_t blockLw;
  std::vector<uint8_t, detail::DefaultInitAllocator<uint8_t>> arena;
  // Byte offset of each block, sorted by site: pack() appends its blocks in
  // order, which a node-based map would make it pay per block.
  std::vector<std::pair<SiteKey, size_t>> blockOffsets;

  std::vector<std::pair<SiteKey, size_t>>::const_iterator
  lowerBound(const SiteKey &site) const;
};

/// CODEGEN_N_TRANSPOSE_THREADS's default.
constexpr int64_t kDefaultStagingThreads = 8;

struct StagingOptions {
  MemoryKind memory = MemoryKind::LM0;
  /// Worker threads; 0 takes stagingThreadCount(). A compile passes
  /// stagingThreadCount(options.CODEGEN_N_TRANSPOSE_THREADS).
  unsigned numThreads = 0;
};

/// The workers `requested` threads give: clamped to
/// [1, std::thread::hardware_concurrency()]. The library does not read the
/// environment; the driver reads CODEGEN_N_TRANSPOSE_THREADS into the
/// compile options (mncc/pipeline/Options.h).
unsigned stagingThreadCount(int64_t requested = kDefaultStagingThreads);

/// Bytes of a host tensor, left uninitialized on allocation (unpack()
/// writes every byte).
using HostBytes = std::vector<uint8_t, detail::DefaultInitAllocator<uint8_t>>;

/// Packs `numBytes` bytes of a row-major tensor of the layout's logical
/// shape into a memory image. Every replica on a broadcast axis at or above
/// the memory's instance level gets its own copy; broadcast axes below it
/// share one (e.g. DRAM keeps one copy per group). Padding stays zero.
/// Fails if the layout is invalid for the dtype and memory (see
/// validateLayout) or the byte count does not match.
LayoutResult<MemoryImage> pack(const Layout &layout, DType dtype,
                               const void *data, size_t numBytes,
                               const StagingOptions &options = {});

/// pack() into an existing image, replacing its contents and reusing its
/// storage when it is large enough: a runtime that stages every run into
/// the same buffers pays neither the allocation nor the first-touch page
/// faults again. On failure `image` is left as it was. Returns `numBytes`.
LayoutResult<size_t> packInto(const Layout &layout, DType dtype,
                              const void *data, size_t numBytes,
                              MemoryImage &image,
                              const StagingOptions &options = {});

/// Reads a row-major tensor back from the primary replica of every
/// element. Fails if the image's kind differs from options.memory or a
/// block the layout needs is missing.
LayoutResult<HostBytes> unpack(const Layout &layout, DType dtype,
                               const MemoryImage &image,
                               const StagingOptions &options = {});

/// unpack() into `numBytes` bytes at `data`, which must be exactly the
/// layout's logical tensor. Every byte is written, so the buffer needs no
/// initialization.
/// Returns `numBytes`.
LayoutResult<size_t> unpackInto(const Layout &layout, DType dtype,
                                const MemoryImage &image, void *data,
                                size_t numBytes,
                                const StagingOptions &options = {});

/// How pack() and unpack() move this layout's elements: "tiled, <copy
/// loop>" with the copy loop one of "whole long words", "one element per
/// long word", "16-bit transposes", "16-bit transposes in pairs", "32-bit
/// transposes" or "lane by lane"; or "row walk" (W in a padded
/// dimension). For users tuning a layout's staging speed, and for tests.
/// Fails where pack() would.
LayoutResult<std::string> describeStaging(const Layout &layout, DType dtype,
                                          const StagingOptions &options = {});

} // namespace layout
} // namespace mncc

#endif // MNCC_LAYOUT_STAGING_H
