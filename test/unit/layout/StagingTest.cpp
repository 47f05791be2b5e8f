//===- StagingTest.cpp - pack/unpack property tests -----------------------===//

#include "mncc/layout/Staging.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <random>
#include <thread>

using namespace mncc::layout;

namespace {

Layout parseOrDie(const std::string &text) {
  LayoutResult<Layout> parsed = parseLayout(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.error().str();
  return parsed.ok() ? *parsed : Layout();
}

std::vector<uint8_t> randomBytes(size_t count, std::mt19937_64 &rng) {
  std::vector<uint8_t> bytes(count);
  for (uint8_t &byte : bytes)
    byte = static_cast<uint8_t>(rng());
  return bytes;
}

// A random layout that is valid for `dtype` in an on-chip memory: every
// axis gets nested strides (optionally with gaps on addresses), hierarchy
// axes stay inside their counts, unused hierarchy axes may be broadcast
// and extents may be padded.
Layout randomLayout(std::mt19937_64 &rng, DType dtype) {
  auto pick = [&](int64_t bound) {
    return static_cast<int64_t>(rng() % static_cast<uint64_t>(bound));
  };
  // Remaining room per axis (Address and Time are kept small for speed).
  int64_t room[kNumAxes];
  room[static_cast<unsigned>(Axis::Address)] = 64;
  room[static_cast<unsigned>(Axis::L2B)] = kNumL2B;
  room[static_cast<unsigned>(Axis::L1B)] = kNumL1B;
  room[static_cast<unsigned>(Axis::MAB)] = kNumMAB;
  room[static_cast<unsigned>(Axis::PE)] = kNumPE;
  room[static_cast<unsigned>(Axis::W)] = wordsPerLongWord(dtype);
  room[static_cast<unsigned>(Axis::Time)] = 4;
  int64_t nextStride[kNumAxes];
  std::fill(std::begin(nextStride), std::end(nextStride), 1);

  Layout layout;
  size_t rank = 1 + pick(3);
  layout.dims.resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    size_t numModes = pick(4);
    for (size_t m = 0; m < numModes; ++m) {
      Axis axis = static_cast<Axis>(pick(kNumAxes));
      int64_t &left = room[static_cast<unsigned>(axis)];
      if (left < 2)
        continue;
      // Sizes that keep the axis inside its count: powers of two for the
      // hierarchy, anything for addresses and time.
      int64_t size = 2;
      while (size * 2 <= left && pick(2))
        size *= 2;
      if (axis == Axis::Address || axis == Axis::Time)
        size = 2 + pick(left / 2 > 1 ? left / 2 - 1 : 1);
      int64_t gap = axis == Axis::Address && pick(4) == 0 ? 2 : 1;
      layout.dims[d].push_back(
          Mode{size, nextStride[static_cast<unsigned>(axis)] * gap, axis});
      nextStride[static_cast<unsigned>(axis)] *= size * gap;
      left /= size * gap;
    }
    std::shuffle(layout.dims[d].begin(), layout.dims[d].end(), rng);
  }
  for (Axis axis : {Axis::L2B, Axis::L1B, Axis::MAB, Axis::PE})
    if (nextStride[static_cast<unsigned>(axis)] == 1 && pick(3) == 0)
      layout.broadcast.push_back(axis);
  if (pick(2)) {
    std::vector<int64_t> shape;
    for (size_t d = 0; d < rank; ++d)
      shape.push_back(layout.span(d) - pick(layout.span(d) / 3 + 1));
    layout.shape = shape;
  }
  return layout;
}

const MemoryKind kMemories[] = {MemoryKind::LM0, MemoryKind::L1BM,
                                MemoryKind::L2BM, MemoryKind::DRAM};

const DType kDTypes[] = {DType::F16, DType::F32,  DType::F64,
                         DType::I8,  DType::BF16, DType::I32};

TEST(StagingTest, RandomLayoutsRoundTripThroughTextAndPlaces) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    Layout layout = randomLayout(rng, kDTypes[trial % 6]);
    LayoutResult<Layout> reparsed = parseLayout(layout.str());
    ASSERT_TRUE(reparsed.ok()) << layout.str();
    ASSERT_EQ(*reparsed, layout) << layout.str();
    ASSERT_EQ(reparsed->str(), layout.str());
    if (layout.numElements() == 0)
      continue;
    for (int probe = 0; probe < 10; ++probe) {
      std::vector<int64_t> index;
      for (size_t d = 0; d < layout.rank(); ++d)
        index.push_back(static_cast<int64_t>(rng() % layout.extent(d)));
      LayoutResult<std::vector<Place>> places = locate(layout, index);
      ASSERT_TRUE(places.ok());
      ASSERT_EQ(places->size(), static_cast<size_t>(layout.numReplicas()));
      for (const Place &place : *places) {
        PlaceContent content = elementAt(layout, place);
        ASSERT_EQ(content.kind, PlaceContent::Element) << layout.str();
        ASSERT_EQ(content.index, index) << layout.str();
      }
    }
  }
}

