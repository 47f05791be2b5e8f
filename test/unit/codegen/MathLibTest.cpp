//===- MathLibTest.cpp - Element-wise math functions on the emulator ------===//
//
// Each function runs over a block of LM0 in every PE of a board whose
// memories start as random bytes, with no hazard; the results in LM1 are
// compared, in units in the last place, with the correctly rounded IEEE
// single result (computed in double and rounded, subnormal results
// flushed to zero as the device does). The bounds asserted here are the
// ones docs/codegen.md (M6) documents.
//
//===----------------------------------------------------------------------===//

// The library is internal to the code generator: reached from its source.
#include "../../../lib/codegen/kernels/MathLib.h"

#include "mncc/emu/Hazards.h"
#include "mncc/emu/Parser.h"
#include "mncc/emu/Simulator.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

using namespace mncc;
using namespace mncc::codegen;

namespace {

constexpr unsigned kPes = 4096;

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}
float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

/// A device single as the host reads it: a zero exponent is zero, an
/// all-ones exponent infinity (docs/target/mncore2.md, decision 2).
float deviceValue(uint32_t bits) {
  uint32_t exponent = bits >> 23 & 0xff;
  if (exponent == 0)
    return floatOf(bits & 0x80000000u);
  if (exponent == 0xff)
    return floatOf((bits & 0x80000000u) | 0x7f800000u);
  return floatOf(bits);
}

/// The device has no subnormals: inputs and expected results under the
/// smallest normal are zeros.
float flush(double value) {
  float rounded = float(value);
  if (std::fabs(rounded) < std::numeric_limits<float>::min())
    return std::signbit(rounded) ? -0.0f : 0.0f;
  return rounded;
}

/// |actual - exact| in units in the last place of the single nearest the
/// exact value; infinities and zeros must match exactly (0 or a huge
/// number).
double ulpError(float actual, double exact) {
  float expected = flush(exact);
  if (std::isinf(expected) || std::isinf(actual))
    return expected == actual ? 0 : 1e30;
  if (expected == 0)
    return actual == 0 ? 0 : std::fabs(actual) / 1e-45;
  int exponent;
  std::frexp(double(expected), &exponent);
  double ulp = std::ldexp(1.0, std::max(exponent - 24, -149));
  return std::fabs(double(actual) - exact) / ulp;
}

struct RunResult {
  std::vector<float> outputs;
  std::vector<std::string> hazards;
  uint64_t steps = 0;
  bool ok = false;
  std::string error;
};

/// Runs `function` over `longWords` long words per PE; inputs[i] go to
/// element i of the block (PE-major: PE p holds 2 * longWords elements).
RunResult runFunction(MathFunction function,
                      const std::vector<std::vector<float>> &inputs,
                      int64_t longWords, bool inPlace = false) {
  RunResult result;
  VsmWriter writer;
  std::vector<PeBlock> sources;
  PeMemory memories[2] = {PeMemory::LM0, PeMemory::LM1};
  for (size_t i = 0; i < inputs.size(); ++i)
    sources.push_back({memories[i], 0, longWords});
  PeBlock destination{PeMemory::LM1, inPlace ? 0 : 1024, longWords};
  MathScratch scratch{{PeMemory::GRF0, 0, 256}, {PeMemory::GRF1, 0, 256}};
  if (!emitMathFunction(writer, function, sources, destination, scratch,
                        result.error))
    return result;
  result.steps = writer.steps();
  emu::Program program;
  emu::Diagnostic diagnostic;
  std::string text = writer.take();
  if (!emu::parseProgram(text, "math.vsm", program, diagnostic)) {
    result.error =
        "line " + std::to_string(diagnostic.Line) + ": " + diagnostic.Message;
    return result;
  }
  for (const emu::Hazard &hazard : emu::checkHazards(program))
    result.hazards.push_back(hazard.str("math.vsm"));
  emu::Simulator simulator;
  simulator.fillRandom(7);
  simulator.load(std::move(program));
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<uint64_t> words(size_t(kPes * longWords));
    for (size_t e = 0; e < inputs[i].size() && e < 2 * words.size(); ++e) {
      uint64_t bits = bitsOf(flush(inputs[i][e]));
      words[e / 2] |= e % 2 ? bits : bits << 32;
    }
    emu::Space space = i == 0 ? emu::Space::LM0 : emu::Space::LM1;
    if (!simulator.write({space, emu::AllInstances, 0, uint64_t(longWords)},
                         words.data(), result.error))
      return result;
  }
  if (!simulator.run(result.error))
    return result;
  std::vector<uint64_t> words(size_t(kPes * longWords));
  if (!simulator.read({emu::Space::LM1, emu::AllInstances,
                       uint64_t(destination.longWord), uint64_t(longWords)},
                      words.data(), result.error))
    return result;
  for (uint64_t word : words) {
    result.outputs.push_back(deviceValue(uint32_t(word >> 32)));
    result.outputs.push_back(deviceValue(uint32_t(word)));
  }
  result.ok = true;
  return result;
}

