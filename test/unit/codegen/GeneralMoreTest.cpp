//===- GeneralMoreTest.cpp - The general kernel's further operators ------===//
//
// GeneralMath.cpp and GeneralIndex.cpp (comparisons, logic, Where, the
// variadic operators, piecewise activations, reductions, selections by a
// runtime index, Trilu, copies, the losses) on the emulator: each case runs
// through the general kernel on random-filled memory, must have no hazard,
// and must agree with pfvm:cpu: exactly for comparisons, selections,
// copies and integers; within 1e-5 absolute plus 1e-5 relative for single
// arithmetic (sums in another order, MathLib's few ulps); within 4e-3 for
// half tensors (one rounding to half at the end). The shapes and
// attributes mirror ONNX's node tests.
//
//===----------------------------------------------------------------------===//

#include "GeneralTestFixture.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <random>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::testing;
using namespace mncc::codegen::testing::general_tests;
using reference::Attribute;
using reference::DType;
using reference::Tensor;

namespace {

Tensor floats(std::vector<int64_t> shape, std::vector<float> values) {
  return Tensor::fromVector<float>(DType::Float32, std::move(shape),
                                   std::move(values));
}

Tensor int64s(std::vector<int64_t> shape, std::vector<int64_t> values) {
  return Tensor::fromVector<int64_t>(DType::Int64, std::move(shape),
                                     std::move(values));
}

/// Uniform integers in [low, high] of `type` (Int32, Int64).
Tensor integers(std::vector<int64_t> shape, uint64_t seed, int low, int high,
                DType type = DType::Int32) {
  std::mt19937_64 engine(seed);
  std::uniform_int_distribution<int> distribution(low, high);
  Tensor tensor(type, std::move(shape));
  for (int64_t i = 0; i < tensor.numElements(); ++i) {
    int v = distribution(engine);
    if (type == DType::Int64)
      tensor.data<int64_t>()[i] = v;
    else
      tensor.data<int32_t>()[i] = v;
  }
  return tensor;
}

Tensor bools(std::vector<int64_t> shape, uint64_t seed) {
  std::mt19937_64 engine(seed);
  Tensor tensor(DType::Bool, std::move(shape));
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    tensor.data<bool>()[i] = engine() & 1;
  return tensor;
}

/// Small integers as floats, so that ties and exact equalities occur.
Tensor steps(std::vector<int64_t> shape, uint64_t seed, int low = -3,
             int high = 3) {
  std::mt19937_64 engine(seed);
  std::uniform_int_distribution<int> distribution(low, high);
  Tensor tensor(DType::Float32, std::move(shape));
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    tensor.data<float>()[i] = float(distribution(engine));
  return tensor;
}

struct Case {
  std::string name;
  std::string opType;
  std::vector<Tensor> inputs;
  std::map<std::string, Attribute> attributes;
  std::vector<bool> constant;
  std::vector<bool> omitted;
  size_t outputs = 1;
  /// Floating tensors in half (computed in single between conversions).
  bool half = false;
  /// Floating tensors in double (computed in double, G13).
  bool dbl = false;
  double atol = 1e-5, rtol = 1e-5;
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

/// Operators whose results are copies of their inputs' bits, or one
/// rounding the reference makes alike: compared exactly.
bool exactOperator(const std::string &op) {
  for (const char *exact : {"Where",
                            "Max",
                            "Min",
                            "PRelu",
                            "ThresholdedRelu",
                            "Sign",
                            "Round",
                            "Floor",
                            "Ceil",
                            "Mod",
                            "ReduceMin",
                            "Gather",
                            "GatherElements",
                            "Trilu",
                            "Unsqueeze",
                            "Squeeze",
                            "Expand",
                            "Tile",
                            "DepthToSpace",
                            "SpaceToDepth",
                            "Dropout",
                            "Hardmax",
                            "EyeLike",
                            "OneHot"})
    if (op == exact)
      return true;
  return false;
}

void runCase(const Case &c) {
  ReferenceRun reference =
      runReference(c.opType, c.inputs, c.attributes, c.omitted, c.outputs);
  ASSERT_TRUE(reference.ok) << reference.message;
  std::vector<Tensor> expected = reference.outputs;
  std::vector<std::vector<int64_t>> shapes;
  for (const Tensor &output : expected)
    shapes.push_back(output.shape());
  DeviceType floating = c.half  ? DeviceType::Half
                        : c.dbl ? DeviceType::Double
                                : DeviceType::Single;
  std::vector<bool> constant = c.constant;
  constant.resize(c.inputs.size(), false);
  KernelRequest request =
      makeRequest(c.opType, c.inputs, shapes, floating, constant);
  request.attributes = c.attributes;
  // Integer and bool tensors are int32 on the device, beside the floats.
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!reference::isFloatingPoint(c.inputs[i].dtype()))
      request.inputs[i].form =
          DramForm::canonical(DeviceType::Int32, c.inputs[i].shape());
    if (i < c.omitted.size() && c.omitted[i])
      request.inputs[i].omitted = true;
  }
  HarnessOptions options;
  options.generator = "general";
  for (size_t o = 0; o < c.outputs; ++o) {
    options.outputTypes.push_back(expected[o].dtype());
    if (!reference::isFloatingPoint(expected[o].dtype()))
      request.outputs[o].form =
          DramForm::canonical(DeviceType::Int32, shapes[o]);
  }
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runKernel(request, c.inputs,
                        c.dbl ? DType::Float64 : DType::Float32, run, error,
                        options))
      << error;
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  for (size_t o = 0; o < c.outputs; ++o) {
    bool exact = !reference::isFloatingPoint(expected[o].dtype()) ||
                 (exactOperator(c.opType) && !c.half);
    Comparison comparison = compareTensors(
        run.outputs[o], expected[o], exact ? 0 : c.atol, exact ? 0 : c.rtol);
    EXPECT_TRUE(comparison.within)
        << "output " << o << ": " << comparison.firstMismatch << " (max abs "
        << comparison.maxAbs << ")";
  }
  ::testing::Test::RecordProperty("cycles", std::to_string(run.stats.Cycles));
}

