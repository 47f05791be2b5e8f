//===- LinalgEinsumTest.cpp - Einsum and Det ------------------------------===//
//
// ONNX backend test cases (expected values from ONNX's test data) plus
// hand-derived cases: implicit output, ellipsis broadcasting, traces,
// integers, pivoting and singular matrices in Det, and errors.
//
//===----------------------------------------------------------------------===//

// The GEMM is private to the kernels; the tests reach it by path.
#include "../../../lib/reference/kernels/LinalgGemm.h"
#include "NnTestUtil.h"

#include <cstring>
#include <random>

using namespace mncc::reference;
using namespace mncc::reference::nntest;

namespace {

Tensor einsum(const std::string &equation, std::vector<Value> inputs,
              Status *status = nullptr) {
  SimpleKernelContext context("Einsum", std::move(inputs), 1);
  context.setString("equation", equation);
  Status result = context.run();
  if (status)
    *status = result;
  else
    EXPECT_TRUE(result.ok()) << result.message();
  return context.outputTensor(0);
}

TEST(ReferenceEinsum, ImplicitOutputAndTrace) {
  Tensor a = make(DType::Float32, {2, 2}, {1, 2, 3, 4});
  Tensor b = make(DType::Float32, {2, 2}, {5, 6, 7, 8});
  // "ij,jk": j repeats, so the output is "ik", the matrix product.
  expectTensorNear(einsum("ij,jk", {Value(a), Value(b)}),
                   make(DType::Float32, {2, 2}, {19, 22, 43, 50}));
  // "ji" implicit: output "ij", i.e. the transpose of the stored order.
  expectTensorNear(einsum("ji", {Value(a)}),
                   make(DType::Float32, {2, 2}, {1, 3, 2, 4}));
  expectTensorNear(einsum("ii->", {Value(a)}), make(DType::Float32, {}, {5}));
  expectTensorNear(einsum("ii->i", {Value(a)}),
                   make(DType::Float32, {2}, {1, 4}));
}

TEST(ReferenceEinsum, EllipsisBroadcastsAndIntegersWrap) {
  // Batch 2 against batch 1: the single B matrix is shared.
  Tensor a = make(DType::Int64, {2, 1, 2}, {1, 2, 3, 4});
  Tensor b = make(DType::Int64, {1, 2, 1}, {10, 100});
  expectTensorNear(einsum("...ij,...jk->...ik", {Value(a), Value(b)}),
                   make(DType::Int64, {2, 1, 1}, {210, 430}), 0);
  Tensor big = make(DType::Int32, {2}, {65536, 65536});
  // 2 * 2^32 wraps to 0 in int32.
  expectTensorNear(einsum("i,i->", {Value(big), Value(big)}),
                   make(DType::Int32, {}, {0}), 0);
}

TEST(ReferenceEinsum, RejectsBadEquations) {
  Tensor a = make(DType::Float32, {2, 2}, {1, 2, 3, 4});
  Status status;
  einsum("ijk->i", {Value(a)}, &status);
  EXPECT_FALSE(status.ok());
  einsum("ij,jk->ik", {Value(a)}, &status);
  EXPECT_FALSE(status.ok());
  einsum("ij->iz", {Value(a)}, &status);
  EXPECT_FALSE(status.ok());
  Tensor c = make(DType::Float32, {3}, {1, 2, 3});
  einsum("ij,j->i", {Value(a), Value(c)}, &status);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind("Einsum: ", 0), 0u);
}

Tensor randomTensor(DType dtype, std::vector<int64_t> shape,
                    std::mt19937 &rng) {
  int64_t count = 1;
  for (int64_t n : shape)
    count *= n;
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> values(count);
  for (double &x : values)
    x = dist(rng);
  return make(dtype, std::move(shape), values);
}

/// A two-operand contraction goes through the GEMM: "ij,jk->ik" gives the
/// GEMM's bits exactly (the direct evaluation sums in double, which
/// rounds differently at this depth).
TEST(ReferenceEinsum, MatrixProductIsTheGemms) {
  std::mt19937 rng(1);
  const int64_t m = 37, k = 300, n = 45;
  Tensor a = randomTensor(DType::Float32, {m, k}, rng);
  Tensor b = randomTensor(DType::Float32, {k, n}, rng);
  Tensor got = einsum("ij,jk->ik", {Value(a), Value(b)});
  std::vector<float> expected(m * n);
  linalg::gemm(false, false, m, n, k, 1.0f, a.data<float>(), k,
               b.data<float>(), n, 0.0f, expected.data(), n);
  ASSERT_EQ(got.shape(), (std::vector<int64_t>{m, n}));
  EXPECT_EQ(0, std::memcmp(got.data<float>(), expected.data(),
                           expected.size() * sizeof(float)));
}

