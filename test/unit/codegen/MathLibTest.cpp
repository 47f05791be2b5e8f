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

/// A device double as the host reads it (decision 2, as deviceValue).
double deviceDouble(uint64_t bits) {
  uint64_t exponent = bits >> 52 & 0x7ff;
  double value;
  if (exponent == 0)
    bits &= uint64_t(1) << 63;
  else if (exponent == 0x7ff)
    bits = (bits & uint64_t(1) << 63) | uint64_t(0x7ff) << 52;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

/// The device's double of a host double: subnormals are zeros.
double flushDouble(long double value) {
  double rounded = double(value);
  if (std::fabs(rounded) < std::numeric_limits<double>::min())
    return std::signbit(rounded) ? -0.0 : 0.0;
  return rounded;
}

/// |actual - exact| in units in the last place of the double nearest the
/// exact value (as ulpError).
double ulpErrorDouble(double actual, long double exact) {
  double expected = flushDouble(exact);
  if (std::isinf(expected) || std::isinf(actual))
    return expected == actual ? 0 : 1e30;
  if (expected == 0)
    return actual == 0 ? 0 : 1e30;
  int exponent;
  std::frexp(expected, &exponent);
  long double ulp = std::ldexp(1.0L, std::max(exponent - 53, -1074));
  return double(std::fabs((long double)actual - exact) / ulp);
}

template <typename T> struct RunResult {
  std::vector<T> outputs;
  std::vector<std::string> hazards;
  uint64_t steps = 0;
  bool ok = false;
  std::string error;
};

/// Runs `function` over `longWords` long words per PE of singles (T float)
/// or doubles (T double); inputs[i] go to element i of the block
/// (PE-major: PE p holds longWords long words of elements).
template <typename T>
RunResult<T> runFunction(MathFunction function,
                         const std::vector<std::vector<T>> &inputs,
                         int64_t longWords, bool inPlace = false) {
  constexpr bool wide = sizeof(T) == 8;
  constexpr size_t perLongWord = wide ? 1 : 2;
  DeviceType type = wide ? DeviceType::Double : DeviceType::Single;
  RunResult<T> result;
  VsmWriter writer;
  std::vector<PeBlock> sources;
  PeMemory memories[2] = {PeMemory::LM0, PeMemory::LM1};
  for (size_t i = 0; i < inputs.size(); ++i)
    sources.push_back({memories[i], 0, longWords});
  PeBlock destination{PeMemory::LM1, inPlace ? 0 : 1024, longWords};
  MathScratch scratch{{PeMemory::GRF0, 0, 256}, {PeMemory::GRF1, 0, 256}};
  if (!emitMathFunction(writer, function, sources, destination, scratch,
                        result.error, type))
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
    for (size_t e = 0; e < inputs[i].size() && e < perLongWord * words.size();
         ++e) {
      if constexpr (wide) {
        double value = flushDouble(inputs[i][e]);
        std::memcpy(&words[e], &value, sizeof value);
      } else {
        uint64_t bits = bitsOf(flush(inputs[i][e]));
        words[e / 2] |= e % 2 ? bits : bits << 32;
      }
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
    if constexpr (wide) {
      result.outputs.push_back(deviceDouble(word));
    } else {
      result.outputs.push_back(deviceValue(uint32_t(word >> 32)));
      result.outputs.push_back(deviceValue(uint32_t(word)));
    }
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
  RunResult<float> run = runFunction<float>(function, {inputs}, kLongWords);
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
  RunResult<float> run =
      runFunction<float>(MathFunction::Divide, {a, b}, kLongWords);
  ASSERT_TRUE(run.ok) << run.error;
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, ulpError(run.outputs[i], double(a[i]) / b[i]));
  // One rounding of the reciprocal, one of the product.
  EXPECT_LE(worst, 1.5);
}

TEST(MathLib, Erf) {
  std::vector<float> inputs = makeInputs(
      {0.0f, -0.0f, 1.0f, -1.0f, kInf, -kInf, kMax, -kMax, kMin, -kMin, 1e-20f,
       -1e-20f, 3.9f, 4.0f, -4.5f, 0.5f, 0.47f, 2.0f},
      kCount, [](std::mt19937 &e) {
        if (e() % 2)
          return std::uniform_real_distribution<float>(-5.0f, 5.0f)(e);
        float v = logUniform(e, 1e-30, 1.0);
        return e() % 2 ? -v : v;
      });
  expectAccurate(
      MathFunction::Erf, inputs, [](double x) { return std::erf(x); }, 3.0);
}

TEST(MathLib, Softplus) {
  std::vector<float> inputs = makeInputs(
      {0.0f, -0.0f, 1.0f, -1.0f, kInf, -kInf, kMax, -kMax, kMin, -kMin, 1e-20f,
       -1e-20f, 16.0f, 17.0f, -16.0f, -17.0f, 87.0f, -87.0f, -88.0f, -100.0f,
       0.3466f, -0.3466f},
      kCount, [](std::mt19937 &e) {
        float range = e() % 2 ? 8.0f : 100.0f;
        return std::uniform_real_distribution<float>(-range, range)(e);
      });
  expectAccurate(
      MathFunction::Softplus, inputs,
      [](double x) {
        return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
      },
      2.5);
}

TEST(MathLib, RunsInPlaceAndWithASmallScratch) {
  std::vector<float> inputs =
      makeInputs({}, size_t(2 * 8 * kPes), [](std::mt19937 &e) {
        return std::uniform_real_distribution<float>(-5, 5)(e);
      });
  RunResult<float> run = runFunction<float>(MathFunction::Sigmoid, {inputs}, 8,
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
/// a result, so the steps per chunk are at most the operations' steps per
/// chunk (a double product takes two, its pair; fewer where an ALU and a
/// MAU expression share a step; the one read port per memory rarely lets
/// them), plus the start (`slack`: a double constant takes two imm steps).
void expectNoWaits(DeviceType type, double slack) {
  std::vector<MathFunction> functions = {
      MathFunction::Exp,  MathFunction::Log,     MathFunction::Reciprocal,
      MathFunction::Sqrt, MathFunction::Tanh,    MathFunction::Sigmoid,
      MathFunction::Divide};
  // Erf is single only (docs/codegen.md M9).
  if (type == DeviceType::Single) {
    functions.push_back(MathFunction::Erf);
    functions.push_back(MathFunction::Softplus);
  }
  for (MathFunction f : functions) {
    MathProgram program = mathFunctionProgram(f, type);
    size_t alu = 0, mau = 0;
    for (const MathProgram::Operation &op : program.operations())
      if (op.unit == MathProgram::Unit::Alu)
        ++alu;
      else
        mau += isPairedProduct(op.opcode) ? 2 : 1;
    VsmWriter out;
    std::string error;
    std::vector<PeBlock> sources = {{PeMemory::LM0, 0, 1024}};
    if (f == MathFunction::Divide)
      sources.push_back({PeMemory::LM1, 0, 1024});
    ASSERT_TRUE(emitMathFunction(
        out, f, sources, {PeMemory::LM1, 0, 1024},
        {{PeMemory::GRF0, 0, 256}, {PeMemory::GRF1, 0, 256}}, error, type))
        << error;
    double perChunk = double(out.steps()) / 256;
    std::printf("%s in %s: %zu ALU + %zu MAU steps a chunk, %.2f steps a "
                "chunk over 1024 long words\n",
                mathFunctionName(f), std::string(deviceTypeName(type)).c_str(),
                alu, mau, perChunk);
    EXPECT_LE(perChunk, double(alu + mau) + slack) << mathFunctionName(f);
  }
}

TEST(MathLib, LongBlocksWaitForNoResult) {
  expectNoWaits(DeviceType::Single, 0.25);
}

} // namespace

namespace {

// Doubles (float_dtype=double): one a long word, 65536 inputs a run,
// against the exact value in long double (x87: 64-bit significands, 11
// bits past double) rounded to double, subnormals flushed. The bounds
// are the ones docs/codegen.md (M8) documents.
constexpr size_t kDoubleCount = size_t(kLongWords * kPes);
const double kDInf = std::numeric_limits<double>::infinity();
const double kDMax = std::numeric_limits<double>::max();
const double kDMin = std::numeric_limits<double>::min();

std::vector<double>
makeDoubleInputs(std::vector<double> specials,
                 std::function<double(std::mt19937_64 &)> draw,
                 size_t count = kDoubleCount) {
  std::mt19937_64 engine(42);
  std::vector<double> values = std::move(specials);
  while (values.size() < count)
    values.push_back(draw(engine));
  return values;
}

double logUniformDouble(std::mt19937_64 &engine, double low, double high) {
  std::uniform_real_distribution<double> d(std::log(low), std::log(high));
  double v = std::exp(d(engine));
  // Every bit of the significand random.
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  bits ^= engine() & ((uint64_t(1) << 30) - 1);
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

double uniformDouble(std::mt19937_64 &engine, double low, double high) {
  return std::uniform_real_distribution<double>(low, high)(engine);
}

struct DoubleAccuracy {
  double maxUlp = 0;
  size_t worst = 0;
};

DoubleAccuracy
expectAccurateDouble(MathFunction function,
                     const std::vector<std::vector<double>> &inputs,
                     std::function<long double(long double, long double)> exact,
                     double bound) {
  RunResult<double> run = runFunction<double>(function, inputs, kLongWords);
  DoubleAccuracy accuracy;
  EXPECT_TRUE(run.ok) << run.error;
  if (!run.ok)
    return accuracy;
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  const std::vector<double> &a = inputs[0];
  for (size_t i = 0; i < a.size(); ++i) {
    long double x = flushDouble(a[i]);
    long double y = inputs.size() > 1 ? flushDouble(inputs[1][i]) : 0;
    double error = ulpErrorDouble(run.outputs[i], exact(x, y));
    if (error > accuracy.maxUlp) {
      accuracy.maxUlp = error;
      accuracy.worst = i;
    }
  }
  size_t w = accuracy.worst;
  EXPECT_LE(accuracy.maxUlp, bound)
      << mathFunctionName(function) << "(" << std::hexfloat << a[w]
      << (inputs.size() > 1 ? ", " + std::to_string(inputs[1][w]) : "")
      << ") = " << run.outputs[w] << ", exact "
      << double(exact(flushDouble(a[w]),
                      inputs.size() > 1 ? flushDouble(inputs[1][w]) : 0));
  std::printf("%s in double: max error %.3f ulp (at %a) over %zu inputs, "
              "%llu steps for %lld long words\n",
              mathFunctionName(function), accuracy.maxUlp, a[w], a.size(),
              (unsigned long long)run.steps, (long long)kLongWords);
  return accuracy;
}

TEST(MathLibDouble, Exp) {
  std::vector<double> inputs = makeDoubleInputs(
      {0.0, -0.0, 1.0, -1.0, kDInf, -kDInf, kDMax, -kDMax, kDMin, -kDMin,
       709.78, 709.782712893384, 709.7827128933841, 709.79, 710.0, 711.0,
       -708.39, -708.396418532264, -708.4, -708.5, -708.7, -745.2, -800.0,
       1e-300, -1e-300, 0x1.62e42fefa39efp-2, -0x1.62e42fefa39efp-2, 1e-17},
      [](std::mt19937_64 &e) { return uniformDouble(e, -720, 720); });
  expectAccurateDouble(
      MathFunction::Exp, {inputs},
      [](long double x, long double) { return std::exp(x); }, 1.0);
}

TEST(MathLibDouble, Log) {
  std::vector<double> inputs = makeDoubleInputs(
      {0.0, -0.0, 1.0, -1.0, kDInf, -kDInf, kDMax, kDMin, 2.0, 0.5,
       0x1.6a09e667f3bccp-1, 0x1.6a09e667f3bcdp-1, 0x1.6a09e667f3bcdp+0,
       0x1.0000000000001p+0, 0x1.fffffffffffffp-1, -5.0},
      [](std::mt19937_64 &e) {
        if (e() % 2)
          return uniformDouble(e, 0.5, 2.0);
        return logUniformDouble(e, 2.3e-308, 1.7e308);
      });
  // No NaN on the device: negative inputs read as zero (M2).
  expectAccurateDouble(
      MathFunction::Log, {inputs},
      [](long double x, long double) {
        return x <= 0 ? -(long double)kDInf : std::log(x);
      },
      1.0);
}

TEST(MathLibDouble, Reciprocal) {
  std::vector<double> inputs = makeDoubleInputs(
      {0.0, -0.0, 1.0, -1.0, kDInf, -kDInf, kDMax, -kDMax, kDMin, -kDMin, 3.0,
       0x1p1021, 0x1.fffffffffffffp1021, 0x1p1022},
      [](std::mt19937_64 &e) {
        double v = logUniformDouble(e, 2.3e-308, 1.7e308);
        return e() % 2 ? -v : v;
      });
  expectAccurateDouble(
      MathFunction::Reciprocal, {inputs},
      [](long double x, long double) { return 1.0L / x; }, 1.0);
}

TEST(MathLibDouble, Sqrt) {
  std::vector<double> inputs = makeDoubleInputs(
      {0.0, -0.0, 1.0, -1.0, kDInf, -kDInf, kDMax, kDMin, 2.0, 4.0, 0.25,
       -100.0},
      [](std::mt19937_64 &e) { return logUniformDouble(e, 2.3e-308, 1.7e308); });
  expectAccurateDouble(
      MathFunction::Sqrt, {inputs},
      [](long double x, long double) {
        return x <= 0 ? 0.0L : std::sqrt(x);
      },
      1.0);
}

TEST(MathLibDouble, Tanh) {
  std::vector<double> inputs = makeDoubleInputs(
      {0.0, -0.0, 1.0, -1.0, kDInf, -kDInf, kDMax, -kDMax, kDMin, -kDMin,
       1e-300, -1e-300, 19.0, 19.1, 20.0, -25.0, 0.55, 0.3466},
      [](std::mt19937_64 &e) {
        if (e() % 2)
          return uniformDouble(e, -22, 22);
        double v = logUniformDouble(e, 1e-300, 1.0);
        return e() % 2 ? -v : v;
      });
  expectAccurateDouble(
      MathFunction::Tanh, {inputs},
      [](long double x, long double) { return std::tanh(x); }, 2.5);
}

TEST(MathLibDouble, Sigmoid) {
  std::vector<double> inputs = makeDoubleInputs(
      {0.0, -0.0, 1.0, -1.0, kDInf, -kDInf, kDMax, -kDMax, kDMin, -kDMin,
       -708.0, -708.39, -708.4, -708.5, -800.0, 36.0, 38.0, 709.0},
      [](std::mt19937_64 &e) { return uniformDouble(e, -720, 720); });
  expectAccurateDouble(
      MathFunction::Sigmoid, {inputs},
      [](long double x, long double) { return 1.0L / (1.0L + std::exp(-x)); },
      2.0);
}

TEST(MathLibDouble, Divide) {
  std::vector<double> a = makeDoubleInputs(
      {0.0, 1.0, -1.0, kDInf, 1e300, -1e300, 3.0},
      [](std::mt19937_64 &e) { return uniformDouble(e, -100, 100); });
  std::vector<double> b = makeDoubleInputs(
      {1.0, 0.0, 3.0, 2.0, 1e-10, 1e-10, -7.0}, [](std::mt19937_64 &e) {
        double v = logUniformDouble(e, 1e-3, 1e3);
        return e() % 3 ? v : -v;
      });
  expectAccurateDouble(
      MathFunction::Divide, {a, b},
      [](long double x, long double y) { return x / y; }, 1.0);
}

TEST(MathLibDouble, LongBlocksWaitForNoResult) {
  expectNoWaits(DeviceType::Double, 0.5);
}

} // namespace