class GeneralMore : public ::testing::TestWithParam<Case> {};

TEST_P(GeneralMore, MatchesTheReferenceOnRandomMemory) { runCase(GetParam()); }

std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  return info.param.name;
}

Case make(std::string name, std::string op, std::vector<Tensor> inputs,
          std::map<std::string, Attribute> attributes = {}) {
  Case c;
  c.name = std::move(name);
  c.opType = std::move(op);
  c.inputs = std::move(inputs);
  c.attributes = std::move(attributes);
  return c;
}

//===----------------------------------------------------------------------===//
// GeneralMath: comparisons, logic, Where, variadic, activations, reductions
//===----------------------------------------------------------------------===//

std::vector<Case> mathCases() {
  std::vector<Case> cases;
  float inf = std::numeric_limits<float>::infinity();
  // Equal values, both zeros, infinities and neighbours, element by
  // element against each other.
  Tensor edgeA = floats({8}, {1, -0.0f, 0, -2, inf, -inf, 1e-30f, 3});
  Tensor edgeB = floats({8}, {1, 0, -0.0f, -2.5f, inf, 5, -1e-30f, 3.0000002f});
  for (std::string op :
       {"Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"}) {
    cases.push_back(make(op, op, {steps({3, 4, 5}, 1), steps({3, 4, 5}, 2)}));
    cases.push_back(
        make(op + "_bcast", op, {steps({3, 4, 5}, 3), steps({5}, 4)}));
    cases.push_back(make(op + "_edges", op, {edgeA, edgeB}));
    cases.push_back(make(op + "_int", op,
                         {integers({3, 4}, 5, -3, 3, DType::Int64),
                          integers({3, 4}, 6, -3, 3, DType::Int64)}));
  }
  Case halfEqual =
      make("Equal_half", "Equal", {steps({3, 4, 5}, 7), steps({3, 4, 5}, 8)});
  halfEqual.half = true;
  cases.push_back(halfEqual);
  for (std::string op : {"And", "Or", "Xor"}) {
    cases.push_back(make(op, op, {bools({3, 4, 5}, 9), bools({3, 4, 5}, 10)}));
    cases.push_back(make(op + "_bcast4d", op,
                         {bools({3, 4, 5, 6}, 11), bools({5, 6}, 12)}));
  }
  cases.push_back(make("Not", "Not", {bools({3, 4, 5}, 13)}));
  // uint16 (held in int32; the host wraps the result back to 16 bits).
  auto uint16s = [](std::vector<int64_t> shape, uint64_t seed, int high) {
    Tensor wide = integers(shape, seed, 0, high);
    Tensor narrow(DType::UInt16, shape);
    for (int64_t i = 0; i < wide.numElements(); ++i)
      narrow.data<uint16_t>()[i] = uint16_t(wide.data<int32_t>()[i]);
    return narrow;
  };
  for (std::string direction : {"LEFT", "RIGHT"})
    cases.push_back(make("BitShift_" + direction, "BitShift",
                         {uint16s({3, 4}, 107, 65535), uint16s({4}, 106, 17)},
                         {{"direction", stringAttr(direction)}}));

  cases.push_back(make("Where", "Where",
                       {bools({2, 2}, 14), rnd({2, 2}, 15), rnd({2, 2}, 16)}));
  cases.push_back(make("Where_bcast", "Where",
                       {bools({3, 1, 5}, 17), rnd({4, 1}, 18), rnd({5}, 19)}));
  cases.push_back(
      make("Where_long", "Where",
           {bools({2, 3}, 20), integers({2, 3}, 21, -50, 50, DType::Int64),
            integers({1, 3}, 22, -50, 50, DType::Int64)}));
  Case whereConst =
      make("Where_scalar_constant", "Where",
           {bools({4, 3}, 23), rnd({4, 3}, 24), floats({}, {-7})});
  whereConst.constant = {false, false, true};
  cases.push_back(whereConst);
  Case whereHalf = make("Where_half", "Where",
                        {bools({3, 4}, 25), rnd({3, 4}, 26), rnd({3, 4}, 27)});
  whereHalf.half = true;
  whereHalf.atol = whereHalf.rtol = 4e-3;
  cases.push_back(whereHalf);

  for (std::string op : {"Max", "Min", "Sum", "Mean"}) {
    cases.push_back(make(op + "_one_input", op, {rnd({3}, 28)}));
    cases.push_back(make(op + "_two_inputs", op, {rnd({3}, 29), rnd({3}, 30)}));
    cases.push_back(make(op + "_three_bcast", op,
                         {rnd({3, 1}, 31), rnd({3, 4}, 32), rnd({4}, 33)}));
  }
  cases.push_back(
      make("Max_int", "Max",
           {integers({3, 4}, 34, -100, 100), integers({4}, 35, -100, 100)}));
  cases.push_back(make("Min_int64", "Min",
                       {integers({3, 4}, 36, -100, 100, DType::Int64),
                        integers({3, 4}, 37, -100, 100, DType::Int64),
                        integers({3, 4}, 38, -100, 100, DType::Int64)}));

  cases.push_back(
      make("PRelu_example", "PRelu", {rnd({3, 4, 5}, 39), rnd({3, 4, 5}, 40)}));
  cases.push_back(
      make("PRelu_broadcast", "PRelu", {rnd({3, 4, 5}, 41), rnd({5}, 42)}));
  Tensor around = floats({9}, {-2, -1.5f, -1, -0.5f, -0.0f, 0, 0.5f, 1.5f, 2});
  cases.push_back(
      make("HardSigmoid", "HardSigmoid", {rnd({3, 4, 5}, 43, -4, 4)},
           {{"alpha", floatAttr(0.5f)}, {"beta", floatAttr(0.6f)}}));
  cases.push_back(
      make("HardSigmoid_default", "HardSigmoid", {rnd({3, 4, 5}, 44, -4, 4)}));
  cases.push_back(make("HardSwish", "HardSwish", {rnd({3, 4, 5}, 45, -4, 4)}));
  cases.push_back(make("ThresholdedRelu", "ThresholdedRelu",
                       {rnd({3, 4, 5}, 46, -3, 3)},
                       {{"alpha", floatAttr(2.0f)}}));
  cases.push_back(make("ThresholdedRelu_edges", "ThresholdedRelu", {around}));
  cases.push_back(
      make("Shrink_hard", "Shrink", {around}, {{"lambd", floatAttr(1.5f)}}));
  cases.push_back(
      make("Shrink_soft", "Shrink", {rnd({3, 4, 5}, 47, -3, 3)},
           {{"lambd", floatAttr(1.5f)}, {"bias", floatAttr(1.5f)}}));
  cases.push_back(make("Sign", "Sign", {around}));
  cases.push_back(make("Elu", "Elu", {rnd({3, 4, 5}, 48, -3, 3)},
                       {{"alpha", floatAttr(2.0f)}}));
  cases.push_back(make("Elu_default", "Elu", {around}));
  cases.push_back(
      make("Selu", "Selu", {rnd({3, 4, 5}, 49, -3, 3)},
           {{"alpha", floatAttr(2.0f)}, {"gamma", floatAttr(3.0f)}}));
  cases.push_back(make("Selu_default", "Selu", {around}));
  cases.push_back(make("Softplus", "Softplus", {rnd({3, 4, 5}, 50, -5, 5)}));
  Case eluHalf = make("Elu_half", "Elu", {rnd({3, 4, 5}, 51, -3, 3)});
  eluHalf.half = true;
  eluHalf.atol = eluHalf.rtol = 4e-3;
  cases.push_back(eluHalf);

  // Ties, negative halves, values at and beyond 2^23, infinities.
  Tensor rounding = floats({16}, {0.1f, 0.5f, 0.9f, 1.5f, 2.5f, -0.5f, -1.5f,
                                  -2.5f, -0.2f, 2.3f, -4.7f, 8388607.5f,
                                  -8388607.5f, 16777217.0f, inf, -inf});
  for (std::string op : {"Round", "Floor", "Ceil"}) {
    cases.push_back(make(op + "_edges", op, {rounding}));
    cases.push_back(make(op + "_random", op, {rnd({3, 4, 5}, 59, -20, 20)}));
  }
  cases.push_back(make("Pow_example", "Pow",
                       {floats({3}, {1, 2, 3}), floats({3}, {4, 5, 6})}));
  cases.push_back(
      make("Pow_bcast_array", "Pow",
           {floats({2, 3}, {1, 2, 3, 4, 5, 6}), floats({3}, {1, 2, 3})}));
  cases.push_back(make("Pow_negative_base_integer_exponent", "Pow",
                       {floats({6}, {-2, -2, -3, -0.5f, 0, 2}),
                        int64s({6}, {3, 2, 0, -3, 2, -1})}));
  cases.push_back(make("Pow_fractional", "Pow",
                       {rnd({3, 4}, 95, 0.1f, 4), rnd({3, 4}, 96, -2, 2)}));
  cases.push_back(
      make("Pow_int_base_float_exponent", "Pow",
           {int64s({4}, {1, 2, 3, -3}), floats({4}, {4, 5, 6, 3})}));
  cases.push_back(
      make("Pow_int_int", "Pow",
           {integers({3, 4}, 114, -9, 9), integers({4}, 115, 0, 5)}));
  Case powConstant = make("Pow_bcast_scalar_constant", "Pow",
                          {floats({3}, {1, 2, 3}), floats({}, {2})});
  powConstant.constant = {false, true};
  cases.push_back(powConstant);
  // Mod: the node tests' mixed signs, in Python's convention (int,
  // fmod = 0) and C's (fmod = 1), and divisions that land on integers.
  Tensor dividends = floats({8}, {-4.3f, 7.2f, 5.0f, 4.3f, -7.2f, 7.8f, 6, -6});
  Tensor divisors = floats({8}, {2.1f, -3.4f, 8.0f, -2.1f, 3.4f, 5.0f, 3, 3});
  cases.push_back(make("Mod_mixed_sign_float_fmod", "Mod",
                       {dividends, divisors}, {{"fmod", intAttr(1)}}));
  cases.push_back(make("Mod_random_fmod", "Mod",
                       {rnd({3, 4}, 110, -50, 50), rnd({4}, 111, 0.5f, 7)},
                       {{"fmod", intAttr(1)}}));
  for (int fmodAttr = 0; fmodAttr < 2; ++fmodAttr)
    cases.push_back(make(std::string("Mod_int") + (fmodAttr ? "_fmod" : ""),
                         "Mod",
                         {integers({4, 6}, 112, -1000, 1000, DType::Int64),
                          int64s({6}, {-7, -3, 1, 3, 5, 12})},
                         {{"fmod", intAttr(fmodAttr)}}));
  cases.push_back(make("Mod_int_exact_multiples", "Mod",
                       {int64s({6}, {-12, 12, 21, -21, 0, 9}),
                        int64s({6}, {3, -3, 7, 7, 5, -9})}));
  cases.push_back(make("LayerNormalization_2d_axis0", "LayerNormalization",
                       {rnd({3, 4}, 97), rnd({3, 4}, 98), rnd({3, 4}, 99)},
                       {{"axis", intAttr(0)}}));
  Case layerStats =
      make("LayerNormalization_4d_axis2_stats", "LayerNormalization",
           {rnd({2, 3, 4, 5}, 100), rnd({4, 5}, 101), rnd({5}, 102)},
           {{"axis", intAttr(2)}, {"epsilon", floatAttr(0.1f)}});
  layerStats.outputs = 3;
  cases.push_back(layerStats);
  cases.push_back(make("LayerNormalization_default_axis_no_bias",
                       "LayerNormalization",
                       {rnd({2, 3, 5}, 103), rnd({5}, 104)}));

  auto reduce = [&](std::string op, std::string name, Tensor x,
                    std::vector<int64_t> axes, int keepdims) {
    std::map<std::string, Attribute> attributes = {
        {"keepdims", intAttr(keepdims)}};
    if (!axes.empty())
      attributes["axes"] = intsAttr(axes);
    cases.push_back(make(op + "_" + name, op, {x}, attributes));
  };
  for (std::string op :
       {"ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare",
        "ReduceLogSum", "ReduceLogSumExp"}) {
    bool positive = op == "ReduceLogSum";
    float low = positive ? 0.1f : -2, high = 2;
    reduce(op, "default_axes_keepdims", rnd({3, 2, 2}, 52, low, high), {}, 1);
    reduce(op, "do_not_keepdims", rnd({3, 2, 2}, 53, low, high), {1}, 0);
    reduce(op, "keepdims", rnd({3, 2, 2}, 54, low, high), {1}, 1);
    reduce(op, "negative_axes", rnd({3, 2, 2}, 55, low, high), {-2, 0}, 1);
  }
  reduce("ReduceMin", "int", integers({3, 2, 2}, 56, -50, 50), {2}, 0);
  reduce("ReduceLogSumExp", "large", rnd({2, 5}, 57, 80, 90), {1}, 1);
  reduce("ReduceMin", "empty_set",
         Tensor(DType::Float32, std::vector<int64_t>{2, 0, 4}), {1}, 1);
  reduce("ReduceProd", "empty_set",
         Tensor(DType::Float32, std::vector<int64_t>{2, 0, 4}), {1}, 1);
  // Double: every operation of the reductions has a double form; within
  // 1e-12 (MathLib's double exp and log, sums in another order).
  for (std::string op : {"ReduceLogSumExp", "ReduceMin", "ReduceL1", "ReduceL2",
                         "ReduceProd", "ReduceLogSum"}) {
    Case c =
        make(op + "_double", op, {randomDoubleTensor({3, 2, 2}, 105, 0.1, 2)},
             {{"axes", intsAttr({1})}, {"keepdims", intAttr(1)}});
    c.dbl = true;
    c.atol = c.rtol = 1e-12;
    cases.push_back(c);
  }
  Case reduceHalf = make("ReduceL2_half", "ReduceL2", {rnd({3, 2, 2}, 58)},
                         {{"axes", intsAttr({2})}});
  reduceHalf.half = true;
  reduceHalf.atol = reduceHalf.rtol = 4e-3;
  cases.push_back(reduceHalf);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Math, GeneralMore, ::testing::ValuesIn(mathCases()),
                         caseName);

