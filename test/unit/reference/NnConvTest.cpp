//===- NnConvTest.cpp - Conv and ConvTranspose ----------------------------===//
//
// ONNX backend test cases (expected values from ONNX's test data), plus
// hand-checked edge cases and comparisons against a direct loop over the
// definition for groups, dilations, strides and asymmetric pads.
//
//===----------------------------------------------------------------------===//

#include "NnTestUtil.h"

using namespace mncc::reference;
using namespace mncc::reference::nntest;

namespace {

/// Deterministic values in [-1, 1).
std::vector<double> pattern(int64_t count, int seed) {
  std::vector<double> values(count);
  uint32_t state = 2654435761u * (seed + 1);
  for (auto &value : values) {
    state = state * 1664525u + 1013904223u;
    value = (state >> 8) / double(1 << 23) - 1.0;
  }
  return values;
}

/// Conv straight from its definition, 2-D, for comparison.
std::vector<double>
directConv2d(const std::vector<double> &x, const std::vector<int64_t> &xs,
             const std::vector<double> &w, const std::vector<int64_t> &ws,
             const std::vector<double> &b, int64_t group,
             std::array<int64_t, 2> stride, std::array<int64_t, 2> dilation,
             std::array<int64_t, 4> pads, std::vector<int64_t> &outShape) {
  int64_t n = xs[0], c = xs[1], h = xs[2], wd = xs[3];
  int64_t m = ws[0], cg = ws[1], kh = ws[2], kw = ws[3];
  int64_t oh =
      (h + pads[0] + pads[2] - ((kh - 1) * dilation[0] + 1)) / stride[0] + 1;
  int64_t ow =
      (wd + pads[1] + pads[3] - ((kw - 1) * dilation[1] + 1)) / stride[1] + 1;
  outShape = {n, m, oh, ow};
  std::vector<double> out(n * m * oh * ow, 0);
  int64_t mg = m / group;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t om = 0; om < m; ++om)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x0 = 0; x0 < ow; ++x0) {
          double sum = b.empty() ? 0 : b[om];
          int64_t g = om / mg;
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                int64_t iy = y * stride[0] - pads[0] + ky * dilation[0];
                int64_t ix = x0 * stride[1] - pads[1] + kx * dilation[1];
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd)
                  continue;
                sum += x[((in * c + g * cg + ic) * h + iy) * wd + ix] *
                       w[((om * cg + ic) * kh + ky) * kw + kx];
              }
          out[((in * m + om) * oh + y) * ow + x0] = sum;
        }
  return out;
}

struct ConvCase {
  std::vector<int64_t> xShape, wShape;
  int64_t group;
  std::array<int64_t, 2> stride, dilation;
  std::array<int64_t, 4> pads;
  bool bias;
};

void checkAgainstDirect(const ConvCase &c, DType dtype, double tolerance) {
  int64_t xCount = c.xShape[0] * c.xShape[1] * c.xShape[2] * c.xShape[3];
  int64_t wCount = c.wShape[0] * c.wShape[1] * c.wShape[2] * c.wShape[3];
  std::vector<double> x = pattern(xCount, 1), w = pattern(wCount, 2);
  std::vector<double> b =
      c.bias ? pattern(c.wShape[0], 3) : std::vector<double>();
  std::vector<int64_t> outShape;
  std::vector<double> expected =
      directConv2d(x, c.xShape, w, c.wShape, b, c.group, c.stride, c.dilation,
                   c.pads, outShape);
  std::vector<Value> inputs = {Value(make(dtype, c.xShape, x)),
                               Value(make(dtype, c.wShape, w))};
  if (c.bias)
    inputs.push_back(Value(make(dtype, {c.wShape[0]}, b)));
  SimpleKernelContext context("Conv", inputs, 1);
  context.setInt("group", c.group);
  context.setInts("strides", {c.stride[0], c.stride[1]});
  context.setInts("dilations", {c.dilation[0], c.dilation[1]});
  context.setInts("pads", {c.pads[0], c.pads[1], c.pads[2], c.pads[3]});
  Status status = context.run();
  ASSERT_TRUE(status.ok()) << status.message();
  expectTensorNear(context.outputTensor(0), make(dtype, outShape, expected),
                   tolerance);
}