/// Contractions the GEMM takes (batch, free and summed labels in any
/// order, transposed operands, outer and inner products) agree with the
/// direct evaluation, which a third operand of one 1 forces.
TEST(ReferenceEinsum, ContractionsAgreeWithTheDirectEvaluation) {
  struct Case {
    const char *equation, *withOne;
    std::vector<int64_t> a, b;
  };
  const Case cases[] = {
      {"bij,bjk->bik", "bij,bjk,z->bik", {3, 4, 5}, {3, 5, 6}},
      {"ij,kj->ik", "ij,kj,z->ik", {7, 9}, {4, 9}},
      {"abc,cd->dab", "abc,cd,z->dab", {2, 3, 4}, {4, 5}},
      {"...ij,...jk->...ik", "...ij,...jk,z->...ik", {2, 3, 4, 5}, {2, 3, 5, 2}},
      {"i,j->ij", "i,j,z->ij", {5}, {6}},
      {"i,i->", "i,i,z->", {40}, {40}},
      {"bhqd,bhkd->bhqk", "bhqd,bhkd,z->bhqk", {2, 2, 3, 8}, {2, 2, 4, 8}},
      {"ijk,jil->kl", "ijk,jil,z->kl", {3, 4, 5}, {4, 3, 2}},
      {"ij,jk", "ij,jk,z->ik", {3, 4}, {4, 2}}};
  std::mt19937 rng(2);
  for (DType dtype : {DType::Float32, DType::Float64, DType::Float16}) {
    for (const Case &test : cases) {
      Tensor a = randomTensor(dtype, test.a, rng);
      Tensor b = randomTensor(dtype, test.b, rng);
      Tensor one = make(dtype, {1}, {1.0});
      Tensor direct =
          einsum(test.withOne, {Value(a), Value(b), Value(one)});
      Tensor got = einsum(test.equation, {Value(a), Value(b)});
      SCOPED_TRACE(test.equation);
      expectTensorNear(got, direct, dtype == DType::Float16 ? 1e-2 : 1e-5);
    }
  }
}

TEST(ReferenceDet, PivotingAndSingularMatrices) {
  // A zero pivot forces a row swap: det [[0, 1], [1, 0]] = -1.
  SimpleKernelContext swap(
      "Det", {Value(make(DType::Float64, {2, 2, 2}, {0, 1, 1, 0, 2, 4, 1, 2}))},
      1);
  ASSERT_TRUE(swap.run().ok());
  expectTensorNear(swap.outputTensor(0), make(DType::Float64, {2}, {-1, 0}));
  SimpleKernelContext nonSquare(
      "Det", {Value(make(DType::Float32, {2, 3}, {1, 2, 3, 4, 5, 6}))}, 1);
  EXPECT_FALSE(nonSquare.run().ok());
}

// ONNX backend test test_einsum_batch_diagonal.
TEST(ReferenceEinsumOnnx, EinsumBatchDiagonal) {
  SimpleKernelContext context(
      "Einsum",
      {Value(make(DType::Float64, {3, 5, 5},
                  {1.76405235,   0.400157208,  0.978737984,   2.2408932,
                   1.86755799,   -0.97727788,  0.950088418,   -0.151357208,
                   -0.103218852, 0.410598502,  0.144043571,   1.45427351,
                   0.761037725,  0.121675016,  0.443863233,   0.333674327,
                   1.49407907,   -0.205158264, 0.313067702,   -0.854095739,
                   -2.55298982,  0.653618595,  0.864436199,   -0.74216502,
                   2.26975462,   -1.45436567,  0.0457585173,  -0.18718385,
                   1.53277921,   1.46935877,   0.154947426,   0.37816252,
                   -0.887785748, -1.98079647,  -0.347912149,  0.156348969,
                   1.23029068,   1.20237985,   -0.387326817,  -0.302302751,
                   -1.04855297,  -1.42001794,  -1.70627019,   1.9507754,
                   -0.509652182, -0.438074302, -1.25279536,   0.777490356,
                   -1.61389785,  -0.21274028,  -0.895466561,  0.386902498,
                   -0.510805138, -1.18063218,  -0.0281822283, 0.428331871,
                   0.0665172224, 0.302471898,  -0.634322094,  -0.362741166,
                   -0.672460448, -0.359553162, -0.813146282,  -1.7262826,
                   0.177426142,  -0.401780936, -1.63019835,   0.462782256,
                   -0.907298364, 0.0519453958, 0.729090562,   0.128982911,
                   1.13940068,   -1.23482582,  0.402341641}))},
      1);
  context.setString("equation", "...ii ->...i");
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float64, {3, 5},
                        {1.76405235, 0.950088418, 0.761037725, 0.313067702,
                         2.26975462, -1.45436567, 0.37816252, 1.20237985,
                         1.9507754, -0.21274028, -0.895466561, 0.0665172224,
                         -0.813146282, -0.907298364, 0.402341641}));
}

