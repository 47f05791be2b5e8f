//===- ResampleTest.cpp - Resize, ConvTranspose and Pad modes on the emulator
//-//
//
// Each case runs one node through the kernel that selection picks (or the
// one named) on random-filled memory, must have no hazard, and must agree
// with pfvm:cpu: the reorder kernel's index maps (nearest Resize, Pad's
// edge, reflect and wrap modes) bit for bit; the resample kernel's
// weighted sums (linear and cubic Resize, ConvTranspose) within 1e-5
// absolute plus 1e-5 relative in single precision (weights rounded once
// to single, sums in another order than the reference's double), 4e-3 in
// half and 1e-12 in double.
//
//===----------------------------------------------------------------------===//

#include "KernelHarness.h"

#include "mncc/codegen/DeviceType.h"
#include "mncc/reference/SimpleContext.h"

#include "gtest/gtest.h"

#include <cmath>
#include <map>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::testing;
using reference::Attribute;
using reference::DType;
using reference::Tensor;

namespace {

Attribute intAttr(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::Int;
  a.i = v;
  return a;
}
Attribute floatAttr(float v) {
  Attribute a;
  a.kind = Attribute::Kind::Float;
  a.f = v;
  return a;
}
Attribute intsAttr(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::Ints;
  a.ints = std::move(v);
  return a;
}
Attribute stringAttr(std::string v) {
  Attribute a;
  a.kind = Attribute::Kind::String;
  a.s = std::move(v);
  return a;
}
Tensor floats(std::vector<float> values) {
  int64_t count = int64_t(values.size());
  return Tensor::fromVector<float>(DType::Float32, {count}, values);
}
Tensor int64s(std::vector<int64_t> values) {
  int64_t count = int64_t(values.size());
  return Tensor::fromVector<int64_t>(DType::Int64, {count}, values);
}
Tensor nothing() { return Tensor(DType::Float32, {0}); }

Tensor roundedTo(const Tensor &tensor, DeviceType type) {
  std::vector<uint64_t> bits(size_t(tensor.numElements()));
  Tensor result(DType::Float32, tensor.shape());
  hostToDevice(DType::Float32, tensor.raw(), type, bits.data(),
               tensor.numElements());
  deviceToHost(type, bits.data(), DType::Float32, result.raw(),
               tensor.numElements());
  return result;
}

struct Case {
  std::string name;
  std::string opType;
  /// Data inputs first (random unless given), then the constant ones.
  std::vector<Tensor> inputs;
  std::map<std::string, Attribute> attributes;
  /// Inputs the kernel sees as constants; omitted ones (ONNX's empty
  /// name) keep their position.
  std::vector<bool> constant, omitted;
  /// The kernel expected to take it.
  std::string generator;
  DeviceType type = DeviceType::Single;
  double tolerance = 1e-5;
  /// Absolute and relative bounds instead (the matrix unit's products).
  double atol = -1, rtol = -1;
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

class ResampleKernel : public ::testing::TestWithParam<Case> {};

TEST_P(ResampleKernel, MatchesTheReferenceOnRandomMemory) {
  const Case &c = GetParam();
  std::vector<Tensor> inputs = c.inputs;
  bool dbl = c.type == DeviceType::Double;
  for (size_t i = 0; i < inputs.size(); ++i) {
    bool data = i == 0 || (c.opType == "ConvTranspose" && i < 3);
    if (!data)
      continue;
    inputs[i] = dbl ? randomDoubleTensor(inputs[i].shape(), 31 + i)
                    : randomTensor(inputs[i].shape(), 31 + i);
    if (c.type == DeviceType::Half)
      inputs[i] = roundedTo(inputs[i], DeviceType::Half);
  }
  std::vector<reference::Value> values;
  for (const Tensor &tensor : inputs)
    values.push_back(reference::Value(tensor));
  reference::SimpleKernelContext context(c.opType, values, 1);
  for (size_t i = 0; i < c.omitted.size(); ++i)
    if (c.omitted[i])
      context.omitInput(i);
  for (const auto &[name, value] : c.attributes)
    context.setAttribute(name, value);
  reference::Status status = context.run();
  ASSERT_TRUE(status.ok()) << status.message();
  Tensor expected = context.outputTensor(0);
  if (c.type == DeviceType::Half)
    expected = roundedTo(expected, DeviceType::Half);
  std::vector<bool> constant = c.constant;
  constant.resize(inputs.size(), false);
  KernelRequest request =
      makeRequest(c.opType, inputs, {expected.shape()}, c.type, constant);
  request.attributes = c.attributes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i < c.omitted.size() && c.omitted[i])
      request.inputs[i].omitted = true;
    if (!reference::isFloatingPoint(inputs[i].dtype()))
      request.inputs[i].form =
          DramForm::canonical(DeviceType::Int32, inputs[i].shape());
  }
  HarnessOptions options;
  options.generator = c.generator;
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runKernel(request, inputs, dbl ? DType::Float64 : DType::Float32,
                        run, error, options))
      << error;
  EXPECT_EQ(run.description.generator, c.generator);
  EXPECT_TRUE(run.hazards.empty()) << run.hazards.front();
  Comparison comparison = compareTensors(run.outputs[0], expected,
                                         c.atol >= 0 ? c.atol : c.tolerance,
                                         c.rtol >= 0 ? c.rtol : c.tolerance);
  EXPECT_TRUE(comparison.within) << comparison.firstMismatch;
  std::string where;
  EXPECT_TRUE(paddingIsZero(run.outputForms[0], run.outputImages[0], where))
      << where;
  ::testing::Test::RecordProperty("cycles", std::to_string(run.stats.Cycles));
  ::testing::Test::RecordProperty("variant", run.description.variant);
}

