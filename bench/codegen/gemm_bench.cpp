//===- gemm_bench.cpp - Emulated cycles of Gemm and Conv kernels ----------===//
//
// Runs the gemm and conv kernel generators on the shapes of the codegen
// brief and prints, for each: emulated cycles (mncc-sim's timing model),
// the fraction of the matrix unit's peak (512 FLOP per cycle and MAB, 1024
// MABs: 524288 FLOP a cycle), TFLOPS at 750 MHz, the time to emit the
// kernel, the host time of the emulator run, and the largest error against
// a double-precision product of the same (device-rounded) inputs on a sample
// of the outputs.
//
//   build/bench/gemm_bench [gemm|mlp|classifier|conv]...
//
// With GEMM_BENCH_VSM=<dir> each kernel's program is also written to
// <dir>/<case>.vsm (for mncc-sim --stats or --trace).
//
//===----------------------------------------------------------------------===//

#include "mncc/codegen/Kernel.h"
#include "mncc/emu/Hazards.h"
#include "mncc/emu/Parser.h"
#include "mncc/emu/Simulator.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace mncc;
using namespace mncc::codegen;

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

reference::Tensor randomTensor(std::vector<int64_t> shape, uint64_t seed) {
  reference::Tensor t(reference::DType::Float32, std::move(shape));
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<float>()[i] = d(engine);
  // Rounded to the device's half, so the check measures the kernel.
  std::vector<uint16_t> bits(size_t(t.numElements()));
  hostToDevice(reference::DType::Float32, t.raw(), DeviceType::Half,
               bits.data(), t.numElements());
  deviceToHost(DeviceType::Half, bits.data(), reference::DType::Float32,
               t.raw(), t.numElements());
  return t;
}

reference::Attribute ints(std::vector<int64_t> v) {
  reference::Attribute a;
  a.kind = reference::Attribute::Kind::Ints;
  a.ints = std::move(v);
  return a;
}

struct Case {
  std::string name;
  std::string op;
  std::vector<reference::Tensor> inputs;
  std::vector<int64_t> output;
  double flops = 0;
  std::vector<int64_t> pads;
  int64_t stride = 1;
  /// The reference value of output element `i` (row-major), in double.
  double (*expected)(const Case &, int64_t) = nullptr;
  int64_t m = 0, n = 0, k = 0;
};

double gemmExpected(const Case &c, int64_t i) {
  const float *a = c.inputs[0].data<float>(), *b = c.inputs[1].data<float>();
  int64_t row = i / c.n, col = i % c.n;
  double sum = c.inputs.size() > 2 ? c.inputs[2].data<float>()[col] : 0;
  for (int64_t k = 0; k < c.k; ++k)
    sum += double(a[row * c.k + k]) * b[k * c.n + col];
  return sum;
}

double convExpected(const Case &c, int64_t i) {
  const reference::Tensor &x = c.inputs[0], &w = c.inputs[1];
  int64_t C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  int64_t M = w.shape()[0], KH = w.shape()[2], KW = w.shape()[3];
  int64_t OH = c.output[2], OW = c.output[3];
  int64_t n = i / (M * OH * OW), m = i / (OH * OW) % M, oh = i / OW % OH,
          ow = i % OW;
  double sum = c.inputs.size() > 2 ? c.inputs[2].data<float>()[m] : 0;
  int64_t pad = c.pads.empty() ? 0 : c.pads[0];
  for (int64_t ch = 0; ch < C; ++ch)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw) {
        int64_t ih = oh * c.stride + kh - pad, iw = ow * c.stride + kw - pad;
        if (ih < 0 || ih >= H || iw < 0 || iw >= W)
          continue;
        sum += double(x.data<float>()[((n * C + ch) * H + ih) * W + iw]) *
               w.data<float>()[((m * C + ch) * KH + kh) * KW + kw];
      }
  return sum;
}

