//===- LinalgGemmTest.cpp - The kernels' GEMM -----------------------------===//
//
// linalg::gemm splits a product into blocks and multiplies each with Eigen,
// in one Eigen build per instruction set: every build this CPU runs is
// checked against a plain triple loop in double, on shapes that hit the
// edges of Eigen's register blocks, its cache-block boundaries, the
// transposes, wide leading dimensions and the alpha/beta rules; and the
// result must not depend on the thread count, nor on whether op(B) comes
// as a matrix or from a packer.
//
//===----------------------------------------------------------------------===//

// The GEMM is private to the kernels; the tests reach it by path.
#include "../../../lib/reference/kernels/LinalgGemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace mncc::reference;

namespace {

struct Case {
  bool transA, transB;
  int64_t m, n, k;
  float alpha, beta;
  int64_t padA, padB, padC; // leading dimension minus the row width
};

struct Operands {
  std::vector<float> a, b, c;
  int64_t lda, ldb, ldc;
};

Operands makeOperands(const Case &test, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Operands ops;
  int64_t aRows = test.transA ? test.k : test.m;
  int64_t aCols = test.transA ? test.m : test.k;
  int64_t bRows = test.transB ? test.n : test.k;
  int64_t bCols = test.transB ? test.k : test.n;
  ops.lda = aCols + test.padA;
  ops.ldb = bCols + test.padB;
  ops.ldc = test.n + test.padC;
  ops.a.resize(std::max<int64_t>(aRows * ops.lda, 1));
  ops.b.resize(std::max<int64_t>(bRows * ops.ldb, 1));
  ops.c.resize(test.m * ops.ldc);
  for (float &x : ops.a)
    x = dist(rng);
  for (float &x : ops.b)
    x = dist(rng);
  for (float &x : ops.c)
    x = dist(rng);
  return ops;
}

/// C = alpha * op(A) * op(B) + beta * C in double; checks every element
/// of the result within a relative tolerance, and that the padding
/// between C's rows is untouched.
void expectMatches(const Case &test, const Operands &before,
                   const std::vector<float> &result) {
  for (int64_t i = 0; i < test.m; ++i)
    for (int64_t j = 0; j < before.ldc; ++j) {
      float got = result[i * before.ldc + j];
      float old = before.c[i * before.ldc + j];
      if (j >= test.n) {
        ASSERT_EQ(got, old) << "padding overwritten at " << i << "," << j;
        continue;
      }
      double sum = 0.0, magnitude = 0.0;
      for (int64_t p = 0; p < test.k; ++p) {
        double x = test.transA ? before.a[p * before.lda + i]
                               : before.a[i * before.lda + p];
        double y = test.transB ? before.b[j * before.ldb + p]
                               : before.b[p * before.ldb + j];
        sum += x * y;
        magnitude += std::fabs(x * y);
      }
      double expected = double(test.alpha) * sum;
      magnitude *= std::fabs(double(test.alpha));
      if (test.beta != 0.0f) {
        expected += double(test.beta) * old;
        magnitude += std::fabs(double(test.beta) * old);
      }
      // Float summation error grows with k; bound it by the sum of the
      // magnitudes, as the error analysis of dot products does.
      double tolerance = 1e-6 * (test.k + 2) * (magnitude + 1e-30);
      ASSERT_NEAR(got, expected, tolerance)
          << "at " << i << "," << j << " of " << test.m << "x" << test.n << "x"
          << test.k;
    }
}

std::vector<linalg::GemmIsa> availableIsas() {
  std::vector<linalg::GemmIsa> isas;
  for (linalg::GemmIsa isa : {linalg::GemmIsa::Baseline, linalg::GemmIsa::Avx2,
                              linalg::GemmIsa::Avx512})
    if (linalg::forceGemmIsa(isa))
      isas.push_back(isa);
  linalg::forceGemmIsa(linalg::GemmIsa::Auto);
  return isas;
}

/// Restores the automatic Eigen build and thread count however a test
/// ends.
struct GemmTest : ::testing::Test {
  void TearDown() override {
    linalg::forceGemmIsa(linalg::GemmIsa::Auto);
    linalg::forceNumThreads(0);
  }
};

void runCase(const Case &test, std::mt19937 &rng, bool parallel = true) {
  Operands ops = makeOperands(test, rng);
  std::vector<float> result = ops.c;
  linalg::gemm(test.transA, test.transB, test.m, test.n, test.k, test.alpha,
               ops.a.data(), ops.lda, ops.b.data(), ops.ldb, test.beta,
               result.data(), ops.ldc, parallel);
  expectMatches(test, ops, result);
}

TEST_F(GemmTest, TheBuildAskedForIsTheOneInForce) {
  EXPECT_TRUE(linalg::forceGemmIsa(linalg::GemmIsa::Baseline));
  EXPECT_STREQ(linalg::gemmIsaName(), "baseline");
  if (linalg::forceGemmIsa(linalg::GemmIsa::Avx2)) {
    EXPECT_STREQ(linalg::gemmIsaName(), "avx2");
  }
  if (linalg::forceGemmIsa(linalg::GemmIsa::Avx512)) {
    EXPECT_STREQ(linalg::gemmIsaName(), "avx512");
  }
  // Auto is the widest build the CPU runs.
  std::vector<linalg::GemmIsa> isas = availableIsas();
  const char *widest = isas.back() == linalg::GemmIsa::Avx512 ? "avx512"
                       : isas.back() == linalg::GemmIsa::Avx2 ? "avx2"
                                                              : "baseline";
  EXPECT_TRUE(linalg::forceGemmIsa(linalg::GemmIsa::Auto));
  EXPECT_STREQ(linalg::gemmIsaName(), widest);
}

TEST_F(GemmTest, EdgeShapesEveryKernel) {
  // Sizes around Eigen's register blocks (rows: 1 to 3 packets of 4, 8
  // or 16 floats; columns: 4 or 8), k = 1, and k across its depth blocks
  // (about 130 to 330 deep, by build).
  const int64_t sizes[] = {1, 3, 5, 7, 9, 17, 31, 33, 49};
  const int64_t depths[] = {1, 2, 7, 255, 256, 257, 520};
  for (linalg::GemmIsa isa : availableIsas()) {
    ASSERT_TRUE(linalg::forceGemmIsa(isa));
    std::mt19937 rng(42);
    for (int64_t m : sizes)
      for (int64_t n : sizes)
        for (int64_t k : depths) {
          if (m * n * k > 200000 && (m + n) % 3 != 0)
            continue; // Keep the double reference loop quick.
          Case test{
              (m + k) % 2 == 1, (n + k) % 2 == 0, m, n, k, 1.0f, 0.0f, 0, 0, 0};
          runCase(test, rng);
          if (HasFatalFailure())
            return;
        }
  }
}

TEST_F(GemmTest, RandomShapesEveryKernel) {
  for (linalg::GemmIsa isa : availableIsas()) {
    ASSERT_TRUE(linalg::forceGemmIsa(isa));
    std::mt19937 rng(7);
    std::uniform_int_distribution<int64_t> dim(1, 300), pad(0, 5);
    const float alphas[] = {1.0f, -0.5f, 2.25f};
    const float betas[] = {0.0f, 1.0f, -1.5f};
    for (int trial = 0; trial < 24; ++trial) {
      Case test{trial % 2 == 1,
                trial % 4 >= 2,
                dim(rng),
                dim(rng),
                trial % 6 == 5 ? 1 : dim(rng),
                alphas[trial % 3],
                betas[(trial / 3) % 3],
                pad(rng),
                pad(rng),
                pad(rng)};
      runCase(test, rng);
      if (HasFatalFailure())
        return;
    }
  }
}

TEST_F(GemmTest, LargeSplitProductEveryKernel) {
  // Large enough to be split into blocks over threads, across Eigen's
  // cache blocks, with both split directions.
  for (linalg::GemmIsa isa : availableIsas()) {
    ASSERT_TRUE(linalg::forceGemmIsa(isa));
    std::mt19937 rng(3);
    runCase({false, false, 517, 70, 300, 1.0f, 0.5f, 3, 0, 1}, rng);
    runCase({true, true, 45, 611, 290, -1.0f, 0.0f, 0, 2, 0}, rng);
    // Split along M with op(B) transposed.
    runCase({false, true, 600, 300, 530, 1.0f, -1.0f, 0, 1, 2}, rng);
    if (HasFatalFailure())
      return;
  }
}

TEST_F(GemmTest, BetaZeroIgnoresNaNInC) {
  for (linalg::GemmIsa isa : availableIsas()) {
    ASSERT_TRUE(linalg::forceGemmIsa(isa));
    const int64_t m = 13, n = 37, k = 9;
    std::vector<float> a(m * k, 1.0f), b(k * n, 2.0f);
    std::vector<float> c(m * n, std::numeric_limits<float>::quiet_NaN());
    linalg::gemm(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f,
                 c.data(), n);
    for (float value : c)
      ASSERT_EQ(value, 18.0f);
  }
}

TEST_F(GemmTest, AlphaZeroKeepsInfTimesZero) {
  // ONNX's formula has 0 * inf = NaN in it, unlike BLAS.
  for (linalg::GemmIsa isa : availableIsas()) {
    ASSERT_TRUE(linalg::forceGemmIsa(isa));
    std::vector<float> a = {std::numeric_limits<float>::infinity(), 1.0f};
    std::vector<float> b = {1.0f, 1.0f};
    std::vector<float> c = {5.0f, 5.0f};
    linalg::gemm(false, false, 2, 1, 1, 0.0f, a.data(), 1, b.data(), 1, 2.0f,
                 c.data(), 1);
    EXPECT_TRUE(std::isnan(c[0]));
    EXPECT_EQ(c[1], 10.0f);
  }
}

TEST_F(GemmTest, ThreadCountDoesNotChangeBits) {
  for (linalg::GemmIsa isa : availableIsas()) {
    ASSERT_TRUE(linalg::forceGemmIsa(isa));
    const Case cases[] = {{false, false, 256, 196, 700, 1.0f, 0.0f, 0, 0, 0},
                          {false, true, 64, 1000, 300, 1.0f, 1.0f, 0, 0, 0},
                          {true, false, 333, 77, 513, 0.75f, -0.5f, 1, 2, 3},
                          {false, true, 1, 1000, 1280, 1.0f, 0.0f, 0, 0, 0},
                          {false, false, 1, 999, 700, 1.0f, 0.5f, 0, 1, 0}};
    for (const Case &test : cases) {
      std::mt19937 rng(11);
      Operands ops = makeOperands(test, rng);
      std::vector<float> first;
      for (int threads : {1, 2, 3}) {
        linalg::forceNumThreads(threads);
        ASSERT_EQ(linalg::numThreads(), threads);
        std::vector<float> result = ops.c;
        linalg::gemm(test.transA, test.transB, test.m, test.n, test.k,
                     test.alpha, ops.a.data(), ops.lda, ops.b.data(), ops.ldb,
                     test.beta, result.data(), ops.ldc);
        if (first.empty())
          first = result;
        else
          ASSERT_EQ(0, std::memcmp(first.data(), result.data(),
                                   result.size() * sizeof(float)))
              << threads << " threads, " << test.m << "x" << test.n;
      }
    }
  }
}

/// The epilogue must give exactly what the separate steps give: C set to
/// beta * C plus the bias of its row, the product summed onto it (beta 1),
/// then Clip's comparisons. The products are seeded with NaN, infinities
/// and signed zeros, which the clamp must treat as Clip does.
TEST_F(GemmTest, EpilogueEqualsSeparatePassesBitForBit) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const FusedActivation clamps[] = {
      {0.0f, inf}, {0.0f, 6.0f}, {-0.25f, 0.25f}, {0.5f, -0.5f}};
  const Case cases[] = {
      {false, false, 16, 3025, 64, 1.0f, 0.0f, 0, 0, 0}, // split along n
      {false, false, 260, 49, 600, 1.0f, 0.0f, 0, 0, 5}, // along m, 3 k blocks
      {false, true, 13, 37, 9, 0.5f, 1.0f, 2, 1, 3},     // edge tiles, beta
      {true, false, 7, 5, 300, 1.0f, 0.0f, 0, 0, 0},
      {false, false, 9, 11, 0, 1.0f, 0.5f, 0, 0, 0},     // k = 0
      {false, false, 9, 11, 5, 0.0f, 0.0f, 0, 0, 0},     // alpha = 0
      {false, true, 1, 1000, 1280, 1.0f, 0.0f, 0, 3, 0}, // one row
      {false, false, 1, 77, 300, 0.5f, 1.0f, 0, 2, 0},
      // The kernel's every kind of last rows and columns, with the start
      // and the clamp done as it loads and stores C (beta 0).
      {false, false, 5, 61, 40, 1.0f, 0.0f, 0, 0, 2},
      {false, false, 3, 15, 33, 1.0f, 0.0f, 1, 0, 0},
      {true, true, 6, 7, 20, 0.5f, 0.0f, 0, 1, 1},
      {false, false, 2, 3, 700, 1.0f, 0.0f, 0, 0, 0}};
  for (linalg::GemmIsa isa : availableIsas()) {
    ASSERT_TRUE(linalg::forceGemmIsa(isa));
    for (const Case &test : cases) {
      std::mt19937 rng(7);
      Operands ops = makeOperands(test, rng);
      // Special values in A's first column reach whole rows of C (not
      // the last row, so a one-row product keeps ordinary values).
      const float specials[] = {nan, inf, -inf, 0.0f, -0.0f};
      for (int64_t i = 0; i < 5 && i < test.m - 1 && test.k > 0; ++i)
        ops.a[test.transA ? i : i * ops.lda] = specials[i];
      std::vector<float> bias(test.m);
      std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
      for (float &b : bias)
        b = dist(rng);
      bias[0] = -0.0f;
      for (const FusedActivation &clamp : clamps)
        for (bool withBias : {false, true}) {
          linalg::GemmEpilogue<float> epilogue{withBias ? bias.data() : nullptr,
                                               &clamp};
          std::vector<float> fused = ops.c, separate = ops.c;
          linalg::gemm(test.transA, test.transB, test.m, test.n, test.k,
                       test.alpha, ops.a.data(), ops.lda, ops.b.data(), ops.ldb,
                       test.beta, fused.data(), ops.ldc, true, epilogue);
          float beta = test.beta;
          if (withBias) {
            for (int64_t i = 0; i < test.m; ++i)
              for (int64_t j = 0; j < test.n; ++j) {
                float &v = separate[i * ops.ldc + j];
                v = beta == 0.0f ? bias[i] : beta * v + bias[i];
              }
            beta = 1.0f;
          }
          linalg::gemm(test.transA, test.transB, test.m, test.n, test.k,
                       test.alpha, ops.a.data(), ops.lda, ops.b.data(), ops.ldb,
                       beta, separate.data(), ops.ldc);
          for (int64_t i = 0; i < test.m; ++i)
            for (int64_t j = 0; j < test.n; ++j) {
              float &v = separate[i * ops.ldc + j];
              v = v < clamp.lo ? clamp.lo : v;
              v = v > clamp.hi ? clamp.hi : v;
            }
          ASSERT_EQ(0, std::memcmp(fused.data(), separate.data(),
                                   fused.size() * sizeof(float)))
              << test.m << "x" << test.n << "x" << test.k << " clamp ["
              << clamp.lo << ", " << clamp.hi << "] bias " << withBias;
        }
    }
  }
}

