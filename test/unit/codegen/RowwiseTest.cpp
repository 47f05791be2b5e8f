//===- RowwiseTest.cpp - LayerNormalization and Softmax over long rows ----===//
//
// The BERT-like encoder's LayerNormalization ([1, 128, 256]) and attention
// Softmax ([4, 128, 128]), LogSoftmax, normalisation over two axes, rows of
// 512 long words and more than one pass, each on random-filled memory with
// no hazard, against pfvm:cpu within the bounds docs/codegen.md (N5)
// documents; and what the kernel leaves to others.
//
//===----------------------------------------------------------------------===//

#include "KernelHarness.h"

#include "mncc/reference/SimpleContext.h"

#include "gtest/gtest.h"

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::testing;

namespace {

reference::Attribute intAttribute(int64_t value) {
  reference::Attribute a;
  a.kind = reference::Attribute::Kind::Int;
  a.i = value;
  return a;
}

struct Case {
  std::string name;
  std::string opType;
  std::vector<int64_t> shape;
  int64_t axis = -1;
  /// LayerNormalization: B given.
  bool bias = true;
  float low = -1, high = 1;
  double atol = 1e-6, rtol = 1e-5;
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

class RowwiseKernel : public ::testing::TestWithParam<Case> {};

TEST_P(RowwiseKernel, MatchesTheReferenceOnRandomMemory) {
  const Case &c = GetParam();
  bool half = c.type == DeviceType::Half;
  // Half: the reference on the inputs as the device holds them, its result
  // rounded to half (the device rounds its single result once).
  std::vector<reference::Tensor> inputs = {
      randomTensor(c.shape, 21, c.low, c.high)};
  if (half)
    inputs[0] = throughHalf(inputs[0]);
  std::vector<bool> constant = {false};
  std::map<std::string, reference::Attribute> attributes;
  attributes["axis"] = intAttribute(c.axis);
  if (c.opType == "LayerNormalization") {
    size_t rank = c.shape.size();
    size_t axis = size_t(c.axis < 0 ? c.axis + int64_t(rank) : c.axis);
    std::vector<int64_t> normalised(c.shape.begin() + axis, c.shape.end());
    inputs.push_back(randomTensor(normalised, 22, 0.5f, 1.5f));
    constant.push_back(true);
    if (c.bias) {
      inputs.push_back(randomTensor(normalised, 23, -0.5f, 0.5f));
      constant.push_back(true);
    }
  }
  KernelRequest request =
      makeRequest(c.opType, inputs, {c.shape}, c.type, constant);
  request.attributes = attributes;
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runKernel(request, inputs, reference::DType::Float32, run, error))
      << error;
  EXPECT_EQ(run.description.generator, "rowwise");
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();

