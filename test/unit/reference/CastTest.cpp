//===- CastTest.cpp - Cast and CastLike -----------------------------------===//

#include "mncc/reference/SimpleContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace mncc::reference;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

template <typename T>
Tensor make(std::vector<int64_t> shape, std::vector<T> values) {
  return Tensor::fromVector<T>(dtypeOf<T>(), std::move(shape), values);
}

Tensor cast(const Tensor &x, DType to) {
  SimpleKernelContext context("Cast", {Value(x)}, 1);
  context.setInt("to", static_cast<int64_t>(to));
  Status status = context.run();
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(context.outputTensor(0).dtype(), to);
  EXPECT_EQ(context.outputTensor(0).shape(), x.shape());
  return context.outputTensor(0);
}

std::string castError(const Tensor &x, int64_t to) {
  SimpleKernelContext context("Cast", {Value(x)}, 1);
  context.setInt("to", to);
  Status status = context.run();
  EXPECT_FALSE(status.ok());
  return status.message();
}

TEST(Cast, FloatToIntegerTruncatesAndSaturates) {
  Tensor x = make<float>({6}, {2.9f, -2.9f, kNaN, 1e10f, -1e10f, -0.5f});
  EXPECT_EQ(cast(x, DType::Int32).toVector<int32_t>(),
            (std::vector<int32_t>{2, -2, 0, INT32_MAX, INT32_MIN, 0}));
  EXPECT_EQ(cast(x, DType::UInt8).toVector<uint8_t>(),
            (std::vector<uint8_t>{2, 0, 0, 255, 0, 0}));
  EXPECT_EQ(cast(make<double>({1}, {9.3e18}), DType::Int64).toVector<int64_t>(),
            (std::vector<int64_t>{INT64_MAX}));
  // Any nonzero value, NaN included, is true.
  EXPECT_EQ(
      cast(make<float>({3}, {0, -0.5f, kNaN}), DType::Bool).toVector<bool>(),
      (std::vector<bool>{false, true, true}));
}

TEST(Cast, IntegersWrapAndWiden) {
  EXPECT_EQ(
      cast(make<int32_t>({3}, {300, -1, 127}), DType::Int8).toVector<int8_t>(),
      (std::vector<int8_t>{44, -1, 127}));
  EXPECT_EQ(cast(make<int8_t>({1}, {-1}), DType::UInt64).toVector<uint64_t>(),
            (std::vector<uint64_t>{UINT64_MAX}));
  EXPECT_EQ(
      cast(make<bool>({2}, {true, false}), DType::Float64).toVector<double>(),
      (std::vector<double>{1, 0}));
  EXPECT_EQ(cast(make<int64_t>({1}, {(int64_t(1) << 53) + 1}), DType::Float64)
                .toVector<double>(),
            (std::vector<double>{9007199254740992.0}));
}

TEST(Cast, HalfTypesRoundOnceToNearestEven) {
  // ONNX's test_cast_FLOAT_to_FLOAT16 rounds to nearest even.
  Tensor h = cast(make<float>({2}, {1.0f + std::ldexp(1.0f, -11), 65520.0f}),
                  DType::Float16);
  EXPECT_EQ(h.data<Float16>()[0].bits, 0x3c00);
  EXPECT_EQ(h.data<Float16>()[1].bits, 0x7c00);
  // Just above a float16 tie: double -> float alone would land on the tie
  // and then round to even (0x3c00); the correct result rounds up.
  double aboveTie = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(cast(make<double>({1}, {aboveTie}), DType::Float16)
                .data<Float16>()[0]
                .bits,
            0x3c01);
  double aboveBfTie = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);
  EXPECT_EQ(cast(make<double>({1}, {aboveBfTie}), DType::BFloat16)
                .data<BFloat16>()[0]
                .bits,
            0x3f81);
  Tensor back = cast(h, DType::Float32);
  EXPECT_EQ(back.toVector<float>(), (std::vector<float>{1.0f, kInf}));
  Tensor b(DType::BFloat16, {1});
  b.data<BFloat16>()[0] = BFloat16(-2.5f);
  EXPECT_EQ(cast(b, DType::Int32).toVector<int32_t>(),
            (std::vector<int32_t>{-2}));
  EXPECT_EQ(cast(b, DType::Float16).data<Float16>()[0].bits,
            Float16(-2.5f).bits);
}