/// op(B) produced by a packer (how Conv feeds the GEMM) gives the same
/// bits as the plain matrix, whichever way the product splits, and on the
/// pool or not.
TEST_F(GemmTest, PackerEqualsPlainMatrixBitForBit) {
  const Case cases[] = {{false, false, 64, 3000, 300, 1.0f, 0.0f, 0, 0, 0},
                        {false, false, 300, 50, 600, 1.0f, 0.0f, 3, 0, 0},
                        {true, false, 13, 29, 7, 1.0f, 0.0f, 1, 2, 0},
                        {false, true, 9, 700, 257, 1.0f, 0.0f, 0, 1, 0}};
  for (linalg::GemmIsa isa : availableIsas()) {
    ASSERT_TRUE(linalg::forceGemmIsa(isa));
    for (const Case &test : cases) {
      std::mt19937 rng(3);
      Operands ops = makeOperands(test, rng);
      // op(B)(p, j) element by element: the packer's contract.
      int64_t calls = 0;
      linalg::PackBFn<float> packer = [&](int64_t row, int64_t rows,
                                          int64_t col, int64_t cols, float *dst,
                                          int64_t panel, int64_t panelStride) {
        ++calls;
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t j = 0; j < cols; ++j) {
            int64_t p = row + r;
            dst[j / panel * panelStride + r * panel + j % panel] =
                test.transB ? ops.b[(col + j) * ops.ldb + p]
                            : ops.b[p * ops.ldb + col + j];
          }
      };
      std::vector<float> plain(ops.c.size(), 0.0f);
      linalg::gemm(test.transA, test.transB, test.m, test.n, test.k, 1.0f,
                   ops.a.data(), ops.lda, ops.b.data(), ops.ldb, 0.0f,
                   plain.data(), ops.ldc);
      for (bool parallel : {true, false}) {
        linalg::GemmOperands<float> operands;
        operands.transA = test.transA;
        operands.a = ops.a.data();
        operands.lda = ops.lda;
        operands.packB = &packer;
        std::vector<float> result(ops.c.size(), 0.0f);
        calls = 0;
        linalg::gemm(test.m, test.n, test.k, 1.0f, operands, 0.0f,
                     result.data(), ops.ldc, parallel);
        EXPECT_GT(calls, 0);
        ASSERT_EQ(0, std::memcmp(plain.data(), result.data(),
                                 plain.size() * sizeof(float)))
            << test.m << "x" << test.n << "x" << test.k
            << (parallel ? " parallel" : "");
      }
    }
  }
}

