//===- ElementwiseUnaryTest.cpp - Unary elementwise kernels ---------------===//

#include "mncc/reference/SimpleContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace mncc::reference;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Tensor f32(std::vector<int64_t> shape, std::vector<float> values) {
  return Tensor::fromVector<float>(DType::Float32, std::move(shape), values);
}

/// Runs `op` on one float tensor and returns the float results.
std::vector<float> runFloat(const std::string &op, std::vector<float> x,
                            SimpleKernelContext *attributes = nullptr) {
  int64_t n = x.size();
  SimpleKernelContext own(op, {Value(f32({n}, x))}, 1);
  SimpleKernelContext &context = attributes ? *attributes : own;
  Status status = context.run();
  EXPECT_TRUE(status.ok()) << status.message();
  if (!status.ok())
    return {};
  EXPECT_EQ(context.outputTensor(0).dtype(), DType::Float32);
  return context.outputTensor(0).toVector<float>();
}

void expectNear(const std::vector<float> &actual,
                const std::vector<float> &expected, float tolerance = 1e-6f) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(expected[i]))
      EXPECT_TRUE(std::isnan(actual[i])) << "at " << i;
    else if (std::isinf(expected[i]))
      EXPECT_EQ(actual[i], expected[i]) << "at " << i;
    else
      EXPECT_NEAR(actual[i], expected[i], tolerance) << "at " << i;
  }
}

TEST(ElementwiseUnary, RoundHalvesToEven) {
  // From ONNX's test_round.
  expectNear(
      runFloat("Round", {0.1f, 0.5f, 0.9f, 1.2f, 1.5f, 1.8f, 2.3f, 2.5f, 2.7f,
                         -1.1f, -1.5f, -1.9f, -2.2f, -2.5f, -2.8f}),
      {0, 0, 1, 1, 2, 2, 2, 2, 3, -1, -2, -2, -2, -2, -3});
}

TEST(ElementwiseUnary, FloorCeilAbsNegSign) {
  std::vector<float> x = {-1.5f, -0.0f, 2.25f, kNaN};
  expectNear(runFloat("Floor", x), {-2, 0, 2, kNaN});
  expectNear(runFloat("Ceil", x), {-1, 0, 3, kNaN});
  expectNear(runFloat("Abs", x), {1.5f, 0, 2.25f, kNaN});
  expectNear(runFloat("Neg", x), {1.5f, 0, -2.25f, kNaN});
  expectNear(runFloat("Sign", x), {-1, 0, 1, kNaN});
  expectNear(runFloat("Reciprocal", {4, -0.5f}), {0.25f, -2});
}

TEST(ElementwiseUnary, IntegerAbsNegSignWrap) {
  Tensor x = Tensor::fromVector<int8_t>(DType::Int8, {4}, {-128, -3, 0, 7});
  SimpleKernelContext abs("Abs", {Value(x)}, 1);
  ASSERT_TRUE(abs.run().ok());
  // |-128| does not fit in int8: two's complement wraps back to -128.
  EXPECT_EQ(abs.outputTensor(0).toVector<int8_t>(),
            (std::vector<int8_t>{-128, 3, 0, 7}));
  SimpleKernelContext neg("Neg", {Value(x)}, 1);
  ASSERT_TRUE(neg.run().ok());
  EXPECT_EQ(neg.outputTensor(0).toVector<int8_t>(),
            (std::vector<int8_t>{-128, 3, 0, -7}));
  Tensor u = Tensor::fromVector<uint16_t>(DType::UInt16, {3}, {0, 1, 65535});
  SimpleKernelContext sign("Sign", {Value(u)}, 1);
  ASSERT_TRUE(sign.run().ok());
  EXPECT_EQ(sign.outputTensor(0).toVector<uint16_t>(),
            (std::vector<uint16_t>{0, 1, 1}));
  // Neg is for signed types only.
  SimpleKernelContext negUnsigned("Neg", {Value(u)}, 1);
  Status status = negUnsigned.run();
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "Neg: element type uint16 is not supported");
}

