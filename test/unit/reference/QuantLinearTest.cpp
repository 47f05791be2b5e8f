//===- QuantLinearTest.cpp - Linear quantization operators ----------------===//
//
// ONNX backend test cases (expected values from ONNX's test data) plus
// hand-derived cases: round-half-to-even, saturation, per-axis and per-row
// zero points, the all-zero input of DynamicQuantizeLinear, and errors.
//
//===----------------------------------------------------------------------===//

#include "NnTestUtil.h"

using namespace mncc::reference;
using namespace mncc::reference::nntest;

namespace {

TEST(ReferenceQuant, QuantizeRoundsHalfToEvenAndSaturates) {
  Tensor x = make(DType::Float32, {6}, {1, 3, 5, -3, 1000, -1000});
  SimpleKernelContext context("QuantizeLinear",
                              {Value(x), Value(make(DType::Float32, {}, {2})),
                               Value(make(DType::Int8, {}, {0}))},
                              1);
  ASSERT_TRUE(context.run().ok());
  // 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -1.5 -> -2; then int8 saturation.
  expectTensorNear(context.outputTensor(0),
                   make(DType::Int8, {6}, {0, 2, 2, -2, 127, -128}), 0);
  // Without a zero point the output is uint8.
  SimpleKernelContext noZero(
      "QuantizeLinear", {Value(x), Value(make(DType::Float32, {}, {2}))}, 1);
  ASSERT_TRUE(noZero.run().ok());
  expectTensorNear(noZero.outputTensor(0),
                   make(DType::UInt8, {6}, {0, 2, 2, 0, 255, 0}), 0);
}

TEST(ReferenceQuant, PerAxisDequantizeOnTheLastAxis) {
  Tensor x = make(DType::UInt8, {2, 2}, {10, 20, 30, 40});
  SimpleKernelContext context("DequantizeLinear",
                              {Value(x),
                               Value(make(DType::Float32, {2}, {0.5, 2})),
                               Value(make(DType::UInt8, {2}, {10, 0}))},
                              1);
  context.setInt("axis", -1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {2, 2}, {0, 40, 10, 80}));
  SimpleKernelContext bad(
      "DequantizeLinear",
      {Value(x), Value(make(DType::Float32, {3}, {1, 1, 1}))}, 1);
  Status status = bad.run();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind("DequantizeLinear: ", 0), 0u);
}

TEST(ReferenceQuant, DynamicQuantizeOfZerosHasZeroScale) {
  SimpleKernelContext context("DynamicQuantizeLinear",
                              {Value(make(DType::Float32, {3}, {0, 0, 0}))}, 3);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0), make(DType::UInt8, {3}, {0, 0, 0}),
                   0);
  expectTensorNear(context.outputTensor(1), make(DType::Float32, {}, {0}), 0);
  expectTensorNear(context.outputTensor(2), make(DType::UInt8, {}, {0}), 0);
}

TEST(ReferenceQuant, MatMulIntegerPerRowAndPerColumnZeroPoints) {
  // (A - [1; 2]) * (B - [0, 3]) with A = [[2, 3], [4, 5]], B = [[1, 4], [2,
  // 5]].
  SimpleKernelContext context("MatMulInteger",
                              {Value(make(DType::UInt8, {2, 2}, {2, 3, 4, 5})),
                               Value(make(DType::Int8, {2, 2}, {1, 4, 2, 5})),
                               Value(make(DType::UInt8, {2}, {1, 2})),
                               Value(make(DType::Int8, {2}, {0, 3}))},
                              1);
  ASSERT_TRUE(context.run().ok());
  // [[1, 2], [2, 3]] * [[1, 1], [2, 2]].
  expectTensorNear(context.outputTensor(0),
                   make(DType::Int32, {2, 2}, {5, 5, 8, 8}), 0);
  SimpleKernelContext floats("MatMulInteger",
                             {Value(make(DType::Float32, {1, 1}, {1})),
                              Value(make(DType::Float32, {1, 1}, {1}))},
                             1);
  EXPECT_FALSE(floats.run().ok());
}

TEST(ReferenceQuant, QLinearConvPerChannelScalesAndBias) {
  // 1x1 conv of x = [2, 4] (zero point 0, scale 1) with two output
  // channels of weight 1 and scales 0.5 and 1.5, bias [1, -2], y scale 1.
  SimpleKernelContext context("QLinearConv",
                              {Value(make(DType::UInt8, {1, 1, 1, 2}, {2, 4})),
                               Value(make(DType::Float32, {}, {1})),
                               Value(make(DType::UInt8, {}, {0})),
                               Value(make(DType::Int8, {2, 1, 1, 1}, {1, 1})),
                               Value(make(DType::Float32, {2}, {0.5, 1.5})),
                               Value(make(DType::Int8, {2}, {0, 0})),
                               Value(make(DType::Float32, {}, {1})),
                               Value(make(DType::UInt8, {}, {10})),
                               Value(make(DType::Int32, {2}, {1, -2}))},
                              1);
  ASSERT_TRUE(context.run().ok());
  // Channel 0: (x + 1) * 0.5 -> 1.5, 2.5 -> 2, 2 (half to even), + 10.
  // Channel 1: (x - 2) * 1.5 -> 0, 3, + 10.
  expectTensorNear(context.outputTensor(0),
                   make(DType::UInt8, {1, 2, 1, 2}, {12, 12, 10, 13}), 0);
}