/// op(A) packed ahead (a Conv's constant weights) gives the bits of the
/// product that packs it itself, on the pool or not, both ways the
/// product splits.
TEST_F(GemmTest, PackedAEqualsPackingPerProductBitForBit) {
  const Case cases[] = {{false, false, 64, 3000, 300, 1.0f, 0.0f, 0, 0, 0},
                        {false, false, 512, 49, 1000, 1.0f, 0.0f, 5, 0, 0},
                        {true, false, 37, 29, 170, 1.0f, 1.0f, 3, 1, 2}};
  for (linalg::GemmIsa isa : availableIsas()) {
    ASSERT_TRUE(linalg::forceGemmIsa(isa));
    for (const Case &test : cases) {
      std::mt19937 rng(5);
      Operands ops = makeOperands(test, rng);
      std::vector<float> plain = ops.c;
      linalg::gemm(test.transA, test.transB, test.m, test.n, test.k, 1.0f,
                   ops.a.data(), ops.lda, ops.b.data(), ops.ldb, test.beta,
                   plain.data(), ops.ldc);
      auto packed =
          linalg::packA(test.transA, ops.a.data(), ops.lda, test.m, test.k);
      for (bool parallel : {true, false}) {
        linalg::GemmOperands<float> operands;
        operands.transA = test.transA;
        operands.a = ops.a.data();
        operands.lda = ops.lda;
        operands.transB = test.transB;
        operands.b = ops.b.data();
        operands.ldb = ops.ldb;
        operands.packedA = packed.get();
        std::vector<float> result = ops.c;
        linalg::gemm(test.m, test.n, test.k, 1.0f, operands, test.beta,
                     result.data(), ops.ldc, parallel);
        ASSERT_EQ(0, std::memcmp(plain.data(), result.data(),
                                 plain.size() * sizeof(float)))
            << test.m << "x" << test.n << "x" << test.k
            << (parallel ? " parallel" : "");
      }
    }
  }
}