bool runCase(Case &c) {
  KernelRequest r;
  r.opType = c.op;
  r.nodeName = c.name;
  if (!c.pads.empty())
    r.attributes["pads"] = ints(c.pads);
  r.attributes["strides"] = ints({c.stride, c.stride});
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    KernelTensor t;
    t.name = "in" + std::to_string(i);
    t.form = DramForm::canonical(DeviceType::Half, c.inputs[i].shape());
    if (i == 1 || (i == 2 && c.op == "Gemm"))
      t.constant = &c.inputs[i];
    r.inputs.push_back(t);
  }
  KernelTensor y;
  y.name = "out";
  y.form = DramForm::canonical(DeviceType::Half, c.output);
  r.outputs.push_back(y);

  std::string whyNot, error;
  const KernelGenerator *g = findKernelGenerator(r, whyNot);
  if (!g) {
    std::printf("%-28s no kernel: %s\n", c.name.c_str(), whyNot.c_str());
    return false;
  }
  size_t operands = r.inputs.size() + r.outputs.size();
  for (size_t i = 0; i < operands; ++i) {
    KernelTensor &t = i < r.inputs.size() ? r.inputs[i]
                                          : r.outputs[i - r.inputs.size()];
    std::vector<unsigned> order = g->preferredOrder(r, i);
    if (!order.empty())
      t.form = DramForm::canonical(t.form.type, t.form.shape, order);
  }
  int64_t next = 4096;
  std::vector<bool> custom(r.inputs.size(), false);
  for (size_t i = 0; i < r.inputs.size(); ++i) {
    r.inputs[i].form.base = next;
    std::optional<int64_t> size =
        r.inputs[i].constant ? g->constantLongWords(r, i) : std::nullopt;
    custom[i] = bool(size);
    next += roundUp(size ? *size : r.inputs[i].form.groupLongWords(),
                    kMvUnitLongWords) +
            kMvUnitLongWords;
  }
  r.outputs[0].form.base = next;

  Clock::time_point start = Clock::now();
  VsmWriter writer;
  KernelDescription description;
  if (!g->emit(r, writer, description, error)) {
    std::printf("%-28s emit failed: %s\n", c.name.c_str(), error.c_str());
    return false;
  }
  double emitSeconds = secondsSince(start);
  std::string text = writer.take();
  if (const char *dir = std::getenv("GEMM_BENCH_VSM")) {
    std::string path = std::string(dir) + "/" + c.name + ".vsm";
    for (char &ch : path)
      if (ch == ' ')
        ch = '_';
    if (FILE *f = std::fopen(path.c_str(), "w")) {
      std::fwrite(text.data(), 1, text.size(), f);
      std::fclose(f);
    }
  }

  emu::Program program;
  emu::Diagnostic diagnostic;
  if (!emu::parseProgram(text, "kernel.vsm", program, diagnostic)) {
    std::printf("%-28s does not parse: %s\n", c.name.c_str(),
                diagnostic.Message.c_str());
    return false;
  }
  size_t hazards = emu::checkHazards(program).size();
  emu::Simulator sim;
  sim.fillRandom(1);
  sim.load(std::move(program));
  for (size_t i = 0; i < r.inputs.size(); ++i) {
    DramImage image;
    bool ok = custom[i] ? g->packConstant(r, i, image, error)
                        : packHost(r.inputs[i].form, c.inputs[i], image, error);
    if (!ok) {
      std::printf("%-28s staging failed: %s\n", c.name.c_str(), error.c_str());
      return false;
    }
    for (unsigned gr = 0; gr < image.groups; ++gr)
      if (!sim.write({emu::Space::DRAM, gr, uint64_t(r.inputs[i].form.base),
                      uint64_t(image.data[gr].size())},
                     image.data[gr].data(), error))
        return false;
  }
  start = Clock::now();
  if (!sim.run(error)) {
    std::printf("%-28s run failed: %s\n", c.name.c_str(), error.c_str());
    return false;
  }
  double runSeconds = secondsSince(start);
  const DramForm &of = r.outputs[0].form;
  DramImage image;
  image.groups = of.groups;
  image.longWordsPerGroup = of.groupLongWords();
  for (unsigned gr = 0; gr < of.groups; ++gr) {
    image.data[gr].resize(size_t(image.longWordsPerGroup));
    if (!sim.read({emu::Space::DRAM, gr, uint64_t(of.base),
                   uint64_t(image.longWordsPerGroup)},
                  image.data[gr].data(), error))
      return false;
  }
  reference::Tensor host;
  if (!unpackHost(of, image, reference::DType::Float32, host, error))
    return false;
  // Largest error on a sample of outputs, relative to the largest |C|.
  double maxError = 0, maxValue = 0;
  int64_t count = host.numElements();
  int64_t stride = std::max<int64_t>(1, count / 4096);
  for (int64_t i = 0; i < count; i += stride) {
    double want = c.expected(c, i);
    maxError = std::max(maxError, std::fabs(host.data<float>()[i] - want));
    maxValue = std::max(maxValue, std::fabs(want));
  }
  uint64_t cycles = sim.stats().Cycles;
  double peak = c.flops / (double(cycles) * 524288.0);
  double tflops = c.flops / (double(cycles) / 750e6) / 1e12;
  std::printf("%-28s %10llu cycles %6.2f%% of peak %7.2f TFLOPS  emit %7.1f "
              "ms  emulator %7.2f s  hazards %zu  max err %.2e of %.2e  [%s]\n",
              c.name.c_str(), (unsigned long long)cycles, 100 * peak, tflops,
              emitSeconds * 1e3, runSeconds, hazards, maxError, maxValue,
              description.variant.c_str());
  return true;
}

