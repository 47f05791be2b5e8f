//===- ActivationTest.cpp - Element-wise math operators on the emulator ---===//
//
// Shapes and attributes of the ONNX node tests (test_exp, test_sigmoid,
// test_leakyrelu, test_clip_*, test_div, ...: [3, 4, 5] and their
// examples) and LeNet-5 sizes at batch 16, each on random-filled memory
// with no hazard, compared with the pfvm:cpu reference within the
// tolerance docs/codegen.md (E3) documents, padding checked to be zero.
//
//===----------------------------------------------------------------------===//

#include "KernelHarness.h"

#include "mncc/reference/SimpleContext.h"

#include "gtest/gtest.h"

#include <cmath>
#include <iterator>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::testing;

namespace {

/// The tensor's values as float64 (exact from float32).
reference::Tensor toDouble(const reference::Tensor &t) {
  reference::Tensor wide(reference::DType::Float64, t.shape());
  for (int64_t i = 0; i < t.numElements(); ++i)
    wide.data<double>()[i] = t.elementAsDouble(i);
  return wide;
}

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

struct Case {
  std::string name;
  std::string opType;
  std::vector<std::vector<int64_t>> shapes;
  /// Input value ranges.
  float low = -1, high = 1;
  std::map<std::string, reference::Attribute> attributes;
  /// Inputs known at compile time (Clip's bounds).
  std::vector<reference::Tensor> constants;
  double rtol = 4e-7;
  double atol = 0;
  /// The tensors' format (float_dtype=half, float, double).
  DeviceType type = DeviceType::Single;
  /// Double: the largest distance allowed from pfvm:cpu in double, in
  /// ulps (E8, M8).
  double ulps = 0;
  /// Double: special values spread through the first input.
  std::vector<double> specials;
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

reference::Attribute floatAttribute(float value) {
  reference::Attribute a;
  a.kind = reference::Attribute::Kind::Float;
  a.f = value;
  return a;
}

reference::Tensor scalar(float value) {
  return reference::Tensor::fromVector<float>(reference::DType::Float32, {},
                                              {value});
}

void runCase(const Case &c, KernelRun *out = nullptr) {
  bool half = c.type == DeviceType::Half;
  bool isDouble = c.type == DeviceType::Double;
  std::vector<reference::Tensor> inputs;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    reference::Tensor t =
        isDouble ? randomDoubleTensor(c.shapes[i], 11 + i, c.low, c.high)
                 : randomTensor(c.shapes[i], 11 + i, c.low, c.high);
    if (c.opType == "Div" && i == 1) // denominators away from zero
      for (int64_t e = 0; e < t.numElements(); ++e) {
        double d = t.elementAsDouble(e);
        d += d < 0 ? -0.25 : 0.25;
        if (isDouble)
          t.data<double>()[e] = d;
        else
          t.data<float>()[e] = float(d);
      }
    if (isDouble && i == 0)
      for (int64_t e = 0, k = 0; e < t.numElements() && !c.specials.empty();
           e += 11, ++k)
        t.data<double>()[e] = c.specials[size_t(k) % c.specials.size()];
    inputs.push_back(t);
  }
  std::vector<bool> constant(inputs.size(), false);
  for (const reference::Tensor &t : c.constants) {
    inputs.push_back(t);
    constant.push_back(true);
  }
  KernelRequest request =
      makeRequest(c.opType, inputs, {c.shapes[0]}, c.type, constant);
  request.attributes = c.attributes;
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runKernel(request, inputs,
                        isDouble ? reference::DType::Float64
                                 : reference::DType::Float32,
                        run, error))
      << error;
  EXPECT_EQ(run.description.generator, "activation");
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  std::printf("%s: %llu cycles\n", c.name.c_str(),
              (unsigned long long)run.stats.Cycles);

