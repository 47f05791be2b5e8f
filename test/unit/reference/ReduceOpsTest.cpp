//===- ReduceOpsTest.cpp - The reduction kernels --------------------------===//
//
// Edge cases beyond the ONNX backend tests (ShapeBackendTest): integer
// wrap-around and truncation, NaN, empty reductions, axes as input or
// attribute, and a ResNet-sized global average. Expected values are
// ONNX's (numpy's).
//
//===----------------------------------------------------------------------===//

#include "mncc/reference/SimpleContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace mncc::reference;

namespace {

using Shape = std::vector<int64_t>;
using Ints = std::vector<int64_t>;

Tensor i64(Shape shape, Ints values) {
  return Tensor::fromVector(DType::Int64, shape, values);
}
Tensor i32(Shape shape, std::vector<int32_t> values) {
  return Tensor::fromVector(DType::Int32, shape, values);
}
Tensor f32(Shape shape, std::vector<float> values) {
  return Tensor::fromVector(DType::Float32, shape, values);
}

Tensor runOk(SimpleKernelContext &context) {
  Status status = context.run();
  EXPECT_TRUE(status.ok()) << status.message();
  return context.outputTensor(0);
}

/// Reduces every axis of `data` (no keepdims) with `op`.
Tensor reduceAll(const std::string &op, Tensor data) {
  SimpleKernelContext context(op, {data}, 1);
  context.setInt("keepdims", 0);
  return runOk(context);
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(ReferenceReduce, IntegersWrapAndTruncateLikeNumpy) {
  int32_t max = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(reduceAll("ReduceSum", i32({2}, {max, 1})).toVector<int32_t>(),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(reduceAll("ReduceMean", i32({2}, {1, 2})).toVector<int32_t>(),
            (std::vector<int32_t>{1}));
  EXPECT_EQ(reduceAll("ReduceMean", i32({2}, {-1, -2})).toVector<int32_t>(),
            (std::vector<int32_t>{-1}));
  EXPECT_EQ(reduceAll("ReduceL2", i64({2}, {3, 4})).toVector<int64_t>(),
            (Ints{5}));
  EXPECT_EQ(reduceAll("ReduceL1", i64({2}, {-3, 4})).toVector<int64_t>(),
            (Ints{7}));
  EXPECT_EQ(reduceAll("ReduceProd", i64({3}, {-2, 3, 4})).toVector<int64_t>(),
            (Ints{-24}));
  // Products and absolute values wrap too (no undefined overflow).
  int64_t big = int64_t(1) << 62, min64 = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(reduceAll("ReduceProd", i64({2}, {big, 4})).toVector<int64_t>(),
            (Ints{0}));
  EXPECT_EQ(reduceAll("ReduceL1", i64({1}, {min64})).toVector<int64_t>(),
            (Ints{min64}));
  EXPECT_EQ(reduceAll("ReduceMax",
                      Tensor::fromVector<uint8_t>(DType::UInt8, {2}, {7, 200}))
                .toVector<uint8_t>(),
            (std::vector<uint8_t>{200}));
}

TEST(ReferenceReduce, NaNPropagates) {
  Tensor data = f32({3}, {1, kNaN, 3});
  for (const char *op :
       {"ReduceMax", "ReduceMin", "ReduceSum", "ReduceLogSumExp"})
    EXPECT_TRUE(std::isnan(reduceAll(op, data).data<float>()[0])) << op;
}

TEST(ReferenceReduce, EmptyReductionsGiveTheIdentity) {
  auto reduceEmpty = [](const std::string &op, DType dtype) {
    SimpleKernelContext context(op, {Tensor(dtype, {0, 2})}, 1);
    context.setInts("axes", {0});
    Tensor out = runOk(context);
    EXPECT_EQ(out.shape(), (Shape{1, 2}));
    return out.elementAsDouble(1);
  };
  EXPECT_EQ(reduceEmpty("ReduceSum", DType::Float32), 0.0);
  EXPECT_EQ(reduceEmpty("ReduceProd", DType::Float32), 1.0);
  EXPECT_EQ(reduceEmpty("ReduceMax", DType::Float32), -kInf);
  EXPECT_EQ(reduceEmpty("ReduceMin", DType::Float64), kInf);
  EXPECT_EQ(reduceEmpty("ReduceMax", DType::Int32),
            std::numeric_limits<int32_t>::min());
  EXPECT_EQ(reduceEmpty("ReduceLogSumExp", DType::Float32), -kInf);
  EXPECT_TRUE(std::isnan(reduceEmpty("ReduceMean", DType::Float32)));
}

TEST(ReferenceReduce, AxesInputAttributeAndNoop) {
  Tensor data = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  SimpleKernelContext rows("ReduceSum", {data, i64({1}, {-1})}, 1);
  Tensor out = runOk(rows);
  EXPECT_EQ(out.shape(), (Shape{2, 1}));
  EXPECT_EQ(out.toVector<float>(), (std::vector<float>{6, 15}));
  SimpleKernelContext noop("ReduceSum", {data, i64({0}, {})}, 1);
  noop.setInt("noop_with_empty_axes", 1);
  out = runOk(noop);
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(out.data<float>(), data.data<float>());
  SimpleKernelContext all("ReduceSum", {data}, 1);
  out = runOk(all);
  EXPECT_EQ(out.shape(), (Shape{1, 1}));
  EXPECT_EQ(out.toVector<float>(), (std::vector<float>{21}));
  // Opset 17 reductions other than ReduceSum take axes as an attribute.
  SimpleKernelContext mean("ReduceMean", {data}, 1);
  mean.setInts("axes", {-2}).setInt("keepdims", 0);
  out = runOk(mean);
  EXPECT_EQ(out.shape(), (Shape{3}));
  EXPECT_EQ(out.toVector<float>(), (std::vector<float>{2.5f, 3.5f, 4.5f}));
  SimpleKernelContext squares("ReduceSumSquare", {data}, 1);
  squares.setInts("axes", {1}).setInt("keepdims", 0);
  EXPECT_EQ(runOk(squares).toVector<float>(), (std::vector<float>{14, 77}));

  SimpleKernelContext repeated("ReduceSum", {data, i64({2}, {1, -1})}, 1);
  Status status = repeated.run();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "ReduceSum: axis -1 repeated");
  SimpleKernelContext range("ReduceMax", {data}, 1);
  range.setInts("axes", {2});
  status = range.run();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "ReduceMax: axis 2 out of range for rank 2");
  SimpleKernelContext text("ReduceMin", {Tensor(DType::String, {2})}, 1);
  status = text.run();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "ReduceMin: unsupported type string");
}

