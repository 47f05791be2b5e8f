//===- ControlTest.cpp - If, Loop, Scan -----------------------------------===//
//
// The subgraphs are C++ lambdas standing in for the graph attributes; the
// expected values are those of the ONNX backend tests (test_if*, test_loop*,
// test_scan9_sum) and of the operator definitions.
//
//===----------------------------------------------------------------------===//

#include "mncc/reference/SimpleContext.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

using namespace mncc::reference;

namespace {

using GraphFn =
    std::function<Status(const std::vector<Value> &, std::vector<Value> &)>;

/// A SimpleKernelContext whose graph attributes are C++ functions.
class GraphContext : public SimpleKernelContext {
public:
  using SimpleKernelContext::SimpleKernelContext;
  GraphContext &setGraph(std::string name, GraphFn fn) {
    Attribute attribute;
    attribute.kind = Attribute::Kind::Graph;
    setAttribute(name, attribute);
    graphs_[std::move(name)] = std::move(fn);
    return *this;
  }
  Status runGraph(std::string_view name, const std::vector<Value> &inputs,
                  std::vector<Value> &outputs) override {
    auto found = graphs_.find(std::string(name));
    if (found == graphs_.end())
      return Status::error("no graph " + std::string(name));
    ++calls;
    return found->second(inputs, outputs);
  }
  int calls = 0;

private:
  std::map<std::string, GraphFn> graphs_;
};

Tensor floats(std::vector<int64_t> shape, std::vector<float> values) {
  return Tensor::fromVector<float>(DType::Float32, std::move(shape), values);
}
Tensor int64Scalar(int64_t value) {
  return Tensor::fromVector<int64_t>(DType::Int64, {}, {value});
}
Tensor boolScalar(bool value) {
  return Tensor::fromVector<bool>(DType::Bool, {}, {value});
}
std::vector<float> valuesOf(const Tensor &tensor) {
  return tensor.toVector<float>();
}

GraphFn constant(Value value) {
  return
      [value](const std::vector<Value> &inputs, std::vector<Value> &outputs) {
        EXPECT_TRUE(inputs.empty());
        outputs = {value};
        return Status::success();
      };
}

TEST(ReferenceControl, IfPicksTheBranchByCond) {
  // test_if: then gives [1..5], else [5..1].
  for (bool cond : {true, false}) {
    GraphContext context("If", {Value(boolScalar(cond))}, 1);
    context.setGraph("then_branch", constant(floats({5}, {1, 2, 3, 4, 5})))
        .setGraph("else_branch", constant(floats({5}, {5, 4, 3, 2, 1})));
    ASSERT_TRUE(context.run().ok());
    EXPECT_EQ(valuesOf(context.outputTensor(0)),
              cond ? std::vector<float>({1, 2, 3, 4, 5})
                   : std::vector<float>({5, 4, 3, 2, 1}));
  }
}

TEST(ReferenceControl, IfPassesSequencesAndOptionals) {
  // test_if_seq and test_if_opt: the branch output is not a tensor.
  GraphContext context("If", {Value(boolScalar(true))}, 1);
  context
      .setGraph("then_branch",
                constant(Value::makeSequence({floats({5}, {1, 2, 3, 4, 5})})))
      .setGraph("else_branch", constant(Value::makeEmptyOptional()));
  ASSERT_TRUE(context.run().ok());
  ASSERT_TRUE(context.outputs()[0].isSequence());
  EXPECT_EQ(context.outputs()[0].sequence.size(), 1u);
  GraphContext other("If", {Value(boolScalar(false))}, 1);
  other.setGraph("then_branch", constant(Value(floats({1}, {1}))))
      .setGraph("else_branch", constant(Value::makeEmptyOptional()));
  ASSERT_TRUE(other.run().ok());
  EXPECT_TRUE(other.outputs()[0].isEmpty());
}

TEST(ReferenceControl, IfRejectsABadCondAndTooFewOutputs) {
  GraphContext context("If", {Value(floats({}, {1}))}, 1);
  context.setGraph("then_branch", constant(Value(floats({1}, {1}))))
      .setGraph("else_branch", constant(Value(floats({1}, {1}))));
  Status status = context.run();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "If: cond must be a single bool, not float "
                              "scalar");
  GraphContext twoOutputs("If", {Value(boolScalar(true))}, 2);
  twoOutputs.setGraph("then_branch", constant(Value(floats({1}, {1}))))
      .setGraph("else_branch", constant(Value(floats({1}, {1}))));
  status = twoOutputs.run();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "If: then_branch gives 1 outputs, the node has 2");
}

