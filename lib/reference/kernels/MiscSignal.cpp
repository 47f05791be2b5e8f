//===- MiscSignal.cpp - Windows, DFT, STFT, MelWeightMatrix ---------------===//
//
// The signal-processing operators of opset 17. Everything is computed in
// double and rounded once to the output type. The DFT is the plain O(n^2)
// sum, with the twiddle factors indexed by (j * k) mod n so that every
// angle is reduced exactly before its cosine is taken: slower than an FFT,
// but as accurate as double allows for any length, which an oracle needs.
//
//===----------------------------------------------------------------------===//

#include "mncc/reference/Broadcast.h"
#include "mncc/reference/Kernel.h"

#include <cmath>
#include <complex>
#include <type_traits>

using namespace mncc::reference;

namespace {

// M_PI is POSIX, not standard C++.
constexpr double kPi = 3.14159265358979323846;

using Complex = std::complex<double>;

template <typename T> T fromDouble(double value) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
    return T(static_cast<float>(value));
  else
    return static_cast<T>(value);
}

/// Makes a tensor of `dtype` from `values`; fails for String, complex and
/// undefined types.
Status makeTensor(const char *opName, DType dtype, std::vector<int64_t> shape,
                  const std::vector<double> &values, Tensor &result) {
  if (dtype == DType::String || dtype == DType::Complex64 ||
      dtype == DType::Complex128 || dtype == DType::Undefined ||
      dtypeSize(dtype) == 0)
    return Status::error(std::string(opName) + ": output type " +
                         dtypeName(dtype) + " is not supported");
  result = Tensor(dtype, std::move(shape));
  dispatchNumeric(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, std::complex<float>> &&
                  !std::is_same_v<T, std::complex<double>>) {
      T *out = result.data<T>();
      for (size_t i = 0; i < values.size(); ++i)
        out[i] = fromDouble<T>(values[i]);
    }
  });
  return Status::success();
}

/// A scalar integer input.
Status readCount(const KernelContext &context, size_t index, const char *opName,
                 const char *what, int64_t &value) {
  const Tensor *tensor = context.inputTensor(index);
  if (!tensor || tensor->numElements() != 1 ||
      !(isSignedInteger(tensor->dtype()) || isUnsignedInteger(tensor->dtype())))
    return Status::error(std::string(opName) + ": " + what +
                         " must be a single integer");
  value = tensor->elementAsInt64(0);
  return Status::success();
}

/// HannWindow, HammingWindow, BlackmanWindow: a0 - a1 cos(2 pi n / N)
/// + a2 cos(4 pi n / N), where N is size (periodic) or size - 1.
Status window(KernelContext &context, const char *opName, double a0, double a1,
              double a2) {
  int64_t size = 0;
  if (Status status = readCount(context, 0, opName, "size", size); !status)
    return status;
  if (size < 0)
    return Status::error(std::string(opName) + ": size " +
                         std::to_string(size) + " is negative");
  bool periodic = context.getInt("periodic", 1) != 0;
  double n1 = static_cast<double>(periodic ? size : size - 1);
  std::vector<double> values(size);
  for (int64_t n = 0; n < size; ++n) {
    // A symmetric window of one sample is [1], as numpy and scipy have it;
    // the formula would divide 0 by 0.
    if (n1 == 0) {
      values[n] = 1;
      continue;
    }
    double angle = 2 * kPi * static_cast<double>(n) / n1;
    values[n] = a0 - a1 * std::cos(angle) + a2 * std::cos(2 * angle);
  }
  Tensor result;
  if (Status status = makeTensor(
          opName, static_cast<DType>(context.getInt("output_datatype", 1)),
          {size}, values, result);
      !status)
    return status;
  context.setOutput(0, Value(std::move(result)));
  return Status::success();
}

Status hannWindowKernel(KernelContext &context) {
  // sin^2(pi n / N) = 0.5 - 0.5 cos(2 pi n / N).
  return window(context, "HannWindow", 0.5, 0.5, 0);
}