TEST(ReferenceReduce, LogSumExpDoesNotOverflowAndHalfRounds) {
  // exp(1000) overflows even a double; the result is 1000 + log 2.
  Tensor big = f32({2}, {1000, 1000});
  EXPECT_FLOAT_EQ(reduceAll("ReduceLogSumExp", big).data<float>()[0],
                  1000.0f + std::log(2.0f));
  EXPECT_FLOAT_EQ(reduceAll("ReduceLogSum", f32({2}, {1, 2})).data<float>()[0],
                  std::log(3.0f));
  Tensor half(DType::Float16, {2});
  half.data<Float16>()[0] = Float16(1.5f);
  half.data<Float16>()[1] = Float16(2.25f);
  Tensor sum = reduceAll("ReduceSum", half);
  EXPECT_EQ(sum.dtype(), DType::Float16);
  EXPECT_EQ(float(sum.data<Float16>()[0]), 3.75f);
}

TEST(ReferenceReduce, GlobalAverageOfAResNetFeatureMap) {
  // 1x2048x7x7, channel c filled with c: the mean over H and W is c.
  Tensor data(DType::Float32, {1, 2048, 7, 7});
  for (int64_t i = 0; i < data.numElements(); ++i)
    data.data<float>()[i] = static_cast<float>(i / 49);
  SimpleKernelContext context("ReduceMean", {data}, 1);
  context.setInts("axes", {2, 3});
  Tensor out = runOk(context);
  ASSERT_EQ(out.shape(), (Shape{1, 2048, 1, 1}));
  for (int64_t c = 0; c < 2048; ++c)
    ASSERT_EQ(out.data<float>()[c], static_cast<float>(c)) << c;
}

} // namespace
