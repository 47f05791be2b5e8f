//===- GeneralTest.cpp - The general small-tensor kernel on the emulator --===//
//
// The cases mirror the ONNX node tests of each operator (shapes,
// attributes, broadcasting, axes, keepdims): each runs through the
// general kernel (even where a specialised kernel would take it) on
// random-filled memory, must have no hazard, and must agree with the
// pfvm:cpu reference within the tolerance documented in docs/codegen.md
// (G-decisions): single precision, 1e-5 absolute plus 1e-5 relative,
// since sums and products run in another order than the reference's and
// the MAU multiplier truncates (docs/target/mncore2.md, MAU multiplier).
//
//===----------------------------------------------------------------------===//

#include "GeneralTestFixture.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::testing;
using namespace mncc::codegen::testing::general_tests;
using reference::Attribute;
using reference::DType;
using reference::Tensor;

namespace {

Tensor int64Tensor(std::vector<int64_t> values) {
  int64_t count = int64_t(values.size());
  return Tensor::fromVector<int64_t>(DType::Int64, {count}, values);
}

/// One case: an operator, its inputs (float tensors are random unless
/// given), attributes, and which inputs are constants or omitted.
struct Case {
  std::string name;
  std::string opType;
  std::vector<Tensor> inputs;
  std::map<std::string, Attribute> attributes;
  /// Inputs the kernel sees as constants (initializers).
  std::vector<bool> constant;
  /// Inputs left out (ONNX's empty name); they still occupy a position.
  std::vector<bool> omitted;
  double atol = 1e-5, rtol = 1e-5;
  /// int32 tensors (ONNX's integer types) instead of single precision.
  bool integer = false;
  /// Outputs compared (BatchNormalization's running statistics).
  size_t outputs = 1;
  /// Half tensors (computed in single between the conversions).
  bool half = false;
  /// Double tensors (computed in double), the reference in float64.
  bool dbl = false;
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

ReferenceRun referenceOf(const Case &c) {
  return runReference(c.opType, c.inputs, c.attributes, c.omitted, c.outputs);
}

/// Runs a case through the general kernel; the output shape is the
/// reference's.
void runCase(const Case &c, KernelRun *keep = nullptr) {
  ReferenceRun expected = referenceOf(c);
  ASSERT_TRUE(expected.ok) << expected.message;
  std::vector<bool> constant = c.constant;
  constant.resize(c.inputs.size(), false);
  std::vector<std::vector<int64_t>> shapes;
  for (const Tensor &output : expected.outputs)
    shapes.push_back(output.shape());
  DeviceType type = c.integer ? DeviceType::Int32
                    : c.half  ? DeviceType::Half
                    : c.dbl   ? DeviceType::Double
                              : DeviceType::Single;
  KernelRequest request =
      makeRequest(c.opType, c.inputs, shapes, type, constant);
  HarnessOptions options;
  for (size_t o = 0; o < c.outputs; ++o) {
    // Integer outputs beside others (MaxPool's indices) are int32.
    DType host = expected.outputs[o].dtype();
    options.outputTypes.push_back(host);
    if (!reference::isFloatingPoint(host) && type != DeviceType::Int32)
      request.outputs[o].form =
          DramForm::canonical(DeviceType::Int32, shapes[o]);
  }
  request.attributes = c.attributes;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    // Integer inputs (axes, shapes) are 32-bit on the device.
    if (!reference::isFloatingPoint(c.inputs[i].dtype()))
      request.inputs[i].form =
          DramForm::canonical(DeviceType::Int32, c.inputs[i].shape());
    if (i < c.omitted.size() && c.omitted[i])
      request.inputs[i].omitted = true;
  }
  options.generator = "general";
  KernelRun run;
  std::string error;
  DType hostType = c.integer ? DType::Int32
                   : c.dbl   ? DType::Float64
                             : DType::Float32;
  ASSERT_TRUE(runKernel(request, c.inputs, hostType, run, error, options))
      << error;
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  for (size_t o = 0; o < c.outputs; ++o) {
    Comparison comparison =
        compareTensors(run.outputs[o], expected.outputs[o], c.atol, c.rtol);
    EXPECT_TRUE(comparison.within)
        << "output " << o << ": " << comparison.firstMismatch << " (max abs "
        << comparison.maxAbs << ")";
  }
  // The cycle counts documented in docs/codegen.md come from here.
  if (c.dbl) {
    // How close double comes, for docs/codegen.md (G13).
    Comparison exact =
        compareTensors(run.outputs[0], expected.outputs[0], 0, 0);
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", exact.maxAbs);
    ::testing::Test::RecordProperty("max_abs", text);
  }
  ::testing::Test::RecordProperty("cycles", std::to_string(run.stats.Cycles));
  ::testing::Test::RecordProperty("steps", std::to_string(run.stats.Steps));
  if (const char *dump = std::getenv("MNCC_GENERAL_TEST_DUMP"))
    if (FILE *file = std::fopen(
            (std::string(dump) + "/" + c.name + ".vsm").c_str(), "w")) {
      std::fputs(run.program.c_str(), file);
      std::fclose(file);
    }
  if (keep)
    *keep = std::move(run);
}

/// An int32 tensor of uniform values in [low, high].
Tensor integers(std::vector<int64_t> shape, uint64_t seed, int low = -100,
                int high = 100) {
  Tensor tensor(DType::Int32, std::move(shape));
  std::mt19937_64 engine(seed);
  std::uniform_int_distribution<int> distribution(low, high);
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    tensor.data<int32_t>()[i] = distribution(engine);
  return tensor;
}

class GeneralKernel : public ::testing::TestWithParam<Case> {};

TEST_P(GeneralKernel, MatchesTheReferenceOnRandomMemory) {
  runCase(GetParam());
}

std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  return info.param.name;
}