/// test_loop11's body: y_out = y + x[i] with x = [1, 2, 3, 4, 5]; the scan
/// output is y_out; cond passes through.
Status loop11Body(const std::vector<Value> &inputs,
                  std::vector<Value> &outputs) {
  static const float x[] = {1, 2, 3, 4, 5};
  EXPECT_EQ(inputs.size(), 3u);
  int64_t i = inputs[0].tensor.data<int64_t>()[0];
  float y = inputs[2].tensor.data<float>()[0] + x[i];
  outputs = {inputs[1], Value(floats({1}, {y})), Value(floats({1}, {y}))};
  return Status::success();
}

TEST(ReferenceControl, LoopCarriesAndStacksScanOutputs) {
  // test_loop11: M = 5, cond = true, y = [-2].
  GraphContext context("Loop",
                       {Value(int64Scalar(5)), Value(boolScalar(true)),
                        Value(floats({1}, {-2}))},
                       2);
  context.setGraph("body", loop11Body);
  ASSERT_TRUE(context.run().ok());
  EXPECT_EQ(valuesOf(context.outputTensor(0)), std::vector<float>({13}));
  EXPECT_EQ(context.outputTensor(1).shape(), (std::vector<int64_t>{5, 1}));
  EXPECT_EQ(valuesOf(context.outputTensor(1)),
            std::vector<float>({-1, 1, 4, 8, 13}));
}

TEST(ReferenceControl, LoopStopsWhenTheBodySaysSo) {
  // No M: a while loop on the body's cond, here i < 2 after the update.
  GraphContext context(
      "Loop", {Value(), Value(boolScalar(true)), Value(floats({}, {0}))}, 1);
  context.omitInput(0);
  context.setGraph("body", [](const std::vector<Value> &inputs,
                              std::vector<Value> &outputs) {
    int64_t i = inputs[0].tensor.data<int64_t>()[0];
    float v = inputs[2].tensor.data<float>()[0] + 10;
    outputs = {Value(boolScalar(i < 2)), Value(floats({}, {v}))};
    return Status::success();
  });
  ASSERT_TRUE(context.run().ok());
  EXPECT_EQ(context.calls, 3);
  EXPECT_EQ(valuesOf(context.outputTensor(0)), std::vector<float>({30}));
}

TEST(ReferenceControl, LoopWithoutCondIgnoresTheBodysCond) {
  GraphContext context(
      "Loop", {Value(int64Scalar(4)), Value(), Value(floats({}, {1}))}, 1);
  context.omitInput(1);
  context.setGraph("body", [](const std::vector<Value> &inputs,
                              std::vector<Value> &outputs) {
    EXPECT_TRUE(inputs[1].tensor.data<bool>()[0]);
    float v = inputs[2].tensor.data<float>()[0] * 2;
    outputs = {Value(boolScalar(false)), Value(floats({}, {v}))};
    return Status::success();
  });
  ASSERT_TRUE(context.run().ok());
  EXPECT_EQ(context.calls, 4);
  EXPECT_EQ(valuesOf(context.outputTensor(0)), std::vector<float>({16}));
}

TEST(ReferenceControl, LoopWithZeroTripsReturnsTheInitialValues) {
  Tensor initial = floats({2}, {7, 8});
  for (bool cond : {true, false}) {
    GraphContext context("Loop",
                         {Value(int64Scalar(cond ? 0 : 3)),
                          Value(boolScalar(cond)), Value(initial)},
                         2);
    context.setGraph("body", loop11Body);
    ASSERT_TRUE(context.run().ok());
    EXPECT_EQ(context.calls, 0);
    // The carried value is the input itself, not a copy.
    EXPECT_EQ(context.outputTensor(0).data<float>(), initial.data<float>());
    EXPECT_EQ(context.outputTensor(1).numElements(), 0);
  }
}

