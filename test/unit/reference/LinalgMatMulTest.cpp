//===- LinalgMatMulTest.cpp - MatMul and Gemm -----------------------------===//
//
// ONNX backend test cases (expected values from ONNX's test data) plus
// numpy.matmul's rules for 1-D operands and batch broadcasting, integer
// wrap-around, and products large enough to be split over threads.
//
//===----------------------------------------------------------------------===//

#include "NnTestUtil.h"

using namespace mncc::reference;
using namespace mncc::reference::nntest;

namespace {

Tensor run(const char *op, std::vector<Value> inputs, Status *status = nullptr,
           int64_t transA = 0, int64_t transB = 0) {
  SimpleKernelContext context(op, std::move(inputs), 1);
  if (transA)
    context.setInt("transA", 1);
  if (transB)
    context.setInt("transB", 1);
  Status result = context.run();
  if (status)
    *status = result;
  else
    EXPECT_TRUE(result.ok()) << result.message();
  return context.outputTensor(0);
}

TEST(ReferenceMatMul, VectorOperandsLoseTheirAddedDimension) {
  Tensor v = make(DType::Float32, {3}, {1, 2, 3});
  Tensor m = make(DType::Float32, {3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor mt = make(DType::Float32, {2, 3}, {1, 3, 5, 2, 4, 6});
  expectTensorNear(run("MatMul", {Value(v), Value(m)}),
                   make(DType::Float32, {2}, {22, 28}));
  expectTensorNear(run("MatMul", {Value(mt), Value(v)}),
                   make(DType::Float32, {2}, {22, 28}));
  expectTensorNear(run("MatMul", {Value(v), Value(v)}),
                   make(DType::Float32, {}, {14}));
}

TEST(ReferenceMatMul, BatchDimensionsBroadcast) {
  // A: 2x1x1x2, B: 3x2x1 -> 2x3x1x1; entry [i, j] = A[i] . B[j].
  Tensor a = make(DType::Float64, {2, 1, 1, 2}, {1, 2, 3, 4});
  Tensor b = make(DType::Float64, {3, 2, 1}, {1, 0, 0, 1, 1, 1});
  expectTensorNear(run("MatMul", {Value(a), Value(b)}),
                   make(DType::Float64, {2, 3, 1, 1}, {1, 2, 3, 3, 4, 7}));
  Status status;
  run("MatMul",
      {Value(make(DType::Float64, {2, 1, 2}, {1, 2, 3, 4})),
       Value(make(DType::Float64, {3, 2, 1}, {1, 2, 3, 4, 5, 6}))},
      &status);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind("MatMul: batch dimensions", 0), 0u)
      << status.message();
}

TEST(ReferenceMatMul, IntegersWrapAndHalvesRoundOnce) {
  Tensor a = make(DType::Int32, {1, 2}, {65536, 1});
  Tensor b = make(DType::Int32, {2, 1}, {65536, 5});
  // 2^32 + 5 wraps to 5, as numpy's int32 arithmetic does.
  expectTensorNear(run("MatMul", {Value(a), Value(b)}),
                   make(DType::Int32, {1, 1}, {5}), 0);
  Tensor u = make(DType::UInt64, {2, 2}, {1, 2, 3, 4});
  expectTensorNear(run("MatMul", {Value(u), Value(u)}),
                   make(DType::UInt64, {2, 2}, {7, 10, 15, 22}), 0);
  // float16: 2048 + 1 + 1 is exact in float and rounds to 2050 once (a
  // float16 accumulator would give 2048).
  Tensor h = make(DType::Float16, {1, 3}, {2048, 1, 1});
  Tensor ones = make(DType::Float16, {3, 1}, {1, 1, 1});
  expectTensorNear(run("MatMul", {Value(h), Value(ones)}),
                   make(DType::Float16, {1, 1}, {2050}), 0);
}

TEST(ReferenceMatMul, LargeProductsMatchAPlainLoop) {
  // 300 x 70 x 260: large enough for the GEMM to split into blocks.
  int64_t m = 300, k = 70, n = 260;
  std::vector<double> a(m * k), b(k * n), c(m * n, 0);
  for (int64_t i = 0; i < m * k; ++i)
    a[i] = ((i * 37) % 101) / 50.0 - 1;
  for (int64_t i = 0; i < k * n; ++i)
    b[i] = ((i * 53) % 97) / 48.0 - 1;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j)
        c[i * n + j] += a[i * k + p] * b[p * n + j];
  expectTensorNear(run("MatMul", {Value(make(DType::Float32, {m, k}, a)),
                                  Value(make(DType::Float32, {k, n}, b))}),
                   make(DType::Float32, {m, n}, c), 1e-4);
  // The same through Gemm with both operands stored transposed.
  std::vector<double> at(k * m), bt(n * k);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      at[p * m + i] = a[i * k + p];
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j)
      bt[j * k + p] = b[p * n + j];
  expectTensorNear(run("Gemm",
                       {Value(make(DType::Float64, {k, m}, at)),
                        Value(make(DType::Float64, {n, k}, bt))},
                       nullptr, 1, 1),
                   make(DType::Float64, {m, n}, c), 1e-12);
}