//===----------------------------------------------------------------------===//
// Gemm, MatMul, Conv
//===----------------------------------------------------------------------===//

std::vector<Case> linearCases() {
  auto gemm = [](std::string name, std::vector<std::vector<int64_t>> shapes,
                 float alpha, float beta, int transA, int transB) {
    Case c;
    c.name = "Gemm_" + name;
    c.opType = "Gemm";
    for (size_t i = 0; i < shapes.size(); ++i)
      c.inputs.push_back(rnd(shapes[i], 10 + i));
    c.attributes = {{"alpha", floatAttr(alpha)},
                    {"beta", floatAttr(beta)},
                    {"transA", intAttr(transA)},
                    {"transB", intAttr(transB)}};
    return c;
  };
  std::vector<Case> cases = {
      gemm("all_attributes", {{4, 3}, {5, 4}, {1, 5}}, 0.25f, 0.35f, 1, 1),
      gemm("alpha", {{3, 5}, {5, 4}, {1, 4}}, 0.5f, 1, 0, 0),
      gemm("beta", {{2, 7}, {7, 4}, {1, 4}}, 1, 0.5f, 0, 0),
      gemm("default_matrix_bias", {{3, 6}, {6, 4}, {3, 4}}, 1, 1, 0, 0),
      gemm("default_no_bias", {{2, 10}, {10, 3}}, 1, 1, 0, 0),
      gemm("default_scalar_bias", {{2, 3}, {3, 4}, {}}, 1, 1, 0, 0),
      gemm("single_elem_vector_bias", {{3, 7}, {7, 3}, {1}}, 1, 1, 0, 0),
      gemm("transposeA", {{6, 3}, {6, 4}, {1, 4}}, 1, 1, 1, 0),
      gemm("transposeB", {{3, 6}, {4, 6}, {1, 4}}, 1, 1, 0, 1),
      // Larger than GRF0 on both sides: dense accumulators.
      gemm("wide", {{24, 40}, {40, 16}, {16}}, 1, 1, 0, 0),
  };
  auto matmul = [](std::string name, std::vector<int64_t> a,
                   std::vector<int64_t> b) {
    Case c;
    c.name = "MatMul_" + name;
    c.opType = "MatMul";
    c.inputs = {rnd(a, 20), rnd(b, 21)};
    return c;
  };
  cases.push_back(matmul("2d", {3, 4}, {4, 3}));
  cases.push_back(matmul("3d", {2, 3, 4}, {2, 4, 3}));
  cases.push_back(matmul("4d", {1, 2, 3, 4}, {1, 2, 4, 3}));
  cases.push_back(matmul("vector_left", {4}, {2, 4, 3}));
  cases.push_back(matmul("vector_right", {2, 3, 4}, {4}));
  cases.push_back(matmul("batch_broadcast", {2, 1, 3, 4}, {3, 4, 5}));

  auto conv = [](std::string name, std::vector<int64_t> x,
                 std::vector<int64_t> w, bool bias,
                 std::map<std::string, Attribute> attributes) {
    Case c;
    c.name = "Conv_" + name;
    c.opType = "Conv";
    c.inputs = {rnd(x, 30), rnd(w, 31)};
    if (bias)
      c.inputs.push_back(rnd({w[0]}, 32));
    c.attributes = std::move(attributes);
    return c;
  };
  cases.push_back(conv(
      "basic_with_padding", {1, 1, 5, 5}, {1, 1, 3, 3}, false,
      {{"kernel_shape", intsAttr({3, 3})}, {"pads", intsAttr({1, 1, 1, 1})}}));
  cases.push_back(conv("basic_without_padding", {1, 1, 5, 5}, {1, 1, 3, 3},
                       false, {{"kernel_shape", intsAttr({3, 3})}}));
  cases.push_back(conv("with_strides_padding", {1, 1, 7, 5}, {1, 1, 3, 3},
                       false,
                       {{"kernel_shape", intsAttr({3, 3})},
                        {"pads", intsAttr({1, 1, 1, 1})},
                        {"strides", intsAttr({2, 2})}}));
  cases.push_back(conv(
      "with_strides_no_padding", {1, 1, 7, 5}, {1, 1, 3, 3}, false,
      {{"kernel_shape", intsAttr({3, 3})}, {"strides", intsAttr({2, 2})}}));
  cases.push_back(conv("with_strides_and_asymmetric_padding", {1, 1, 7, 5},
                       {1, 1, 3, 3}, false,
                       {{"kernel_shape", intsAttr({3, 3})},
                        {"pads", intsAttr({1, 0, 1, 0})},
                        {"strides", intsAttr({2, 2})}}));
  cases.push_back(conv("with_autopad_same", {1, 1, 5, 5}, {1, 1, 3, 3}, false,
                       {{"auto_pad", stringAttr("SAME_LOWER")},
                        {"kernel_shape", intsAttr({3, 3})},
                        {"strides", intsAttr({2, 2})}}));
  cases.push_back(conv("groups_bias_dilations", {2, 4, 6, 6}, {6, 2, 2, 2},
                       true,
                       {{"group", intAttr(2)},
                        {"dilations", intsAttr({2, 1})},
                        {"pads", intsAttr({1, 0, 0, 1})}}));
  cases.push_back(conv("depthwise_1d", {1, 3, 9}, {3, 1, 3}, true,
                       {{"group", intAttr(3)}, {"strides", intsAttr({2})}}));
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Linear, GeneralKernel,
                         ::testing::ValuesIn(linearCases()), caseName);

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