// ONNX backend test test_quantizelinear.
TEST(ReferenceQuantOnnx, Quantizelinear) {
  SimpleKernelContext context(
      "QuantizeLinear",
      {Value(make(DType::Float32, {6}, {0, 2, 3, 1000, -254, -1000})),
       Value(make(DType::Float32, {}, {2})),
       Value(make(DType::UInt8, {}, {128}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::UInt8, {6}, {128, 129, 130, 255, 1, 0}));
}

// ONNX backend test test_quantizelinear_axis.
TEST(ReferenceQuantOnnx, QuantizelinearAxis) {
  SimpleKernelContext context(
      "QuantizeLinear",
      {Value(make(DType::Float32, {1, 3, 3, 2},
                  {-162, 10, -100, 232, -20, -50, -76, 0, 0, 252, 32, -44, 245,
                   -485, -960, -270, -375, -470})),
       Value(make(DType::Float32, {3}, {2, 4, 5})),
       Value(make(DType::UInt8, {3}, {84, 24, 196}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::UInt8, {1, 3, 3, 2},
                        {3, 89, 34, 200, 74, 59, 5, 24, 24, 87, 32, 13, 245, 99,
                         4, 142, 121, 102}));
}

// ONNX backend test test_dequantizelinear.
TEST(ReferenceQuantOnnx, Dequantizelinear) {
  SimpleKernelContext context("DequantizeLinear",
                              {Value(make(DType::UInt8, {4}, {0, 3, 128, 255})),
                               Value(make(DType::Float32, {}, {2})),
                               Value(make(DType::UInt8, {}, {128}))},
                              1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {4}, {-256, -250, 0, 254}));
}

// ONNX backend test test_dequantizelinear_axis.
TEST(ReferenceQuantOnnx, DequantizelinearAxis) {
  SimpleKernelContext context(
      "DequantizeLinear",
      {Value(make(DType::UInt8, {1, 3, 3, 2},
                  {3, 89, 34, 200, 74, 59, 5, 24, 24, 87, 32, 13, 245, 99, 4,
                   142, 121, 102})),
       Value(make(DType::Float32, {3}, {2, 4, 5})),
       Value(make(DType::UInt8, {3}, {84, 24, 196}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {1, 3, 3, 2},
                        {-162, 10, -100, 232, -20, -50, -76, 0, 0, 252, 32, -44,
                         245, -485, -960, -270, -375, -470}));
}

// ONNX backend test test_dynamicquantizelinear.
TEST(ReferenceQuantOnnx, Dynamicquantizelinear) {
  SimpleKernelContext context(
      "DynamicQuantizeLinear",
      {Value(make(DType::Float32, {6}, {0, 2, -3, -2.5, 1.34000003, 0.5}))}, 3);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::UInt8, {6}, {153, 255, 0, 26, 221, 179}));
  expectTensorNear(context.outputTensor(1),
                   make(DType::Float32, {}, {0.0196078438}));
  expectTensorNear(context.outputTensor(2), make(DType::UInt8, {}, {153}));
}

// ONNX backend test test_dynamicquantizelinear_max_adjusted.
TEST(ReferenceQuantOnnx, DynamicquantizelinearMaxAdjusted) {
  SimpleKernelContext context(
      "DynamicQuantizeLinear",
      {Value(make(DType::Float32, {6},
                  {-1, -2.0999999, -1.29999995, -2.5, -3.33999991, -4}))},
      3);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::UInt8, {6}, {191, 121, 172, 96, 42, 0}));
  expectTensorNear(context.outputTensor(1),
                   make(DType::Float32, {}, {0.0156862754}));
  expectTensorNear(context.outputTensor(2), make(DType::UInt8, {}, {255}));
}

// ONNX backend test test_dynamicquantizelinear_min_adjusted.
TEST(ReferenceQuantOnnx, DynamicquantizelinearMinAdjusted) {
  SimpleKernelContext context(
      "DynamicQuantizeLinear",
      {Value(make(DType::Float32, {3, 4},
                  {1, 2.0999999, 1.29999995, 2.5, 3.33999991, 4, 1.5, 2.5999999,
                   3.9000001, 4, 3, 2.34500003}))},
      3);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::UInt8, {3, 4},
           {64, 134, 83, 159, 213, 255, 96, 166, 249, 255, 191, 149}));
  expectTensorNear(context.outputTensor(1),
                   make(DType::Float32, {}, {0.0156862754}));
  expectTensorNear(context.outputTensor(2), make(DType::UInt8, {}, {0}));
}

