//===- NnPoolTest.cpp - MaxPool, AveragePool, LpPool and Global pools -----===//
//
// ONNX backend test cases (expected values from ONNX's test data) plus
// hand-derived cases for what they do not cover: LpPool, 1-D and 3-D
// windows, float16, ceil mode divisors and errors.
//
//===----------------------------------------------------------------------===//

#include "NnTestUtil.h"

#include <cstring>
#include <limits>
#include <random>

using namespace mncc::reference;
using namespace mncc::reference::nntest;

namespace {

TEST(ReferencePool, LpPoolAndGlobalLpPool) {
  Tensor x = make(DType::Float32, {1, 1, 2, 2}, {3, -4, 0, 0});
  SimpleKernelContext two("LpPool", {Value(x)}, 1);
  two.setInts("kernel_shape", {2, 2});
  ASSERT_TRUE(two.run().ok());
  expectTensorNear(two.outputTensor(0),
                   make(DType::Float32, {1, 1, 1, 1}, {5}));
  SimpleKernelContext three("LpPool", {Value(x)}, 1);
  three.setInts("kernel_shape", {1, 2});
  three.setInt("p", 3);
  ASSERT_TRUE(three.run().ok());
  expectTensorNear(three.outputTensor(0),
                   make(DType::Float32, {1, 1, 2, 1}, {std::cbrt(91.0), 0}));
  SimpleKernelContext global("GlobalLpPool", {Value(x)}, 1);
  ASSERT_TRUE(global.run().ok());
  expectTensorNear(global.outputTensor(0),
                   make(DType::Float32, {1, 1, 1, 1}, {5}));
}

TEST(ReferencePool, OneDimensionalMaxPoolWithPadsAndIndices) {
  Tensor x = make(DType::Float32, {1, 2, 4}, {1, 5, 2, 0, -1, -3, -2, -4});
  SimpleKernelContext context("MaxPool", {Value(x)}, 2);
  context.setInts("kernel_shape", {2});
  context.setInts("strides", {2});
  context.setInts("pads", {1, 1});
  ASSERT_TRUE(context.run().ok());
  // Windows [pad, x0], [x1, x2], [x3, pad]; padding is never the maximum.
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 2, 3}, {1, 5, 0, -1, -2, -4}));
  expectTensorNear(context.outputTensor(1),
                   make(DType::Int64, {1, 2, 3}, {0, 1, 3, 4, 6, 7}));
}

TEST(ReferencePool, MaxPoolPropagatesNaNWithOrWithoutIndices) {
  Tensor x = make(DType::Float32, {1, 1, 4}, {1, NAN, 3, 2});
  for (size_t outputs : {1u, 2u}) {
    SimpleKernelContext context("MaxPool", {Value(x)}, outputs);
    context.setInts("kernel_shape", {2});
    ASSERT_TRUE(context.run().ok());
    expectTensorNear(context.outputTensor(0),
                     make(DType::Float32, {1, 1, 3}, {NAN, NAN, 3}));
    if (outputs == 2)
      expectTensorNear(context.outputTensor(1),
                       make(DType::Int64, {1, 1, 3}, {1, 1, 2}), 0);
  }
}

/// MaxPool without Indices runs on padded planes with vector code for 3 x 3
/// windows; with Indices it walks each window. Both must give the same
/// bits, NaN (the first one in the window) and infinities included, for
/// strides, padding, ceil_mode and row widths that leave vector tails.
TEST(ReferencePool, MaxPool3x3PathsAgreeBitForBit) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  for (int64_t width : {7, 16, 17, 33, 56}) {
    std::vector<double> values(2 * 3 * 9 * width);
    for (size_t i = 0; i < values.size(); ++i) {
      float v = dist(rng);
      if (i % 13 == 5)
        v = std::numeric_limits<float>::quiet_NaN();
      else if (i % 29 == 3)
        v = -std::numeric_limits<float>::infinity();
      else if (i % 31 == 7)
        v = std::numeric_limits<float>::infinity();
      values[i] = v;
    }
    Tensor x = make(DType::Float32, {2, 3, 9, width}, values);
    for (int64_t stride : {1, 2})
      for (int64_t ceil : {0, 1}) {
        std::vector<Tensor> results;
        for (size_t outputs : {1u, 2u}) {
          SimpleKernelContext context("MaxPool", {Value(x)}, outputs);
          context.setInts("kernel_shape", {3, 3});
          context.setInts("strides", {stride, stride});
          context.setInts("pads", {1, 0, 0, 1});
          context.setInt("ceil_mode", ceil);
          ASSERT_TRUE(context.run().ok());
          results.push_back(context.outputTensor(0));
        }
        ASSERT_EQ(results[0].shape(), results[1].shape());
        EXPECT_EQ(0, std::memcmp(results[0].raw(), results[1].raw(),
                                 results[0].numElements() * sizeof(float)))
            << "width " << width << " stride " << stride << " ceil " << ceil;
      }
  }
}

