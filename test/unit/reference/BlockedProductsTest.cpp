//===- BlockedProductsTest.cpp - Products summed block by block -----------===//
//
// The device reference's products: with blocks as long as K they are ONNX's
// Conv, Gemm and MatMul (checked against the registered kernels on random
// operands); with shorter blocks each block's sum is rounded into a single
// accumulator once, in K's order, from the bias on, so a sum that cancels
// across two blocks keeps what single loses (1e8 + 1 - 1e8 is 0 over two
// blocks, 1 in one), and a grouped convolution's blocks are counted from
// its group's first channel of the dense product.
//
//===----------------------------------------------------------------------===//

#include "NnTestUtil.h"

#include "mncc/reference/BlockedProducts.h"

#include <algorithm>
#include <random>

using namespace mncc::reference;
using namespace mncc::reference::nntest;

namespace {

std::vector<double> randoms(int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<double> values(count);
  for (double &value : values)
    value = float(uniform(rng));
  return values;
}

int64_t product(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  return count;
}

/// The blocked kernel and the registered one on the same context setup.
void expectLikeOnnx(
    const std::string &op, std::vector<std::vector<int64_t>> shapes,
    const std::function<void(SimpleKernelContext &)> &attributes,
    const std::function<Status(KernelContext &)> &blocked) {
  std::vector<Value> inputs;
  unsigned seed = 1;
  for (const auto &shape : shapes)
    inputs.push_back(
        Value(make(DType::Float32, shape, randoms(product(shape), seed++))));
  SimpleKernelContext onnx(op, inputs, 1), ours(op, inputs, 1);
  attributes(onnx);
  attributes(ours);
  Status status = onnx.run();
  ASSERT_TRUE(status.ok()) << status.message();
  status = blocked(ours);
  ASSERT_TRUE(status.ok()) << status.message();
  const Tensor &expected = onnx.outputTensor(0), &actual = ours.outputTensor(0);
  ASSERT_EQ(actual.dtype(), DType::Float64);
  ASSERT_EQ(actual.shape(), expected.shape());
  for (int64_t i = 0; i < expected.numElements(); ++i)
    EXPECT_NEAR(actual.elementAsDouble(i), expected.elementAsDouble(i), 1e-5)
        << op << " element " << i;
}

TEST(BlockedProducts, OneBlockIsOnnxConv) {
  // Strided, padded, dilated, grouped.
  expectLikeOnnx(
      "Conv", {{2, 6, 7, 9}, {4, 3, 3, 2}, {4}},
      [](SimpleKernelContext &context) {
        context.setInt("group", 2);
        context.setInts("strides", {2, 1});
        context.setInts("dilations", {1, 2});
        context.setInts("pads", {1, 0, 2, 1});
      },
      [](KernelContext &context) { return blockedConv(context, 1 << 20); });
  expectLikeOnnx(
      "Conv", {{1, 5, 6, 6}, {5, 1, 3, 3}},
      [](SimpleKernelContext &context) {
        context.setInt("group", 5);
        context.setString("auto_pad", "SAME_UPPER");
      },
      [](KernelContext &context) { return blockedConv(context, 1 << 20); });
}

TEST(BlockedProducts, OneBlockIsOnnxGemmAndMatMul) {
  expectLikeOnnx(
      "Gemm", {{7, 5}, {3, 7}, {3}},
      [](SimpleKernelContext &context) {
        context.setInt("transA", 1);
        context.setInt("transB", 1);
        context.setFloat("alpha", 0.5f);
        context.setFloat("beta", 2.0f);
      },
      [](KernelContext &context) {
        return blockedGemm(context, 1 << 20, /*alphaInB=*/false);
      });
  expectLikeOnnx(
      "MatMul", {{2, 1, 3, 5}, {4, 5, 6}}, [](SimpleKernelContext &) {},
      [](KernelContext &context) { return blockedMatMul(context, 1 << 20); });
  expectLikeOnnx(
      "MatMul", {{5}, {5, 6}}, [](SimpleKernelContext &) {},
      [](KernelContext &context) { return blockedMatMul(context, 1 << 20); });
}

TEST(BlockedProducts, EachBlockRoundsIntoSingle) {
  // A row 1e8, 1, -1e8 times ones: one block sums 1 exactly; blocks of
  // two round 1e8 + 1 to 1e8 (single's spacing there is 8) before -1e8.
  std::vector<Value> inputs = {
      Value(make(DType::Float32, {1, 3}, {1e8, 1, -1e8})),
      Value(make(DType::Float32, {3, 1}, {1, 1, 1}))};
  for (auto [block, expected] : {std::pair{3, 1.0}, std::pair{2, 0.0}}) {
    SimpleKernelContext gemm("Gemm", inputs, 1), matmul("MatMul", inputs, 1);
    ASSERT_TRUE(blockedGemm(gemm, block, false).ok());
    ASSERT_TRUE(blockedMatMul(matmul, block).ok());
    EXPECT_EQ(gemm.outputTensor(0).elementAsDouble(0), expected) << block;
    EXPECT_EQ(matmul.outputTensor(0).elementAsDouble(0), expected) << block;
  }
  // The accumulator starts at the bias: C = 1e8 with 1 and -1e8 in one
  // block keeps the 1 only when both sit in the block after the bias.
  inputs = {Value(make(DType::Float32, {1, 2}, {1, -1e8})),
            Value(make(DType::Float32, {2, 1}, {1, 1})),
            Value(make(DType::Float32, {1}, {1e8}))};
  SimpleKernelContext withBias("Gemm", inputs, 1);
  ASSERT_TRUE(blockedGemm(withBias, 2, false).ok());
  EXPECT_EQ(withBias.outputTensor(0).elementAsDouble(0), 1.0);
  SimpleKernelContext oneByOne("Gemm", inputs, 1);
  ASSERT_TRUE(blockedGemm(oneByOne, 1, false).ok());
  EXPECT_EQ(oneByOne.outputTensor(0).elementAsDouble(0), 0.0);
}

TEST(BlockedProducts, GroupedConvBlocksStartAtTheGroupsChannels) {
  // Two groups of 12 channels, blocks of 16 over all 24: group 1's
  // channels 12..23 are blocks 0 (12-15) and 1 (16-23). Its W row holds
  // 1e8 at channel 12, 1 at 15 and -1e8 at 16: the 1 is lost to the
  // rounding between the two blocks. Counted from the group's own first
  // channel all twelve would be one block and the sum 1.
  std::vector<double> w(2 * 12, 0.0);
  w[12 + 0] = 1e8;
  w[12 + 3] = 1;
  w[12 + 4] = -1e8;
  std::vector<Value> inputs = {
      Value(make(DType::Float32, {1, 24, 1, 1}, std::vector<double>(24, 1.0))),
      Value(make(DType::Float32, {2, 12, 1, 1}, w))};
  SimpleKernelContext context("Conv", inputs, 1);
  context.setInt("group", 2);
  ASSERT_TRUE(blockedConv(context, 16).ok());
  EXPECT_EQ(context.outputTensor(0).elementAsDouble(1), 0.0);
  SimpleKernelContext oneBlock("Conv", inputs, 1);
  oneBlock.setInt("group", 2);
  ASSERT_TRUE(blockedConv(oneBlock, 32).ok());
  EXPECT_EQ(oneBlock.outputTensor(0).elementAsDouble(1), 1.0);
}

// A Conv over packed taps (codegen's Conv with X in N, H, C, W): with
// block floats that change nothing it is ONNX's Conv, whatever the pixels
// per row and quads per window row; its X blocks are runs of 16 of one
// channel's input row, from the long word (4 halves) holding a group's
// first tap, zeros outside X.
TEST(BlockedProducts, PackedConvIsOnnxConv) {
  auto keep = [](double *, unsigned) {};
  // ResNet's first convolution, smaller: 4 pixels a row, 1 quad.
  expectLikeOnnx(
      "Conv", {{1, 3, 12, 16}, {16, 3, 7, 7}, {16}},
      [](SimpleKernelContext &context) {
        context.setInts("strides", {2, 2});
        context.setInts("pads", {3, 3, 3, 3});
      },
      [&](KernelContext &context) {
        return blockedPackedConv(context, 16, 4, 1, keep);
      });
  // Grouped, dilated, stride 3, 2 pixels over 2 quads of 8 (single).
  expectLikeOnnx(
      "Conv", {{2, 4, 9, 23}, {8, 2, 3, 3}},
      [](SimpleKernelContext &context) {
        context.setInt("group", 2);
        context.setInts("strides", {1, 3});
        context.setInts("dilations", {2, 2});
        context.setInts("pads", {2, 1, 0, 2});
      },
      [&](KernelContext &context) {
        return blockedPackedConv(context, 8, 2, 2, keep);
      });
}

TEST(BlockedProducts, PackedConvBlocksAreRunsOfAnInputRow) {
  // X[0, 0, 0, w] = w + 1 (one channel, one row), W ones, pads 3, stride
  // 2, 4 pixels a row: the first group's window starts at w = -3, in the
  // long word of w = -4 .. -1, so its block is 4 zeros, then w 0 .. 11;
  // the next group's starts 8 elements on.
  std::vector<double> xs(16);
  for (int64_t w = 0; w < 16; ++w)
    xs[size_t(w)] = double(w + 1);
  std::vector<Value> inputs = {
      Value(make(DType::Float32, {1, 1, 1, 16}, xs)),
      Value(make(DType::Float32, {4, 1, 1, 7}, std::vector<double>(28, 1.0)))};
  SimpleKernelContext context("Conv", inputs, 1);
  context.setInts("strides", {1, 2});
  context.setInts("pads", {0, 3, 0, 3});
  std::vector<std::vector<double>> xBlocks;
  Status status =
      blockedPackedConv(context, 16, 4, 1, [&](double *values, unsigned n) {
        std::vector<double> block(values, values + n);
        // W's blocks hold only ones and zeros.
        if (std::any_of(block.begin(), block.end(),
                        [](double v) { return v > 1; }))
          xBlocks.push_back(block);
      });
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(xBlocks.size(), 2u);
  std::vector<double> first(16, 0.0), second(16, 0.0);
  for (int64_t e = 4; e < 16; ++e)
    first[size_t(e)] = double(e - 4 + 1);
  for (int64_t e = 0; e < 12; ++e)
    second[size_t(e)] = double(e + 4 + 1);
  EXPECT_EQ(xBlocks[0], first);
  EXPECT_EQ(xBlocks[1], second);
  // Y[0, m, 0, 0] sums w -3 .. 3: 1 + 2 + 3 + 4.
  EXPECT_EQ(context.outputTensor(0).elementAsDouble(0), 10.0);
}

TEST(BlockedProducts, BadOperandsAreErrors) {
  std::vector<Value> inputs = {
      Value(make(DType::Float32, {2, 3}, randoms(6, 1))),
      Value(make(DType::Float32, {4, 2}, randoms(8, 2)))};
  SimpleKernelContext gemm("Gemm", inputs, 1);
  EXPECT_FALSE(blockedGemm(gemm, 16, false).ok());
  SimpleKernelContext matmul("MatMul", inputs, 1);
  EXPECT_FALSE(blockedMatMul(matmul, 16).ok());
  SimpleKernelContext conv("Conv", inputs, 1);
  EXPECT_FALSE(blockedConv(conv, 16).ok());
}

} // namespace
