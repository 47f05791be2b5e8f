//===- ReorderTest.cpp - Distributed transposes and repacks ---------------===//
//
// The reorder kernel on tensors too large for the general kernel: the
// planner's NCHW <-> NHWC layout switches (a Transpose with the identity
// perm between two DRAM orders), ONNX Transposes and repacking Reshapes /
// Flattens. Each runs on random-filled memory, must have no hazard, and
// must move every element bit for bit (the copies are bit copies).
//
//===----------------------------------------------------------------------===//

#include "KernelHarness.h"

#include "mncc/reference/SimpleContext.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <map>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::testing;
using reference::DType;
using reference::Tensor;

namespace {

struct ReorderCase {
  std::string name;
  std::string opType;
  std::vector<int64_t> inShape;
  std::vector<unsigned> inOrder;
  std::vector<int64_t> outShape;
  std::vector<unsigned> outOrder;
  std::vector<int64_t> perm; // Transpose
  int64_t axis = 1;          // Flatten
  DeviceType type = DeviceType::Single;
};

void PrintTo(const ReorderCase &c, std::ostream *os) { *os << c.name; }

/// What the output holds: the input moved by the operator (computed on the
/// host, independently of the kernel's plan).
Tensor expectedOutput(const ReorderCase &c, const Tensor &input) {
  Tensor out(DType::Float32, c.outShape);
  const float *from = input.data<float>();
  float *to = out.data<float>();
  int64_t count = out.numElements();
  if (c.opType != "Transpose") {
    std::copy(from, from + count, to);
    return out;
  }
  size_t rank = c.inShape.size();
  std::vector<int64_t> inStride(rank, 1);
  for (size_t d = rank - 1; d-- > 0;)
    inStride[d] = inStride[d + 1] * c.inShape[d + 1];
  std::vector<int64_t> index(rank, 0);
  for (int64_t position = 0; position < count; ++position) {
    int64_t source = 0;
    for (size_t k = 0; k < rank; ++k)
      source += index[k] * inStride[size_t(c.perm[k])];
    to[position] = from[source];
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < c.outShape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

class ReorderKernel : public ::testing::TestWithParam<ReorderCase> {};

/// The tensor as the device's half holds it: a half reorder moves the
/// halves bit for bit, so the expected output is the rounded input moved.
Tensor roundedToHalf(const Tensor &tensor) {
  std::vector<uint16_t> bits(size_t(tensor.numElements()));
  Tensor result(DType::Float32, tensor.shape());
  hostToDevice(DType::Float32, tensor.raw(), DeviceType::Half, bits.data(),
               tensor.numElements());
  deviceToHost(DeviceType::Half, bits.data(), DType::Float32, result.raw(),
               tensor.numElements());
  return result;
}

TEST_P(ReorderKernel, MovesEveryElementOnRandomMemory) {
  const ReorderCase &c = GetParam();
  std::vector<Tensor> inputs = {randomTensor(c.inShape, 7, -100, 100)};
  if (c.type == DeviceType::Half)
    inputs[0] = roundedToHalf(inputs[0]);
  KernelRequest request = makeRequest(c.opType, inputs, {c.outShape}, c.type);
  request.inputs[0].form = DramForm::canonical(c.type, c.inShape, c.inOrder);
  request.outputs[0].form = DramForm::canonical(c.type, c.outShape, c.outOrder);
  if (c.opType == "Transpose") {
    reference::Attribute perm;
    perm.kind = reference::Attribute::Kind::Ints;
    perm.ints = c.perm;
    request.attributes["perm"] = perm;
  }
  if (c.opType == "Flatten") {
    reference::Attribute axis;
    axis.kind = reference::Attribute::Kind::Int;
    axis.i = c.axis;
    request.attributes["axis"] = axis;
  }
  HarnessOptions options;
  options.generator = "reorder";
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runKernel(request, inputs, DType::Float32, run, error, options))
      << error;
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  Comparison comparison =
      compareTensors(run.outputs[0], expectedOutput(c, inputs[0]), 0, 0);
  EXPECT_TRUE(comparison.within) << comparison.firstMismatch;
  // The cycle counts documented in docs/codegen.md come from here.
  ::testing::Test::RecordProperty("cycles", std::to_string(run.stats.Cycles));
  ::testing::Test::RecordProperty("variant", run.description.variant);
}

std::vector<ReorderCase> cases() {
  std::vector<unsigned> nchw = {0, 1, 2, 3}, nhwc = {0, 2, 3, 1};
  std::vector<ReorderCase> list = {
      // Layout switches: the logical shape stays, the DRAM order changes.
      {"nchw_to_nhwc",
       "Transpose",
       {1, 16, 28, 28},
       nchw,
       {1, 16, 28, 28},
       nhwc,
       {0, 1, 2, 3}},
      {"nhwc_to_nchw",
       "Transpose",
       {1, 16, 28, 28},
       nhwc,
       {1, 16, 28, 28},
       nchw,
       {0, 1, 2, 3}},
      // A batch of four: each group's DRAM holds one image, in and out.
      {"nchw_to_nhwc_batch",
       "Transpose",
       {4, 16, 28, 28},
       nchw,
       {4, 16, 28, 28},
       nhwc,
       {0, 1, 2, 3}},
      // W = 14 and 7 pad their rows; C = 3 pads NHWC's.
      {"nchw_to_nhwc_padded_rows",
       "Transpose",
       {2, 24, 14, 14},
       nchw,
       {2, 24, 14, 14},
       nhwc,
       {0, 1, 2, 3}},
      {"nhwc_to_nchw_padded_rows",
       "Transpose",
       {1, 40, 7, 7},
       nhwc,
       {1, 40, 7, 7},
       nchw,
       {0, 1, 2, 3}},
      {"nchw_to_nhwc_three_channels",
       "Transpose",
       {1, 3, 56, 56},
       nchw,
       {1, 3, 56, 56},
       nhwc,
       {0, 1, 2, 3}},
      // SqueezeNet's switch before a Concat: no box of eight tiles fits the
      // L2BM (every chunk reads a pixel's channels from all over the
      // input), so boxes split down to tiles that do (R8).
      {"nhwc_to_nchw_split_boxes",
       "Transpose",
       {1, 128, 27, 27},
       nhwc,
       {1, 128, 27, 27},
       nchw,
       {0, 1, 2, 3}},
      {"nchw_to_nhwc_classifier",
       "Transpose",
       {1, 1000, 13, 13},
       nchw,
       {1, 1000, 13, 13},
       nhwc,
       {0, 1, 2, 3}},
      // ONNX Transposes.
      {"matrix", "Transpose", {300, 200}, {}, {200, 300}, {}, {1, 0}},
      {"matrix_odd", "Transpose", {123, 77}, {}, {77, 123}, {}, {1, 0}},
      {"to_nhwc_shape",
       "Transpose",
       {1, 32, 20, 20},
       {},
       {1, 20, 20, 32},
       {},
       {0, 2, 3, 1}},
      {"swap_middle",
       "Transpose",
       {4, 30, 20, 16},
       {},
       {4, 20, 30, 16},
       {},
       {0, 2, 1, 3}},
      // Repacks: the rows change length.
      {"flatten_7x7", "Flatten", {1, 128, 7, 7}, {}, {1, 6272}, {}, {}, 1},
      {"reshape_rows", "Reshape", {4, 96, 14}, {}, {4, 1344}, {}},
      {"reshape_split", "Reshape", {6000}, {}, {50, 120}, {}},
      {"matrix_double",
       "Transpose",
       {96, 80},
       {},
       {80, 96},
       {},
       {1, 0},
       1,
       DeviceType::Double},
      // Halves: two to a word, so an element moved to the other half of a
      // word is shifted and or-ed in.
      {"half_nchw_to_nhwc",
       "Transpose",
       {1, 16, 28, 28},
       nchw,
       {1, 16, 28, 28},
       nhwc,
       {0, 1, 2, 3},
       1,
       DeviceType::Half},
      {"half_nhwc_to_nchw",
       "Transpose",
       {1, 64, 14, 14},
       nhwc,
       {1, 64, 14, 14},
       nchw,
       {0, 1, 2, 3},
       1,
       DeviceType::Half},
      {"half_matrix_odd",
       "Transpose",
       {123, 77},
       {},
       {77, 123},
       {},
       {1, 0},
       1,
       DeviceType::Half},
      // LeNet-5's Flatten at batch 16.
      {"half_flatten_5x5",
       "Flatten",
       {16, 16, 5, 5},
       {},
       {16, 400},
       {},
       {},
       1,
       DeviceType::Half},
      {"half_reshape_split",
       "Reshape",
       {6000},
       {},
       {50, 120},
       {},
       {},
       1,
       DeviceType::Half},
  };
  return list;
}

INSTANTIATE_TEST_SUITE_P(Shapes, ReorderKernel, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<ReorderCase> &info) {
                           return info.param.name;
                         });

/// ResNet's largest activation both ways: seconds on the emulator, so run
/// by hand (--gtest_also_run_disabled_tests); docs/codegen.md R6 quotes
/// the cycles.
class ReorderKernelLarge : public ::testing::TestWithParam<ReorderCase> {};

TEST_P(ReorderKernelLarge, DISABLED_MovesEveryElementOnRandomMemory) {
  const ReorderCase &c = GetParam();
  std::vector<Tensor> inputs = {randomTensor(c.inShape, 9, -100, 100)};
  KernelRequest request = makeRequest(c.opType, inputs, {c.outShape}, c.type);
  request.inputs[0].form = DramForm::canonical(c.type, c.inShape, c.inOrder);
  request.outputs[0].form = DramForm::canonical(c.type, c.outShape, c.outOrder);
  reference::Attribute perm;
  perm.kind = reference::Attribute::Kind::Ints;
  perm.ints = c.perm;
  request.attributes["perm"] = perm;
  HarnessOptions options;
  options.generator = "reorder";
  options.keepProgram = std::getenv("MNCC_REORDER_TEST_DUMP") != nullptr;
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runKernel(request, inputs, DType::Float32, run, error, options))
      << error;
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  Comparison comparison =
      compareTensors(run.outputs[0], expectedOutput(c, inputs[0]), 0, 0);
  EXPECT_TRUE(comparison.within) << comparison.firstMismatch;
  if (const char *dump = std::getenv("MNCC_REORDER_TEST_DUMP"))
    if (FILE *file = std::fopen(
            (std::string(dump) + "/" + c.name + ".vsm").c_str(), "w")) {
      std::fputs(run.program.c_str(), file);
      std::fclose(file);
    }
  std::printf("%s: %llu cycles (%llu steps, %llu stalled), %s\n",
              c.name.c_str(), (unsigned long long)run.stats.Cycles,
              (unsigned long long)run.stats.Steps,
              (unsigned long long)run.stats.StallCycles,
              run.description.variant.c_str());
}

