//===- ConvTest.cpp - Conv kernels on the emulator ------------------------===//
//
// Every case runs on memory filled with random bytes, expects no hazard and
// compares with pfvm:cpu on the same inputs (rounded to the device format
// first). The tolerance is GemmTest's for a product over K = C/group * KH *
// KW terms (docs/codegen.md X3, X9). X and Y are in NHWC (the kernel's
// preferred order); W is an initializer.
//
//===----------------------------------------------------------------------===//

#include "KernelHarness.h"

#include "../../../lib/codegen/kernels/GemmEngine.h"

#include "mncc/reference/SimpleContext.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::testing;

namespace {

struct ConvCase {
  const char *name;
  std::vector<int64_t> x, w;
  DeviceType type;
  std::vector<int64_t> pads = {0, 0, 0, 0};
  std::vector<int64_t> strides = {1, 1};
  std::vector<int64_t> dilations = {1, 1};
  int64_t group = 1;
  bool bias = false;
  std::string autoPad = "NOTSET";
  /// W an initializer (else a graph input, read at run time).
  bool constantW = true;
  /// Expected to take the packed taps (X in N, H, C, W; docs/codegen.md
  /// X9), else not checked.
  bool packed = false;
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

/// Y's shape, from pfvm:cpu (which also checks the attributes).
reference::Tensor referenceOf(const ConvCase &c,
                              const std::vector<reference::Tensor> &in) {
  std::vector<reference::Value> values;
  for (const reference::Tensor &t : in)
    values.push_back(reference::Value(t));
  reference::SimpleKernelContext context("Conv", values, 1);
  context.setInts("pads", c.pads);
  context.setInts("strides", c.strides);
  context.setInts("dilations", c.dilations);
  context.setInt("group", c.group);
  context.setString("auto_pad", c.autoPad);
  reference::Status status = context.run();
  EXPECT_TRUE(status.ok()) << status.message();
  return context.outputTensor(0);
}

/// Emits the case's Conv, runs it on random memory and compares with
/// pfvm:cpu; the run into *kept when asked.
void expectMatchesTheReference(const ConvCase &c, KernelRun *kept = nullptr) {
  std::vector<reference::Tensor> inputs = {
      deviceRounded(randomTensor(c.x, 21), c.type),
      deviceRounded(randomTensor(c.w, 22), c.type)};
  if (c.bias)
    inputs.push_back(deviceRounded(randomTensor({c.w[0]}, 23), c.type));
  reference::Tensor expected = referenceOf(c, inputs);
  KernelRequest request = makeRequest("Conv", inputs, {expected.shape()},
                                      c.type, {false, c.constantW, false});
  request.attributes["pads"] = intsAttr(c.pads);
  request.attributes["strides"] = intsAttr(c.strides);
  request.attributes["dilations"] = intsAttr(c.dilations);
  request.attributes["group"] = intAttr(c.group);
  request.attributes["auto_pad"] = stringAttr(c.autoPad);
  KernelRun run;
  std::string error;
  HarnessOptions options;
  if (const char *seed = std::getenv("CONV_TEST_FILL_SEED"))
    options.fillSeed = std::strtoull(seed, nullptr, 10);
  ASSERT_TRUE(
      runKernel(request, inputs, hostTypeOf(c.type), run, error, options))
      << error;
  if (const char *dir = std::getenv("CONV_TEST_VSM")) {
    std::string path = std::string(dir) + "/" + c.name + ".vsm";
    if (FILE *f = std::fopen(path.c_str(), "w")) {
      std::fputs(run.program.c_str(), f);
      std::fclose(f);
    }
  }
  // A depthwise layer is the depthwise kernel's where it fits (its own
  // DepthwiseTest), the conv kernel's otherwise.
  bool depthwise = c.group > 1 && c.group == c.x[1] && c.group == c.w[0];
  if (!depthwise || run.description.generator != "depthwise") {
    EXPECT_EQ(run.description.generator, "conv");
  }
  if (c.packed) {
    EXPECT_NE(run.description.variant.find("packed taps"), std::string::npos)
        << run.description.variant;
  }
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  int64_t k = c.w[1] * c.w[2] * c.w[3];
  double rootK = std::sqrt(double(k));
  double atol = c.type == DeviceType::Half     ? std::ldexp(1.0, -8) * rootK
                : c.type == DeviceType::Single ? std::ldexp(1.0, -16) * rootK
                                               : std::ldexp(1.0, -50) * k;
  double rtol = c.type == DeviceType::Half     ? std::ldexp(1.0, -9)
                : c.type == DeviceType::Single ? std::ldexp(1.0, -20)
                                               : std::ldexp(1.0, -52);
  Comparison cmp = compareTensors(run.outputs[0], expected, atol, rtol);
  if (std::getenv("GEMM_DEBUG"))
    std::printf("%s: max abs %g (atol %g), %llu cycles, %s\n", c.name,
                cmp.maxAbs, atol, (unsigned long long)run.stats.Cycles,
                run.description.variant.c_str());
  EXPECT_TRUE(cmp.within) << cmp.firstMismatch << " (max abs " << cmp.maxAbs
                          << ") " << run.description.variant;
  if (kept)
    *kept = std::move(run);
}

class ConvKernel : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvKernel, MatchesTheReferenceOnRandomMemory) {
  expectMatchesTheReference(GetParam());
}

constexpr DeviceType H = DeviceType::Half;
constexpr DeviceType S = DeviceType::Single;
constexpr DeviceType D = DeviceType::Double;

ConvCase conv(const char *name, std::vector<int64_t> x, std::vector<int64_t> w,
              DeviceType type, std::vector<int64_t> pads = {0, 0, 0, 0},
              std::vector<int64_t> strides = {1, 1}) {
  ConvCase c{name, std::move(x), std::move(w), type};
  c.pads = std::move(pads);
  c.strides = std::move(strides);
  return c;
}

ConvCase with(ConvCase c, int64_t group, bool bias,
              std::vector<int64_t> dilations = {1, 1},
              std::string autoPad = "NOTSET") {
  c.group = group;
  c.bias = bias;
  c.dilations = std::move(dilations);
  c.autoPad = std::move(autoPad);
  return c;
}

// The ONNX node tests test_basic_conv_* and test_conv_with_*.
INSTANTIATE_TEST_SUITE_P(
    OnnxNodeTests, ConvKernel,
    ::testing::Values(
        conv("basic_with_padding_half", {1, 1, 5, 5}, {1, 1, 3, 3}, H,
             {1, 1, 1, 1}),
        conv("basic_with_padding_single", {1, 1, 5, 5}, {1, 1, 3, 3}, S,
             {1, 1, 1, 1}),
        conv("basic_without_padding_double", {1, 1, 5, 5}, {1, 1, 3, 3}, D),
        with(conv("autopad_same_lower_half", {1, 1, 5, 5}, {1, 1, 3, 3}, H,
                  {0, 0, 0, 0}, {2, 2}),
             1, false, {1, 1}, "SAME_LOWER"),
        conv("strides_asymmetric_padding_single", {1, 1, 7, 5}, {1, 1, 3, 3},
             S, {1, 0, 1, 0}, {2, 2}),
        conv("strides_no_padding_half", {1, 1, 7, 5}, {1, 1, 3, 3}, H,
             {0, 0, 0, 0}, {2, 2}),
        conv("strides_padding_double", {1, 1, 7, 5}, {1, 1, 3, 3}, D,
             {1, 1, 1, 1}, {2, 2})),
    [](const ::testing::TestParamInfo<ConvCase> &info) {
      return std::string(info.param.name);
    });

// LeNet-5's convolutions, grouped and depthwise ones, dilations, a bias,
// channels that do not fill a quad, and a small ResNet-like layer.
INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvKernel,
    ::testing::Values(
        with(conv("lenet_conv1_half", {1, 1, 32, 32}, {6, 1, 5, 5}, H), 1,
             true),
        with(conv("lenet_conv2_half", {2, 6, 14, 14}, {16, 6, 5, 5}, H), 1,
             true),
        with(conv("lenet_conv2_single", {1, 6, 14, 14}, {16, 6, 5, 5}, S), 1,
             true),
        with(conv("grouped_half", {1, 8, 9, 9}, {8, 2, 3, 3}, H, {1, 1, 1, 1}),
             4, true),
        with(conv("depthwise_single", {1, 16, 10, 10}, {16, 1, 3, 3}, S,
                  {1, 1, 1, 1}),
             16, false),
        with(conv("dilated_half", {1, 3, 11, 11}, {4, 3, 3, 3}, H), 1, true,
             {2, 2}),
        with(conv("dilated_strided_double", {1, 3, 12, 10}, {5, 3, 3, 3}, D,
                  {2, 1, 0, 2}, {2, 3}),
             1, true, {2, 1}),
        with(conv("same_upper_single", {1, 4, 8, 8}, {4, 4, 3, 3}, S), 1,
             false, {1, 1}, "SAME_UPPER"),
        with(conv("resnet_like_half", {1, 64, 14, 14}, {64, 64, 3, 3}, H,
                  {1, 1, 1, 1}),
             1, true),
        with(conv("pointwise_half", {2, 32, 7, 7}, {48, 32, 1, 1}, H), 1,
             true),
        // MobileNetV2's stride-1 depthwise convolution at 14 x 14: K in
        // phases whose images differ (other taps at the borders).
        with(conv("mobilenet_depthwise_384_half", {1, 384, 14, 14},
                  {384, 1, 3, 3}, H, {1, 1, 1, 1}),
             384, true),
        // ResNet-18's layer4 3x3 with its bias, at batch 1 and 8: A's
        // slots end off a multiple of four, so the bias must start past
        // the last four-slot block-float conversion (it lost the first 32
        // channels' bias before).
        with(conv("resnet18_layer4_bias_half", {1, 512, 7, 7},
                  {512, 512, 3, 3}, H, {1, 1, 1, 1}),
             1, true),
        with(conv("resnet18_b8_layer4_bias_half", {8, 512, 7, 7},
                  {512, 512, 3, 3}, H, {1, 1, 1, 1}),
             1, true),
        // SqueezeNet 1.1's classifier: N 1000 over a padded grid.
        with(conv("squeezenet_classifier_half", {1, 512, 13, 13},
                  {1000, 512, 1, 1}, H),
             1, true)),
    [](const ::testing::TestParamInfo<ConvCase> &info) {
      return std::string(info.param.name);
    });