TEST(StagingTest, UnpackOfPackIsIdentityOnRandomLayouts) {
  std::mt19937_64 rng(20261129);
  for (int trial = 0; trial < 300; ++trial) {
    DType dtype = kDTypes[trial % 6];
    MemoryKind memory = kMemories[trial % 4];
    Layout layout = randomLayout(rng, dtype);
    ValidationOptions validation;
    validation.dtype = dtype;
    validation.memory = memory;
    ASSERT_TRUE(validateLayout(layout, validation).empty())
        << layout.str() << ": "
        << validateLayout(layout, validation).front().message;
    std::vector<uint8_t> host =
        randomBytes(layout.numElements() * dtypeBytes(dtype), rng);
    StagingOptions options;
    options.memory = memory;
    options.numThreads = 1 + trial % 3;
    LayoutResult<MemoryImage> image =
        pack(layout, dtype, host.data(), host.size(), options);
    ASSERT_TRUE(image.ok()) << layout.str() << ": " << image.error().str();
    LayoutResult<HostBytes> back = unpack(layout, dtype, *image, options);
    ASSERT_TRUE(back.ok()) << back.error().str();
    ASSERT_EQ(std::vector<uint8_t>(back->begin(), back->end()), host)
        << layout.str() << " " << dtypeName(dtype);
  }
}

// Reads the element bytes at `place` out of an image.
std::vector<uint8_t> bytesAt(const MemoryImage &image, const Place &place,
                             DType dtype) {
  const uint8_t *block = image.findBlock(SiteKey::of(place));
  if (!block)
    return {};
  const uint8_t *at =
      block + place.addressLw * kLongWordBytes + place.w * dtypeBytes(dtype);
  return std::vector<uint8_t>(at, at + dtypeBytes(dtype));
}

TEST(StagingTest, PackPutsEveryReplicaWhereLocateSays) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 100; ++trial) {
    DType dtype = kDTypes[trial % 6];
    Layout layout = randomLayout(rng, dtype);
    size_t elementBytes = dtypeBytes(dtype);
    std::vector<uint8_t> host =
        randomBytes(layout.numElements() * elementBytes, rng);
    LayoutResult<MemoryImage> image =
        pack(layout, dtype, host.data(), host.size());
    ASSERT_TRUE(image.ok()) << image.error().str();
    for (int probe = 0; probe < 20 && layout.numElements() > 0; ++probe) {
      int64_t linear = static_cast<int64_t>(rng() % layout.numElements());
      std::vector<int64_t> index(layout.rank());
      int64_t rest = linear;
      for (size_t d = layout.rank(); d-- > 0;) {
        index[d] = rest % layout.extent(d);
        rest /= layout.extent(d);
      }
      LayoutResult<std::vector<Place>> places = locate(layout, index);
      ASSERT_TRUE(places.ok());
      std::vector<uint8_t> expected(host.begin() + linear * elementBytes,
                                    host.begin() + (linear + 1) * elementBytes);
      for (const Place &place : *places)
        ASSERT_EQ(bytesAt(*image, place, dtype), expected)
            << layout.str() << " at " << place.str();
    }
  }
}

