//===- CastTest.cpp - Casts between device formats on the emulator --------===//
//
// Half <-> single <-> double over shapes of the conversions the dtype
// planner inserts under float_dtype=mixed (LeNet-5 and small-CNN
// activations at batch 16, NCHW and NHWC), on random-filled memory with no
// hazard. The expected result is the host's conversion of DeviceType.h
// (round to nearest even, overflow to infinity, no subnormals), which the
// device must match exactly (V4).
//
//===----------------------------------------------------------------------===//

#include "KernelHarness.h"

#include "mncc/codegen/DeviceType.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <random>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::testing;

namespace {

struct Case {
  std::string name;
  DeviceType from, to;
  std::vector<int64_t> shape;
  std::vector<unsigned> order = {};
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

reference::DType hostTypeOf(DeviceType type) {
  return type == DeviceType::Double ? reference::DType::Float64
                                    : reference::DType::Float32;
}

/// Random values over the half range and beyond, with special values in
/// front: zeros, infinities, overflow and underflow of half and single,
/// ties of half rounding.
reference::Tensor inputFor(const Case &c) {
  reference::Tensor in = randomTensor(c.shape, 3, -1, 1);
  std::vector<double> values(size_t(in.numElements()));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = double(in.data<float>()[i]) * std::ldexp(1.0, int(i % 61) - 30);
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> specials = {0.0,
                                  -0.0,
                                  inf,
                                  -inf,
                                  1.0,
                                  1e10,
                                  -1e10,
                                  1e-12,
                                  -1e-12,
                                  4.3e9,
                                  1 + 1.0 / 1024,
                                  1 + 3.0 / 1024,
                                  1 + 1.0 / 512 + 1.0 / 1024,
                                  3.5e38,
                                  1e-39,
                                  1e300};
  if (c.from == DeviceType::Double) {
    // Every bit of a double's significand, and values next to the ties and
    // limits of half rounding that a rounding through single would move
    // (1 + 2^-10 + 2^-40 rounds up once, to even twice), the largest half
    // (2 - 2^-9) 2^32 and its overflow, the smallest 2^-30.
    std::mt19937_64 engine(9);
    for (double &v : values)
      v *= 1 + std::ldexp(double(engine() >> 11), -83);
    const double u = std::ldexp(1.0, -10);
    for (double v : {1 + u + std::ldexp(1.0, -40), 1 + u - std::ldexp(1.0, -40),
                     -(1 + 3 * u + std::ldexp(1.0, -45)), 1 + 3 * u,
                     std::ldexp(2 - 2 * u, 32), std::ldexp(2 - u, 32),
                     std::ldexp(2 - u, 32) - std::ldexp(1.0, -10),
                     std::ldexp(1.0, 32), std::ldexp(1.0, -30),
                     std::ldexp(2 - u, -31), std::ldexp(2 - u, -31) - 1e-25,
                     std::ldexp(1.0, -31), -std::ldexp(1.0, -40), 1e-320})
      specials.push_back(v);
  }
  for (size_t i = 0; i < specials.size() && i < values.size(); ++i)
    values[i] = specials[i];
  reference::Tensor host(hostTypeOf(c.from), c.shape);
  for (size_t i = 0; i < values.size(); ++i) {
    if (host.dtype() == reference::DType::Float64)
      host.data<double>()[i] = values[i];
    else
      host.data<float>()[i] = float(values[i]);
  }
  return host;
}

/// The input as the device holds it, converted to the result format by
/// the host's rules, read back.
reference::Tensor expectedFor(const Case &c, const reference::Tensor &in) {
  int64_t n = in.numElements();
  // Device bits of `from`, read back exactly as doubles, then rounded to
  // `to` by the same rules.
  reference::Tensor wide(reference::DType::Float64, c.shape);
  std::vector<uint8_t> packed(size_t(n) * 8);
  EXPECT_TRUE(hostToDevice(in.dtype(), in.raw(), c.from, packed.data(), n));
  EXPECT_TRUE(deviceToHost(c.from, packed.data(), reference::DType::Float64,
                           wide.raw(), n));
  std::vector<uint8_t> converted(size_t(n) * 8);
  EXPECT_TRUE(hostToDevice(reference::DType::Float64, wide.raw(), c.to,
                           converted.data(), n));
  reference::Tensor expected(hostTypeOf(c.to), c.shape);
  EXPECT_TRUE(deviceToHost(c.to, converted.data(), hostTypeOf(c.to),
                           expected.raw(), n));
  return expected;
}

class CastKernel : public ::testing::TestWithParam<Case> {};

TEST_P(CastKernel, MatchesTheHostConversionExactly) {
  const Case &c = GetParam();
  reference::Tensor in = inputFor(c);
  KernelRequest request = makeRequest("Cast", {in}, {c.shape}, c.from);
  request.inputs[0].form = DramForm::canonical(c.from, c.shape, c.order);
  request.outputs[0].form = DramForm::canonical(c.to, c.shape, c.order);
  reference::Attribute to;
  to.kind = reference::Attribute::Kind::Int;
  to.i = c.to == DeviceType::Half ? 10 : c.to == DeviceType::Single ? 1 : 11;
  request.attributes["to"] = to;
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runKernel(request, {in}, hostTypeOf(c.to), run, error)) << error;
  EXPECT_EQ(run.description.generator, "cast");
  std::printf("%s: %llu cycles\n", c.name.c_str(),
              (unsigned long long)run.stats.Cycles);
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  Comparison comparison =
      compareTensors(run.outputs[0], expectedFor(c, in), 0, 0);
  EXPECT_TRUE(comparison.within) << comparison.firstMismatch;
  // The padding of every row is zero (C2), also where the rows pad
  // differently.
  const DramForm &form = run.outputForms[0];
  unsigned bits = deviceTypeBits(form.type);
  int64_t perLongWord = elementsPerLongWord(form.type);
  for (unsigned g = 0; g < form.groups; ++g)
    for (int64_t row = 0; row < form.rowsInGroup(g); ++row)
      for (int64_t e = form.innerExtent(); e < form.innerPadded(); ++e) {
        uint64_t word =
            run.outputImages[0]
                .data[g][size_t(row * form.rowLongWords() + e / perLongWord)];
        uint64_t element = bits == 64
                               ? word
                               : word >> (64 - bits * (e % perLongWord + 1)) &
                                     ((uint64_t(1) << bits) - 1);
        ASSERT_EQ(element, 0u) << "padding of row " << row << " in group " << g;
      }
}

using D = DeviceType;
INSTANTIATE_TEST_SUITE_P(
    Formats, CastKernel,
    ::testing::Values(
        // LeNet-5 conv1 activations (rows of 28 pad to 32 in both).
        Case{"single_to_half_lenet", D::Single, D::Half, {16, 6, 28, 28}},
        Case{"half_to_single_lenet", D::Half, D::Single, {16, 6, 28, 28}},
        // The flattened LeNet input of a fully connected layer.
        Case{"single_to_half_fc", D::Single, D::Half, {16, 784}},
        Case{"half_to_single_fc", D::Half, D::Single, {16, 784}},
        // Small CNN activations in NHWC (32 channels).
        Case{"single_to_half_nhwc",
             D::Single,
             D::Half,
             {16, 32, 16, 16},
             {0, 2, 3, 1}},
        Case{"half_to_single_nhwc",
             D::Half,
             D::Single,
             {16, 32, 16, 16},
             {0, 2, 3, 1}},
        Case{"single_to_double", D::Single, D::Double, {16, 784}},
        Case{"double_to_single", D::Double, D::Single, {16, 784}},
        Case{"half_to_double", D::Half, D::Double, {16, 784}},
        // Double to half, rounded once (rows of 784 and NHWC 16 channels:
        // the same padding in both).
        Case{"double_to_half_fc", D::Double, D::Half, {16, 784}},
        Case{"double_to_half_nhwc",
             D::Double,
             D::Half,
             {16, 16, 10, 10},
             {0, 2, 3, 1}},
        Case{"double_to_half_small", D::Double, D::Half, {3, 4, 16}},
        Case{"double_to_half_large", D::Double, D::Half, {64, 96, 64}},
        Case{"single_copy", D::Single, D::Single, {3, 4, 32}},
        // Rows that pad differently: 120 singles in 60 long words, 128
        // halves in 32; NHWC with 6 channels (8 singles, 16 halves); 28
        // singles in 16 long words, 28 doubles in 28.
        Case{"single_to_half_fc1", D::Single, D::Half, {16, 120}},
        Case{"half_to_single_fc1", D::Half, D::Single, {16, 120}},
        Case{"single_to_half_fc2", D::Single, D::Half, {16, 84}},
        Case{"single_to_half_nhwc6",
             D::Single,
             D::Half,
             {16, 6, 28, 28},
             {0, 2, 3, 1}},
        Case{"half_to_single_nhwc6",
             D::Half,
             D::Single,
             {16, 6, 28, 28},
             {0, 2, 3, 1}},
        Case{"single_to_double_rows28", D::Single, D::Double, {16, 6, 28, 28}},
        Case{"double_to_single_rows28", D::Double, D::Single, {16, 6, 28, 28}},
        // Small: one group.
        Case{"single_to_half_small", D::Single, D::Half, {3, 4, 16}},
        Case{"half_to_single_small", D::Half, D::Single, {3, 4, 16}}),
    [](const ::testing::TestParamInfo<Case> &info) { return info.param.name; });

TEST(CastKernel, LeavesRowsThatPadDifferentlyBetweenHalfAndDoubleToOthers) {
  const KernelGenerator *cast = nullptr;
  for (const auto &g : kernelGenerators())
    if (std::string(g->name()) == "cast")
      cast = g.get();
  ASSERT_NE(cast, nullptr);
  std::string whyNot;
  // Four halves pad to 16, four doubles to 4: a half of a word per PE.
  reference::Tensor small = randomTensor({3, 4}, 1);
  KernelRequest request = makeRequest("Cast", {small}, {{3, 4}}, D::Half);
  request.outputs[0].form = DramForm::canonical(D::Double, {3, 4});
  EXPECT_FALSE(cast->matches(request, whyNot));
  EXPECT_NE(whyNot.find("pad"), std::string::npos) << whyNot;
  request = makeRequest("Cast", {small}, {{3, 4}}, D::Double);
  request.outputs[0].form = DramForm::canonical(D::Half, {3, 4});
  EXPECT_FALSE(cast->matches(request, whyNot));
  EXPECT_NE(whyNot.find("four source"), std::string::npos) << whyNot;
  // Rows of 16 pad alike: taken.
  request.inputs[0].form = DramForm::canonical(D::Double, {3, 16});
  request.outputs[0].form = DramForm::canonical(D::Half, {3, 16});
  EXPECT_TRUE(cast->matches(request, whyNot)) << whyNot;
}

} // namespace

