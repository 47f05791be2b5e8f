//===- GeneralTrigTest.cpp - Trigonometric and hyperbolic functions -------===//
//
// GeneralTrig.cpp on the emulator: each case runs through the general
// kernel on random-filled memory, must have no hazard, and must agree with
// pfvm:cpu within 1e-5 absolute plus 1e-5 relative (4e-3 for half); the
// shapes and values mirror ONNX's node tests. A dense sweep per function
// then measures the distance from the function computed in double and
// rounded to single, in ulps (docs/codegen.md G19 quotes the figures): a
// wrong coefficient, quadrant or range reduction moves it far past the
// bound.
//
//===----------------------------------------------------------------------===//

#include "GeneralTestFixture.h"

#include "gtest/gtest.h"

#include <cmath>
#include <functional>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::testing;
using namespace mncc::codegen::testing::general_tests;
using reference::Attribute;
using reference::DType;
using reference::Tensor;

namespace {

struct Case {
  std::string name;
  std::string opType;
  Tensor input;
  std::map<std::string, Attribute> attributes;
  bool half = false;
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

Tensor floats(std::vector<int64_t> shape, std::vector<float> values) {
  return Tensor::fromVector<float>(DType::Float32, std::move(shape),
                                   std::move(values));
}

/// Runs `opType` on `input` through the general kernel (no hazard), in
/// single or half tensors.
bool runGeneral(const std::string &opType, const Tensor &input,
                const std::map<std::string, Attribute> &attributes, bool half,
                KernelRun &run, std::string &error) {
  KernelRequest request =
      makeRequest(opType, {input}, {input.shape()},
                  half ? DeviceType::Half : DeviceType::Single);
  request.attributes = attributes;
  HarnessOptions options;
  options.generator = "general";
  if (!runKernel(request, {input}, DType::Float32, run, error, options))
    return false;
  if (!run.hazards.empty()) {
    error = run.hazards.front();
    return false;
  }
  return true;
}

class GeneralTrig : public ::testing::TestWithParam<Case> {};

TEST_P(GeneralTrig, MatchesTheReferenceOnRandomMemory) {
  const Case &c = GetParam();
  // Half cases: the reference sees the values the device holds.
  Tensor input = c.half ? roundedToHalf(c.input) : c.input;
  ReferenceRun expected = runReference(c.opType, {input}, c.attributes, {}, 1);
  ASSERT_TRUE(expected.ok) << expected.message;
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runGeneral(c.opType, c.input, c.attributes, c.half, run, error))
      << error;
  double tolerance = c.half ? 4e-3 : 1e-5;
  Comparison comparison =
      compareTensors(run.outputs[0], expected.outputs[0], tolerance, tolerance);
  EXPECT_TRUE(comparison.within)
      << comparison.firstMismatch << " (max abs " << comparison.maxAbs << ")";
  ::testing::Test::RecordProperty("cycles", std::to_string(run.stats.Cycles));
}

std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  return info.param.name;
}