std::vector<Case> elementCases() {
  std::vector<Case> cases;
  auto binary = [&](std::string op, std::string name, std::vector<int64_t> a,
                    std::vector<int64_t> b) {
    Case c;
    c.name = op + "_" + name;
    c.opType = op;
    c.inputs = {rnd(a, 40), rnd(b, 41)};
    cases.push_back(c);
  };
  for (const char *op : {"Add", "Sub", "Mul"}) {
    binary(op, "same", {3, 4, 5}, {3, 4, 5});
    binary(op, "bcast", {3, 4, 5}, {5});
    binary(op, "example", {3}, {3});
    binary(op, "both_ways", {3, 1, 5}, {4, 1});
    binary(op, "scalar_first", {}, {2, 9});
  }
  // [8,300] spreads over the four groups' DRAMs (C2): loaded from each,
  // stored to each.
  binary("Add", "four_groups", {8, 300}, {300});
  binary("Div", "four_groups", {8, 300}, {8, 1});
  {
    Case c;
    c.name = "Mul_constant_scalar";
    c.opType = "Mul";
    c.inputs = {rnd({5, 9}, 42),
                Tensor::fromVector<float>(DType::Float32, {}, {0.375f})};
    c.constant = {false, true};
    cases.push_back(c);
  }
  auto unary = [&](std::string op, std::string name, std::vector<int64_t> x,
                   std::map<std::string, Attribute> attributes = {}) {
    Case c;
    c.name = op + "_" + name;
    c.opType = op;
    c.inputs = {rnd(x, 43, -3, 3)};
    c.attributes = std::move(attributes);
    cases.push_back(c);
  };
  unary("Relu", "3x4x5", {3, 4, 5});
  unary("LeakyRelu", "alpha", {3, 4, 5}, {{"alpha", floatAttr(0.1f)}});
  unary("LeakyRelu", "default", {3, 4, 5});
  unary("LeakyRelu", "example", {3}, {{"alpha", floatAttr(0.1f)}});
  unary("LeakyRelu", "steep", {2, 7}, {{"alpha", floatAttr(2.5f)}});
  auto clip = [&](std::string name, std::vector<int64_t> x,
                  std::optional<float> low, std::optional<float> high,
                  bool constant) {
    Case c;
    c.name = "Clip_" + name;
    c.opType = "Clip";
    c.inputs = {rnd(x, 44, -3, 3)};
    c.inputs.push_back(
        Tensor::fromVector<float>(DType::Float32, {}, {low.value_or(0)}));
    c.inputs.push_back(
        Tensor::fromVector<float>(DType::Float32, {}, {high.value_or(0)}));
    c.omitted = {false, !low, !high};
    c.constant = {false, constant, constant};
    cases.push_back(c);
  };
  clip("splitbounds", {3, 4, 5}, -1.5f, 1.0f, false);
  clip("example", {3}, -1, 1, false);
  clip("inbounds", {3}, -5, 5, false);
  clip("outbounds", {3}, -0.25f, 0.25f, false);
  clip("default_min", {3, 4, 5}, 0.0f, std::nullopt, false);
  clip("default_max", {3, 4, 5}, std::nullopt, 0.0f, false);
  clip("default_inbounds", {3}, std::nullopt, std::nullopt, false);
  clip("constant_bounds", {3, 4, 5}, -0.5f, 2.0f, true);

  // MathLib's functions (its accuracy, docs/codegen.md M decisions).
  for (const char *op : {"Exp", "Sigmoid", "Tanh"}) {
    unary(op, "3x4x5", {3, 4, 5});
    unary(op, "example", {3});
  }
  binary("Div", "same", {3, 4, 5}, {3, 4, 5});
  binary("Div", "bcast", {3, 4, 5}, {5});
  binary("Div", "example", {2}, {2});
  {
    Case c;
    c.name = "Div_constant";
    c.opType = "Div";
    c.inputs = {rnd({4, 6}, 45),
                Tensor::fromVector<float>(DType::Float32, {}, {3.0f})};
    c.constant = {false, true};
    cases.push_back(c);
  }
  for (const char *op : {"Softmax", "LogSoftmax"}) {
    for (int64_t axis : {0, 1, 2, -1}) {
      Case c;
      c.name = std::string(op) + "_axis_" +
               (axis < 0 ? "minus1" : std::to_string(axis));
      c.opType = op;
      c.inputs = {rnd({3, 4, 5}, 46, -4, 4)};
      c.attributes["axis"] = intAttr(axis);
      cases.push_back(c);
    }
    Case example;
    example.name = std::string(op) + "_example";
    example.opType = op;
    example.inputs = {
        Tensor::fromVector<float>(DType::Float32, {1, 3}, {-1, 0, 1})};
    cases.push_back(example);
    Case large;
    large.name = std::string(op) + "_large_number";
    large.opType = op;
    large.inputs = {Tensor::fromVector<float>(
        DType::Float32, {2, 4}, {1, 2, 3, 4, 10000, 10001, 10002, 10003})};
    cases.push_back(large);
  }
  return cases;
}