const float kInf = std::numeric_limits<float>::infinity();
const float kMax = std::numeric_limits<float>::max();
const float kMin = std::numeric_limits<float>::min();

/// Special values first, then `count` random ones from `draw`.
std::vector<float> makeInputs(std::vector<float> specials, size_t count,
                              std::function<float(std::mt19937 &)> draw) {
  std::mt19937 engine(42);
  std::vector<float> values = std::move(specials);
  while (values.size() < count)
    values.push_back(draw(engine));
  return values;
}

float logUniform(std::mt19937 &engine, double low, double high) {
  std::uniform_real_distribution<double> d(std::log(low), std::log(high));
  return float(std::exp(d(engine)));
}

struct Accuracy {
  double maxUlp = 0;
  size_t worst = 0;
};

Accuracy measure(const std::vector<float> &actual,
                 const std::vector<float> &inputs,
                 std::function<double(double)> exact) {
  Accuracy accuracy;
  for (size_t i = 0; i < inputs.size(); ++i) {
    double error = ulpError(actual[i], exact(double(flush(inputs[i]))));
    if (error > accuracy.maxUlp) {
      accuracy.maxUlp = error;
      accuracy.worst = i;
    }
  }
  return accuracy;
}

// 16 long words per PE: 131072 inputs a run.
constexpr int64_t kLongWords = 16;
constexpr size_t kCount = size_t(2 * kLongWords * kPes);

void expectAccurate(MathFunction function, const std::vector<float> &inputs,
                    std::function<double(double)> exact, double bound) {
  RunResult run = runFunction(function, {inputs}, kLongWords);
  ASSERT_TRUE(run.ok) << run.error;
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  Accuracy accuracy = measure(run.outputs, inputs, exact);
  EXPECT_LE(accuracy.maxUlp, bound)
      << mathFunctionName(function) << "(" << inputs[accuracy.worst]
      << ") = " << run.outputs[accuracy.worst] << ", exact "
      << exact(double(flush(inputs[accuracy.worst])));
  std::printf("%s: max error %.3f ulp (at %.9g) over %zu inputs, %llu steps "
              "for %lld long words\n",
              mathFunctionName(function), accuracy.maxUlp,
              double(inputs[accuracy.worst]), inputs.size(),
              (unsigned long long)run.steps, (long long)kLongWords);
}

TEST(MathLib, Exp) {
  std::vector<float> inputs = makeInputs(
      {0.0f,     -0.0f,     1.0f,   -1.0f,  kInf,     -kInf,  kMax,
       -kMax,    kMin,      -kMin,  88.72f, 88.7228f, 88.73f, 89.0f,
       -87.33f,  -87.34f,   -87.5f, -88.0f, -103.0f,  1e-30f, -1e-30f,
       0.34657f, -0.34657f, 100.0f, -100.0f},
      kCount, [](std::mt19937 &e) {
        return std::uniform_real_distribution<float>(-90.0f, 90.0f)(e);
      });
  expectAccurate(
      MathFunction::Exp, inputs, [](double x) { return std::exp(x); }, 1.0);
}

TEST(MathLib, Log) {
  std::vector<float> inputs = makeInputs(
      {0.0f, -0.0f, 1.0f, -1.0f, kInf, -kInf, kMax, kMin, 2.0f, 0.5f,
       0.70710677f, 0.70710683f, 1.4142135f, 1.0000001f, 0.99999994f, -5.0f},
      kCount, [](std::mt19937 &e) {
        if (e() % 2)
          return std::uniform_real_distribution<float>(0.5f, 2.0f)(e);
        return logUniform(e, 1.2e-38, 3.4e38);
      });
  // No NaN on the device: negative inputs read as zero (M2).
  expectAccurate(
      MathFunction::Log, inputs,
      [](double x) { return x <= 0 ? -double(kInf) : std::log(x); }, 1.0);
}