namespace {

// A half tensor widened and added to a single one in one kernel (V8): the
// Cast of a half product result folded into the residual Add that reads
// it. The widening is exact and the add the MAU's single add, so the
// result is the host's float sum of the half-rounded and the single
// operand, bit for bit, clamped by a fused Relu where there is one.
struct CastAddCase {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<unsigned> order;
  bool singleFirst = false;
  bool relu = false;
  /// A second result: the sum rounded to half (a Cast folded in, V9).
  bool halfCopy = false;
  /// The other operand half as well (both Casts folded in, V10).
  bool bothHalf = false;
};

void PrintTo(const CastAddCase &c, std::ostream *os) { *os << c.name; }

class CastAddKernel : public ::testing::TestWithParam<CastAddCase> {};

TEST_P(CastAddKernel, AddsTheWidenedHalfExactly) {
  const CastAddCase &c = GetParam();
  reference::Tensor half = randomTensor(c.shape, 5, -4, 4);
  reference::Tensor single = randomTensor(c.shape, 6, -4, 4);
  std::vector<reference::Tensor> inputs =
      c.singleFirst ? std::vector<reference::Tensor>{single, half}
                    : std::vector<reference::Tensor>{half, single};
  KernelRequest request = makeRequest("Add", inputs, {c.shape}, D::Single);
  request.inputs[c.singleFirst ? 1 : 0].form =
      DramForm::canonical(D::Half, c.shape, c.order);
  request.inputs[c.singleFirst ? 0 : 1].form =
      DramForm::canonical(c.bothHalf ? D::Half : D::Single, c.shape, c.order);
  request.outputs[0].form = DramForm::canonical(D::Single, c.shape, c.order);
  if (c.relu)
    request.activation = KernelActivation{
        "Relu", {0.0f, std::numeric_limits<float>::infinity()}};
  if (c.halfCopy) {
    KernelTensor copy;
    copy.name = "copy";
    copy.form = DramForm::canonical(D::Half, c.shape, c.order);
    request.outputs.push_back(copy);
  }
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runKernel(request, inputs, reference::DType::Float32, run,
                        error))
      << error;
  EXPECT_EQ(run.description.generator, "cast-add");
  std::printf("%s: %llu cycles\n", c.name.c_str(),
              (unsigned long long)run.stats.Cycles);
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  // The addend's L2BM -> L1BM copy issues beside the source's broadcast
  // to the PEs, and with the half copy the sum's copy to the L2BM beside
  // its broadcast back (VsmWriter::sideBySide).
  EXPECT_NE(run.program.find("; l2bmb"), std::string::npos);
  if (c.halfCopy) {
    EXPECT_NE(run.program.find("; l1bmp"), std::string::npos);
  }
  int64_t n = half.numElements();
  std::vector<uint8_t> packed(size_t(n) * 2);
  ASSERT_TRUE(hostToDevice(reference::DType::Float32, half.raw(), D::Half,
                           packed.data(), n));
  reference::Tensor rounded(reference::DType::Float32, c.shape);
  ASSERT_TRUE(deviceToHost(D::Half, packed.data(), reference::DType::Float32,
                           rounded.raw(), n));
  // A half other operand is the host's rounding of it.
  reference::Tensor other = single;
  if (c.bothHalf) {
    ASSERT_TRUE(hostToDevice(reference::DType::Float32, single.raw(), D::Half,
                             packed.data(), n));
    ASSERT_TRUE(deviceToHost(D::Half, packed.data(), reference::DType::Float32,
                             other.raw(), n));
    EXPECT_NE(run.description.variant.find("widened half operand"),
              std::string::npos)
        << run.description.variant;
  }
  reference::Tensor expected(reference::DType::Float32, c.shape);
  for (int64_t i = 0; i < n; ++i) {
    float sum = rounded.data<float>()[i] + other.data<float>()[i];
    expected.data<float>()[i] = c.relu && sum < 0 ? 0.0f : sum;
  }
  Comparison comparison = compareTensors(run.outputs[0], expected, 0, 0);
  EXPECT_TRUE(comparison.within) << comparison.firstMismatch;
  ASSERT_EQ(run.outputs.size(), c.halfCopy ? 2u : 1u);
  if (!c.halfCopy)
    return;
  // The copy is the sum rounded once to half, as the Cast it replaces.
  EXPECT_NE(run.description.variant.find("half copy"), std::string::npos)
      << run.description.variant;
  ASSERT_TRUE(hostToDevice(reference::DType::Float32, expected.raw(), D::Half,
                           packed.data(), n));
  reference::Tensor narrowed(reference::DType::Float32, c.shape);
  ASSERT_TRUE(deviceToHost(D::Half, packed.data(), reference::DType::Float32,
                           narrowed.raw(), n));
  Comparison copy = compareTensors(run.outputs[1], narrowed, 0, 0);
  EXPECT_TRUE(copy.within) << copy.firstMismatch;
  std::string where;
  EXPECT_TRUE(paddingIsZero(run.outputForms[1], run.outputImages[1], where))
      << where;
}