//===----------------------------------------------------------------------===//
// int32 tensors (ONNX's uint8, int8 and int32 cases)
//===----------------------------------------------------------------------===//

std::vector<Case> integerCases() {
  std::vector<Case> cases;
  auto add = [&](std::string name, std::string op, std::vector<Tensor> inputs,
                 std::map<std::string, Attribute> attributes = {}) {
    Case c;
    c.name = name;
    c.opType = op;
    c.inputs = std::move(inputs);
    c.attributes = std::move(attributes);
    c.integer = true;
    c.atol = c.rtol = 0;
    cases.push_back(c);
    return &cases.back();
  };
  add("Add_int", "Add", {integers({3, 4, 5}, 70), integers({3, 4, 5}, 71)});
  add("Sub_int_bcast", "Sub", {integers({3, 4, 5}, 72), integers({5}, 73)});
  add("Mul_int", "Mul",
      {integers({3, 4, 5}, 74, 0, 255), integers({3, 4, 5}, 75, 0, 255)});
  add("Mul_int_negative_bcast", "Mul",
      {integers({2, 7}, 76), integers({7}, 77)});
  add("Relu_int", "Relu", {integers({3, 4, 5}, 78)});
  Case *clip = add("Clip_int_bounds", "Clip",
                   {integers({3, 4, 5}, 79),
                    Tensor::fromVector<int32_t>(DType::Int32, {}, {-20}),
                    Tensor::fromVector<int32_t>(DType::Int32, {}, {30})});
  clip->constant = {false, true, false};
  add("Clip_int_none", "Clip", {integers({3}, 80)});
  // The reference pools integers as uint8 and int8, as ONNX does.
  Tensor bytes(DType::UInt8, {1, 1, 5, 5});
  Tensor wide = integers({1, 1, 5, 5}, 81, 0, 255);
  for (int64_t i = 0; i < bytes.numElements(); ++i)
    bytes.data<uint8_t>()[i] = uint8_t(wide.data<int32_t>()[i]);
  add("MaxPool_uint8", "MaxPool", {bytes},
      {{"kernel_shape", intsAttr({5, 5})}, {"pads", intsAttr({2, 2, 2, 2})}});
  add("ReduceSum_int", "ReduceSum", {integers({3, 2, 2}, 82), int64Tensor({1})},
      {{"keepdims", intAttr(0)}})
      ->constant = {false, true};
  add("ReduceMax_int", "ReduceMax", {integers({3, 2, 2}, 83)},
      {{"axes", intsAttr({0, 2})}, {"keepdims", intAttr(1)}});
  add("Transpose_int", "Transpose", {integers({2, 3, 4}, 84)},
      {{"perm", intsAttr({2, 0, 1})}});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Integer, GeneralKernel,
                         ::testing::ValuesIn(integerCases()), caseName);

