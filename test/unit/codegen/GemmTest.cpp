//===- GemmTest.cpp - Gemm and MatMul kernels on the emulator -------------===//
//
// Every case runs the kernel on memory filled with random bytes, expects no
// hazard, and compares with pfvm:cpu on the same inputs. The inputs are
// first rounded to the device format, so the tolerance measures the
// matrix unit, not the conversion (docs/codegen.md X3):
//   half:   A and B become block floats of 9 significant bits per block of
//           16 (2^-9 of the block's largest element), the products are
//           exact and summed exactly, the result is rounded to half
//           (2^-10): |error| <= 2^-8 sqrt(K) max|a| max|b| + 2^-9 |C|;
//   single: pseudo-single block floats keep 18 bits (truncated):
//           2^-16 sqrt(K) max|a| max|b| + 2^-20 |C|;
//   double: block floats of the full 53 bits: 2^-50 K + 2^-52 |C|.
// The inputs are uniform in [-1, 1).
//
//===----------------------------------------------------------------------===//

#include "KernelHarness.h"

#include "mncc/reference/SimpleContext.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::testing;

namespace {

reference::Attribute intAttr(int64_t v) {
  reference::Attribute a;
  a.kind = reference::Attribute::Kind::Int;
  a.i = v;
  return a;
}

reference::Attribute floatAttr(float v) {
  reference::Attribute a;
  a.kind = reference::Attribute::Kind::Float;
  a.f = v;
  return a;
}

struct GemmCase {
  const char *name;
  const char *opType;
  std::vector<std::vector<int64_t>> inputs;
  std::vector<int64_t> output;
  DeviceType type;
  bool transA = false, transB = false;
  float alpha = 1, beta = 1;
  /// Inputs that are initializers (B by default).
  std::vector<bool> constant = {false, true, false};
  /// The result's format when it differs from the operands'.
  std::optional<DeviceType> outType;
};

/// The host type the device format reads back into without loss.
reference::DType hostTypeOf(DeviceType type) {
  return type == DeviceType::Double ? reference::DType::Float64
                                    : reference::DType::Float32;
}

/// A float tensor rounded to what the device holds (as its host type).
reference::Tensor deviceRounded(const reference::Tensor &t, DeviceType type) {
  reference::DType host = hostTypeOf(type);
  reference::Tensor out(host, t.shape());
  std::vector<uint64_t> bits(size_t(t.numElements()));
  hostToDevice(t.dtype(), t.raw(), type, bits.data(), t.numElements());
  deviceToHost(type, bits.data(), host, out.raw(), t.numElements());
  return out;
}

reference::Tensor referenceOf(const GemmCase &c,
                              const std::vector<reference::Tensor> &in) {
  std::vector<reference::Value> values;
  for (const reference::Tensor &t : in)
    values.push_back(reference::Value(t));
  reference::SimpleKernelContext context(c.opType, values, 1);
  if (std::string(c.opType) == "Gemm") {
    context.setInt("transA", c.transA);
    context.setInt("transB", c.transB);
    context.setFloat("alpha", c.alpha);
    context.setFloat("beta", c.beta);
  }
  reference::Status status = context.run();
  EXPECT_TRUE(status.ok()) << status.message();
  return context.outputTensor(0);
}

/// The tolerance of the header comment for a product over K terms.
void toleranceOf(DeviceType type, int64_t k, double &atol, double &rtol) {
  double rootK = std::sqrt(double(std::max<int64_t>(k, 1)));
  switch (type) {
  case DeviceType::Half:
    atol = std::ldexp(1.0, -8) * rootK;
    rtol = std::ldexp(1.0, -9);
    return;
  case DeviceType::Single:
    atol = std::ldexp(1.0, -16) * rootK;
    rtol = std::ldexp(1.0, -20);
    return;
  default:
    atol = std::ldexp(1.0, -50) * double(k);
    rtol = std::ldexp(1.0, -52);
    return;
  }
}

KernelRequest requestOf(const GemmCase &c,
                        const std::vector<reference::Tensor> &inputs) {
  std::vector<bool> constant = c.constant;
  constant.resize(inputs.size(), false);
  KernelRequest request =
      makeRequest(c.opType, inputs, {c.output}, c.type, constant);
  if (c.outType)
    request.outputs[0].form =
        DramForm::canonical(*c.outType, request.outputs[0].form.shape);
  if (std::string(c.opType) == "Gemm") {
    request.attributes["transA"] = intAttr(c.transA);
    request.attributes["transB"] = intAttr(c.transB);
    request.attributes["alpha"] = floatAttr(c.alpha);
    request.attributes["beta"] = floatAttr(c.beta);
  }
  return request;
}

/// Runs a case; returns the comparison and fills `run`.
Comparison runCase(const GemmCase &c, KernelRun &run, std::string &error,
                   bool &ran) {
  std::vector<reference::Tensor> inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    inputs.push_back(
        deviceRounded(randomTensor(c.inputs[i], 11 + i), c.type));
  KernelRequest request = requestOf(c, inputs);
  DeviceType outType = c.outType ? *c.outType : c.type;
  ran = runKernel(request, inputs, hostTypeOf(outType), run, error);
  if (!ran)
    return {};
  reference::Tensor expected = referenceOf(c, inputs);
  int64_t k = std::string(c.opType) == "Gemm"
                  ? c.inputs[0][c.transA ? 0 : 1]
                  : c.inputs[0].back();
  double atol, rtol;
  toleranceOf(c.type, k, atol, rtol);
  atol *= std::max(1.0, double(std::fabs(c.alpha)));
  if (outType == DeviceType::Single && c.type == DeviceType::Half)
    rtol = std::ldexp(1.0, -20); // no rounding to half at the end
  Comparison cmp = compareTensors(run.outputs[0], expected, atol, rtol);
  if (std::getenv("GEMM_DEBUG"))
    std::printf("%s: max abs %g (atol %g), max rel %g, %llu cycles, %s\n",
                c.name, cmp.maxAbs, atol, cmp.maxRel,
                (unsigned long long)run.stats.Cycles,
                run.description.variant.c_str());
  if (std::getenv("GEMM_PROGRAM"))
    std::printf("%s\n", run.program.c_str());
  return cmp;
}

class GemmKernel : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GemmKernel, MatchesTheReferenceOnRandomMemory) {
  const GemmCase &c = GetParam();
  KernelRun run;
  std::string error;
  bool ran = false;
  Comparison cmp = runCase(c, run, error, ran);
  ASSERT_TRUE(ran) << error;
  EXPECT_EQ(run.description.generator, "gemm");
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  EXPECT_TRUE(cmp.within) << cmp.firstMismatch << " (max abs " << cmp.maxAbs
                          << ") " << run.description.variant;
}

