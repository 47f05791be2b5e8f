//===- MiscSignalTest.cpp - Windows, DFT, STFT, MelWeightMatrix -----------===//
//
// Expected values from the ONNX backend tests (test_*window*, test_dft*,
// test_stft*, test_melweightmatrix) and numpy.fft. The window test data was
// made in float32 with its own rounding, so those compare within 1e-4.
//
//===----------------------------------------------------------------------===//

#include "mncc/reference/SimpleContext.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mncc::reference;

namespace {

Value int32Scalar(int32_t value) {
  return Value(Tensor::fromVector<int32_t>(DType::Int32, {}, {value}));
}
Value int64Scalar(int64_t value) {
  return Value(Tensor::fromVector<int64_t>(DType::Int64, {}, {value}));
}

void expectNear(const Tensor &tensor, const std::vector<double> &expected,
                double tolerance) {
  ASSERT_EQ(tensor.numElements(), static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(tensor.elementAsDouble(i), expected[i],
                tolerance * std::max(1.0, std::abs(expected[i])))
        << "element " << i;
}

struct WindowCase {
  const char *op;
  bool periodic;
  std::vector<double> expected;
};

TEST(ReferenceMiscSignal, WindowsMatchTheBackendTests) {
  std::vector<WindowCase> cases = {
      {"HannWindow",
       true,
       {0, 0.095486075, 0.34547389, 0.65448201, 0.90448672, 1, 0.90454125,
        0.65457022, 0.34556198, 0.095540434}},
      {"HannWindow",
       false,
       {0, 0.11697116, 0.41315565, 0.74997318, 0.96983224, 0.96986389,
        0.75005364, 0.41324684, 0.11703071, 0}},
      {"HammingWindow",
       true,
       {0.086956501, 0.17413944, 0.40238917, 0.68452704, 0.91279221, 1,
        0.91284204, 0.68460763, 0.40246961, 0.17418906}},
      {"HammingWindow",
       false,
       {0.086956501, 0.19375625, 0.46418557, 0.77171463, 0.9724555, 0.97248441,
        0.77178812, 0.46426883, 0.19381064, 0.086956501}},
      {"BlackmanWindow",
       true,
       {0, 0.04021024, 0.200756, 0.50975537, 0.84919679, 0.99999994, 0.84927952,
        0.50986111, 0.20082664, 0.040236443}},
      {"BlackmanWindow",
       false,
       {0, 0.05086625, 0.25798249, 0.62996459, 0.95110732, 0.95115799,
        0.63007075, 0.25806355, 0.050896604, 0}},
  };
  for (const WindowCase &c : cases) {
    SimpleKernelContext context(c.op, {int32Scalar(10)}, 1);
    if (!c.periodic)
      context.setInt("periodic", 0);
    ASSERT_TRUE(context.run().ok()) << c.op;
    EXPECT_EQ(context.outputTensor(0).dtype(), DType::Float32);
    expectNear(context.outputTensor(0), c.expected, 1e-4);
  }
}

TEST(ReferenceMiscSignal, WindowTypesAndEdgeSizes) {
  // Exact Hann values in double: sin^2(pi n / 4) for n < 4.
  SimpleKernelContext wide("HannWindow", {int64Scalar(4)}, 1);
  wide.setInt("output_datatype", static_cast<int64_t>(DType::Float64));
  ASSERT_TRUE(wide.run().ok());
  expectNear(wide.outputTensor(0), {0, 0.5, 1, 0.5}, 1e-15);
  SimpleKernelContext one("HammingWindow", {int64Scalar(1)}, 1);
  one.setInt("periodic", 0);
  ASSERT_TRUE(one.run().ok());
  expectNear(one.outputTensor(0), {1}, 0);
  SimpleKernelContext empty("BlackmanWindow", {int64Scalar(0)}, 1);
  ASSERT_TRUE(empty.run().ok());
  EXPECT_EQ(empty.outputTensor(0).numElements(), 0);
  SimpleKernelContext negative("HannWindow", {int64Scalar(-1)}, 1);
  EXPECT_EQ(negative.run().message(), "HannWindow: size -1 is negative");
  SimpleKernelContext text("HannWindow", {int64Scalar(3)}, 1);
  text.setInt("output_datatype", static_cast<int64_t>(DType::String));
  EXPECT_EQ(text.run().message(),
            "HannWindow: output type string is not supported");
}

/// test_dft's input: arange(100) as [1, 10, 10, 1].
Tensor ramp() {
  std::vector<float> values(100);
  for (int i = 0; i < 100; ++i)
    values[i] = static_cast<float>(i);
  return Tensor::fromVector<float>(DType::Float32, {1, 10, 10, 1}, values);
}

TEST(ReferenceMiscSignal, DftAlongEitherAxis) {
  // test_dft_axis: row 0 along axis 2 is fft(arange(10)).
  SimpleKernelContext rows("DFT", {Value(ramp())}, 1);
  rows.setInt("axis", 2);
  ASSERT_TRUE(rows.run().ok());
  const Tensor &spectrum = rows.outputTensor(0);
  EXPECT_EQ(spectrum.shape(), (std::vector<int64_t>{1, 10, 10, 2}));
  std::vector<double> expected = {
      45, 0, -5, 15.388417,  -5, 6.8819094,  -5, 3.6327126,  -5, 1.6245985,
      -5, 0, -5, -1.6245985, -5, -3.6327126, -5, -6.8819094, -5, -15.388417};
  for (int i = 0; i < 20; ++i)
    EXPECT_NEAR(spectrum.data<float>()[i], expected[i], 1e-4);
  // test_dft: along axis 1, element [0, 1, j] is -50 + 153.88417i.
  SimpleKernelContext columns("DFT", {Value(ramp())}, 1);
  columns.setInt("axis", 1);
  ASSERT_TRUE(columns.run().ok());
  const float *out = columns.outputTensor(0).data<float>();
  EXPECT_NEAR(out[0], 450, 1e-4);
  EXPECT_NEAR(out[2], 460, 1e-4);
  EXPECT_NEAR(out[20], -50, 1e-4);
  EXPECT_NEAR(out[21], 153.88417, 1e-3);
}

TEST(ReferenceMiscSignal, DftInverseOfAComplexInput) {
  // test_dft_inverse: ifft of the columns of arange(100) + 0i.
  std::vector<float> values(200, 0);
  for (int i = 0; i < 100; ++i)
    values[2 * i] = static_cast<float>(i);
  Tensor input =
      Tensor::fromVector<float>(DType::Float32, {1, 10, 10, 2}, values);
  SimpleKernelContext context("DFT", {Value(input)}, 1);
  context.setInt("axis", 1).setInt("inverse", 1);
  ASSERT_TRUE(context.run().ok());
  const float *out = context.outputTensor(0).data<float>();
  EXPECT_NEAR(out[0], 45, 1e-5);
  EXPECT_NEAR(out[2], 46, 1e-5);
  // Element [0, 1, 0] is ifft([0, 10, ..., 90])[1] = -5 - 15.388417i.
  EXPECT_NEAR(out[20], -5, 1e-5);
  EXPECT_NEAR(out[21], -15.388417, 1e-5);
  SimpleKernelContext onesided("DFT", {Value(input)}, 1);
  onesided.setInt("onesided", 1);
  EXPECT_EQ(onesided.run().message(), "DFT: onesided needs a real input");
}

TEST(ReferenceMiscSignal, DftOnesidedWithAPaddedLength) {
  // numpy.fft.rfft(arange(6), n=8), in double.
  Tensor input =
      Tensor::fromVector<double>(DType::Float64, {1, 6, 1}, {0, 1, 2, 3, 4, 5});
  SimpleKernelContext context("DFT", {Value(input), int64Scalar(8)}, 1);
  context.setInt("onesided", 1);
  ASSERT_TRUE(context.run().ok());
  EXPECT_EQ(context.outputTensor(0).shape(), (std::vector<int64_t>{1, 5, 2}));
  expectNear(
      context.outputTensor(0),
      {15, 0, -8.94974747, -1.29289322, 2, -3, 0.94974747, 2.70710678, -3, 0},
      1e-8);
  SimpleKernelContext badAxis("DFT", {Value(input)}, 1);
  badAxis.setInt("axis", 2);
  EXPECT_EQ(badAxis.run().message(),
            "DFT: axis 2 is not a signal axis of a rank 3 input");
}

Tensor stftSignal() {
  std::vector<float> values(128);
  for (int i = 0; i < 128; ++i)
    values[i] = static_cast<float>(i);
  return Tensor::fromVector<float>(DType::Float32, {1, 128, 1}, values);
}

TEST(ReferenceMiscSignal, StftWithFrameLength) {
  // test_stft: frame_step 8, frame_length 16, no window.
  SimpleKernelContext context(
      "STFT", {Value(stftSignal()), int64Scalar(8), Value(), int64Scalar(16)},
      1);
  context.omitInput(2);
  ASSERT_TRUE(context.run().ok());
  const Tensor &result = context.outputTensor(0);
  EXPECT_EQ(result.shape(), (std::vector<int64_t>{1, 15, 9, 2}));
  std::vector<double> frame0 = {120, 0,         -8, 40.218716, -8, 19.313709,
                                -8,  11.972846, -8, 8,         -8, 5.3454289,
                                -8,  3.3137085, -8, 1.5912989, -8, 0};
  for (int i = 0; i < 18; ++i)
    EXPECT_NEAR(result.data<float>()[i], frame0[i], 1e-4);
  EXPECT_NEAR(result.data<float>()[14 * 18], 1912, 1e-3);
}

TEST(ReferenceMiscSignal, StftWithWindow) {
  // test_stft_with_window: the frame length comes from the window.
  std::vector<float> window = {1,          0.96194196, 0.85356158, 0.69135779,
                               0.50002319, 0.308685,   0.1464712,  0.038075745,
                               0,          0.03804031, 0.1464057,  0.30859941,
                               0.49993038, 0.6912722,  0.85349602, 0.96190655};
  SimpleKernelContext context(
      "STFT",
      {Value(stftSignal()), int64Scalar(8),
       Value(Tensor::fromVector<float>(DType::Float32, {16}, window))},
      1);
  ASSERT_TRUE(context.run().ok());
  const Tensor &result = context.outputTensor(0);
  EXPECT_EQ(result.shape(), (std::vector<int64_t>{1, 15, 9, 2}));
  std::vector<double> frame0 = {55.996273,  0,        23.999105, 24.933981,
                                -7.9986897, 22.70421, -7.999476, 12.81474,
                                -7.9996939, 8.3295269};
  for (int i = 0; i < 10; ++i)
    EXPECT_NEAR(result.data<float>()[i], frame0[i], 1e-4);
  SimpleKernelContext mismatch(
      "STFT",
      {Value(stftSignal()), int64Scalar(8),
       Value(Tensor::fromVector<float>(DType::Float32, {16}, window)),
       int64Scalar(8)},
      1);
  EXPECT_EQ(mismatch.run().message(),
            "STFT: frame_length 8 differs from the window's 16");
}

TEST(ReferenceMiscSignal, MelWeightMatrix) {
  // test_melweightmatrix: 8 bands, dft_length 16, 8192 Hz, 0 to 4096 Hz.
  auto hertz = [](float value) {
    return Value(Tensor::fromVector<float>(DType::Float32, {}, {value}));
  };
  SimpleKernelContext context("MelWeightMatrix",
                              {int32Scalar(8), int32Scalar(16),
                               int32Scalar(8192), hertz(0), hertz(4096)},
                              1);
  ASSERT_TRUE(context.run().ok());
  const Tensor &result = context.outputTensor(0);
  EXPECT_EQ(result.shape(), (std::vector<int64_t>{9, 8}));
  // The band edges fall in bins 0 0 0 1 1 2 3 4 5 6: band b peaks at the
  // bin in row r below, and no band reaches rows 6 to 8.
  std::vector<std::pair<int, int>> ones = {{0, 0}, {0, 1}, {1, 2}, {1, 3},
                                           {2, 4}, {3, 5}, {4, 6}, {5, 7}};
  std::vector<float> expected(72, 0);
  for (auto [row, band] : ones)
    expected[row * 8 + band] = 1;
  EXPECT_EQ(result.toVector<float>(), expected);
  SimpleKernelContext tooHigh("MelWeightMatrix",
                              {int32Scalar(8), int32Scalar(16),
                               int32Scalar(8192), hertz(0), hertz(16000)},
                              1);
  EXPECT_FALSE(tooHigh.run().ok());
}

} // namespace
