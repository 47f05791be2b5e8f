//===- NnGridSampleTest.cpp - GridSample ----------------------------------===//
//
// Expected values are those of ONNX's backend test cases named at each test
// (test_gridsample_*), which sample the 3x2 image 0..5.
//
//===----------------------------------------------------------------------===//

#include "mncc/reference/SimpleContext.h"

#include <gtest/gtest.h>

using namespace mncc::reference;

namespace {

Tensor image() {
  return Tensor::fromVector<float>(DType::Float32, {1, 1, 3, 2},
                                   {0, 1, 2, 3, 4, 5});
}

// Grid of test_gridsample_bilinear, _nearest, _bicubic, _aligncorners_true.
const std::vector<float> kInsideGrid = {-1,   -1,   -0.5f, -0.5f, -0.2f, -0.2f,
                                        0,    0,    0,     0,     -0.2f, -0.2f,
                                        0.5f, 0.5f, 1,     1};
// Grid of the padding cases, mostly outside [-1, 1].
const std::vector<float> kOutsideGrid = {
    -10, -10, -5, -5, -0.2f, -0.2f, 10, 10, 10, 10, -0.2f, -0.2f, 5, 5, 10, 10};

/// Samples image() at `grid` ([1, 2, 4, 2]) with the given attributes.
std::vector<float> sample(const std::vector<float> &grid,
                          const std::string &mode, const std::string &padding,
                          int64_t alignCorners = 0) {
  SimpleKernelContext context(
      "GridSample",
      {Value(image()),
       Value(Tensor::fromVector<float>(DType::Float32, {1, 2, 4, 2}, grid))},
      1);
  context.setString("mode", mode)
      .setString("padding_mode", padding)
      .setInt("align_corners", alignCorners);
  Status status = context.run();
  EXPECT_TRUE(status.ok()) << status.message();
  if (!status.ok())
    return {};
  EXPECT_EQ(context.outputTensor(0).shape(),
            (std::vector<int64_t>{1, 1, 2, 4}));
  return context.outputTensor(0).toVector<float>();
}

void expectNear(const std::vector<float> &actual,
                const std::vector<float> &expected, float tolerance = 1e-5f) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], tolerance) << "at " << i;
}

TEST(GridSample, Bilinear) {
  expectNear(sample(kInsideGrid, "bilinear", "zeros"),
             {0, 0.5f, 1.7f, 2.5f, 2.5f, 1.7f, 4.5f, 1.25f});
}

TEST(GridSample, BilinearAlignCorners) {
  expectNear(sample(kInsideGrid, "bilinear", "zeros", 1),
             {0, 1.25f, 2, 2.5f, 2.5f, 2, 3.75f, 5});
}

TEST(GridSample, Nearest) {
  // -0.5 lands on x = 0.0, y = 0.5: y rounds half to even, to row 0.
  expectNear(sample(kInsideGrid, "nearest", "zeros"), {0, 0, 2, 2, 2, 2, 5, 0});
}

TEST(GridSample, Bicubic) {
  // ONNX lists these rounded to 4 decimals.
  expectNear(
      sample(kInsideGrid, "bicubic", "zeros"),
      {-0.1406f, 0.3828f, 1.7556f, 2.9688f, 2.9688f, 1.7556f, 5.1445f, 1.3906f},
      1e-4f);
}

TEST(GridSample, PaddingModes) {
  expectNear(sample(kOutsideGrid, "bilinear", "zeros"),
             {0, 0, 1.7f, 0, 0, 1.7f, 0, 0});
  expectNear(sample(kOutsideGrid, "bilinear", "border"),
             {0, 0, 1.7f, 5, 5, 1.7f, 5, 5});
  expectNear(sample(kOutsideGrid, "bilinear", "reflection"),
             {2.5f, 0, 1.7f, 2.5f, 2.5f, 1.7f, 5, 2.5f});
}

TEST(GridSample, BadInputsAreErrors) {
  Tensor grid =
      Tensor::fromVector<float>(DType::Float32, {1, 2, 4, 2}, kInsideGrid);
  SimpleKernelContext badMode("GridSample", {Value(image()), Value(grid)}, 1);
  badMode.setString("mode", "linear");
  EXPECT_EQ(badMode.run().message(),
            "GridSample: mode must be bilinear, nearest or bicubic, not "
            "'linear'");
  SimpleKernelContext badGrid(
      "GridSample", {Value(image()), Value(grid.reshaped({1, 4, 2, 2, 1}))}, 1);
  EXPECT_EQ(badGrid.run().message(),
            "GridSample: grid shape 1x4x2x2x1 must be [N, H_out, W_out, 2] "
            "with N = 1");
  SimpleKernelContext badRank(
      "GridSample", {Value(image().reshaped({1, 3, 2})), Value(grid)}, 1);
  EXPECT_EQ(badRank.run().message(),
            "GridSample: input X must have rank 4 ([N, C, H, W]), not 3");
}

} // namespace