TEST(ReferencePool, Float16MaxAndAveragePool) {
  Tensor x = make(DType::Float16, {1, 1, 2, 2}, {0.5, 1.5, -2, 4});
  SimpleKernelContext max("MaxPool", {Value(x)}, 1);
  max.setInts("kernel_shape", {2, 2});
  ASSERT_TRUE(max.run().ok());
  expectTensorNear(max.outputTensor(0),
                   make(DType::Float16, {1, 1, 1, 1}, {4}));
  SimpleKernelContext avg("AveragePool", {Value(x)}, 1);
  avg.setInts("kernel_shape", {2, 2});
  ASSERT_TRUE(avg.run().ok());
  expectTensorNear(avg.outputTensor(0),
                   make(DType::Float16, {1, 1, 1, 1}, {1}));
}

TEST(ReferencePool, ThreeDimensionalAveragePool) {
  std::vector<double> values(16);
  for (int i = 0; i < 16; ++i)
    values[i] = i;
  Tensor x = make(DType::Float64, {1, 2, 2, 2, 2}, values);
  SimpleKernelContext context("AveragePool", {Value(x)}, 1);
  context.setInts("kernel_shape", {2, 2, 2});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float64, {1, 2, 1, 1, 1}, {3.5, 11.5}));
}

TEST(ReferencePool, CeilModeDivisorCountsOnlyThePaddedInput) {
  // Windows [1, 2] and [3] (the second runs past the input in ceil mode).
  Tensor x = make(DType::Float32, {1, 1, 3}, {1, 2, 3});
  for (int64_t includePad : {0, 1}) {
    SimpleKernelContext context("AveragePool", {Value(x)}, 1);
    context.setInts("kernel_shape", {2});
    context.setInts("strides", {2});
    context.setInt("ceil_mode", 1);
    context.setInt("count_include_pad", includePad);
    ASSERT_TRUE(context.run().ok());
    expectTensorNear(context.outputTensor(0),
                     make(DType::Float32, {1, 1, 2}, {1.5, 3}));
  }
  // With a pad of 1 on both sides: [0, 1], [2, 3], [pad] dropped since it
  // would start in the end padding; count_include_pad divides by 2.
  SimpleKernelContext padded("AveragePool", {Value(x)}, 1);
  padded.setInts("kernel_shape", {2});
  padded.setInts("strides", {2});
  padded.setInts("pads", {1, 1});
  padded.setInt("ceil_mode", 1);
  padded.setInt("count_include_pad", 1);
  ASSERT_TRUE(padded.run().ok());
  expectTensorNear(padded.outputTensor(0),
                   make(DType::Float32, {1, 1, 2}, {0.5, 2.5}));
}

TEST(ReferencePool, RejectsBadInput) {
  Tensor x = make(DType::Float32, {1, 1, 3}, {1, 2, 3});
  SimpleKernelContext noKernel("MaxPool", {Value(x)}, 1);
  Status status = noKernel.run();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "MaxPool: needs kernel_shape");
  SimpleKernelContext tooLarge("AveragePool", {Value(x)}, 1);
  tooLarge.setInts("kernel_shape", {4});
  EXPECT_FALSE(tooLarge.run().ok());
  Tensor ints = make(DType::Int32, {1, 1, 3}, {1, 2, 3});
  SimpleKernelContext type("GlobalAveragePool", {Value(ints)}, 1);
  EXPECT_FALSE(type.run().ok());
}