INSTANTIATE_TEST_SUITE_P(
    ResNet, ReorderKernelLarge,
    ::testing::Values(ReorderCase{"nchw_to_nhwc_64x112x112",
                                  "Transpose",
                                  {1, 64, 112, 112},
                                  {0, 1, 2, 3},
                                  {1, 64, 112, 112},
                                  {0, 2, 3, 1},
                                  {0, 1, 2, 3}},
                      ReorderCase{"nchw_to_nhwc_4x64x56x56",
                                  "Transpose",
                                  {4, 64, 56, 56},
                                  {0, 1, 2, 3},
                                  {4, 64, 56, 56},
                                  {0, 2, 3, 1},
                                  {0, 1, 2, 3}},
                      ReorderCase{"nhwc_to_nchw_64x112x112",
                                  "Transpose",
                                  {1, 64, 112, 112},
                                  {0, 2, 3, 1},
                                  {1, 64, 112, 112},
                                  {0, 1, 2, 3},
                                  {0, 1, 2, 3}}),
    [](const ::testing::TestParamInfo<ReorderCase> &info) {
      return info.param.name;
    });

TEST(ReorderKernel, TheSameRequestGivesTheSameProgram) {
  std::vector<Tensor> inputs = {randomTensor({1, 16, 28, 28}, 3)};
  KernelRequest request =
      makeRequest("Transpose", inputs, {{1, 16, 28, 28}}, DeviceType::Single);
  request.outputs[0].form =
      DramForm::canonical(DeviceType::Single, {1, 16, 28, 28}, {0, 2, 3, 1});
  reference::Attribute perm;
  perm.kind = reference::Attribute::Kind::Ints;
  perm.ints = {0, 1, 2, 3};
  request.attributes["perm"] = perm;
  for (const auto &generator : kernelGenerators())
    if (std::string(generator->name()) == "reorder") {
      std::string text[2];
      for (std::string &program : text) {
        VsmWriter out;
        KernelDescription description;
        std::string error;
        ASSERT_TRUE(generator->emit(request, out, description, error)) << error;
        program = out.take();
      }
      EXPECT_EQ(text[0], text[1]);
    }
}

