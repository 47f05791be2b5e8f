//===- LayoutAlgebraTest.cpp - Coalesce, compose, divide, switch plans ----===//

#include "mncc/layout/LayoutAlgebra.h"

#include <gtest/gtest.h>

#include <set>

using namespace mncc::layout;

namespace {

Layout parseOrDie(const std::string &text) {
  LayoutResult<Layout> parsed = parseLayout(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.error().str();
  return parsed.ok() ? *parsed : Layout();
}

std::vector<Mode> modesOf(const std::string &dimText) {
  Layout layout = parseOrDie("(" + dimText + ")");
  return layout.rank() == 1 ? layout.dims[0] : std::vector<Mode>();
}

int64_t sizeOf(const std::vector<Mode> &modes) {
  int64_t size = 1;
  for (const Mode &mode : modes)
    size *= mode.size;
  return size;
}

void expectSameFunction(const std::vector<Mode> &x,
                        const std::vector<Mode> &y) {
  ASSERT_EQ(sizeOf(x), sizeOf(y));
  for (int64_t i = 0; i < sizeOf(x); ++i)
    ASSERT_EQ(evaluateModes(x, i), evaluateModes(y, i)) << "at " << i;
}

TEST(LayoutAlgebraTest, CoalesceMergesContiguousModes) {
  std::vector<Mode> modes = modesOf("(2:1536, 2:768, 1:5, 16:40, 3:16, 16:1)");
  std::vector<Mode> merged = coalesceModes(modes);
  EXPECT_EQ(merged, (std::vector<Mode>{{4, 768, Axis::Address},
                                       {16, 40, Axis::Address},
                                       {48, 1, Axis::Address}}));
  expectSameFunction(modes, merged);
  // A chain of exactly nested strides collapses into one mode.
  EXPECT_EQ(coalesceModes(modesOf("(4:768, 48:16, 16:1)")),
            (std::vector<Mode>{{3072, 1, Axis::Address}}));
  // Different axes never merge, even when the strides line up.
  EXPECT_EQ(coalesceModes(modesOf("(4_PE:4, 4_MAB:1)")).size(), 2u);
}

TEST(LayoutAlgebraTest, CoalesceLayoutKeepsMapping) {
  Layout layout = parseOrDie(
      "((), (8:96, 8_L1B:1, 2_Time:25, 2:48, 16:1), (25_Time:1, 3:16, "
      "8_L2B:1, 16_MAB:1, 4_W:1, 4_PE:1))");
  Layout merged = coalesce(layout);
  EXPECT_EQ(merged.str(), layout.str()); // nothing adjacent is contiguous
  Layout contiguous = parseOrDie("((4_Time:2, 2_Time:1, 1:7), (4:4, 4:1))");
  EXPECT_EQ(coalesce(contiguous).str(), "((8_Time:1), (16:1))");
}

TEST(LayoutAlgebraTest, ComplementFillsTheGaps) {
  LayoutResult<std::vector<Mode>> gaps = complement(modesOf("(4:1, 4:8)"), 64);
  ASSERT_TRUE(gaps.ok()) << gaps.error().str();
  EXPECT_EQ(*gaps,
            (std::vector<Mode>{{2, 32, Axis::Address}, {2, 4, Axis::Address}}));
  // (gaps..., modes...) is a bijection onto [0, 64).
  std::vector<Mode> joined = *gaps;
  for (const Mode &mode : modesOf("(4:1, 4:8)"))
    joined.push_back(mode);
  std::set<int64_t> seen;
  for (int64_t i = 0; i < 64; ++i)
    seen.insert(evaluateModes(joined, i)[0]);
  EXPECT_EQ(seen.size(), 64u);
  EXPECT_EQ(*seen.rbegin(), 63);

  LayoutResult<std::vector<Mode>> onPe = complement(modesOf("(2_PE:2)"), 4);
  ASSERT_TRUE(onPe.ok());
  EXPECT_EQ(*onPe, (std::vector<Mode>{{2, 1, Axis::PE}}));

  EXPECT_FALSE(complement(modesOf("(4:3, 2:1)"), 12).ok()); // 3 % 2 != 0
  EXPECT_FALSE(complement(modesOf("(4:1)"), 6).ok());
  EXPECT_FALSE(complement(modesOf("(4:1, 4_PE:1)"), 16).ok());
}

TEST(LayoutAlgebraTest, ComposeMatchesPointwiseComposition) {
  std::vector<Mode> a = modesOf("(75_Time:4, 8_L2B:1, 16_MAB:1, 4:1, 4:4)");
  struct Case {
    const char *b;
  } cases[] = {{"(16:1)"},     {"(1200:128)"}, {"(8:16, 16:1)"},
               {"(4:1, 4:4)"}, {"(600:256)"},  {"(2:64, 2:2)"}};
  for (const Case &c : cases) {
    std::vector<Mode> b = modesOf(c.b);
    LayoutResult<std::vector<Mode>> composed = compose(a, b);
    ASSERT_TRUE(composed.ok()) << c.b << ": " << composed.error().str();
    ASSERT_EQ(sizeOf(*composed), sizeOf(b)) << c.b;
    for (int64_t i = 0; i < sizeOf(b); ++i)
      ASSERT_EQ(evaluateModes(*composed, i),
                evaluateModes(a, evaluateModes(b, i)[0]))
          << c.b << " at " << i;
  }
  EXPECT_FALSE(compose(a, modesOf("(3:1)")).ok());      // cuts 4:4 unevenly
  EXPECT_FALSE(compose(a, modesOf("(2:153600)")).ok()); // past the end
}

TEST(LayoutAlgebraTest, DivideSplitsADimension) {
  Layout layout =
      parseOrDie("(256,16)/((8_L2B:1, 4:2, 8_L1B:1), (2:1, 4_PE:1, 2_W:1))");
  LayoutResult<Layout> tiled = divide(layout, 0, 32);
  ASSERT_TRUE(tiled.ok()) << tiled.error().str();
  EXPECT_EQ(tiled->str(),
            "(8,32,16)/((8_L2B:1), (4:2, 8_L1B:1), (2:1, 4_PE:1, 2_W:1))");
  for (int64_t i = 0; i < 256; ++i)
    for (int64_t j = 0; j < 16; j += 5) {
      Place before = locatePrimaryUnchecked(layout, {i, j});
      Place after = locatePrimaryUnchecked(*tiled, {i / 32, i % 32, j});
      ASSERT_EQ(before, after) << i << "," << j;
    }
  EXPECT_FALSE(divide(layout, 0, 3).ok());
  EXPECT_FALSE(divide(layout, 2, 2).ok());
  Layout padded = parseOrDie("(12)/((16:1))");
  EXPECT_FALSE(divide(padded, 0, 8).ok()); // extent 12 is not a multiple
  EXPECT_TRUE(divide(padded, 0, 4).ok());
}

TEST(SwitchPlanTest, IdentityNeedsNoTransfers) {
  Layout layout = parseOrDie("((4_MAB:1, 4:1), (4_PE:1); B@[L1B])");
  LayoutResult<SwitchPlan> plan = planSwitch(layout, layout);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->runs.empty());
  EXPECT_EQ(plan->elementsInPlace, 16 * 4 * 8);
}

TEST(SwitchPlanTest, TransposeAcrossPEsIsOneRunPerRow) {
  // Rows on PEs -> rows on addresses: each element moves inside its MAB.
  Layout from = parseOrDie("((4_PE:1), (8:1))");
  Layout to = parseOrDie("((4:8), (8:1))");
  LayoutResult<SwitchPlan> plan = planSwitch(from, to);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->elementsInPlace, 8); // row 0 stays on PE 0
  EXPECT_EQ(
      plan->elementsPerKind[static_cast<unsigned>(TransferKind::WithinMAB)],
      24);
  ASSERT_EQ(plan->runs.size(), 3u);
  const TransferRun &run = plan->runs[0];
  EXPECT_EQ(run.kind, TransferKind::WithinMAB);
  EXPECT_EQ(run.firstIndex, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(run.length, 8);
  EXPECT_EQ(run.source.pe, 1);
  EXPECT_EQ(run.destination.addressLw, 8);
  EXPECT_EQ(run.sourceStep.addressLw, 1);
  EXPECT_EQ(run.destinationStep.addressLw, 1);
  EXPECT_NE(plan->str().find("within-MAB: 3 runs, 24 elements"),
            std::string::npos)
      << plan->str();
}

TEST(SwitchPlanTest, BroadcastDestinationsUseTheNearestSource) {
  // The source already has a copy on every L1B, so feeding the destination
  // (also on every L1B) never needs to cross L1Bs.
  Layout from = parseOrDie("((16_MAB:1); B@[L1B])");
  Layout to = parseOrDie("((16:1); B@[L1B])");
  LayoutResult<SwitchPlan> plan = planSwitch(from, to);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->elementsInPlace, 8);
  EXPECT_EQ(
      plan->elementsPerKind[static_cast<unsigned>(TransferKind::WithinL1B)],
      15 * 8);
  for (const TransferRun &run : plan->runs)
    EXPECT_EQ(run.source.l1b, run.destination.l1b);