constexpr DeviceType H = DeviceType::Half;
constexpr DeviceType S = DeviceType::Single;
constexpr DeviceType D = DeviceType::Double;

GemmCase gemm(const char *name, std::vector<std::vector<int64_t>> in,
              std::vector<int64_t> out, DeviceType type, bool transB = false,
              float alpha = 1, float beta = 1) {
  GemmCase c{name, "Gemm", std::move(in), std::move(out), type};
  c.transB = transB;
  c.alpha = alpha;
  c.beta = beta;
  return c;
}

GemmCase matmul(const char *name, std::vector<std::vector<int64_t>> in,
                std::vector<int64_t> out, DeviceType type) {
  return GemmCase{name, "MatMul", std::move(in), std::move(out), type};
}

// The shapes and attributes of the ONNX node tests test_gemm_* and
// test_matmul_* (B an initializer here), in each precision.
INSTANTIATE_TEST_SUITE_P(
    OnnxNodeTests, GemmKernel,
    ::testing::Values(
        gemm("alpha_half", {{3, 5}, {5, 4}, {1, 4}}, {3, 4}, H, false, 0.5f),
        gemm("alpha_single", {{3, 5}, {5, 4}, {1, 4}}, {3, 4}, S, false, 0.5f),
        gemm("beta_half", {{2, 7}, {7, 4}, {1, 4}}, {2, 4}, H, false, 1, 0.5f),
        gemm("beta_double", {{2, 7}, {7, 4}, {1, 4}}, {2, 4}, D, false, 1,
             0.5f),
        gemm("matrix_bias_half", {{3, 6}, {6, 4}, {3, 4}}, {3, 4}, H),
        gemm("matrix_bias_single", {{3, 6}, {6, 4}, {3, 4}}, {3, 4}, S),
        gemm("no_bias_double", {{2, 10}, {10, 3}}, {2, 3}, D),
        gemm("no_bias_half", {{2, 10}, {10, 3}}, {2, 3}, H),
        gemm("scalar_bias_half", {{2, 3}, {3, 4}, {}}, {2, 4}, H),
        gemm("scalar_bias_single", {{2, 3}, {3, 4}, {}}, {2, 4}, S),
        gemm("single_elem_bias_half", {{3, 7}, {7, 3}, {1}}, {3, 3}, H),
        gemm("single_elem_bias_double", {{3, 7}, {7, 3}, {1}}, {3, 3}, D),
        gemm("vector_bias_half", {{2, 7}, {7, 4}, {1, 4}}, {2, 4}, H),
        gemm("vector_bias_single", {{2, 7}, {7, 4}, {1, 4}}, {2, 4}, S),
        gemm("zero_bias_half", {{3, 5}, {5, 4}, {1, 4}}, {3, 4}, H),
        gemm("transposeB_half", {{3, 6}, {4, 6}, {1, 4}}, {3, 4}, H, true),
        gemm("transposeB_double", {{3, 6}, {4, 6}, {1, 4}}, {3, 4}, D, true),
        matmul("matmul_2d_half", {{3, 4}, {4, 3}}, {3, 3}, H),
        matmul("matmul_2d_single", {{3, 4}, {4, 3}}, {3, 3}, S),
        matmul("matmul_2d_double", {{3, 4}, {4, 3}}, {3, 3}, D),
        matmul("matmul_3d_half", {{2, 3, 4}, {2, 4, 3}}, {2, 3, 3}, H),
        matmul("matmul_4d_single", {{1, 2, 3, 4}, {1, 2, 4, 3}}, {1, 2, 3, 3},
               S)),
    [](const ::testing::TestParamInfo<GemmCase> &info) {
      return std::string(info.param.name);
    });