TEST(ReferenceConv, MatchesDefinitionWithGroupsDilationsStridesPads) {
  ConvCase cases[] = {
      {{2, 4, 7, 6}, {6, 2, 3, 2}, 2, {2, 1}, {1, 2}, {1, 0, 2, 1}, true},
      {{1, 3, 9, 9}, {5, 3, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, false},
      // Depthwise: one channel per group.
      {{1, 6, 8, 5}, {6, 1, 3, 3}, 6, {2, 2}, {1, 1}, {1, 1, 1, 1}, true},
      // 1x1 without padding: the input is used without unfolding.
      {{2, 5, 4, 3}, {7, 5, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true},
      // Large enough for the GEMM to split over threads.
      {{1, 64, 12, 12}, {160, 64, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
      // The unfolded input written into the GEMM's panels: output lines
      // that straddle panels, a partial last panel, strides 2 and 3,
      // dilations, several depth blocks, split along the output's
      // channels (more channels than positions) and along its positions.
      {{1, 16, 23, 29}, {24, 16, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
      {{1, 8, 40, 37}, {12, 8, 3, 3}, 1, {3, 2}, {2, 1}, {2, 1, 0, 3}, false},
      {{1, 8, 31, 45}, {20, 8, 5, 3}, 1, {2, 2}, {1, 1}, {2, 1, 2, 1}, true},
      {{1, 32, 9, 13}, {200, 32, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
      {{1, 80, 10, 11}, {64, 80, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
      {{1, 96, 7, 9}, {128, 96, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, false},
  };
  for (const ConvCase &c : cases) {
    checkAgainstDirect(c, DType::Float32, 1e-4);
    checkAgainstDirect(c, DType::Float64, 1e-12);
  }
  checkAgainstDirect(cases[0], DType::Float16, 2e-2);
}

TEST(ReferenceConv, DepthwiseDirectPathMatchesDefinition) {
  // group == C == M takes the direct depthwise kernel; cover borders wider
  // than the kernel, strides, dilations, asymmetric pads and more channels
  // than one thread chunk holds.
  ConvCase cases[] = {
      {{1, 3, 5, 5}, {3, 1, 3, 3}, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
      {{2, 4, 9, 7}, {4, 1, 3, 3}, 4, {2, 2}, {1, 1}, {1, 1, 1, 1}, false},
      {{1, 5, 10, 11}, {5, 1, 3, 3}, 5, {1, 2}, {2, 2}, {2, 0, 1, 3}, true},
      {{1, 2, 6, 8}, {2, 1, 5, 5}, 2, {3, 2}, {1, 1}, {2, 2, 2, 2}, true},
      {{1, 3, 4, 4}, {3, 1, 3, 3}, 3, {1, 1}, {1, 1}, {3, 3, 3, 3}, true},
      {{2, 3, 13, 17}, {3, 1, 3, 3}, 3, {3, 3}, {2, 1}, {1, 2, 0, 1}, true},
      {{1, 2, 20, 21}, {2, 1, 3, 3}, 2, {1, 2}, {1, 3}, {0, 0, 2, 2}, false},
      {{1, 7, 3, 12}, {7, 1, 1, 4}, 7, {1, 3}, {1, 2}, {0, 4, 0, 1}, false},
      {{1, 300, 6, 6}, {300, 1, 3, 3}, 300, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
  };
  for (const ConvCase &c : cases) {
    checkAgainstDirect(c, DType::Float32, 1e-5);
    checkAgainstDirect(c, DType::Float64, 1e-12);
  }
}

/// Constant weights are packed for the GEMM once, into the node's cache,
/// and later runs multiply with what the cache holds: the same bits as
/// packing them on every run.
TEST(ReferenceConv, ConstantWeightsArePackedOnceIntoTheNodeCache) {
  const std::vector<int64_t> xShape = {1, 8, 20, 20}, wShape = {16, 8, 3, 3};
  auto tensor = [](const std::vector<int64_t> &shape, int seed) {
    std::vector<double> values =
        pattern(shape[0] * shape[1] * shape[2] * shape[3], seed);
    return Value(make(DType::Float32, shape, values));
  };
  auto conv = [&](const Value &x, const Value &w, NodeCache *cache) {
    SimpleKernelContext context("Conv", {x, w}, 1);
    context.setInts("pads", {1, 1, 1, 1});
    if (cache)
      context.setConstantInputCache(1, cache);
    Status status = context.run();
    EXPECT_TRUE(status.ok()) << status.message();
    return context.outputTensor(0).toVector<float>();
  };
  Value x1 = tensor(xShape, 1), x2 = tensor(xShape, 2);
  Value w1 = tensor(wShape, 3), w2 = tensor(wShape, 4);
  NodeCache cache;
  EXPECT_EQ(conv(x1, w1, &cache), conv(x1, w1, nullptr));
  EXPECT_EQ(conv(x2, w1, &cache), conv(x2, w1, nullptr));
  // Given other weights (which a constant input never is), the kernel still
  // multiplies with the packed first ones: the cache is what it reads.
  EXPECT_EQ(conv(x2, w2, &cache), conv(x2, w1, nullptr));
  EXPECT_NE(conv(x2, w2, nullptr), conv(x2, w1, nullptr));
}

TEST(ReferenceConv, SamePaddingPutsTheOddUnitWhereAsked) {
  // 1-D, kernel [1, 1]: total padding 1, at the end for SAME_UPPER and at
  // the start for SAME_LOWER.
  Tensor x = make(DType::Float32, {1, 1, 4}, {1, 2, 3, 4});
  Tensor w = make(DType::Float32, {1, 1, 2}, {1, 1});
  SimpleKernelContext upper("Conv", {Value(x), Value(w)}, 1);
  upper.setString("auto_pad", "SAME_UPPER");
  ASSERT_TRUE(upper.run().ok());
  expectTensorNear(upper.outputTensor(0),
                   make(DType::Float32, {1, 1, 4}, {3, 5, 7, 4}));
  SimpleKernelContext lower("Conv", {Value(x), Value(w)}, 1);
  lower.setString("auto_pad", "SAME_LOWER");
  ASSERT_TRUE(lower.run().ok());
  expectTensorNear(lower.outputTensor(0),
                   make(DType::Float32, {1, 1, 4}, {1, 3, 5, 7}));
  SimpleKernelContext valid("Conv", {Value(x), Value(w)}, 1);
  valid.setString("auto_pad", "VALID");
  ASSERT_TRUE(valid.run().ok());
  expectTensorNear(valid.outputTensor(0),
                   make(DType::Float32, {1, 1, 3}, {3, 5, 7}));
}

TEST(ReferenceConv, ThreeDimensional) {
  // A 2x2x2 all-ones kernel sums each 2x2x2 block of 0..26 (3x3x3).
  std::vector<double> x(27);
  for (int i = 0; i < 27; ++i)
    x[i] = i;
  SimpleKernelContext context(
      "Conv",
      {Value(make(DType::Float64, {1, 1, 3, 3, 3}, x)),
       Value(make(DType::Float64, {1, 1, 2, 2, 2}, std::vector<double>(8, 1)))},
      1);
  ASSERT_TRUE(context.run().ok());
  // Block at (d, h, w) sums 8 * (9d + 3h + w) + (0+1+3+4+9+10+12+13).
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float64, {1, 1, 2, 2, 2},
                        {52, 60, 76, 84, 124, 132, 148, 156}));
}

TEST(ReferenceConv, RejectsBadInputWithTheOperatorName) {
  Tensor x = make(DType::Float32, {1, 3, 4, 4}, std::vector<double>(48, 1));
  Tensor w = make(DType::Float32, {2, 2, 3, 3}, std::vector<double>(36, 1));
  SimpleKernelContext channels("Conv", {Value(x), Value(w)}, 1);
  Status status = channels.run();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind("Conv: ", 0), 0u) << status.message();
  Tensor ints = make(DType::Int32, {1, 1, 2, 2}, {1, 2, 3, 4});
  SimpleKernelContext type("Conv", {Value(ints), Value(ints)}, 1);
  EXPECT_FALSE(type.run().ok());
  Tensor w3 = make(DType::Float32, {1, 3, 5, 5}, std::vector<double>(75, 1));
  SimpleKernelContext large("Conv", {Value(x), Value(w3)}, 1);
  EXPECT_FALSE(large.run().ok()); // the kernel exceeds the input
}

TEST(ReferenceConvTranspose, GroupsAndBiasMatchTheScatterDefinition) {
  // Each input element scatters W[c, m] * x into the output window at
  // (i * stride - pad + k * dilation).
  int64_t c = 4, group = 2, mg = 3, h = 3, wd = 4, kh = 2, kw = 3;
  std::array<int64_t, 2> stride{2, 1}, dil{1, 2};
  std::array<int64_t, 4> pads{1, 0, 0, 2};
  std::vector<double> x = pattern(c * h * wd, 4),
                      w = pattern(c * mg * kh * kw, 5),
                      b = pattern(group * mg, 6);
  int64_t oh = stride[0] * (h - 1) + (kh - 1) * dil[0] + 1 - pads[0] - pads[2];
  int64_t ow = stride[1] * (wd - 1) + (kw - 1) * dil[1] + 1 - pads[1] - pads[3];
  int64_t m = group * mg;
  std::vector<double> expected(m * oh * ow);
  for (int64_t om = 0; om < m; ++om)
    for (int64_t i = 0; i < oh * ow; ++i)
      expected[om * oh * ow + i] = b[om];
  for (int64_t ic = 0; ic < c; ++ic) {
    int64_t g = ic / (c / group);
    for (int64_t j = 0; j < mg; ++j)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x0 = 0; x0 < wd; ++x0)
          for (int64_t ky = 0; ky < kh; ++ky)
            for (int64_t kx = 0; kx < kw; ++kx) {
              int64_t py = y * stride[0] - pads[0] + ky * dil[0];
              int64_t px = x0 * stride[1] - pads[1] + kx * dil[1];
              if (py < 0 || py >= oh || px < 0 || px >= ow)
                continue;
              expected[((g * mg + j) * oh + py) * ow + px] +=
                  x[(ic * h + y) * wd + x0] *
                  w[((ic * mg + j) * kh + ky) * kw + kx];
            }
  }
  SimpleKernelContext context("ConvTranspose",
                              {Value(make(DType::Float32, {1, c, h, wd}, x)),
                               Value(make(DType::Float32, {c, mg, kh, kw}, w)),
                               Value(make(DType::Float32, {m}, b))},
                              1);
  context.setInt("group", group);
  context.setInts("strides", {stride[0], stride[1]});
  context.setInts("dilations", {dil[0], dil[1]});
  context.setInts("pads", {pads[0], pads[1], pads[2], pads[3]});
  Status status = context.run();
  ASSERT_TRUE(status.ok()) << status.message();
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, m, oh, ow}, expected), 1e-5);
}

// ONNX backend test test_conv_with_strides_and_asymmetric_padding.
TEST(ReferenceConvOnnx, ConvWithStridesAndAsymmetricPadding) {
  SimpleKernelContext context(
      "Conv",
      {Value(make(DType::Float32, {1, 1, 7, 5},
                  {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                   12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
                   24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34})),
       Value(make(DType::Float32, {1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1}))},
      1);
  context.setInts("kernel_shape", {3, 3});
  context.setInts("pads", {1, 0, 1, 0});
  context.setInts("strides", {2, 2});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 1, 4, 2},
                        {21, 33, 99, 117, 189, 207, 171, 183}));
}

// ONNX backend test test_conv_with_autopad_same.
TEST(ReferenceConvOnnx, ConvWithAutopadSame) {
  SimpleKernelContext context(
      "Conv",
      {Value(make(DType::Float32, {1, 1, 5, 5},
                  {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                   13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24})),
       Value(make(DType::Float32, {1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1}))},
      1);
  context.setString("auto_pad", "SAME_LOWER");
  context.setInts("kernel_shape", {3, 3});
  context.setInts("strides", {2, 2});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 1, 3, 3},
                        {12, 27, 24, 63, 108, 81, 72, 117, 84}));
}