/// op(A) packed in another Eigen build, whose depth blocks differ, is
/// packed again rather than read.
TEST_F(GemmTest, PackedAFromAnotherBuildIsIgnored) {
  const Case test = {false, false, 64, 500, 700, 1.0f, 0.0f, 0, 0, 0};
  std::mt19937 rng(6);
  Operands ops = makeOperands(test, rng);
  auto packIn = [&](linalg::GemmIsa isa) {
    EXPECT_TRUE(linalg::forceGemmIsa(isa));
    return linalg::packA(false, ops.a.data(), ops.lda, test.m, test.k);
  };
  int pairs = 0;
  for (linalg::GemmIsa packedIn : availableIsas())
    for (linalg::GemmIsa runIn : availableIsas()) {
      auto packed = packIn(packedIn);
      if (packed->depthBlock == packIn(runIn)->depthBlock)
        continue;
      ++pairs;
      std::vector<float> plain = ops.c, result = ops.c;
      linalg::gemm(false, false, test.m, test.n, test.k, 1.0f, ops.a.data(),
                   ops.lda, ops.b.data(), ops.ldb, 0.0f, plain.data(), ops.ldc);
      linalg::GemmOperands<float> operands;
      operands.a = ops.a.data();
      operands.lda = ops.lda;
      operands.b = ops.b.data();
      operands.ldb = ops.ldb;
      operands.packedA = packed.get();
      linalg::gemm(test.m, test.n, test.k, 1.0f, operands, 0.0f, result.data(),
                   ops.ldc);
      ASSERT_EQ(0, std::memcmp(plain.data(), result.data(),
                               plain.size() * sizeof(float)))
          << linalg::gemmIsaName();
    }
  if (pairs == 0)
    GTEST_SKIP() << "no two Eigen builds this CPU runs block K=700 apart";
}