TEST(MathLib, Reciprocal) {
  std::vector<float> inputs =
      makeInputs({0.0f, -0.0f, 1.0f, -1.0f, kInf, -kInf, kMax, -kMax, kMin,
                  -kMin, 3.0f, 8.5e37f, 8.6e37f, 1.1755e-38f},
                 kCount, [](std::mt19937 &e) {
                   float v = logUniform(e, 1.2e-38, 3.4e38);
                   return e() % 2 ? -v : v;
                 });
  expectAccurate(
      MathFunction::Reciprocal, inputs, [](double x) { return 1.0 / x; }, 1.0);
}

TEST(MathLib, Sqrt) {
  std::vector<float> inputs = makeInputs(
      {0.0f, -0.0f, 1.0f, -1.0f, kInf, -kInf, kMax, kMin, 2.0f, 4.0f, 0.25f,
       -100.0f},
      kCount, [](std::mt19937 &e) { return logUniform(e, 1.2e-38, 3.4e38); });
  expectAccurate(
      MathFunction::Sqrt, inputs,
      [](double x) { return x <= 0 ? 0.0 : std::sqrt(x); }, 1.0);
}

TEST(MathLib, Tanh) {
  std::vector<float> inputs = makeInputs(
      {0.0f, -0.0f, 1.0f, -1.0f, kInf, -kInf, kMax, -kMax, kMin, -kMin, 1e-20f,
       -1e-20f, 9.0f, 9.5f, -10.0f, 0.55f, 0.3466f},
      kCount, [](std::mt19937 &e) {
        if (e() % 2)
          return std::uniform_real_distribution<float>(-10.0f, 10.0f)(e);
        float v = logUniform(e, 1e-30, 1.0);
        return e() % 2 ? -v : v;
      });
  expectAccurate(
      MathFunction::Tanh, inputs, [](double x) { return std::tanh(x); }, 3.0);
}

TEST(MathLib, Sigmoid) {
  std::vector<float> inputs = makeInputs(
      {0.0f, -0.0f, 1.0f, -1.0f, kInf, -kInf, kMax, -kMax, kMin, -kMin, -87.0f,
       -87.5f, -88.0f, -103.0f, 16.0f, 17.0f, 88.0f},
      kCount, [](std::mt19937 &e) {
        return std::uniform_real_distribution<float>(-100.0f, 100.0f)(e);
      });
  expectAccurate(
      MathFunction::Sigmoid, inputs,
      [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 3.0);
}

TEST(MathLib, Divide) {
  std::vector<float> a = makeInputs({}, kCount, [](std::mt19937 &e) {
    return std::uniform_real_distribution<float>(-100.0f, 100.0f)(e);
  });
  std::vector<float> b = makeInputs({}, kCount, [](std::mt19937 &e) {
    float v = logUniform(e, 1e-3, 1e3);
    return e() % 3 ? v : -v;
  });
  RunResult run = runFunction(MathFunction::Divide, {a, b}, kLongWords);
  ASSERT_TRUE(run.ok) << run.error;
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, ulpError(run.outputs[i], double(a[i]) / b[i]));
  // One rounding of the reciprocal, one of the product.
  EXPECT_LE(worst, 1.5);
}