const std::vector<unsigned> kNhwc = {0, 2, 3, 1};
INSTANTIATE_TEST_SUITE_P(
    Shapes, CastAddKernel,
    ::testing::Values(
        // A ResNet layer-2-like residual, NHWC, then Relu.
        CastAddCase{"resnet_block_relu", {1, 128, 28, 28}, kNhwc, false, true},
        CastAddCase{"single_first_relu", {1, 64, 14, 14}, kNhwc, true, true},
        CastAddCase{"no_activation", {2, 32, 9, 7}, kNhwc, false, false},
        // Four groups at batch 8, and a small one-group tensor.
        CastAddCase{"batch8", {8, 64, 8, 8}, kNhwc, true, false},
        CastAddCase{"small", {3, 4, 32}, {}, false, true},
        // With the half copy the next block's convolutions read: layer 1
        // and layer 3 of ResNet-50, batch 8, a one-group tensor, and rows
        // of 48 (three quads of halves, six of singles).
        CastAddCase{
            "copy_resnet_layer1", {1, 256, 56, 56}, kNhwc, false, true, true},
        CastAddCase{
            "copy_resnet_layer3", {1, 1024, 14, 14}, kNhwc, true, true, true},
        CastAddCase{"copy_batch8", {8, 64, 8, 8}, kNhwc, true, false, true},
        CastAddCase{"copy_small", {3, 4, 32}, {}, false, false, true},
        CastAddCase{"copy_rows_of_48", {2, 48, 7, 5}, kNhwc, false, true, true},
        // Both operands half: a ResNet block's downsampling convolution's
        // result widened as well, with and without the half copy.
        CastAddCase{"halves_resnet_layer1",
                    {1, 256, 56, 56},
                    kNhwc,
                    false,
                    true,
                    true,
                    true},
        CastAddCase{"halves_resnet_layer2",
                    {1, 512, 28, 28},
                    kNhwc,
                    true,
                    true,
                    false,
                    true},
        CastAddCase{
            "halves_batch8", {8, 64, 8, 8}, kNhwc, false, false, true, true},
        CastAddCase{"halves_small", {3, 4, 32}, {}, true, false, false, true}),
    [](const ::testing::TestParamInfo<CastAddCase> &info) {
      return info.param.name;
    });

