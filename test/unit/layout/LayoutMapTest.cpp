//===- LayoutMapTest.cpp - Element <-> place mapping and validity ---------===//

#include "mncc/layout/Layout.h"

#include <gtest/gtest.h>

#include <random>

using namespace mncc::layout;

namespace {

const char *const kGatherLayout =
    "(151936,1536)/((75_Time:4, 8_L2B:1, 16_MAB:1, 4:1, 4:4), (4_Time:1, "
    "24:16, 4_W:1, 4_PE:1); B@[L1B])";
const char *const kGemmBTLayout =
    "((25_Time:1, 3:1536, 8_L2B:1, 16_MAB:1, 4:1, 4:4), (96:16, 4_W:1, "
    "4_PE:1); B@[L1B])";

Layout parseOrDie(const char *text) {
  LayoutResult<Layout> parsed = parseLayout(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.error().str();
  return parsed.ok() ? *parsed : Layout();
}

Place makePlace(int64_t l2b, int64_t l1b, int64_t mab, int64_t pe, int64_t w,
                int64_t time, int64_t address) {
  Place place;
  place.group = l2b / 2;
  place.l2b = l2b;
  place.l1b = l1b;
  place.mab = mab;
  place.pe = pe;
  place.w = w;
  place.time = time;
  place.addressLw = address;
  return place;
}

TEST(LayoutMapTest, LocatesGatherElements) {
  Layout layout = parseOrDie(kGatherLayout);
  struct Case {
    std::vector<int64_t> index;
    Place primary;
  } cases[] = {
      {{0, 0}, makePlace(0, 0, 0, 0, 0, 0, 0)},
      {{1, 0}, makePlace(0, 0, 0, 0, 0, 0, 4)},    // minor mode 4:4
      {{4, 0}, makePlace(0, 0, 0, 0, 0, 0, 1)},    // then 4:1
      {{64, 0}, makePlace(0, 0, 4, 0, 0, 0, 0)},   // 16 per MAB
      {{512, 0}, makePlace(2, 0, 0, 0, 0, 0, 0)},  // L2B 2 is group 1
      {{2048, 0}, makePlace(0, 0, 0, 0, 0, 4, 0)}, // Time stride 4
      {{0, 1}, makePlace(0, 0, 0, 1, 0, 0, 0)},    // PE fastest
      {{0, 4}, makePlace(0, 0, 0, 0, 1, 0, 0)},    // then W
      {{0, 16}, makePlace(0, 0, 0, 0, 0, 0, 16)},  // 24:16
      {{0, 384}, makePlace(0, 0, 0, 0, 0, 1, 0)},  // Time stride 1
      {{151935, 1535}, makePlace(1, 0, 7, 3, 3, 299, 383)},
  };
  for (const Case &c : cases) {
    LayoutResult<std::vector<Place>> places = locate(layout, c.index);
    ASSERT_TRUE(places.ok()) << places.error().str();
    ASSERT_EQ(places->size(), 8u);
    EXPECT_EQ((*places)[0], c.primary)
        << (*places)[0].str() << " vs " << c.primary.str();
    for (int64_t l1b = 0; l1b < 8; ++l1b) {
      Place replica = c.primary;
      replica.l1b = l1b;
      EXPECT_EQ((*places)[l1b], replica);
    }
  }
  EXPECT_EQ(makePlace(5, 0, 0, 0, 0, 0, 0).group, 2);
}

TEST(LayoutMapTest, LocateRejectsBadIndices) {
  Layout layout = parseOrDie(kGatherLayout);
  EXPECT_FALSE(locate(layout, {151936, 0}).ok()); // padding is not logical
  EXPECT_FALSE(locate(layout, {0, 1536}).ok());
  EXPECT_FALSE(locate(layout, {-1, 0}).ok());
  LayoutResult<std::vector<Place>> wrongRank = locate(layout, {0});
  ASSERT_FALSE(wrongRank.ok());
  EXPECT_EQ(wrongRank.error().message,
            "index has 1 components but the layout has 2 dimensions");
}

TEST(LayoutMapTest, ReplicasCoverEveryBroadcastCombination) {
  Layout layout = parseOrDie("((4_W:1); B@[L2B, PE])");
  LayoutResult<std::vector<Place>> places = locate(layout, {3});
  ASSERT_TRUE(places.ok());
  ASSERT_EQ(places->size(), 32u);
  EXPECT_EQ((*places)[0], makePlace(0, 0, 0, 0, 3, 0, 0));
  EXPECT_EQ((*places)[1], makePlace(0, 0, 0, 1, 3, 0, 0));
  EXPECT_EQ((*places)[4], makePlace(1, 0, 0, 0, 3, 0, 0));
  EXPECT_EQ((*places)[31], makePlace(7, 0, 0, 3, 3, 0, 0));
}

TEST(LayoutMapTest, ElementAtInvertsLocate) {
  for (const char *text :
       {kGatherLayout, kGemmBTLayout,
        "((), (8:96, 8_L1B:1, 2_Time:25, 2:48, 16:1), (25_Time:1, 3:16, "
        "8_L2B:1, 16_MAB:1, 4_W:1, 4_PE:1))",
        "(256,16)/((8_L2B:1, 4:2, 8_L1B:1), (2:1, 4_PE:1, 2_W:1); B@[MAB])",
        "((2:5, 3:3))"}) {
    Layout layout = parseOrDie(text);
    std::mt19937_64 rng(42);
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<int64_t> index;
      for (size_t d = 0; d < layout.rank(); ++d)
        index.push_back(static_cast<int64_t>(rng() % layout.extent(d)));
      LayoutResult<std::vector<Place>> places = locate(layout, index);
      ASSERT_TRUE(places.ok());
      for (const Place &place : *places) {
        PlaceContent content = elementAt(layout, place);
        ASSERT_EQ(content.kind, PlaceContent::Element) << text;
        EXPECT_EQ(content.index, index) << text << " at " << place.str();
      }
    }
  }
}

TEST(LayoutMapTest, ElementAtNonNestedStrides) {
  // Addresses 0, 3, 6 (first digit 0) and 5, 8, 11 (first digit 1): a
  // greedy largest-stride-first decode would get address 6 wrong.
  Layout layout = parseOrDie("((2:5, 3:3))");
  EXPECT_EQ(elementAt(layout, makePlace(0, 0, 0, 0, 0, 0, 6)).index,
            std::vector<int64_t>{2});
  EXPECT_EQ(elementAt(layout, makePlace(0, 0, 0, 0, 0, 0, 5)).index,
            std::vector<int64_t>{3});
  EXPECT_EQ(elementAt(layout, makePlace(0, 0, 0, 0, 0, 0, 4)).kind,
            PlaceContent::Unused);
}

TEST(LayoutMapTest, ElementAtReportsPaddingAndUnused) {
  Layout layout = parseOrDie(kGatherLayout);
  // Row 152000 is past the 151936 logical rows: time 74*4, then
  // 448 = L2B 1, MAB 12.
  Place padded = locatePrimaryUnchecked(layout, {152000, 0});
  PlaceContent content = elementAt(layout, padded);
  EXPECT_EQ(content.kind, PlaceContent::Padding);
  EXPECT_EQ(content.index, (std::vector<int64_t>{152000, 0}));

  EXPECT_EQ(elementAt(layout, makePlace(0, 0, 0, 0, 0, 0, 384)).kind,
            PlaceContent::Unused); // beyond the last address
  EXPECT_EQ(elementAt(layout, makePlace(0, 0, 0, 0, 0, 300, 0)).kind,
            PlaceContent::Unused); // beyond the last time slice
  Place wrongGroup = makePlace(2, 0, 0, 0, 0, 0, 0);
  wrongGroup.group = 0;
  EXPECT_EQ(elementAt(layout, wrongGroup).kind, PlaceContent::Unused);

  Layout noL1B = parseOrDie("((4_PE:1))");
  EXPECT_EQ(elementAt(noL1B, makePlace(0, 3, 0, 1, 0, 0, 0)).kind,
            PlaceContent::Unused); // not broadcast over L1B: only L1B 0
  EXPECT_EQ(elementAt(noL1B, makePlace(0, 0, 0, 1, 0, 0, 0)).kind,
            PlaceContent::Element);
}

std::vector<std::string> messages(const std::vector<LayoutError> &errors) {
  std::vector<std::string> result;
  for (const LayoutError &error : errors)
    result.push_back(error.message);
  return result;
}

TEST(LayoutValidateTest, AcceptsTheMlsdkLayouts) {
  ValidationOptions f16Lm0;
  f16Lm0.dtype = DType::F16;
  EXPECT_EQ(messages(validateLayout(parseOrDie(kGatherLayout), f16Lm0)),
            std::vector<std::string>{});
  ValidationOptions f32;
  f32.dtype = DType::F32;
  EXPECT_EQ(messages(validateLayout(
                parseOrDie("(256,16)/((8_L2B:1, 4:2, 8_L1B:1), (2:1, 4_PE:1, "
                           "2_W:1); B@[MAB])"),
                f32)),
            std::vector<std::string>{});
}

TEST(LayoutValidateTest, ReportsWThatDoesNotFitTheDtype) {
  ValidationOptions f32;
  f32.dtype = DType::F32;
  EXPECT_EQ(messages(validateLayout(parseOrDie(kGatherLayout), f32)),
            std::vector<std::string>{
                "W index reaches 3 but a long word holds only 2 f32 elements"});
  ValidationOptions f64;
  f64.dtype = DType::F64;
  EXPECT_EQ(messages(validateLayout(parseOrDie("((2_W:1))"), f64)),
            std::vector<std::string>{
                "W index reaches 1 but a long word holds only 1 f64 element"});
}

TEST(LayoutValidateTest, ReportsHierarchyOverflow) {
  ValidationOptions options;
  EXPECT_EQ(messages(validateLayout(parseOrDie("((16_L2B:1))"), options)),
            std::vector<std::string>{
                "L2B index reaches 15 but MN-Core 2 has only 8 L2B"});
  EXPECT_EQ(messages(validateLayout(parseOrDie("((4_PE:2))"), options)),
            std::vector<std::string>{
                "PE index reaches 6 but MN-Core 2 has only 4 PE per MAB"});
}

TEST(LayoutValidateTest, ReportsAddressOverflowPerMemory) {
  ValidationOptions lm0;
  lm0.dtype = DType::F16;
  EXPECT_EQ(messages(validateLayout(parseOrDie(kGemmBTLayout), lm0)),
            std::vector<std::string>{"addresses reach long word 4607 but LM0 "
                                     "holds 2048 long words per PE"});
  ValidationOptions dram = lm0;
  dram.memory = MemoryKind::DRAM;
  EXPECT_TRUE(validateLayout(parseOrDie(kGemmBTLayout), dram).empty());

  // 16 MAB x 4 PE blocks of 256 long words = 16 Ki > 8 Ki of one L1BM.
  ValidationOptions l1bm;
  l1bm.memory = MemoryKind::L1BM;
  EXPECT_EQ(
      messages(validateLayout(parseOrDie("((16_MAB:1, 4_PE:1, 256:1))"), l1bm)),
      std::vector<std::string>{
          "the layout needs 16384 long words of L1BM per L1B (64 blocks "
          "of 256) but it holds 8192"});
  // Broadcast over MAB shares one copy inside the L1BM.
  EXPECT_TRUE(
      validateLayout(parseOrDie("((4_PE:1, 256:1); B@[MAB])"), l1bm).empty());
}

TEST(LayoutValidateTest, ReportsTimeSliceLimit) {
  ValidationOptions options;
  options.dtype = DType::F16;
  options.maxTimeSlices = 256;
  EXPECT_EQ(messages(validateLayout(parseOrDie(kGatherLayout), options)),
            std::vector<std::string>{
                "layout needs 300 time slices but at most 256 are allowed"});
}

TEST(LayoutValidateTest, ReportsCollisions) {
  ValidationOptions options;
  EXPECT_EQ(messages(validateLayout(parseOrDie("((4:1), (4:1))"), options)),
            std::vector<std::string>{
                "positions (1, 0) and (0, 1) share one place (group 0 l2b 0 "
                "l1b 0 mab 0 pe 0 time 0 addr 1 w 0) without a broadcast"});
  // Strides 2 and 1 overlap: digit pairs (0, 2) and (1, 0) both give 2.
  std::vector<LayoutError> overlap =
      validateLayout(parseOrDie("((2:2, 3:1))"), options);
  ASSERT_EQ(overlap.size(), 1u);
  EXPECT_NE(overlap[0].message.find("share one place"), std::string::npos);
  // The same sizes on distinct axes, or with a broadcast, are fine.
  EXPECT_TRUE(validateLayout(parseOrDie("((4:1), (4_PE:1); B@[MAB])"), options)
                  .empty());
  EXPECT_FALSE(validateLayout(parseOrDie("((4:0))"), options).empty());
  // Overlapping strides with too many positions to enumerate are reported
  // rather than silently accepted.
  ValidationOptions dram;
  dram.memory = MemoryKind::DRAM;
  EXPECT_EQ(messages(validateLayout(parseOrDie("((4096:3, 2048:2))"), dram)),
            std::vector<std::string>{
                "cannot verify that the address modes never collide: too "
                "many positions to enumerate"});
}

TEST(LayoutValidateTest, InstanceGeometryOfDram) {
  Layout bt = parseOrDie(kGemmBTLayout);
  InstanceGeometry geometry = instanceGeometry(bt, MemoryKind::DRAM);
  EXPECT_EQ(geometry.blockLongWords, 4608);
  EXPECT_EQ(geometry.timeSlots, 25);
  EXPECT_EQ(geometry.l2bSlots, 2);
  EXPECT_EQ(geometry.l1bSlots, 1); // broadcast: one copy per group
  EXPECT_EQ(geometry.mabSlots, 16);
  EXPECT_EQ(geometry.peSlots, 4);
  EXPECT_EQ(geometry.blockIndex(makePlace(3, 5, 2, 1, 0, 2, 0)),
            ((2 * 2 + 1) * 1 + 0) * 64 + 2 * 4 + 1);
  InstanceGeometry lm = instanceGeometry(bt, MemoryKind::LM0);
  EXPECT_EQ(lm.blocksPerInstance(), 1);
}

} // namespace