// ONNX backend test test_einsum_batch_matmul.
TEST(ReferenceEinsumOnnx, EinsumBatchMatmul) {
  SimpleKernelContext context(
      "Einsum",
      {Value(make(DType::Float64, {5, 2, 3},
                  {1.76405235,   0.400157208,  0.978737984,  2.2408932,
                   1.86755799,   -0.97727788,  0.950088418,  -0.151357208,
                   -0.103218852, 0.410598502,  0.144043571,  1.45427351,
                   0.761037725,  0.121675016,  0.443863233,  0.333674327,
                   1.49407907,   -0.205158264, 0.313067702,  -0.854095739,
                   -2.55298982,  0.653618595,  0.864436199,  -0.74216502,
                   2.26975462,   -1.45436567,  0.0457585173, -0.18718385,
                   1.53277921,   1.46935877})),
       Value(make(DType::Float64, {5, 3, 4},
                  {0.154947426,   0.37816252,   -0.887785748, -1.98079647,
                   -0.347912149,  0.156348969,  1.23029068,   1.20237985,
                   -0.387326817,  -0.302302751, -1.04855297,  -1.42001794,
                   -1.70627019,   1.9507754,    -0.509652182, -0.438074302,
                   -1.25279536,   0.777490356,  -1.61389785,  -0.21274028,
                   -0.895466561,  0.386902498,  -0.510805138, -1.18063218,
                   -0.0281822283, 0.428331871,  0.0665172224, 0.302471898,
                   -0.634322094,  -0.362741166, -0.672460448, -0.359553162,
                   -0.813146282,  -1.7262826,   0.177426142,  -0.401780936,
                   -1.63019835,   0.462782256,  -0.907298364, 0.0519453958,
                   0.729090562,   0.128982911,  1.13940068,   -1.23482582,
                   0.402341641,   -0.684810091, -0.870797149, -0.578849665,
                   -0.311552532,  0.0561653422, -1.16514984,  0.900826487,
                   0.46566244,    -1.53624369,  1.48825219,   1.89588918,
                   1.17877957,    -0.179924836, -1.07075262,  1.05445173}))},
      1);
  context.setString("equation", "bij, bjk -> bik");
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float64, {5, 2, 4},
           {-0.244975653, 0.433787462,   -2.10004946,  -4.40291319,
            0.0760004491, 1.43484638,    1.33293377,   -0.805487122,
            -1.33905891,  1.69579471,    -0.187214842, -0.262146047,
            -2.1833024,   1.47563999,    -1.18458441,  -1.92747863,
            -0.459554628, -0.484393202,  0.0475534206, 0.00810810292,
            -0.790307372, -0.0448794948, -1.01891443,  -0.353845068,
            -2.1602497,   1.78303161,    0.96593317,   2.5487192,
            -0.733879572, 0.92222268,    1.0381873,    -0.603873688,
            -1.33045206,  2.35350854,    -4.8580632,   -0.664410909,
            2.50412541,   -2.62960977,   0.925939507,  4.28672724}));
}

// ONNX backend test test_einsum_inner_prod.
TEST(ReferenceEinsumOnnx, EinsumInnerProd) {
  SimpleKernelContext context(
      "Einsum",
      {Value(
           make(DType::Float64, {5},
                {1.76405235, 0.400157208, 0.978737984, 2.2408932, 1.86755799})),
       Value(make(DType::Float64, {5},
                  {-0.97727788, 0.950088418, -0.151357208, -0.103218852,
                   0.410598502}))},
      1);
  context.setString("equation", "i,i");
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float64, {}, {-0.956409567}));
}

// ONNX backend test test_einsum_sum.
TEST(ReferenceEinsumOnnx, EinsumSum) {
  SimpleKernelContext context(
      "Einsum",
      {Value(make(DType::Float64, {3, 4},
                  {1.76405235, 0.400157208, 0.978737984, 2.2408932, 1.86755799,
                   -0.97727788, 0.950088418, -0.151357208, -0.103218852,
                   0.410598502, 0.144043571, 1.45427351}))},
      1);
  context.setString("equation", "ij->i");
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float64, {3}, {5.38384074, 1.68901132, 1.90569673}));
}

// ONNX backend test test_einsum_transpose.
TEST(ReferenceEinsumOnnx, EinsumTranspose) {
  SimpleKernelContext context(
      "Einsum",
      {Value(make(DType::Float64, {3, 4},
                  {1.76405235, 0.400157208, 0.978737984, 2.2408932, 1.86755799,
                   -0.97727788, 0.950088418, -0.151357208, -0.103218852,
                   0.410598502, 0.144043571, 1.45427351}))},
      1);
  context.setString("equation", "ij->ji");
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float64, {4, 3},
                        {1.76405235, 1.86755799, -0.103218852, 0.400157208,
                         -0.97727788, 0.410598502, 0.978737984, 0.950088418,
                         0.144043571, 2.2408932, -0.151357208, 1.45427351}));
}

// ONNX backend test test_det_2d.
TEST(ReferenceEinsumOnnx, Det2d) {
  SimpleKernelContext context(
      "Det", {Value(make(DType::Float32, {2, 2}, {0, 1, 2, 3}))}, 1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0), make(DType::Float32, {}, {-2}));
}

// ONNX backend test test_det_nd.
TEST(ReferenceEinsumOnnx, DetNd) {
  SimpleKernelContext context(
      "Det",
      {Value(make(DType::Float32, {3, 2, 2},
                  {1, 2, 3, 4, 1, 2, 2, 1, 1, 3, 3, 1}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {3}, {-2, -3, -8}));
}

} // namespace