TEST(CastAddKernel, DeclinesWhatItDoesNotFuse) {
  const KernelGenerator *castAdd = nullptr;
  for (const auto &g : kernelGenerators())
    if (std::string(g->name()) == "cast-add")
      castAdd = g.get();
  ASSERT_NE(castAdd, nullptr);
  std::string whyNot;
  reference::Tensor a = randomTensor({16, 120}, 1);
  // Two singles: the elementwise kernel's.
  KernelRequest request = makeRequest("Add", {a, a}, {{16, 120}}, D::Single);
  EXPECT_FALSE(castAdd->matches(request, whyNot));
  EXPECT_NE(whyNot.find("half and a single"), std::string::npos) << whyNot;
  // 120 halves pad to 128, 120 singles to 120.
  request.inputs[0].form = DramForm::canonical(D::Half, {16, 120});
  EXPECT_FALSE(castAdd->matches(request, whyNot));
  EXPECT_NE(whyNot.find("padding"), std::string::npos) << whyNot;
  // A half copy beside the single result, but not a single one.
  reference::Tensor b = randomTensor({64, 128}, 2);
  KernelRequest copied = makeRequest("Add", {b, b}, {{64, 128}}, D::Single);
  copied.inputs[0].form = DramForm::canonical(D::Half, {64, 128});
  EXPECT_TRUE(castAdd->matches(copied, whyNot)) << whyNot;
  KernelTensor copy;
  copy.form = DramForm::canonical(D::Half, {64, 128});
  copied.outputs.push_back(copy);
  EXPECT_TRUE(castAdd->matches(copied, whyNot)) << whyNot;
  copied.outputs[1].form = DramForm::canonical(D::Single, {64, 128});
  EXPECT_FALSE(castAdd->matches(copied, whyNot));
  EXPECT_NE(whyNot.find("half copy"), std::string::npos) << whyNot;
  // Not an Add.
  request.opType = "Mul";
  EXPECT_FALSE(castAdd->matches(request, whyNot));
}

} // namespace
