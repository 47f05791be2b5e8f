//===- LayoutSpecTest.cpp - layout_spec.json loading ----------------------===//

#include "mncc/layout/LayoutSpec.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace mncc::layout;

namespace {

// The examples of the MLSDK compile-option documentation.
const char *const kLayoutSpecJson = R"js([
   {
      "trigger": "SwitchInput",
      "op_type": "Gather",
      "shape": [151936, 1536],
      "layout": "((75_Time:4, 8_L2B:1, 16_MAB:1, 4:1, 4:4), (4_Time:1, 24:16, 4_W:1, 4_PE:1); B@[L1B])"
   },
   {
      "trigger": "FixOutput",
      "op_type": "ChainerIndexAdd",
      "shape": [151936, 1536],
      "layout": "((75_Time:4, 8_L2B:1, 16_MAB:1, 4:1, 4:4), (4_Time:1, 24:16, 4_W:1, 4_PE:1); B@[L1B])"
   }
])js";

const char *const kGemmLayoutSpecJson = R"js([
   {
      "key": "embed_tokens",
      "A": "((), (8:3072, 8_L1B:1, 2_Time:1, 2:1536, 16:1), (96:16, 4_W:1, 4_PE:1))",
      "BT": "((25_Time:1, 3:1536, 8_L2B:1, 16_MAB:1, 4:1, 4:4), (96:16, 4_W:1, 4_PE:1); B@[L1B])",
      "C": "((), (8:96, 8_L1B:1, 2_Time:25, 2:48, 16:1), (25_Time:1, 3:16, 8_L2B:1, 16_MAB:1, 4_W:1, 4_PE:1))"
   }
])js";

TEST(LayoutSpecTest, LoadsTheDocumentedExample) {
  LayoutResult<std::vector<LayoutSpecEntry>> spec =
      parseLayoutSpec(kLayoutSpecJson);
  ASSERT_TRUE(spec.ok()) << spec.error().str();
  ASSERT_EQ(spec->size(), 2u);
  const LayoutSpecEntry &gather = (*spec)[0];
  EXPECT_EQ(gather.trigger, SpecTrigger::SwitchInput);
  EXPECT_EQ(gather.opType, "Gather");
  EXPECT_EQ(gather.shape, (std::vector<int64_t>{151936, 1536}));
  // The shape becomes the layout's logical shape: rows past 151936 pad.
  EXPECT_EQ(gather.layout.extent(0), 151936);
  EXPECT_EQ(gather.layout.span(0), 153600);
  EXPECT_EQ((*spec)[1].trigger, SpecTrigger::FixOutput);
  EXPECT_EQ((*spec)[1].opType, "ChainerIndexAdd");
}

TEST(LayoutSpecTest, LoadsTheDocumentedGemmExample) {
  LayoutResult<std::vector<GemmLayoutSpecEntry>> spec =
      parseGemmLayoutSpec(kGemmLayoutSpecJson);
  ASSERT_TRUE(spec.ok()) << spec.error().str();
  ASSERT_EQ(spec->size(), 1u);
  const GemmLayoutSpecEntry &entry = (*spec)[0];
  EXPECT_EQ(entry.key, "embed_tokens");
  EXPECT_EQ(entry.a.rank(), 3u);
  EXPECT_EQ(entry.bt.broadcast, std::vector<Axis>{Axis::L1B});
  EXPECT_EQ(entry.c.str(),
            "((), (8:96, 8_L1B:1, 2_Time:25, 2:48, 16:1), (25_Time:1, 3:16, "
            "8_L2B:1, 16_MAB:1, 4_W:1, 4_PE:1))");
}

struct BadSpec {
  const char *json;
  const char *message;
};

class LayoutSpecErrorTest : public ::testing::TestWithParam<BadSpec> {};