/// Resize of X by constant scales (sizes empty) or sizes (scales empty).
Case resize(std::string name, std::vector<int64_t> x, std::vector<float> scales,
            std::vector<int64_t> sizes, std::string mode, std::string transform,
            std::string generator) {
  Case c;
  c.name = std::move(name);
  c.opType = "Resize";
  c.inputs = {Tensor(DType::Float32, x), nothing(),
              scales.empty() ? nothing() : floats(scales)};
  c.constant = {false, true, true};
  c.omitted = {false, true, scales.empty()};
  if (!sizes.empty()) {
    c.inputs.push_back(int64s(sizes));
    c.constant.push_back(true);
    c.omitted.push_back(false);
  }
  c.attributes["mode"] = stringAttr(mode);
  c.attributes["coordinate_transformation_mode"] = stringAttr(transform);
  c.generator = std::move(generator);
  return c;
}

Case with(Case c, const std::string &name, Attribute value) {
  c.attributes[name] = std::move(value);
  c.name += "_" + name;
  return c;
}

Case typed(Case c, DeviceType type) {
  c.type = type;
  c.tolerance = type == DeviceType::Half ? 4e-3 : 1e-12;
  c.name += type == DeviceType::Half ? "_half" : "_double";
  return c;
}

std::vector<Case> resizeCases() {
  std::vector<Case> list;
  const std::vector<float> up2 = {1, 1, 2, 2}, down = {1, 1, 0.6f, 0.6f};
  list.push_back(resize("linear_upsample", {1, 1, 2, 2}, up2, {}, "linear",
                        "half_pixel", "resample"));
  list.push_back(resize("linear_downsample_align_corners", {1, 1, 2, 4}, down,
                        {}, "linear", "align_corners", "resample"));
  list.push_back(resize("linear_pytorch_half_pixel_sizes", {1, 1, 4, 4}, {},
                        {1, 1, 3, 1}, "linear", "pytorch_half_pixel",
                        "resample"));
  list.push_back(resize("cubic_upsample", {1, 1, 4, 4}, up2, {}, "cubic",
                        "half_pixel", "resample"));
  list.push_back(with(with(resize("cubic_A_n0p5", {1, 1, 4, 4}, down, {},
                                  "cubic", "half_pixel", "resample"),
                           "cubic_coeff_a", floatAttr(-0.5f)),
                      "exclude_outside", intAttr(1)));
  list.push_back(resize("cubic_asymmetric", {1, 1, 4, 4}, up2, {}, "cubic",
                        "asymmetric", "resample"));
  list.push_back(resize("cubic_sizes_channels", {2, 3, 5, 4}, {}, {2, 3, 9, 7},
                        "cubic", "align_corners", "resample"));
  // tf_crop_and_resize with a constant roi, 10 outside it.
  Case crop = resize("linear_tf_crop_and_resize", {1, 1, 4, 4}, {},
                     {1, 1, 3, 3}, "linear", "tf_crop_and_resize", "resample");
  crop.inputs[1] = floats({0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f});
  crop.omitted[1] = false;
  list.push_back(with(crop, "extrapolation_value", floatAttr(10)));
  list.push_back(typed(resize("linear_upsample", {1, 2, 3, 3}, up2, {},
                              "linear", "half_pixel", "resample"),
                       DeviceType::Half));
  list.push_back(typed(resize("cubic_upsample", {1, 1, 3, 3}, up2, {}, "cubic",
                              "half_pixel", "resample"),
                       DeviceType::Double));
  // Nearest modes are index maps: the reorder kernel, exact.
  auto exact = [](Case c) {
    c.tolerance = 0;
    return c;
  };
  list.push_back(exact(resize("nearest_upsample", {1, 1, 2, 2}, {1, 1, 2, 3},
                              {}, "nearest", "half_pixel", "reorder")));
  list.push_back(exact(resize("nearest_downsample", {1, 1, 2, 4}, down, {},
                              "nearest", "asymmetric", "reorder")));
  list.push_back(
      exact(with(resize("nearest_ceil", {1, 1, 4, 4}, {}, {1, 1, 8, 8},
                        "nearest", "half_pixel", "reorder"),
                 "nearest_mode", stringAttr("ceil"))));
  list.push_back(
      exact(with(resize("nearest_floor", {1, 1, 4, 4}, {}, {1, 1, 8, 8},
                        "nearest", "align_corners", "reorder"),
                 "nearest_mode", stringAttr("floor"))));
  list.push_back(
      exact(with(resize("nearest_prefer_ceil", {1, 1, 4, 4}, {}, {1, 1, 8, 8},
                        "nearest", "asymmetric", "reorder"),
                 "nearest_mode", stringAttr("round_prefer_ceil"))));
  list.push_back(exact(typed(resize("nearest_upsample", {1, 3, 20, 20}, up2, {},
                                    "nearest", "asymmetric", "reorder"),
                             DeviceType::Half)));
  // A segmentation decoder's x2 nearest upsampling, channels last.
  list.push_back(exact(resize("nearest_upsample_1x64x56x56", {1, 64, 56, 56},
                              up2, {}, "nearest", "asymmetric", "reorder")));
  return list;
}

