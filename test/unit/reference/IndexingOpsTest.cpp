//===- IndexingOpsTest.cpp - Gather, scatter, sort and select kernels -----===//
//
// Edge cases beyond the ONNX backend tests (ShapeBackendTest): strings,
// negative and out-of-range indices, duplicates under reductions, ties,
// NaN. Expected values are ONNX's (numpy's).
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
using Strings = std::vector<std::string>;

Tensor i64(Shape shape, Ints values) {
  return Tensor::fromVector(DType::Int64, shape, values);
}
Tensor i32(Shape shape, std::vector<int32_t> values) {
  return Tensor::fromVector(DType::Int32, shape, values);
}
Tensor f32(Shape shape, std::vector<float> values) {
  return Tensor::fromVector(DType::Float32, shape, values);
}
Tensor str(Shape shape, Strings values) {
  return Tensor::fromVector(DType::String, shape, values);
}
Tensor boolean(Shape shape, std::vector<bool> values) {
  Tensor tensor(DType::Bool, shape);
  for (size_t i = 0; i < values.size(); ++i)
    tensor.data<bool>()[i] = values[i];
  return tensor;
}

void expectError(SimpleKernelContext &context, const std::string &text) {
  Status status = context.run();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find(text), std::string::npos) << status.message();
}

Tensor runOk(SimpleKernelContext &context, size_t index = 0) {
  Status status = context.run();
  EXPECT_TRUE(status.ok()) << status.message();
  return context.outputTensor(index);
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(ReferenceIndexing, Gather) {
  Tensor data = str({2, 3}, {"a", "b", "c", "d", "e", "f"});
  SimpleKernelContext context("Gather", {data, i64({2}, {-1, 0})}, 1);
  context.setInt("axis", 1);
  Tensor out = runOk(context);
  EXPECT_EQ(out.shape(), (Shape{2, 2}));
  EXPECT_EQ(out.strings(), (Strings{"c", "a", "f", "d"}));
  SimpleKernelContext scalar("Gather", {i32({3}, {7, 8, 9}), i32({}, {1})}, 1);
  out = runOk(scalar);
  EXPECT_EQ(out.shape(), Shape{});
  EXPECT_EQ(out.toVector<int32_t>(), (std::vector<int32_t>{8}));
  SimpleKernelContext range("Gather", {data, i64({1}, {2})}, 1);
  expectError(range, "Gather: index 2 out of range for dimension 2");
  SimpleKernelContext type("Gather", {data, f32({1}, {0})}, 1);
  expectError(type, "Gather: input 1 must be int32 or int64");
}

TEST(ReferenceIndexing, GatherElementsAndND) {
  Tensor data = str({2, 2}, {"a", "b", "c", "d"});
  SimpleKernelContext elements("GatherElements",
                               {data, i64({2, 2}, {1, 0, 0, -2})}, 1);
  elements.setInt("axis", 1);
  EXPECT_EQ(runOk(elements).strings(), (Strings{"b", "a", "c", "c"}));
  SimpleKernelContext tooBig("GatherElements", {data, i64({3, 1}, {0, 0, 0})},
                             1);
  tooBig.setInt("axis", 1);
  expectError(tooBig, "GatherElements: indices 3x1 do not fit data 2x2");

  SimpleKernelContext batched("GatherND", {data, i64({2, 1}, {-1, 0})}, 1);
  batched.setInt("batch_dims", 1);
  Tensor out = runOk(batched);
  EXPECT_EQ(out.shape(), (Shape{2}));
  EXPECT_EQ(out.strings(), (Strings{"b", "c"}));
  SimpleKernelContext rows("GatherND", {data, i64({1, 1}, {1})}, 1);
  out = runOk(rows);
  EXPECT_EQ(out.shape(), (Shape{1, 2}));
  EXPECT_EQ(out.strings(), (Strings{"c", "d"}));
  SimpleKernelContext range("GatherND", {data, i64({1, 2}, {0, 2})}, 1);
  expectError(range, "GatherND: index 2 out of range");
}

TEST(ReferenceIndexing, ScatterElementsReductions) {
  Tensor zeros = f32({3}, {0, 0, 0});
  SimpleKernelContext add("ScatterElements",
                          {zeros, i64({3}, {1, 1, 2}), f32({3}, {1, 2, 3})}, 1);
  add.setString("reduction", "add");
  EXPECT_EQ(runOk(add).toVector<float>(), (std::vector<float>{0, 3, 3}));
  EXPECT_EQ(zeros.toVector<float>(), (std::vector<float>{0, 0, 0}));
  SimpleKernelContext mul(
      "ScatterElements",
      {i32({3}, {1, 2, 3}), i64({2}, {0, -3}), i32({2}, {4, 5})}, 1);
  mul.setString("reduction", "mul");
  EXPECT_EQ(runOk(mul).toVector<int32_t>(), (std::vector<int32_t>{20, 2, 3}));
  SimpleKernelContext max(
      "ScatterElements", {i32({2}, {1, 5}), i64({2}, {0, 1}), i32({2}, {3, 3})},
      1);
  max.setString("reduction", "max");
  EXPECT_EQ(runOk(max).toVector<int32_t>(), (std::vector<int32_t>{3, 5}));
  // 65535 * 65535 wraps to 1 in uint16, as numpy's does.
  SimpleKernelContext wrap(
      "ScatterElements",
      {Tensor::fromVector<uint16_t>(DType::UInt16, {1}, {65535}), i64({1}, {0}),
       Tensor::fromVector<uint16_t>(DType::UInt16, {1}, {65535})},
      1);
  wrap.setString("reduction", "mul");
  EXPECT_EQ(runOk(wrap).toVector<uint16_t>(), (std::vector<uint16_t>{1}));
  // The deprecated Scatter is ScatterElements without reduction.
  SimpleKernelContext text(
      "Scatter", {str({2}, {"a", "b"}), i64({1}, {1}), str({1}, {"z"})}, 1);
  EXPECT_EQ(runOk(text).strings(), (Strings{"a", "z"}));
  SimpleKernelContext addText(
      "ScatterElements", {str({2}, {"a", "b"}), i64({1}, {1}), str({1}, {"z"})},
      1);
  addText.setString("reduction", "add");
  expectError(addText, "ScatterElements: reduction 'add' on string");
  SimpleKernelContext range("ScatterElements",
                            {zeros, i64({1}, {3}), f32({1}, {1})}, 1);
  expectError(range, "ScatterElements: index 3 out of range");
}

TEST(ReferenceIndexing, ScatterND) {
  SimpleKernelContext add(
      "ScatterND",
      {i64({4}, {1, 2, 3, 4}), i64({3, 1}, {1, 1, 3}), i64({3}, {10, 20, 30})},
      1);
  add.setString("reduction", "add");
  EXPECT_EQ(runOk(add).toVector<int64_t>(), (Ints{1, 32, 3, 34}));
  SimpleKernelContext rows("ScatterND",
                           {str({2, 2}, {"a", "b", "c", "d"}),
                            i64({1, 1}, {-1}), str({1, 2}, {"x", "y"})},
                           1);
  EXPECT_EQ(runOk(rows).strings(), (Strings{"a", "b", "x", "y"}));
  SimpleKernelContext shape(
      "ScatterND", {i64({4}, {1, 2, 3, 4}), i64({1, 1}, {0}), i64({2}, {1, 2})},
      1);
  expectError(shape, "ScatterND: updates must be 1 int64");
}

TEST(ReferenceIndexing, OneHotAndNonZero) {
  SimpleKernelContext oneHot(
      "OneHot", {f32({3}, {0, -1, 3}), i64({}, {3}), i64({2}, {5, 7})}, 1);
  Tensor out = runOk(oneHot);
  EXPECT_EQ(out.shape(), (Shape{3, 3}));
  // -1 is the last class; 3 is out of range: all off.
  EXPECT_EQ(out.toVector<int64_t>(), (Ints{7, 5, 5, 5, 5, 7, 5, 5, 5}));
  SimpleKernelContext axis0(
      "OneHot", {i32({2}, {1, 0}), i64({}, {2}), f32({2}, {0, 1})}, 1);
  axis0.setInt("axis", 0);
  EXPECT_EQ(runOk(axis0).toVector<float>(), (std::vector<float>{0, 1, 1, 0}));
  SimpleKernelContext text(
      "OneHot", {i64({2}, {1, 1}), i32({1}, {2}), str({2}, {"off", "on"})}, 1);
  EXPECT_EQ(runOk(text).strings(), (Strings{"off", "on", "off", "on"}));
  SimpleKernelContext textIndices(
      "OneHot", {str({1}, {"1"}), i32({1}, {2}), str({2}, {"off", "on"})}, 1);
  expectError(textIndices, "OneHot: indices and depth must be numeric");

  SimpleKernelContext nonZeroText("NonZero", {str({3}, {"", "a", "b"})}, 1);
  out = runOk(nonZeroText);
  EXPECT_EQ(out.shape(), (Shape{1, 2}));
  EXPECT_EQ(out.toVector<int64_t>(), (Ints{1, 2}));
  SimpleKernelContext scalar("NonZero", {i32({}, {5})}, 1);
  EXPECT_EQ(runOk(scalar).shape(), (Shape{1, 1}));
  SimpleKernelContext floats("NonZero", {f32({2, 2}, {-0.0f, kNaN, 0, 2})}, 1);
  out = runOk(floats);
  EXPECT_EQ(out.shape(), (Shape{2, 2}));
  EXPECT_EQ(out.toVector<int64_t>(), (Ints{0, 1, 1, 1}));
}

TEST(ReferenceIndexing, TopKTiesAndNaN) {
  Tensor data = i32({4}, {3, 1, 3, 2});
  SimpleKernelContext largest("TopK", {data, i64({1}, {2})}, 2);
  ASSERT_TRUE(largest.run().ok());
  EXPECT_EQ(largest.outputTensor(0).toVector<int32_t>(),
            (std::vector<int32_t>{3, 3}));
  EXPECT_EQ(largest.outputTensor(1).toVector<int64_t>(), (Ints{0, 2}));
  SimpleKernelContext smallest("TopK", {data, i64({1}, {3})}, 2);
  smallest.setInt("largest", 0);
  ASSERT_TRUE(smallest.run().ok());
  EXPECT_EQ(smallest.outputTensor(0).toVector<int32_t>(),
            (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(smallest.outputTensor(1).toVector<int64_t>(), (Ints{1, 3, 0}));
  // NaN sorts above every number (numpy's and PyTorch's order).
  SimpleKernelContext nan("TopK", {f32({3}, {1, kNaN, 2}), i64({1}, {2})}, 2);
  ASSERT_TRUE(nan.run().ok());
  EXPECT_TRUE(std::isnan(nan.outputTensor(0).data<float>()[0]));
  EXPECT_EQ(nan.outputTensor(1).toVector<int64_t>(), (Ints{1, 2}));
  SimpleKernelContext tooMany("TopK", {data, i64({1}, {5})}, 2);
  expectError(tooMany, "TopK: K = 5 out of range for dimension 4");
}

TEST(ReferenceIndexing, UniqueSortedAndNot) {
  SimpleKernelContext sorted("Unique", {i64({6}, {3, 1, 3, 2, 1, 3})}, 4);
  ASSERT_TRUE(sorted.run().ok());
  EXPECT_EQ(sorted.outputTensor(0).toVector<int64_t>(), (Ints{1, 2, 3}));
  EXPECT_EQ(sorted.outputTensor(1).toVector<int64_t>(), (Ints{1, 3, 0}));
  EXPECT_EQ(sorted.outputTensor(2).toVector<int64_t>(),
            (Ints{2, 0, 2, 1, 0, 2}));
  EXPECT_EQ(sorted.outputTensor(3).toVector<int64_t>(), (Ints{2, 1, 3}));
  SimpleKernelContext text("Unique", {str({4}, {"b", "a", "b", "c"})}, 4);
  text.setInt("sorted", 0);
  ASSERT_TRUE(text.run().ok());
  EXPECT_EQ(text.outputTensor(0).strings(), (Strings{"b", "a", "c"}));
  EXPECT_EQ(text.outputTensor(1).toVector<int64_t>(), (Ints{0, 1, 3}));
  EXPECT_EQ(text.outputTensor(2).toVector<int64_t>(), (Ints{0, 1, 0, 2}));
  EXPECT_EQ(text.outputTensor(3).toVector<int64_t>(), (Ints{2, 1, 1}));
  // Columns as the unit: column 2 repeats column 0.
  SimpleKernelContext columns("Unique", {i32({2, 3}, {5, 4, 5, 1, 0, 1})}, 4);
  columns.setInt("axis", -1);
  ASSERT_TRUE(columns.run().ok());
  EXPECT_EQ(columns.outputTensor(0).shape(), (Shape{2, 2}));
  EXPECT_EQ(columns.outputTensor(0).toVector<int32_t>(),
            (std::vector<int32_t>{4, 5, 0, 1}));
  EXPECT_EQ(columns.outputTensor(2).toVector<int64_t>(), (Ints{1, 0, 1}));
  // A node that names only Y gets only Y.
  SimpleKernelContext onlyY("Unique", {i32({3}, {2, 2, 1})}, 1);
  EXPECT_EQ(runOk(onlyY).toVector<int32_t>(), (std::vector<int32_t>{1, 2}));
}

TEST(ReferenceIndexing, CumSum) {
  Tensor half(DType::Float16, {4});
  for (int i = 0; i < 4; ++i)
    half.data<Float16>()[i] = Float16(float(i + 1));
  SimpleKernelContext context("CumSum", {half, i32({}, {0})}, 1);
  Tensor out = runOk(context);
  std::vector<float> values;
  for (int i = 0; i < 4; ++i)
    values.push_back(float(out.data<Float16>()[i]));
  EXPECT_EQ(values, (std::vector<float>{1, 3, 6, 10}));
  SimpleKernelContext both("CumSum", {i32({3}, {1, 2, 3}), i64({}, {-1})}, 1);
  both.setInt("exclusive", 1).setInt("reverse", 1);
  EXPECT_EQ(runOk(both).toVector<int32_t>(), (std::vector<int32_t>{5, 3, 0}));
  int32_t max = std::numeric_limits<int32_t>::max();
  SimpleKernelContext wrap("CumSum", {i32({2}, {max, 1}), i32({}, {0})}, 1);
  EXPECT_EQ(runOk(wrap).toVector<int32_t>(),
            (std::vector<int32_t>{max, std::numeric_limits<int32_t>::min()}));
  SimpleKernelContext axis("CumSum", {i32({3}, {1, 2, 3}), f32({}, {0})}, 1);
  expectError(axis, "CumSum: axis must be an int32 or int64 scalar");
}

TEST(ReferenceIndexing, CompressAndReverseSequence) {
  Tensor data = str({2, 2}, {"a", "b", "c", "d"});
  SimpleKernelContext columns("Compress", {data, boolean({2}, {false, true})},
                              1);
  columns.setInt("axis", 1);
  Tensor out = runOk(columns);
  EXPECT_EQ(out.shape(), (Shape{2, 1}));
  EXPECT_EQ(out.strings(), (Strings{"b", "d"}));
  SimpleKernelContext flat(
      "Compress",
      {data, boolean({6}, {true, false, false, true, false, false})}, 1);
  EXPECT_EQ(runOk(flat).strings(), (Strings{"a", "d"}));
  SimpleKernelContext beyond("Compress",
                             {data, boolean({3}, {false, false, true})}, 1);
  beyond.setInt("axis", 0);
  expectError(beyond, "Compress: condition selects index 2 beyond dimension 2");

  Tensor batchMajor = str({2, 3}, {"a", "b", "c", "d", "e", "f"});
  SimpleKernelContext reverse("ReverseSequence", {batchMajor, i64({2}, {2, 3})},
                              1);
  reverse.setInt("batch_axis", 0).setInt("time_axis", 1);
  EXPECT_EQ(runOk(reverse).strings(), (Strings{"b", "a", "c", "f", "e", "d"}));
  SimpleKernelContext tooLong("ReverseSequence", {batchMajor, i64({2}, {2, 4})},
                              1);
  tooLong.setInt("batch_axis", 0).setInt("time_axis", 1);
  expectError(tooLong, "ReverseSequence: sequence length 4 out of range");
}

TEST(ReferenceIndexing, ArgMaxArgMin) {
  auto arg = [](const std::string &op, Tensor data, bool last) {
    SimpleKernelContext context(op, {data}, 1);
    context.setInt("select_last_index", last).setInt("keepdims", 0);
    Tensor out = runOk(context);
    EXPECT_EQ(out.shape(), Shape{});
    return out.toVector<int64_t>()[0];
  };
  Tensor nan = f32({4}, {1, kNaN, 3, kNaN});
  EXPECT_EQ(arg("ArgMax", nan, false), 1);
  EXPECT_EQ(arg("ArgMax", nan, true), 3);
  EXPECT_EQ(arg("ArgMin", nan, false), 1);
  Tensor ties = Tensor::fromVector<int8_t>(DType::Int8, {3}, {2, 5, 5});
  EXPECT_EQ(arg("ArgMax", ties, false), 1);
  EXPECT_EQ(arg("ArgMax", ties, true), 2);
  EXPECT_EQ(arg("ArgMin", ties, true), 0);
  // Integers compare exactly (2^63 and 2^63 + 1 are one double).
  uint64_t top = uint64_t(1) << 63;
  Tensor wide =
      Tensor::fromVector<uint64_t>(DType::UInt64, {2}, {top + 1, top});
  EXPECT_EQ(arg("ArgMin", wide, false), 1);
  SimpleKernelContext empty("ArgMax", {Tensor(DType::Float32, {0})}, 1);
  expectError(empty, "ArgMax: cannot reduce an empty axis");
  SimpleKernelContext complex("ArgMax", {Tensor(DType::Complex64, {2})}, 1);
  expectError(complex, "ArgMax: unsupported type complex64");
}

} // namespace