  // Half: the reference on the inputs as halves, its result rounded to
  // half; the device's single result rounded once more can differ by one
  // half ulp (E7).
  // Double: the reference in double, float32 constants widened as the
  // host's Cast gives them.
  std::vector<reference::Value> values;
  for (size_t i = 0; i < inputs.size(); ++i)
    values.push_back(reference::Value(
        half && !constant[i] ? throughHalf(inputs[i])
        : isDouble           ? toDouble(inputs[i])
                             : inputs[i]));
  reference::SimpleKernelContext context(c.opType, values, 1);
  for (const auto &[name, attribute] : c.attributes)
    context.setAttribute(name, attribute);
  reference::Status status = context.run();
  ASSERT_TRUE(status.ok()) << status.message();
  reference::Tensor expected =
      half ? throughHalf(context.outputTensor(0)) : context.outputTensor(0);
  if (isDouble) {
    UlpComparison comparison =
        compareUlps(run.outputs[0], expected, DeviceType::Double, c.ulps);
    EXPECT_TRUE(comparison.within)
        << comparison.firstMismatch << " at x = " << std::hexfloat
        << values[0].tensor.elementAsDouble(comparison.worstElement);
    std::printf("%s: worst %.3g ulp\n", c.name.c_str(), comparison.worst);
  } else {
    Comparison comparison =
        compareTensors(run.outputs[0], expected, half ? 1e-6 : c.atol,
                       half ? 2.5e-3 : c.rtol);
    EXPECT_TRUE(comparison.within)
        << comparison.firstMismatch << " (max rel " << comparison.maxRel
        << ")";
  }
  std::string where;
  EXPECT_TRUE(paddingIsZero(run.outputForms[0], run.outputImages[0], where))
      << "non-zero padding at " << where;
  if (out)
    *out = std::move(run);
}

class ActivationKernel : public ::testing::TestWithParam<Case> {};

TEST_P(ActivationKernel, MatchesTheReferenceOnRandomMemory) {
  runCase(GetParam());
}

