//===- SequenceTest.cpp - Sequence and optional operators -----------------===//
//
// Expected values from the ONNX backend tests (test_sequence_*,
// test_optional_*) and from numpy for the split and concat cases.
//
//===----------------------------------------------------------------------===//

#include "mncc/reference/SimpleContext.h"

#include <gtest/gtest.h>

#include <functional>

using namespace mncc::reference;

namespace {

Tensor ints(std::vector<int64_t> shape, std::vector<int64_t> values) {
  return Tensor::fromVector<int64_t>(DType::Int64, std::move(shape), values);
}
Tensor floats(std::vector<int64_t> shape, std::vector<float> values) {
  return Tensor::fromVector<float>(DType::Float32, std::move(shape), values);
}
std::vector<std::vector<int64_t>> contents(const Value &value) {
  std::vector<std::vector<int64_t>> result;
  for (const Tensor &tensor : value.sequence)
    result.push_back(tensor.toVector<int64_t>());
  return result;
}

/// test_sequence_insert_*'s input sequence.
Value threeInts() {
  return Value::makeSequence(
      {ints({4}, {1, 2, 3, 4}), ints({3}, {5, 6, 7}), ints({2}, {8, 9})});
}

TEST(ReferenceSequence, ConstructLengthAndAt) {
  SimpleKernelContext construct(
      "SequenceConstruct", {Value(ints({1}, {1})), Value(ints({2}, {2, 3}))},
      1);
  ASSERT_TRUE(construct.run().ok());
  Value sequence = construct.outputs()[0];
  EXPECT_EQ(contents(sequence),
            (std::vector<std::vector<int64_t>>{{1}, {2, 3}}));
  SimpleKernelContext length("SequenceLength", {sequence}, 1);
  ASSERT_TRUE(length.run().ok());
  EXPECT_EQ(length.outputTensor(0).rank(), 0);
  EXPECT_EQ(length.outputTensor(0).data<int64_t>()[0], 2);
  SimpleKernelContext at(
      "SequenceAt",
      {sequence, Value(Tensor::fromVector<int32_t>(DType::Int32, {}, {-1}))},
      1);
  ASSERT_TRUE(at.run().ok());
  EXPECT_EQ(at.outputTensor(0).toVector<int64_t>(),
            (std::vector<int64_t>{2, 3}));
  SimpleKernelContext outside("SequenceAt", {sequence, Value(ints({}, {2}))},
                              1);
  EXPECT_EQ(outside.run().message(),
            "SequenceAt: position 2 is out of range for a sequence of 2");
  SimpleKernelContext mixed(
      "SequenceConstruct", {Value(ints({1}, {1})), Value(floats({1}, {1}))}, 1);
  EXPECT_EQ(mixed.run().message(), "SequenceConstruct: a float tensor cannot "
                                   "join a sequence of int64");
}

TEST(ReferenceSequence, EmptyHasNoTensor) {
  SimpleKernelContext empty("SequenceEmpty", {}, 1);
  ASSERT_TRUE(empty.run().ok());
  ASSERT_TRUE(empty.outputs()[0].isSequence());
  EXPECT_TRUE(empty.outputs()[0].sequence.empty());
  SimpleKernelContext erase("SequenceErase", {empty.outputs()[0]}, 1);
  EXPECT_EQ(erase.run().message(), "SequenceErase: the sequence is empty");
}

TEST(ReferenceSequence, InsertAtFrontAndBack) {
  // test_sequence_insert_at_front: position 0.
  SimpleKernelContext front(
      "SequenceInsert",
      {threeInts(), Value(ints({3}, {-2, -1, 0})), Value(ints({1}, {0}))}, 1);
  ASSERT_TRUE(front.run().ok());
  EXPECT_EQ(contents(front.outputs()[0]),
            (std::vector<std::vector<int64_t>>{
                {-2, -1, 0}, {1, 2, 3, 4}, {5, 6, 7}, {8, 9}}));
  // test_sequence_insert_at_back: no position.
  SimpleKernelContext back("SequenceInsert",
                           {threeInts(), Value(ints({3}, {10, 11, 12}))}, 1);
  ASSERT_TRUE(back.run().ok());
  EXPECT_EQ(contents(back.outputs()[0]),
            (std::vector<std::vector<int64_t>>{
                {1, 2, 3, 4}, {5, 6, 7}, {8, 9}, {10, 11, 12}}));
  // Position n is the end; -n is the front; n + 1 is out of range.
  SimpleKernelContext negative(
      "SequenceInsert",
      {threeInts(), Value(ints({1}, {0})), Value(ints({}, {-3}))}, 1);
  ASSERT_TRUE(negative.run().ok());
  EXPECT_EQ(contents(negative.outputs()[0]).front(), (std::vector<int64_t>{0}));
  SimpleKernelContext outside(
      "SequenceInsert",
      {threeInts(), Value(ints({1}, {0})), Value(ints({}, {4}))}, 1);
  EXPECT_EQ(outside.run().message(),
            "SequenceInsert: position 4 is out of range for a sequence of 3");
}

TEST(ReferenceSequence, EraseDefaultsToTheLast) {
  SimpleKernelContext last("SequenceErase", {threeInts()}, 1);
  ASSERT_TRUE(last.run().ok());
  EXPECT_EQ(contents(last.outputs()[0]),
            (std::vector<std::vector<int64_t>>{{1, 2, 3, 4}, {5, 6, 7}}));
  SimpleKernelContext first("SequenceErase",
                            {threeInts(), Value(ints({}, {-3}))}, 1);
  ASSERT_TRUE(first.run().ok());
  EXPECT_EQ(contents(first.outputs()[0]),
            (std::vector<std::vector<int64_t>>{{5, 6, 7}, {8, 9}}));
}

TEST(ReferenceSequence, SplitToSequence) {
  Tensor input = floats({3, 2}, {1, 2, 3, 4, 5, 6});
  // No split: pieces of 1 along axis 1, the axis dropped with keepdims 0.
  SimpleKernelContext ones("SplitToSequence", {Value(input)}, 1);
  ones.setInt("axis", 1).setInt("keepdims", 0);
  ASSERT_TRUE(ones.run().ok());
  const auto &pieces = ones.outputs()[0].sequence;
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[1].shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(pieces[1].toVector<float>(), (std::vector<float>{2, 4, 6}));
  // A scalar split of 2 along axis 0: [2, 2] then the shorter [1, 2].
  SimpleKernelContext chunks("SplitToSequence",
                             {Value(input), Value(ints({}, {2}))}, 1);
  chunks.setInt("keepdims", 0); // ignored once split is given
  ASSERT_TRUE(chunks.run().ok());
  const auto &parts = chunks.outputs()[0].sequence;
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(parts[1].shape(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(parts[1].toVector<float>(), (std::vector<float>{5, 6}));
  // Explicit lengths must add up to the axis.
  SimpleKernelContext lengths("SplitToSequence",
                              {Value(input), Value(ints({2}, {1, 2}))}, 1);
  ASSERT_TRUE(lengths.run().ok());
  EXPECT_EQ(lengths.outputs()[0].sequence[1].toVector<float>(),
            (std::vector<float>{3, 4, 5, 6}));
  SimpleKernelContext wrong("SplitToSequence",
                            {Value(input), Value(ints({2}, {1, 1}))}, 1);
  EXPECT_EQ(wrong.run().message(),
            "SplitToSequence: split lengths sum to 2, the axis has 3");
}

TEST(ReferenceSequence, ConcatFromSequenceConcatenatesOrStacks) {
  Value sequence =
      Value::makeSequence({floats({2, 1}, {1, 2}), floats({2, 1}, {3, 4})});
  SimpleKernelContext concat("ConcatFromSequence", {sequence}, 1);
  concat.setInt("axis", -1);
  ASSERT_TRUE(concat.run().ok());
  EXPECT_EQ(concat.outputTensor(0).shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(concat.outputTensor(0).toVector<float>(),
            (std::vector<float>{1, 3, 2, 4}));
  // new_axis: numpy.stack, where axis may be rank (here 2).
  SimpleKernelContext stack("ConcatFromSequence", {sequence}, 1);
  stack.setInt("axis", 2).setInt("new_axis", 1);
  ASSERT_TRUE(stack.run().ok());
  EXPECT_EQ(stack.outputTensor(0).shape(), (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ(stack.outputTensor(0).toVector<float>(),
            (std::vector<float>{1, 3, 2, 4}));
  SimpleKernelContext outside("ConcatFromSequence", {sequence}, 1);
  outside.setInt("axis", 2);
  EXPECT_EQ(outside.run().message(),
            "ConcatFromSequence: axis 2 is out of range for rank 2");
}

TEST(ReferenceSequence, ConcatFromSequenceOfStrings) {
  Value sequence = Value::makeSequence(
      {Tensor::fromVector<std::string>(DType::String, {1}, {"a"}),
       Tensor::fromVector<std::string>(DType::String, {2}, {"b", "c"})});
  SimpleKernelContext concat("ConcatFromSequence", {sequence}, 1);
  concat.setInt("axis", 0);
  ASSERT_TRUE(concat.run().ok());
  EXPECT_EQ(concat.outputTensor(0).strings(),
            (std::vector<std::string>{"a", "b", "c"}));
}

/// A context whose "body" is a C++ function.
class MapContext : public SimpleKernelContext {
public:
  using Body =
      std::function<Status(const std::vector<Value> &, std::vector<Value> &)>;
  MapContext(std::vector<Value> inputs, size_t numOutputs, Body body)
      : SimpleKernelContext("SequenceMap", std::move(inputs), numOutputs),
        body_(std::move(body)) {}
  Status runGraph(std::string_view, const std::vector<Value> &inputs,
                  std::vector<Value> &outputs) override {
    return body_(inputs, outputs);
  }

private:
  Body body_;
};

Status addBody(const std::vector<Value> &inputs, std::vector<Value> &outputs) {
  const Tensor &a = inputs[0].tensor, &b = inputs[1].tensor;
  Tensor sum(DType::Float32, a.shape());
  for (int64_t i = 0; i < a.numElements(); ++i)
    sum.data<float>()[i] = a.data<float>()[i] + b.data<float>()[i];
  outputs = {Value(sum)};
  return Status::success();
}

TEST(ReferenceSequence, SequenceMapWithATensorAndWithASequence) {
  // test_sequence_map_add_1_sequence_1_tensor (shortened).
  Value sequence =
      Value::makeSequence({floats({2}, {1, 2}), floats({2}, {3, 4})});
  MapContext withTensor({sequence, Value(floats({2}, {10, 20}))}, 1, addBody);
  ASSERT_TRUE(withTensor.run().ok());
  const auto &sums = withTensor.outputs()[0].sequence;
  ASSERT_EQ(sums.size(), 2u);
  EXPECT_EQ(sums[1].toVector<float>(), (std::vector<float>{13, 24}));
  // test_sequence_map_add_2_sequences: element by element.
  MapContext withSequence({sequence, sequence}, 1, addBody);
  ASSERT_TRUE(withSequence.run().ok());
  EXPECT_EQ(withSequence.outputs()[0].sequence[0].toVector<float>(),
            (std::vector<float>{2, 4}));
  MapContext ragged({sequence, Value::makeSequence({floats({2}, {1, 2})})}, 1,
                    addBody);
  EXPECT_EQ(ragged.run().message(),
            "SequenceMap: input 1 has 1 tensors, input 0 has 2");
}

TEST(ReferenceSequence, OptionalWrapsAndUnwraps) {
  // test_optional_get_element_sequence / test_optional_has_element.
  SimpleKernelContext wrap("Optional",
                           {Value::makeSequence({Tensor::fromVector<int32_t>(
                               DType::Int32, {4}, {1, 2, 3, 4})})},
                           1);
  ASSERT_TRUE(wrap.run().ok());
  Value optional = wrap.outputs()[0];
  EXPECT_TRUE(optional.optional);
  SimpleKernelContext has("OptionalHasElement", {optional}, 1);
  ASSERT_TRUE(has.run().ok());
  EXPECT_TRUE(has.outputTensor(0).data<bool>()[0]);
  SimpleKernelContext get("OptionalGetElement", {optional}, 1);
  ASSERT_TRUE(get.run().ok());
  ASSERT_TRUE(get.outputs()[0].isSequence());
  EXPECT_FALSE(get.outputs()[0].optional);
  EXPECT_EQ(get.outputs()[0].sequence[0].toVector<int32_t>(),
            (std::vector<int32_t>{1, 2, 3, 4}));
}

TEST(ReferenceSequence, EmptyOptional) {
  // test_optional_has_element_empty: an Optional made from its type alone.
  SimpleKernelContext make("Optional", {}, 1);
  Attribute type;
  type.kind = Attribute::Kind::TypeProto;
  type.elementType = DType::Int32;
  make.setAttribute("type", type);
  ASSERT_TRUE(make.run().ok());
  Value empty = make.outputs()[0];
  EXPECT_TRUE(empty.isEmpty());
  SimpleKernelContext has("OptionalHasElement", {empty}, 1);
  ASSERT_TRUE(has.run().ok());
  EXPECT_FALSE(has.outputTensor(0).data<bool>()[0]);
  SimpleKernelContext get("OptionalGetElement", {empty}, 1);
  EXPECT_EQ(get.run().message(), "OptionalGetElement: the optional is empty");
  SimpleKernelContext untyped("Optional", {}, 1);
  EXPECT_FALSE(untyped.run().ok());
}

TEST(ReferenceSequence, SequenceMapWithTwoOutputs) {
  // test_sequence_map_extract_shapes-like: a second output per element.
  Value sequence =
      Value::makeSequence({floats({1, 2}, {1, 2}), floats({3}, {3, 4, 5})});
  MapContext context(
      {sequence}, 2,
      [](const std::vector<Value> &inputs, std::vector<Value> &outputs) {
        const Tensor &x = inputs[0].tensor;
        outputs = {inputs[0], Value(ints({x.rank()}, x.shape()))};
        return Status::success();
      });
  ASSERT_TRUE(context.run().ok());
  EXPECT_EQ(context.outputs()[0].sequence.size(), 2u);
  EXPECT_EQ(contents(context.outputs()[1]),
            (std::vector<std::vector<int64_t>>{{1, 2}, {3}}));
}

TEST(ReferenceSequence, SplitAndConcatEdgeCases) {
  SimpleKernelContext zero(
      "SplitToSequence", {Value(floats({3}, {1, 2, 3})), Value(ints({}, {0}))},
      1);
  EXPECT_EQ(zero.run().message(), "SplitToSequence: split 0 must be positive");
  // An empty axis without split gives an empty sequence.
  SimpleKernelContext empty("SplitToSequence",
                            {Value(Tensor(DType::Float32, {0, 2}))}, 1);
  ASSERT_TRUE(empty.run().ok());
  EXPECT_TRUE(empty.outputs()[0].sequence.empty());
  SimpleKernelContext concat("ConcatFromSequence", {Value::makeSequence({})},
                             1);
  concat.setInt("axis", 0);
  EXPECT_EQ(concat.run().message(),
            "ConcatFromSequence: the sequence is empty");
  SimpleKernelContext mismatch(
      "ConcatFromSequence",
      {Value::makeSequence(
          {floats({1, 2}, {1, 2}), floats({1, 3}, {1, 2, 3})})},
      1);
  mismatch.setInt("axis", 0);
  EXPECT_EQ(mismatch.run().message(),
            "ConcatFromSequence: shapes 1x2 and 1x3 do not fit together "
            "along axis 0");
}

} // namespace