/// The double products: Eigen's too, checked against long double sums.
TEST_F(GemmTest, DoubleProductsEveryIsa) {
  for (linalg::GemmIsa isa : availableIsas()) {
    ASSERT_TRUE(linalg::forceGemmIsa(isa));
    std::mt19937 rng(9);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    const int64_t shapes[][3] = {
        {1, 1, 1}, {7, 5, 3}, {33, 17, 300}, {1, 900, 700}, {400, 300, 200}};
    for (const auto &shape : shapes) {
      int64_t m = shape[0], n = shape[1], k = shape[2];
      std::vector<double> a(m * k), b(n * k), c(m * n);
      for (std::vector<double> *values : {&a, &b, &c})
        for (double &x : *values)
          x = dist(rng);
      std::vector<double> result = c;
      // op(B) transposed, beta 0.5.
      linalg::gemm(false, true, m, n, k, 2.0, a.data(), k, b.data(), k, 0.5,
                   result.data(), n);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          long double sum = 0;
          for (int64_t p = 0; p < k; ++p)
            sum += (long double)a[i * k + p] * b[j * k + p];
          double expected = double(2 * sum + 0.5L * c[i * n + j]);
          ASSERT_NEAR(result[i * n + j], expected, 1e-14 * (k + 2))
              << m << "x" << n << "x" << k << " at " << i << "," << j;
        }
    }
  }
}

} // namespace