std::vector<Case> cases() {
  std::vector<Case> all;
  std::vector<int64_t> s345 = {3, 4, 5};
  for (const char *op : {"Exp", "Sigmoid", "Tanh", "Abs"})
    all.push_back({std::string(op) + "_345", op, {s345}, -4, 4});
  all.push_back({"Log_345", "Log", {s345}, 0.01f, 10});
  all.push_back({"Sqrt_345", "Sqrt", {s345}, 0, 10});
  all.push_back({"Reciprocal_345", "Reciprocal", {s345}, 0.1f, 10});
  all.push_back({"Div_345", "Div", {s345, s345}, -3, 3});
  // test_erf: [1, 3, 32, 32]; the BERT-like encoder's exact Gelu: [1, 128,
  // 1024] (MathLib's 3 ulp, M9, and the reference's rounding).
  all.push_back({"Erf_onnx", "Erf", {{1, 3, 32, 32}}, -4, 4, {}, {}, 5e-7});
  all.push_back(
      {"Erf_bert_gelu", "Erf", {{1, 128, 1024}}, -3, 3, {}, {}, 5e-7});
  // test_elu (alpha 2), test_selu (alpha 2, gamma 3) and the defaults;
  // test_hardsigmoid (alpha 0.5, beta 0.6), test_hardswish; PRelu with a
  // scalar slope; Pow by 2, 3, 0.5 and -1 (test_pow's shapes).
  Case elu{"Elu_345", "Elu", {s345}, -4, 4};
  elu.attributes["alpha"] = floatAttribute(2.0f);
  all.push_back(elu);
  all.push_back({"Elu_default", "Elu", {{16, 6, 28, 28}}, -20, 4});
  // pfvm:cpu computes alpha e^x - alpha (an absolute error of a few ulps
  // of alpha near 0), the device alpha expm1(x).
  Case selu{"Selu_345", "Selu", {s345}, -4, 4, {}, {}, 6e-7, 1e-6};
  selu.attributes["alpha"] = floatAttribute(2.0f);
  selu.attributes["gamma"] = floatAttribute(3.0f);
  all.push_back(selu);
  all.push_back(
      {"Selu_default", "Selu", {{16, 120}}, -6, 6, {}, {}, 6e-7, 1e-6});
  Case hardSigmoid{"HardSigmoid_345", "HardSigmoid", {s345}, -4, 4,
                   {}, {}, 4e-7, 1e-7};
  hardSigmoid.attributes["alpha"] = floatAttribute(0.5f);
  hardSigmoid.attributes["beta"] = floatAttribute(0.6f);
  all.push_back(hardSigmoid);
  all.push_back({"HardSigmoid_default", "HardSigmoid", {{16, 84}}, -4, 4,
                 {}, {}, 4e-7, 1e-7});
  all.push_back({"HardSwish_345", "HardSwish", {s345}, -4, 4, {}, {}, 6e-7,
                 1e-7});
  Case prelu{"PRelu_scalar_slope", "PRelu", {s345}, -2, 2};
  prelu.constants = {scalar(0.25f)};
  all.push_back(prelu);
  for (float exponent : {2.0f, 3.0f, 0.5f, -1.0f}) {
    Case pow{"Pow_" + std::to_string(int(exponent * 10)), "Pow", {s345},
             exponent < 1 ? 0.1f : -3.0f, 3, {}, {}, 4e-7};
    pow.name = std::string("Pow_") +
               (exponent == 0.5f ? "sqrt" : exponent < 0 ? "reciprocal"
                                    : exponent == 2  ? "square"
                                                     : "cube");
    pow.constants = {scalar(exponent)};
    if (exponent == 3.0f)
      pow.rtol = 3e-7; // two products against pow's one rounding
    all.push_back(pow);
  }
  // test_softplus: [3, 4, 5]; wide inputs (log1p of tiny e^x).
  all.push_back({"Softplus_345", "Softplus", {s345}, -4, 4, {}, {}, 5e-7});
  all.push_back({"Softplus_wide", "Softplus", {{16, 120}}, -30, 30, {}, {},
                 5e-7});
  // test_exp_example, test_sigmoid_example: [3].
  all.push_back({"Exp_3", "Exp", {{3}}, -1, 1});
  all.push_back({"Sigmoid_3", "Sigmoid", {{3}}, -1, 1});
  Case leaky{"LeakyRelu_345", "LeakyRelu", {s345}};
  leaky.attributes["alpha"] = floatAttribute(0.1f);
  all.push_back(leaky);
  all.push_back({"LeakyRelu_default_345", "LeakyRelu", {s345}});
  Case steep{"LeakyRelu_alpha2", "LeakyRelu", {{2, 17}}};
  steep.attributes["alpha"] = floatAttribute(2.0f);
  all.push_back(steep);
  Case negative{"LeakyRelu_negative", "LeakyRelu", {{2, 17}}};
  negative.attributes["alpha"] = floatAttribute(-0.5f);
  all.push_back(negative);
  // test_clip: min -1, max 1 over [-2, 2]; test_clip_default_min: max 0;
  // test_clip_default_max: min 0; test_clip_inbounds.
  Case clip{"Clip_345", "Clip", {s345}, -2, 2};
  clip.constants = {scalar(-1), scalar(1)};
  all.push_back(clip);
  Case clipPositive{"Clip_positive_min", "Clip", {s345}, -2, 2};
  clipPositive.constants = {scalar(0.5f), scalar(1.5f)};
  all.push_back(clipPositive);
  Case clipMin{"Clip_default_max", "Clip", {s345}, -2, 2};
  clipMin.constants = {scalar(0)};
  all.push_back(clipMin);
  Case clipNone{"Clip_unbounded", "Clip", {s345}, -2, 2};
  all.push_back(clipNone);
  // Scalar constants whose f(0) is not zero over padded rows: masked here
  // rather than the elementwise kernel's immediate, which would write the
  // constant into the padding.
  for (const char *op : {"Add", "Sub", "Max", "Min"}) {
    Case scalarCase{std::string(op) + "_scalar_padded", op, {s345}, -2, 2};
    scalarCase.constants = {scalar(std::string(op) == "Min" ? -0.5f : 0.5f)};
    all.push_back(scalarCase);
  }
  // LeNet-5 at batch 16: conv activations, the fully connected layers.
  all.push_back({"Tanh_lenet_conv1", "Tanh", {{16, 6, 28, 28}}, -3, 3});
  all.push_back({"Sigmoid_lenet_conv2", "Sigmoid", {{16, 16, 10, 10}}, -6, 6});
  all.push_back({"Sigmoid_lenet_fc", "Sigmoid", {{16, 84}}, -6, 6});
  all.push_back({"Exp_lenet_logits", "Exp", {{16, 10}}, -10, 10});
  all.push_back({"Log_lenet_probs", "Log", {{16, 10}}, 1e-6f, 1});
  all.push_back({"Div_lenet_fc", "Div", {{16, 120}, {16, 120}}, -3, 3});
  // Half (float_dtype=half): through single and back.
  for (auto [name, op, shape, low, high] :
       std::vector<std::tuple<const char *, const char *, std::vector<int64_t>,
                              float, float>>{
           {"Sigmoid_345_half", "Sigmoid", s345, -4, 4},
           {"Tanh_lenet_conv1_half", "Tanh", {16, 6, 28, 28}, -3, 3},
           {"Exp_lenet_logits_half", "Exp", {16, 10}, -4, 4},
           {"Log_345_half", "Log", s345, 0.01f, 10},
           {"Sqrt_cnn_half", "Sqrt", {16, 32, 16, 16}, 0, 10},
           {"Erf_345_half", "Erf", s345, -3, 3},
           {"Elu_345_half", "Elu", s345, -4, 4},
           {"HardSwish_345_half", "HardSwish", s345, -4, 4},
           {"Softplus_345_half", "Softplus", s345, -4, 4}}) {
    Case half{name, op, {shape}, low, high};
    half.type = DeviceType::Half;
    all.push_back(half);
  }
  Case divHalf{"Div_lenet_fc_half", "Div", {{16, 120}, {16, 120}}, -3, 3};
  divHalf.type = DeviceType::Half;
  all.push_back(divHalf);
  Case clipHalf{"Clip_positive_min_half", "Clip", {s345}, -2, 2};
  clipHalf.constants = {scalar(0.5f), scalar(1.5f)};
  clipHalf.type = DeviceType::Half;
  all.push_back(clipHalf);
  // Double (float_dtype=double): in double all the way (E8, M8).
  const double inf = INFINITY;
  auto addDouble = [&](Case c, double ulps, std::vector<double> specials) {
    c.name += "_double";
    c.type = DeviceType::Double;
    c.ulps = ulps;
    c.specials = std::move(specials);
    all.push_back(c);
  };
  std::vector<double> signed0 = {0.0, -0.0, inf, -inf, 1e300, -1e-300};
  addDouble({"Abs_345", "Abs", {s345}, -4, 4}, 0, signed0);
  addDouble(leaky, 1, signed0);
  addDouble(steep, 1, signed0);
  addDouble(negative, 1, signed0);
  addDouble(clip, 0, signed0);
  addDouble(clipPositive, 0, signed0);
  addDouble(clipMin, 0, signed0);
  addDouble(clipNone, 0, signed0);
  Case clipWide{"Clip_lenet_conv1", "Clip", {{16, 6, 28, 28}}, -2, 2};
  clipWide.constants = {
      reference::Tensor::fromVector<double>(reference::DType::Float64, {},
                                            {-0.1}),
      reference::Tensor::fromVector<double>(reference::DType::Float64, {},
                                            {0.7})};
  addDouble(clipWide, 0, signed0);
  for (const char *op : {"Add", "Sub", "Max", "Min"}) {
    Case scalarCase{std::string(op) + "_scalar_padded", op, {s345}, -2, 2};
    scalarCase.constants = {scalar(std::string(op) == "Min" ? -0.5f : 0.5f)};
    addDouble(scalarCase, 0, {0.0, -0.0, inf, -inf});
  }
  // The MathLib functions in double against pfvm:cpu's libm (itself within
  // half an ulp or so): MathLib's bounds (M8) plus one.
  addDouble({"Exp_345", "Exp", {s345}, -4, 4}, 2,
            {0.0, -0.0, inf, -inf, 709.78, 710.0, -708.39, -745.0});
  addDouble({"Exp_lenet_logits", "Exp", {{16, 10}}, -10, 10}, 2, {});
  addDouble({"Log_345", "Log", {s345}, 0.01f, 10}, 2, {1.0, 0x1p-1022, 1e300});
  addDouble({"Log_lenet_probs", "Log", {{16, 10}}, 1e-6f, 1}, 2, {});
  addDouble({"Sqrt_345", "Sqrt", {s345}, 0, 10}, 2, {0.0, inf, 4.0, 1e-300});
  addDouble({"Reciprocal_345", "Reciprocal", {s345}, 0.1f, 10}, 2,
            {inf, -inf, 0.5, -3.0});
  addDouble({"Tanh_lenet_conv1", "Tanh", {{16, 6, 28, 28}}, -3, 3}, 4,
            {0.0, -0.0, inf, -inf, 1e-300, 25.0});
  addDouble({"Sigmoid_345", "Sigmoid", {s345}, -4, 4}, 3,
            {0.0, -0.0, inf, -inf, -708.0, -800.0, 40.0});
  addDouble({"Sigmoid_cnn", "Sigmoid", {{16, 32, 32, 32}}, -6, 6}, 3, {});
  addDouble({"Div_345", "Div", {s345, s345}, -3, 3}, 2, {0.0, -0.0, 1e300});
  addDouble({"Elu_lenet", "Elu", {{16, 6, 28, 28}}, -20, 4}, 3,
            {0.0, -0.0, inf, -inf, -800.0});
  // Near x = -3, x / 6 + 1/2 cancels: the rounding of 1/6 (the device's
  // fma) and of x / 6 (the reference's) grow to several ulps of the result.
  addDouble({"HardSwish_345", "HardSwish", {s345}, -4, 4}, 8, {0.0, -0.0});
  addDouble({"Div_lenet_fc", "Div", {{16, 120}, {16, 120}}, -3, 3}, 2, {});
  // Two passes over LM with the padding mask in double: rows of 1001 in
  // 1004 long words.
  addDouble({"Exp_two_masked_passes", "Exp", {{600, 1001}}, -4, 4}, 2, {});
  // A small CNN at batch 16.
  all.push_back({"Sigmoid_cnn", "Sigmoid", {{16, 32, 32, 32}}, -6, 6});
  // Two passes over LM with the padding mask: rows of 1001 in 504 long
  // words, passes of 1008 (a multiple of the mask's 252).
  all.push_back({"Exp_two_masked_passes", "Exp", {{8200, 1001}}, -4, 4});
  return all;
}