GemmCase mixed(const char *name, std::vector<std::vector<int64_t>> in,
               std::vector<int64_t> out) {
  GemmCase c = gemm(name, std::move(in), std::move(out), H);
  c.outType = S;
  return c;
}

// The MLP layers of the benchmark, odd sizes (K = 1, N = 1, non-multiples of
// a quad), sizes that take all four groups, several chunks or K phases,
// irregular N (rows over MABs) and half products with single results.
INSTANTIATE_TEST_SUITE_P(
    Shapes, GemmKernel,
    ::testing::Values(
        gemm("mlp_16x784x512_half", {{16, 784}, {784, 512}, {512}}, {16, 512},
             H),
        gemm("mlp_1x784x512_half", {{1, 784}, {784, 512}, {512}}, {1, 512}, H),
        gemm("mlp_16x512x10_half", {{16, 512}, {512, 10}, {10}}, {16, 10}, H),
        gemm("mlp_16x784x512_single", {{16, 784}, {784, 512}, {512}},
             {16, 512}, S),
        gemm("k1_half", {{5, 1}, {1, 7}}, {5, 7}, H),
        gemm("n1_single", {{6, 9}, {9, 1}}, {6, 1}, S),
        gemm("odd_half", {{37, 45}, {45, 29}, {29}}, {37, 29}, H),
        gemm("odd_double", {{37, 45}, {45, 29}}, {37, 29}, D),
        gemm("column_bias_half", {{5, 8}, {8, 6}, {5, 1}}, {5, 6}, H),
        gemm("column_bias_single", {{5, 8}, {8, 6}, {5, 1}}, {5, 6}, S),
        gemm("irregular_n_half", {{20, 40}, {40, 84}, {84}}, {20, 84}, H),
        gemm("irregular_n_single", {{20, 40}, {40, 84}}, {20, 84}, S),
        gemm("groups_half", {{300, 64}, {64, 48}, {48}}, {300, 48}, H),
        gemm("groups_single", {{300, 64}, {64, 40}}, {300, 40}, S),
        gemm("wide_half", {{64, 96}, {96, 600}}, {64, 600}, H),
        gemm("deep_single", {{24, 3000}, {3000, 256}}, {24, 256}, S),
        mixed("mixed_half_single", {{5, 20}, {20, 33}}, {5, 33}),
        mixed("mixed_bias", {{12, 40}, {40, 64}, {64}}, {12, 64}),
        matmul("batched_shared_b", {{3, 20, 16}, {16, 24}}, {3, 20, 24}, H),
        matmul("batched_broadcast", {{2, 1, 5, 8}, {1, 3, 8, 6}},
               {2, 3, 5, 6}, S),
        matmul("batched_aligned", {{2, 16, 32}, {2, 32, 16}}, {2, 16, 16}, H),
        matmul("vector_a", {{48}, {48, 20}}, {20}, H),
        // The streaming plan (rows of A through LM0, B resident).
        gemm("stream_half", {{384, 256}, {256, 2048}}, {384, 2048}, H),
        gemm("stream_bias_half", {{400, 512}, {512, 2048}, {2048}},
             {400, 2048}, H, false, 0.5f, 0.75f)),
    [](const ::testing::TestParamInfo<GemmCase> &info) {
      return std::string(info.param.name);
    });