TEST(ElementwiseUnary, MathFunctions) {
  std::vector<float> x = {0.5f, -0.25f};
  expectNear(runFloat("Sqrt", {4, 2, -1}), {2, std::sqrt(2.0f), kNaN});
  expectNear(runFloat("Exp", x), {std::exp(0.5f), std::exp(-0.25f)});
  expectNear(runFloat("Log", {1, 0, -1}), {0, -kInf, kNaN});
  expectNear(runFloat("Sin", x), {std::sin(0.5f), std::sin(-0.25f)});
  expectNear(runFloat("Cos", x), {std::cos(0.5f), std::cos(-0.25f)});
  expectNear(runFloat("Tan", x), {std::tan(0.5f), std::tan(-0.25f)});
  expectNear(runFloat("Asin", x), {std::asin(0.5f), std::asin(-0.25f)});
  expectNear(runFloat("Acos", x), {std::acos(0.5f), std::acos(-0.25f)});
  expectNear(runFloat("Atan", x), {std::atan(0.5f), std::atan(-0.25f)});
  expectNear(runFloat("Sinh", x), {std::sinh(0.5f), std::sinh(-0.25f)});
  expectNear(runFloat("Cosh", x), {std::cosh(0.5f), std::cosh(-0.25f)});
  // From ONNX's test_tanh_example; tanh saturates instead of overflowing.
  expectNear(runFloat("Tanh", {-1, 0, 1, 100, -100}),
             {-0.76159416f, 0, 0.76159416f, 1, -1});
  expectNear(runFloat("Asinh", x), {std::asinh(0.5f), std::asinh(-0.25f)});
  expectNear(runFloat("Acosh", {1, 2}), {0, std::acosh(2.0f)});
  expectNear(runFloat("Atanh", x), {std::atanh(0.5f), std::atanh(-0.25f)});
  // From ONNX's test_erf.
  expectNear(runFloat("Erf", {1.764052391f, -0.977277875f}),
             {0.987395286f, -0.833052754f});
}

TEST(ElementwiseUnary, Activations) {
  std::vector<float> x = {-2, -0.5f, 0, 1.5f, 4};
  expectNear(runFloat("Relu", x), {0, 0, 0, 1.5f, 4});
  expectNear(runFloat("Relu", {kNaN}), {kNaN});
  expectNear(runFloat("Sigmoid", {0, -100, 100}), {0.5f, 3.7200760e-44f, 1});
  expectNear(runFloat("HardSigmoid", x), {0.1f, 0.4f, 0.5f, 0.8f, 1});
  // From ONNX's test_hardswish.
  expectNear(runFloat("HardSwish", {1.764052391f, -0.977277875f, -4, 3}),
             {1.400673032f, -0.329460263f, 0, 3});
  expectNear(runFloat("LeakyRelu", x), {-0.02f, -0.005f, 0, 1.5f, 4});
  expectNear(runFloat("Elu", {-1, 2}), {std::exp(-1.0f) - 1, 2});
  expectNear(runFloat("Selu", {-1, 2}),
             {1.0507010f * 1.6732632f * (std::exp(-1.0f) - 1), 1.0507010f * 2});
  expectNear(runFloat("Celu", {-1, 2}), {std::exp(-1.0f) - 1, 2});
  expectNear(runFloat("ThresholdedRelu", {0.5f, 1, 1.5f}), {0, 0, 1.5f});
  // Softplus neither overflows for large x nor underflows for small x.
  expectNear(runFloat("Softplus", {0, 100, -100}),
             {std::log(2.0f), 100, 3.7200760e-44f});
  expectNear(runFloat("Softsign", {-3, 1}), {-0.75f, 0.5f});
  expectNear(runFloat("Mish", {1, -1}),
             {std::tanh(std::log1p(std::exp(1.0f))),
              -std::tanh(std::log1p(std::exp(-1.0f)))});
}