TEST(Cast, StringsToNumbers) {
  // ONNX's test_cast_STRING_to_FLOAT and the reserved literals.
  Tensor s = make<std::string>(
      {7}, {"0.47892547", "1e-3", "1E8", "INF", "+inf", "-INF", "NaN"});
  std::vector<float> f = cast(s, DType::Float32).toVector<float>();
  EXPECT_EQ(f[0], 0.47892547f);
  EXPECT_EQ(f[1], 1e-3f);
  EXPECT_EQ(f[2], 1e8f);
  EXPECT_EQ(f[3], kInf);
  EXPECT_EQ(f[4], kInf);
  EXPECT_EQ(f[5], -kInf);
  EXPECT_TRUE(std::isnan(f[6]));
  // Integers parse exactly, and a fraction truncates ("100.5" -> 100).
  EXPECT_EQ(cast(make<std::string>({3}, {"9007199254740993", "100.5", "-7"}),
                 DType::Int64)
                .toVector<int64_t>(),
            (std::vector<int64_t>{9007199254740993LL, 100, -7}));
  EXPECT_EQ(cast(make<std::string>({3}, {"true", "0", "2"}), DType::Bool)
                .toVector<bool>(),
            (std::vector<bool>{true, false, true}));
  EXPECT_EQ(cast(make<std::string>({1}, {"0.1"}), DType::Float16)
                .data<Float16>()[0]
                .bits,
            Float16(0.1f).bits);
  EXPECT_EQ(castError(make<std::string>({1}, {"Hello World!"}), 1),
            "Cast: cannot read 'Hello World!' as float");
}

TEST(Cast, NumbersToStrings) {
  // ONNX's test_cast_FLOAT_to_STRING: the shortest form that reads back.
  EXPECT_EQ(cast(make<float>(
                     {6}, {0.9767611f, 0.039187793f, 0.1f, 100, 1e-5f, -kInf}),
                 DType::String)
                .toVector<std::string>(),
            (std::vector<std::string>{"0.9767611", "0.039187793", "0.1", "100",
                                      "1e-05", "-INF"}));
  EXPECT_EQ(cast(make<double>({2}, {0.1, kNaN}), DType::String)
                .toVector<std::string>(),
            (std::vector<std::string>{"0.1", "NaN"}));
  Tensor h(DType::Float16, {1});
  h.data<Float16>()[0] = Float16(0.1f);
  EXPECT_EQ(cast(h, DType::String).toVector<std::string>(),
            (std::vector<std::string>{"0.1"}));
  EXPECT_EQ(
      cast(make<int8_t>({2}, {-42, 7}), DType::String).toVector<std::string>(),
      (std::vector<std::string>{"-42", "7"}));
  EXPECT_EQ(cast(make<bool>({2}, {true, false}), DType::String)
                .toVector<std::string>(),
            (std::vector<std::string>{"1", "0"}));
  // And back: the text reads back to the same value.
  Tensor x = make<float>({2}, {3.14159274f, -1.0e-30f});
  EXPECT_EQ(cast(cast(x, DType::String), DType::Float32).toVector<float>(),
            x.toVector<float>());
}

TEST(Cast, EveryPairOfTypes) {
  // 0, 1 and 3 exist in every type (bool keeps 0 and 1, 3 becomes true),
  // so each of the 14 x 14 casts must bring them through unchanged.
  const DType types[] = {DType::Float32, DType::UInt8,   DType::Int8,
                         DType::UInt16,  DType::Int16,   DType::Int32,
                         DType::Int64,   DType::String,  DType::Bool,
                         DType::Float16, DType::Float64, DType::UInt32,
                         DType::UInt64,  DType::BFloat16};
  Tensor source = make<double>({3}, {0, 1, 3});
  for (DType from : types) {
    Tensor x = cast(source, from);
    for (DType to : types) {
      Tensor back = cast(cast(x, to), DType::Float64);
      bool viaBool = from == DType::Bool || to == DType::Bool;
      EXPECT_EQ(back.toVector<double>(),
                (std::vector<double>{0, 1, viaBool ? 1.0 : 3.0}))
          << dtypeName(from) << " -> " << dtypeName(to);
    }
  }
}

TEST(Cast, SameTypeSharesAndBadTargetsFail) {
  Tensor x = make<float>({2}, {1, 2});
  EXPECT_EQ(cast(x, DType::Float32).data<float>(), x.data<float>());
  EXPECT_EQ(castError(x, 99), "Cast: 'to' = 99 is not an ONNX element type");
  EXPECT_EQ(castError(x, static_cast<int64_t>(DType::Complex64)),
            "Cast: cannot cast to complex64");
  SimpleKernelContext noTo("Cast", {Value(x)}, 1);
  EXPECT_EQ(noTo.run().message(), "Cast: attribute 'to' is required");
}

TEST(Cast, CastLikeTakesTheSecondInputsType) {
  SimpleKernelContext context(
      "CastLike",
      {Value(make<double>({2}, {1.5, -2.5})), Value(make<int16_t>({0}, {}))},
      1);
  Status status = context.run();
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(context.outputTensor(0).toVector<int16_t>(),
            (std::vector<int16_t>{1, -2}));
  SimpleKernelContext missing("CastLike", {Value(make<double>({1}, {1.5}))}, 1);
  EXPECT_EQ(missing.run().message(),
            "CastLike: input 1 is missing or not a tensor");
}

} // namespace
