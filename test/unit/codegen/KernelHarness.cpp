//===- KernelHarness.cpp - Runs one kernel on the emulator ----------------===//

#include "KernelHarness.h"

#include "mncc/emu/Hazards.h"
#include "mncc/emu/Numerics.h"
#include "mncc/emu/Parser.h"
#include "mncc/emu/Simulator.h"

#include <cmath>
#include <random>
#include <sstream>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::testing;

KernelRequest testing::makeRequest(
    std::string opType, const std::vector<reference::Tensor> &inputs,
    const std::vector<std::vector<int64_t>> &outputShapes, DeviceType type,
    std::vector<bool> constantInputs) {
  KernelRequest request;
  request.opType = std::move(opType);
  request.nodeName = "test";
  constantInputs.resize(inputs.size(), false);
  for (size_t i = 0; i < inputs.size(); ++i) {
    KernelTensor tensor;
    tensor.name = "in" + std::to_string(i);
    tensor.form = DramForm::canonical(type, inputs[i].shape());
    if (constantInputs[i])
      tensor.constant = &inputs[i];
    request.inputs.push_back(tensor);
  }
  for (size_t i = 0; i < outputShapes.size(); ++i) {
    KernelTensor tensor;
    tensor.name = "out" + std::to_string(i);
    tensor.form = DramForm::canonical(type, outputShapes[i]);
    request.outputs.push_back(tensor);
  }
  return request;
}

bool testing::runKernel(KernelRequest request,
                        const std::vector<reference::Tensor> &inputs,
                        reference::DType outputType, KernelRun &result,
                        std::string &error, const HarnessOptions &options) {
  std::string whyNot;
  const KernelGenerator *generator = nullptr;
  if (options.generator.empty()) {
    generator = findKernelGenerator(request, whyNot);
  } else {
    for (const auto &candidate : kernelGenerators())
      if (options.generator == candidate->name() &&
          candidate->matches(request, whyNot))
        generator = candidate.get();
    if (!generator && whyNot.empty())
      whyNot = "no generator named " + options.generator + " takes it";
  }
  if (!generator) {
    error = "no generator: " + whyNot;
    return false;
  }
  // The DRAM orders the kernel prefers, as the planner would give them
  // when producer and consumers agree.
  for (size_t i = 0; i < request.inputs.size() + request.outputs.size();
       ++i) {
    KernelTensor &tensor = i < request.inputs.size()
                               ? request.inputs[i]
                               : request.outputs[i - request.inputs.size()];
    std::vector<unsigned> order = generator->preferredOrder(request, i);
    if (options.followPreferredOrders && !order.empty() &&
        order.size() == tensor.form.shape.size())
      tensor.form = DramForm::canonical(tensor.form.type, tensor.form.shape,
                                        order);
  }
  // DRAM addresses: one block after another, each 64-long-word aligned.
  int64_t next = 4096;
  std::vector<int64_t> customSizes(request.inputs.size(), -1);
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    KernelTensor &tensor = request.inputs[i];
    tensor.form.base = next;
    std::optional<int64_t> custom =
        tensor.constant ? generator->constantLongWords(request, i)
                        : std::nullopt;
    customSizes[i] = custom ? *custom : -1;
    next += roundUp(custom ? *custom : tensor.form.groupLongWords(),
                    kMvUnitLongWords) +
            kMvUnitLongWords;
  }
  for (KernelTensor &tensor : request.outputs) {
    tensor.form.base = next;
    next += tensor.form.groupLongWords() + kMvUnitLongWords;
  }

  VsmWriter writer;
  writer.comment("kernel " + request.opType);
  if (!generator->emit(request, writer, result.description, error))
    return false;
  result.program = writer.take();

  emu::Program program;
  emu::Diagnostic diagnostic;
  if (!emu::parseProgram(result.program, "kernel.vsm", program, diagnostic)) {
    error = "the program does not parse: line " +
            std::to_string(diagnostic.Line) + ":" +
            std::to_string(diagnostic.Column) + ": " + diagnostic.Message;
    return false;
  }
  for (const emu::Hazard &hazard : emu::checkHazards(program))
    result.hazards.push_back(hazard.str("kernel.vsm"));

  emu::Simulator simulator;
  if (options.fillSeed)
    simulator.fillRandom(options.fillSeed);
  simulator.load(std::move(program));
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    const KernelTensor &tensor = request.inputs[i];
    DramImage image;
    bool packed =
        customSizes[i] >= 0
            ? generator->packConstant(request, i, image, error)
            : packHost(tensor.form, inputs[i], image, error);
    if (!packed)
      return false;
    for (unsigned g = 0; g < image.groups; ++g) {
      emu::Region region{emu::Space::DRAM, g, uint64_t(tensor.form.base),
                         uint64_t(image.data[g].size())};
      if (!simulator.write(region, image.data[g].data(), error))
        return false;
    }
  }
  if (!simulator.run(error))
    return false;
  result.stats = simulator.stats();
  for (const KernelTensor &tensor : request.outputs) {
    DramImage image;
    image.groups = tensor.form.groups;
    image.longWordsPerGroup = tensor.form.groupLongWords();
    for (unsigned g = 0; g < image.groups; ++g) {
      image.data[g].resize(size_t(image.longWordsPerGroup));
      emu::Region region{emu::Space::DRAM, g, uint64_t(tensor.form.base),
                         uint64_t(image.longWordsPerGroup)};
      if (!simulator.read(region, image.data[g].data(), error))
        return false;
    }
    reference::Tensor host;
    size_t position = result.outputs.size();
    reference::DType type = position < options.outputTypes.size()
                                ? options.outputTypes[position]
                                : outputType;
    if (!unpackHost(tensor.form, image, type, host, error))
      return false;
    result.outputs.push_back(std::move(host));
    result.outputImages.push_back(std::move(image));
    result.outputForms.push_back(tensor.form);
  }
  if (!options.keepProgram)
    result.program.clear();
  return true;
}