TEST(ReorderKernel, LeavesSmallTensorsToTheGeneralKernel) {
  std::vector<Tensor> inputs = {randomTensor({2, 3, 4}, 1)};
  KernelRequest request =
      makeRequest("Transpose", inputs, {{4, 3, 2}}, DeviceType::Single);
  std::string whyNot;
  for (const auto &generator : kernelGenerators())
    if (std::string(generator->name()) == "reorder") {
      EXPECT_FALSE(generator->matches(request, whyNot));
      EXPECT_NE(whyNot.find("general"), std::string::npos) << whyNot;
    }
}

//===----------------------------------------------------------------------===//
// Data movement: Concat, Split, Slice, Pad
//===----------------------------------------------------------------------===//

/// A data-movement node, checked against pfvm:cpu: every element moved
/// bit for bit (zero where Pad pads), in any DRAM order, any type.
struct MoveCase {
  std::string name;
  std::string opType;
  std::vector<Tensor> inputs; // float inputs are the data
  std::map<std::string, reference::Attribute> attributes;
  size_t outputs = 1;
  DeviceType type = DeviceType::Single;
  /// The DRAM order of every data tensor (empty: the identity).
  std::vector<unsigned> order;
};

void PrintTo(const MoveCase &c, std::ostream *os) { *os << c.name; }

