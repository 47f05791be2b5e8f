//===- LossTest.cpp - NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss --===//
//
// Expected values are those of ONNX's backend test cases named at each test.
//
//===----------------------------------------------------------------------===//

#include "mncc/reference/SimpleContext.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mncc::reference;

namespace {

template <typename T>
Tensor make(std::vector<int64_t> shape, std::vector<T> values) {
  return Tensor::fromVector<T>(dtypeOf<T>(), std::move(shape), values);
}

/// Runs `context`, expecting success.
void runOk(SimpleKernelContext &context) {
  Status status = context.run();
  ASSERT_TRUE(status.ok()) << status.message();
}

std::string runError(SimpleKernelContext &context) {
  Status status = context.run();
  EXPECT_FALSE(status.ok());
  return status.message();
}

void expectNear(const Tensor &actual, const std::vector<double> &expected,
                double tolerance = 1e-6) {
  ASSERT_EQ(actual.numElements(), static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(actual.elementAsDouble(i), expected[i], tolerance)
        << "at " << i;
}

// The 3x5 scores of ONNX's test_nllloss_NC and test_sce_* cases.
const std::vector<float> kScores = {
    0.548813522f, 0.715189338f, 0.602763355f, 0.544883192f, 0.423654795f,
    0.64589411f,  0.437587202f, 0.891772985f, 0.963662744f, 0.383441508f,
    0.791725039f, 0.528894901f, 0.568044543f, 0.925596654f, 0.0710360557f};

TEST(Loss, NllNoReduction) {
  // test_nllloss_NC: the loss is minus the score of the target class.
  SimpleKernelContext context("NegativeLogLikelihoodLoss",
                              {Value(make<float>({3, 5}, kScores)),
                               Value(make<int64_t>({3}, {1, 4, 3}))},
                              1);
  context.setString("reduction", "none");
  runOk(context);
  const Tensor &loss = context.outputTensor(0);
  EXPECT_EQ(loss.dtype(), DType::Float32);
  EXPECT_EQ(loss.shape(), (std::vector<int64_t>{3}));
  expectNear(loss, {-0.715189338, -0.383441508, -0.925596654});
}

TEST(Loss, NllMeanDividesByTheAppliedWeights) {
  // test_nllloss_NCd1_weight_ii: input [3, 5, 2], ignore_index 1; the mean
  // is the weighted sum over the weights of the targets that count.
  std::vector<float> input = {
      0.548813522f,  0.715189338f,  0.602763355f, 0.544883192f, 0.423654795f,
      0.64589411f,   0.437587202f,  0.891772985f, 0.963662744f, 0.383441508f,
      0.791725039f,  0.528894901f,  0.568044543f, 0.925596654f, 0.0710360557f,
      0.0871293023f, 0.0202183966f, 0.832619846f, 0.778156757f, 0.870012164f,
      0.978618324f,  0.799158573f,  0.461479366f, 0.780529201f, 0.118274428f,
      0.63992101f,   0.143353283f,  0.944668889f, 0.521848321f, 0.414661944f};
  SimpleKernelContext context(
      "NegativeLogLikelihoodLoss",
      {Value(make<float>({3, 5, 2}, input)),
       Value(make<int64_t>({3, 2}, {1, 3, 2, 4, 2, 0})),
       Value(make<float>({5}, {0.0187897999f, 0.617635489f, 0.612095714f,
                               0.616934001f, 0.943748057f}))},
      1);
  context.setInt("ignore_index", 1).setString("reduction", "mean");
  runOk(context);
  EXPECT_EQ(context.outputTensor(0).shape(), std::vector<int64_t>{});
  expectNear(context.outputTensor(0), {-0.535773873});
}

TEST(Loss, NllDoubleWithInt32TargetsAndSum) {
  // test_nllloss_NC's case in double with int32 targets, summed.
  std::vector<double> scores(kScores.begin(), kScores.end());
  SimpleKernelContext context("NegativeLogLikelihoodLoss",
                              {Value(make<double>({3, 5}, scores)),
                               Value(make<int32_t>({3}, {1, 4, 3}))},
                              1);
  context.setString("reduction", "sum");
  runOk(context);
  EXPECT_EQ(context.outputTensor(0).dtype(), DType::Float64);
  expectNear(context.outputTensor(0),
             {-(0.715189338 + 0.383441508 + 0.925596654)});
}

TEST(Loss, SceMeanWithWeightsAndIgnoreIndex) {
  // test_sce_mean_weight_ii: label 0 is ignored, so only the weights of
  // classes 4 and 3 divide the sum.
  SimpleKernelContext context(
      "SoftmaxCrossEntropyLoss",
      {Value(make<float>({3, 5}, kScores)),
       Value(make<int64_t>({3}, {0, 4, 3})),
       Value(make<float>({5}, {0.9f, 0.7f, 0.8f, 0.9f, 0.9f}))},
      1);
  context.setInt("ignore_index", 0).setString("reduction", "mean");
  runOk(context);
  expectNear(context.outputTensor(0), {1.60918796});
}

TEST(Loss, SceReturnsTheLogProbabilities) {
  // test_sce_none_log_prob.
  SimpleKernelContext context("SoftmaxCrossEntropyLoss",
                              {Value(make<float>({3, 5}, kScores)),
                               Value(make<int64_t>({3}, {1, 4, 3}))},
                              2);
  context.setString("reduction", "none");
  runOk(context);
  expectNear(context.outputTensor(0), {1.4657786, 1.9176139, 1.3007619});
  const Tensor &logProb = context.outputTensor(1);
  EXPECT_EQ(logProb.shape(), (std::vector<int64_t>{3, 5}));
  expectNear(logProb,
             {-1.6321545, -1.4657786, -1.5782048, -1.6360848, -1.7573133,
              -1.6551613, -1.863468, -1.4092823, -1.3373927, -1.9176139,
              -1.4346335, -1.6974638, -1.658314, -1.3007619, -2.1553226});
}

TEST(Loss, SceFloat16) {
  // Softmax over two equal scores: each class has log-probability -ln 2.
  SimpleKernelContext context(
      "SoftmaxCrossEntropyLoss",
      {Value(make<Float16>({2, 2}, {Float16(1.0f), Float16(1.0f),
                                    Float16(-3.0f), Float16(-3.0f)})),
       Value(make<int64_t>({2}, {0, 1}))},
      1);
  runOk(context);
  EXPECT_EQ(context.outputTensor(0).dtype(), DType::Float16);
  expectNear(context.outputTensor(0), {std::log(2.0)}, 1e-3);
}

TEST(Loss, BadInputsAreErrors) {
  Tensor scores = make<float>({3, 5}, kScores);
  SimpleKernelContext outOfRange(
      "NegativeLogLikelihoodLoss",
      {Value(scores), Value(make<int64_t>({3}, {1, 5, 0}))}, 1);
  EXPECT_EQ(runError(outOfRange),
            "NegativeLogLikelihoodLoss: target 5 at index 1 is outside [0, 5)");
  SimpleKernelContext badShape(
      "SoftmaxCrossEntropyLoss",
      {Value(scores), Value(make<int64_t>({5}, {0, 0, 0, 0, 0}))}, 1);
  EXPECT_EQ(runError(badShape),
            "SoftmaxCrossEntropyLoss: target shape 5 does not match input "
            "shape 3x5 without its axis 1");
  SimpleKernelContext badReduction(
      "SoftmaxCrossEntropyLoss",
      {Value(scores), Value(make<int64_t>({3}, {0, 0, 0}))}, 1);
  badReduction.setString("reduction", "max");
  EXPECT_EQ(runError(badReduction),
            "SoftmaxCrossEntropyLoss: reduction must be none, sum or mean, not "
            "'max'");
  SimpleKernelContext badWeight("NegativeLogLikelihoodLoss",
                                {Value(scores),
                                 Value(make<int64_t>({3}, {0, 0, 0})),
                                 Value(make<float>({4}, {1, 1, 1, 1}))},
                                1);
  EXPECT_EQ(runError(badWeight),
            "NegativeLogLikelihoodLoss: weight shape 4 must be [C] = [5]");
  SimpleKernelContext floatTarget(
      "NegativeLogLikelihoodLoss",
      {Value(scores), Value(make<float>({3}, {0, 0, 0}))}, 1);
  EXPECT_EQ(runError(floatTarget),
            "NegativeLogLikelihoodLoss: target must be int32 or int64, not "
            "float");
}

} // namespace
