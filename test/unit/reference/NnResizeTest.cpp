//===- NnResizeTest.cpp - Resize and Upsample -----------------------------===//
//
// ONNX backend test cases (expected values from ONNX's test data) for
// every mode and coordinate transformation, plus hand-derived integer
// input, and errors.
//
//===----------------------------------------------------------------------===//

#include "NnTestUtil.h"

using namespace mncc::reference;
using namespace mncc::reference::nntest;

namespace {

TEST(ReferenceResize, NearestOnIntegersAndLinearTruncation) {
  Tensor x = make(DType::UInt8, {1, 2}, {10, 21});
  Tensor scales = make(DType::Float32, {2}, {1, 2});
  SimpleKernelContext nearest("Resize", {Value(x), Value(), Value(scales)}, 1);
  nearest.omitInput(1);
  ASSERT_TRUE(nearest.run().ok());
  // half_pixel: positions -0.25, 0.25, 0.75, 1.25 -> 0, 0, 1, 1.
  expectTensorNear(nearest.outputTensor(0),
                   make(DType::UInt8, {1, 4}, {10, 10, 21, 21}), 0);
  SimpleKernelContext linear("Resize", {Value(x), Value(), Value(scales)}, 1);
  linear.omitInput(1);
  linear.setString("mode", "linear");
  ASSERT_TRUE(linear.run().ok());
  // 10 + 0.25 * 11 = 12.75 truncates to 12, as numpy's astype does.
  expectTensorNear(linear.outputTensor(0),
                   make(DType::UInt8, {1, 4}, {10, 12, 18, 21}), 0);
}

TEST(ReferenceResize, TfHalfPixelForNearestOfOpset11) {
  // Positions (x + 0.5) / 0.5 = 1 and 3: exactly on elements 1 and 3.
  SimpleKernelContext context("Resize",
                              {Value(make(DType::Float32, {4}, {1, 2, 3, 4})),
                               Value(), Value(),
                               Value(make(DType::Int64, {1}, {2}))},
                              1);
  context.omitInput(1).omitInput(2);
  context.setString("coordinate_transformation_mode", "tf_half_pixel_for_nn");
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0), make(DType::Float32, {2}, {2, 4}));
}

TEST(ReferenceResize, RejectsBadInput) {
  Tensor x = make(DType::Float32, {1, 2}, {1, 2});
  SimpleKernelContext both("Resize",
                           {Value(x), Value(),
                            Value(make(DType::Float32, {2}, {1, 2})),
                            Value(make(DType::Int64, {2}, {1, 4}))},
                           1);
  both.omitInput(1);
  Status status = both.run();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "Resize: needs exactly one of scales and sizes");
  SimpleKernelContext mode(
      "Resize", {Value(x), Value(), Value(make(DType::Float32, {2}, {1, 2}))},
      1);
  mode.omitInput(1);
  mode.setString("mode", "bilinear");
  EXPECT_FALSE(mode.run().ok());
  SimpleKernelContext antialias(
      "Resize", {Value(x), Value(), Value(make(DType::Float32, {2}, {1, 2}))},
      1);
  antialias.omitInput(1);
  antialias.setInt("antialias", 1);
  EXPECT_FALSE(antialias.run().ok());
}

// ONNX backend test test_resize_upsample_scales_cubic_A_n0p5_exclude_outside.
TEST(ReferenceResizeOnnx, ResizeUpsampleScalesCubicAN0p5ExcludeOutside) {
  SimpleKernelContext context(
      "Resize",
      {Value(make(DType::Float32, {1, 1, 4, 4},
                  {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})),
       Value(), Value(make(DType::Float32, {4}, {1, 1, 2, 2}))},
      1);
  context.omitInput(1);
  context.setFloat("cubic_coeff_a", -0.5f);
  context.setInt("exclude_outside", 1);
  context.setString("mode", "cubic");
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {1, 1, 8, 8},
           {0.558823526, 0.814942062, 1.35698247, 1.89705884, 2.39705873,
            2.93713522,  3.47917557,  3.7352941,  1.58329761, 1.83941603,
            2.38145661,  2.92153287,  3.42153287, 3.96160913, 4.50364971,
            4.75976801,  3.75145936,  4.0075779,  4.54961824, 5.0896945,
            5.5896945,   6.12977076,  6.67181158, 6.92792988, 5.91176462,
            6.1678834,   6.70992374,  7.25,       7.75,       8.29007626,
            8.83211708,  9.0882349,   7.91176462, 8.16788292, 8.70992374,
            9.25,        9.75,        10.2900763, 10.8321171, 11.0882349,
            10.0720701,  10.3281889,  10.8702288, 11.410305,  11.910305,
            12.4503813,  12.9924221,  13.2485409, 12.2402315, 12.4963503,
            13.0383911,  13.5784674,  14.0784674, 14.6185436, 15.1605835,
            15.4167023,  13.2647057,  13.5208244, 14.0628653, 14.6029415,
            15.1029415,  15.6430178,  16.1850586, 16.4411774}));
}

// ONNX backend test test_resize_tf_crop_and_resize.
TEST(ReferenceResizeOnnx, ResizeTfCropAndResize) {
  SimpleKernelContext context(
      "Resize",
      {Value(make(DType::Float32, {1, 1, 4, 4},
                  {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})),
       Value(make(
           DType::Float32, {8},
           {0, 0, 0.400000006, 0.600000024, 1, 1, 1.20000005, 1.70000005})),
       Value(), Value(make(DType::Int64, {4}, {1, 1, 3, 3}))},
      1);
  context.omitInput(2);
  context.setString("coordinate_transformation_mode", "tf_crop_and_resize");
  context.setFloat("extrapolation_value", 10.0f);
  context.setString("mode", "linear");
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 1, 3, 3},
                        {7.60000038, 10, 10, 12.4000006, 10, 10, 10, 10, 10}));
}