class DataMovementKernel : public ::testing::TestWithParam<MoveCase> {};

TEST_P(DataMovementKernel, MovesEveryElementOnRandomMemory) {
  const MoveCase &c = GetParam();
  std::vector<Tensor> inputs = c.inputs;
  DType host = c.type == DeviceType::Double ? DType::Float64 : DType::Float32;
  for (Tensor &input : inputs) {
    if (!reference::isFloatingPoint(input.dtype()))
      continue;
    if (c.type == DeviceType::Half)
      input = roundedToHalf(input);
    if (c.type == DeviceType::Double)
      input = randomDoubleTensor(input.shape(), 11, -100, 100);
  }
  std::vector<reference::Value> values;
  for (const Tensor &tensor : inputs)
    values.push_back(reference::Value(tensor));
  reference::SimpleKernelContext context(c.opType, values, c.outputs);
  for (const auto &[name, value] : c.attributes)
    context.setAttribute(name, value);
  reference::Status status = context.run();
  ASSERT_TRUE(status.ok()) << status.message();
  std::vector<std::vector<int64_t>> shapes;
  for (size_t o = 0; o < c.outputs; ++o)
    shapes.push_back(context.outputTensor(o).shape());
  std::vector<bool> constant;
  for (const Tensor &input : inputs)
    constant.push_back(!reference::isFloatingPoint(input.dtype()));
  KernelRequest request =
      makeRequest(c.opType, inputs, shapes, c.type, constant);
  request.attributes = c.attributes;
  for (size_t i = 0; i < inputs.size(); ++i)
    request.inputs[i].form =
        reference::isFloatingPoint(inputs[i].dtype())
            ? DramForm::canonical(c.type, inputs[i].shape(), c.order)
            : DramForm::canonical(DeviceType::Int32, inputs[i].shape());
  for (size_t o = 0; o < c.outputs; ++o)
    request.outputs[o].form = DramForm::canonical(c.type, shapes[o], c.order);
  HarnessOptions options;
  options.generator = "reorder";
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runKernel(request, inputs, host, run, error, options)) << error;
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  for (size_t o = 0; o < c.outputs; ++o) {
    Comparison comparison =
        compareTensors(run.outputs[o], context.outputTensor(o), 0, 0);
    EXPECT_TRUE(comparison.within)
        << "output " << o << ": " << comparison.firstMismatch;
  }
  ::testing::Test::RecordProperty("cycles", std::to_string(run.stats.Cycles));
  ::testing::Test::RecordProperty("variant", run.description.variant);
}

reference::Attribute intAttribute(int64_t value) {
  reference::Attribute a;
  a.kind = reference::Attribute::Kind::Int;
  a.i = value;
  return a;
}