TEST(ElementwiseUnary, AttributesOverrideDefaults) {
  std::vector<float> x = {-2, -1, 0, 1, 2};
  SimpleKernelContext leaky("LeakyRelu", {Value(f32({5}, x))}, 1);
  leaky.setFloat("alpha", 0.1f);
  expectNear(runFloat("LeakyRelu", x, &leaky), {-0.2f, -0.1f, 0, 1, 2});
  // ONNX's test_shrink_soft: bias = lambd = 1.5.
  SimpleKernelContext shrink("Shrink", {Value(f32({5}, x))}, 1);
  shrink.setFloat("bias", 1.5f).setFloat("lambd", 1.5f);
  expectNear(runFloat("Shrink", x, &shrink), {-0.5f, 0, 0, 0, 0.5f});
  SimpleKernelContext celu("Celu", {Value(f32({1}, {-1}))}, 1);
  celu.setFloat("alpha", 2);
  expectNear(runFloat("Celu", {}, &celu), {2 * (std::exp(-0.5f) - 1)});
  SimpleKernelContext hard("HardSigmoid", {Value(f32({5}, x))}, 1);
  hard.setFloat("alpha", 0.5f).setFloat("beta", 0.6f);
  expectNear(runFloat("HardSigmoid", x, &hard), {0, 0.1f, 0.6f, 1, 1});
}

TEST(ElementwiseUnary, ShrinkOnIntegers) {
  Tensor x = Tensor::fromVector<int32_t>(DType::Int32, {5}, {-8, -4, 0, 4, 8});
  SimpleKernelContext context("Shrink", {Value(x)}, 1);
  context.setFloat("lambd", 4).setFloat("bias", 2.5f);
  ASSERT_TRUE(context.run().ok());
  // -8 + 2.5 = -5.5 and 8 - 2.5 = 5.5 truncate toward zero.
  EXPECT_EQ(context.outputTensor(0).toVector<int32_t>(),
            (std::vector<int32_t>{-5, 0, 0, 0, 5}));
}

TEST(ElementwiseUnary, PredicatesGiveBool) {
  Tensor x = f32({6}, {-1.7f, kNaN, kInf, -3.6f, -kInf, kInf});
  SimpleKernelContext isNaN("IsNaN", {Value(x)}, 1);
  ASSERT_TRUE(isNaN.run().ok());
  EXPECT_EQ(isNaN.outputTensor(0).dtype(), DType::Bool);
  EXPECT_EQ(isNaN.outputTensor(0).toVector<bool>(),
            (std::vector<bool>{false, true, false, false, false, false}));
  SimpleKernelContext isInf("IsInf", {Value(x)}, 1);
  ASSERT_TRUE(isInf.run().ok());
  EXPECT_EQ(isInf.outputTensor(0).toVector<bool>(),
            (std::vector<bool>{false, false, true, false, true, true}));
  // ONNX's test_isinf_negative.
  SimpleKernelContext negative("IsInf", {Value(x)}, 1);
  negative.setInt("detect_positive", 0);
  ASSERT_TRUE(negative.run().ok());
  EXPECT_EQ(negative.outputTensor(0).toVector<bool>(),
            (std::vector<bool>{false, false, false, false, true, false}));
  Tensor b = Tensor::fromVector<bool>(DType::Bool, {2}, {true, false});
  SimpleKernelContext notOp("Not", {Value(b)}, 1);
  ASSERT_TRUE(notOp.run().ok());
  EXPECT_EQ(notOp.outputTensor(0).toVector<bool>(),
            (std::vector<bool>{false, true}));
  SimpleKernelContext notFloat("Not", {Value(x)}, 1);
  EXPECT_FALSE(notFloat.run().ok());
}