// Checks every byte of every block of `image` against elementAt: a slot
// holding an element has that element's host bytes, any other byte is zero
// (padding, unused slots and addresses). Every block holds an element.
void expectImageMatchesElementAt(const Layout &layout, DType dtype,
                                 const std::vector<uint8_t> &host,
                                 const MemoryImage &image) {
  const size_t elementBytes = dtypeBytes(dtype);
  for (const SiteKey &site : image.sites()) {
    const uint8_t *block = image.findBlock(site);
    bool holdsElement = false;
    for (int64_t address = 0; address < image.blockLongWords(); ++address)
      for (int64_t w = 0; w < wordsPerLongWord(dtype); ++w) {
        Place place;
        place.group = site.l2b / 2;
        place.l2b = site.l2b;
        place.l1b = site.l1b;
        place.mab = site.mab;
        place.pe = site.pe;
        place.time = site.time;
        place.addressLw = address;
        place.w = w;
        PlaceContent content = elementAt(layout, place);
        std::vector<uint8_t> expected(elementBytes, 0);
        if (content.kind == PlaceContent::Element) {
          holdsElement = true;
          int64_t linear = 0;
          for (size_t d = 0; d < layout.rank(); ++d)
            linear = linear * layout.extent(d) + content.index[d];
          std::copy(host.begin() + linear * elementBytes,
                    host.begin() + (linear + 1) * elementBytes,
                    expected.begin());
        }
        const uint8_t *at = block + address * kLongWordBytes + w * elementBytes;
        ASSERT_EQ(std::vector<uint8_t>(at, at + elementBytes), expected)
            << layout.str() << " " << dtypeName(dtype) << " at " << place.str();
      }
    EXPECT_TRUE(holdsElement) << layout.str() << " block " << site.str();
  }
}

// Layouts that take each copy loop of the tiled staging (a 16-bit and a
// 32-bit transpose, whole long words, the element-by-element fallback)
// and the row walk (W in a padded dimension), with padding, gaps,
// replicas and several memories.
struct KernelCase {
  const char *layout;
  DType dtype;
  MemoryKind memory;
  const char *copyLoop; // what describeStaging says
};
const KernelCase kKernelCases[] = {
    // 16-bit transpose of pairs of groups: PE host-contiguous, W across
    // rows, consecutive addresses (bench shapes).
    {"((2_Time:1, 2_L2B:1, 4_MAB:1, 4:1, 4:4), (24:16, 4_W:1, 4_PE:1); "
     "B@[L1B])",
     DType::F16, MemoryKind::DRAM, "tiled, 16-bit transposes in pairs"},
    {"((2_L2B:1, 2_Time:1), (4:8, 4_W:1), (4_MAB:1, 4:2), (2_L1B:1, 2:1, "
     "4_PE:1))",
     DType::BF16, MemoryKind::LM0, "tiled, 16-bit transposes in pairs"},
    {"((2_L2B:1, 2_Time:1), (4:8, 4_W:1), (4_MAB:1, 4:2), (2:1, 4_PE:1); "
     "B@[L1B])",
     DType::I16, MemoryKind::LM0, "tiled, 16-bit transposes in pairs"},
    // 16-bit transpose of single groups: neighbouring groups are not arena
    // neighbours (stride 2), or only some of them are (addresses 0, 1, 2,
    // then 4, 5, 6), so they do not pair up.
    {"((2:8, 3:2), (4_W:1, 4_PE:1))", DType::F16, MemoryKind::LM0,
     "tiled, 16-bit transposes"},
    {"((2:4, 3:1), (4_W:1, 4_PE:1))", DType::U16, MemoryKind::LM1,
     "tiled, 16-bit transposes"},
    // 32-bit transpose, with a padded leading dimension and replicas.
    {"(13,16)/((4_MAB:1, 4:2), (2_W:1, 2:1, 4_PE:1); B@[L1B])", DType::F32,
     MemoryKind::LM0, "tiled, 32-bit transposes"},
    {"((3:8, 2_W:1), (8:1, 4_PE:1))", DType::I32, MemoryKind::L1BM,
     "tiled, 32-bit transposes"},
    // Whole long words: 64-bit elements, and W host-contiguous.
    {"((4_PE:1, 6:3), (2_MAB:1, 3:1))", DType::F64, MemoryKind::LM0,
     "tiled, whole long words"},
    {"((8:1, 2_L1B:1), (4_Time:1, 4_W:1))", DType::F16, MemoryKind::L2BM,
     "tiled, whole long words"},
    {"(5,4)/((2_Time:1, 4:1), (2:8, 2_W:1))", DType::F32, MemoryKind::DRAM,
     "tiled, whole long words"},
    // Element by element: 8-bit lanes, W not filling the long word, lanes
    // out of slot order.
    {"((8_W:1), (4:1, 4_PE:1))", DType::I8, MemoryKind::LM0,
     "tiled, lane by lane"},
    {"((3:1, 4_PE:1), (2_W:2, 2:4))", DType::F16, MemoryKind::LM0,
     "tiled, lane by lane"},
    {"((4_PE:1, 2_W:2), (2_W:1, 4:1))", DType::U16, MemoryKind::PDM,
     "tiled, lane by lane"},
    // W in a padded dimension.
    {"(7,6)/((2_MAB:1, 4:1), (2_Time:1, 4_W:1))", DType::F16, MemoryKind::LM0,
     "row walk"},
};