TEST(ReferenceControl, LoopCarriesSequences) {
  // test_loop13_seq: each iteration appends [1 .. i + 1] to the sequence.
  GraphContext context(
      "Loop",
      {Value(int64Scalar(5)), Value(boolScalar(true)), Value::makeSequence({})},
      1);
  context.setGraph("body", [](const std::vector<Value> &inputs,
                              std::vector<Value> &outputs) {
    int64_t i = inputs[0].tensor.data<int64_t>()[0];
    std::vector<float> values;
    for (int64_t k = 1; k <= i + 1; ++k)
      values.push_back(static_cast<float>(k));
    Value sequence = inputs[2];
    sequence.sequence.push_back(floats({i + 1}, values));
    outputs = {inputs[1], sequence};
    return Status::success();
  });
  ASSERT_TRUE(context.run().ok());
  const Value &result = context.outputs()[0];
  ASSERT_TRUE(result.isSequence());
  ASSERT_EQ(result.sequence.size(), 5u);
  EXPECT_EQ(valuesOf(result.sequence[4]), std::vector<float>({1, 2, 3, 4, 5}));
}

TEST(ReferenceControl, LoopRejectsBadInputsAndBodies) {
  GraphContext badM("Loop", {Value(floats({}, {5})), Value(boolScalar(true))},
                    0);
  badM.setGraph("body", loop11Body);
  EXPECT_EQ(badM.run().message(), "Loop: M must be a single int64");
  GraphContext badCond("Loop", {Value(int64Scalar(2)), Value(boolScalar(true))},
                       0);
  badCond.setGraph("body",
                   [](const std::vector<Value> &, std::vector<Value> &outputs) {
                     outputs = {Value(int64Scalar(1))};
                     return Status::success();
                   });
  EXPECT_EQ(badCond.run().message(),
            "Loop: the body's cond output must be a single bool, not int64 "
            "scalar");
  GraphContext ragged("Loop", {Value(int64Scalar(2)), Value(boolScalar(true))},
                      1);
  ragged.setGraph("body", [](const std::vector<Value> &inputs,
                             std::vector<Value> &outputs) {
    int64_t i = inputs[0].tensor.data<int64_t>()[0];
    outputs = {inputs[1], Value(floats({i + 1}, {1, 2}))};
    return Status::success();
  });
  Status status = ragged.run();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "Loop: shapes 1 and 2 do not fit together along axis 0");
}

/// test_scan9_sum's body: sum = sum + x; the scan output is the new sum.
Status sumBody(const std::vector<Value> &inputs, std::vector<Value> &outputs) {
  EXPECT_EQ(inputs.size(), 2u);
  const Tensor &sum = inputs[0].tensor, &x = inputs[1].tensor;
  EXPECT_EQ(sum.shape(), x.shape());
  Tensor next(DType::Float32, sum.shape());
  for (int64_t i = 0; i < sum.numElements(); ++i)
    next.data<float>()[i] = sum.data<float>()[i] + x.data<float>()[i];
  outputs = {Value(next), Value(next)};
  return Status::success();
}