// ONNX backend test test_resize_downsample_scales_linear_align_corners.
TEST(ReferenceResizeOnnx, ResizeDownsampleScalesLinearAlignCorners) {
  SimpleKernelContext context(
      "Resize",
      {Value(make(DType::Float32, {1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})),
       Value(),
       Value(make(DType::Float32, {4}, {1, 1, 0.600000024, 0.600000024}))},
      1);
  context.omitInput(1);
  context.setString("coordinate_transformation_mode", "align_corners");
  context.setString("mode", "linear");
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 1, 1, 2}, {1, 3.14285707}));
}

// ONNX backend test
// test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric.
TEST(ReferenceResizeOnnx, ResizeUpsampleSizesNearestRoundPreferCeilAsymmetric) {
  SimpleKernelContext context(
      "Resize",
      {Value(make(DType::Float32, {1, 1, 4, 4},
                  {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})),
       Value(), Value(), Value(make(DType::Int64, {4}, {1, 1, 8, 8}))},
      1);
  context.omitInput(1);
  context.omitInput(2);
  context.setString("coordinate_transformation_mode", "asymmetric");
  context.setString("mode", "nearest");
  context.setString("nearest_mode", "round_prefer_ceil");
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {1, 1, 8, 8},
           {1,  2,  2,  3,  3,  4,  4,  4,  5,  6,  6,  7,  7,  8,  8,  8,
            5,  6,  6,  7,  7,  8,  8,  8,  9,  10, 10, 11, 11, 12, 12, 12,
            9,  10, 10, 11, 11, 12, 12, 12, 13, 14, 14, 15, 15, 16, 16, 16,
            13, 14, 14, 15, 15, 16, 16, 16, 13, 14, 14, 15, 15, 16, 16, 16}));
}

// ONNX backend test test_resize_downsample_sizes_linear_pytorch_half_pixel.
TEST(ReferenceResizeOnnx, ResizeDownsampleSizesLinearPytorchHalfPixel) {
  SimpleKernelContext context(
      "Resize",
      {Value(make(DType::Float32, {1, 1, 4, 4},
                  {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})),
       Value(), Value(), Value(make(DType::Int64, {4}, {1, 1, 3, 1}))},
      1);
  context.omitInput(1);
  context.omitInput(2);
  context.setString("coordinate_transformation_mode", "pytorch_half_pixel");
  context.setString("mode", "linear");
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0), make(DType::Float32, {1, 1, 3, 1},
                                                 {1.66666663, 7, 12.333333}));
}

// ONNX backend test test_resize_upsample_sizes_nearest_floor_align_corners.
TEST(ReferenceResizeOnnx, ResizeUpsampleSizesNearestFloorAlignCorners) {
  SimpleKernelContext context(
      "Resize",
      {Value(make(DType::Float32, {1, 1, 4, 4},
                  {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})),
       Value(), Value(), Value(make(DType::Int64, {4}, {1, 1, 8, 8}))},
      1);
  context.omitInput(1);
  context.omitInput(2);
  context.setString("coordinate_transformation_mode", "align_corners");
  context.setString("mode", "nearest");
  context.setString("nearest_mode", "floor");
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {1, 1, 8, 8},
           {1, 1, 1, 2,  2,  3,  3,  4,  1,  1,  1,  2,  2,  3,  3,  4,
            1, 1, 1, 2,  2,  3,  3,  4,  5,  5,  5,  6,  6,  7,  7,  8,
            5, 5, 5, 6,  6,  7,  7,  8,  9,  9,  9,  10, 10, 11, 11, 12,
            9, 9, 9, 10, 10, 11, 11, 12, 13, 13, 13, 14, 14, 15, 15, 16}));
}

// ONNX backend test test_resize_downsample_scales_cubic.
TEST(ReferenceResizeOnnx, ResizeDownsampleScalesCubic) {
  SimpleKernelContext context(
      "Resize",
      {Value(make(DType::Float32, {1, 1, 4, 4},
                  {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})),
       Value(),
       Value(make(DType::Float32, {4}, {1, 1, 0.800000012, 0.800000012}))},
      1);
  context.omitInput(1);
  context.setString("mode", "cubic");
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {1, 1, 3, 3},
           {1.47119141, 2.78125, 4.08251953, 6.71142578, 8.02148438, 9.32275391,
            11.9165039, 13.2265625, 14.527832}));
}

// ONNX backend test test_resize_upsample_scales_linear.
TEST(ReferenceResizeOnnx, ResizeUpsampleScalesLinear) {
  SimpleKernelContext context(
      "Resize",
      {Value(make(DType::Float32, {1, 1, 2, 2}, {1, 2, 3, 4})), Value(),
       Value(make(DType::Float32, {4}, {1, 1, 2, 2}))},
      1);
  context.omitInput(1);
  context.setString("mode", "linear");
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 1, 4, 4},
                        {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75,
                         3.25, 3.5, 3, 3.25, 3.75, 4}));
}

// ONNX backend test test_upsample_nearest.
TEST(ReferenceResizeOnnx, UpsampleNearest) {
  SimpleKernelContext context(
      "Upsample",
      {Value(make(DType::Float32, {1, 1, 2, 2}, {1, 2, 3, 4})),
       Value(make(DType::Float32, {4}, {1, 1, 2, 3}))},
      1);
  context.setString("mode", "nearest");
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {1, 1, 4, 6}, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
                                          3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
}

} // namespace