StagingOptions optionsFor(const KernelCase &kernelCase, unsigned threads) {
  StagingOptions options;
  options.memory = kernelCase.memory;
  options.numThreads = threads;
  return options;
}

TEST(StagingTest, PackWritesExactlyWhatElementAtSaysForEveryKernel) {
  std::mt19937_64 rng(5);
  for (const KernelCase &kernelCase : kKernelCases) {
    Layout layout = parseOrDie(kernelCase.layout);
    std::vector<uint8_t> host =
        randomBytes(layout.numElements() * dtypeBytes(kernelCase.dtype), rng);
    for (unsigned threads : {1u, 2u, 3u}) {
      StagingOptions options = optionsFor(kernelCase, threads);
      LayoutResult<MemoryImage> image =
          pack(layout, kernelCase.dtype, host.data(), host.size(), options);
      ASSERT_TRUE(image.ok())
          << kernelCase.layout << ": " << image.error().str();
      expectImageMatchesElementAt(layout, kernelCase.dtype, host, *image);
      LayoutResult<HostBytes> back =
          unpack(layout, kernelCase.dtype, *image, options);
      ASSERT_TRUE(back.ok()) << back.error().str();
      EXPECT_EQ(std::vector<uint8_t>(back->begin(), back->end()), host)
          << kernelCase.layout << " threads " << threads;
    }
  }
}

TEST(StagingTest, EachKernelCaseTakesTheCopyLoopItIsFor) {
  // The cases above are meant to reach every copy loop; a change to the
  // tile planning that moves one elsewhere shows here.
  for (const KernelCase &kernelCase : kKernelCases) {
    StagingOptions options = optionsFor(kernelCase, 1);
    LayoutResult<std::string> copyLoop = describeStaging(
        parseOrDie(kernelCase.layout), kernelCase.dtype, options);
    ASSERT_TRUE(copyLoop.ok()) << copyLoop.error().str();
    EXPECT_EQ(*copyLoop, kernelCase.copyLoop) << kernelCase.layout;
  }
  // The one loop no case above takes: a 16-bit element alone in its long
  // word (no W).
  LayoutResult<std::string> single =
      describeStaging(parseOrDie("((4:1), (4_PE:1))"), DType::F16);
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(*single, "tiled, one element per long word");
  EXPECT_FALSE(describeStaging(parseOrDie("((4:1), (4:1))"), DType::U32).ok());
}