Comparison testing::compareTensors(const reference::Tensor &actual,
                                   const reference::Tensor &expected,
                                   double atol, double rtol) {
  Comparison comparison;
  if (actual.shape() != expected.shape() ||
      actual.numElements() != expected.numElements()) {
    comparison.within = false;
    comparison.firstMismatch = "shapes differ";
    return comparison;
  }
  for (int64_t i = 0; i < actual.numElements(); ++i) {
    double a = actual.elementAsDouble(i), b = expected.elementAsDouble(i);
    if (std::isinf(b) || std::isinf(a)) {
      if (a != b && comparison.within) {
        comparison.within = false;
        comparison.firstMismatch = "element " + std::to_string(i) + ": " +
                                   std::to_string(a) + " vs " +
                                   std::to_string(b);
      }
      continue;
    }
    double diff = std::fabs(a - b);
    comparison.maxAbs = std::max(comparison.maxAbs, diff);
    if (b != 0)
      comparison.maxRel = std::max(comparison.maxRel, diff / std::fabs(b));
    if (!(diff <= atol + rtol * std::fabs(b)) && comparison.within) {
      comparison.within = false;
      std::ostringstream os;
      os << "element " << i << ": " << a << " vs " << b;
      comparison.firstMismatch = os.str();
    }
  }
  return comparison;
}

reference::Tensor testing::randomTensor(std::vector<int64_t> shape,
                                        uint64_t seed, float low, float high) {
  reference::Tensor tensor(reference::DType::Float32, std::move(shape));
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<float> distribution(low, high);
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    tensor.data<float>()[i] = distribution(engine);
  return tensor;
}

reference::Tensor testing::randomDoubleTensor(std::vector<int64_t> shape,
                                              uint64_t seed, double low,
                                              double high) {
  reference::Tensor tensor(reference::DType::Float64, std::move(shape));
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> distribution(low, high);
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    tensor.data<double>()[i] = distribution(engine);
  return tensor;
}

namespace {
/// Mantissa bits and bias of a device format (emu's formats, the one
/// definition: docs/target/mncore2.md, "Number formats").
template <typename F> std::pair<int, int> formatOf() {
  return {int(F::ManBits), F::Bias};
}
} // namespace

double testing::ulpDistance(double a, double b, DeviceType type) {
  auto [mantissa, bias] = type == DeviceType::Half ? formatOf<emu::Half>()
                          : type == DeviceType::Double
                              ? formatOf<emu::Double>()
                              : formatOf<emu::Single>();
  int minExponent = 1 - bias;
  // The device has no subnormals: a host value below the smallest normal
  // is its zero.
  double smallest = std::ldexp(1.0, minExponent);
  if (std::fabs(a) < smallest)
    a = 0;
  if (std::fabs(b) < smallest)
    b = 0;
  if (a == b)
    return 0;
  if (std::isinf(a) || std::isinf(b) || std::isnan(a) || std::isnan(b))
    return 1e300;
  // The ulp of the larger magnitude in the format (the smallest normal's
  // below it).
  double larger = std::max(std::fabs(a), std::fabs(b));
  int exponent = std::max(std::ilogb(larger), minExponent);
  return std::fabs(a - b) / std::ldexp(1.0, exponent - mantissa);
}

bool testing::paddingIsZero(const DramForm &form, const DramImage &image,
                            std::string &where) {
  int64_t perLongWord = elementsPerLongWord(form.type);
  unsigned bits = deviceTypeBits(form.type);
  uint64_t mask = bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
  for (unsigned g = 0; g < form.groups; ++g) {
    const std::vector<uint64_t> &words = image.data[g];
    int64_t rowWords = form.rowsInGroup(g) * form.rowLongWords();
    for (int64_t a = 0; a < std::min<int64_t>(rowWords, words.size()); ++a) {
      for (int64_t slot = 0; slot < perLongWord; ++slot) {
        int64_t e = (a % form.rowLongWords()) * perLongWord + slot;
        if (e < form.innerExtent())
          continue;
        uint64_t element = words[size_t(a)] >> (64 - bits * (slot + 1)) & mask;
        if (element != 0) {
          where = "group " + std::to_string(g) + " long word " +
                  std::to_string(a) + " slot " + std::to_string(slot);
          return false;
        }
      }
    }
  }
  return true;
}

UlpComparison testing::compareUlps(const reference::Tensor &actual,
                                   const reference::Tensor &expected,
                                   DeviceType type, double bound) {
  UlpComparison comparison;
  for (int64_t i = 0; i < expected.numElements(); ++i) {
    double device = actual.elementAsDouble(i);
    double host = expected.elementAsDouble(i);
    double ulps = ulpDistance(device, host, type);
    if (ulps > comparison.worst) {
      comparison.worst = ulps;
      comparison.worstElement = i;
    }
    if (ulps > bound && comparison.within) {
      comparison.within = false;
      std::ostringstream os;
      os << "element " << i << ": " << std::hexfloat << device << " vs "
         << host << " (" << ulps << " ulp)";
      comparison.firstMismatch = os.str();
    }
  }
  return comparison;
}