TEST(ReferenceMatMul, ManySmallBatchedProductsMatchAPlainLoop) {
  // 12 batches of 8x16 by one shared 16x8: the per-batch threaded path.
  int64_t batches = 12, m = 8, k = 16, n = 8;
  std::vector<double> a(batches * m * k), b(k * n), c(batches * m * n, 0);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<double>((i * 29) % 31) - 15;
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<double>((i * 7) % 11) - 5;
  for (int64_t t = 0; t < batches; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j)
          c[(t * m + i) * n + j] += a[(t * m + i) * k + p] * b[p * n + j];
  // Small integers: every float sum is exact.
  expectTensorNear(
      run("MatMul", {Value(make(DType::Float32, {batches, m, k}, a)),
                     Value(make(DType::Float32, {k, n}, b))}),
      make(DType::Float32, {batches, m, n}, c), 0);
}

TEST(ReferenceGemm, FollowsTheFormulaEvenForZeroAlphaAndBeta) {
  // Y = alpha * A * B + beta * C literally: 0 * NaN and 0 * inf are NaN
  // (BLAS would skip the terms; ONNX's reference does not).
  Tensor a = make(DType::Float32, {1, 1}, {INFINITY});
  Tensor b = make(DType::Float32, {1, 1}, {1});
  Tensor c = make(DType::Float32, {1}, {NAN});
  SimpleKernelContext zeroBeta("Gemm", {Value(b), Value(b), Value(c)}, 1);
  zeroBeta.setFloat("beta", 0);
  ASSERT_TRUE(zeroBeta.run().ok());
  EXPECT_TRUE(std::isnan(zeroBeta.outputTensor(0).data<float>()[0]));
  SimpleKernelContext zeroAlpha("Gemm", {Value(a), Value(b)}, 1);
  zeroAlpha.setFloat("alpha", 0);
  ASSERT_TRUE(zeroAlpha.run().ok());
  EXPECT_TRUE(std::isnan(zeroAlpha.outputTensor(0).data<float>()[0]));
}

TEST(ReferenceGemm, BroadcastsCAndChecksShapes) {
  Tensor a = make(DType::Float32, {2, 2}, {1, 2, 3, 4});
  Tensor id = make(DType::Float32, {2, 2}, {1, 0, 0, 1});
  Tensor column = make(DType::Float32, {2, 1}, {10, 20});
  expectTensorNear(run("Gemm", {Value(a), Value(id), Value(column)}),
                   make(DType::Float32, {2, 2}, {11, 12, 23, 24}));
  // beta scales C; C may be omitted.
  SimpleKernelContext scaled("Gemm", {Value(a), Value(id), Value(column)}, 1);
  scaled.setFloat("beta", 0.5f);
  scaled.setFloat("alpha", 2.0f);
  ASSERT_TRUE(scaled.run().ok());
  expectTensorNear(scaled.outputTensor(0),
                   make(DType::Float32, {2, 2}, {7, 9, 16, 18}));
  SimpleKernelContext omitted("Gemm", {Value(a), Value(id), Value()}, 1);
  omitted.omitInput(2);
  ASSERT_TRUE(omitted.run().ok());
  expectTensorNear(omitted.outputTensor(0), a);
  Status status;
  run("Gemm",
      {Value(a), Value(id), Value(make(DType::Float32, {3}, {1, 2, 3}))},
      &status);
  EXPECT_FALSE(status.ok());
  run("Gemm", {Value(a), Value(make(DType::Float32, {3, 1}, {1, 2, 3}))},
      &status);
  EXPECT_FALSE(status.ok());
  // Integer Gemm.
  Tensor ia = make(DType::Int64, {1, 2}, {3, 4});
  Tensor ib = make(DType::Int64, {2, 1}, {5, 6});
  expectTensorNear(
      run("Gemm", {Value(ia), Value(ib), Value(make(DType::Int64, {1}, {-1}))}),
      make(DType::Int64, {1, 1}, {38}), 0);
}