// small_cnn at batch 16 (test/models/small_cnn.onnx): four groups, each
// with four images, where the L1B sections' images differ at the edges
// (padding taps at different quads in different sections).
INSTANTIATE_TEST_SUITE_P(
    SmallCnnBatch16, ConvKernel,
    ::testing::Values(
        with(conv("conv1_half", {16, 3, 32, 32}, {16, 3, 3, 3}, H,
                  {1, 1, 1, 1}),
             1, true),
        with(conv("conv2_half", {16, 16, 16, 16}, {32, 16, 3, 3}, H,
                  {1, 1, 1, 1}),
             1, true),
        with(conv("conv1_single", {16, 3, 32, 32}, {16, 3, 3, 3}, S,
                  {1, 1, 1, 1}),
             1, true),
        with(conv("conv2_single", {16, 16, 16, 16}, {32, 16, 3, 3}, S,
                  {1, 1, 1, 1}),
             1, true),
        with(conv("conv1_double", {16, 3, 32, 32}, {16, 3, 3, 3}, D,
                  {1, 1, 1, 1}),
             1, true),
        with(conv("conv2_double", {16, 16, 16, 16}, {32, 16, 3, 3}, D,
                  {1, 1, 1, 1}),
             1, true)),
    [](const ::testing::TestParamInfo<ConvCase> &info) {
      return std::string(info.param.name);
    });