TEST(GeneralKernel, TheSameRequestGivesTheSameProgram) {
  std::vector<Tensor> inputs = {rnd({1, 2, 6, 6}, 90), rnd({3, 2, 3, 3}, 91)};
  KernelRequest request =
      makeRequest("Conv", inputs, {{1, 3, 4, 4}}, DeviceType::Single);
  for (const auto &generator : kernelGenerators())
    if (std::string(generator->name()) == "general") {
      std::string text[2];
      for (std::string &program : text) {
        VsmWriter out;
        KernelDescription description;
        std::string error;
        ASSERT_TRUE(generator->emit(request, out, description, error)) << error;
        program = out.take();
      }
      EXPECT_EQ(text[0], text[1]);
    }
}

TEST(GeneralKernel, SaysWhichTensorDoesNotFit) {
  // 3 x 32^3 singles: the ONNX 3-D pool tests are too large for one PE.
  std::vector<Tensor> inputs = {rnd({1, 3, 32, 32, 32}, 92)};
  KernelRequest request =
      makeRequest("MaxPool", inputs, {{1, 3, 31, 31, 31}}, DeviceType::Single);
  request.attributes["kernel_shape"] = intsAttr({2, 2, 2});
  for (const auto &generator : kernelGenerators())
    if (std::string(generator->name()) == "general") {
      std::string whyNot;
      EXPECT_FALSE(generator->matches(request, whyNot));
      EXPECT_NE(whyNot.find("input 0"), std::string::npos) << whyNot;
      EXPECT_NE(whyNot.find("does not fit"), std::string::npos) << whyNot;
      EXPECT_NE(whyNot.find("words left"), std::string::npos) << whyNot;
    }
}

/// Tensors in other DRAM orders (the planner's NHWC, C4): the index maps
/// go through DramForm::locate, whatever the order.
TEST(GeneralKernel, WorksInAnyDramOrder) {
  std::vector<unsigned> nhwc = {0, 2, 3, 1};
  struct Ordered {
    Case c;
    std::vector<std::vector<unsigned>> inOrders, outOrders;
  };
  std::vector<Ordered> cases;
  {
    Case c;
    c.name = "layout_switch";
    c.opType = "Transpose";
    c.inputs = {rnd({1, 3, 4, 5}, 93)};
    c.attributes["perm"] = intsAttr({0, 1, 2, 3});
    cases.push_back({c, {{}}, {nhwc}});
  }
  {
    Case c;
    c.name = "conv_nhwc";
    c.opType = "Conv";
    c.inputs = {rnd({1, 4, 6, 6}, 94), rnd({5, 4, 3, 3}, 95), rnd({5}, 96)};
    c.attributes["pads"] = intsAttr({1, 1, 1, 1});
    cases.push_back({c, {nhwc, {}, {}}, {nhwc}});
  }
  {
    Case c;
    c.name = "add_mixed_orders";
    c.opType = "Add";
    c.inputs = {rnd({2, 3, 4, 5}, 97), rnd({3, 1, 1}, 98)};
    cases.push_back({c, {nhwc, {}}, {{}}});
  }
  {
    Case c;
    c.name = "relu_nhwc";
    c.opType = "Relu";
    c.inputs = {rnd({1, 6, 5, 5}, 99)};
    cases.push_back({c, {nhwc}, {nhwc}});
  }
  for (const Ordered &o : cases) {
    SCOPED_TRACE(o.c.name);
    ReferenceRun expected = referenceOf(o.c);
    ASSERT_TRUE(expected.ok) << expected.message;
    KernelRequest request =
        makeRequest(o.c.opType, o.c.inputs, {expected.outputs[0].shape()},
                    DeviceType::Single);
    request.attributes = o.c.attributes;
    for (size_t i = 0; i < o.inOrders.size(); ++i)
      request.inputs[i].form = DramForm::canonical(
          DeviceType::Single, o.c.inputs[i].shape(), o.inOrders[i]);
    request.outputs[0].form = DramForm::canonical(
        DeviceType::Single, expected.outputs[0].shape(), o.outOrders[0]);
    HarnessOptions options;
    options.generator = "general";
    KernelRun run;
    std::string error;
    ASSERT_TRUE(
        runKernel(request, o.c.inputs, DType::Float32, run, error, options))
        << error;
    EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
    Comparison comparison =
        compareTensors(run.outputs[0], expected.outputs[0], 1e-5, 1e-5);
    EXPECT_TRUE(comparison.within) << comparison.firstMismatch;
  }
}

TEST(GeneralKernel, DeclinesIntegerOperatorsWithoutAnIntegerForm) {
  std::vector<Tensor> inputs = {integers({3, 4}, 1)};
  KernelRequest request =
      makeRequest("Exp", inputs, {{3, 4}}, DeviceType::Int32);
  for (const auto &generator : kernelGenerators())
    if (std::string(generator->name()) == "general") {
      std::string whyNot;
      EXPECT_FALSE(generator->matches(request, whyNot));
      EXPECT_NE(whyNot.find("no int32 form"), std::string::npos) << whyNot;
    }
}

INSTANTIATE_TEST_SUITE_P(Elementwise, GeneralKernel,
                         ::testing::ValuesIn(elementCases()), caseName);

