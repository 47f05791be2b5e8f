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
  ASSERT_TRUE(runKernel(request, inputs, reference::DType::Float32, run,
                        error))
      << error;
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  reference::Tensor expected = referenceResult(c.opType, inputs);
  Comparison comparison =
      compareTensors(run.outputs[0], expected, 1e-6, 1e-6);
  EXPECT_TRUE(comparison.within) << comparison.firstMismatch;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ElementwiseKernel,
    ::testing::Values(Case{"Relu", {3, 4, 5}, false},
                      Case{"Add", {3, 4, 5}, true},
                      Case{"Sub", {16, 784}, true},
                      Case{"Mul", {2, 3, 64, 65}, true},
                      Case{"Max", {7}, true}, Case{"Min", {1}, true},
                      Case{"Neg", {33, 17}, false},
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
      randomTensor({5, 9}, 3),
      reference::Tensor::fromVector<float>(reference::DType::Float32, {},
                                           {0.375f})};
  KernelRequest request = makeRequest("Mul", inputs, {{5, 9}},
                                      DeviceType::Single, {false, true});
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runKernel(request, inputs, reference::DType::Float32, run,
                        error))
      << error;
  EXPECT_TRUE(run.hazards.empty());
  EXPECT_NE(run.description.variant.find("immediate"), std::string::npos);
  Comparison comparison = compareTensors(
      run.outputs[0], referenceResult("Mul", inputs), 1e-6, 1e-6);
  EXPECT_TRUE(comparison.within) << comparison.firstMismatch;
}

} // namespace