INSTANTIATE_TEST_SUITE_P(Onnx, ActivationKernel, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return info.param.name;
                         });

TEST(ActivationKernel, SpecialValuesFollowTheDeviceRules) {
  // No NaN on the device: log of 0 and of negatives is -inf, sqrt of a
  // negative 0, and exp saturates to 0 and infinity.
  reference::Tensor x = reference::Tensor::fromVector<float>(
      reference::DType::Float32, {8},
      {0.0f, -1.0f, 1.0f, 100.0f, -100.0f, 4.0f, 1e-30f, 88.8f});
  auto run = [&](const char *op) {
    KernelRequest request = makeRequest(op, {x}, {{8}}, DeviceType::Single);
    KernelRun result;
    std::string error;
    EXPECT_TRUE(
        runKernel(request, {x}, reference::DType::Float32, result, error))
        << error;
    EXPECT_TRUE(result.hazards.empty());
    return result.outputs.empty() ? reference::Tensor() : result.outputs[0];
  };
  reference::Tensor log = run("Log");
  EXPECT_EQ(log.data<float>()[0], -INFINITY);
  EXPECT_EQ(log.data<float>()[1], -INFINITY);
  EXPECT_EQ(log.data<float>()[2], 0.0f);
  reference::Tensor sqrt = run("Sqrt");
  EXPECT_EQ(sqrt.data<float>()[1], 0.0f);
  EXPECT_EQ(sqrt.data<float>()[5], 2.0f);
  reference::Tensor exp = run("Exp");
  EXPECT_EQ(exp.data<float>()[0], 1.0f);
  EXPECT_EQ(exp.data<float>()[3], INFINITY);
  EXPECT_EQ(exp.data<float>()[4], 0.0f);
  EXPECT_EQ(exp.data<float>()[7], INFINITY);
  reference::Tensor reciprocal = run("Reciprocal");
  EXPECT_EQ(reciprocal.data<float>()[0], INFINITY);
  EXPECT_EQ(reciprocal.data<float>()[5], 0.25f);
}