TEST(StagingTest, PackWritesExactlyWhatElementAtSaysOnRandomLayouts) {
  // The arena of a layout without padding is not zero-filled before the
  // copy; this catches any byte the copy would leave unset.
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 120; ++trial) {
    DType dtype = kDTypes[trial % 6];
    MemoryKind memory = kMemories[trial % 4];
    Layout layout = randomLayout(rng, dtype);
    if (layout.numElements() == 0)
      continue;
    std::vector<uint8_t> host =
        randomBytes(layout.numElements() * dtypeBytes(dtype), rng);
    StagingOptions options;
    options.memory = memory;
    options.numThreads = 1 + trial % 3;
    LayoutResult<MemoryImage> image =
        pack(layout, dtype, host.data(), host.size(), options);
    ASSERT_TRUE(image.ok()) << layout.str() << ": " << image.error().str();
    expectImageMatchesElementAt(layout, dtype, host, *image);
  }
}

TEST(StagingTest, PackIntoReplacesWhatTheImageHeld) {
  // One image reused across every kernel case, each case twice: the
  // storage left by the previous layout (larger or smaller, of another
  // memory) must not show through, and the result equals a fresh pack().
  std::mt19937_64 rng(23);
  MemoryImage reused(MemoryKind::LM0, 1);
  std::vector<uint8_t> garbage(64 * 8, 0xcd);
  ASSERT_TRUE(packInto(parseOrDie("((64:1, 8_W:1))"), DType::U8, garbage.data(),
                       garbage.size(), reused)
                  .ok());
  for (int round = 0; round < 2; ++round)
    for (const KernelCase &kernelCase : kKernelCases) {
      Layout layout = parseOrDie(kernelCase.layout);
      std::vector<uint8_t> host =
          randomBytes(layout.numElements() * dtypeBytes(kernelCase.dtype), rng);
      StagingOptions options = optionsFor(kernelCase, 2);
      LayoutResult<size_t> packed = packInto(
          layout, kernelCase.dtype, host.data(), host.size(), reused, options);
      ASSERT_TRUE(packed.ok())
          << kernelCase.layout << ": " << packed.error().str();
      EXPECT_EQ(*packed, host.size());
      EXPECT_EQ(reused.kind(), kernelCase.memory);
      expectImageMatchesElementAt(layout, kernelCase.dtype, host, reused);
      LayoutResult<MemoryImage> fresh =
          pack(layout, kernelCase.dtype, host.data(), host.size(), options);
      ASSERT_TRUE(fresh.ok());
      ASSERT_EQ(reused.sites(), fresh->sites()) << kernelCase.layout;
      for (const SiteKey &site : fresh->sites())
        ASSERT_EQ(std::memcmp(reused.findBlock(site), fresh->findBlock(site),
                              fresh->blockBytes()),
                  0)
            << kernelCase.layout << " " << site.str();
    }

  // A failed packInto leaves the image as it was.
  std::vector<uint8_t> before =
      reused
          .instanceImages(
              parseOrDie(kKernelCases[std::size(kKernelCases) - 1].layout))
          .begin()
          ->second;
  std::vector<uint8_t> host(64);
  LayoutResult<size_t> collide = packInto(parseOrDie("((4:1), (4:1))"),
                                          DType::U32, host.data(), 64, reused);
  ASSERT_FALSE(collide.ok());
  EXPECT_EQ(reused.kind(), kKernelCases[std::size(kKernelCases) - 1].memory);
  EXPECT_EQ(reused
                .instanceImages(parseOrDie(
                    kKernelCases[std::size(kKernelCases) - 1].layout))
                .begin()
                ->second,
            before);
}