// ONNX backend test test_gemm_all_attributes.
TEST(ReferenceLinalgOnnx, GemmAllAttributes) {
  SimpleKernelContext context(
      "Gemm",
      {Value(make(DType::Float32, {4, 3},
                  {0.548813522, 0.715189338, 0.602763355, 0.544883192,
                   0.423654795, 0.64589411, 0.437587202, 0.891772985,
                   0.963662744, 0.383441508, 0.791725039, 0.528894901})),
       Value(make(DType::Float32, {5, 4},
                  {0.568044543,  0.925596654, 0.0710360557, 0.0871293023,
                   0.0202183966, 0.832619846, 0.778156757,  0.870012164,
                   0.978618324,  0.799158573, 0.461479366,  0.780529201,
                   0.118274428,  0.63992101,  0.143353283,  0.944668889,
                   0.521848321,  0.414661944, 0.264555603,  0.774233699})),
       Value(make(
           DType::Float32, {1, 5},
           {0.456150323, 0.56843394, 0.0187897999, 0.617635489, 0.612095714}))},
      1);
  context.setFloat("alpha", 0.25f);
  context.setFloat("beta", 0.3499999940395355f);
  context.setInt("transA", 1);
  context.setInt("transB", 1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {3, 5},
           {0.379799128, 0.483673602, 0.375014365, 0.425809324, 0.44547832,
            0.392333448, 0.636440158, 0.523567438, 0.524035096, 0.563682914,
            0.423345327, 0.638951063, 0.497470319, 0.496769249, 0.525935829}));
}