// ONNX backend test test_basic_conv_with_padding.
TEST(ReferenceConvOnnx, BasicConvWithPadding) {
  SimpleKernelContext context(
      "Conv",
      {Value(make(DType::Float32, {1, 1, 5, 5},
                  {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                   13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24})),
       Value(make(DType::Float32, {1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1}))},
      1);
  context.setInts("kernel_shape", {3, 3});
  context.setInts("pads", {1, 1, 1, 1});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {1, 1, 5, 5},
           {12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
            117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84}));
}

// ONNX backend test test_conv_with_strides_padding.
TEST(ReferenceConvOnnx, ConvWithStridesPadding) {
  SimpleKernelContext context(
      "Conv",
      {Value(make(DType::Float32, {1, 1, 7, 5},
                  {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                   12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
                   24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34})),
       Value(make(DType::Float32, {1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1}))},
      1);
  context.setInts("kernel_shape", {3, 3});
  context.setInts("pads", {1, 1, 1, 1});
  context.setInts("strides", {2, 2});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0), make(DType::Float32, {1, 1, 4, 3},
                                                 {12, 27, 24, 63, 108, 81, 123,
                                                  198, 141, 112, 177, 124}));
}

// ONNX backend test test_convtranspose_output_shape.
TEST(ReferenceConvOnnx, ConvtransposeOutputShape) {
  SimpleKernelContext context(
      "ConvTranspose",
      {Value(make(DType::Float32, {1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8})),
       Value(make(DType::Float32, {1, 2, 3, 3},
                  {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}))},
      1);
  context.setInts("output_shape", {10, 8});
  context.setInts("strides", {3, 2});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {1, 2, 10, 8},
           {0,  0, 1, 1, 3, 2, 2,  0, 0,  0, 1,  1, 3,  2, 2, 0, 0, 0, 1,  1,
            3,  2, 2, 0, 3, 3, 7,  4, 9,  5, 5,  0, 3,  3, 7, 4, 9, 5, 5,  0,
            3,  3, 7, 4, 9, 5, 5,  0, 6,  6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7,
            15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8,  0, 0,  0, 0, 0, 0, 0, 0,  0,
            0,  0, 1, 1, 3, 2, 2,  0, 0,  0, 1,  1, 3,  2, 2, 0, 0, 0, 1,  1,
            3,  2, 2, 0, 3, 3, 7,  4, 9,  5, 5,  0, 3,  3, 7, 4, 9, 5, 5,  0,
            3,  3, 7, 4, 9, 5, 5,  0, 6,  6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7,
            15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8,  0, 0,  0, 0, 0, 0, 0, 0,  0}));
}

