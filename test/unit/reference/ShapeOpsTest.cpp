//===- ShapeOpsTest.cpp - Shape, layout and constant kernels --------------===//
//
// Edge cases the ONNX backend tests (ShapeBackendTest) do not reach: other
// element types, clamping, errors. Expected values are ONNX's (numpy's).
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

void expectError(SimpleKernelContext &context, const std::string &text) {
  Status status = context.run();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find(text), std::string::npos) << status.message();
}

/// Runs and returns output `index`, failing the test on an error.
Tensor runOk(SimpleKernelContext &context, size_t index = 0) {
  Status status = context.run();
  EXPECT_TRUE(status.ok()) << status.message();
  return context.outputTensor(index);
}

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(ReferenceShape, ReshapeSharesStorageAndInfers) {
  Tensor data = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  SimpleKernelContext context("Reshape", {data, i64({2}, {3, -1})}, 1);
  Tensor out = runOk(context);
  EXPECT_EQ(out.shape(), (Shape{3, 2}));
  EXPECT_EQ(out.data<float>(), data.data<float>());
  SimpleKernelContext zero(
      "Reshape", {Tensor(DType::Int8, {2, 3, 4}), i64({2}, {0, -1})}, 1);
  EXPECT_EQ(runOk(zero).shape(), (Shape{2, 12}));
  // allowzero: 0 is a literal empty dimension.
  SimpleKernelContext allow(
      "Reshape", {Tensor(DType::String, {3, 0}), i64({2}, {0, 3})}, 1);
  allow.setInt("allowzero", 1);
  EXPECT_EQ(runOk(allow).shape(), (Shape{0, 3}));
}

TEST(ReferenceShape, ReshapeErrors) {
  Tensor data = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  SimpleKernelContext twice("Reshape", {data, i64({2}, {-1, -1})}, 1);
  expectError(twice, "Reshape: more than one -1");
  SimpleKernelContext size("Reshape", {data, i64({2}, {4, 2})}, 1);
  expectError(size, "Reshape: cannot reshape 2x3 to 4x2");
  SimpleKernelContext type("Reshape", {data, f32({1}, {6})}, 1);
  expectError(type, "must be int32 or int64");
  SimpleKernelContext missing("Reshape", {data}, 1);
  expectError(missing, "Reshape: missing input 1");
  SimpleKernelContext sequence("Reshape",
                               {Value::makeSequence({data}), i64({1}, {6})}, 1);
  expectError(sequence, "Reshape: missing input 0 (or it is not a tensor)");
}