TEST_P(LayoutSpecErrorTest, NamesEntryAndField) {
  LayoutResult<std::vector<LayoutSpecEntry>> spec =
      parseLayoutSpec(GetParam().json);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().str(), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Errors, LayoutSpecErrorTest,
    ::testing::Values(
        BadSpec{R"js([{"trigger": "FixOutput", "op_type": "A", "shape": [4],
                    "layout": "((4:1))"},
                   {"trigger": "FixOutput", "op_type": "B", "shape": [4],
                    "layout": "((4_L3B:1))"}])js",
                "layout_spec.json: entry 1: field 'layout': column 5: "
                "unknown axis 'L3B'"},
        BadSpec{R"js([{"trigger": "Switch", "op_type": "A", "shape": [4],
                    "layout": "((4:1))"}])js",
                "layout_spec.json: entry 0: field 'trigger': expected "
                "\"SwitchInput\" or \"FixOutput\" but found \"Switch\""},
        BadSpec{R"js([{"trigger": "FixOutput", "shape": [4],
                    "layout": "((4:1))"}])js",
                "layout_spec.json: entry 0: missing field 'op_type'"},
        BadSpec{R"js([{"trigger": "FixOutput", "op_type": 7, "shape": [4],
                    "layout": "((4:1))"}])js",
                "layout_spec.json: entry 0: field 'op_type': expected a "
                "string"},
        BadSpec{R"js([{"trigger": "FixOutput", "op_type": "A", "shape": [4.5],
                    "layout": "((4:1))"}])js",
                "layout_spec.json: entry 0: field 'shape': expected an array "
                "of non-negative integers"},
        BadSpec{R"js([{"trigger": "FixOutput", "op_type": "A", "shape": [-1],
                    "layout": "((4:1))"}])js",
                "layout_spec.json: entry 0: field 'shape': expected an array "
                "of non-negative integers"},
        BadSpec{R"js([{"trigger": "FixOutput", "op_type": "A", "shape": [5],
                    "layout": "((4:1))"}])js",
                "layout_spec.json: entry 0: field 'shape': dimension 0: "
                "logical extent 5 exceeds the 4 positions of its modes"},
        BadSpec{R"js([{"trigger": "FixOutput", "op_type": "A", "shape": [3],
                    "layout": "(2)/((4:1))"}])js",
                "layout_spec.json: entry 0: field 'shape': differs from the "
                "shape prefix of the layout"},
        BadSpec{R"js([{"trigger": "FixOutput", "op_type": "A", "shape": [4],
                    "layout": ["((4:1))"]}])js",
                "layout_spec.json: entry 0: field 'layout': expected a "
                "string"},
        BadSpec{R"js([42])js",
                "layout_spec.json: entry 0: expected a JSON object"},
        BadSpec{R"js({"trigger": "FixOutput"})js",
                "layout_spec.json: expected a JSON array of entries"},
        BadSpec{R"js([{"trigger": )js",
                "layout_spec.json: invalid JSON near byte 14"}));

TEST(LayoutSpecTest, GemmErrorsNameTheField) {
  LayoutResult<std::vector<GemmLayoutSpecEntry>> spec = parseGemmLayoutSpec(
      R"js([{"key": "k", "A": "((4:1))", "BT": "((4:1)", "C": "((4:1))"}])js");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().str(),
            "gemm_layout_spec.json: entry 0: field 'BT': column 7: expected "
            "')' but found end of input");
  LayoutResult<std::vector<GemmLayoutSpecEntry>> missing = parseGemmLayoutSpec(
      R"js([{"key": "k", "A": "((4:1))", "BT": "((4:1))"}])js");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().str(),
            "gemm_layout_spec.json: entry 0: missing field 'C'");
}

TEST(LayoutSpecTest, LoadsFromFile) {
  std::string path = ::testing::TempDir() + "mncc_layout_spec_test.json";
  {
    std::ofstream out(path);
    out << kLayoutSpecJson;
  }
  LayoutResult<std::vector<LayoutSpecEntry>> spec = loadLayoutSpec(path);
  ASSERT_TRUE(spec.ok()) << spec.error().str();
  EXPECT_EQ(spec->size(), 2u);
  std::remove(path.c_str());
  LayoutResult<std::vector<LayoutSpecEntry>> gone = loadLayoutSpec(path);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().str(), path + ": cannot open file");
}

} // namespace