  std::vector<reference::Value> values;
  for (const reference::Tensor &t : inputs)
    values.push_back(reference::Value(t));
  reference::SimpleKernelContext context(c.opType, values, 1);
  for (const auto &[name, attribute] : attributes)
    context.setAttribute(name, attribute);
  reference::Status status = context.run();
  ASSERT_TRUE(status.ok()) << status.message();
  reference::Tensor expected =
      half ? throughHalf(context.outputTensor(0)) : context.outputTensor(0);
  Comparison comparison =
      compareTensors(run.outputs[0], expected, c.atol, c.rtol);
  EXPECT_TRUE(comparison.within)
      << comparison.firstMismatch << " (max rel " << comparison.maxRel << ")";
  std::printf("%s: %llu cycles, max abs %.3g, max rel %.3g\n", c.name.c_str(),
              (unsigned long long)run.stats.Cycles, comparison.maxAbs,
              comparison.maxRel);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, RowwiseKernel,
    ::testing::Values(
        // The BERT-like encoder (bench/models/export_bert.py).
        Case{"LayerNorm_bert",
             "LayerNormalization",
             {1, 128, 256},
             -1,
             true,
             -3,
             3},
        Case{"Softmax_bert_attention",
             "Softmax",
             {4, 128, 128},
             -1,
             true,
             -8,
             8},
        Case{"LogSoftmax_bert_attention",
             "LogSoftmax",
             {4, 128, 128},
             -1,
             true,
             -8,
             8},
        // Over two axes (8 x 128 = 512 long words a row), no B, 4 groups.
        Case{"LayerNorm_two_axes", "LayerNormalization", {4, 8, 128}, 1, false},
        // Large logits: the row's maximum keeps exp in range.
        Case{"Softmax_large_logits",
             "Softmax",
             {2, 3, 512},
             -1,
             true,
             -60,
             60,
             1e-7},
        // A batch-1 tensor in group 0.
        Case{"Softmax_one_group", "Softmax", {1, 16, 128}},
        // 1500 rows a group: 192 long words per PE, passes of 128 and 64.
        Case{"LayerNorm_two_passes", "LayerNormalization", {6000, 256}},
        // Half (float_dtype=half): rows of 256 halves, widened to single
        // and rounded back once (N7): within one half rounding (2^-10) of
        // the reference's rounded result, and the scale's and B's
        // roundings to single.
        Case{"LayerNorm_bert_half",
             "LayerNormalization",
             {1, 128, 256},
             -1,
             true,
             -3,
             3,
             8e-3,
             4e-3,
             DeviceType::Half},
        Case{"LayerNorm_two_axes_half",
             "LayerNormalization",
             {4, 8, 256},
             1,
             false,
             -1,
             1,
             8e-3,
             4e-3,
             DeviceType::Half},
        Case{"Softmax_half",
             "Softmax",
             {4, 64, 256},
             -1,
             true,
             -8,
             8,
             1e-5,
             4e-3,
             DeviceType::Half},
        Case{"LogSoftmax_half",
             "LogSoftmax",
             {2, 32, 512},
             -1,
             true,
             -8,
             8,
             1e-3,
             4e-3,
             DeviceType::Half}),
    [](const ::testing::TestParamInfo<Case> &info) { return info.param.name; });

bool rowwiseMatches(const KernelRequest &request, std::string &whyNot) {
  for (const auto &generator : kernelGenerators())
    if (std::string(generator->name()) == "rowwise")
      return generator->matches(request, whyNot);
  whyNot = "no rowwise generator";
  return false;
}

TEST(RowwiseKernel, LeavesWhatItDoesNotCover) {
  std::string whyNot;
  // The MLP's Softmax: rows of 2 long words (the general kernel's).
  KernelRequest small = makeRequest("Softmax", {randomTensor({16, 10}, 1)},
                                    {{16, 10}}, DeviceType::Single);
  EXPECT_FALSE(rowwiseMatches(small, whyNot));
  EXPECT_NE(whyNot.find("padded"), std::string::npos) << whyNot;
  KernelRequest short_ = makeRequest("Softmax", {randomTensor({16, 64}, 1)},
                                     {{16, 64}}, DeviceType::Single);
  EXPECT_FALSE(rowwiseMatches(short_, whyNot));
  EXPECT_NE(whyNot.find("multiple of 64"), std::string::npos) << whyNot;
  // Softmax over another axis than the last.
  KernelRequest inner = makeRequest("Softmax", {randomTensor({4, 128, 128}, 1)},
                                    {{4, 128, 128}}, DeviceType::Single);
  inner.attributes["axis"] = intAttribute(1);
  EXPECT_FALSE(rowwiseMatches(inner, whyNot));
  EXPECT_NE(whyNot.find("last axis"), std::string::npos) << whyNot;
  // Double tensors, half rows of 128 (32 long words), and a Scale read at
  // run time.
  KernelRequest wide = makeRequest("Softmax", {randomTensor({4, 128, 256}, 1)},
                                   {{4, 128, 256}}, DeviceType::Double);
  EXPECT_FALSE(rowwiseMatches(wide, whyNot));
  EXPECT_NE(whyNot.find("double"), std::string::npos) << whyNot;
  KernelRequest half = makeRequest("Softmax", {randomTensor({4, 128, 128}, 1)},
                                   {{4, 128, 128}}, DeviceType::Half);
  EXPECT_FALSE(rowwiseMatches(half, whyNot));
  EXPECT_NE(whyNot.find("multiple of 64"), std::string::npos) << whyNot;
  KernelRequest runtimeScale = makeRequest(
      "LayerNormalization", {randomTensor({8, 256}, 1), randomTensor({256}, 2)},
      {{8, 256}}, DeviceType::Single);
  EXPECT_FALSE(rowwiseMatches(runtimeScale, whyNot));
  EXPECT_NE(whyNot.find("constants"), std::string::npos) << whyNot;
}

} // namespace