  // A source on L1B 0 only must reach the seven other L1Bs.
  Layout single = parseOrDie("((16_MAB:1))");
  LayoutResult<SwitchPlan> fanOut = planSwitch(single, to);
  ASSERT_TRUE(fanOut.ok());
  EXPECT_EQ(
      fanOut->elementsPerKind[static_cast<unsigned>(TransferKind::WithinL2B)],
      16 * 7);
}

TEST(SwitchPlanTest, ClassifiesEveryLevel) {
  Layout from = parseOrDie("((2:1))");
  struct Case {
    const char *to;
    TransferKind kind;
  } cases[] = {
      {"((2_W:1))", TransferKind::SamePE},
      {"((2_PE:1))", TransferKind::WithinMAB},
      {"((2_MAB:1))", TransferKind::WithinL1B},
      {"((2_L1B:1))", TransferKind::WithinL2B},
      {"((2_L2B:1))", TransferKind::WithinGroup},
      {"((2_L2B:2))", TransferKind::ThroughDRAM},
      {"((2_Time:1))", TransferKind::ThroughDRAM},
  };
  for (const Case &c : cases) {
    LayoutResult<SwitchPlan> plan = planSwitch(from, parseOrDie(c.to));
    ASSERT_TRUE(plan.ok());
    ASSERT_EQ(plan->runs.size(), 1u) << c.to;
    EXPECT_EQ(plan->runs[0].kind, c.kind) << c.to;
    EXPECT_EQ(plan->runs[0].length, 1) << c.to;
  }
  EXPECT_FALSE(planSwitch(from, parseOrDie("((3:1))")).ok());
}

} // namespace
