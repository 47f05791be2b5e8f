//===- DepthwiseTest.cpp - Depthwise convolutions in vector mode ----------===//
//
// Every case runs on memory filled with random bytes, expects no hazard, a
// zero channel padding in Y and the result of pfvm:cpu on the same inputs
// (rounded to the device format first). The products of two device values
// are exact and summed in single (half, single) or double, so the bounds
// are a rounding of the result plus a few of the sum's (docs/codegen.md
// D5). X and Y are in NHWC; W and B are initializers.
//
//===----------------------------------------------------------------------===//

#include "KernelHarness.h"

#include "mncc/reference/SimpleContext.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::testing;

namespace {

struct DepthwiseCase {
  const char *name;
  std::vector<int64_t> x;
  std::vector<int64_t> kernel;
  DeviceType type;
  std::vector<int64_t> pads = {0, 0, 0, 0};
  std::vector<int64_t> strides = {1, 1};
  std::vector<int64_t> dilations = {1, 1};
  bool bias = true;
  std::string autoPad = "NOTSET";
};

reference::Attribute intsAttr(std::vector<int64_t> v) {
  reference::Attribute a;
  a.kind = reference::Attribute::Kind::Ints;
  a.ints = std::move(v);
  return a;
}

reference::Attribute intAttr(int64_t v) {
  reference::Attribute a;
  a.kind = reference::Attribute::Kind::Int;
  a.i = v;
  return a;
}

reference::Attribute stringAttr(std::string v) {
  reference::Attribute a;
  a.kind = reference::Attribute::Kind::String;
  a.s = std::move(v);
  return a;
}

reference::DType hostTypeOf(DeviceType type) {
  return type == DeviceType::Double ? reference::DType::Float64
                                    : reference::DType::Float32;
}

reference::Tensor deviceRounded(const reference::Tensor &t, DeviceType type) {
  reference::DType host = hostTypeOf(type);
  reference::Tensor out(host, t.shape());
  std::vector<uint64_t> bits(size_t(t.numElements()));
  hostToDevice(t.dtype(), t.raw(), type, bits.data(), t.numElements());
  deviceToHost(type, bits.data(), host, out.raw(), t.numElements());
  return out;
}

reference::Tensor randomOf(std::vector<int64_t> shape, uint64_t seed,
                           DeviceType type) {
  return deviceRounded(type == DeviceType::Double
                           ? randomDoubleTensor(std::move(shape), seed)
                           : randomTensor(std::move(shape), seed),
                       type);
}

std::vector<reference::Tensor> inputsOf(const DepthwiseCase &c) {
  int64_t channels = c.x[1];
  std::vector<reference::Tensor> inputs = {
      randomOf(c.x, 31, c.type),
      randomOf({channels, 1, c.kernel[0], c.kernel[1]}, 32, c.type)};
  if (c.bias)
    inputs.push_back(randomOf({channels}, 33, c.type));
  return inputs;
}

reference::Tensor referenceOf(const DepthwiseCase &c,
                              const std::vector<reference::Tensor> &in) {
  std::vector<reference::Value> values;
  for (const reference::Tensor &t : in)
    values.push_back(reference::Value(t));
  reference::SimpleKernelContext context("Conv", values, 1);
  context.setInts("pads", c.pads);
  context.setInts("strides", c.strides);
  context.setInts("dilations", c.dilations);
  context.setInt("group", c.x[1]);
  context.setString("auto_pad", c.autoPad);
  reference::Status status = context.run();
  EXPECT_TRUE(status.ok()) << status.message();
  return context.outputTensor(0);
}

KernelRequest requestOf(const DepthwiseCase &c,
                        const std::vector<reference::Tensor> &inputs,
                        const std::vector<int64_t> &outputShape) {
  KernelRequest request =
      makeRequest("Conv", inputs, {outputShape}, c.type, {false, true, true});
  request.attributes["pads"] = intsAttr(c.pads);
  request.attributes["strides"] = intsAttr(c.strides);
  request.attributes["dilations"] = intsAttr(c.dilations);
  request.attributes["group"] = intAttr(c.x[1]);
  request.attributes["auto_pad"] = stringAttr(c.autoPad);
  return request;
}

/// min(max(y, lo), hi) element by element, as the fused activation.
reference::Tensor clamped(const reference::Tensor &t,
                          const reference::FusedActivation &bounds) {
  reference::Tensor out = t.clone();
  for (int64_t i = 0; i < out.numElements(); ++i) {
    if (out.dtype() == reference::DType::Float64) {
      double &v = out.data<double>()[i];
      v = std::min(std::max(v, double(bounds.lo)), double(bounds.hi));
    } else {
      float &v = out.data<float>()[i];
      v = std::min(std::max(v, bounds.lo), bounds.hi);
    }
  }
  return out;
}

void expectMatchesTheReference(
    const DepthwiseCase &c,
    std::optional<KernelActivation> activation = std::nullopt) {
  std::vector<reference::Tensor> inputs = inputsOf(c);
  reference::Tensor expected = referenceOf(c, inputs);
  if (activation)
    expected = clamped(expected, activation->bounds);
  KernelRequest request = requestOf(c, inputs, expected.shape());
  request.activation = activation;
  KernelRun run;
  std::string error;
  HarnessOptions options;
  if (const char *seed = std::getenv("DEPTHWISE_TEST_FILL_SEED"))
    options.fillSeed = std::strtoull(seed, nullptr, 10);
  ASSERT_TRUE(
      runKernel(request, inputs, hostTypeOf(c.type), run, error, options))
      << error;
  if (const char *dir = std::getenv("DEPTHWISE_TEST_VSM")) {
    std::string path = std::string(dir) + "/" + c.name + ".vsm";
    if (FILE *f = std::fopen(path.c_str(), "w")) {
      std::fputs(run.program.c_str(), f);
      std::fclose(f);
    }
  }
  EXPECT_EQ(run.description.generator, "depthwise");
  if (activation) {
    EXPECT_NE(run.description.variant.find("then " + activation->opType),
              std::string::npos)
        << run.description.variant;
  }
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  std::string where;
  EXPECT_TRUE(paddingIsZero(run.outputForms[0], run.outputImages[0], where))
      << where;
  // |x|, |w|, |b| < 1: every partial sum is under taps + 1.
  double taps = double(c.kernel[0] * c.kernel[1]);
  double atol = c.type == DeviceType::Half     ? std::ldexp(taps + 1, -22)
                : c.type == DeviceType::Single ? std::ldexp(taps + 1, -22)
                                               : std::ldexp(taps + 1, -50);
  double rtol = c.type == DeviceType::Half     ? std::ldexp(1.0, -10)
                : c.type == DeviceType::Single ? std::ldexp(1.0, -23)
                                               : std::ldexp(1.0, -52);
  Comparison cmp = compareTensors(run.outputs[0], expected, atol, rtol);
  if (std::getenv("DEPTHWISE_DEBUG"))
    std::printf("%s: max abs %g, %llu cycles, %s\n", c.name, cmp.maxAbs,
                (unsigned long long)run.stats.Cycles,
                run.description.variant.c_str());
  EXPECT_TRUE(cmp.within) << cmp.firstMismatch << " (max abs " << cmp.maxAbs
                          << ") " << run.description.variant;
}

class DepthwiseKernel : public ::testing::TestWithParam<DepthwiseCase> {};

TEST_P(DepthwiseKernel, MatchesTheReferenceOnRandomMemory) {
  expectMatchesTheReference(GetParam());
}

constexpr DeviceType H = DeviceType::Half;
constexpr DeviceType S = DeviceType::Single;
constexpr DeviceType D = DeviceType::Double;

DepthwiseCase dw(const char *name, std::vector<int64_t> x, DeviceType type,
                 std::vector<int64_t> strides = {1, 1},
                 std::vector<int64_t> pads = {1, 1, 1, 1},
                 std::vector<int64_t> kernel = {3, 3}) {
  DepthwiseCase c{name, std::move(x), std::move(kernel), type};
  c.strides = std::move(strides);
  c.pads = std::move(pads);
  return c;
}

DepthwiseCase dilated(DepthwiseCase c, std::vector<int64_t> dilations) {
  c.dilations = std::move(dilations);
  return c;
}
DepthwiseCase noBias(DepthwiseCase c) {
  c.bias = false;
  return c;
}
DepthwiseCase autoPad(DepthwiseCase c, std::string mode) {
  c.autoPad = std::move(mode);
  c.pads = {0, 0, 0, 0};
  return c;
}

std::string caseName(const ::testing::TestParamInfo<DepthwiseCase> &info) {
  return info.param.name;
}

// MobileNetV2's depthwise layers (3 x 3, pad 1, a bias after the folded
// BatchNormalization), each once, in half as float_dtype=mixed runs them.
INSTANTIATE_TEST_SUITE_P(
    MobileNetV2, DepthwiseKernel,
    ::testing::Values(dw("c32_112_s1", {1, 32, 112, 112}, H),
                      dw("c96_112_s2", {1, 96, 112, 112}, H, {2, 2}),
                      dw("c144_56_s1", {1, 144, 56, 56}, H),
                      dw("c144_56_s2", {1, 144, 56, 56}, H, {2, 2}),
                      dw("c192_28_s1", {1, 192, 28, 28}, H),
                      dw("c192_28_s2", {1, 192, 28, 28}, H, {2, 2}),
                      dw("c384_14_s1", {1, 384, 14, 14}, H),
                      dw("c576_14_s1", {1, 576, 14, 14}, H),
                      dw("c576_14_s2", {1, 576, 14, 14}, H, {2, 2}),
                      dw("c960_7_s1", {1, 960, 7, 7}, H),
                      dw("c480_7_s1_single", {1, 480, 7, 7}, S),
                      dw("c144_56_s2_b8", {8, 144, 56, 56}, H, {2, 2})),
    caseName);

// Small and odd shapes: channels that fill no quad, odd sizes, asymmetric
// pads, strides, dilations, other kernels, SAME padding, no bias, batches
// over the four groups, in every format.
INSTANTIATE_TEST_SUITE_P(
    Shapes, DepthwiseKernel,
    ::testing::Values(
        dw("c3_5x7_single", {1, 3, 5, 7}, S),
        dw("c2_1x1_half", {1, 2, 1, 1}, H),
        dw("c5_9x6_s2_asym_half", {2, 5, 9, 6}, H, {2, 2}, {1, 0, 0, 1}),
        dw("c7_11x13_no_pad_double", {1, 7, 11, 13}, D, {1, 1}, {0, 0, 0, 0}),
        dw("c16_10x10_single", {1, 16, 10, 10}, S),
        dw("c20_9x9_k5_s3_half", {1, 20, 9, 9}, H, {3, 3}, {2, 2, 2, 2},
           {5, 5}),
        dilated(dw("c24_12x12_dil2_half", {1, 24, 12, 12}, H, {1, 1},
                   {2, 2, 2, 2}),
                {2, 2}),
        dilated(dw("c9_10x8_dil_s2_double", {1, 9, 10, 8}, D, {2, 1},
                   {1, 2, 0, 1}, {3, 2}),
                {2, 3}),
        dw("c33_6x70_k1x3_single", {1, 33, 6, 70}, S, {1, 1}, {0, 1, 0, 1},
           {1, 3}),
        noBias(dw("c40_8x8_no_bias_half", {1, 40, 8, 8}, H)),
        autoPad(dw("c12_7x7_same_upper_s2_half", {1, 12, 7, 7}, H, {2, 2}),
                "SAME_UPPER"),
        autoPad(dw("c12_7x6_same_lower_single", {1, 12, 7, 6}, S, {2, 2}, {},
                   {2, 3}),
                "SAME_LOWER"),
        noBias(dw("c8_5x5_b5_double", {5, 8, 5, 5}, D)),
        dw("c64_4x4_b12_half", {12, 64, 4, 4}, H),
        // Input columns no output reads (the rows' transfers overhang).
        dw("c10_9x8_s2_valid_half", {1, 10, 9, 8}, H, {2, 2}, {0, 0, 0, 0}),
        dilated(dw("c6_8x12_s3_dil_single", {2, 6, 8, 12}, S, {1, 3},
                   {0, 0, 1, 0}),
                {1, 2}),
        // X over four groups, Y in group 0's alone: items on any L1B.
        dw("c16_16x16_s4_b4_half", {4, 16, 16, 16}, H, {4, 4}),
        dw("c32_70x3_half", {1, 32, 70, 3}, H, {1, 1}, {1, 1, 1, 1})),
    caseName);

// A Relu or Clip folded into the kernel (mncc-fuse-epilogues) clamps the
// outputs before they are stored; MobileNetV2's are Clip(0, 6).
TEST(DepthwiseKernel, ClampsAFusedActivation) {
  constexpr float kInfinity = std::numeric_limits<float>::infinity();
  expectMatchesTheReference(dw("clip_half", {1, 24, 9, 9}, H),
                            KernelActivation{"Clip", {-0.5f, 0.75f}});
  expectMatchesTheReference(dw("relu_single_s2", {1, 10, 7, 7}, S, {2, 2}),
                            KernelActivation{"Relu", {0.0f, kInfinity}});
  expectMatchesTheReference(dw("clip_double", {2, 9, 6, 5}, D),
                            KernelActivation{"Clip", {0.0f, 0.5f}});
  DepthwiseCase c = dw("relu6_half", {1, 32, 12, 12}, H);
  std::vector<reference::Tensor> inputs = inputsOf(c);
  KernelRequest request = requestOf(c, inputs, {1, 32, 12, 12});
  request.activation = KernelActivation{"Clip", {0.0f, 6.0f}};
  std::string whyNot;
  const KernelGenerator *generator = findKernelGenerator(request, whyNot);
  ASSERT_NE(generator, nullptr) << whyNot;
  EXPECT_STREQ(generator->name(), "depthwise");
  EXPECT_TRUE(generator->fusesActivation(request));
}

// A grouped convolution that is not depthwise, and a depthwise one whose
// window is more than one output row can hold, go to the conv kernel.
TEST(DepthwiseKernel, LeavesOtherConvolutionsToTheConvKernel) {
  DepthwiseCase grouped = dw("grouped", {1, 8, 9, 9}, H);
  std::vector<reference::Tensor> inputs = {randomOf(grouped.x, 1, H),
                                           randomOf({8, 2, 3, 3}, 2, H)};
  KernelRequest request = requestOf(grouped, inputs, {1, 8, 9, 9});
  request.attributes["group"] = intAttr(4);
  std::string whyNot;
  const KernelGenerator *generator = findKernelGenerator(request, whyNot);
  ASSERT_NE(generator, nullptr) << whyNot;
  EXPECT_STREQ(generator->name(), "conv");

  DepthwiseCase huge = dw("huge", {1, 960, 40, 40}, H);
  inputs = inputsOf(huge);
  request = requestOf(huge, inputs, {1, 960, 40, 40});
  generator = findKernelGenerator(request, whyNot);
  ASSERT_NE(generator, nullptr) << whyNot;
  EXPECT_STREQ(generator->name(), "conv");
}

// W's image is proportional to W (a few tables besides), not to C x W as
// the dense product's.
TEST(DepthwiseKernel, PacksWInProportionToItsSize) {
  DepthwiseCase c = dw("c960_7_s1", {1, 960, 7, 7}, H);
  std::vector<reference::Tensor> inputs = inputsOf(c);
  KernelRequest request = requestOf(c, inputs, {1, 960, 7, 7});
  request.inputs[0].form =
      DramForm::canonical(H, request.inputs[0].form.shape, {0, 2, 3, 1});
  request.outputs[0].form =
      DramForm::canonical(H, request.outputs[0].form.shape, {0, 2, 3, 1});
  std::string whyNot;
  const KernelGenerator *generator = findKernelGenerator(request, whyNot);
  ASSERT_NE(generator, nullptr) << whyNot;
  ASSERT_STREQ(generator->name(), "depthwise");
  std::optional<int64_t> longWords = generator->constantLongWords(request, 1);
  ASSERT_TRUE(longWords.has_value());
  // 960 x 9 halves are 2160 long words; the tables and the zero row add
  // under 3 Ki.
  EXPECT_LE(*longWords, 2160 + 3072);
}

} // namespace
