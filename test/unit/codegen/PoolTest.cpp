//===- PoolTest.cpp - MaxPool, AveragePool and global pools on the emulator
//===//
//
// The attributes of the ONNX node tests (test_maxpool_2d_*, test_averagepool
// _2d_*, test_globalaveragepool, test_globalmaxpool) and LeNet-5 / small
// CNN sizes at batch 16, in the preferred NHWC order, on random-filled
// memory with no hazard, compared with the pfvm:cpu reference: max is
// exact, averages within the rounding of the sum and one product (P4).
//
//===----------------------------------------------------------------------===//

#include "KernelHarness.h"

#include "mncc/reference/SimpleContext.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::testing;

namespace {

struct Case {
  std::string name;
  std::string opType;
  std::vector<int64_t> shape;
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides = {};
  std::vector<int64_t> pads = {};
  std::string autoPad = "";
  bool ceil = false;
  std::vector<int64_t> dilations = {};
  bool countIncludePad = false;
  /// The tensors' format (float_dtype=half, float, double).
  DeviceType type = DeviceType::Single;
  /// A part the kernel's variant must name (how it ran), if any.
  std::string variantHas = "";
  /// The generator that must take it: the pool kernel, or the depthwise
  /// kernel's bands for a MaxPool whose rows fit them (D10).
  std::string generator = "pool";
  /// Run that generator even if one ahead of it matches (the pool
  /// kernel's MaxPool).
  bool force = false;
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

reference::Attribute ints(std::vector<int64_t> values) {
  reference::Attribute a;
  a.kind = reference::Attribute::Kind::Ints;
  a.ints = std::move(values);
  return a;
}
reference::Attribute integer(int64_t value) {
  reference::Attribute a;
  a.kind = reference::Attribute::Kind::Int;
  a.i = value;
  return a;
}

class PoolKernel : public ::testing::TestWithParam<Case> {};

TEST_P(PoolKernel, MatchesTheReferenceOnRandomMemory) {
  const Case &c = GetParam();
  std::map<std::string, reference::Attribute> attributes;
  if (!c.kernel.empty())
    attributes["kernel_shape"] = ints(c.kernel);
  if (!c.strides.empty())
    attributes["strides"] = ints(c.strides);
  if (!c.pads.empty())
    attributes["pads"] = ints(c.pads);
  if (!c.dilations.empty())
    attributes["dilations"] = ints(c.dilations);
  if (!c.autoPad.empty()) {
    reference::Attribute a;
    a.kind = reference::Attribute::Kind::String;
    a.s = c.autoPad;
    attributes["auto_pad"] = a;
  }
  if (c.ceil)
    attributes["ceil_mode"] = integer(1);
  if (c.countIncludePad)
    attributes["count_include_pad"] = integer(1);

  bool half = c.type == DeviceType::Half;
  bool isDouble = c.type == DeviceType::Double;
  bool isMax = c.opType.find("Max") != std::string::npos;
  std::vector<reference::Tensor> inputs = {
      isDouble ? randomDoubleTensor(c.shape, 5, -4, 4)
               : randomTensor(c.shape, 5, -4, 4)};
  if (isDouble) {
    // Special values: infinities of both signs for max (no window holds
    // opposite infinities for the sums), -0, values near the range's top.
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> specials = {inf, -0.0, 1e300, 0x1.fffffffffffffp+1};
    if (isMax)
      specials.insert(specials.end(), {-inf, -1e300, 0.0});
    for (int64_t i = 3; i < inputs[0].numElements(); i += 97)
      inputs[0].data<double>()[i] = specials[size_t(i / 97) % specials.size()];
  }
  reference::SimpleKernelContext context(
      c.opType, {reference::Value(half ? throughHalf(inputs[0]) : inputs[0])},
      1);
  for (const auto &[name, attribute] : attributes)
    context.setAttribute(name, attribute);
  reference::Status status = context.run();
  ASSERT_TRUE(status.ok()) << status.message();
  reference::Tensor expected =
      half ? throughHalf(context.outputTensor(0)) : context.outputTensor(0);

  KernelRequest request =
      makeRequest(c.opType, inputs, {expected.shape()}, c.type);
  request.attributes = attributes;
  KernelRun run;
  std::string error;
  HarnessOptions options;
  if (c.force)
    options.generator = c.generator;
  ASSERT_TRUE(runKernel(request, inputs,
                        isDouble ? reference::DType::Float64
                                 : reference::DType::Float32,
                        run, error, options))
      << error;
  EXPECT_EQ(run.description.generator, c.generator);
  EXPECT_NE(run.description.variant.find(c.variantHas), std::string::npos)
      << run.description.variant;
  std::printf("%s: %llu cycles, %llu MV statements\n", c.name.c_str(),
              (unsigned long long)run.stats.Cycles,
              (unsigned long long)run.stats.MvStatements);
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  EXPECT_EQ(run.outputForms[0].order, (std::vector<unsigned>{0, 2, 3, 1}));
  // Max exact; averages within the order of the sum and one product, in
  // half each step rounded to half (P6), in double the sum's order and two
  // roundings of 1 / n and the product (P7).
  Comparison comparison = compareTensors(run.outputs[0], expected,
                                         isMax      ? 0
                                         : half     ? 5e-2
                                         : isDouble ? 1e-14
                                                    : 1e-6,
                                         isMax      ? 0
                                         : half     ? 8e-3
                                         : isDouble ? 4e-16
                                                    : 4e-7);
  EXPECT_TRUE(comparison.within)
      << comparison.firstMismatch << " (max rel " << comparison.maxRel << ")";
  if (isDouble)
    std::printf("%s: max abs %.3g, max rel %.3g\n", c.name.c_str(),
                comparison.maxAbs, comparison.maxRel);
  // The channel padding of every output row is zero.
  const DramForm &form = run.outputForms[0];
  for (unsigned g = 0; g < form.groups; ++g)
    for (int64_t row = 0; row < form.rowsInGroup(g); ++row)
      for (int64_t e = form.innerExtent(); e < form.innerPadded(); ++e) {
        int64_t perLongWord = elementsPerLongWord(form.type);
        unsigned bits = deviceTypeBits(form.type);
        uint64_t word =
            run.outputImages[0]
                .data[g][size_t(row * form.rowLongWords() + e / perLongWord)];
        uint64_t element = word >> (64 - bits * (e % perLongWord + 1)) &
                           ((uint64_t(1) << bits) - 1);
        ASSERT_EQ(element, 0u) << "padding of row " << row << " in group " << g;
      }
}

std::vector<Case> poolCases() {
  std::vector<Case> all = {
      Case{"maxpool_2d_default", "MaxPool", {1, 3, 32, 32}, {2, 2}},
      Case{"maxpool_2d_pads",
           "MaxPool",
           {1, 3, 28, 28},
           {3, 3},
           {},
           {2, 2, 2, 2}},
      Case{"maxpool_2d_strides", "MaxPool", {1, 3, 32, 32}, {5, 5}, {3, 3}},
      Case{"maxpool_2d_same_upper",
           "MaxPool",
           {1, 3, 32, 32},
           {3, 3},
           {},
           {},
           "SAME_UPPER"},
      Case{"maxpool_2d_same_lower",
           "MaxPool",
           {1, 3, 32, 32},
           {3, 3},
           {},
           {},
           "SAME_LOWER"},
      Case{"maxpool_2d_ceil",
           "MaxPool",
           {1, 1, 4, 4},
           {3, 3},
           {2, 2},
           {},
           "",
           true},
      Case{"maxpool_2d_dilations",
           "MaxPool",
           {1, 1, 4, 4},
           {2, 2},
           {1, 1},
           {},
           "",
           false,
           {2, 2}},
      Case{"maxpool_2d_precomputed_pads",
           "MaxPool",
           {1, 1, 5, 5},
           {5, 5},
           {},
           {2, 2, 2, 2}},
      Case{"averagepool_2d_default", "AveragePool", {1, 3, 32, 32}, {2, 2}},
      Case{"averagepool_2d_pads",
           "AveragePool",
           {1, 3, 28, 28},
           {3, 3},
           {},
           {2, 2, 2, 2}},
      Case{"averagepool_2d_pads_count_include_pad",
           "AveragePool",
           {1, 3, 28, 28},
           {3, 3},
           {},
           {2, 2, 2, 2},
           "",
           false,
           {},
           true},
      Case{"averagepool_2d_strides",
           "AveragePool",
           {1, 3, 32, 32},
           {5, 5},
           {3, 3}},
      Case{"averagepool_2d_same_upper",
           "AveragePool",
           {1, 3, 32, 32},
           {3, 3},
           {},
           {},
           "SAME_UPPER"},
      Case{"averagepool_2d_ceil",
           "AveragePool",
           {1, 1, 4, 4},
           {3, 3},
           {2, 2},
           {},
           "",
           true},
      Case{"globalaveragepool", "GlobalAveragePool", {1, 3, 5, 5}, {}},
      Case{"globalmaxpool", "GlobalMaxPool", {1, 3, 5, 5}, {}},
      // LeNet-5 at batch 16 (2x2, stride 2, after each convolution).
      Case{"lenet_pool1_max", "MaxPool", {16, 6, 28, 28}, {2, 2}, {2, 2}},
      Case{"lenet_pool2_avg", "AveragePool", {16, 16, 10, 10}, {2, 2}, {2, 2}},
      // A small CNN at batch 16: 3x3 stride 2 padded, a wide channel
      // dimension over two groups of 64 long words, a global average.
      Case{"cnn_maxpool_3x3_s2",
           "MaxPool",
           {16, 32, 16, 16},
           {3, 3},
           {2, 2},
           {1, 1, 1, 1}},
      Case{"cnn_wide_channels", "MaxPool", {2, 160, 6, 6}, {2, 2}, {2, 2}},
      Case{"cnn_global_average", "GlobalAveragePool", {16, 64, 8, 8}, {}},
      // Half.
      Case{"maxpool_2d_pads_half",
           "MaxPool",
           {1, 3, 28, 28},
           {3, 3},
           {},
           {2, 2, 2, 2},
           "",
           false,
           {},
           false,
           DeviceType::Half},
      Case{"lenet_pool1_max_half",
           "MaxPool",
           {16, 6, 28, 28},
           {2, 2},
           {2, 2},
           {},
           "",
           false,
           {},
           false,
           DeviceType::Half},
      Case{"averagepool_2d_pads_half",
           "AveragePool",
           {1, 3, 28, 28},
           {3, 3},
           {},
           {2, 2, 2, 2},
           "",
           false,
           {},
           false,
           DeviceType::Half},
      Case{"globalaveragepool_half",
           "GlobalAveragePool",
           {2, 40, 7, 7},
           {},
           {},
           {},
           "",
           false,
           {},
           false,
           DeviceType::Half},
      // X over a PDM per group beside Y: in bands of rows. ResNet's first
      // pool at batch 8 (the four groups together). One image of 64
      // channel long words took bands in group 0; its rows now lie over
      // the four groups (C2, X22) and it takes the per-unit plan.
      Case{"resnet_b8_maxpool_bands",
           "MaxPool",
           {8, 64, 112, 112},
           {3, 3},
           {2, 2},
           {1, 1, 1, 1},
           "",
           false,
           {},
           false,
           DeviceType::Single,
           "the four groups together, X in"},
      Case{"wide_image_maxpool_bands",
           "MaxPool",
           {1, 128, 112, 112},
           {3, 3},
           {2, 2},
           {1, 1, 1, 1},
           "",
           false,
           {},
           false,
           DeviceType::Single,
           "NHWC, 7 outputs per unit"},
      Case{"globalmaxpool_half",
           "GlobalMaxPool",
           {1, 3, 5, 5},
           {},
           {},
           {},
           "",
           false,
           {},
           false,
           DeviceType::Half}};
  // Double: these single cases, and three of their own (dilations with
  // ceil_mode, count_include_pad with strides, a wide global average).
  std::vector<Case> doubles = {
      Case{"maxpool_2d_dilations_ceil", "MaxPool", {2, 5, 9, 9}, {2, 2},
           {2, 2}, {}, "", true, {2, 2}},
      Case{"averagepool_2d_count_include_pad", "AveragePool", {2, 7, 11, 11},
           {3, 3}, {2, 2}, {1, 1, 1, 1}, "", false, {}, true},
      Case{"globalaveragepool_wide", "GlobalAveragePool", {2, 70, 7, 7}, {}}};
  for (const char *name :
       {"maxpool_2d_pads", "lenet_pool1_max", "averagepool_2d_pads",
        "lenet_pool2_avg", "cnn_global_average", "globalmaxpool"})
    for (const Case &c : all)
      if (c.name == name)
        doubles.push_back(c);
  for (Case c : doubles) {
    c.name += "_double";
    c.type = DeviceType::Double;
    all.push_back(c);
  }
  // The depthwise kernel's bands take every MaxPool above; the pool
  // kernel keeps its own cases, forced (its bands of X, P8, as they are).
  std::vector<Case> forced;
  for (Case &c : all) {
    if (c.opType != "MaxPool")
      continue;
    if (c.name.find("_bands") != std::string::npos) {
      c.force = true;
      continue;
    }
    Case pool = c;
    pool.name += "_pool";
    pool.force = true;
    forced.push_back(pool);
    c.generator = "pool-bands";
  }
  all.insert(all.end(), forced.begin(), forced.end());
  // The bands' own cases (D10): ResNet's first pool in half (64 x 112 x
  // 112, 3 x 3, stride 2, pad 1), small odd shapes with ceil_mode,
  // asymmetric pads, dilations and strides over the kernel, batches that
  // place the items on group 0's L1Bs (3), each group's (8) and in half,
  // single and double.
  auto bands = [](Case c) {
    c.generator = "pool-bands";
    return c;
  };
  std::vector<Case> own = {
      bands(Case{"resnet_maxpool_half", "MaxPool", {1, 64, 112, 112}, {3, 3},
                 {2, 2}, {1, 1, 1, 1}, "", false, {}, false, DeviceType::Half,
                 "MaxPool, half, vector ALU"}),
      bands(Case{"odd_ceil_half", "MaxPool", {1, 5, 7, 9}, {3, 3}, {2, 2},
                 {1, 1, 1, 1}, "", true, {}, false, DeviceType::Half}),
      bands(Case{"odd_ceil_single", "MaxPool", {1, 5, 7, 9}, {3, 3}, {2, 2},
                 {1, 1, 1, 1}, "", true}),
      bands(Case{"odd_ceil_double", "MaxPool", {1, 5, 7, 9}, {3, 3}, {2, 2},
                 {1, 1, 1, 1}, "", true, {}, false, DeviceType::Double}),
      bands(Case{"asymmetric_2x3_half", "MaxPool", {2, 17, 11, 13}, {2, 3},
                 {2, 1}, {0, 1, 1, 0}, "", false, {}, false,
                 DeviceType::Half}),
      bands(Case{"dilated_ceil_double", "MaxPool", {1, 3, 10, 7}, {3, 3},
                 {1, 2}, {}, "", true, {2, 2}, false, DeviceType::Double}),
      bands(Case{"stride_over_kernel_batch3", "MaxPool", {3, 40, 9, 9}, {2, 2},
                 {3, 3}, {}, "", true}),
      bands(Case{"batch8_3x3_s2_half", "MaxPool", {8, 16, 20, 20}, {3, 3},
                 {2, 2}, {1, 1, 1, 1}, "", false, {}, false, DeviceType::Half,
                 "on each group's L1Bs"}),
      bands(Case{"batch5_wide_single", "MaxPool", {5, 70, 6, 30}, {3, 3},
                 {1, 2}, {1, 1, 1, 1}}),
      // One output row's band over LM0: items of column segments, -inf
      // pad columns moved in with them.
      bands(Case{"resnet_maxpool_single", "MaxPool", {1, 64, 112, 112},
                 {3, 3}, {2, 2}, {1, 1, 1, 1}, "", false, {}, false,
                 DeviceType::Single, "column segments"}),
      bands(Case{"resnet_maxpool_double", "MaxPool", {1, 64, 112, 112},
                 {3, 3}, {2, 2}, {1, 1, 1, 1}, "", false, {}, false,
                 DeviceType::Double, "column segments"}),
      bands(Case{"resnet_b8_maxpool_single", "MaxPool", {8, 64, 112, 112},
                 {3, 3}, {2, 2}, {1, 1, 1, 1}, "", false, {}, false,
                 DeviceType::Single, "on each group's L1Bs"}),
      bands(Case{"segments_ceil_single", "MaxPool", {1, 64, 31, 101}, {3, 3},
                 {2, 2}, {1, 1, 1, 1}, "", true, {}, false, DeviceType::Single,
                 "column segments"}),
      bands(Case{"segments_dilated_ceil_double", "MaxPool", {2, 40, 13, 61},
                 {3, 3}, {1, 1}, {2, 1, 2, 3}, "", true, {2, 2}, false,
                 DeviceType::Double, "column segments"}),
  };
  all.insert(all.end(), own.begin(), own.end());
  return all;
}

INSTANTIATE_TEST_SUITE_P(
    Onnx, PoolKernel, ::testing::ValuesIn(poolCases()),
    [](const ::testing::TestParamInfo<Case> &info) { return info.param.name; });

TEST(PoolKernel, RefusesIndicesAndLargeWindows) {
  const KernelGenerator *pool = nullptr;
  for (const auto &g : kernelGenerators())
    if (std::string(g->name()) == "pool")
      pool = g.get();
  ASSERT_NE(pool, nullptr);
  std::vector<reference::Tensor> in = {randomTensor({1, 3, 8, 8}, 1)};
  KernelRequest request = makeRequest(
      "MaxPool", in, {{1, 3, 4, 4}, {1, 3, 4, 4}}, DeviceType::Single);
  request.attributes["kernel_shape"] = ints({2, 2});
  request.attributes["strides"] = ints({2, 2});
  std::string whyNot;
  EXPECT_FALSE(pool->matches(request, whyNot));
  EXPECT_NE(whyNot.find("Indices"), std::string::npos) << whyNot;
  KernelRequest large = makeRequest("MaxPool", {randomTensor({1, 3, 9, 9}, 1)},
                                    {{1, 3, 1, 1}}, DeviceType::Single);
  large.attributes["kernel_shape"] = ints({9, 9});
  EXPECT_FALSE(pool->matches(large, whyNot));
  EXPECT_NE(whyNot.find("window"), std::string::npos) << whyNot;
}

} // namespace