TEST(ReferenceControl, ScanSums) {
  // test_scan9_sum.
  GraphContext context(
      "Scan",
      {Value(floats({2}, {0, 0})), Value(floats({3, 2}, {1, 2, 3, 4, 5, 6}))},
      2);
  context.setGraph("body", sumBody).setInt("num_scan_inputs", 1);
  ASSERT_TRUE(context.run().ok());
  EXPECT_EQ(valuesOf(context.outputTensor(0)), std::vector<float>({9, 12}));
  EXPECT_EQ(context.outputTensor(1).shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(valuesOf(context.outputTensor(1)),
            std::vector<float>({1, 2, 4, 6, 9, 12}));
}

TEST(ReferenceControl, ScanAxesAndDirections) {
  // Scan the columns of [[1, 2, 3], [4, 5, 6]] backwards (axis 1, reverse),
  // and lay the running sums out along axis -1, reversed again.
  GraphContext context(
      "Scan",
      {Value(floats({2}, {0, 0})), Value(floats({2, 3}, {1, 2, 3, 4, 5, 6}))},
      2);
  context.setGraph("body", sumBody)
      .setInt("num_scan_inputs", 1)
      .setInts("scan_input_axes", {1})
      .setInts("scan_input_directions", {1})
      .setInts("scan_output_axes", {-1})
      .setInts("scan_output_directions", {1});
  ASSERT_TRUE(context.run().ok());
  EXPECT_EQ(valuesOf(context.outputTensor(0)), std::vector<float>({6, 15}));
  // Running sums in scan order: [3, 6], [5, 11], [6, 15]; reversed along
  // the output axis, column t holds iteration 2 - t.
  EXPECT_EQ(context.outputTensor(1).shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(valuesOf(context.outputTensor(1)),
            std::vector<float>({6, 5, 3, 15, 11, 6}));
}

TEST(ReferenceControl, ScanRejectsMismatchedLengthsAndAxes) {
  GraphContext lengths("Scan",
                       {Value(floats({1}, {0})), Value(floats({2, 1}, {1, 2})),
                        Value(floats({3, 1}, {1, 2, 3}))},
                       3);
  lengths.setGraph("body", sumBody).setInt("num_scan_inputs", 2);
  EXPECT_EQ(lengths.run().message(), "Scan: scan inputs have lengths 2 and 3");
  GraphContext axis(
      "Scan", {Value(floats({1}, {0})), Value(floats({2, 1}, {1, 2}))}, 2);
  axis.setGraph("body", sumBody)
      .setInt("num_scan_inputs", 1)
      .setInts("scan_input_axes", {2});
  EXPECT_EQ(axis.run().message(),
            "Scan: scan_input_axes[0] = 2 is out of range for rank 2");
  GraphContext missing("Scan", {Value(floats({1}, {0}))}, 1);
  missing.setGraph("body", sumBody);
  EXPECT_EQ(missing.run().message(),
            "Scan: the num_scan_inputs attribute is required");
}

TEST(ReferenceControl, LoopWithANegativeTripCountRunsNoIteration) {
  GraphContext context(
      "Loop",
      {Value(int64Scalar(-3)), Value(boolScalar(true)), Value(floats({}, {5}))},
      1);
  context.setGraph("body", loop11Body);
  ASSERT_TRUE(context.run().ok());
  EXPECT_EQ(context.calls, 0);
  EXPECT_EQ(valuesOf(context.outputTensor(0)), std::vector<float>({5}));
}

TEST(ReferenceControl, IfAcceptsAOneElementCondAndPropagatesErrors) {
  GraphContext context(
      "If", {Value(Tensor::fromVector<bool>(DType::Bool, {1}, {false}))}, 1);
  context.setGraph("then_branch", constant(Value(floats({1}, {1}))))
      .setGraph("else_branch",
                [](const std::vector<Value> &, std::vector<Value> &) {
                  return Status::error("Add: shapes 2 and 3 differ");
                });
  EXPECT_EQ(context.run().message(), "Add: shapes 2 and 3 differ");
}

TEST(ReferenceControl, ScanOverAnEmptySequenceKeepsTheState) {
  GraphContext context(
      "Scan",
      {Value(floats({2}, {1, 2})), Value(Tensor(DType::Float32, {0, 2}))}, 2);
  context.setGraph("body", sumBody).setInt("num_scan_inputs", 1);
  ASSERT_TRUE(context.run().ok());
  EXPECT_EQ(context.calls, 0);
  EXPECT_EQ(valuesOf(context.outputTensor(0)), std::vector<float>({1, 2}));
  EXPECT_EQ(context.outputTensor(1).numElements(), 0);
}

TEST(ReferenceControl, ScanWithTwoInputsAndNoState) {
  // Elementwise products of the rows of two 2 x 2 inputs, one read
  // backwards: scan outputs only, no state.
  GraphContext context("Scan",
                       {Value(floats({2, 2}, {1, 2, 3, 4})),
                        Value(floats({2, 2}, {10, 20, 30, 40}))},
                       1);
  context
      .setGraph(
          "body",
          [](const std::vector<Value> &inputs, std::vector<Value> &outputs) {
            const float *a = inputs[0].tensor.data<float>();
            const float *b = inputs[1].tensor.data<float>();
            outputs = {Value(floats({2}, {a[0] * b[0], a[1] * b[1]}))};
            return Status::success();
          })
      .setInt("num_scan_inputs", 2)
      .setInts("scan_input_directions", {0, 1});
  ASSERT_TRUE(context.run().ok());
  EXPECT_EQ(valuesOf(context.outputTensor(0)),
            std::vector<float>({30, 80, 30, 80}));
}

TEST(ReferenceControl, LoopAndScanHandCarriedValuesOnWithoutCopying) {
  // The body sees, each iteration, the very storage it returned last time.
  Tensor big(DType::Float32, {1024});
  std::vector<const void *> seen;
  GraphFn loopBody = [&](const std::vector<Value> &inputs,
                         std::vector<Value> &outputs) {
    seen.push_back(inputs[2].tensor.raw());
    outputs = {inputs[1], inputs[2]};
    return Status::success();
  };
  GraphFn scanBody = [&](const std::vector<Value> &inputs,
                         std::vector<Value> &outputs) {
    seen.push_back(inputs[0].tensor.raw());
    outputs = {inputs[0], inputs[1]};
    return Status::success();
  };
  GraphContext loop(
      "Loop", {Value(int64Scalar(3)), Value(boolScalar(true)), Value(big)}, 1);
  loop.setGraph("body", loopBody);
  ASSERT_TRUE(loop.run().ok());
  EXPECT_EQ(seen, std::vector<const void *>(3, big.raw()));
  EXPECT_EQ(loop.outputTensor(0).raw(), big.raw());
  seen.clear();
  GraphContext scan("Scan", {Value(big), Value(floats({2, 1}, {1, 2}))}, 2);
  scan.setGraph("body", scanBody).setInt("num_scan_inputs", 1);
  ASSERT_TRUE(scan.run().ok());
  EXPECT_EQ(seen, std::vector<const void *>(2, big.raw()));
  EXPECT_EQ(scan.outputTensor(0).raw(), big.raw());
}

TEST(ReferenceControl, ScanInTheOpset8Form) {
  // test_scan_sum: no sequence_lens, a batch of one, scanned along axis 1.
  GraphContext context("Scan",
                       {Value(), Value(floats({1, 2}, {0, 0})),
                        Value(floats({1, 3, 2}, {1, 2, 3, 4, 5, 6}))},
                       2);
  context.omitInput(0);
  context.setGraph("body", sumBody).setInt("num_scan_inputs", 1);
  ASSERT_TRUE(context.run().ok());
  EXPECT_EQ(context.outputTensor(0).shape(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(valuesOf(context.outputTensor(0)), std::vector<float>({9, 12}));
  EXPECT_EQ(context.outputTensor(1).shape(), (std::vector<int64_t>{1, 3, 2}));
  EXPECT_EQ(valuesOf(context.outputTensor(1)),
            std::vector<float>({1, 2, 4, 6, 9, 12}));
  // A batch of two, the second scanned backwards via `directions`, with
  // full-length sequence_lens.
  GraphContext batch(
      "Scan",
      {Value(Tensor::fromVector<int32_t>(DType::Int32, {2}, {2, 2})),
       Value(floats({2, 1}, {0, 100})), Value(floats({2, 2, 1}, {1, 2, 3, 4}))},
      2);
  batch.setGraph("body", sumBody)
      .setInt("num_scan_inputs", 1)
      .setInts("directions", {1});
  ASSERT_TRUE(batch.run().ok());
  EXPECT_EQ(valuesOf(batch.outputTensor(0)), std::vector<float>({3, 107}));
  EXPECT_EQ(valuesOf(batch.outputTensor(1)),
            std::vector<float>({2, 3, 104, 107}));
  GraphContext shorter(
      "Scan",
      {Value(Tensor::fromVector<int32_t>(DType::Int32, {1}, {1})),
       Value(floats({1, 1}, {0})), Value(floats({1, 2, 1}, {1, 2}))},
      2);
  shorter.setGraph("body", sumBody)
      .setInt("num_scan_inputs", 1)
      .setInts("directions", {0});
  EXPECT_EQ(shorter.run().message(),
            "Scan: sequence_lens shorter than the sequence axis are not "
            "supported");
}

} // namespace
