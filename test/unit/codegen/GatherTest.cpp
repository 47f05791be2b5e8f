//===- GatherTest.cpp - Rows of a constant table by run-time indices ------===//
//
// The BERT-like encoder's token embedding (a [1000, 256] table, [1, 128]
// int64 indices), negative indices, padded index rows, a table of 64 long
// word rows in half and double, each on random-filled memory with no
// hazard; a gather is a copy, so the rows must equal the reference's
// exactly. And the requests the kernel leaves to others.
//
//===----------------------------------------------------------------------===//

#include "KernelHarness.h"

#include "mncc/reference/SimpleContext.h"

#include "gtest/gtest.h"

#include <random>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::testing;

namespace {

reference::Tensor indexTensor(std::vector<int64_t> shape, int64_t rows,
                              uint64_t seed, bool negatives) {
  reference::Tensor t(reference::DType::Int64, shape);
  std::mt19937_64 engine(seed);
  for (int64_t i = 0; i < t.numElements(); ++i) {
    int64_t index = int64_t(engine() % uint64_t(rows));
    t.data<int64_t>()[i] = negatives && i % 3 == 0 ? index - rows : index;
  }
  return t;
}

/// The table rounded to the device format and back (what the device
/// holds; the reference then gathers the same values).
reference::Tensor deviceValues(const reference::Tensor &t, DeviceType type) {
  int64_t n = t.numElements();
  std::vector<uint64_t> bits(static_cast<size_t>(n));
  EXPECT_TRUE(
      hostToDevice(reference::DType::Float32, t.raw(), type, bits.data(), n));
  reference::Tensor back(reference::DType::Float32, t.shape());
  EXPECT_TRUE(deviceToHost(type, bits.data(), reference::DType::Float32,
                           back.raw(), n));
  return back;
}

struct Case {
  std::string name;
  std::vector<int64_t> table;
  std::vector<int64_t> indices;
  bool negatives = false;
  DeviceType type = DeviceType::Single;
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

class GatherKernel : public ::testing::TestWithParam<Case> {};

TEST_P(GatherKernel, CopiesTheRowsOnRandomMemory) {
  const Case &c = GetParam();
  reference::Tensor table =
      deviceValues(randomTensor(c.table, 31, -2, 2), c.type);
  reference::Tensor indices =
      indexTensor(c.indices, c.table[0], 32, c.negatives);
  std::vector<int64_t> shape = c.indices;
  shape.push_back(c.table[1]);
  KernelRequest request =
      makeRequest("Gather", {table, indices}, {shape}, c.type, {true, false});
  request.inputs[1].form = DramForm::canonical(DeviceType::Int32, c.indices);
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runKernel(request, {table, indices}, reference::DType::Float32,
                        run, error))
      << error;
  EXPECT_EQ(run.description.generator, "gather");
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  reference::SimpleKernelContext context(
      "Gather", {reference::Value(table), reference::Value(indices)}, 1);
  reference::Status status = context.run();
  ASSERT_TRUE(status.ok()) << status.message();
  Comparison comparison =
      compareTensors(run.outputs[0], context.outputTensor(0), 0, 0);
  EXPECT_TRUE(comparison.within) << comparison.firstMismatch;
  std::printf("%s: %llu cycles\n", c.name.c_str(),
              (unsigned long long)run.stats.Cycles);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GatherKernel,
    ::testing::Values(
        // bench/models/export_bert.py's token embedding.
        Case{"bert_tokens", {1000, 256}, {1, 128}},
        Case{"negative_indices", {300, 256}, {2, 40}, true},
        // Index rows of 5 padded to 8; rows of 64 long words.
        Case{"padded_index_rows", {50, 128}, {3, 5}},
        // More than one pass of 128 rows (an outermost extent under four
        // keeps the output in group 0).
        Case{"two_passes", {20, 128}, {2, 100}},
        Case{"half", {40, 256}, {7}, false, DeviceType::Half},
        Case{"double", {40, 64}, {9}, true, DeviceType::Double}),
    [](const ::testing::TestParamInfo<Case> &info) { return info.param.name; });

TEST(GatherKernel, LeavesWhatItDoesNotCover) {
  auto refusal = [](KernelRequest request) {
    std::string whyNot;
    for (const auto &generator : kernelGenerators())
      if (std::string(generator->name()) == "gather") {
        EXPECT_FALSE(generator->matches(request, whyNot));
      }
    return whyNot;
  };
  reference::Tensor indices = indexTensor({4}, 10, 1, false);
  // A request points at its constants: they outlive the requests.
  std::vector<std::vector<reference::Tensor>> kept;
  auto request = [&](std::vector<int64_t> table, bool constant) {
    kept.push_back({randomTensor(table, 1), indices});
    KernelRequest r = makeRequest("Gather", kept.back(), {{4, table[1]}},
                                  DeviceType::Single, {constant, false});
    r.inputs[1].form = DramForm::canonical(DeviceType::Int32, {4});
    return r;
  };
  EXPECT_NE(refusal(request({10, 256}, false)).find("not a constant"),
            std::string::npos);
  EXPECT_NE(refusal(request({10, 100}, true)).find("multiple of 64"),
            std::string::npos);
  EXPECT_NE(refusal(request({10, 384}, true)).find("power of two"),
            std::string::npos);
  EXPECT_NE(refusal(request({3000, 256}, true)).find("does not fit LM0"),
            std::string::npos);
  KernelRequest axis1 = request({10, 256}, true);
  reference::Attribute one;
  one.kind = reference::Attribute::Kind::Int;
  one.i = 1;
  axis1.attributes["axis"] = one;
  EXPECT_NE(refusal(axis1).find("axis 0"), std::string::npos);
  // An output spread over the four groups (the indices lie in group 0).
  std::vector<reference::Tensor> spreadInputs = {
      randomTensor({10, 128}, 1), indexTensor({200}, 10, 1, false)};
  KernelRequest spread = makeRequest("Gather", spreadInputs, {{200, 128}},
                                     DeviceType::Single, {true, false});
  spread.inputs[1].form = DramForm::canonical(DeviceType::Int32, {200});
  EXPECT_NE(refusal(spread).find("more than one group"), std::string::npos);
}

} // namespace