TEST(StagingTest, UnpackIntoWritesEveryByteOfTheCallersBuffer) {
  std::mt19937_64 rng(17);
  for (const KernelCase &kernelCase : kKernelCases) {
    Layout layout = parseOrDie(kernelCase.layout);
    std::vector<uint8_t> host =
        randomBytes(layout.numElements() * dtypeBytes(kernelCase.dtype), rng);
    StagingOptions options = optionsFor(kernelCase, 2);
    LayoutResult<MemoryImage> image =
        pack(layout, kernelCase.dtype, host.data(), host.size(), options);
    ASSERT_TRUE(image.ok()) << image.error().str();
    // A buffer full of garbage: unpackInto must overwrite all of it.
    std::vector<uint8_t> buffer(host.size(), 0xab);
    LayoutResult<size_t> written =
        unpackInto(layout, kernelCase.dtype, *image, buffer.data(),
                   buffer.size(), options);
    ASSERT_TRUE(written.ok()) << written.error().str();
    EXPECT_EQ(*written, host.size());
    EXPECT_EQ(buffer, host) << kernelCase.layout;
    LayoutResult<size_t> wrongSize =
        unpackInto(layout, kernelCase.dtype, *image, buffer.data(),
                   buffer.size() - 1, options);
    ASSERT_FALSE(wrongSize.ok());
    EXPECT_EQ(
        wrongSize.error().message.rfind("cannot stage: host tensor has ", 0),
        0u);
  }
}

TEST(StagingTest, UnpacksAHandBuiltImageInPackOrder) {
  // Blocks created in ascending site order sit where pack() puts them, so
  // unpack reads them with the tiled copy; the result must not change.
  Layout layout = parseOrDie("((2_MAB:1, 4:1), (2_W:1, 4_PE:1))");
  std::vector<uint32_t> host(64);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = static_cast<uint32_t>(0x1000 + i);
  LayoutResult<MemoryImage> packed =
      pack(layout, DType::U32, host.data(), host.size() * 4);
  ASSERT_TRUE(packed.ok());
  MemoryImage image(MemoryKind::LM0, packed->blockLongWords());
  for (const SiteKey &site : packed->sites())
    std::memcpy(image.getOrCreateBlock(site), packed->findBlock(site),
                packed->blockBytes());
  LayoutResult<HostBytes> back =
      unpack(layout, DType::U32, image, StagingOptions());
  ASSERT_TRUE(back.ok()) << back.error().str();
  EXPECT_EQ(std::memcmp(back->data(), host.data(), host.size() * 4), 0);
}

TEST(StagingTest, PaddingIsZeroAndGemmLayoutRoundTrips) {
  // 10 x 6 f16 elements in a layout with room for 16 x 8.
  Layout layout =
      parseOrDie("(10,6)/((2_L1B:1, 2:2, 4_PE:1), (2_Time:1, 4_W:1); B@[MAB])");
  std::vector<uint16_t> host(60);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = static_cast<uint16_t>(0x100 + i);
  LayoutResult<MemoryImage> image =
      pack(layout, DType::F16, host.data(), host.size() * 2);
  ASSERT_TRUE(image.ok()) << image.error().str();
  // Blocks exist where real elements are: rows 0..7 on L1B 0 (4 PE), rows
  // 8 and 9 on L1B 1 (PE 0 and 1); times 2 slices x 16 MAB replicas.
  EXPECT_EQ(image->numBlocks(), 6u * 2 * 16);
  EXPECT_EQ(image->blockLongWords(), 3);
  // Row 12 would sit at l1b 1, pe 0, address 2, next to row 8: padding.
  Place padded = locatePrimaryUnchecked(layout, {12, 0});
  ASSERT_NE(image->findBlock(SiteKey::of(padded)), nullptr);
  EXPECT_EQ(padded.addressLw, 2);
  EXPECT_EQ(image->readLongWord(SiteKey::of(padded), padded.addressLw), 0u);
  // Row 9 is real: l1b 1, address 0, pe 1; columns 0..3 fill the word of
  // time slice 0, columns 4 and 5 half the word of slice 1.
  Place row9 = locatePrimaryUnchecked(layout, {9, 0});
  uint64_t word = image->readLongWord(SiteKey::of(row9), row9.addressLw);
  uint16_t halves[4];
  std::memcpy(halves, &word, sizeof(word));
  for (int w = 0; w < 4; ++w)
    EXPECT_EQ(halves[w], 0x100 + 9 * 6 + w);
  SiteKey slice1 = SiteKey::of(row9);
  slice1.time = 1;
  word = image->readLongWord(slice1, row9.addressLw);
  std::memcpy(halves, &word, sizeof(word));
  EXPECT_EQ(halves[0], 0x100 + 9 * 6 + 4);
  EXPECT_EQ(halves[1], 0x100 + 9 * 6 + 5);
  EXPECT_EQ(halves[2], 0); // columns 6 and 7 are padding
  EXPECT_EQ(halves[3], 0);
  LayoutResult<HostBytes> back = unpack(layout, DType::F16, *image);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(std::memcmp(back->data(), host.data(), 120), 0);
}