INSTANTIATE_TEST_SUITE_P(Resize, ResampleKernel,
                         ::testing::ValuesIn(resizeCases()),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return info.param.name;
                         });

Case convTranspose(std::string name, std::vector<int64_t> x,
                   std::vector<int64_t> w, bool bias = false) {
  Case c;
  c.name = std::move(name);
  c.opType = "ConvTranspose";
  c.inputs = {Tensor(DType::Float32, x), Tensor(DType::Float32, w)};
  c.constant = {false, true};
  if (bias) {
    int64_t group = 1;
    c.inputs.push_back(Tensor(DType::Float32, {w[1] * group}));
    c.constant.push_back(true);
  }
  c.generator = "resample";
  return c;
}

// A constant W: the matrix unit, within the conv kernel's bounds for its
// K = C kH kW (ConvTest.cpp: pseudo-single and half products).
Case onMatrixUnit(Case c, DeviceType type = DeviceType::Single) {
  c.generator = "convtranspose";
  c.type = type;
  const std::vector<int64_t> &w = c.inputs[1].shape();
  double rootK = std::sqrt(double(w[0] * w[2] * w[3]));
  bool half = type == DeviceType::Half;
  c.atol = std::ldexp(1.0, half ? -8 : -16) * rootK;
  c.rtol = std::ldexp(1.0, half ? -9 : -20);
  c.name += half ? "_matrix_unit_half" : "_matrix_unit";
  return c;
}