// ONNX backend test test_gemm_default_single_elem_vector_bias.
TEST(ReferenceLinalgOnnx, GemmDefaultSingleElemVectorBias) {
  SimpleKernelContext context(
      "Gemm",
      {Value(make(DType::Float32, {3, 7},
                  {0.548813522,  0.715189338, 0.602763355,  0.544883192,
                   0.423654795,  0.64589411,  0.437587202,  0.891772985,
                   0.963662744,  0.383441508, 0.791725039,  0.528894901,
                   0.568044543,  0.925596654, 0.0710360557, 0.0871293023,
                   0.0202183966, 0.832619846, 0.778156757,  0.870012164,
                   0.978618324})),
       Value(make(DType::Float32, {7, 3},
                  {0.799158573, 0.461479366,  0.780529201, 0.118274428,
                   0.63992101,  0.143353283,  0.944668889, 0.521848321,
                   0.414661944, 0.264555603,  0.774233699, 0.456150323,
                   0.56843394,  0.0187897999, 0.617635489, 0.612095714,
                   0.616934001, 0.943748057,  0.681820273, 0.359507889,
                   0.437031955})),
       Value(make(DType::Float32, {1}, {0.69763118}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {3, 3},
           {2.8688972, 2.70873046, 2.78947759, 3.37538648, 3.2320559,
            3.31924486, 2.64618254, 2.34454465, 2.88312769}));
}

// ONNX backend test test_gemm_default_vector_bias.
TEST(ReferenceLinalgOnnx, GemmDefaultVectorBias) {
  SimpleKernelContext context(
      "Gemm",
      {Value(make(DType::Float32, {2, 7},
                  {0.548813522, 0.715189338, 0.602763355, 0.544883192,
                   0.423654795, 0.64589411, 0.437587202, 0.891772985,
                   0.963662744, 0.383441508, 0.791725039, 0.528894901,
                   0.568044543, 0.925596654})),
       Value(make(DType::Float32, {7, 4},
                  {0.0710360557, 0.0871293023, 0.0202183966, 0.832619846,
                   0.778156757,  0.870012164,  0.978618324,  0.799158573,
                   0.461479366,  0.780529201,  0.118274428,  0.63992101,
                   0.143353283,  0.944668889,  0.521848321,  0.414661944,
                   0.264555603,  0.774233699,  0.456150323,  0.56843394,
                   0.0187897999, 0.617635489,  0.612095714,  0.616934001,
                   0.943748057,  0.681820273,  0.359507889,  0.437031955})),
       Value(make(DType::Float32, {1, 4},
                  {0.69763118, 0.0602254719, 0.666766703, 0.670637846}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {2, 4},
                        {2.18660831, 2.74076605, 2.47931361, 3.14133739,
                         2.8254323, 3.41495204, 3.00807905, 3.81253862}));
}

// ONNX backend test test_gemm_transposeA.
TEST(ReferenceLinalgOnnx, GemmTransposea) {
  SimpleKernelContext context(
      "Gemm",
      {Value(make(DType::Float32, {6, 3},
                  {0.548813522, 0.715189338, 0.602763355, 0.544883192,
                   0.423654795, 0.64589411, 0.437587202, 0.891772985,
                   0.963662744, 0.383441508, 0.791725039, 0.528894901,
                   0.568044543, 0.925596654, 0.0710360557, 0.0871293023,
                   0.0202183966, 0.832619846})),
       Value(make(DType::Float32, {6, 4},
                  {0.778156757,  0.870012164, 0.978618324, 0.799158573,
                   0.461479366,  0.780529201, 0.118274428, 0.63992101,
                   0.143353283,  0.944668889, 0.521848321, 0.414661944,
                   0.264555603,  0.774233699, 0.456150323, 0.56843394,
                   0.0187897999, 0.617635489, 0.612095714, 0.616934001,
                   0.943748057,  0.681820273, 0.359507889, 0.437031955})),
       Value(make(DType::Float32, {1, 4}, {0, 0, 0, 0}))},
      1);
  context.setInt("transA", 1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {3, 4},
                        {0.935588062, 2.02327108, 1.38380706, 1.57520747,
                         1.12580419, 2.99377537, 2.15034318, 2.24235129,
                         1.83229566, 2.95995259, 1.75322366, 2.00296688}));
}

// ONNX backend test test_gemm_beta.
TEST(ReferenceLinalgOnnx, GemmBeta) {
  SimpleKernelContext context(
      "Gemm",
      {Value(make(DType::Float32, {2, 7},
                  {0.548813522, 0.715189338, 0.602763355, 0.544883192,
                   0.423654795, 0.64589411, 0.437587202, 0.891772985,
                   0.963662744, 0.383441508, 0.791725039, 0.528894901,
                   0.568044543, 0.925596654})),
       Value(make(DType::Float32, {7, 4},
                  {0.0710360557, 0.0871293023, 0.0202183966, 0.832619846,
                   0.778156757,  0.870012164,  0.978618324,  0.799158573,
                   0.461479366,  0.780529201,  0.118274428,  0.63992101,
                   0.143353283,  0.944668889,  0.521848321,  0.414661944,
                   0.264555603,  0.774233699,  0.456150323,  0.56843394,
                   0.0187897999, 0.617635489,  0.612095714,  0.616934001,
                   0.943748057,  0.681820273,  0.359507889,  0.437031955})),
       Value(make(DType::Float32, {1, 4},
                  {0.69763118, 0.0602254719, 0.666766703, 0.670637846}))},
      1);
  context.setFloat("beta", 0.5f);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(context.outputTensor(0),
                   make(DType::Float32, {2, 4},
                        {1.83779275, 2.71065331, 2.14593029, 2.80601835,
                         2.47661686, 3.3848393, 2.67469573, 3.47721958}));
}

// ONNX backend test test_matmul_3d.
TEST(ReferenceLinalgOnnx, Matmul3d) {
  SimpleKernelContext context(
      "MatMul",
      {Value(make(DType::Float32, {2, 3, 4},
                  {2.26975465,   -1.45436573,  0.0457585156, -0.187183857,
                   1.53277922,   1.4693588,    0.15494743,   0.378162533,
                   -0.887785733, -1.98079646,  -0.347912163, 0.156348974,
                   1.23029065,   1.20237982,   -0.387326807, -0.302302748,
                   -1.04855299,  -1.42001796,  -1.70627022,  1.95077538,
                   -0.509652197, -0.438074291, -1.25279534,  0.777490377})),
       Value(make(DType::Float32, {2, 4, 3},
                  {-1.6138978,   -0.212740287, -0.895466566, 0.386902511,
                   -0.51080513,  -1.18063223,  -0.028182229, 0.428331882,
                   0.0665172189, 0.302471906,  -0.634322107, -0.362741172,
                   -0.672460437, -0.359553158, -0.813146293, -1.7262826,
                   0.177426144,  -0.401780933, -1.63019836,  0.462782264,
                   -0.907298386, 0.0519453958, 0.729090571,  0.128982916}))},
      1);
  ASSERT_TRUE(context.run().ok());
  expectTensorNear(
      context.outputTensor(0),
      make(DType::Float32, {2, 3, 3},
           {-4.28375673, 0.398363918, -0.244475216, -1.79523349, -1.25014782,
            -3.23419333, 0.723516405, 0.952471316, 3.05371809, -2.2872529,
            -0.628675342, -1.17107046, 6.03935528, 0.757722557, 3.22287607,
            3.18165302, 0.0926106796, 1.82737386}));
}

} // namespace