ConvCase packed(ConvCase c) {
  c.packed = true;
  return c;
}

// Few channels: the taps packed into the quads of X's rows in N, H, C, W
// (G output pixels a compute row, a window row of one channel a quad),
// with every border: windows starting before their row (shifted quads),
// reaching past W (cleared elements) and past the tensor's last row, odd
// strides, pads and dilations, groups, and a batch over four groups.
INSTANTIATE_TEST_SUITE_P(
    PackedTaps, ConvKernel,
    ::testing::Values(
        // ResNet-18/50's first convolution at batch 1 and MobileNetV2's.
        packed(with(conv("resnet_conv1_half", {1, 3, 224, 224}, {64, 3, 7, 7},
                         H, {3, 3, 3, 3}, {2, 2}),
                    1, true)),
        // MobileNetV2's: the engine's estimate keeps im2col (its L1Bs load
        // their own rows there), within 7% of the packed cycles.
        with(conv("mobilenet_conv1_half", {1, 3, 224, 224}, {32, 3, 3, 3}, H,
                  {1, 1, 1, 1}, {2, 2}),
             1, true),
        packed(with(conv("odd_width_half", {1, 3, 9, 17}, {16, 3, 3, 5}, H,
                         {0, 2, 0, 1}, {2, 1}),
                    1, true)),
        packed(with(conv("two_channels_7_wide_half", {1, 2, 20, 32},
                         {16, 2, 5, 7}, H, {2, 3, 2, 3}, {1, 2}),
                    1, true, {2, 1})),
        packed(with(conv("grouped_7_wide_half", {2, 4, 10, 24}, {32, 2, 3, 7},
                         H, {1, 3, 1, 3}),
                    2, false)),
        with(conv("five_channels_5x5_half", {1, 5, 11, 32}, {16, 5, 5, 5}, H,
                  {2, 2, 2, 2}),
             1, false),
        packed(with(conv("one_channel_7x7_stride3_half", {1, 1, 16, 48},
                         {16, 1, 7, 7}, H, {3, 3, 3, 3}, {3, 3}),
                    1, true)),
        with(conv("batch4_groups_half", {4, 3, 12, 16}, {16, 3, 3, 3}, H,
                  {1, 1, 1, 1}),
             1, true),
        packed(with(conv("one_channel_stride3_single", {1, 1, 13, 23},
                         {16, 1, 5, 3}, S, {2, 1, 0, 2}, {1, 3}),
                    1, true, {1, 2})),
        packed(with(conv("resnet_conv1_single", {2, 3, 56, 56}, {16, 3, 7, 7},
                         S, {3, 3, 3, 3}, {2, 2}),
                    1, true)),
        packed(with(conv("two_channels_double", {1, 2, 10, 16}, {8, 2, 3, 3}, D,
                         {1, 0, 1, 2}, {2, 1}),
                    1, true)),
        packed(with(conv("one_channel_5x5_double", {1, 1, 12, 16}, {8, 1, 5, 5},
                         D, {2, 2, 2, 2}),
                    1, true))),
    [](const ::testing::TestParamInfo<ConvCase> &info) {
      return std::string(info.param.name);
    });