TEST(ActivationKernel, RefusesWhatItDoesNotCover) {
  std::string whyNot;
  std::vector<reference::Tensor> in = {randomTensor({4, 8}, 1),
                                       randomTensor({8}, 2)};
  KernelRequest broadcast =
      makeRequest("Div", in, {{4, 8}}, DeviceType::Single);
  broadcast.inputs[1].form = DramForm::canonical(DeviceType::Single, {8});
  std::vector<std::unique_ptr<KernelGenerator>> none;
  for (const auto &generator : kernelGenerators())
    if (std::string(generator->name()) == "activation") {
      EXPECT_FALSE(generator->matches(broadcast, whyNot));
    }
  EXPECT_NE(whyNot.find("broadcast"), std::string::npos) << whyNot;
  KernelRequest clip =
      makeRequest("Clip", {in[0], in[0]}, {{4, 8}}, DeviceType::Single);
  for (const auto &generator : kernelGenerators())
    if (std::string(generator->name()) == "activation") {
      EXPECT_FALSE(generator->matches(clip, whyNot));
    }
  EXPECT_NE(whyNot.find("scalar constant"), std::string::npos) << whyNot;
  // MathLib's erf is single (M9): double goes to the next generator.
  KernelRequest erf = makeRequest("Erf", {randomDoubleTensor({4, 8}, 3)},
                                  {{4, 8}}, DeviceType::Double);
  for (const auto &generator : kernelGenerators())
    if (std::string(generator->name()) == "activation") {
      EXPECT_FALSE(generator->matches(erf, whyNot));
    }
  EXPECT_NE(whyNot.find("Erf in double"), std::string::npos) << whyNot;
  // Pow by an exponent without a short exact form, PRelu's per-channel
  // slopes.
  // (The request points at its constants: they outlive it.)
  std::vector<reference::Tensor> powInputs = {in[0], scalar(2.5f)};
  KernelRequest pow = makeRequest("Pow", powInputs, {{4, 8}},
                                  DeviceType::Single, {false, true});
  for (const auto &generator : kernelGenerators())
    if (std::string(generator->name()) == "activation") {
      EXPECT_FALSE(generator->matches(pow, whyNot));
    }
  EXPECT_NE(whyNot.find("exponent"), std::string::npos) << whyNot;
  KernelRequest prelu =
      makeRequest("PRelu", in, {{4, 8}}, DeviceType::Single, {false, true});
  for (const auto &generator : kernelGenerators())
    if (std::string(generator->name()) == "activation") {
      EXPECT_FALSE(generator->matches(prelu, whyNot));
    }
  EXPECT_NE(whyNot.find("slope"), std::string::npos) << whyNot;
}

} // namespace

