//===- ElementwiseTest.cpp - Element-wise kernels on the emulator ---------===//

#include "KernelHarness.h"

#include "mncc/reference/SimpleContext.h"

#include "gtest/gtest.h"

#include <cmath>
#include <iterator>
#include <limits>

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

/// The operator and the shape: Add_3_4_5.
std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  std::string name = info.param.opType;
  for (int64_t extent : info.param.shape)
    name += "_" + std::to_string(extent);
  return name;
}

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
    caseName);

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
  std::string_view op = c.opType;
  bool sum = op == "Add" || op == "Sub";
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
                         caseName);

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

namespace {

/// Random doubles with special values spread through them: both zeros,
/// both infinities, the extremes of the range and values whose products
/// stay normal.
reference::Tensor doubleOperand(const std::vector<int64_t> &shape,
                                uint64_t seed, bool specials) {
  reference::Tensor t = randomDoubleTensor(shape, seed, -4, 4);
  if (!specials)
    return t;
  const double inf = std::numeric_limits<double>::infinity();
  const double values[] = {0.0,    -0.0,     inf,    -inf,  1e300,
                           -1e300, 1e-300,   -3e-300, 0.5,  -2.0,
                           0x1.fffffffffffffp+1, 0x1p-1020};
  for (int64_t i = 0; i < t.numElements(); i += 7)
    t.data<double>()[i] = values[(i / 7) % std::size(values)];
  return t;
}

class DoubleElementwiseKernel : public ::testing::TestWithParam<Case> {};

// float_dtype=double: double tensors in and out, against pfvm:cpu in
// double. Every result is the correctly rounded one (the MAU adds exactly
// and rounds once, max, min, moves and Relu's max(x, +0) are exact), except
// that a product can be 1 ulp off next to a tie (the double multiplier
// omits the low 16 x 16 bit product, 2^-74 relative) and a zero the MAU
// writes is +0 (Neg of +0, x - x).
TEST_P(DoubleElementwiseKernel, MatchesTheReferenceInDouble) {
  const Case &c = GetParam();
  std::vector<reference::Tensor> inputs = {doubleOperand(c.shape, 1, true)};
  if (c.binary)
    inputs.push_back(doubleOperand(c.shape, 2, false));
  KernelRequest request =
      makeRequest(c.opType, inputs, {c.shape}, DeviceType::Double);
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runKernel(request, inputs, reference::DType::Float64, run, error))
      << error;
  EXPECT_EQ(run.description.generator, "elementwise");
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  reference::Tensor expected = referenceResult(c.opType, inputs);
  std::string_view op = c.opType;
  UlpComparison comparison = compareUlps(
      run.outputs[0], expected, DeviceType::Double, op == "Mul" ? 1 : 0);
  EXPECT_TRUE(comparison.within) << comparison.firstMismatch;
  // Relu keeps -0 (max(-0, +0) is x) and gives +0 for negatives.
  if (op == "Relu" || op == "Max" || op == "Min" || op == "Identity")
    for (int64_t i = 0; i < expected.numElements(); ++i) {
      EXPECT_EQ(std::signbit(run.outputs[0].data<double>()[i]),
                std::signbit(expected.data<double>()[i]))
          << "element " << i;
    }
  std::printf("%s double: %llu cycles, worst %.0f ulp\n", c.opType,
              (unsigned long long)run.stats.Cycles, comparison.worst);
  std::string where;
  EXPECT_TRUE(paddingIsZero(run.outputForms[0], run.outputImages[0], where))
      << where;
}

INSTANTIATE_TEST_SUITE_P(Shapes, DoubleElementwiseKernel,
                         ::testing::Values(Case{"Relu", {3, 4, 5}, false},
                                           Case{"Neg", {33, 17}, false},
                                           Case{"Identity", {2, 2, 2}, false},
                                           Case{"Add", {3, 4, 5}, true},
                                           Case{"Sub", {16, 784}, true},
                                           Case{"Mul", {16, 6, 28, 28}, true},
                                           Case{"Max", {7}, true},
                                           Case{"Min", {16, 120}, true},
                                           // More than one pass over LM.
                                           Case{"Mul", {64, 128, 130}, true}),
                         caseName);

TEST(DoubleElementwiseKernel, ScalarConstantIsADoubleImmediate) {
  // A float64 constant with both words different, and a float32 one, over
  // rows without padding (E5).
  for (bool wide : {true, false}) {
    std::vector<reference::Tensor> inputs = {
        doubleOperand({5, 8}, 3, true),
        wide ? reference::Tensor::fromVector<double>(reference::DType::Float64,
                                                     {}, {0.1})
             : reference::Tensor::fromVector<float>(reference::DType::Float32,
                                                    {}, {0.375f})};
    for (const char *op : {"Mul", "Add", "Sub", "Max", "Min"}) {
      KernelRequest request = makeRequest(op, inputs, {{5, 8}},
                                          DeviceType::Double, {false, true});
      // The constant's own type (a float32 initializer stays float32).
      request.inputs[1].form.type = DeviceType::Double;
      KernelRun run;
      std::string error;
      ASSERT_TRUE(
          runKernel(request, inputs, reference::DType::Float64, run, error))
          << error;
      EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
      EXPECT_NE(run.description.variant.find("immediate"), std::string::npos)
          << op << " took " << run.description.generator;
      std::vector<reference::Tensor> asDouble = {inputs[0], inputs[1]};
      if (!wide)
        asDouble[1] = reference::Tensor::fromVector<double>(
            reference::DType::Float64, {}, {0.375});
      UlpComparison comparison =
          compareUlps(run.outputs[0], referenceResult(op, asDouble),
                      DeviceType::Double, std::string(op) == "Mul" ? 1 : 0);
      EXPECT_TRUE(comparison.within) << op << " " << comparison.firstMismatch;
    }
  }
}

} // namespace
