//===- BatchNormTest.cpp - Inference batch normalisation on the emulator --===//
//
// The shapes of the ONNX node tests test_batchnorm_example ([2, 3, 4, 5],
// epsilon 1e-5) and test_batchnorm_epsilon (epsilon 1e-2), a LeNet-5 and a
// small-CNN layer at batch 16, in the preferred NHWC order and in NCHW,
// compared with the pfvm:cpu reference: s and t are rounded once, then one
// fvfma, so within 2 ulp of the reference's own rounding (B2).
//
//===----------------------------------------------------------------------===//

#include "KernelHarness.h"

#include "mncc/reference/SimpleContext.h"

#include "gtest/gtest.h"

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::testing;

namespace {

struct Case {
  std::string name;
  std::vector<int64_t> shape;
  float epsilon = 1e-5f;
  bool nhwc = true;
  DeviceType type = DeviceType::Single;
};

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

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

class BatchNormKernel : public ::testing::TestWithParam<Case> {};

TEST_P(BatchNormKernel, MatchesTheReferenceOnRandomMemory) {
  const Case &c = GetParam();
  bool half = c.type == DeviceType::Half;
  bool isDouble = c.type == DeviceType::Double;
  int64_t channels = c.shape[1];
  // The statistics as float32 initializers, as models give them (double:
  // widened exactly by the host's Cast for the reference).
  std::vector<reference::Tensor> inputs = {
      isDouble ? randomDoubleTensor(c.shape, 1, -3, 3)
               : randomTensor(c.shape, 1, -3, 3),
      randomTensor({channels}, 2, 0.5f, 2), randomTensor({channels}, 3, -1, 1),
      randomTensor({channels}, 4, -1, 1), randomTensor({channels}, 5, 0.1f, 2)};
  KernelRequest request =
      makeRequest("BatchNormalization", inputs, {c.shape}, c.type,
                  {false, true, true, true, true});
  reference::Attribute epsilon;
  epsilon.kind = reference::Attribute::Kind::Float;
  epsilon.f = c.epsilon;
  request.attributes["epsilon"] = epsilon;
  HarnessOptions options;
  options.followPreferredOrders = c.nhwc;
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runKernel(request, inputs,
                        isDouble ? reference::DType::Float64
                                 : reference::DType::Float32,
                        run, error, options))
      << error;
  EXPECT_EQ(run.description.generator, "batchnorm");
  std::printf("%s: %llu cycles\n", c.name.c_str(),
              (unsigned long long)run.stats.Cycles);
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  if (c.nhwc && c.shape.size() == 4) {
    EXPECT_EQ(run.outputForms[0].order, (std::vector<unsigned>{0, 2, 3, 1}));
  }

  std::vector<reference::Value> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    reference::Tensor value = inputs[i];
    if (half && i == 0)
      value = throughHalf(value);
    if (isDouble && i > 0) {
      value = reference::Tensor(reference::DType::Float64, inputs[i].shape());
      for (int64_t e = 0; e < value.numElements(); ++e)
        value.data<double>()[e] = inputs[i].elementAsDouble(e);
    }
    values.push_back(reference::Value(value));
  }
  reference::SimpleKernelContext context("BatchNormalization", values, 1);
  context.setFloat("epsilon", c.epsilon);
  ASSERT_TRUE(context.run().ok());
  // Half: s and t rounded to half, then one rounding of x s + t (B2);
  // double: s and t rounded to double, one dvfma (B3).
  Comparison comparison =
      compareTensors(run.outputs[0], context.outputTensor(0),
                     half ? 2e-2 : isDouble ? 4e-15 : 1e-6,
                     half ? 4e-3 : isDouble ? 1e-15 : 2.4e-7);
  EXPECT_TRUE(comparison.within)
      << comparison.firstMismatch << " (max rel " << comparison.maxRel << ")";
  if (isDouble)
    std::printf("%s: max abs %.3g, max rel %.3g\n", c.name.c_str(),
                comparison.maxAbs, comparison.maxRel);
  // The padding of the channels (NHWC) or of the rows (NCHW) stays zero.
  const DramForm &form = run.outputForms[0];
  const DramImage &image = run.outputImages[0];
  int64_t perLongWord = elementsPerLongWord(form.type);
  for (unsigned g = 0; g < form.groups; ++g)
    for (int64_t row = 0; row < form.rowsInGroup(g); ++row)
      for (int64_t e = form.innerExtent(); e < form.innerPadded(); ++e) {
        uint64_t word =
            image.data[g][size_t(row * form.rowLongWords() + e / perLongWord)];
        unsigned bits = deviceTypeBits(form.type);
        uint64_t element = word >> (64 - bits * (e % perLongWord + 1)) &
                           ((uint64_t(1) << bits) - 1);
        ASSERT_EQ(element, 0u) << "padding of row " << row << " in group " << g;
      }
}

INSTANTIATE_TEST_SUITE_P(
    Onnx, BatchNormKernel,
    ::testing::Values(
        Case{"example", {2, 3, 4, 5}}, Case{"epsilon", {2, 3, 4, 5}, 1e-2f},
        Case{"example_nchw", {2, 3, 4, 5}, 1e-5f, false},
        Case{"rank2", {16, 20}}, Case{"rank3_ncl", {4, 6, 10}},
        Case{"lenet_conv1", {16, 6, 28, 28}},
        Case{"lenet_conv1_nchw", {16, 6, 28, 28}, 1e-5f, false},
        Case{"cnn_conv", {16, 32, 16, 16}}, Case{"cnn_wide", {16, 64, 32, 32}},
        Case{"lenet_conv1_half", {16, 6, 28, 28}, 1e-5f, true, DeviceType::Half},
        Case{"example_half_nchw", {2, 3, 4, 5}, 1e-5f, false, DeviceType::Half},
        Case{"example_double", {2, 3, 4, 5}, 1e-5f, true, DeviceType::Double},
        Case{"example_double_nchw", {2, 3, 4, 5}, 1e-2f, false,
             DeviceType::Double},
        Case{"lenet_conv1_double", {16, 6, 28, 28}, 1e-5f, true,
             DeviceType::Double},
        Case{"cnn_wide_double", {16, 64, 32, 32}, 1e-5f, true,
             DeviceType::Double}),
    [](const ::testing::TestParamInfo<Case> &info) { return info.param.name; });

TEST(BatchNormKernel, RefusesTrainingMode) {
  std::vector<reference::Tensor> inputs = {
      randomTensor({2, 3, 4, 5}, 1), randomTensor({3}, 2), randomTensor({3}, 3),
      randomTensor({3}, 4), randomTensor({3}, 5, 0.1f, 1)};
  KernelRequest request =
      makeRequest("BatchNormalization", inputs, {{2, 3, 4, 5}},
                  DeviceType::Single, {false, true, true, true, true});
  reference::Attribute training;
  training.kind = reference::Attribute::Kind::Int;
  training.i = 1;
  request.attributes["training_mode"] = training;
  for (const auto &g : kernelGenerators())
    if (std::string(g->name()) == "batchnorm") {
      std::string whyNot;
      EXPECT_FALSE(g->matches(request, whyNot));
      EXPECT_EQ(whyNot, "training mode");
    }
  // Non-constant statistics are not folded.
  request.attributes.clear();
  request.inputs[3].constant = nullptr;
  for (const auto &g : kernelGenerators())
    if (std::string(g->name()) == "batchnorm") {
      std::string whyNot;
      EXPECT_FALSE(g->matches(request, whyNot));
      EXPECT_NE(whyNot.find("constants"), std::string::npos);
    }
}

} // namespace