std::vector<Case> convTransposeCases() {
  std::vector<Case> list;
  list.push_back(convTranspose("basic", {1, 1, 3, 3}, {1, 2, 3, 3}));
  list.push_back(with(
      with(convTranspose("strides_output_padding", {1, 1, 3, 3}, {1, 2, 3, 3}),
           "strides", intsAttr({3, 2})),
      "output_padding", intsAttr({1, 1})));
  list.push_back(with(
      with(convTranspose("pads_dilations", {1, 2, 4, 4}, {2, 3, 3, 3}, true),
           "pads", intsAttr({1, 2, 0, 1})),
      "dilations", intsAttr({2, 1})));
  list.push_back(
      with(with(convTranspose("same_upper", {1, 1, 3, 3}, {1, 2, 3, 3}),
                "auto_pad", stringAttr("SAME_UPPER")),
           "strides", intsAttr({2, 2})));
  list.push_back(
      with(with(convTranspose("output_shape", {1, 1, 3, 3}, {1, 2, 3, 3}),
                "output_shape", intsAttr({10, 8})),
           "strides", intsAttr({3, 2})));
  Case grouped = convTranspose("groups", {2, 4, 3, 3}, {4, 3, 2, 2});
  grouped.inputs.push_back(Tensor(DType::Float32, {6}));
  grouped.constant.push_back(true);
  list.push_back(
      with(with(grouped, "group", intAttr(2)), "strides", intsAttr({2, 2})));
  list.push_back(convTranspose("1d", {1, 1, 5}, {1, 2, 3}));
  list.push_back(convTranspose("3d", {1, 1, 3, 4, 5}, {1, 2, 3, 3, 3}));
  Case runtimeW = convTranspose("runtime_w", {1, 2, 3, 3}, {2, 2, 3, 3}, true);
  runtimeW.constant = {false, false, true};
  list.push_back(with(runtimeW, "strides", intsAttr({2, 2})));
  list.push_back(typed(convTranspose("basic", {1, 2, 3, 3}, {2, 2, 3, 3}),
                       DeviceType::Half));
  list.push_back(typed(convTranspose("basic", {1, 2, 3, 3}, {2, 2, 3, 3}),
                       DeviceType::Double));
  list.push_back(onMatrixUnit(
      with(with(with(convTranspose("strided", {1, 3, 5, 5}, {3, 4, 3, 3}, true),
                     "strides", intsAttr({2, 2})),
                "pads", intsAttr({1, 1, 1, 1})),
           "output_padding", intsAttr({1, 1}))));
  Case groupedUnit = convTranspose("groups", {1, 4, 6, 6}, {4, 3, 4, 4});
  list.push_back(onMatrixUnit(with(
      with(with(groupedUnit, "group", intAttr(2)), "strides", intsAttr({2, 2})),
      "pads", intsAttr({1, 1, 1, 1}))));
  list.push_back(onMatrixUnit(
      with(with(convTranspose("dilated_same", {2, 8, 5, 4}, {8, 8, 3, 2}),
                "dilations", intsAttr({2, 1})),
           "auto_pad", stringAttr("SAME_LOWER"))));
  return list;
}

INSTANTIATE_TEST_SUITE_P(ConvTranspose, ResampleKernel,
                         ::testing::ValuesIn(convTransposeCases()),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return info.param.name;
                         });

/// Real layers take a minute on the emulator: run them by hand with
/// --gtest_also_run_disabled_tests (docs/codegen.md has their cycles).
std::vector<Case> largeConvTransposeCases() {
  std::vector<Case> list;
  // A GAN generator's and a segmentation decoder's x2 upsampling layers.
  list.push_back(
      onMatrixUnit(with(with(convTranspose("1x32x14x14_k4s2p1", {1, 32, 14, 14},
                                           {32, 16, 4, 4}, true),
                             "strides", intsAttr({2, 2})),
                        "pads", intsAttr({1, 1, 1, 1}))));
  list.push_back(
      onMatrixUnit(with(with(convTranspose("1x64x28x28_k4s2p1", {1, 64, 28, 28},
                                           {64, 32, 4, 4}),
                             "strides", intsAttr({2, 2})),
                        "pads", intsAttr({1, 1, 1, 1})),
                   DeviceType::Half));
  return list;
}

INSTANTIATE_TEST_SUITE_P(DISABLED_LargeConvTranspose, ResampleKernel,
                         ::testing::ValuesIn(largeConvTransposeCases()),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return info.param.name;
                         });

Case pad(std::string name, std::vector<int64_t> x, std::vector<int64_t> pads,
         std::string mode, std::string generator) {
  Case c;
  c.name = std::move(name);
  c.opType = "Pad";
  c.inputs = {Tensor(DType::Float32, x), int64s(pads)};
  c.constant = {false, true};
  c.attributes["mode"] = stringAttr(mode);
  c.generator = std::move(generator);
  c.tolerance = 0;
  return c;
}