/// The node tests' inputs: a [3, 4, 5] tensor in the function's domain
/// (ONNX: randn, or uniform where the domain is bounded) and the example.
std::vector<Case> trigCases() {
  struct Domain {
    const char *op;
    float low, high;
    std::vector<float> example;
  };
  const Domain domains[] = {
      {"Sin", -3, 3, {-1, 0, 1}},
      {"Cos", -3, 3, {-1, 0, 1}},
      {"Tan", -3, 3, {-1, 0, 1}},
      {"Asin", -1, 1, {-0.5f, 0, 0.5f}},
      {"Acos", -1, 1, {-0.5f, 0, 0.5f}},
      {"Atan", -3, 3, {-1, 0, 1}},
      {"Sinh", -3, 3, {-1, 0, 1}},
      {"Cosh", -3, 3, {-1, 0, 1}},
      {"Asinh", -3, 3, {-1, 0, 1}},
      {"Acosh", 1, 10, {10, float(M_E), 1}},
      {"Atanh", -0.999f, 0.999f, {-0.5f, 0, 0.5f}},
      {"Softsign", -3, 3, {-1, 0, 1}},
      {"Celu", -3, 3, {-1, 0, 1}},
  };
  std::vector<Case> cases;
  uint64_t seed = 1;
  for (const Domain &d : domains) {
    std::string op = d.op;
    cases.push_back({op, op, rnd({3, 4, 5}, seed++, d.low, d.high), {}});
    cases.push_back({op + "_example", op, floats({3}, d.example), {}});
    Case half{op + "_half", op, rnd({3, 4, 5}, seed++, d.low, d.high), {}};
    half.half = true;
    cases.push_back(half);
  }
  // Celu's node test: alpha 2 over [3, 3, 3, 1].
  cases.push_back({"Celu_alpha",
                   "Celu",
                   rnd({3, 3, 3, 1}, seed++, -3, 3),
                   {{"alpha", floatAttr(2.0f)}}});
  // Beyond the node tests: arguments many periods out, and ones that
  // cross the thresholds of the hyperbolic functions' forms.
  cases.push_back({"Sin_wide", "Sin", rnd({4, 50}, seed++, -2000, 2000), {}});
  cases.push_back({"Cos_wide", "Cos", rnd({4, 50}, seed++, -2000, 2000), {}});
  cases.push_back(
      {"Asinh_large", "Asinh", rnd({4, 50}, seed++, -1e6f, 1e6f), {}});
  cases.push_back(
      {"Acosh_large", "Acosh", rnd({4, 50}, seed++, 1000, 1e6f), {}});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cases, GeneralTrig, ::testing::ValuesIn(trigCases()),
                         caseName);

/// A dense sweep: `count` evenly spaced points of [low, high] against
/// `exact` in double, rounded to single; every one within `ulps`.
struct Sweep {
  const char *op;
  double low, high;
  std::function<double(double)> exact;
  double ulps;
};

class GeneralTrigSweep : public ::testing::TestWithParam<Sweep> {};

TEST_P(GeneralTrigSweep, IsWithinItsUlpsOfTheFunction) {
  const Sweep &s = GetParam();
  constexpr int64_t kCount = 512;
  Tensor input(DType::Float32, {kCount});
  Tensor expected(DType::Float32, {kCount});
  for (int64_t i = 0; i < kCount; ++i) {
    float x = float(s.low + (s.high - s.low) * double(i) / double(kCount - 1));
    input.data<float>()[i] = x;
    expected.data<float>()[i] = float(s.exact(double(x)));
  }
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runGeneral(s.op, input, {}, false, run, error)) << error;
  UlpComparison ulps =
      compareUlps(run.outputs[0], expected, DeviceType::Single, s.ulps);
  EXPECT_TRUE(ulps.within) << ulps.firstMismatch;
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", ulps.worst);
  ::testing::Test::RecordProperty("worst_ulps", text);
  ::testing::Test::RecordProperty("cycles", std::to_string(run.stats.Cycles));
}

std::string sweepName(const ::testing::TestParamInfo<Sweep> &info) {
  return info.param.op;
}

// The bounds are the measured worst cases (docs/codegen.md G19).
INSTANTIATE_TEST_SUITE_P(
    Functions, GeneralTrigSweep,
    ::testing::Values(
        Sweep{"Sin", -20, 20, [](double x) { return std::sin(x); }, 1},
        Sweep{"Cos", -20, 20, [](double x) { return std::cos(x); }, 1},
        Sweep{"Tan", -1.5, 1.5, [](double x) { return std::tan(x); }, 2},
        Sweep{"Asin", -1, 1, [](double x) { return std::asin(x); }, 2},
        Sweep{"Acos", -1, 1, [](double x) { return std::acos(x); }, 2},
        Sweep{"Atan", -20, 20, [](double x) { return std::atan(x); }, 2},
        Sweep{"Sinh", -10, 10, [](double x) { return std::sinh(x); }, 1},
        Sweep{"Cosh", -10, 10, [](double x) { return std::cosh(x); }, 1},
        Sweep{"Asinh", -20, 20, [](double x) { return std::asinh(x); }, 2},
        Sweep{"Acosh", 1, 40, [](double x) { return std::acosh(x); }, 1},
        Sweep{"Atanh", -0.99, 0.99, [](double x) { return std::atanh(x); }, 2},
        Sweep{"Softsign", -20, 20,
              [](double x) { return x / (1 + std::fabs(x)); }, 1}),
    sweepName);

} // namespace