// ONNX backend test test_convtranspose_autopad_same.
TEST(ReferenceConvOnnx, ConvtransposeAutopadSame) {
  SimpleKernelContext context(
      "ConvTranspose",
      {Value(make(DType::Float32, {1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8})),
       Value(make(DType::Float32, {1, 2, 3, 3},
                  {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}))},
      1);
  context.setString("auto_pad", "SAME_UPPER");
  context.setInts("strides", {2, 2});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {1, 2, 6, 6},
           {0, 0, 1, 1, 3, 2, 0, 0, 1,  1,  3,  2,  3, 3, 8,  5, 12, 7,
            3, 3, 7, 4, 9, 5, 9, 9, 20, 11, 24, 13, 6, 6, 13, 7, 15, 8,
            0, 0, 1, 1, 3, 2, 0, 0, 1,  1,  3,  2,  3, 3, 8,  5, 12, 7,
            3, 3, 7, 4, 9, 5, 9, 9, 20, 11, 24, 13, 6, 6, 13, 7, 15, 8}));
}

// ONNX backend test test_convtranspose_dilations.
TEST(ReferenceConvOnnx, ConvtransposeDilations) {
  SimpleKernelContext context(
      "ConvTranspose",
      {Value(make(DType::Float32, {1, 1, 3, 3}, {3, 8, 1, 9, 5, 7, 3, 2, 6})),
       Value(make(DType::Float32, {1, 1, 2, 2}, {7, 2, 1, 9}))},
      1);
  context.setInts("dilations", {2, 2});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 1, 5, 5},
                        {21, 56, 13, 16, 2,  63, 35, 67, 10, 14, 24, 22, 76,
                         76, 21, 9,  5,  88, 45, 63, 3,  2,  33, 18, 54}));
}