Tensor int64s(std::vector<int64_t> values) {
  int64_t count = int64_t(values.size());
  return Tensor::fromVector<int64_t>(DType::Int64, {count}, values);
}

std::vector<MoveCase> moveCases() {
  std::vector<unsigned> nhwc = {0, 2, 3, 1};
  auto data = [](std::vector<int64_t> shape, uint64_t seed) {
    return randomTensor(std::move(shape), seed, -100, 100);
  };
  std::vector<MoveCase> list = {
      // SqueezeNet's fire modules: two expand branches along the channels,
      // channels last (each output row is a row of each input).
      {"concat_channels_nhwc",
       "Concat",
       {data({1, 64, 27, 27}, 1), data({1, 64, 27, 27}, 2)},
       {{"axis", intAttribute(1)}},
       1,
       DeviceType::Single,
       nhwc},
      {"concat_channels_nhwc_half",
       "Concat",
       {data({1, 64, 13, 13}, 1), data({1, 64, 13, 13}, 2)},
       {{"axis", intAttribute(1)}},
       1,
       DeviceType::Half,
       nhwc},
      // Along the channels in NCHW: whole blocks of rows.
      {"concat_channels_nchw_three",
       "Concat",
       {data({2, 3, 20, 20}, 1), data({2, 5, 20, 20}, 2),
        data({2, 1, 20, 20}, 3)},
       {{"axis", intAttribute(1)}}},
      // Along the rows' own dimension at offsets inside a long word.
      {"concat_last_unaligned",
       "Concat",
       {data({40, 5}, 1), data({40, 7}, 2), data({40, 3}, 3)},
       {{"axis", intAttribute(-1)}}},
      {"concat_last_unaligned_half",
       "Concat",
       {data({30, 5}, 1), data({30, 11}, 2)},
       {{"axis", intAttribute(1)}},
       1,
       DeviceType::Half},
      {"concat_batch_double",
       "Concat",
       {data({3, 40, 30}, 1), data({2, 40, 30}, 2)},
       {{"axis", intAttribute(0)}},
       1,
       DeviceType::Double},
      {"split_channels",
       "Split",
       {data({2, 30, 100}, 1), int64s({10, 20})},
       {{"axis", intAttribute(1)}},
       2},
      {"split_last_half",
       "Split",
       {data({20, 50}, 1), int64s({13, 30, 7})},
       {{"axis", intAttribute(1)}},
       3,
       DeviceType::Half},
      {"slice_steps",
       "Slice",
       {data({20, 10, 30}, 1), int64s({1, 25}), int64s({19, 2}), int64s({0, 2}),
        int64s({3, -2})}},
      {"slice_nhwc",
       "Slice",
       {data({1, 32, 20, 20}, 1), int64s({4, 2}), int64s({20, 19}),
        int64s({1, 3})},
       {},
       1,
       DeviceType::Single,
       nhwc},
      {"pad_spatial",
       "Pad",
       {data({1, 3, 30, 30}, 1), int64s({0, 0, 1, 2, 0, 0, 3, 1})}},
      {"pad_crop_half",
       "Pad",
       {data({4, 30, 40}, 1), int64s({1, -2, 3, 0, 2, -1})},
       {},
       1,
       DeviceType::Half},
  };
  return list;
}

INSTANTIATE_TEST_SUITE_P(Moves, DataMovementKernel,
                         ::testing::ValuesIn(moveCases()),
                         [](const ::testing::TestParamInfo<MoveCase> &info) {
                           return info.param.name;
                         });

TEST(DataMovementKernel, DeclinesAPadOfAnotherValue) {
  std::vector<Tensor> inputs = {
      randomTensor({4, 8}, 1), int64s({0, 1, 0, 1}),
      Tensor::fromVector<float>(DType::Float32, {}, {2.5f})};
  KernelRequest request = makeRequest("Pad", inputs, {{4, 10}},
                                      DeviceType::Single, {false, true, true});
  request.inputs[1].form = DramForm::canonical(DeviceType::Int32, {4});
  for (const auto &generator : kernelGenerators())
    if (std::string(generator->name()) == "reorder") {
      std::string whyNot;
      EXPECT_FALSE(generator->matches(request, whyNot));
      EXPECT_NE(whyNot.find("constant zero"), std::string::npos) << whyNot;
    }
}

} // namespace
