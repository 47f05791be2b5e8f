//===- LayoutParserTest.cpp - Parser and printer tests --------------------===//

#include "mncc/layout/Layout.h"

#include <gtest/gtest.h>

using namespace mncc::layout;

namespace {

const char *const kGatherLayout =
    "((75_Time:4, 8_L2B:1, 16_MAB:1, 4:1, 4:4), (4_Time:1, 24:16, 4_W:1, "
    "4_PE:1); B@[L1B])";
const char *const kGemmALayout =
    "((), (8:3072, 8_L1B:1, 2_Time:1, 2:1536, 16:1), (96:16, 4_W:1, 4_PE:1))";
const char *const kShapedLayout =
    "(256,16)/((8_L2B:1, 4:2, 8_L1B:1), (2:1, 4_PE:1, 2_W:1); B@[MAB])";

Layout parseOrDie(const char *text) {
  LayoutResult<Layout> parsed = parseLayout(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.error().str();
  return parsed.ok() ? *parsed : Layout();
}

TEST(LayoutParserTest, ParsesGatherLayout) {
  Layout layout = parseOrDie(kGatherLayout);
  ASSERT_EQ(layout.rank(), 2u);
  ASSERT_EQ(layout.dims[0].size(), 5u);
  EXPECT_EQ(layout.dims[0][0], (Mode{75, 4, Axis::Time}));
  EXPECT_EQ(layout.dims[0][1], (Mode{8, 1, Axis::L2B}));
  EXPECT_EQ(layout.dims[0][3], (Mode{4, 1, Axis::Address}));
  EXPECT_EQ(layout.dims[1][2], (Mode{4, 1, Axis::W}));
  EXPECT_EQ(layout.broadcast, std::vector<Axis>{Axis::L1B});
  EXPECT_FALSE(layout.shape.has_value());
  EXPECT_EQ(layout.span(0), 75 * 8 * 16 * 4 * 4);
  EXPECT_EQ(layout.extent(1), 1536);
  EXPECT_EQ(layout.numReplicas(), 8);
}

TEST(LayoutParserTest, ParsesEmptyDimensionAndShape) {
  Layout a = parseOrDie(kGemmALayout);
  ASSERT_EQ(a.rank(), 3u);
  EXPECT_TRUE(a.dims[0].empty());
  EXPECT_EQ(a.span(0), 1);
  EXPECT_EQ(a.span(1), 4096);

  Layout shaped = parseOrDie(kShapedLayout);
  ASSERT_TRUE(shaped.shape.has_value());
  EXPECT_EQ(*shaped.shape, (std::vector<int64_t>{256, 16}));
  EXPECT_EQ(shaped.broadcast, std::vector<Axis>{Axis::MAB});
}

TEST(LayoutParserTest, CanonicalRoundTrip) {
  for (const char *text :
       {kGatherLayout, kGemmALayout, kShapedLayout, "()", "(())",
        "((); B@[PE])", "()/()", "((4:0))", "(5)/((2_Time:3, 3:1))"}) {
    Layout layout = parseOrDie(text);
    EXPECT_EQ(printLayout(layout), text);
    LayoutResult<Layout> again = parseLayout(printLayout(layout));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, layout);
  }
}

TEST(LayoutParserTest, CanonicalizesSpacingAndBroadcastOrder) {
  Layout layout = parseOrDie("  ( 16 , 4 ) / ( ( 16_MAB : 1 ) ,(4_W:1) ;"
                             "B @ [ PE , L2B ] )  ");
  EXPECT_EQ(layout.str(), "(16,4)/((16_MAB:1), (4_W:1); B@[L2B, PE])");
  // B@[PE, L2B] is normalized to hierarchy order, so the round trip from the
  // canonical form is exact.
  EXPECT_EQ(parseOrDie(layout.str().c_str()), layout);
}

struct BadLayout {
  const char *text;
  unsigned column;
  const char *message;
};

class LayoutParserErrorTest : public ::testing::TestWithParam<BadLayout> {};

TEST_P(LayoutParserErrorTest, ReportsColumnAndMessage) {
  const BadLayout &bad = GetParam();
  LayoutResult<Layout> parsed = parseLayout(bad.text);
  ASSERT_FALSE(parsed.ok()) << bad.text;
  EXPECT_EQ(parsed.error().column, bad.column) << bad.text;
  EXPECT_EQ(parsed.error().message, bad.message) << bad.text;
}

INSTANTIATE_TEST_SUITE_P(
    Errors, LayoutParserErrorTest,
    ::testing::Values(
        BadLayout{"((8_L2B:1, 4_L3B:1))", 14, "unknown axis 'L3B'"},
        BadLayout{"((4_PE:1), (4_pe:1))", 15, "unknown axis 'pe'"},
        BadLayout{"((0:1))", 3, "mode size must be at least 1"},
        BadLayout{"((4_PE))", 7, "expected ':' but found ')'"},
        BadLayout{"((4_PE:1)", 10, "expected ')' but found end of input"},
        BadLayout{"((4_PE:1)) x", 12,
                  "unexpected 'x' after the end of the layout"},
        BadLayout{"((4_PE:1); B@[W])", 15,
                  "cannot broadcast over axis 'W'; only L2B, L1B, MAB and PE"},
        BadLayout{"((4_PE:1); B@[PE])", 15,
                  "axis 'PE' is broadcast but also used by a mode"},
        BadLayout{"((4:1); B@[MAB, MAB])", 17,
                  "axis 'MAB' is listed twice in B@[...]"},
        BadLayout{"(4,4)/((4:1))", 1,
                  "shape has 2 extents but the layout has 1 dimensions"},
        BadLayout{"(5)/((4:1))", 6,
                  "dimension 0: logical extent 5 exceeds the 4 positions of "
                  "its modes"},
        BadLayout{"((4_:1))", 5, "expected an axis name but found ':'"},
        BadLayout{"((99999999999999:1))", 3, "a mode size is too large"},
        BadLayout{"((4:-1))", 5, "expected a stride but found '-'"},
        BadLayout{"((1024:0, 1024:0, 1024:0), (1024:0, 1024:0, 2:0))", 45,
                  "layout holds more than 2^50 positions"},
        BadLayout{"((2048:1099511627776))", 3,
                  "mode reaches past coordinate 2^50"},
        BadLayout{"", 1, "expected '(' but found end of input"}));

TEST(LayoutErrorTest, FormatsColumn) {
  EXPECT_EQ((LayoutError{14, "unknown axis 'L3B'"}).str(),
            "column 14: unknown axis 'L3B'");
  EXPECT_EQ((LayoutError{0, "no column"}).str(), "no column");
}

TEST(LayoutParserTest, WithShapeChecksRankAndExtent) {
  Layout layout = parseOrDie(kGatherLayout);
  LayoutResult<Layout> shaped = withShape(layout, {151936, 1536});
  ASSERT_TRUE(shaped.ok());
  EXPECT_EQ(shaped->extent(0), 151936);
  EXPECT_EQ(shaped->str(), "(151936,1536)/" + std::string(kGatherLayout));
  EXPECT_FALSE(withShape(layout, {151936}).ok());
  EXPECT_FALSE(withShape(layout, {153601, 1536}).ok());
}

} // namespace