TEST(StagingTest, DramKeepsOneCopyPerGroup) {
  Layout layout = parseOrDie("((4_MAB:1, 8:1); B@[L2B, L1B])");
  std::vector<uint32_t> host(32);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = static_cast<uint32_t>(i * 7 + 1);
  StagingOptions lm;
  LayoutResult<MemoryImage> onChip =
      pack(layout, DType::U32, host.data(), 128, lm);
  ASSERT_TRUE(onChip.ok());
  EXPECT_EQ(onChip->numBlocks(), 4u * 8 * 8); // every L2B and L1B copy
  StagingOptions dram;
  dram.memory = MemoryKind::DRAM;
  LayoutResult<MemoryImage> offChip =
      pack(layout, DType::U32, host.data(), 128, dram);
  ASSERT_TRUE(offChip.ok());
  EXPECT_EQ(offChip->numBlocks(), 4u * 4); // 4 MAB blocks in 4 groups
  std::map<SiteKey, std::vector<uint8_t>> groups =
      offChip->instanceImages(layout);
  ASSERT_EQ(groups.size(), 4u);
  for (const auto &entry : groups) {
    EXPECT_EQ(entry.first.l2b % 2, 0);
    // Blocks of MAB 0..3 back to back, each 8 long words of 2 u32.
    ASSERT_EQ(entry.second.size(), 4u * 8 * 8);
    uint32_t value;
    std::memcpy(&value, entry.second.data() + 8 * 8 * 3 + 8 * 5, 4);
    EXPECT_EQ(value, host[3 * 8 + 5]);
  }
  LayoutResult<HostBytes> back = unpack(layout, DType::U32, *offChip, dram);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(std::memcmp(back->data(), host.data(), 128), 0);
  // The DRAM image is not an LM0 image.
  EXPECT_FALSE(unpack(layout, DType::U32, *offChip, lm).ok());
}

TEST(StagingTest, RejectsInvalidLayoutsAndSizes) {
  std::vector<uint8_t> host(64);
  LayoutResult<MemoryImage> collide =
      pack(parseOrDie("((4:1), (4:1))"), DType::U32, host.data(), 64);
  ASSERT_FALSE(collide.ok());
  EXPECT_EQ(collide.error().message.rfind("cannot stage: positions", 0), 0u);
  LayoutResult<MemoryImage> wrongSize =
      pack(parseOrDie("((4:1), (4_PE:1))"), DType::U32, host.data(), 60);
  ASSERT_FALSE(wrongSize.ok());
  EXPECT_EQ(wrongSize.error().message,
            "cannot stage: host tensor has 60 bytes but the layout's shape "
            "needs 64");
  LayoutResult<MemoryImage> wide =
      pack(parseOrDie("((4_W:1))"), DType::F32, host.data(), 16);
  EXPECT_FALSE(wide.ok());
}