TEST(ElementwiseUnary, HalfTypesComputeInFloatAndRoundOnce) {
  Tensor x(DType::Float16, {3});
  x.data<Float16>()[0] = Float16(2.0f);
  x.data<Float16>()[1] = Float16(3.0f);
  x.data<Float16>()[2] = Float16(-0.5f);
  SimpleKernelContext sqrt("Sqrt", {Value(x)}, 1);
  ASSERT_TRUE(sqrt.run().ok());
  const Tensor &y = sqrt.outputTensor(0);
  ASSERT_EQ(y.dtype(), DType::Float16);
  EXPECT_EQ(y.data<Float16>()[0].bits, Float16(std::sqrt(2.0f)).bits);
  EXPECT_EQ(y.data<Float16>()[1].bits, Float16(std::sqrt(3.0f)).bits);
  EXPECT_TRUE(std::isnan(float(y.data<Float16>()[2])));
  Tensor b(DType::BFloat16, {2});
  b.data<BFloat16>()[0] = BFloat16(-3.0f);
  b.data<BFloat16>()[1] = BFloat16(0.75f);
  SimpleKernelContext relu("Relu", {Value(b)}, 1);
  ASSERT_TRUE(relu.run().ok());
  EXPECT_EQ(relu.outputTensor(0).dtype(), DType::BFloat16);
  EXPECT_EQ(float(relu.outputTensor(0).data<BFloat16>()[0]), 0.0f);
  EXPECT_EQ(float(relu.outputTensor(0).data<BFloat16>()[1]), 0.75f);
}

TEST(ElementwiseUnary, ErfOnIntegersTruncates) {
  Tensor x = Tensor::fromVector<int64_t>(DType::Int64, {4}, {-9, -1, 0, 9});
  SimpleKernelContext context("Erf", {Value(x)}, 1);
  ASSERT_TRUE(context.run().ok());
  EXPECT_EQ(context.outputTensor(0).toVector<int64_t>(),
            (std::vector<int64_t>{-1, 0, 0, 1}));
}

TEST(ElementwiseUnary, ClipBoundsAreOptionalInputs) {
  Tensor x = f32({5}, {-6, -1, 0, 6, kNaN});
  // ONNX's test_clip_splitbounds, plus NaN passing through.
  SimpleKernelContext both(
      "Clip", {Value(x), Value(f32({}, {-5})), Value(f32({}, {5}))}, 1);
  ASSERT_TRUE(both.run().ok());
  expectNear(both.outputTensor(0).toVector<float>(), {-5, -1, 0, 5, kNaN});
  SimpleKernelContext maxOnly("Clip", {Value(x), Value(), Value(f32({}, {0}))},
                              1);
  maxOnly.omitInput(1);
  ASSERT_TRUE(maxOnly.run().ok());
  expectNear(maxOnly.outputTensor(0).toVector<float>(), {-6, -1, 0, 0, kNaN});
  // min > max: numpy's min(max(x, lo), hi) gives hi everywhere.
  SimpleKernelContext crossed(
      "Clip", {Value(x), Value(f32({}, {2})), Value(f32({}, {1}))}, 1);
  ASSERT_TRUE(crossed.run().ok());
  expectNear(crossed.outputTensor(0).toVector<float>(), {1, 1, 1, 1, kNaN});
  // ONNX's test_clip_default_int8_min: only a min, int8.
  Tensor i = Tensor::fromVector<int8_t>(DType::Int8, {3}, {-128, 5, 127});
  SimpleKernelContext int8(
      "Clip",
      {Value(i), Value(Tensor::fromVector<int8_t>(DType::Int8, {}, {0}))}, 1);
  ASSERT_TRUE(int8.run().ok());
  EXPECT_EQ(int8.outputTensor(0).toVector<int8_t>(),
            (std::vector<int8_t>{0, 5, 127}));
  // Bounds must have the input's type.
  SimpleKernelContext mixed(
      "Clip",
      {Value(x), Value(Tensor::fromVector<double>(DType::Float64, {}, {0.0}))},
      1);
  Status status = mixed.run();
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "Clip: bound type double differs from input type float");
}

TEST(ElementwiseUnary, MissingInputIsAnError) {
  SimpleKernelContext context("Exp", {Value(f32({1}, {0}))}, 1);
  context.omitInput(0);
  Status status = context.run();
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "Exp: input 0 is missing or not a tensor");
}

} // namespace