std::vector<Case> padCases() {
  std::vector<Case> list;
  list.push_back(
      pad("edge", {1, 3, 4, 5}, {0, 0, 1, 2, 0, 0, 3, 4}, "edge", "reorder"));
  list.push_back(pad("reflect", {1, 3, 4, 5}, {0, 0, 3, 2, 0, 0, 3, 4},
                     "reflect", "reorder"));
  list.push_back(pad("wrap", {2, 3, 4}, {0, 2, 5, 0, 1, 3}, "wrap", "reorder"));
  list.push_back(pad("reflect_crop", {1, 3, 6, 6}, {0, 0, -1, 2, 0, 0, 2, -2},
                     "reflect", "reorder"));
  list.push_back(typed(
      pad("edge", {1, 16, 30, 30}, {0, 0, 3, 3, 0, 0, 3, 3}, "edge", "reorder"),
      DeviceType::Half));
  list.back().tolerance = 0;
  // A ResNet-sized reflection pad, channels last.
  list.push_back(pad("reflect_1x64x56x56", {1, 64, 56, 56},
                     {0, 0, 1, 1, 0, 0, 1, 1}, "reflect", "reorder"));
  // Tile is an index map whose repeats the output's shape fixes, given
  // as a constant or at run time.
  for (bool constantRepeats : {true, false}) {
    Case tile = pad(constantRepeats ? "tile" : "tile_runtime_repeats",
                    {4, 16, 20, 20}, {}, "constant", "reorder");
    tile.opType = "Tile";
    tile.attributes.clear();
    tile.inputs[1] = int64s({1, 1, 2, 3});
    tile.constant[1] = constantRepeats;
    list.push_back(tile);
  }
  Case value = pad("constant_value", {1, 3, 4, 5}, {0, 1, 2, 0, 0, 0, 1, 3},
                   "constant", "resample");
  value.inputs.push_back(Tensor::fromVector<float>(DType::Float32, {}, {1.5f}));
  value.constant.push_back(true);
  list.push_back(value);
  return list;
}

INSTANTIATE_TEST_SUITE_P(Pad, ResampleKernel, ::testing::ValuesIn(padCases()),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return info.param.name;
                         });

/// matches() says why up front: what the device cannot take goes to the
/// next generator or the host with the reason.
std::string whyNot(const KernelRequest &request, const std::string &name) {
  for (const auto &generator : kernelGenerators())
    if (generator->name() == name) {
      std::string reason;
      EXPECT_FALSE(generator->matches(request, reason));
      return reason;
    }
  ADD_FAILURE() << "no generator " << name;
  return "";
}

TEST(ResampleKernel, DeclinesScalesKnownOnlyAtRunTime) {
  std::vector<Tensor> inputs = {randomTensor({1, 1, 2, 2}, 1), nothing(),
                                floats({1, 1, 2, 2})};
  KernelRequest request = makeRequest("Resize", inputs, {{1, 1, 4, 4}},
                                      DeviceType::Single, {false, true, false});
  request.inputs[1].omitted = true;
  request.attributes["mode"] = stringAttr("linear");
  for (const char *name : {"reorder", "resample"})
    EXPECT_NE(whyNot(request, name).find("scales must be constants"),
              std::string::npos);
}

TEST(ResampleKernel, TakesSizesKnownOnlyAtRunTimeFromTheOutput) {
  std::vector<Tensor> inputs = {randomTensor({1, 1, 4, 4}, 1), nothing(),
                                nothing(), int64s({1, 1, 8, 8})};
  KernelRequest request =
      makeRequest("Resize", inputs, {{1, 1, 8, 8}}, DeviceType::Single,
                  {false, true, true, false});
  request.inputs[1].omitted = request.inputs[2].omitted = true;
  request.inputs[3].form = DramForm::canonical(DeviceType::Int32, {4});
  HarnessOptions options;
  KernelRun run;
  std::string error;
  ASSERT_TRUE(runKernel(request, inputs, DType::Float32, run, error, options))
      << error;
  EXPECT_EQ(run.description.generator, "reorder");
  reference::SimpleKernelContext context(
      "Resize",
      {reference::Value(inputs[0]), reference::Value(inputs[1]),
       reference::Value(inputs[2]), reference::Value(inputs[3])},
      1);
  context.omitInput(1).omitInput(2);
  ASSERT_TRUE(context.run().ok());
  EXPECT_TRUE(
      compareTensors(run.outputs[0], context.outputTensor(0), 0, 0).within);
}

TEST(ResampleKernel, DeclinesALinearResizeLargerThanOnePe) {
  std::vector<Tensor> inputs = {randomTensor({1, 64, 56, 56}, 1), nothing(),
                                floats({1, 1, 2, 2})};
  KernelRequest request = makeRequest("Resize", inputs, {{1, 64, 112, 112}},
                                      DeviceType::Single, {false, true, true});
  request.inputs[1].omitted = true;
  request.attributes["mode"] = stringAttr("linear");
  EXPECT_NE(whyNot(request, "reorder").find("not an index map"),
            std::string::npos);
  EXPECT_NE(whyNot(request, "resample").find("do not fit one PE"),
            std::string::npos);
}

} // namespace