/// The same case with B (and every input) read at run time.
GemmCase runtime(GemmCase c) {
  c.constant = {false, false, false};
  return c;
}

// Small N and a long K where A's image of every K-chunk does not fit LM0
// (16 rows x 128 double K-chunks > 2040 slots): K in more phases than LM1
// needs (mnist_mlp's fc3 under float_dtype double).
INSTANTIATE_TEST_SUITE_P(
    Phases, GemmKernel,
    ::testing::Values(
        gemm("fc3_16x512x10_double", {{16, 512}, {512, 10}, {10}}, {16, 10},
             D),
        gemm("fc3_1x512x10_double", {{1, 512}, {512, 10}, {10}}, {1, 10}, D),
        gemm("deep_16x3000x10_double", {{16, 3000}, {3000, 10}, {10}},
             {16, 10}, D),
        gemm("deep_48x2048x24_double", {{48, 2048}, {2048, 24}}, {48, 24}, D),
        gemm("deep_40x4096x20_single", {{40, 4096}, {4096, 20}, {20}},
             {40, 20}, S),
        gemm("deep_64x2048x40_half", {{64, 2048}, {2048, 40}, {40}}, {64, 40},
             H),
        runtime(gemm("fc3_runtime_16x512x10_double",
                     {{16, 512}, {512, 10}, {10}}, {16, 10}, D))),
    [](const ::testing::TestParamInfo<GemmCase> &info) {
      return std::string(info.param.name);
    });

// The classifiers of ResNet-18 / -50 and MobileNetV2 (N 1000: C's row is
// 63 quads, neither whole units nor a divisor of one), weights and bias
// initializers as in the models: at batch 1 the split plan's stripes with
// a partial last one; at batch 16, or with a bias read at run time, the
// padded grid, its rows compacted in the L1BM's transit buffers.
GemmCase constantBias(GemmCase c) {
  c.constant = {false, true, true};
  return c;
}

INSTANTIATE_TEST_SUITE_P(
    Classifiers, GemmKernel,
    ::testing::Values(
        constantBias(gemm("fc_1x512x1000_half",
                          {{1, 512}, {1000, 512}, {1000}}, {1, 1000}, H,
                          true)),
        constantBias(gemm("fc_1x1280x1000_half",
                          {{1, 1280}, {1000, 1280}, {1000}}, {1, 1000}, H,
                          true)),
        constantBias(gemm("fc_1x2048x1000_half",
                          {{1, 2048}, {1000, 2048}, {1000}}, {1, 1000}, H,
                          true)),
        constantBias(gemm("fc_1x512x1000_single",
                          {{1, 512}, {1000, 512}, {1000}}, {1, 1000}, S,
                          true)),
        constantBias(gemm("fc_16x512x1000_half",
                          {{16, 512}, {1000, 512}, {1000}}, {16, 1000}, H,
                          true)),
        constantBias(gemm("fc_16x2048x1000_half",
                          {{16, 2048}, {1000, 2048}, {1000}}, {16, 1000}, H,
                          true)),
        gemm("fc_runtime_bias_1x512x1000_half",
             {{1, 512}, {1000, 512}, {1000}}, {1, 1000}, H, true)),
    [](const ::testing::TestParamInfo<GemmCase> &info) {
      return std::string(info.param.name);
    });

GemmCase transposed(GemmCase c) {
  c.transB = true;
  return c;
}

GemmCase transposedA(GemmCase c) {
  c.transA = true;
  return c;
}

// Few rows and a long K: the split plan (K over the MABs of an L1B, C's
// units over L2Bs as stripes of 16 N-tiles or blocks of rows).
INSTANTIATE_TEST_SUITE_P(
    Split, GemmKernel,
    ::testing::Values(
        gemm("split_matrix_bias_half", {{16, 512}, {512, 256}, {16, 256}},
             {16, 256}, H, false, 0.5f, 0.25f),
        gemm("split_row_bias_single", {{9, 300}, {300, 128}, {128}}, {9, 128},
             S),
        gemm("split_n32_half", {{13, 600}, {600, 32}, {32}}, {13, 32}, H),
        gemm("split_n64_half", {{7, 256}, {256, 64}}, {7, 64}, H),
        gemm("split_n128_half", {{32, 256}, {256, 128}, {128}}, {32, 128}, H),
        gemm("split_n5_single", {{3, 200}, {200, 5}}, {3, 5}, S),
        gemm("split_n1024_half", {{4, 400}, {400, 1024}, {1024}}, {4, 1024},
             H),
        gemm("split_n4096_half", {{2, 256}, {256, 4096}}, {2, 4096}, H),
        transposed(gemm("split_transB_half", {{16, 784}, {512, 784}, {512}},
                        {16, 512}, H))),
    [](const ::testing::TestParamInfo<GemmCase> &info) {
      return std::string(info.param.name);
    });