TEST(StagingTest, UnpacksAHandBuiltImage) {
  // Blocks created in reverse site order are not where pack() would put
  // them, so unpack must find them one by one.
  Layout layout = parseOrDie("(7,6)/((2_MAB:1, 4:1), (2_Time:1, 4_PE:1))");
  MemoryImage image(MemoryKind::LM0, 4);
  std::vector<uint32_t> host(42);
  for (int64_t i = 0; i < 7; ++i)
    for (int64_t j = 0; j < 6; ++j) {
      host[i * 6 + j] = static_cast<uint32_t>(1000 * i + j);
      Place place = locatePrimaryUnchecked(layout, {6 - i, 5 - j});
      SiteKey site = SiteKey::of(place);
      uint32_t value = static_cast<uint32_t>(1000 * (6 - i) + (5 - j));
      std::memcpy(image.getOrCreateBlock(site) + place.addressLw * 8 +
                      place.w * 4,
                  &value, 4);
    }
  LayoutResult<HostBytes> back =
      unpack(layout, DType::U32, image, StagingOptions());
  ASSERT_TRUE(back.ok()) << back.error().str();
  EXPECT_EQ(std::memcmp(back->data(), host.data(), host.size() * 4), 0);

  MemoryImage missing(MemoryKind::LM0, 4);
  LayoutResult<HostBytes> incomplete =
      unpack(layout, DType::U32, missing, StagingOptions());
  ASSERT_FALSE(incomplete.ok());
  EXPECT_EQ(incomplete.error().message,
            "cannot unpack: image has no block for time 0 l2b 0 l1b 0 mab 0 "
            "pe 0");
  MemoryImage wrongBlock(MemoryKind::LM0, 5);
  EXPECT_FALSE(unpack(layout, DType::U32, wrongBlock, StagingOptions()).ok());
}

TEST(StagingTest, RejectsTooManyTimeSlices) {
  std::vector<uint8_t> host(70000);
  LayoutResult<MemoryImage> image =
      pack(parseOrDie("((70000_Time:1))"), DType::U8, host.data(), 70000);
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error().message, "cannot stage: more than 65536 time slices");
}

TEST(StagingTest, SameImageForAnyThreadCount) {
  Layout layout = parseOrDie(
      "((4_Time:1, 8_L2B:1, 16:1), (16_MAB:1, 4_PE:1, 2_W:1, 3:16))");
  std::mt19937_64 rng(3);
  std::vector<uint8_t> host = randomBytes(layout.numElements() * 4, rng);
  StagingOptions one, four;
  one.numThreads = 1;
  four.numThreads = 4;
  LayoutResult<MemoryImage> a =
      pack(layout, DType::F32, host.data(), host.size(), one);
  LayoutResult<MemoryImage> b =
      pack(layout, DType::F32, host.data(), host.size(), four);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->sites(), b->sites());
  for (const SiteKey &site : a->sites())
    ASSERT_EQ(
        std::memcmp(a->findBlock(site), b->findBlock(site), a->blockBytes()),
        0);
}

// The count comes from the caller (CODEGEN_N_TRANSPOSE_THREADS through the
// compile options), never from the environment.
TEST(StagingTest, ThreadCountIsTheRequestClampedToTheHardware) {
  unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(stagingThreadCount(1), 1u);
  EXPECT_EQ(stagingThreadCount(100000), hardware);
  EXPECT_EQ(stagingThreadCount(0), 1u);
  EXPECT_EQ(stagingThreadCount(-5), 1u);
  EXPECT_EQ(stagingThreadCount(), std::min(8u, hardware));
  setenv("CODEGEN_N_TRANSPOSE_THREADS", "1", 1);
  EXPECT_EQ(stagingThreadCount(), std::min(8u, hardware));
  unsetenv("CODEGEN_N_TRANSPOSE_THREADS");
}

} // namespace