Status hammingWindowKernel(KernelContext &context) {
  constexpr double alpha = 25.0 / 46.0;
  return window(context, "HammingWindow", alpha, 1 - alpha, 0);
}

Status blackmanWindowKernel(KernelContext &context) {
  return window(context, "BlackmanWindow", 0.42, 0.5, 0.08);
}

/// The first `count` bins of the length-n DFT of `signal` (zero-padded or
/// truncated to n); the inverse transform divides by n.
void dft(const std::vector<Complex> &signal, int64_t n, bool inverse,
         int64_t count, std::vector<Complex> &result) {
  std::vector<Complex> twiddles(n);
  double sign = inverse ? 1.0 : -1.0;
  for (int64_t m = 0; m < n; ++m) {
    double angle = 2 * kPi * static_cast<double>(m) / static_cast<double>(n);
    twiddles[m] = Complex(std::cos(angle), sign * std::sin(angle));
  }
  int64_t used = std::min<int64_t>(n, signal.size());
  result.assign(count, Complex(0, 0));
  for (int64_t k = 0; k < count; ++k) {
    Complex sum(0, 0);
    for (int64_t j = 0; j < used; ++j)
      sum += signal[j] * twiddles[(j * k) % n];
    result[k] = inverse ? sum / static_cast<double>(n) : sum;
  }
}

bool isRealType(DType dtype) { return isFloatingPoint(dtype); }

/// DFT (opset 17): along `axis` of [batch, signal dims..., 1 or 2].
Status dftKernel(KernelContext &context) {
  const Tensor *input = context.inputTensor(0);
  if (!input || !isRealType(input->dtype()) || input->rank() < 3 ||
      (input->shape().back() != 1 && input->shape().back() != 2))
    return Status::error("DFT: input must be a floating tensor of shape "
                         "batch x signal dims x (1 or 2)");
  int64_t rank = input->rank();
  int64_t axis = context.getInt("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 1 || axis > rank - 2)
    return Status::error(
        "DFT: axis " + std::to_string(context.getInt("axis", 1)) +
        " is not a signal axis of a rank " + std::to_string(rank) + " input");
  bool complexInput = input->shape().back() == 2;
  bool inverse = context.getInt("inverse", 0) != 0;
  bool onesided = context.getInt("onesided", 0) != 0;
  if (onesided && complexInput)
    return Status::error("DFT: onesided needs a real input");
  int64_t dim = input->shape()[axis];
  int64_t n = dim;
  if (context.numInputs() > 1 && context.input(1)) {
    if (Status status = readCount(context, 1, "DFT", "dft_length", n); !status)
      return status;
    if (n < 1)
      return Status::error("DFT: dft_length " + std::to_string(n) +
                           " must be positive");
  }
  int64_t bins = onesided ? n / 2 + 1 : n;
  std::vector<int64_t> shape = input->shape();
  shape[axis] = bins;
  shape.back() = 2;
  // Lines along the axis: outer x dim x inner complex elements.
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= shape[i];
  for (int64_t i = axis + 1; i < rank - 1; ++i)
    inner *= shape[i];
  int64_t parts = complexInput ? 2 : 1;
  std::vector<double> values(outer * bins * inner * 2);
  std::vector<Complex> line(std::min(n, dim)), spectrum;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t j = 0; j < static_cast<int64_t>(line.size()); ++j) {
        int64_t at = ((o * dim + j) * inner + i) * parts;
        line[j] = Complex(input->elementAsDouble(at),
                          complexInput ? input->elementAsDouble(at + 1) : 0);
      }
      dft(line, n, inverse, bins, spectrum);
      for (int64_t k = 0; k < bins; ++k) {
        int64_t at = ((o * bins + k) * inner + i) * 2;
        values[at] = spectrum[k].real();
        values[at + 1] = spectrum[k].imag();
      }
    }
  Tensor result;
  if (Status status = makeTensor("DFT", input->dtype(), shape, values, result);
      !status)
    return status;
  context.setOutput(0, Value(std::move(result)));
  return Status::success();
}