TEST(MathLib, RunsInPlaceAndWithASmallScratch) {
  std::vector<float> inputs =
      makeInputs({}, size_t(2 * 8 * kPes), [](std::mt19937 &e) {
        return std::uniform_real_distribution<float>(-5, 5)(e);
      });
  RunResult run = runFunction(MathFunction::Sigmoid, {inputs}, 8,
                              /*inPlace=*/true);
  ASSERT_TRUE(run.ok) << run.error;
  EXPECT_TRUE(run.hazards.empty());
  Accuracy accuracy = measure(
      run.outputs, inputs, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
  EXPECT_LE(accuracy.maxUlp, 3.0);

  // Window 1 still works, only slower.
  VsmWriter fast, slow;
  std::string error;
  PeBlock source{PeMemory::LM0, 0, 64}, destination{PeMemory::LM1, 0, 64};
  int64_t minimum = mathScratchMinimum(MathFunction::Exp);
  ASSERT_TRUE(emitExp(fast, source, destination,
                      {{PeMemory::GRF0, 0, 256}, {PeMemory::GRF1, 0, 256}},
                      error))
      << error;
  ASSERT_TRUE(emitExp(
      slow, source, destination,
      {{PeMemory::GRF0, 0, minimum}, {PeMemory::GRF1, 0, minimum}}, error))
      << error;
  EXPECT_LT(fast.steps(), slow.steps());
}

TEST(MathLib, RefusesBlocksThatDoNotFit) {
  VsmWriter out;
  std::string error;
  MathScratch scratch{{PeMemory::GRF0, 0, 256}, {PeMemory::GRF1, 0, 256}};
  EXPECT_FALSE(emitExp(out, {PeMemory::LM0, 0, 6}, {PeMemory::LM1, 0, 6},
                       scratch, error));
  EXPECT_NE(error.find("multiple of 4"), std::string::npos) << error;
  EXPECT_FALSE(emitExp(out, {PeMemory::LM0, 0, 8}, {PeMemory::LM0, 4, 8},
                       scratch, error));
  EXPECT_NE(error.find("overlaps"), std::string::npos) << error;
  EXPECT_FALSE(emitExp(out, {PeMemory::GRF0, 0, 8}, {PeMemory::LM1, 0, 8},
                       scratch, error));
  EXPECT_NE(error.find("scratch"), std::string::npos) << error;
  EXPECT_FALSE(emitExp(out, {PeMemory::LM0, 0, 8}, {PeMemory::LM1, 0, 8},
                       {{PeMemory::GRF0, 0, 4}, {PeMemory::GRF1, 0, 4}},
                       error));
  EXPECT_NE(error.find("needs"), std::string::npos) << error;
  EXPECT_FALSE(emitExp(out, {PeMemory::LM0, 0, 8}, {PeMemory::LM1, 0, 8},
                       {{PeMemory::GRF0, 0, 128}, {PeMemory::GRF0, 128, 128}},
                       error));
  EXPECT_NE(error.find("two memories"), std::string::npos) << error;
}

TEST(MathLib, SameRequestSameBytes) {
  for (MathFunction f :
       {MathFunction::Exp, MathFunction::Log, MathFunction::Tanh}) {
    VsmWriter a, b;
    std::string error;
    MathScratch scratch{{PeMemory::GRF0, 0, 200}, {PeMemory::GRF1, 8, 200}};
    ASSERT_TRUE(emitMathFunction(a, f, {{PeMemory::LM0, 0, 32}},
                                 {PeMemory::LM1, 64, 32}, scratch, error));
    ASSERT_TRUE(emitMathFunction(b, f, {{PeMemory::LM0, 0, 32}},
                                 {PeMemory::LM1, 64, 32}, scratch, error));
    EXPECT_EQ(a.text(), b.text());
  }
}

} // namespace

namespace {

/// Over a long block the scheduler hides every latency: no step waits for
/// a result, so the steps per chunk are at most the operations per chunk
/// (fewer where an ALU and a MAU expression share a step; the one read
/// port per memory rarely lets them).
TEST(MathLib, LongBlocksWaitForNoResult) {
  for (MathFunction f :
       {MathFunction::Exp, MathFunction::Log, MathFunction::Reciprocal,
        MathFunction::Sqrt, MathFunction::Tanh, MathFunction::Sigmoid,
        MathFunction::Divide}) {
    MathProgram program = mathFunctionProgram(f);
    size_t alu = 0, mau = 0;
    for (const MathProgram::Operation &op : program.operations())
      (op.unit == MathProgram::Unit::Mau ? mau : alu)++;
    VsmWriter out;
    std::string error;
    std::vector<PeBlock> sources = {{PeMemory::LM0, 0, 1024}};
    if (f == MathFunction::Divide)
      sources.push_back({PeMemory::LM1, 0, 1024});
    ASSERT_TRUE(emitMathFunction(
        out, f, sources, {PeMemory::LM1, 0, 1024},
        {{PeMemory::GRF0, 0, 256}, {PeMemory::GRF1, 0, 256}}, error))
        << error;
    double perChunk = double(out.steps()) / 256;
    std::printf("%s: %zu ALU + %zu MAU operations a chunk, %.2f steps a "
                "chunk over 1024 long words\n",
                mathFunctionName(f), alu, mau, perChunk);
    EXPECT_LE(perChunk, double(alu + mau) + 0.25) << mathFunctionName(f);
  }
}

} // namespace