namespace {

struct BroadcastCase {
  std::string name;
  std::string opType;
  std::vector<int64_t> data;
  std::vector<int64_t> operand;
  /// The constant is the first input.
  bool operandFirst = false;
  double rtol = 0;
  /// The tensors' format (float_dtype=half: the constant is rounded to
  /// half in its table; double: the table holds doubles).
  DeviceType type = DeviceType::Single;
  /// The constant as a float64 initializer (else float32, as models give
  /// them).
  bool wideConstant = false;
};

void PrintTo(const BroadcastCase &c, std::ostream *os) { *os << c.name; }

class BroadcastKernel : public ::testing::TestWithParam<BroadcastCase> {};

TEST_P(BroadcastKernel, MatchesTheReferenceOnRandomMemory) {
  const BroadcastCase &c = GetParam();
  bool half = c.type == DeviceType::Half;
  bool isDouble = c.type == DeviceType::Double;
  reference::Tensor x = isDouble ? randomDoubleTensor(c.data, 21, -2, 2)
                                 : randomTensor(c.data, 21, -2, 2);
  if (isDouble) {
    // Special values: both zeros and infinities, the range's extremes.
    const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, 1e300, -1e-300};
    for (int64_t i = 0; i < x.numElements(); i += 13)
      x.data<double>()[i] = specials[size_t(i / 13) % std::size(specials)];
  }
  reference::Tensor b = c.wideConstant
                            ? randomDoubleTensor(c.operand, 22, 0.5, 2)
                            : randomTensor(c.operand, 22, 0.5f, 2);
  std::vector<reference::Tensor> inputs =
      c.operandFirst ? std::vector<reference::Tensor>{b, x}
                     : std::vector<reference::Tensor>{x, b};
  std::vector<bool> constant = {c.operandFirst, !c.operandFirst};
  KernelRequest request =
      makeRequest(c.opType, inputs, {c.data}, c.type, constant);
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runKernel(request, inputs,
                        isDouble ? reference::DType::Float64
                                 : reference::DType::Float32,
                        run, error))
      << error;
  EXPECT_EQ(run.description.generator, "broadcast");
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  std::printf("%s: %llu cycles\n", c.name.c_str(),
              (unsigned long long)run.stats.Cycles);
  // Double: the reference in double, the float32 constant widened as the
  // host's Cast gives it.
  std::vector<reference::Value> values;
  for (const reference::Tensor &t : inputs)
    values.push_back(reference::Value(half       ? throughHalf(t)
                                      : isDouble ? toDouble(t)
                                                 : t));
  reference::SimpleKernelContext context(c.opType, values, 1);
  ASSERT_TRUE(context.run().ok());
  reference::Tensor expected =
      half ? throughHalf(context.outputTensor(0)) : context.outputTensor(0);
  Comparison comparison = compareTensors(run.outputs[0], expected, 0, c.rtol);
  EXPECT_TRUE(comparison.within)
      << comparison.firstMismatch << " (max rel " << comparison.maxRel << ")";
  std::string where;
  EXPECT_TRUE(paddingIsZero(run.outputForms[0], run.outputImages[0], where))
      << "non-zero padding at " << where;
}