/// STFT: the DFT of each windowed frame of [batch, length, 1 or 2].
Status stftKernel(KernelContext &context) {
  const Tensor *signal = context.inputTensor(0);
  if (!signal || !isRealType(signal->dtype()) || signal->rank() != 3 ||
      (signal->shape()[2] != 1 && signal->shape()[2] != 2))
    return Status::error("STFT: signal must be a floating tensor of shape "
                         "batch x length x (1 or 2)");
  int64_t step = 0;
  if (Status status = readCount(context, 1, "STFT", "frame_step", step);
      !status)
    return status;
  if (step < 1)
    return Status::error("STFT: frame_step " + std::to_string(step) +
                         " must be positive");
  const Tensor *window =
      context.numInputs() > 2 ? context.inputTensor(2) : nullptr;
  if (window && (window->rank() != 1 || !isRealType(window->dtype())))
    return Status::error("STFT: window must be a 1-D floating tensor");
  int64_t frameLength = window ? window->shape()[0] : -1;
  if (context.numInputs() > 3 && context.input(3)) {
    int64_t length = 0;
    if (Status status = readCount(context, 3, "STFT", "frame_length", length);
        !status)
      return status;
    if (window && length != frameLength)
      return Status::error("STFT: frame_length " + std::to_string(length) +
                           " differs from the window's " +
                           std::to_string(frameLength));
    frameLength = length;
  }
  if (frameLength < 0)
    return Status::error("STFT: needs a window or a frame_length");
  int64_t length = signal->shape()[1];
  if (frameLength < 1 || frameLength > length)
    return Status::error("STFT: frame_length " + std::to_string(frameLength) +
                         " does not fit a signal of " + std::to_string(length));
  bool complexInput = signal->shape()[2] == 2;
  bool onesided = context.getInt("onesided", 1) != 0;
  if (onesided && complexInput)
    return Status::error("STFT: onesided needs a real signal");
  int64_t batch = signal->shape()[0];
  int64_t frames = (length - frameLength) / step + 1;
  int64_t bins = onesided ? frameLength / 2 + 1 : frameLength;
  int64_t parts = complexInput ? 2 : 1;
  std::vector<double> values(batch * frames * bins * 2);
  std::vector<Complex> frame(frameLength), spectrum;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t j = 0; j < frameLength; ++j) {
        int64_t at = (b * length + f * step + j) * parts;
        double weight = window ? window->elementAsDouble(j) : 1.0;
        frame[j] = weight *
                   Complex(signal->elementAsDouble(at),
                           complexInput ? signal->elementAsDouble(at + 1) : 0);
      }
      dft(frame, frameLength, /*inverse=*/false, bins, spectrum);
      for (int64_t k = 0; k < bins; ++k) {
        int64_t at = ((b * frames + f) * bins + k) * 2;
        values[at] = spectrum[k].real();
        values[at + 1] = spectrum[k].imag();
      }
    }
  Tensor result;
  if (Status status = makeTensor("STFT", signal->dtype(),
                                 {batch, frames, bins, 2}, values, result);
      !status)
    return status;
  context.setOutput(0, Value(std::move(result)));
  return Status::success();
}

