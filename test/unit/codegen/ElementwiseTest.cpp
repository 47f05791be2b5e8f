//===- ElementwiseTest.cpp - Element-wise kernels on the emulator ---------===//

#include "KernelHarness.h"

#include "mncc/reference/SimpleContext.h"

#include "gtest/gtest.h"

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::testing;

namespace {

reference::Tensor referenceResult(const std::string &opType,
                                  const std::vector<reference::Tensor> &in) {
  std::vector<reference::Value> values;
  for (const reference::Tensor &tensor : in)
    values.push_back(reference::Value(tensor));
  reference::SimpleKernelContext context(opType, values, 1);
  reference::Status status = context.run();
  EXPECT_TRUE(status.ok()) << status.message();
  return context.outputTensor(0);
}

struct Case {
  const char *opType;
  std::vector<int64_t> shape;
  bool binary;
};

class ElementwiseKernel : public ::testing::TestWithParam<Case> {};

TEST_P(ElementwiseKernel, MatchesTheReferenceOnRandomMemory) {
  const Case &c = GetParam();
  std::vector<reference::Tensor> inputs = {randomTensor(c.shape, 1)};
  if (c.binary)
    inputs.push_back(randomTensor(c.shape, 2));
  KernelRequest request =
      makeRequest(c.opType, inputs, {c.shape}, DeviceType::Single);
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runKernel(request, inputs, reference::DType::Float32, run, error))
      << error;
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  reference::Tensor expected = referenceResult(c.opType, inputs);
  Comparison comparison = compareTensors(run.outputs[0], expected, 1e-6, 1e-6);
  EXPECT_TRUE(comparison.within) << comparison.firstMismatch;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ElementwiseKernel,
    ::testing::Values(Case{"Relu", {3, 4, 5}, false},
                      Case{"Add", {3, 4, 5}, true},
                      Case{"Sub", {16, 784}, true},
                      Case{"Mul", {2, 3, 64, 65}, true}, Case{"Max", {7}, true},
                      Case{"Min", {1}, true}, Case{"Neg", {33, 17}, false},
                      Case{"Identity", {2, 2, 2}, false},
                      // 4.2 Mi elements: more than one pass over LM.
                      Case{"Add", {64, 256, 256}, true}),
    [](const ::testing::TestParamInfo<Case> &info) {
      std::string name = info.param.opType;
      for (int64_t extent : info.param.shape)
        name += "_" + std::to_string(extent);
      return name;
    });

TEST(ElementwiseKernel, ScalarConstantBecomesAnImmediate) {
  std::vector<reference::Tensor> inputs = {
      randomTensor({5, 9}, 3), reference::Tensor::fromVector<float>(
                                   reference::DType::Float32, {}, {0.375f})};
  KernelRequest request =
      makeRequest("Mul", inputs, {{5, 9}}, DeviceType::Single, {false, true});
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runKernel(request, inputs, reference::DType::Float32, run, error))
      << error;
  EXPECT_TRUE(run.hazards.empty());
  EXPECT_NE(run.description.variant.find("immediate"), std::string::npos);
  Comparison comparison = compareTensors(
      run.outputs[0], referenceResult("Mul", inputs), 1e-6, 1e-6);
  EXPECT_TRUE(comparison.within) << comparison.firstMismatch;
}

} // namespace

namespace {

/// Float32 values rounded to the device's half and back (DeviceType.h).
reference::Tensor throughHalf(const reference::Tensor &t) {
  int64_t n = t.numElements();
  std::vector<uint16_t> bits(static_cast<size_t>(n));
  EXPECT_TRUE(hostToDevice(reference::DType::Float32, t.raw(), DeviceType::Half,
                           bits.data(), n));
  reference::Tensor back(reference::DType::Float32, t.shape());
  EXPECT_TRUE(deviceToHost(DeviceType::Half, bits.data(),
                           reference::DType::Float32, back.raw(), n));
  return back;
}

class HalfElementwiseKernel : public ::testing::TestWithParam<Case> {};

// float_dtype=half: half tensors in and out, hv* operations with the output
// reduction. The reference runs on the inputs as halves and its result is
// rounded to half: products, max, min, relu and negation match exactly,
// sums within one half ulp (the reference rounds the sum to single first).
TEST_P(HalfElementwiseKernel, MatchesTheReferenceInHalf) {
  const Case &c = GetParam();
  std::vector<reference::Tensor> inputs = {randomTensor(c.shape, 1, -4, 4)};
  if (c.binary)
    inputs.push_back(randomTensor(c.shape, 2, -4, 4));
  KernelRequest request =
      makeRequest(c.opType, inputs, {c.shape}, DeviceType::Half);
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runKernel(request, inputs, reference::DType::Float32, run, error))
      << error;
  EXPECT_EQ(run.description.generator, "elementwise");
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  std::vector<reference::Tensor> halves;
  for (const reference::Tensor &t : inputs)
    halves.push_back(throughHalf(t));
  reference::Tensor expected = throughHalf(referenceResult(c.opType, halves));
  bool sum = c.opType == "Add" || c.opType == "Sub";
  Comparison comparison =
      compareTensors(run.outputs[0], expected, 0, sum ? 2e-3 : 0);
  EXPECT_TRUE(comparison.within) << comparison.firstMismatch;
}

INSTANTIATE_TEST_SUITE_P(Shapes, HalfElementwiseKernel,
                         ::testing::Values(Case{"Relu", {3, 4, 5}, false},
                                           Case{"Neg", {33, 17}, false},
                                           Case{"Identity", {2, 2, 2}, false},
                                           Case{"Add", {3, 4, 5}, true},
                                           Case{"Sub", {16, 784}, true},
                                           Case{"Mul", {16, 6, 28, 28}, true},
                                           Case{"Max", {7}, true},
                                           Case{"Min", {16, 120}, true}),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           std::string name = info.param.opType;
                           for (int64_t extent : info.param.shape)
                             name += "_" + std::to_string(extent);
                           return name;
                         });

TEST(HalfElementwiseKernel, ScalarConstantIsAHalfImmediate) {
  std::vector<reference::Tensor> inputs = {
      randomTensor({5, 16}, 3, -4, 4),
      reference::Tensor::fromVector<float>(reference::DType::Float32, {},
                                           {0.375f})};
  KernelRequest request =
      makeRequest("Mul", inputs, {{5, 16}}, DeviceType::Half, {false, true});
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runKernel(request, inputs, reference::DType::Float32, run, error))
      << error;
  EXPECT_TRUE(run.hazards.empty());
  reference::Tensor expected =
      throughHalf(referenceResult("Mul", {throughHalf(inputs[0]), inputs[1]}));
  Comparison comparison = compareTensors(run.outputs[0], expected, 0, 0);
  EXPECT_TRUE(comparison.within) << comparison.firstMismatch;
}

} // namespace