// ONNX backend test test_convtranspose_pads.
TEST(ReferenceConvOnnx, ConvtransposePads) {
  SimpleKernelContext context(
      "ConvTranspose",
      {Value(make(DType::Float32, {1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8})),
       Value(make(DType::Float32, {1, 2, 3, 3},
                  {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}))},
      1);
  context.setInts("pads", {1, 2, 1, 2});
  context.setInts("strides", {3, 2});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 2, 7, 3},
                        {1, 1,  3, 1,  1,  3, 7,  4, 9,  7, 4,  9,  7, 4,
                         9, 13, 7, 15, 13, 7, 15, 1, 1,  3, 1,  1,  3, 7,
                         4, 9,  7, 4,  9,  7, 4,  9, 13, 7, 15, 13, 7, 15}));
}

// ONNX backend test test_convtranspose_1d.
TEST(ReferenceConvOnnx, Convtranspose1d) {
  SimpleKernelContext context(
      "ConvTranspose",
      {Value(make(DType::Float32, {1, 1, 3}, {0, 1, 2})),
       Value(make(DType::Float32, {1, 2, 3}, {1, 1, 1, 1, 1, 1}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {1, 2, 5}, {0, 1, 3, 3, 2, 0, 1, 3, 3, 2}));
}

} // namespace