//===----------------------------------------------------------------------===//
// Reductions, pools, normalisation
//===----------------------------------------------------------------------===//

std::vector<Case> reduceCases() {
  std::vector<Case> cases;
  auto reduce = [&](std::string op, std::string name,
                    std::optional<std::vector<int64_t>> axes, int keepdims,
                    bool axesInput, int noop = 0) {
    Case c;
    c.name = op + "_" + name;
    c.opType = op;
    c.inputs = {rnd({3, 2, 2}, 50)};
    c.attributes["keepdims"] = intAttr(keepdims);
    if (axesInput) {
      c.inputs.push_back(int64Tensor(axes.value_or(std::vector<int64_t>{})));
      c.constant = {false, true};
      c.attributes["noop_with_empty_axes"] = intAttr(noop);
    } else if (axes) {
      c.attributes["axes"] = intsAttr(*axes);
    }
    cases.push_back(c);
  };
  for (const char *op : {"ReduceMean", "ReduceMax"}) {
    reduce(op, "default_axes_keepdims", std::nullopt, 1, false);
    reduce(op, "do_not_keepdims", std::vector<int64_t>{1}, 0, false);
    reduce(op, "keepdims", std::vector<int64_t>{1}, 1, false);
    reduce(op, "negative_axes_keepdims", std::vector<int64_t>{-2}, 1, false);
  }
  reduce("ReduceSum", "default_axes_keepdims", std::vector<int64_t>{}, 1, true);
  reduce("ReduceSum", "do_not_keepdims", std::vector<int64_t>{1}, 0, true);
  reduce("ReduceSum", "keepdims", std::vector<int64_t>{1}, 1, true);
  reduce("ReduceSum", "negative_axes_keepdims", std::vector<int64_t>{-2}, 1,
         true);
  reduce("ReduceSum", "empty_axes_input_noop", std::vector<int64_t>{}, 1, true,
         1);
  reduce("ReduceSum", "two_axes", std::vector<int64_t>{0, 2}, 0, true);
  {
    // Axes given at run time: inferred from the shapes with keepdims.
    Case c;
    c.name = "ReduceSum_runtime_axes_keepdims";
    c.opType = "ReduceSum";
    c.inputs = {rnd({3, 2, 2}, 51), int64Tensor({1})};
    c.attributes["keepdims"] = intAttr(1);
    cases.push_back(c);
  }

  auto pool = [&](std::string op, std::string name, std::vector<int64_t> x,
                  std::map<std::string, Attribute> attributes) {
    Case c;
    c.name = op + "_" + name;
    c.opType = op;
    c.inputs = {rnd(x, 52)};
    c.attributes = std::move(attributes);
    cases.push_back(c);
  };
  for (const char *op : {"MaxPool", "AveragePool"}) {
    pool(op, "1d_default", {1, 3, 32}, {{"kernel_shape", intsAttr({2})}});
    pool(op, "2d_ceil", {1, 1, 4, 4},
         {{"kernel_shape", intsAttr({3, 3})},
          {"strides", intsAttr({2, 2})},
          {"ceil_mode", intAttr(1)}});
    pool(op, "2d_default", {1, 3, 16, 16},
         {{"kernel_shape", intsAttr({2, 2})}});
    pool(
        op, "2d_pads", {1, 3, 12, 12},
        {{"kernel_shape", intsAttr({3, 3})}, {"pads", intsAttr({2, 2, 2, 2})}});
    pool(
        op, "2d_precomputed_pads", {1, 1, 5, 5},
        {{"kernel_shape", intsAttr({5, 5})}, {"pads", intsAttr({2, 2, 2, 2})}});
    pool(op, "2d_precomputed_same_upper", {1, 1, 5, 5},
         {{"kernel_shape", intsAttr({3, 3})},
          {"strides", intsAttr({2, 2})},
          {"auto_pad", stringAttr("SAME_UPPER")}});
    pool(op, "2d_precomputed_strides", {1, 1, 5, 5},
         {{"kernel_shape", intsAttr({2, 2})}, {"strides", intsAttr({2, 2})}});
    pool(op, "2d_same_lower", {1, 3, 8, 8},
         {{"kernel_shape", intsAttr({2, 2})},
          {"auto_pad", stringAttr("SAME_LOWER")}});
    pool(op, "2d_strides", {1, 3, 16, 16},
         {{"kernel_shape", intsAttr({5, 5})}, {"strides", intsAttr({3, 3})}});
  }
  for (int64_t order : {0, 1}) {
    Case c;
    c.name = "MaxPool_with_argmax_storage_order_" + std::to_string(order);
    c.opType = "MaxPool";
    c.inputs = {rnd({1, 2, 5, 5}, 58)};
    c.attributes = {{"kernel_shape", intsAttr({3, 3})},
                    {"pads", intsAttr({1, 1, 1, 1})},
                    {"strides", intsAttr({2, 2})},
                    {"storage_order", intAttr(order)}};
    c.outputs = 2;
    cases.push_back(c);
  }
  pool("MaxPool", "2d_dilations", {1, 1, 4, 4},
       {{"kernel_shape", intsAttr({2, 2})}, {"dilations", intsAttr({2, 2})}});
  pool("AveragePool", "2d_pads_count_include_pad", {1, 3, 12, 12},
       {{"kernel_shape", intsAttr({3, 3})},
        {"pads", intsAttr({2, 2, 2, 2})},
        {"count_include_pad", intAttr(1)}});
  pool("AveragePool", "2d_ceil_count_include_pad", {1, 1, 5, 5},
       {{"kernel_shape", intsAttr({3, 3})},
        {"strides", intsAttr({2, 2})},
        {"pads", intsAttr({1, 1, 1, 1})},
        {"ceil_mode", intAttr(1)},
        {"count_include_pad", intAttr(1)}});
  pool("GlobalAveragePool", "default", {1, 3, 5, 5}, {});
  pool("GlobalAveragePool", "precomputed", {1, 1, 3, 3}, {});

  for (float epsilon : {1e-5f, 1e-2f}) {
    Case c;
    c.name = epsilon < 1e-3f ? "BatchNormalization_example"
                             : "BatchNormalization_epsilon";
    c.opType = "BatchNormalization";
    c.inputs = {rnd({2, 3, 4, 5}, 53), rnd({3}, 54), rnd({3}, 55), rnd({3}, 56),
                rnd({3}, 57, 0.5f, 2)};
    c.attributes["epsilon"] = floatAttr(epsilon);
    cases.push_back(c);
    // Training mode: the batch's statistics, and the running ones out.
    c.name += "_training_mode";
    c.attributes["training_mode"] = intAttr(1);
    c.attributes["momentum"] = floatAttr(0.9f);
    c.outputs = 3;
    cases.push_back(c);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Reduce, GeneralKernel,
                         ::testing::ValuesIn(reduceCases()), caseName);

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

std::vector<Case> moveCases() {
  std::vector<Case> cases;
  for (int64_t axis : {0, 1, 2, 3, -1, -2, -3, -4}) {
    Case c;
    c.name = "Flatten_axis" + std::string(axis < 0 ? "_minus" : "") +
             std::to_string(axis < 0 ? -axis : axis);
    c.opType = "Flatten";
    c.inputs = {rnd({2, 3, 4, 5}, 60)};
    c.attributes["axis"] = intAttr(axis);
    cases.push_back(c);
  }
  auto reshape = [&](std::string name, std::vector<int64_t> shape) {
    Case c;
    c.name = "Reshape_" + name;
    c.opType = "Reshape";
    c.inputs = {rnd({2, 3, 4}, 61), int64Tensor(shape)};
    c.constant = {false, true};
    cases.push_back(c);
  };
  reshape("reordered_all_dims", {4, 2, 3});
  reshape("reordered_last_dims", {2, 4, 3});
  reshape("reduced_dims", {2, 12});
  reshape("extended_dims", {2, 3, 2, 2});
  reshape("one_dim", {24});
  reshape("negative_dim", {2, -1, 2});
  reshape("negative_extended_dims", {-1, 2, 3, 4});
  reshape("zero_dim", {2, 0, 4, 1});
  reshape("zero_and_negative_dim", {2, 0, 1, -1});
  std::vector<std::vector<int64_t>> perms = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                             {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (size_t i = 0; i < perms.size(); ++i) {
    Case c;
    c.name = "Transpose_all_permutations_" + std::to_string(i);
    c.opType = "Transpose";
    c.inputs = {rnd({2, 3, 4}, 62)};
    c.attributes["perm"] = intsAttr(perms[i]);
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "Transpose_default";
    c.opType = "Transpose";
    c.inputs = {rnd({2, 3, 4}, 63)};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "Identity";
    c.opType = "Identity";
    c.inputs = {rnd({1, 1, 2, 2}, 64)};
    cases.push_back(c);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Move, GeneralKernel, ::testing::ValuesIn(moveCases()),
                         caseName);

//===----------------------------------------------------------------------===//
// Half tensors (float_dtype mixed and half)
//===----------------------------------------------------------------------===//

std::vector<Case> halfCases() {
  // A selection of every family: products, broadcasting, MathLib, windows,
  // normalisation, reductions and moves. One rounding to half at the end
  // (2^-10 relative) and the single computation's order: 4e-3.
  std::vector<Case> all = linearCases(), elements = elementCases(),
                    reduces = reduceCases(), moves = moveCases();
  all.insert(all.end(), elements.begin(), elements.end());
  all.insert(all.end(), reduces.begin(), reduces.end());
  all.insert(all.end(), moves.begin(), moves.end());
  const char *chosen[] = {"Gemm_all_attributes",
                          "Gemm_default_no_bias",
                          "MatMul_3d",
                          "Conv_basic_with_padding",
                          "Conv_groups_bias_dilations",
                          "Add_bcast",
                          "Mul_constant_scalar",
                          "Relu_3x4x5",
                          "LeakyRelu_alpha",
                          "Clip_splitbounds",
                          "Exp_3x4x5",
                          "Div_bcast",
                          "Softmax_axis_1",
                          "LogSoftmax_axis_2",
                          "MaxPool_2d_pads",
                          "AveragePool_2d_strides",
                          "GlobalAveragePool_default",
                          "BatchNormalization_example",
                          "ReduceMean_keepdims",
                          "ReduceSum_two_axes",
                          "Transpose_all_permutations_4",
                          "Flatten_axis2",
                          "Identity"};
  std::vector<Case> cases;
  for (const char *name : chosen)
    for (const Case &c : all)
      if (c.name == name) {
        Case h = c;
        h.name = "half_" + c.name;
        h.half = true;
        for (Tensor &input : h.inputs)
          input = roundedToHalf(input);
        h.atol = h.rtol = 4e-3;
        cases.push_back(h);
      }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Half, GeneralKernel, ::testing::ValuesIn(halfCases()),
                         caseName);

//===----------------------------------------------------------------------===//
// Double tensors (float_dtype double)
//===----------------------------------------------------------------------===//

/// The tensor in float64 with every bit of the significand in use: each
/// value moved by a relative 1e-9 times a pseudo-random factor in [-1, 1)
/// (signs and zeros kept, so positive inputs such as variances stay so).
Tensor widenedToDouble(const Tensor &tensor, uint64_t seed) {
  if (tensor.dtype() != DType::Float32)
    return tensor;
  Tensor result(DType::Float64, tensor.shape());
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> jitter(-1, 1);
  for (int64_t i = 0; i < tensor.numElements(); ++i) {
    double value = tensor.data<float>()[i];
    result.data<double>()[i] = value + value * 1e-9 * jitter(engine);
  }
  return result;
}

std::vector<Case> doubleCases() {
  // Every single-precision case of the families, in double: the device
  // computes in double (dv* on the MAU, d* on the ALU, MathLib's double
  // functions): the largest difference from the reference in float64 is
  // 9e-16 (Div); asserted 1e-12, inside docs/codegen.md's 1e-9.
  std::vector<Case> all = linearCases(), elements = elementCases(),
                    reduces = reduceCases(), moves = moveCases();
  all.insert(all.end(), elements.begin(), elements.end());
  all.insert(all.end(), reduces.begin(), reduces.end());
  all.insert(all.end(), moves.begin(), moves.end());
  std::vector<Case> cases;
  uint64_t seed = 500;
  for (const Case &c : all) {
    // MaxPool's indices compare 32-bit patterns (declined in double:
    // DeclinesMaxPoolIndicesInDouble).
    if (c.name.rfind("MaxPool_with_argmax", 0) == 0)
      continue;
    Case d = c;
    // A double takes twice the words: the four-group and dense-accumulator
    // cases at half their single size, which still spreads over the four
    // groups (1280 long words) and still exceeds GRF0 with both factors.
    if (c.name == "Add_four_groups")
      d.inputs = {rnd({8, 150}, 40), rnd({150}, 41)};
    if (c.name == "Div_four_groups")
      d.inputs = {rnd({8, 150}, 40), rnd({8, 1}, 41)};
    if (c.name == "Gemm_wide")
      d.inputs = {rnd({12, 40}, 10), rnd({40, 16}, 11), rnd({16}, 12)};
    d.name = "double_" + c.name;
    d.dbl = true;
    for (Tensor &input : d.inputs)
      input = widenedToDouble(input, ++seed);
    d.atol = d.rtol = 1e-12;
    cases.push_back(d);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Double, GeneralKernel,
                         ::testing::ValuesIn(doubleCases()), caseName);

TEST(GeneralKernel, DeclinesMaxPoolIndicesInDouble) {
  Tensor x = widenedToDouble(rnd({1, 1, 4, 4}, 7), 8);
  KernelRequest request =
      makeRequest("MaxPool", {x}, {{1, 1, 2, 2}, {1, 1, 2, 2}},
                  DeviceType::Double, {false});
  request.outputs[1].form =
      DramForm::canonical(DeviceType::Int32, {1, 1, 2, 2});
  request.attributes = {{"kernel_shape", intsAttr({2, 2})},
                        {"strides", intsAttr({2, 2})}};
  bool found = false;
  for (const auto &generator : kernelGenerators())
    if (std::string(generator->name()) == "general") {
      found = true;
      std::string whyNot;
      EXPECT_FALSE(generator->matches(request, whyNot));
      EXPECT_NE(whyNot.find("double given"), std::string::npos) << whyNot;
    }
  EXPECT_TRUE(found);
}

} // namespace