// ONNX backend test test_maxpool_with_argmax_2d_precomputed_strides.
TEST(ReferencePoolOnnx, MaxpoolWithArgmax2dPrecomputedStrides) {
  SimpleKernelContext context(
      "MaxPool",
      {Value(make(DType::Float32, {1, 1, 5, 5},
                  {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                   14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25}))},
      2);
  context.setInts("kernel_shape", {2, 2});
  context.setInt("storage_order", 1);
  context.setInts("strides", {2, 2});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 1, 2, 2}, {7, 9, 17, 19}));
  expectTensorNear(context.outputTensor(1),
                   make(DType::Int64, {1, 1, 2, 2}, {6, 16, 8, 18}));
}

// ONNX backend test test_maxpool_with_argmax_2d_precomputed_pads.
TEST(ReferencePoolOnnx, MaxpoolWithArgmax2dPrecomputedPads) {
  SimpleKernelContext context(
      "MaxPool",
      {Value(make(DType::Float32, {1, 1, 5, 5},
                  {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                   14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25}))},
      2);
  context.setInts("kernel_shape", {5, 5});
  context.setInts("pads", {2, 2, 2, 2});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 1, 5, 5},
                        {13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25,
                         25, 25, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25}));
  expectTensorNear(context.outputTensor(1),
                   make(DType::Int64, {1, 1, 5, 5},
                        {12, 13, 14, 14, 14, 17, 18, 19, 19, 19, 22, 23, 24,
                         24, 24, 22, 23, 24, 24, 24, 22, 23, 24, 24, 24}));
}

// ONNX backend test test_maxpool_2d_ceil.
TEST(ReferencePoolOnnx, Maxpool2dCeil) {
  SimpleKernelContext context(
      "MaxPool",
      {Value(make(DType::Float32, {1, 1, 4, 4},
                  {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}))},
      1);
  context.setInt("ceil_mode", 1);
  context.setInts("kernel_shape", {3, 3});
  context.setInts("strides", {2, 2});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 1, 2, 2}, {11, 12, 15, 16}));
}

// ONNX backend test test_maxpool_2d_dilations.
TEST(ReferencePoolOnnx, Maxpool2dDilations) {
  SimpleKernelContext context(
      "MaxPool",
      {Value(make(DType::Float32, {1, 1, 4, 4},
                  {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}))},
      1);
  context.setInts("dilations", {2, 2});
  context.setInts("kernel_shape", {2, 2});
  context.setInts("strides", {1, 1});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 1, 2, 2}, {11, 12, 15, 16}));
}

// ONNX backend test test_maxpool_2d_precomputed_same_upper.
TEST(ReferencePoolOnnx, Maxpool2dPrecomputedSameUpper) {
  SimpleKernelContext context(
      "MaxPool",
      {Value(make(DType::Float32, {1, 1, 5, 5},
                  {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                   14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25}))},
      1);
  context.setString("auto_pad", "SAME_UPPER");
  context.setInts("kernel_shape", {3, 3});
  context.setInts("strides", {2, 2});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {1, 1, 3, 3}, {7, 9, 10, 17, 19, 20, 22, 24, 25}));
}

// ONNX backend test test_averagepool_2d_precomputed_pads_count_include_pad.
TEST(ReferencePoolOnnx, Averagepool2dPrecomputedPadsCountIncludePad) {
  SimpleKernelContext context(
      "AveragePool",
      {Value(make(DType::Float32, {1, 1, 5, 5},
                  {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                   14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25}))},
      1);
  context.setInt("count_include_pad", 1);
  context.setInts("kernel_shape", {5, 5});
  context.setInts("pads", {2, 2, 2, 2});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {1, 1, 5, 5},
           {2.51999998, 3.5999999,  4.80000019, 4.07999992, 3.24000001,
            4.55999994, 6.4000001,  8.39999962, 7.03999996, 5.51999998,
            7.19999981, 10,         13,         10.8000002, 8.39999962,
            6.96000004, 9.60000038, 12.3999996, 10.2399998, 7.92000008,
            6.11999989, 8.39999962, 10.8000002, 8.88000011, 6.84000015}));
}