ConvCase runtimeW(ConvCase c) {
  c.constantW = false;
  return c;
}

// W a graph input, as in the ONNX node tests themselves: tiles built on
// the device from W's rows in M, KH, KW, C order (one group).
INSTANTIATE_TEST_SUITE_P(
    RuntimeW, ConvKernel,
    ::testing::Values(
        runtimeW(conv("basic_with_padding_single", {1, 1, 5, 5}, {1, 1, 3, 3},
                      S, {1, 1, 1, 1})),
        runtimeW(with(conv("autopad_same_lower_half", {1, 1, 5, 5},
                           {1, 1, 3, 3}, H, {0, 0, 0, 0}, {2, 2}),
                      1, false, {1, 1}, "SAME_LOWER")),
        runtimeW(conv("strides_padding_double", {1, 1, 7, 5}, {1, 1, 3, 3}, D,
                      {1, 1, 1, 1}, {2, 2})),
        runtimeW(with(conv("lenet_conv2_half", {2, 6, 14, 14}, {16, 6, 5, 5},
                           H),
                      1, true)),
        runtimeW(with(conv("dilated_strided_single", {1, 3, 12, 10},
                           {5, 3, 3, 3}, S, {2, 1, 0, 2}, {2, 3}),
                      1, true, {2, 1})),
        runtimeW(with(conv("resnet_like_half", {1, 64, 14, 14},
                           {64, 64, 3, 3}, H, {1, 1, 1, 1}),
                      1, true))),
    [](const ::testing::TestParamInfo<ConvCase> &info) {
      return std::string(info.param.name);
    });