// B an input of the graph, as in the ONNX node tests themselves: tiles
// built on the device from B's rows (transB) or transposed through a
// matrix register (K x N), alpha applied there.
INSTANTIATE_TEST_SUITE_P(
    RuntimeB, GemmKernel,
    ::testing::Values(
        runtime(gemm("alpha_half", {{3, 5}, {5, 4}, {1, 4}}, {3, 4}, H, false,
                     0.5f)),
        runtime(gemm("all_attributes_single", {{3, 5}, {4, 5}, {1, 4}}, {3, 4},
                     S, true, 0.25f, 0.35f)),
        runtime(gemm("beta_double", {{2, 7}, {7, 4}, {1, 4}}, {2, 4}, D, false,
                     1, 0.5f)),
        runtime(gemm("matrix_bias_single", {{3, 6}, {6, 4}, {3, 4}}, {3, 4},
                     S)),
        runtime(gemm("no_bias_double", {{2, 10}, {10, 3}}, {2, 3}, D)),
        runtime(gemm("transposeB_half", {{3, 6}, {4, 6}, {1, 4}}, {3, 4}, H,
                     true)),
        runtime(gemm("transposeB_double", {{3, 6}, {4, 6}, {1, 4}}, {3, 4}, D,
                     true, 2.0f)),
        runtime(matmul("matmul_2d_single", {{3, 4}, {4, 3}}, {3, 3}, S)),
        runtime(matmul("matmul_3d_half", {{2, 3, 4}, {2, 4, 3}}, {2, 3, 3},
                       H)),
        runtime(matmul("matmul_4d_double", {{1, 2, 3, 4}, {1, 2, 4, 3}},
                       {1, 2, 3, 3}, D)),
        runtime(gemm("odd_half", {{37, 45}, {45, 29}, {29}}, {37, 29}, H)),
        runtime(transposed(
            gemm("odd_nk_single", {{37, 45}, {29, 45}, {29}}, {37, 29}, S))),
        runtime(gemm("mlp_16x784x512_half", {{16, 784}, {784, 512}, {512}},
                     {16, 512}, H)),
        runtime(gemm("groups_single", {{300, 64}, {64, 40}}, {300, 40}, S)),
        runtime(gemm("wide_half", {{64, 96}, {96, 600}}, {64, 600}, H, false,
                     1.5f)),
        runtime(gemm("deep_half", {{24, 3000}, {3000, 256}}, {24, 256}, H)),
        runtime(mixed("mixed_half_single", {{5, 20}, {20, 33}}, {5, 33})),
        runtime(transposed(
            mixed("mixed_nk", {{12, 40}, {64, 40}, {64}}, {12, 64}))),
        runtime(matmul("batched_broadcast", {{2, 1, 5, 8}, {1, 3, 8, 6}},
                       {2, 3, 5, 6}, H)),
        runtime(matmul("batched_aligned", {{2, 16, 32}, {2, 32, 16}},
                       {2, 16, 16}, S)),
        runtime(gemm("large_half", {{512, 512}, {512, 512}}, {512, 512}, H)),
        // transA: blocks of A transposed in LM0 through a matrix register.
        runtime(transposedA(
            gemm("transposeA_half", {{6, 3}, {6, 4}, {1, 4}}, {3, 4}, H))),
        runtime(transposedA(gemm("all_attributes_half",
                                 {{4, 3}, {5, 4}, {1, 5}}, {3, 5}, H, true,
                                 0.25f, 0.35f))),
        runtime(transposedA(
            gemm("transposeA_double", {{6, 3}, {6, 4}, {1, 4}}, {3, 4}, D))),
        transposedA(gemm("transposeA_odd_single", {{45, 37}, {45, 29}, {29}},
                         {37, 29}, S)),
        transposedA(gemm("transposeA_groups_half", {{64, 320}, {64, 48}, {48}},
                         {320, 48}, H)),
        transposedA(transposed(gemm("transposeAB_large_half",
                                    {{300, 512}, {256, 300}}, {512, 256},
                                    H)))),
    [](const ::testing::TestParamInfo<GemmCase> &info) {
      return std::string(info.param.name);
    });

} // namespace