/// MelWeightMatrix, as ONNX's reference implementation computes it: the
/// num_mel_bins + 2 band edges are spaced evenly on the mel scale with a
/// step of (high - low) / (num_mel_bins + 2), mapped to DFT bins by
/// floor((dft_length + 1) * hertz / sample_rate), and each band is a
/// triangle rising from its left edge to 1 at its centre and falling to its
/// right edge.
Status melWeightMatrixKernel(KernelContext &context) {
  int64_t numMelBins = 0, dftLength = 0, sampleRate = 0;
  if (Status status =
          readCount(context, 0, "MelWeightMatrix", "num_mel_bins", numMelBins);
      !status)
    return status;
  if (Status status =
          readCount(context, 1, "MelWeightMatrix", "dft_length", dftLength);
      !status)
    return status;
  if (Status status =
          readCount(context, 2, "MelWeightMatrix", "sample_rate", sampleRate);
      !status)
    return status;
  const Tensor *lower = context.inputTensor(3);
  const Tensor *upper = context.inputTensor(4);
  if (!lower || !upper || lower->numElements() != 1 ||
      upper->numElements() != 1 || !isRealType(lower->dtype()) ||
      !isRealType(upper->dtype()))
    return Status::error("MelWeightMatrix: lower_edge_hertz and "
                         "upper_edge_hertz must be single floats");
  if (numMelBins < 1 || dftLength < 1 || sampleRate < 1)
    return Status::error("MelWeightMatrix: num_mel_bins, dft_length and "
                         "sample_rate must be positive");
  double lowHertz = lower->elementAsDouble(0);
  double highHertz = upper->elementAsDouble(0);
  int64_t numSpectrogramBins = dftLength / 2 + 1;
  auto toMel = [](double hertz) { return 2595 * std::log10(1 + hertz / 700); };
  double lowMel = toMel(lowHertz);
  double melStep = (toMel(highHertz) - lowMel) / (numMelBins + 2);
  std::vector<int64_t> edges(numMelBins + 2);
  for (int64_t i = 0; i < numMelBins + 2; ++i) {
    double hertz = 700 * (std::pow(10.0, (i * melStep + lowMel) / 2595) - 1);
    edges[i] = static_cast<int64_t>(
        std::floor((dftLength + 1) * hertz / static_cast<double>(sampleRate)));
    // Triangles write bins up to each centre, and up to one before the
    // last right edge.
    int64_t limit =
        i == numMelBins + 1 ? numSpectrogramBins : numSpectrogramBins - 1;
    if (edges[i] < 0 || edges[i] > limit)
      return Status::error(
          "MelWeightMatrix: band edge " + std::to_string(i) + " falls in bin " +
          std::to_string(edges[i]) + ", outside the " +
          std::to_string(numSpectrogramBins) +
          " bins; the hertz range must lie within [0, sample_rate / 2]");
  }
  std::vector<double> values(numSpectrogramBins * numMelBins, 0.0);
  for (int64_t i = 0; i < numMelBins; ++i) {
    int64_t left = edges[i], center = edges[i + 1], right = edges[i + 2];
    if (center == left)
      values[center * numMelBins + i] = 1;
    else
      for (int64_t j = left; j <= center; ++j)
        values[j * numMelBins + i] =
            static_cast<double>(j - left) / static_cast<double>(center - left);
    for (int64_t j = center; j < right; ++j)
      values[j * numMelBins + i] =
          static_cast<double>(right - j) / static_cast<double>(right - center);
  }
  Tensor result;
  if (Status status =
          makeTensor("MelWeightMatrix",
                     static_cast<DType>(context.getInt("output_datatype", 1)),
                     {numSpectrogramBins, numMelBins}, values, result);
      !status)
    return status;
  context.setOutput(0, Value(std::move(result)));
  return Status::success();
}

} // namespace

MNCC_REFERENCE_KERNEL("", HannWindow, hannWindowKernel);
MNCC_REFERENCE_KERNEL("", HammingWindow, hammingWindowKernel);
MNCC_REFERENCE_KERNEL("", BlackmanWindow, blackmanWindowKernel);
MNCC_REFERENCE_KERNEL("", DFT, dftKernel);
MNCC_REFERENCE_KERNEL("", STFT, stftKernel);
MNCC_REFERENCE_KERNEL("", MelWeightMatrix, melWeightMatrixKernel);