Case gemm(int64_t m, int64_t k, int64_t n, bool bias) {
  Case c;
  c.name = "gemm " + std::to_string(m) + "x" + std::to_string(k) + "x" +
           std::to_string(n) + (bias ? " +bias" : "");
  c.op = "Gemm";
  c.inputs = {randomTensor({m, k}, 1), randomTensor({k, n}, 2)};
  if (bias)
    c.inputs.push_back(randomTensor({n}, 3));
  c.output = {m, n};
  c.flops = 2.0 * m * n * k;
  c.m = m;
  c.n = n;
  c.k = k;
  c.expected = gemmExpected;
  return c;
}

Case conv(std::vector<int64_t> x, std::vector<int64_t> w, int64_t pad,
          int64_t stride = 1) {
  Case c;
  c.name = "conv [" + std::to_string(x[0]) + "," + std::to_string(x[1]) + "," +
           std::to_string(x[2]) + "," + std::to_string(x[3]) + "] " +
           std::to_string(w[0]) + "x" + std::to_string(w[2]) + "x" +
           std::to_string(w[3]);
  c.op = "Conv";
  c.inputs = {randomTensor(x, 4), randomTensor(w, 5),
              randomTensor({w[0]}, 6)};
  int64_t oh = (x[2] + 2 * pad - w[2]) / stride + 1,
          ow = (x[3] + 2 * pad - w[3]) / stride + 1;
  c.output = {x[0], w[0], oh, ow};
  c.pads = {pad, pad, pad, pad};
  c.stride = stride;
  if (stride != 1)
    c.name += " /" + std::to_string(stride);
  c.flops = 2.0 * x[0] * w[0] * oh * ow * w[1] * w[2] * w[3];
  c.expected = convExpected;
  return c;
}

} // namespace

int main(int argc, char **argv) {
  auto selected = [&](const char *what) {
    if (argc < 2)
      return true;
    for (int i = 1; i < argc; ++i)
      if (std::strcmp(argv[i], what) == 0)
        return true;
    return false;
  };
  std::printf("gemm_bench: half operands and results, B / W constant, A / X "
              "from DRAM; peak = 524288 FLOP/cycle, 750 MHz\n");
  bool ok = true;
  if (selected("gemm")) {
    Case c = gemm(2048, 2048, 2048, false);
    ok &= runCase(c);
  }
  if (selected("mlp")) {
    for (auto [m, k, n] : {std::array<int64_t, 3>{1, 784, 512},
                           std::array<int64_t, 3>{16, 784, 512},
                           std::array<int64_t, 3>{16, 512, 10}}) {
      Case c = gemm(m, k, n, true);
      ok &= runCase(c);
    }
  }
  if (selected("classifier")) {
    // The classifiers of ResNet-18 and ResNet-50 at batch 1 (N 1000).
    for (int64_t k : {512, 2048}) {
      Case c = gemm(1, k, 1000, true);
      ok &= runCase(c);
    }
  }
  if (selected("conv")) {
    Case a = conv({16, 6, 14, 14}, {16, 6, 5, 5}, 0);
    ok &= runCase(a);
    Case b = conv({1, 64, 56, 56}, {64, 64, 3, 3}, 1);
    ok &= runCase(b);
    // ResNet-18's layer3 3x3 convolution.
    Case d = conv({1, 256, 14, 14}, {256, 256, 3, 3}, 1);
    ok &= runCase(d);
    // ResNet's first convolution: three channels, packed taps (X15).
    Case e = conv({1, 3, 224, 224}, {64, 3, 7, 7}, 3, 2);
    ok &= runCase(e);
  }
  return ok ? 0 : 1;
}