TEST(ReferenceShape, FlattenSqueezeUnsqueeze) {
  Tensor data(DType::Float64, {2, 1, 3});
  SimpleKernelContext all("Flatten", {data}, 1);
  all.setInt("axis", 3);
  EXPECT_EQ(runOk(all).shape(), (Shape{6, 1}));
  SimpleKernelContext none("Flatten", {data}, 1);
  none.setInt("axis", 0);
  EXPECT_EQ(runOk(none).shape(), (Shape{1, 6}));
  SimpleKernelContext bad("Flatten", {data}, 1);
  bad.setInt("axis", 4);
  expectError(bad, "Flatten: axis 4 out of range for rank 3");

  SimpleKernelContext squeezeAll("Squeeze", {Tensor(DType::Bool, {1, 2, 1})},
                                 1);
  EXPECT_EQ(runOk(squeezeAll).shape(), (Shape{2}));
  SimpleKernelContext squeezeOne("Squeeze", {data, i64({1}, {-2})}, 1);
  EXPECT_EQ(runOk(squeezeOne).shape(), (Shape{2, 3}));
  SimpleKernelContext notOne("Squeeze", {data, i64({1}, {0})}, 1);
  expectError(notOne, "Squeeze: cannot squeeze axis 0 of size 2");

  SimpleKernelContext unsqueeze(
      "Unsqueeze", {str({3}, {"a", "b", "c"}), i64({2}, {-1, 0})}, 1);
  Tensor out = runOk(unsqueeze);
  EXPECT_EQ(out.shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(out.strings(), (Strings{"a", "b", "c"}));
  SimpleKernelContext repeated("Unsqueeze", {data, i64({2}, {1, -4})}, 1);
  expectError(repeated, "Unsqueeze: axis -4 repeated");
}

TEST(ReferenceShape, TransposeStringsAndBadPerm) {
  Tensor data = str({2, 3}, {"a", "b", "c", "d", "e", "f"});
  SimpleKernelContext context("Transpose", {data}, 1);
  Tensor out = runOk(context);
  EXPECT_EQ(out.shape(), (Shape{3, 2}));
  EXPECT_EQ(out.strings(), (Strings{"a", "d", "b", "e", "c", "f"}));
  SimpleKernelContext bad("Transpose", {data}, 1);
  bad.setInts("perm", {0, 0});
  expectError(bad, "Transpose: axis 0 repeated");
}

TEST(ReferenceShape, ConcatAndSplit) {
  SimpleKernelContext concat("Concat",
                             {str({1, 2}, {"a", "b"}), str({0, 2}, {}),
                              str({2, 2}, {"c", "d", "e", "f"})},
                             1);
  concat.setInt("axis", -2);
  Tensor out = runOk(concat);
  EXPECT_EQ(out.shape(), (Shape{3, 2}));
  EXPECT_EQ(out.strings(), (Strings{"a", "b", "c", "d", "e", "f"}));
  SimpleKernelContext mixed("Concat", {f32({1}, {1}), i32({1}, {1})}, 1);
  mixed.setInt("axis", 0);
  expectError(mixed, "Concat: cannot concatenate");

  // num_outputs (opset 18): ceil-sized parts, the last one smaller.
  Tensor seven = i32({7}, {0, 1, 2, 3, 4, 5, 6});
  SimpleKernelContext split("Split", {seven}, 3);
  split.setInt("num_outputs", 3);
  ASSERT_TRUE(split.run().ok());
  EXPECT_EQ(split.outputTensor(0).toVector<int32_t>(),
            (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(split.outputTensor(2).toVector<int32_t>(),
            (std::vector<int32_t>{6}));
  SimpleKernelContext uneven("Split", {seven}, 2);
  expectError(uneven, "Split: dimension 7 does not split into 2 equal parts");
  SimpleKernelContext sizes(
      "Split", {str({2, 2}, {"a", "b", "c", "d"}), i64({2}, {1, 1})}, 2);
  sizes.setInt("axis", 1);
  ASSERT_TRUE(sizes.run().ok());
  EXPECT_EQ(sizes.outputTensor(1).strings(), (Strings{"b", "d"}));
  SimpleKernelContext wrongSum("Split", {seven, i64({2}, {3, 3})}, 2);
  expectError(wrongSum, "Split: split sizes sum to 6");
}

TEST(ReferenceShape, SliceClampsAndStepsBackward) {
  Tensor data = i32({10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto slice = [&](int64_t start, int64_t end, int64_t step) {
    SimpleKernelContext context("Slice",
                                {data, i64({1}, {start}), i64({1}, {end}),
                                 i64({1}, {0}), i64({1}, {step})},
                                1);
    return runOk(context).toVector<int32_t>();
  };
  EXPECT_EQ(slice(-1, kMin, -1),
            (std::vector<int32_t>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(slice(20, -20, -3), (std::vector<int32_t>{9, 6, 3, 0}));
  EXPECT_EQ(slice(2, kMax, 3), (std::vector<int32_t>{2, 5, 8}));
  EXPECT_EQ(slice(-3, -1, 1), (std::vector<int32_t>{7, 8}));
  EXPECT_EQ(slice(5, 2, 1), (std::vector<int32_t>{}));
  EXPECT_EQ(slice(kMin, kMax, kMax), (std::vector<int32_t>{0}));
  SimpleKernelContext zero(
      "Slice",
      {data, i64({1}, {0}), i64({1}, {5}), i64({1}, {0}), i64({1}, {0})}, 1);
  expectError(zero, "Slice: step 0");
  SimpleKernelContext axes("Slice",
                           {str({2, 3}, {"a", "b", "c", "d", "e", "f"}),
                            i64({1}, {1}), i64({1}, {3}), i64({1}, {-1})},
                           1);
  Tensor out = runOk(axes);
  EXPECT_EQ(out.shape(), (Shape{2, 2}));
  EXPECT_EQ(out.strings(), (Strings{"b", "c", "e", "f"}));
}

TEST(ReferenceShape, PadModes) {
  Tensor data = i64({3}, {1, 2, 3});
  auto pad = [&](const std::string &mode, Ints pads) {
    SimpleKernelContext context("Pad", {data, i64({2}, pads)}, 1);
    context.setString("mode", mode);
    return runOk(context).toVector<int64_t>();
  };
  EXPECT_EQ(pad("reflect", {2, 2}), (Ints{3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(pad("reflect", {5, 0}), (Ints{2, 1, 2, 3, 2, 1, 2, 3}));
  EXPECT_EQ(pad("edge", {2, 1}), (Ints{1, 1, 1, 2, 3, 3}));
  EXPECT_EQ(pad("wrap", {1, 2}), (Ints{3, 1, 2, 3, 1, 2}));
  EXPECT_EQ(pad("constant", {-1, 1}), (Ints{2, 3, 0}));
  SimpleKernelContext axes("Pad",
                           {f32({2, 2}, {1, 2, 3, 4}), i64({2}, {1, 0}),
                            f32({}, {9}), i64({1}, {-1})},
                           1);
  Tensor out = runOk(axes);
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(out.toVector<float>(), (std::vector<float>{9, 1, 2, 9, 3, 4}));
  SimpleKernelContext text(
      "Pad", {str({1}, {"a"}), i64({2}, {1, 1}), str({}, {"z"})}, 1);
  EXPECT_EQ(runOk(text).strings(), (Strings{"z", "a", "z"}));
  SimpleKernelContext length("Pad", {data, i64({1}, {1})}, 1);
  expectError(length, "Pad: pads has 1 entries for 1 axes");
  SimpleKernelContext empty("Pad",
                            {Tensor(DType::Int64, {0}), i64({2}, {1, 1})}, 1);
  empty.setString("mode", "edge");
  expectError(empty, "Pad: cannot edge-pad empty axis 0");
}

TEST(ReferenceShape, TileShapeSize) {
  SimpleKernelContext tile("Tile", {str({2}, {"a", "b"}), i64({1}, {3})}, 1);
  EXPECT_EQ(runOk(tile).strings(), (Strings{"a", "b", "a", "b", "a", "b"}));
  SimpleKernelContext none("Tile", {str({2}, {"a", "b"}), i64({1}, {0})}, 1);
  EXPECT_EQ(runOk(none).shape(), (Shape{0}));
  SimpleKernelContext wrong("Tile", {str({2}, {"a", "b"}), i64({2}, {1, 1})},
                            1);
  expectError(wrong, "Tile: repeats has 2 entries for rank 1");

  Tensor data(DType::Float16, {2, 3, 4});
  auto shape = [&](int64_t start, int64_t end) {
    SimpleKernelContext context("Shape", {data}, 1);
    context.setInt("start", start).setInt("end", end);
    Tensor out = runOk(context);
    EXPECT_EQ(out.dtype(), DType::Int64);
    return out.toVector<int64_t>();
  };
  EXPECT_EQ(shape(-2, 10), (Ints{3, 4}));
  EXPECT_EQ(shape(2, 1), (Ints{}));
  EXPECT_EQ(shape(-10, -1), (Ints{2, 3}));
  SimpleKernelContext size("Size", {Tensor(DType::String, {0, 3})}, 1);
  Tensor count = runOk(size);
  EXPECT_EQ(count.shape(), Shape{});
  EXPECT_EQ(count.toVector<int64_t>(), (Ints{0}));
}

TEST(ReferenceShape, Constants) {
  SimpleKernelContext zeros("ConstantOfShape", {i64({2}, {2, 3})}, 1);
  Tensor out = runOk(zeros);
  EXPECT_EQ(out.dtype(), DType::Float32);
  EXPECT_EQ(out.toVector<float>(), (std::vector<float>(6, 0.0f)));
  Attribute seven;
  seven.kind = Attribute::Kind::Tensor;
  seven.t = i32({1}, {7});
  SimpleKernelContext filled("ConstantOfShape", {i64({1}, {5})}, 1);
  filled.setAttribute("value", seven);
  EXPECT_EQ(runOk(filled).toVector<int32_t>(),
            (std::vector<int32_t>{7, 7, 7, 7, 7}));
  SimpleKernelContext negative("ConstantOfShape", {i64({1}, {-1})}, 1);
  expectError(negative, "ConstantOfShape: negative dimension");

  SimpleKernelContext ints("Constant", {}, 1);
  ints.setInts("value_ints", {4, 5});
  out = runOk(ints);
  EXPECT_EQ(out.shape(), (Shape{2}));
  EXPECT_EQ(out.toVector<int64_t>(), (Ints{4, 5}));
  SimpleKernelContext scalar("Constant", {}, 1);
  scalar.setFloat("value_float", 2.5f);
  out = runOk(scalar);
  EXPECT_EQ(out.shape(), Shape{});
  EXPECT_EQ(out.toVector<float>(), (std::vector<float>{2.5f}));
  SimpleKernelContext text("Constant", {}, 1);
  text.setString("value_string", "hi");
  EXPECT_EQ(runOk(text).strings(), (Strings{"hi"}));
  Attribute sparse;
  sparse.kind = Attribute::Kind::Tensor;
  SimpleKernelContext sparseContext("Constant", {}, 1);
  sparseContext.setAttribute("sparse_value", sparse);
  expectError(sparseContext, "Constant: sparse_value is not supported");
  SimpleKernelContext two("Constant", {}, 1);
  two.setInt("value_int", 1).setFloat("value_float", 1);
  expectError(two, "Constant: needs exactly one value attribute");
}

TEST(ReferenceShape, Range) {
  int64_t big = int64_t(1) << 62;
  SimpleKernelContext exact(
      "Range", {i64({}, {big}), i64({}, {big + 3}), i64({}, {1})}, 1);
  EXPECT_EQ(runOk(exact).toVector<int64_t>(), (Ints{big, big + 1, big + 2}));
  SimpleKernelContext down("Range",
                           {i32({}, {10}), i32({}, {4}), i32({}, {-3})}, 1);
  EXPECT_EQ(runOk(down).toVector<int32_t>(), (std::vector<int32_t>{10, 7}));
  SimpleKernelContext empty("Range",
                            {i32({}, {1}), i32({}, {4}), i32({}, {-1})}, 1);
  EXPECT_EQ(runOk(empty).shape(), (Shape{0}));
  SimpleKernelContext fractional(
      "Range", {f32({}, {0}), f32({}, {1}), f32({}, {0.3f})}, 1);
  Tensor out = runOk(fractional);
  ASSERT_EQ(out.shape(), (Shape{4}));
  EXPECT_FLOAT_EQ(out.data<float>()[3], 0.9f);
  SimpleKernelContext zero("Range", {i32({}, {1}), i32({}, {4}), i32({}, {0})},
                           1);
  expectError(zero, "Range: delta is 0");
  SimpleKernelContext mixed("Range", {i32({}, {1}), i64({}, {4}), i32({}, {1})},
                            1);
  expectError(mixed, "Range: start, limit and delta must be scalars");
}

TEST(ReferenceShape, DepthToSpaceModesAndInverse) {
  std::vector<int8_t> values(8);
  for (int i = 0; i < 8; ++i)
    values[i] = i;
  Tensor data = Tensor::fromVector(DType::Int8, {1, 8, 1, 1}, values);
  SimpleKernelContext dcr("DepthToSpace", {data}, 1);
  dcr.setInt("blocksize", 2);
  Tensor out = runOk(dcr);
  EXPECT_EQ(out.shape(), (Shape{1, 2, 2, 2}));
  EXPECT_EQ(out.toVector<int8_t>(),
            (std::vector<int8_t>{0, 2, 4, 6, 1, 3, 5, 7}));
  SimpleKernelContext crd("DepthToSpace", {data}, 1);
  crd.setInt("blocksize", 2).setString("mode", "CRD");
  EXPECT_EQ(runOk(crd).toVector<int8_t>(), values);
  // SpaceToDepth undoes DCR DepthToSpace.
  SimpleKernelContext back("SpaceToDepth", {out}, 1);
  back.setInt("blocksize", 2);
  Tensor restored = runOk(back);
  EXPECT_EQ(restored.shape(), (Shape{1, 8, 1, 1}));
  EXPECT_EQ(restored.toVector<int8_t>(), values);
  SimpleKernelContext bad("SpaceToDepth", {out}, 1);
  bad.setInt("blocksize", 3);
  expectError(bad, "SpaceToDepth: height and width not divisible");
}

TEST(ReferenceShape, EyeLikeAndTrilu) {
  SimpleKernelContext eye("EyeLike", {Tensor(DType::Int32, {3, 4})}, 1);
  eye.setInt("k", 1);
  EXPECT_EQ(runOk(eye).toVector<int32_t>(),
            (std::vector<int32_t>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  SimpleKernelContext boolEye("EyeLike", {Tensor(DType::Float32, {2, 2})}, 1);
  boolEye.setInt("dtype", static_cast<int64_t>(DType::Bool));
  Tensor out = runOk(boolEye);
  EXPECT_EQ(out.dtype(), DType::Bool);
  EXPECT_EQ(out.toVector<bool>(),
            (std::vector<bool>{true, false, false, true}));
  SimpleKernelContext far("EyeLike", {Tensor(DType::Int32, {2, 2})}, 1);
  far.setInt("k", kMin);
  EXPECT_EQ(runOk(far).toVector<int32_t>(), (std::vector<int32_t>(4, 0)));
  SimpleKernelContext text("EyeLike", {Tensor(DType::String, {2, 2})}, 1);
  expectError(text, "EyeLike: unsupported type string");

  Tensor data = str({2, 3}, {"a", "b", "c", "d", "e", "f"});
  SimpleKernelContext upper("Trilu", {data, i64({}, {1})}, 1);
  EXPECT_EQ(runOk(upper).strings(), (Strings{"", "b", "c", "", "", "f"}));
  SimpleKernelContext lower("Trilu", {data, i64({}, {-1})}, 1);
  lower.setInt("upper", 0);
  EXPECT_EQ(runOk(lower).strings(), (Strings{"", "", "", "d", "", ""}));
  SimpleKernelContext none("Trilu", {data, i64({}, {kMax})}, 1);
  EXPECT_EQ(runOk(none).strings(), (Strings(6, "")));
  SimpleKernelContext all("Trilu", {data, i64({}, {kMin})}, 1);
  EXPECT_EQ(runOk(all).strings(), data.strings());
}

} // namespace