// ONNX backend test test_matmulinteger.
TEST(ReferenceQuantOnnx, Matmulinteger) {
  SimpleKernelContext context(
      "MatMulInteger",
      {Value(
           make(DType::UInt8, {4, 3}, {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0})),
       Value(make(DType::UInt8, {3, 2}, {1, 4, 2, 5, 3, 6})),
       Value(make(DType::UInt8, {1}, {12})),
       Value(make(DType::UInt8, {1}, {0}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Int32, {4, 2}, {-38, -83, -44, -98, -50, -113, -56, -128}));
}

// ONNX backend test test_convinteger_with_padding.
TEST(ReferenceQuantOnnx, ConvintegerWithPadding) {
  SimpleKernelContext context(
      "ConvInteger",
      {Value(make(DType::UInt8, {1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10})),
       Value(make(DType::UInt8, {1, 1, 2, 2}, {1, 1, 1, 1})),
       Value(make(DType::UInt8, {}, {1}))},
      1);
  context.setInts("pads", {1, 1, 1, 1});
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0), make(DType::Int32, {1, 1, 4, 4},
                                                 {1, 3, 5, 3, 5, 12, 16, 9, 11,
                                                  24, 28, 15, 7, 15, 17, 9}));
}

// ONNX backend test test_basic_convinteger.
TEST(ReferenceQuantOnnx, BasicConvinteger) {
  SimpleKernelContext context(
      "ConvInteger",
      {Value(make(DType::UInt8, {1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10})),
       Value(make(DType::UInt8, {1, 1, 2, 2}, {1, 1, 1, 1})),
       Value(make(DType::UInt8, {}, {1}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Int32, {1, 1, 2, 2}, {12, 16, 24, 28}));
}

// ONNX backend test test_qlinearmatmul_2D.
TEST(ReferenceQuantOnnx, Qlinearmatmul2d) {
  SimpleKernelContext context(
      "QLinearMatMul",
      {Value(make(DType::UInt8, {2, 4}, {208, 236, 0, 238, 3, 214, 255, 29})),
       Value(make(DType::Float32, {1}, {0.00659999996})),
       Value(make(DType::UInt8, {1}, {113})),
       Value(make(DType::UInt8, {4, 3},
                  {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247})),
       Value(make(DType::Float32, {1}, {0.00705000013})),
       Value(make(DType::UInt8, {1}, {114})),
       Value(make(DType::Float32, {1}, {0.0107000005})),
       Value(make(DType::UInt8, {1}, {118}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::UInt8, {2, 3}, {168, 115, 255, 1, 66, 151}));
}

// ONNX backend test test_qlinearmatmul_3D.
TEST(ReferenceQuantOnnx, Qlinearmatmul3d) {
  SimpleKernelContext context(
      "QLinearMatMul",
      {Value(make(DType::UInt8, {2, 2, 4},
                  {208, 236, 0, 238, 3, 214, 255, 29, 208, 236, 0, 238, 3, 214,
                   255, 29})),
       Value(make(DType::Float32, {1}, {0.00659999996})),
       Value(make(DType::UInt8, {1}, {113})),
       Value(make(DType::UInt8, {2, 4, 3},
                  {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247,
                   152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247})),
       Value(make(DType::Float32, {1}, {0.00705000013})),
       Value(make(DType::UInt8, {1}, {114})),
       Value(make(DType::Float32, {1}, {0.0107000005})),
       Value(make(DType::UInt8, {1}, {118}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0), make(DType::UInt8, {2, 2, 3},
                                                 {168, 115, 255, 1, 66, 151,
                                                  168, 115, 255, 1, 66, 151}));
}

// ONNX backend test test_qlinearconv.
TEST(ReferenceQuantOnnx, Qlinearconv) {
  SimpleKernelContext context(
      "QLinearConv",
      {Value(make(DType::UInt8, {1, 1, 7, 7},
                  {255, 174, 162, 25,  203, 168, 58,  15,  59,  237,
                   95,  129, 0,   64,  56,  242, 153, 221, 168, 12,
                   166, 232, 178, 186, 195, 237, 162, 237, 188, 39,
                   124, 77,  80,  102, 43,  127, 230, 21,  83,  41,
                   40,  134, 255, 154, 92,  141, 42,  148, 247})),
       Value(make(DType::Float32, {}, {0.00369204697})),
       Value(make(DType::UInt8, {}, {132})),
       Value(make(DType::UInt8, {1, 1, 1, 1}, {0})),
       Value(make(DType::Float32, {1}, {0.00172794575})),
       Value(make(DType::UInt8, {1}, {255})),
       Value(make(DType::Float32, {}, {0.00162681262})),
       Value(make(DType::UInt8, {}, {123}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::UInt8, {1, 1, 7, 7},
           {0,   81,  93,  230, 52,  87,  197, 240, 196, 18,  160, 126, 255,
            191, 199, 13,  102, 34,  87,  243, 89,  23,  77,  69,  60,  18,
            93,  18,  67,  216, 131, 178, 175, 153, 212, 128, 25,  234, 172,
            214, 215, 121, 0,   101, 163, 114, 213, 107, 8}));
}

} // namespace
