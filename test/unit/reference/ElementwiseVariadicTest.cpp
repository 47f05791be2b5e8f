//===- ElementwiseVariadicTest.cpp - Sum, Mean, Max, Min, Where, Expand ---===//

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

Tensor run(const std::string &op, std::vector<Value> inputs) {
  SimpleKernelContext context(op, std::move(inputs), 1);
  Status status = context.run();
  EXPECT_TRUE(status.ok()) << status.message();
  return context.outputTensor(0);
}
std::string error(const std::string &op, std::vector<Value> inputs) {
  SimpleKernelContext context(op, std::move(inputs), 1);
  Status status = context.run();
  EXPECT_FALSE(status.ok());
  return status.message();
}

TEST(ElementwiseVariadic, SumMeanMaxMinExamples) {
  // ONNX's test_sum_example, test_mean_example, test_max_example and
  // test_min_example share these inputs.
  Tensor a = make<float>({3}, {3, 0, 2});
  Tensor b = make<float>({3}, {1, 3, 4});
  Tensor c = make<float>({3}, {2, 6, 6});
  EXPECT_EQ(run("Sum", {a, b, c}).toVector<float>(),
            (std::vector<float>{6, 9, 12}));
  EXPECT_EQ(run("Mean", {a, b, c}).toVector<float>(),
            (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(run("Max", {a, b, c}).toVector<float>(),
            (std::vector<float>{3, 6, 6}));
  EXPECT_EQ(run("Min", {a, b, c}).toVector<float>(),
            (std::vector<float>{1, 0, 2}));
  // One input is a copy.
  EXPECT_EQ(run("Sum", {a}).toVector<float>(), (std::vector<float>{3, 0, 2}));
}

TEST(ElementwiseVariadic, InputsBroadcastTogether) {
  Tensor column = make<int32_t>({2, 1}, {10, -10});
  Tensor row = make<int32_t>({3}, {1, 20, -30});
  Tensor scalar = make<int32_t>({}, {0});
  Tensor max = run("Max", {column, row, scalar});
  EXPECT_EQ(max.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(max.toVector<int32_t>(),
            (std::vector<int32_t>{10, 20, 10, 1, 20, 0}));
  EXPECT_EQ(run("Min", {row, column}).toVector<int32_t>(),
            (std::vector<int32_t>{1, 10, -30, -10, -10, -30}));
  EXPECT_EQ(
      run("Mean", {make<double>({2, 1}, {1, 2}), make<double>({2}, {3, 5})})
          .toVector<double>(),
      (std::vector<double>{2, 3, 2.5, 3.5}));
  EXPECT_EQ(
      error("Sum", {make<float>({2}, {1, 2}), make<float>({3}, {1, 2, 3})}),
      "Sum: shapes 2, 3 do not broadcast");
}

TEST(ElementwiseVariadic, MaxMinPropagateNaN) {
  Tensor a = make<float>({3}, {kNaN, 1, 5});
  Tensor b = make<float>({3}, {1, kNaN, 2});
  std::vector<float> max = run("Max", {a, b}).toVector<float>();
  EXPECT_TRUE(std::isnan(max[0]));
  EXPECT_TRUE(std::isnan(max[1]));
  EXPECT_EQ(max[2], 5);
  std::vector<float> min = run("Min", {b, a}).toVector<float>();
  EXPECT_TRUE(std::isnan(min[0]));
  EXPECT_TRUE(std::isnan(min[1]));
  EXPECT_EQ(min[2], 2);
}

TEST(ElementwiseVariadic, HalfSumRoundsOnce) {
  // 2048 + 1 + 1 in float16: rounding after each step would stay at 2048
  // (ties to even); accumulating in float and rounding once gives 2050.
  Tensor a(DType::Float16, {1}), b(DType::Float16, {1});
  a.data<Float16>()[0] = Float16(2048.0f);
  b.data<Float16>()[0] = Float16(1.0f);
  Tensor sum = run("Sum", {a, b, b});
  ASSERT_EQ(sum.dtype(), DType::Float16);
  EXPECT_EQ(float(sum.data<Float16>()[0]), 2050.0f);
  Tensor m(DType::BFloat16, {1});
  m.data<BFloat16>()[0] = BFloat16(3.0f);
  EXPECT_EQ(float(run("Mean", {m, m, m}).data<BFloat16>()[0]), 3.0f);
}

TEST(ElementwiseVariadic, TypeRules) {
  // Sum and Mean are for floating types only; Max and Min take integers.
  EXPECT_EQ(error("Sum", {make<int32_t>({1}, {1})}),
            "Sum: element type int32 is not supported");
  EXPECT_EQ(run("Max", {make<uint64_t>({2}, {1, UINT64_MAX}),
                        make<uint64_t>({2}, {2, 3})})
                .toVector<uint64_t>(),
            (std::vector<uint64_t>{2, UINT64_MAX}));
  EXPECT_EQ(error("Max", {make<float>({1}, {1}), make<double>({1}, {1})}),
            "Max: inputs have different types float and double");
  EXPECT_EQ(error("Min", {}), "Min: needs at least one input");
}

TEST(ElementwiseVariadic, WhereSelectsAndBroadcasts) {
  // ONNX's test_where_example.
  Tensor cond = make<bool>({2, 2}, {true, false, true, true});
  EXPECT_EQ(run("Where", {cond, make<float>({2, 2}, {1, 2, 3, 4}),
                          make<float>({2, 2}, {9, 8, 7, 6})})
                .toVector<float>(),
            (std::vector<float>{1, 8, 3, 4}));
  // A column condition, a row X and a scalar Y.
  Tensor picked =
      run("Where", {make<bool>({2, 1}, {true, false}),
                    make<int64_t>({3}, {1, 2, 3}), make<int64_t>({}, {-1})});
  EXPECT_EQ(picked.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(picked.toVector<int64_t>(),
            (std::vector<int64_t>{1, 2, 3, -1, -1, -1}));
  // Strings too.
  Tensor words = run("Where", {make<bool>({2}, {false, true}),
                               make<std::string>({2}, {"a", "b"}),
                               make<std::string>({1}, {"z"})});
  EXPECT_EQ(words.toVector<std::string>(),
            (std::vector<std::string>{"z", "b"}));
  EXPECT_EQ(error("Where", {make<int32_t>({1}, {1}), make<float>({1}, {1}),
                            make<float>({1}, {2})}),
            "Where: condition must be bool, got int32");
  EXPECT_EQ(error("Where",
                  {cond, make<float>({3}, {1, 2, 3}), make<float>({1}, {2})}),
            "Where: shapes 2x2, 3 and 1 do not broadcast");
}

TEST(ElementwiseVariadic, ExpandBroadcastsBothWays) {
  // ONNX's test_expand_dim_changed: 3x1 to (2, 1, 6) gives 2x3x6.
  Tensor x = make<float>({3, 1}, {1, 2, 3});
  Tensor y = run("Expand", {x, make<int64_t>({3}, {2, 1, 6})});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 3, 6}));
  std::vector<float> values = y.toVector<float>();
  EXPECT_EQ(values[0], 1);
  EXPECT_EQ(values[6], 2);
  EXPECT_EQ(values[17], 3);
  EXPECT_EQ(values[18], 1);
  EXPECT_EQ(values[35], 3);
  // ONNX's test_expand_dim_unchanged: a smaller shape keeps the input's.
  Tensor same = run("Expand", {x, make<int64_t>({2}, {3, 4})});
  EXPECT_EQ(same.shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(same.toVector<float>(),
            (std::vector<float>{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));
  Tensor strings =
      run("Expand", {make<std::string>({1}, {"s"}), make<int64_t>({1}, {2})});
  EXPECT_EQ(strings.toVector<std::string>(),
            (std::vector<std::string>{"s", "s"}));
  EXPECT_EQ(error("Expand", {x, make<int64_t>({2}, {4, 1})}),
            "Expand: input shape 3x1 does not broadcast with 4x1");
  EXPECT_EQ(error("Expand", {x, make<int32_t>({1}, {2})}),
            "Expand: shape must be a 1-D int64 tensor");
}

} // namespace