INSTANTIATE_TEST_SUITE_P(
    Onnx, BroadcastKernel,
    ::testing::Values(
        // test_add_bcast, test_sub_bcast, test_mul_bcast, test_div_bcast:
        // [3, 4, 5] with [5].
        BroadcastCase{"Add_bcast", "Add", {3, 4, 5}, {5}},
        BroadcastCase{"Sub_bcast", "Sub", {3, 4, 5}, {5}},
        // The MAU's truncated multiplier: within 1 ulp of IEEE.
        BroadcastCase{"Mul_bcast", "Mul", {3, 4, 5}, {5}, false, 1.2e-7},
        // x * (1 / b): two roundings.
        BroadcastCase{"Div_bcast", "Div", {3, 4, 5}, {5}, false, 1.2e-7},
        BroadcastCase{"Max_bcast", "Max", {3, 4, 5}, {5}},
        BroadcastCase{"Min_bcast", "Min", {3, 4, 5}, {4, 1}},
        BroadcastCase{"Sub_constant_first", "Sub", {3, 4, 5}, {4, 5}, true},
        BroadcastCase{"Div_scalar", "Div", {7, 9}, {}, false, 1.2e-7},
        // LeNet-5 at batch 16: conv biases over NCHW, fully connected
        // biases over rows.
        BroadcastCase{
            "Add_lenet_conv1_bias", "Add", {16, 6, 28, 28}, {6, 1, 1}},
        BroadcastCase{
            "Add_lenet_conv2_bias", "Add", {16, 16, 10, 10}, {16, 1, 1}},
        BroadcastCase{"Add_lenet_fc1_bias", "Add", {16, 120}, {120}},
        BroadcastCase{"Add_lenet_fc2_bias", "Add", {16, 84}, {84}, true},
        // NCHW would repeat every C * H * W: channels last instead.
        BroadcastCase{
            "Add_cnn_bias_channels_last", "Add", {16, 64, 32, 32}, {64, 1, 1}},
        // Half (one rounding of the sum or product to half; the table's
        // constant rounded to half too).
        BroadcastCase{
            "Add_bcast_half", "Add", {3, 4, 5}, {5}, false, 2e-3, DeviceType::Half},
        BroadcastCase{"Mul_lenet_conv1_half",
                      "Mul",
                      {16, 6, 28, 28},
                      {6, 1, 1},
                      false,
                      4e-3,
                      DeviceType::Half},
        BroadcastCase{"Sub_constant_first_half",
                      "Sub",
                      {16, 120},
                      {120},
                      true,
                      4e-3,
                      DeviceType::Half},
        BroadcastCase{
            "Max_half", "Max", {16, 84}, {84}, false, 0, DeviceType::Half},
        BroadcastCase{"Mul_cnn_channel_scale",
                      "Mul",
                      {16, 32, 16, 16},
                      {1, 32, 1, 1},
                      false,
                      1.2e-7},
        // Double: sums, max and min exact; the product within 1 ulp (the
        // truncated multiplier); x * (1 / b) two roundings (E8).
        BroadcastCase{"Add_bcast_double", "Add", {3, 4, 5}, {5}, false, 0,
                      DeviceType::Double},
        BroadcastCase{"Sub_constant_first_double", "Sub", {16, 120}, {120},
                      true, 0, DeviceType::Double},
        BroadcastCase{"Mul_lenet_conv1_double", "Mul", {16, 6, 28, 28},
                      {6, 1, 1}, false, 2.3e-16, DeviceType::Double},
        BroadcastCase{"Div_bcast_double", "Div", {3, 4, 5}, {5}, false,
                      3.4e-16, DeviceType::Double, true},
        BroadcastCase{"Div_scalar_double", "Div", {7, 9}, {}, false, 3.4e-16,
                      DeviceType::Double},
        BroadcastCase{"Max_double", "Max", {16, 84}, {84}, false, 0,
                      DeviceType::Double, true},
        BroadcastCase{"Min_double", "Min", {3, 4, 5}, {4, 1}, false, 0,
                      DeviceType::Double},
        BroadcastCase{"Add_cnn_bias_channels_last_double", "Add",
                      {16, 64, 32, 32}, {64, 1, 1}, false, 0,
                      DeviceType::Double, true}),
    [](const ::testing::TestParamInfo<BroadcastCase> &info) {
      return info.param.name;
    });