// ONNX backend test test_averagepool_2d_precomputed_same_upper.
TEST(ReferencePoolOnnx, Averagepool2dPrecomputedSameUpper) {
  SimpleKernelContext context(
      "AveragePool",
      {Value(make(DType::Float32, {1, 1, 5, 5},
                  {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                   14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25}))},
      1);
  context.setString("auto_pad", "SAME_UPPER");
  context.setInts("kernel_shape", {3, 3});
  context.setInts("strides", {2, 2});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 1, 3, 3},
                        {4, 5.5, 7, 11.5, 13, 14.5, 19, 20.5, 22}));
}

// ONNX backend test test_averagepool_2d_ceil.
TEST(ReferencePoolOnnx, Averagepool2dCeil) {
  SimpleKernelContext context(
      "AveragePool",
      {Value(make(DType::Float32, {1, 1, 4, 4},
                  {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}))},
      1);
  context.setInt("ceil_mode", 1);
  context.setInts("kernel_shape", {3, 3});
  context.setInts("strides", {2, 2});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 1, 2, 2}, {6, 7.5, 12, 13.5}));
}

// ONNX backend test test_averagepool_2d_precomputed_strides.
TEST(ReferencePoolOnnx, Averagepool2dPrecomputedStrides) {
  SimpleKernelContext context(
      "AveragePool",
      {Value(make(DType::Float32, {1, 1, 5, 5},
                  {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                   14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25}))},
      1);
  context.setInts("kernel_shape", {2, 2});
  context.setInts("strides", {2, 2});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 1, 2, 2}, {4, 6, 14, 16}));
}

// ONNX backend test test_globalaveragepool_precomputed.
TEST(ReferencePoolOnnx, GlobalaveragepoolPrecomputed) {
  SimpleKernelContext context(
      "GlobalAveragePool",
      {Value(make(DType::Float32, {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 1, 1, 1}, {5}));
}

// ONNX backend test test_globalmaxpool_precomputed.
TEST(ReferencePoolOnnx, GlobalmaxpoolPrecomputed) {
  SimpleKernelContext context(
      "GlobalMaxPool",
      {Value(make(DType::Float32, {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 1, 1, 1}, {9}));
}

// ONNX backend test test_maxpool_2d_uint8.
TEST(ReferencePoolOnnx, Maxpool2dUint8) {
  SimpleKernelContext context(
      "MaxPool",
      {Value(make(DType::UInt8, {1, 1, 5, 5},
                  {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                   14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25}))},
      1);
  context.setInts("kernel_shape", {5, 5});
  context.setInts("pads", {2, 2, 2, 2});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::UInt8, {1, 1, 5, 5},
                        {13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25,
                         25, 25, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25}));
}

// ONNX backend test test_maxunpool_export_with_output_shape.
TEST(ReferencePoolOnnx, MaxunpoolExportWithOutputShape) {
  SimpleKernelContext context(
      "MaxUnpool",
      {Value(make(DType::Float32, {1, 1, 2, 2}, {5, 6, 7, 8})),
       Value(make(DType::Int64, {1, 1, 2, 2}, {5, 7, 13, 15})),
       Value(make(DType::Int64, {4}, {1, 1, 5, 5}))},
      1);
  context.setInts("kernel_shape", {2, 2});
  context.setInts("strides", {2, 2});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {1, 1, 5, 5}, {0, 0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0,
                                          0, 0, 0, 7, 0, 8, 0, 0, 0, 0, 0, 0}));
}

// ONNX backend test test_maxunpool_export_without_output_shape.
TEST(ReferencePoolOnnx, MaxunpoolExportWithoutOutputShape) {
  SimpleKernelContext context(
      "MaxUnpool",
      {Value(make(DType::Float32, {1, 1, 2, 2}, {1, 2, 3, 4})),
       Value(make(DType::Int64, {1, 1, 2, 2}, {5, 7, 13, 15}))},
      1);
  context.setInts("kernel_shape", {2, 2});
  context.setInts("strides", {2, 2});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 1, 4, 4},
                        {0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4}));
}

} // namespace
