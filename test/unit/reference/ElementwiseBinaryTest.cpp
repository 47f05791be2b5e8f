//===- ElementwiseBinaryTest.cpp - Binary elementwise kernels -------------===//

#include "mncc/reference/SimpleContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace mncc::reference;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

template <typename T>
Tensor make(std::vector<int64_t> shape, std::vector<T> values) {
  return Tensor::fromVector<T>(dtypeOf<T>(), std::move(shape), values);
}

/// Runs a binary operator, expecting success, and returns its output.
Tensor run(SimpleKernelContext &context) {
  Status status = context.run();
  EXPECT_TRUE(status.ok()) << status.message();
  return context.outputTensor(0);
}
Tensor run(const std::string &op, const Tensor &a, const Tensor &b) {
  SimpleKernelContext context(op, {Value(a), Value(b)}, 1);
  return run(context);
}
std::string error(const std::string &op, const Tensor &a, const Tensor &b) {
  SimpleKernelContext context(op, {Value(a), Value(b)}, 1);
  Status status = context.run();
  EXPECT_FALSE(status.ok());
  return status.message();
}

TEST(ElementwiseBinary, ArithmeticBroadcasts) {
  Tensor a = make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor row = make<float>({3}, {10, 20, 30});
  Tensor column = make<float>({2, 1}, {100, 200});
  Tensor sum = run("Add", a, row);
  EXPECT_EQ(sum.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(sum.toVector<float>(),
            (std::vector<float>{11, 22, 33, 14, 25, 36}));
  // Both sides broadcast: 2x1 against 3 gives 2x3.
  EXPECT_EQ(run("Sub", column, row).toVector<float>(),
            (std::vector<float>{90, 80, 70, 190, 180, 170}));
  // Scalar on the left.
  EXPECT_EQ(run("Mul", make<float>({}, {2}), a).toVector<float>(),
            (std::vector<float>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(run("Div", a, column).toVector<float>(),
            (std::vector<float>{0.01f, 0.02f, 0.03f, 0.02f, 0.025f, 0.03f}));
  // Empty tensors broadcast too.
  Tensor empty = run("Add", make<float>({0, 3}, {}), row);
  EXPECT_EQ(empty.shape(), (std::vector<int64_t>{0, 3}));
}

TEST(ElementwiseBinary, IntegerDivisionTruncatesAndWraps) {
  Tensor a =
      make<int32_t>({6}, {7, -7, 7, -7, std::numeric_limits<int>::min(), 5});
  Tensor b = make<int32_t>({6}, {2, 2, -2, -2, -1, 0});
  // C truncation; MIN / -1 wraps; x / 0 is 0 like numpy.
  EXPECT_EQ(
      run("Div", a, b).toVector<int32_t>(),
      (std::vector<int32_t>{3, -3, -3, 3, std::numeric_limits<int>::min(), 0}));
  // ONNX's test_div_uint8.
  EXPECT_EQ(
      run("Div", make<uint8_t>({3}, {16, 6, 3}), make<uint8_t>({3}, {11, 5, 1}))
          .toVector<uint8_t>(),
      (std::vector<uint8_t>{1, 1, 3}));
  // Products of uint16 overflow int after promotion; they must wrap.
  EXPECT_EQ(
      run("Mul", make<uint16_t>({1}, {65535}), make<uint16_t>({1}, {65535}))
          .toVector<uint16_t>(),
      (std::vector<uint16_t>{1}));
  EXPECT_EQ(run("Add", make<int64_t>({1}, {INT64_MAX}), make<int64_t>({1}, {1}))
                .toVector<int64_t>(),
            (std::vector<int64_t>{INT64_MIN}));
}

TEST(ElementwiseBinary, ModFollowsTheDivisorOrTheDividend) {
  // ONNX's test_mod_mixed_sign_int32: the sign of the divisor.
  Tensor a = make<int32_t>({6}, {-4, 7, 5, 4, -7, 8});
  Tensor b = make<int32_t>({6}, {2, -3, 8, -2, 3, 5});
  EXPECT_EQ(run("Mod", a, b).toVector<int32_t>(),
            (std::vector<int32_t>{0, -2, 5, 0, 2, 3}));
  SimpleKernelContext fmod("Mod", {Value(a), Value(b)}, 1);
  fmod.setInt("fmod", 1);
  EXPECT_EQ(run(fmod).toVector<int32_t>(),
            (std::vector<int32_t>{0, 1, 5, 0, -1, 3}));
  // ONNX's test_mod_mixed_sign_float32 (fmod=1).
  SimpleKernelContext floats(
      "Mod",
      {Value(make<float>({6}, {-4.3f, 7.2f, 5, 4.3f, -7.2f, 8})),
       Value(make<float>({6}, {2.1f, -3.4f, 8, -2.1f, 3.4f, 5}))},
      1);
  floats.setInt("fmod", 1);
  std::vector<float> expected = {-0.10000038f, 0.39999962f,  5,
                                 0.10000038f,  -0.39999962f, 3};
  std::vector<float> actual = run(floats).toVector<float>();
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], 1e-6f);
  EXPECT_EQ(error("Mod", make<float>({1}, {1}), make<float>({1}, {1})),
            "Mod: floating-point inputs need fmod=1");
  // ONNX's test_mod_broadcast.
  EXPECT_EQ(
      run("Mod", make<int32_t>({2, 2}, {6, 7, 8, -1}), make<int32_t>({1}, {7}))
          .toVector<int32_t>(),
      (std::vector<int32_t>{6, 0, 1, 6}));
}

TEST(ElementwiseBinary, PowMixesBaseAndExponentTypes) {
  // ONNX's test_pow_types_int32_float32 and test_pow_types_float32_int64.
  Tensor pi =
      run("Pow", make<int32_t>({3}, {1, 2, 3}), make<float>({3}, {4, 5, 6}));
  EXPECT_EQ(pi.dtype(), DType::Int32);
  EXPECT_EQ(pi.toVector<int32_t>(), (std::vector<int32_t>{1, 32, 729}));
  Tensor pf =
      run("Pow", make<float>({3}, {1, 2, 3}), make<int64_t>({3}, {4, 5, 6}));
  EXPECT_EQ(pf.dtype(), DType::Float32);
  EXPECT_EQ(pf.toVector<float>(), (std::vector<float>{1, 32, 729}));
  // ONNX's test_pow_bcast_array.
  EXPECT_EQ(run("Pow", make<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                make<float>({3}, {1, 2, 3}))
                .toVector<float>(),
            (std::vector<float>{1, 4, 27, 4, 25, 216}));
  // Integer powers: negative exponents truncate 1 / x^n.
  EXPECT_EQ(run("Pow", make<int64_t>({4}, {2, -1, 1, 3}),
                make<int64_t>({4}, {62, -3, -5, -1}))
                .toVector<int64_t>(),
            (std::vector<int64_t>{int64_t(1) << 62, -1, 1, 0}));
  EXPECT_EQ(run("Pow", make<float>({1}, {-8}), make<float>({1}, {0.5f}))
                .toVector<float>()
                .size(),
            1u);
  EXPECT_TRUE(
      std::isnan(run("Pow", make<float>({1}, {-8}), make<float>({1}, {0.5f}))
                     .toVector<float>()[0]));
  EXPECT_EQ(error("Pow", make<int8_t>({1}, {2}), make<int8_t>({1}, {2})),
            "Pow: element type int8 is not supported");
}

TEST(ElementwiseBinary, BitShift) {
  // ONNX's test_bitshift_left_uint8 and test_bitshift_right_uint64.
  SimpleKernelContext left("BitShift",
                           {Value(make<uint8_t>({3}, {16, 4, 1})),
                            Value(make<uint8_t>({3}, {1, 2, 3}))},
                           1);
  left.setString("direction", "LEFT");
  EXPECT_EQ(run(left).toVector<uint8_t>(), (std::vector<uint8_t>{32, 16, 8}));
  SimpleKernelContext right("BitShift",
                            {Value(make<uint64_t>({3}, {16, 4, 1})),
                             Value(make<uint64_t>({3}, {1, 2, 64}))},
                            1);
  right.setString("direction", "RIGHT");
  // Shifting by the full width gives 0.
  EXPECT_EQ(run(right).toVector<uint64_t>(), (std::vector<uint64_t>{8, 1, 0}));
  SimpleKernelContext none(
      "BitShift",
      {Value(make<uint8_t>({1}, {1})), Value(make<uint8_t>({1}, {1}))}, 1);
  EXPECT_EQ(none.run().message(),
            "BitShift: direction must be LEFT or RIGHT, got ''");
}

TEST(ElementwiseBinary, LogicAndComparisonsGiveBool) {
  Tensor p = make<bool>({4}, {false, false, true, true});
  Tensor q = make<bool>({4}, {false, true, false, true});
  EXPECT_EQ(run("And", p, q).toVector<bool>(),
            (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(run("Or", p, q).toVector<bool>(),
            (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(run("Xor", p, q).toVector<bool>(),
            (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(run("Equal", p, q).toVector<bool>(),
            (std::vector<bool>{true, false, false, true}));
  Tensor a = make<float>({4}, {1, 2, 3, kNaN});
  Tensor b = make<float>({}, {2});
  Tensor less = run("Less", a, b);
  EXPECT_EQ(less.dtype(), DType::Bool);
  EXPECT_EQ(less.toVector<bool>(),
            (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(run("LessOrEqual", a, b).toVector<bool>(),
            (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(run("Greater", a, b).toVector<bool>(),
            (std::vector<bool>{false, false, true, false}));
  EXPECT_EQ(run("GreaterOrEqual", a, b).toVector<bool>(),
            (std::vector<bool>{false, true, true, false}));
  // NaN equals nothing, itself included.
  EXPECT_EQ(run("Equal", a, a).toVector<bool>(),
            (std::vector<bool>{true, true, true, false}));
  Tensor words =
      Tensor::fromVector<std::string>(DType::String, {2}, {"cat", "dog"});
  EXPECT_EQ(run("Equal", words,
                Tensor::fromVector<std::string>(DType::String, {}, {"dog"}))
                .toVector<bool>(),
            (std::vector<bool>{false, true}));
  // Unsigned compare as unsigned.
  EXPECT_EQ(
      run("Less", make<uint32_t>({1}, {1}), make<uint32_t>({1}, {0xffffffffu}))
          .toVector<bool>(),
      (std::vector<bool>{true}));
  EXPECT_EQ(error("And", make<int32_t>({1}, {1}), make<int32_t>({1}, {1})),
            "And: element type int32 is not supported");
  EXPECT_EQ(error("Less", p, q), "Less: element type bool is not supported");
}

TEST(ElementwiseBinary, HalfTypesRoundOnce) {
  // 2049 is not a float16; 2048 + 1 computed in float rounds to even 2048,
  // and 2048 + 3 to 2052.
  Tensor a(DType::Float16, {2});
  Tensor b(DType::Float16, {2});
  a.data<Float16>()[0] = a.data<Float16>()[1] = Float16(2048.0f);
  b.data<Float16>()[0] = Float16(1.0f);
  b.data<Float16>()[1] = Float16(3.0f);
  Tensor sum = run("Add", a, b);
  ASSERT_EQ(sum.dtype(), DType::Float16);
  EXPECT_EQ(float(sum.data<Float16>()[0]), 2048.0f);
  EXPECT_EQ(float(sum.data<Float16>()[1]), 2052.0f);
  Tensor c(DType::BFloat16, {1});
  c.data<BFloat16>()[0] = BFloat16(3.0f);
  Tensor q = run("Div", c, c);
  ASSERT_EQ(q.dtype(), DType::BFloat16);
  EXPECT_EQ(float(q.data<BFloat16>()[0]), 1.0f);
}

TEST(ElementwiseBinary, PReluBroadcastsTheSlopeOnly) {
  Tensor x = make<float>({2, 3}, {-1, 2, -3, 4, -5, 6});
  Tensor slope = make<float>({3}, {0.5f, 1, 2});
  EXPECT_EQ(run("PRelu", x, slope).toVector<float>(),
            (std::vector<float>{-0.5f, 2, -6, 4, -5, 6}));
  Tensor ints =
      run("PRelu", make<int64_t>({2}, {-3, 3}), make<int64_t>({1}, {2}));
  EXPECT_EQ(ints.toVector<int64_t>(), (std::vector<int64_t>{-6, 3}));
  // The slope may not grow the output.
  EXPECT_EQ(error("PRelu", make<float>({3}, {1, 2, 3}),
                  make<float>({2, 3}, {1, 2, 3, 4, 5, 6})),
            "PRelu: slope shape 2x3 does not broadcast to input shape 3");
}

TEST(ElementwiseBinary, PReluAppliesAnOpset6SlopePerChannel) {
  // A [C] slope from an opset-6 model (like ONNX's pytorch-converted
  // test_PReLU_1d_multiparam) scales channel c of [N, C, W] by slope[c].
  Tensor x = make<float>({1, 3, 2}, {-1, 2, -1, -2, 4, -4});
  Tensor slope = make<float>({3}, {0.5f, 2, 0.25f});
  Tensor y = run("PRelu", x, slope);
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 3, 2}));
  EXPECT_EQ(y.toVector<float>(), (std::vector<float>{-0.5f, 2, -2, -4, 4, -1}));
  // Rank 4, [N, C, H, W] = [1, 2, 1, 3]: per channel, not per column.
  Tensor x4 = make<float>({1, 2, 1, 3}, {-1, -2, 3, -1, -2, 3});
  Tensor y4 = run("PRelu", x4, make<float>({2}, {0.5f, 3}));
  EXPECT_EQ(y4.toVector<float>(),
            (std::vector<float>{-0.5f, -1, 3, -3, -6, 3}));
  // A slope that matches neither reading is still an error.
  EXPECT_EQ(error("PRelu", x4, make<float>({4}, {1, 2, 3, 4})),
            "PRelu: slope shape 4 does not broadcast to input shape 1x2x1x3");
}

TEST(ElementwiseBinary, BadInputsAreErrors) {
  EXPECT_EQ(
      error("Add", make<float>({3}, {1, 2, 3}), make<float>({4}, {1, 2, 3, 4})),
      "Add: shapes 3 and 4 do not broadcast");
  EXPECT_EQ(error("Mul", make<float>({1}, {1}), make<double>({1}, {1})),
            "Mul: inputs have different types float and double");
  SimpleKernelContext missing("Sub", {Value(make<float>({1}, {1}))}, 1);
  EXPECT_EQ(missing.run().message(), "Sub: input 1 is missing or not a tensor");
  Tensor s = Tensor::fromVector<std::string>(DType::String, {1}, {"a"});
  EXPECT_EQ(error("Add", s, s), "Add: element type string is not supported");
}

} // namespace
