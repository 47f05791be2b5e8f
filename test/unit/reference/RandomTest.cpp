//===- RandomTest.cpp - Random operators ----------------------------------===//
//
// ONNX fixes only the shape, element type and distribution of these; the
// tests check those, the attribute ranges, and determinism from the seed.
//
//===----------------------------------------------------------------------===//

#include "mncc/reference/SimpleContext.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mncc::reference;

namespace {

/// A context whose defaultSeed() is chosen by the test.
class SeededContext : public SimpleKernelContext {
public:
  SeededContext(std::string opType, std::vector<Value> inputs, uint64_t seed)
      : SimpleKernelContext(std::move(opType), std::move(inputs), 1),
        seed_(seed) {}
  uint64_t defaultSeed() const override { return seed_; }

private:
  uint64_t seed_;
};

std::vector<double> valuesOf(const Tensor &tensor) {
  std::vector<double> values;
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    values.push_back(tensor.elementAsDouble(i));
  return values;
}

TEST(ReferenceRandom, UniformHasItsShapeTypeAndRange) {
  SimpleKernelContext context("RandomUniform", {}, 1);
  context.setInts("shape", {100, 40})
      .setFloat("low", -2)
      .setFloat("high", 3)
      .setInt("dtype", static_cast<int64_t>(DType::Float64));
  ASSERT_TRUE(context.run().ok());
  const Tensor &result = context.outputTensor(0);
  EXPECT_EQ(result.dtype(), DType::Float64);
  EXPECT_EQ(result.shape(), (std::vector<int64_t>{100, 40}));
  double sum = 0;
  for (double value : valuesOf(result)) {
    EXPECT_GE(value, -2);
    EXPECT_LT(value, 3);
    sum += value;
  }
  // The mean of 4000 draws of U(-2, 3) is 0.5 within a few hundredths.
  EXPECT_NEAR(sum / 4000, 0.5, 0.1);
}

TEST(ReferenceRandom, NormalHasItsMeanAndScale) {
  SimpleKernelContext context("RandomNormal", {}, 1);
  context.setInts("shape", {10000}).setFloat("mean", 5).setFloat("scale", 2);
  ASSERT_TRUE(context.run().ok());
  const Tensor &result = context.outputTensor(0);
  EXPECT_EQ(result.dtype(), DType::Float32);
  double sum = 0, squares = 0;
  for (double value : valuesOf(result)) {
    ASSERT_TRUE(std::isfinite(value));
    sum += value;
    squares += value * value;
  }
  double mean = sum / 10000;
  double deviation = std::sqrt(squares / 10000 - mean * mean);
  EXPECT_NEAR(mean, 5, 0.1);
  EXPECT_NEAR(deviation, 2, 0.1);
}

TEST(ReferenceRandom, SeedsMakeItDeterministic) {
  auto draw = [](std::optional<float> seed, uint64_t fallback) {
    SeededContext context("RandomUniform", {}, fallback);
    context.setInts("shape", {8});
    if (seed)
      context.setFloat("seed", *seed);
    EXPECT_TRUE(context.run().ok());
    return valuesOf(context.outputTensor(0));
  };
  EXPECT_EQ(draw(1.0f, 0), draw(1.0f, 7)); // the attribute wins
  EXPECT_NE(draw(1.0f, 0), draw(1.5f, 0)); // fractional seeds differ
  EXPECT_EQ(draw(std::nullopt, 7), draw(std::nullopt, 7));
  EXPECT_NE(draw(std::nullopt, 7), draw(std::nullopt, 8));
}

TEST(ReferenceRandom, LikeTakesShapeAndTypeFromTheInput) {
  Tensor input(DType::Float16, {2, 3});
  SimpleKernelContext normal("RandomNormalLike", {Value(input)}, 1);
  ASSERT_TRUE(normal.run().ok());
  EXPECT_EQ(normal.outputTensor(0).dtype(), DType::Float16);
  EXPECT_EQ(normal.outputTensor(0).shape(), (std::vector<int64_t>{2, 3}));
  SimpleKernelContext uniform("RandomUniformLike", {Value(input)}, 1);
  uniform.setInt("dtype", static_cast<int64_t>(DType::Float32));
  ASSERT_TRUE(uniform.run().ok());
  EXPECT_EQ(uniform.outputTensor(0).dtype(), DType::Float32);
  SimpleKernelContext integer("RandomUniformLike",
                              {Value(Tensor(DType::Int32, {2}))}, 1);
  EXPECT_EQ(integer.run().message(),
            "RandomUniformLike: dtype int32 is not a floating type");
  SimpleKernelContext inverted("RandomUniform", {}, 1);
  inverted.setInts("shape", {1}).setFloat("low", 1).setFloat("high", 0);
  EXPECT_FALSE(inverted.run().ok());
  SimpleKernelContext shapeless("RandomNormal", {}, 1);
  EXPECT_EQ(shapeless.run().message(),
            "RandomNormal: the shape attribute is required");
}

TEST(ReferenceRandom, BernoulliFollowsItsProbabilities) {
  // test_bernoulli_seed-like: probabilities 0 and 1 are certain.
  std::vector<double> probabilities;
  for (int i = 0; i < 1000; ++i)
    probabilities.push_back(i % 3 == 0 ? 0.0 : i % 3 == 1 ? 1.0 : 0.25);
  Tensor input =
      Tensor::fromVector<double>(DType::Float64, {1000}, probabilities);
  SimpleKernelContext context("Bernoulli", {Value(input)}, 1);
  context.setFloat("seed", 0).setInt("dtype",
                                     static_cast<int64_t>(DType::Bool));
  ASSERT_TRUE(context.run().ok());
  const Tensor &result = context.outputTensor(0);
  EXPECT_EQ(result.dtype(), DType::Bool);
  int quarter = 0;
  for (int i = 0; i < 1000; ++i) {
    bool value = result.data<bool>()[i];
    if (i % 3 == 0)
      EXPECT_FALSE(value);
    else if (i % 3 == 1)
      EXPECT_TRUE(value);
    else
      quarter += value;
  }
  EXPECT_NEAR(quarter / 333.0, 0.25, 0.08);
  // Without dtype the output type is the input's.
  SimpleKernelContext same("Bernoulli", {Value(input)}, 1);
  ASSERT_TRUE(same.run().ok());
  EXPECT_EQ(same.outputTensor(0).dtype(), DType::Float64);
  EXPECT_EQ(same.outputTensor(0).data<double>()[1], 1.0);
}

TEST(ReferenceRandom, MultinomialDrawsClassIndices) {
  // Row 0 puts all its weight on class 2 (log-probabilities, -inf
  // elsewhere); row 1 splits evenly between classes 0 and 1.
  Tensor input = Tensor::fromVector<float>(
      DType::Float32, {2, 3}, {-INFINITY, -INFINITY, 0, 0, 0, -INFINITY});
  SimpleKernelContext context("Multinomial", {Value(input)}, 1);
  context.setInt("sample_size", 200);
  ASSERT_TRUE(context.run().ok());
  const Tensor &result = context.outputTensor(0);
  EXPECT_EQ(result.dtype(), DType::Int32);
  EXPECT_EQ(result.shape(), (std::vector<int64_t>{2, 200}));
  int ones = 0;
  for (int s = 0; s < 200; ++s) {
    EXPECT_EQ(result.data<int32_t>()[s], 2);
    int32_t value = result.data<int32_t>()[200 + s];
    EXPECT_TRUE(value == 0 || value == 1);
    ones += value;
  }
  EXPECT_NEAR(ones / 200.0, 0.5, 0.15);
  SimpleKernelContext wide("Multinomial", {Value(input)}, 1);
  wide.setInt("dtype", static_cast<int64_t>(DType::Int64));
  ASSERT_TRUE(wide.run().ok());
  EXPECT_EQ(wide.outputTensor(0).dtype(), DType::Int64);
  EXPECT_EQ(wide.outputTensor(0).shape(), (std::vector<int64_t>{2, 1}));
  SimpleKernelContext flat("Multinomial", {Value(Tensor(DType::Float32, {3}))},
                           1);
  EXPECT_FALSE(flat.run().ok());
}

} // namespace