TEST(BroadcastKernel, LeavesLongPeriodsAndScalarsToOthers) {
  auto generator = [] {
    for (const auto &g : kernelGenerators())
      if (std::string(g->name()) == "broadcast")
        return g.get();
    return static_cast<KernelGenerator *>(nullptr);
  }();
  ASSERT_NE(generator, nullptr);
  std::string whyNot;
  // An operand over channels and rows repeats every C * H rows in any
  // order.
  std::vector<reference::Tensor> big = {randomTensor({2, 64, 112, 112}, 1),
                                        randomTensor({64, 112, 1}, 2)};
  KernelRequest request = makeRequest("Add", big, {{2, 64, 112, 112}},
                                      DeviceType::Single, {false, true});
  EXPECT_FALSE(generator->matches(request, whyNot));
  EXPECT_NE(whyNot.find("over a GRF"), std::string::npos) << whyNot;
  // An Add of a scalar constant is the elementwise kernel's.
  std::vector<reference::Tensor> scalarAdd = {randomTensor({4, 8}, 1),
                                              scalar(2.0f)};
  request = makeRequest("Add", scalarAdd, {{4, 8}}, DeviceType::Single,
                        {false, true});
  EXPECT_FALSE(generator->matches(request, whyNot));
  std::string chosen;
  EXPECT_STREQ(findKernelGenerator(request, chosen)->name(), "elementwise");
  // Two tensors broadcast into each other.
  std::vector<reference::Tensor> twoSided = {randomTensor({4, 1}, 1),
                                             randomTensor({1, 8}, 2)};
  request = makeRequest("Add", twoSided, {{4, 8}}, DeviceType::Single);
  EXPECT_FALSE(generator->matches(request, whyNot));
}

} // namespace