// The engine reuses a plan for a product of the same plan key (ConvA's
// window and X's form, C's form, N, K, the bias): a repeated Conv is
// planned once, and a Conv that differs from one planned before in any one
// of the key's fields is planned anew (reusing the other's plan would load
// images that do not lie out as planned, or misplace rows) and still
// matches the reference.
// X16: where four or two MABs share each row (64 or 128 output channels,
// 4 or 8 N-tiles), or the L1Bs share one image of all their rows (ResNet's
// first convolution over packed taps), every MAB block-floats only the
// image slots its own products read, at its base address ($mb); with 256
// channels in per-L1B images every MAB reads every row of its image and
// the whole image is converted. The results match the reference either
// way.
TEST(ConvOwnRows, BlockFloatsOnlyTheSlotsEachMabReads) {
  struct Expected {
    ConvCase c;
    bool ownRows;
  };
  ConvCase packedConv1 =
      packed(with(conv("own_rows_resnet_conv1", {1, 3, 224, 224}, {64, 3, 7, 7},
                       H, {3, 3, 3, 3}, {2, 2}),
                  1, true));
  for (const Expected &e :
       {Expected{conv("own_rows_64", {1, 64, 28, 28}, {64, 64, 3, 3}, H,
                      {1, 1, 1, 1}),
                 true},
        Expected{conv("own_rows_128", {1, 64, 14, 14}, {128, 64, 3, 3}, H,
                      {1, 1, 1, 1}),
                 true},
        Expected{packedConv1, true},
        Expected{conv("every_row_256", {1, 64, 14, 14}, {256, 64, 1, 1}, H),
                 false}}) {
    SCOPED_TRACE(e.c.name);
    KernelRun run;
    expectMatchesTheReference(e.c, &run);
    size_t bases = 0;
    for (size_t at = run.program.find("$mb"); at != std::string::npos;
         at = run.program.find("$mb", at + 1))
      ++bases;
    EXPECT_EQ(bases > 0, e.ownRows) << run.description.variant;
  }
}

TEST(ConvPlanCache, PlansAnewWhenAKeyFieldDiffers) {
  ConvCase base =
      conv("cache_base_half", {2, 8, 9, 9}, {16, 8, 3, 3}, H, {1, 1, 1, 1});
  expectMatchesTheReference(base);
  gemm::PlanCacheCounts before = gemm::planCacheCounts();
  expectMatchesTheReference(base);
  gemm::PlanCacheCounts after = gemm::planCacheCounts();
  EXPECT_EQ(after.planned, before.planned) << "the same Conv planned again";
  EXPECT_GT(after.reused, before.reused);

  ConvCase otherPads = base;
  otherPads.pads = {2, 2, 0, 0}; // the same Y, the window shifted
  ConvCase otherDilation = with(base, 1, false, {2, 2});
  otherDilation.pads = {2, 2, 2, 2};
  ConvCase otherStrides = base;
  otherStrides.strides = {2, 2};
  ConvCase otherBatch = base;
  otherBatch.x[0] = 3;
  ConvCase otherChannels = base;
  otherChannels.x[1] = otherChannels.w[1] = 24;
  ConvCase otherM = base;
  otherM.w[0] = 32;
  ConvCase otherType = base;
  otherType.type = S;
  ConvCase withBias = with(base, 1, true);
  ConvCase grouped = with(base, 2, false);
  grouped.w[1] = 4;
  for (ConvCase *c :
       {&otherPads, &otherDilation, &otherStrides, &otherBatch, &otherChannels,
        &otherM, &otherType, &withBias, &grouped}) {
    SCOPED_TRACE(::testing::Message()
                 << "pads " << c->pads[0] << "," << c->pads[1] << " strides "
                 << c->strides[0] << " dilations " << c->dilations[0] << " x "
                 << c->x[0] << "x" << c->x[1] << " w " << c->w[0] << "x"
                 << c->w[1] << " group " << c->group << " bias " << c->bias
                 << " type " << int(c->type));
    expectMatchesTheReference(base);
    before = gemm::planCacheCounts();
    expectMatchesTheReference(*c);
    after = gemm::planCacheCounts();
    EXPECT_GT(after.planned, before.planned) << "took another Conv's plan";
  }
}

} // namespace
