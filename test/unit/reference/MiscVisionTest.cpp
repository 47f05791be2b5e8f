//===- MiscVisionTest.cpp - NonMaxSuppression, RoiAlign -------------------===//
//
// Inputs and expected outputs of the ONNX backend tests
// test_nonmaxsuppression_* and test_roialign_aligned_{false,true}.
//
//===----------------------------------------------------------------------===//

#include "mncc/reference/SimpleContext.h"

#include <gtest/gtest.h>

using namespace mncc::reference;

namespace {

Value floats(std::vector<int64_t> shape, std::vector<float> values) {
  return Value(
      Tensor::fromVector<float>(DType::Float32, std::move(shape), values));
}
Value int64s(std::vector<int64_t> shape, std::vector<int64_t> values) {
  return Value(
      Tensor::fromVector<int64_t>(DType::Int64, std::move(shape), values));
}

/// The six boxes most of the NMS tests share: two clusters of three
/// overlapping boxes and one far away.
std::vector<float> sixBoxes() {
  return {0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
          0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101};
}
std::vector<float> sixScores() {
  return {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};
}

std::vector<int64_t> runNms(std::vector<float> boxes, std::vector<float> scores,
                            int64_t classes, int64_t maxOutput,
                            float scoreThreshold, int64_t centerPointBox = 0) {
  int64_t numBoxes = static_cast<int64_t>(boxes.size() / 4);
  SimpleKernelContext context("NonMaxSuppression",
                              {floats({1, numBoxes, 4}, boxes),
                               floats({1, classes, numBoxes}, scores),
                               int64s({1}, {maxOutput}), floats({1}, {0.5f}),
                               floats({1}, {scoreThreshold})},
                              1);
  context.setInt("center_point_box", centerPointBox);
  Status status = context.run();
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(context.outputTensor(0).rank(), 2);
  return context.outputTensor(0).toVector<int64_t>();
}

TEST(ReferenceMiscVision, NonMaxSuppressionBackendCases) {
  // suppress_by_IOU: boxes 3, 0 and 5 survive.
  EXPECT_EQ(runNms(sixBoxes(), sixScores(), 1, 3, 0),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  // limit_output_size: only two per class.
  EXPECT_EQ(runNms(sixBoxes(), sixScores(), 1, 2, 0),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
  // suppress_by_IOU_and_scores: score_threshold 0.4 drops box 5.
  EXPECT_EQ(runNms(sixBoxes(), sixScores(), 1, 3, 0.4f),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
  // two_classes: each class is suppressed on its own.
  std::vector<float> twice = sixScores();
  twice.insert(twice.end(), twice.begin(), twice.end());
  EXPECT_EQ(runNms(sixBoxes(), twice, 2, 2, 0),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 1, 3, 0, 1, 0}));
  // identical_boxes: ten equal scores, the lowest index wins.
  std::vector<float> same, tens(10, 0.9f);
  for (int i = 0; i < 10; ++i)
    same.insert(same.end(), {0, 0, 1, 1});
  EXPECT_EQ(runNms(same, tens, 1, 3, 0), (std::vector<int64_t>{0, 0, 0}));
  // max_output_boxes_per_class 0 selects nothing.
  EXPECT_TRUE(runNms(sixBoxes(), sixScores(), 1, 0, 0).empty());
}

TEST(ReferenceMiscVision, NonMaxSuppressionBoxFormats) {
  // flipped_coordinates: corners may come in either order.
  std::vector<float> flipped = {1, 1,     0, 0,     0, 0.1f, 1, 1.1f,
                                0, 0.9f,  1, -0.1f, 0, 10,   1, 11,
                                1, 10.1f, 0, 11.1f, 1, 101,  0, 100};
  EXPECT_EQ(runNms(flipped, sixScores(), 1, 3, 0),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  // center_point_box_format: x_center, y_center, width, height.
  std::vector<float> centers = {0.5f, 0.5f,  1, 1, 0.5f, 0.6f,   1, 1,
                                0.5f, 0.4f,  1, 1, 0.5f, 10.5f,  1, 1,
                                0.5f, 10.6f, 1, 1, 0.5f, 100.5f, 1, 1};
  EXPECT_EQ(runNms(centers, sixScores(), 1, 3, 0, 1),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

TEST(ReferenceMiscVision, NonMaxSuppressionRejectsBadShapes) {
  SimpleKernelContext context("NonMaxSuppression",
                              {floats({1, 2, 4}, std::vector<float>(8, 0)),
                               floats({1, 1, 3}, std::vector<float>(3, 0))},
                              1);
  EXPECT_EQ(context.run().message(),
            "NonMaxSuppression: scores must be a floating tensor of shape 1 x "
            "classes x 2");
}

/// test_roialign_*'s 1 x 1 x 10 x 10 input, to 4 digits.
std::vector<float> roiInput() {
  return {0.2764, 0.715,  0.1958, 0.3416, 0.4638, 0.0259, 0.2963, 0.6518,
          0.4856, 0.725,  0.9637, 0.0895, 0.2919, 0.6753, 0.0234, 0.6132,
          0.8085, 0.5324, 0.8992, 0.4467, 0.3265, 0.8479, 0.9698, 0.2471,
          0.9336, 0.1878, 0.4766, 0.4308, 0.34,   0.2162, 0.0206, 0.172,
          0.2155, 0.4394, 0.0653, 0.3406, 0.7724, 0.3921, 0.2541, 0.5799,
          0.4062, 0.2194, 0.4473, 0.4687, 0.7109, 0.9327, 0.9815, 0.632,
          0.1728, 0.6119, 0.3097, 0.1283, 0.4984, 0.5068, 0.4279, 0.0173,
          0.4388, 0.043,  0.4671, 0.7119, 0.1011, 0.8477, 0.4726, 0.1777,
          0.9923, 0.4042, 0.1869, 0.7795, 0.9946, 0.9689, 0.1366, 0.3671,
          0.7011, 0.6234, 0.9867, 0.5585, 0.6985, 0.5609, 0.8788, 0.9928,
          0.5697, 0.8511, 0.6711, 0.9406, 0.8751, 0.7496, 0.165,  0.1049,
          0.1559, 0.2514, 0.7012, 0.4056, 0.7879, 0.3461, 0.0415, 0.2998,
          0.5094, 0.3727, 0.5482, 0.0502};
}

Tensor runRoiAlign(const std::string &transform, const std::string &mode) {
  SimpleKernelContext context(
      "RoiAlign",
      {floats({1, 1, 10, 10}, roiInput()),
       floats({3, 4}, {0, 0, 9, 9, 0, 5, 4, 9, 5, 5, 9, 9}),
       int64s({3}, {0, 0, 0})},
      1);
  context.setString("coordinate_transformation_mode", transform)
      .setString("mode", mode)
      .setInt("output_height", 5)
      .setInt("output_width", 5)
      .setInt("sampling_ratio", 2)
      .setFloat("spatial_scale", 1.0f);
  Status status = context.run();
  EXPECT_TRUE(status.ok()) << status.message();
  return context.outputTensor(0);
}

void expectRow(const Tensor &tensor, int64_t begin,
               const std::vector<float> &expected) {
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(tensor.data<float>()[begin + i], expected[i], 2e-4)
        << "element " << begin + i;
}

TEST(ReferenceMiscVision, RoiAlignOutputHalfPixel) {
  Tensor result = runRoiAlign("output_half_pixel", "avg");
  EXPECT_EQ(result.shape(), (std::vector<int64_t>{3, 1, 5, 5}));
  expectRow(result, 0, {0.4664, 0.4466, 0.3405, 0.5688, 0.6068, 0.3714, 0.4296,
                        0.3835, 0.5562, 0.3510, 0.2768, 0.4883, 0.5222, 0.5528,
                        0.4171, 0.4713, 0.4844, 0.6904, 0.4920, 0.8774, 0.6239,
                        0.7125, 0.6289, 0.3355, 0.3495});
  expectRow(result, 50, {0.2384, 0.3379, 0.3717, 0.6100, 0.7601});
}

TEST(ReferenceMiscVision, RoiAlignHalfPixel) {
  Tensor result = runRoiAlign("half_pixel", "avg");
  expectRow(result, 0, {0.5178, 0.3434, 0.3229, 0.4474, 0.6344, 0.4031, 0.5366,
                        0.4428, 0.4861, 0.4023, 0.2512, 0.4002, 0.5155, 0.6954,
                        0.3465, 0.3350, 0.4601, 0.5881, 0.3439, 0.6849, 0.4932,
                        0.7141, 0.8217, 0.4719, 0.4039});
  expectRow(result, 50, {0.2393, 0.4075, 0.3379, 0.2525, 0.4743});
}

TEST(ReferenceMiscVision, RoiAlignMaxAndErrors) {
  // A 1 x 1 x 2 x 2 plane, one bin, one sample at (0.5, 0.5) in
  // output_half_pixel: every corner weighs 0.25, so max mode gives
  // 0.25 * 8 and avg mode the mean, 0.25 * (1 + 2 + 4 + 8).
  auto run = [](const std::string &mode) {
    SimpleKernelContext context("RoiAlign",
                                {floats({1, 1, 2, 2}, {1, 2, 4, 8}),
                                 floats({1, 4}, {0, 0, 1, 1}),
                                 int64s({1}, {0})},
                                1);
    context.setString("coordinate_transformation_mode", "output_half_pixel")
        .setString("mode", mode)
        .setInt("sampling_ratio", 1);
    EXPECT_TRUE(context.run().ok());
    return context.outputTensor(0).data<float>()[0];
  };
  EXPECT_FLOAT_EQ(run("max"), 2.0f);
  EXPECT_FLOAT_EQ(run("avg"), 3.75f);
  SimpleKernelContext badIndex("RoiAlign",
                               {floats({1, 1, 2, 2}, {1, 2, 4, 8}),
                                floats({1, 4}, {0, 0, 1, 1}), int64s({1}, {1})},
                               1);
  EXPECT_EQ(badIndex.run().message(),
            "RoiAlign: batch index 1 of roi 0 is outside the batch of 1");
}

} // namespace