//===----------------------------------------------------------------------===//
// GeneralIndex: selections by index, Trilu, copies, losses
//===----------------------------------------------------------------------===//

std::vector<Case> indexCases() {
  std::vector<Case> cases;
  cases.push_back(
      make("Gather_0", "Gather",
           {rnd({5, 4, 3}, 60), integers({3, 2}, 61, 0, 4, DType::Int64)},
           {{"axis", intAttr(0)}}));
  cases.push_back(
      make("Gather_1", "Gather",
           {rnd({5, 4, 3}, 62), integers({3, 2}, 63, 0, 3, DType::Int64)},
           {{"axis", intAttr(1)}}));
  cases.push_back(make("Gather_2d_indices", "Gather",
                       {rnd({3, 3}, 64), int64s({1, 2}, {0, 2})},
                       {{"axis", intAttr(1)}}));
  cases.push_back(make("Gather_negative_indices", "Gather",
                       {rnd({10}, 65), int64s({3}, {0, -9, -10})},
                       {{"axis", intAttr(0)}}));
  cases.push_back(
      make("Gather_int", "Gather",
           {integers({4, 3}, 66, -1000, 1000), int64s({5}, {3, 0, -1, 2, 2})},
           {{"axis", intAttr(0)}}));
  Case gatherConstant = make("Gather_constant_indices", "Gather",
                             {rnd({5, 4}, 67), int64s({2, 2}, {4, -1, 0, 2})},
                             {{"axis", intAttr(0)}});
  gatherConstant.constant = {false, true};
  cases.push_back(gatherConstant);
  Case gatherHalf =
      make("Gather_half", "Gather", {rnd({5, 4}, 68), int64s({3}, {1, 4, -2})},
           {{"axis", intAttr(1 - 1)}});
  gatherHalf.half = true;
  gatherHalf.atol = gatherHalf.rtol = 4e-3;
  cases.push_back(gatherHalf);
  cases.push_back(make("GatherElements_0", "GatherElements",
                       {rnd({2, 2}, 69), int64s({2, 2}, {0, 0, 1, 0})},
                       {{"axis", intAttr(1)}}));
  cases.push_back(make("GatherElements_1", "GatherElements",
                       {rnd({3, 3}, 70), int64s({2, 3}, {1, 2, 0, 2, 0, 0})},
                       {{"axis", intAttr(0)}}));
  cases.push_back(make("GatherElements_negative_indices", "GatherElements",
                       {rnd({3, 3}, 71), int64s({2, 3}, {-1, -2, 0, -2, 0, 0})},
                       {{"axis", intAttr(0)}}));

  for (std::string op : {"ArgMax", "ArgMin"}) {
    for (int last = 0; last < 2; ++last) {
      std::string suffix = last ? "_select_last_index" : "";
      auto attrs = [&](std::map<std::string, Attribute> a) {
        a["select_last_index"] = intAttr(last);
        return a;
      };
      cases.push_back(make(op + "_default_axis_ties" + suffix, op,
                           {steps({4, 3, 5}, 72, -1, 1)}, attrs({})));
      cases.push_back(
          make(op + "_no_keepdims" + suffix, op, {steps({2, 3, 4}, 73, -1, 1)},
               attrs({{"axis", intAttr(1)}, {"keepdims", intAttr(0)}})));
      cases.push_back(make(op + "_negative_axis_random" + suffix, op,
                           {rnd({2, 3, 4}, 74)},
                           attrs({{"axis", intAttr(-1)}})));
    }
  }
  cases.push_back(make("ArgMax_int", "ArgMax", {integers({3, 4}, 75, -2, 2)},
                       {{"axis", intAttr(1)}}));
  cases.push_back(make(
      "OneHot_with_axis_float_indices", "OneHot",
      {floats({2, 2}, {1, 9, 2, 4}), floats({}, {10}), floats({2}, {1, 3})},
      {{"axis", intAttr(1)}}));
  cases.push_back(
      make("OneHot_negative_indices", "OneHot",
           {int64s({3}, {0, -7, -8}), floats({}, {10}), floats({2}, {1, 3})},
           {{"axis", intAttr(1)}}));
  cases.push_back(make("OneHot_int_values_default_axis", "OneHot",
                       {int64s({2, 3}, {0, 7, 8, 3, -1, 11}), floats({}, {12}),
                        integers({2}, 113, -9, 9)}));
  cases.push_back(
      make("Hardmax_default_axis", "Hardmax", {rnd({3, 4, 5}, 76)}));
  cases.push_back(make("Hardmax_axis_0_ties", "Hardmax",
                       {steps({3, 4, 5}, 77, -1, 1)}, {{"axis", intAttr(0)}}));

  for (int upper = 0; upper < 2; ++upper) {
    std::string name = upper ? "Triu" : "Tril";
    std::map<std::string, Attribute> a = {{"upper", intAttr(upper)}};
    cases.push_back(make(name, "Trilu", {rnd({4, 5}, 78)}, a));
    for (int64_t k : {-7, -1, 2, 6})
      cases.push_back(
          make(name + "_k" + (k < 0 ? "m" : "") + std::to_string(std::abs(k)),
               "Trilu", {rnd({2, 3, 3, 5}, 79), int64s({}, {k})}, a));
    Case constantK = make(name + "_constant_k", "Trilu",
                          {rnd({3, 4}, 80), int64s({}, {1})}, a);
    constantK.constant = {false, true};
    cases.push_back(constantK);
    cases.push_back(
        make(name + "_int", "Trilu",
             {integers({3, 3}, 81, -9, 9, DType::Int64), int64s({}, {-1})}, a));
  }

  // CumSum: the node tests (double, a runtime axis), single, half and
  // int32, constant and runtime axes of ranks 2 (the int32 selection's
  // sign pattern left once) and 3.
  auto cumsum = [&](std::string name, Tensor x, int64_t axis,
                    bool exclusive = false, bool reverse = false) {
    Case c = make(
        "CumSum_" + name, "CumSum", {std::move(x), int64s({}, {axis})},
        {{"exclusive", intAttr(exclusive)}, {"reverse", intAttr(reverse)}});
    if (c.inputs[0].dtype() == DType::Float64) {
      c.dbl = true;
      c.atol = c.rtol = 1e-12;
    }
    return c;
  };
  cases.push_back(cumsum("1d", randomDoubleTensor({5}, 120), 0));
  cases.push_back(
      cumsum("1d_exclusive", randomDoubleTensor({5}, 121), 0, true));
  cases.push_back(
      cumsum("1d_reverse", randomDoubleTensor({5}, 122), 0, false, true));
  cases.push_back(cumsum("1d_reverse_exclusive", randomDoubleTensor({5}, 123),
                         0, true, true));
  cases.push_back(cumsum("2d_axis_0", randomDoubleTensor({2, 3}, 124), 0));
  cases.push_back(cumsum("2d_axis_1", randomDoubleTensor({2, 3}, 125), 1));
  cases.push_back(
      cumsum("2d_negative_axis", randomDoubleTensor({2, 3}, 126), -1));
  cases.push_back(cumsum("3d_axis_1", rnd({3, 4, 5}, 127), 1));
  cases.push_back(cumsum("3d_axis_m3_exclusive_reverse", rnd({3, 4, 5}, 128),
                         -3, true, true));
  Case cumsumConstant = cumsum("constant_axis", rnd({3, 4, 5}, 129), -1, true);
  cumsumConstant.constant = {false, true};
  cases.push_back(cumsumConstant);
  cases.push_back(
      cumsum("int_2d", integers({3, 4}, 130, -50, 50, DType::Int64), 0));
  cases.push_back(cumsum("int_3d_reverse",
                         integers({2, 3, 4}, 131, -50, 50, DType::Int64), 2,
                         false, true));
  Case cumsumHalf = cumsum("half", rnd({3, 4}, 132), 1);
  cumsumHalf.half = true;
  cumsumHalf.atol = cumsumHalf.rtol = 4e-3;
  cases.push_back(cumsumHalf);

  // ScatterElements and ScatterND: the node tests' shapes, runtime and
  // constant indices, negative and duplicate ones, the reductions.
  auto scatter = [&](std::string name, std::string op, std::vector<Tensor> in,
                     std::map<std::string, Attribute> a = {},
                     bool constantIndices = false) {
    Case c = make(name, op, std::move(in), std::move(a));
    if (constantIndices)
      c.constant = {false, true, false};
    cases.push_back(c);
  };
  scatter(
      "ScatterElements_without_axis", "ScatterElements",
      {rnd({3, 3}, 140), int64s({2, 3}, {1, 0, 2, 0, 2, 1}), rnd({2, 3}, 141)});
  scatter("ScatterElements_with_axis", "ScatterElements",
          {rnd({1, 5}, 142), int64s({1, 2}, {1, 3}), rnd({1, 2}, 143)},
          {{"axis", intAttr(1)}});
  scatter("ScatterElements_negative_indices", "ScatterElements",
          {rnd({1, 5}, 144), int64s({1, 2}, {1, -3}), rnd({1, 2}, 145)},
          {{"axis", intAttr(1)}});
  scatter("ScatterElements_duplicate_add", "ScatterElements",
          {rnd({1, 5}, 146), int64s({1, 2}, {1, 1}), rnd({1, 2}, 147)},
          {{"axis", intAttr(1)}, {"reduction", stringAttr("add")}});
  scatter(
      "ScatterElements_duplicate_none_last_wins", "ScatterElements",
      {rnd({2, 4}, 148), int64s({2, 3}, {3, 3, 0, 1, -1, 1}), rnd({2, 3}, 149)},
      {{"axis", intAttr(1)}});
  for (const char *reduction : {"mul", "max", "min"})
    scatter(std::string("ScatterElements_") + reduction, "ScatterElements",
            {rnd({3, 4}, 150), int64s({2, 4}, {2, 0, 1, 2, 2, 1, 1, 0}),
             rnd({2, 4}, 151)},
            {{"reduction", stringAttr(reduction)}});
  scatter(
      "ScatterElements_constant_indices", "ScatterElements",
      {rnd({3, 3}, 152), int64s({2, 3}, {1, 0, -1, 0, 2, 1}), rnd({2, 3}, 153)},
      {}, true);
  scatter("ScatterElements_int", "ScatterElements",
          {integers({3, 3}, 154, -9, 9, DType::Int64),
           int64s({2, 3}, {1, 0, 2, 0, 2, 1}),
           integers({2, 3}, 155, -9, 9, DType::Int64)},
          {{"reduction", stringAttr("add")}});
  scatter("ScatterND", "ScatterND",
          {rnd({4, 4, 4}, 156), int64s({2, 1}, {0, 2}), rnd({2, 4, 4}, 157)});
  scatter("ScatterND_add_duplicates", "ScatterND",
          {rnd({4, 4, 4}, 158), int64s({2, 1}, {0, 0}), rnd({2, 4, 4}, 159)},
          {{"reduction", stringAttr("add")}});
  scatter("ScatterND_multiply", "ScatterND",
          {rnd({4, 4, 4}, 160), int64s({2, 1}, {0, -2}), rnd({2, 4, 4}, 161)},
          {{"reduction", stringAttr("mul")}});
  scatter("ScatterND_depth_2", "ScatterND",
          {rnd({3, 4, 2}, 162), int64s({3, 2}, {0, 1, 2, -1, 1, 3}),
           rnd({3, 2}, 163)});
  scatter("ScatterND_constant", "ScatterND",
          {rnd({4, 3}, 164), int64s({2, 2}, {1, 2, 3, 0}), rnd({2}, 165)}, {},
          true);

  // ConstantOfShape: the node tests' value tensors, and none (zeros).
  auto valueAttr = [](Tensor value) {
    Attribute a;
    a.kind = Attribute::Kind::Tensor;
    a.t = std::move(value);
    return a;
  };
  cases.push_back(make("ConstantOfShape_float_ones", "ConstantOfShape",
                       {int64s({3}, {4, 3, 2})},
                       {{"value", valueAttr(floats({1}, {1.0f}))}}));
  cases.push_back(make(
      "ConstantOfShape_int_value", "ConstantOfShape", {int64s({2}, {10, 6})},
      {{"value",
        valueAttr(Tensor::fromVector<int32_t>(DType::Int32, {1}, {-7}))}}));
  cases.push_back(make("ConstantOfShape_default_zeros", "ConstantOfShape",
                       {int64s({2}, {3, 5})}));
  Case constantDouble = make(
      "ConstantOfShape_double", "ConstantOfShape", {int64s({2}, {2, 3})},
      {{"value",
        valueAttr(Tensor::fromVector<double>(DType::Float64, {1}, {0.1}))}});
  constantDouble.dbl = true;
  constantDouble.atol = constantDouble.rtol = 0;
  cases.push_back(constantDouble);

  // Range with runtime scalars: the node tests' float and int32 cases.
  cases.push_back(make("Range_float_positive_delta", "Range",
                       {floats({}, {1}), floats({}, {5}), floats({}, {2})}));
  cases.push_back(
      make("Range_float_fractional", "Range",
           {floats({}, {-0.3f}), floats({}, {2.9f}), floats({}, {0.37f})}));
  cases.push_back(make("Range_int32_negative_delta", "Range",
                       {Tensor::fromVector<int32_t>(DType::Int32, {}, {10}),
                        Tensor::fromVector<int32_t>(DType::Int32, {}, {6}),
                        Tensor::fromVector<int32_t>(DType::Int32, {}, {-3})}));

  cases.push_back(make("Unsqueeze_two_axes", "Unsqueeze",
                       {rnd({3, 4, 5}, 82), int64s({2}, {1, 4})}));
  cases.back().constant = {false, true};
  cases.push_back(
      make("Squeeze", "Squeeze", {rnd({1, 3, 4, 5}, 83), int64s({1}, {0})}));
  cases.back().constant = {false, true};
  cases.push_back(make("Expand_dim_changed", "Expand",
                       {rnd({3, 1}, 84), int64s({3}, {2, 1, 6})}));
  cases.push_back(make("Expand_dim_unchanged", "Expand",
                       {rnd({3, 1}, 85), int64s({2}, {3, 4})}));
  cases.push_back(
      make("Tile", "Tile", {rnd({2, 3, 4}, 86), int64s({3}, {1, 3, 2})}));
  cases.back().constant = {false, true};
  cases.push_back(
      make("DepthToSpace_dcr", "DepthToSpace", {rnd({2, 8, 3, 3}, 87)},
           {{"blocksize", intAttr(2)}, {"mode", stringAttr("DCR")}}));
  cases.push_back(
      make("DepthToSpace_crd", "DepthToSpace", {rnd({2, 8, 3, 3}, 88)},
           {{"blocksize", intAttr(2)}, {"mode", stringAttr("CRD")}}));
  cases.push_back(make("SpaceToDepth", "SpaceToDepth", {rnd({2, 2, 6, 6}, 89)},
                       {{"blocksize", intAttr(2)}}));
  cases.push_back(make("EyeLike_off_diagonal", "EyeLike", {rnd({4, 5}, 108)},
                       {{"k", intAttr(1)}}));
  cases.push_back(make("EyeLike_int_below", "EyeLike",
                       {integers({5, 3}, 109, 0, 9, DType::Int32)},
                       {{"k", intAttr(-2)}}));
  Case dropout = make("Dropout_mask", "Dropout", {rnd({3, 4, 5}, 90)});
  dropout.outputs = 2;
  cases.push_back(dropout);
  Case zeroRatio = make("Dropout_training_zero_ratio_mask", "Dropout",
                        {rnd({3, 4, 5}, 91), floats({}, {0}),
                         Tensor::fromVector<bool>(DType::Bool, {}, {true})});
  zeroRatio.constant = {false, true, true};
  zeroRatio.outputs = 2;
  cases.push_back(zeroRatio);

  // The losses: [N, C] and [N, C, d1, d2] scores, targets with the
  // ignored class among them.
  auto loss = [&](std::string op, std::string name, std::vector<int64_t> shape,
                  bool weighted, std::string reduction,
                  std::optional<int64_t> ignore, size_t outputs = 1) {
    std::vector<int64_t> positions = shape;
    positions.erase(positions.begin() + 1);
    Tensor target = integers(positions, 92, 0, int(shape[1] - 1), DType::Int64);
    if (ignore && target.numElements() > 1)
      target.data<int64_t>()[1] = *ignore;
    Case c = make(op + "_" + name, op,
                  {rnd(shape, 93, op == "NegativeLogLikelihoodLoss" ? -3 : -2,
                       op == "NegativeLogLikelihoodLoss" ? 0 : 2),
                   target},
                  {{"reduction", stringAttr(reduction)}});
    if (weighted)
      c.inputs.push_back(rnd({shape[1]}, 94, 0.1f, 1));
    if (ignore)
      c.attributes["ignore_index"] = intAttr(*ignore);
    c.outputs = outputs;
    cases.push_back(c);
  };
  for (std::string op :
       {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"}) {
    loss(op, "NC_none", {3, 5}, false, "none", std::nullopt);
    loss(op, "NC_mean", {3, 5}, false, "mean", std::nullopt);
    loss(op, "NCd1_weight_sum", {3, 5, 2}, true, "sum", std::nullopt);
    loss(op, "NCd1d2_weight_mean_ii", {2, 3, 4, 2}, true, "mean", int64_t(1));
    loss(op, "NCd1d2_none_negative_ii", {2, 3, 2, 2}, false, "none",
         int64_t(-5));
    loss(op, "NCd1d2_mean_no_weight_ii", {2, 3, 2, 2}, false, "mean",
         int64_t(2));
  }
  // test_sce_mean_weight_ii_4d's shape: MathLib's scratch takes most of
  // both GRFs.
  loss("SoftmaxCrossEntropyLoss", "NCd1d2_mean_weight_ii_grf", {3, 5, 2, 7},
       true, "mean", int64_t(2));
  loss("SoftmaxCrossEntropyLoss", "log_prob_mean_weight", {3, 5, 2}, true,
       "mean", std::nullopt, 2);
  loss("SoftmaxCrossEntropyLoss", "log_prob_none_ii", {3, 4}, false, "none",
       int64_t(0), 2);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Index, GeneralMore, ::testing::ValuesIn(indexCases()),
                         caseName);

//===----------------------------------------------------------------------===//
// What the kernel declines, with the reason
//===----------------------------------------------------------------------===//

std::string whyNotGeneral(const KernelRequest &request) {
  for (const auto &generator : kernelGenerators())
    if (std::string(generator->name()) == "general") {
      std::string whyNot;
      EXPECT_FALSE(generator->matches(request, whyNot));
      return whyNot;
    }
  ADD_FAILURE() << "no general kernel";
  return "";
}

TEST(GeneralMore, DeclinesDoubleComparisons) {
  KernelRequest request = makeRequest("Greater", {rnd({3}, 1), rnd({3}, 2)},
                                      {{3}}, DeviceType::Double);
  request.outputs[0].form = DramForm::canonical(DeviceType::Int32, {3});
  EXPECT_NE(whyNotGeneral(request).find("is double"), std::string::npos);
}

TEST(GeneralMore, DeclinesDropoutThatDrops) {
  Tensor x = rnd({3, 4}, 3);
  Tensor ratio = floats({}, {0.5f});
  Tensor training = Tensor::fromVector<bool>(DType::Bool, {}, {true});
  KernelRequest request = makeRequest("Dropout", {x, ratio, training}, {{3, 4}},
                                      DeviceType::Single, {false, true, true});
  request.inputs[2].form = DramForm::canonical(DeviceType::Int32, {});
  EXPECT_NE(whyNotGeneral(request).find("drops at random"), std::string::npos);
}

TEST(GeneralMore, SaysWhenGatherMasksDoNotFit) {
  // 2000 indices into an axis of 300: 600000 mask words.
  Tensor x = rnd({300}, 4);
  Tensor indices = integers({2000}, 5, 0, 299, DType::Int64);
  KernelRequest request =
      makeRequest("Gather", {x, indices}, {{2000}}, DeviceType::Single);
  request.inputs[1].form = DramForm::canonical(DeviceType::Int32, {2000});
  EXPECT_NE(whyNotGeneral(request).find("does not fit"), std::string::npos);
}

} // namespace
