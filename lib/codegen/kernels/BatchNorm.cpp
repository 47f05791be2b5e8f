//===- BatchNorm.cpp - Inference batch normalisation ----------------------===//
//
// BatchNormalization in inference mode is a per-channel affine map,
//   y = x * s + t,  s = scale / sqrt(var + epsilon),  t = B - mean * s,
// with s and t computed on the host from the four constants (in double,
// rounded once to single, or kept in double for double tensors). Channel c of x[N, C, ...] follows a pattern
// over the DRAM block that repeats with the DRAM dimensions from C in: the
// innermost for NHWC (preferred, the convolutions' order), C * H * W rows
// for NCHW. s and t are packed as two periodic tables (ActivationSpread.h)
// in GRF0 and GRF1, so each chunk is one vfma from LM0, GRF0 and GRF1
// into LM1 (B1; two steps in double, B3). Their padding is zero, so the
// output's padding is too.
//
//===----------------------------------------------------------------------===//

#include "ActivationSpread.h"
#include "Generators.h"
#include "MathLib.h"

#include <cmath>

using namespace mncc;
using namespace mncc::codegen;

namespace {

constexpr int64_t kMaxTableLongWords = 256;

bool sameGeometry(const DramForm &a, const DramForm &b) {
  return a.type == b.type && a.shape == b.shape && a.order == b.order &&
         a.groups == b.groups;
}

struct Analysis {
  int64_t channels = 0;
  BroadcastPattern pattern;
  int64_t tableLongWords = 0;
};

bool analyse(const KernelRequest &request, Analysis &analysis,
             std::string &whyNot) {
  if (request.inputs.size() != 5 || request.outputs.size() != 1) {
    whyNot = "inference mode only: five inputs, one output";
    return false;
  }
  if (request.getInt("training_mode", 0) != 0) {
    whyNot = "training mode";
    return false;
  }
  const DramForm &x = request.inputs[0].form;
  const DramForm &y = request.outputs[0].form;
  if (!isFloatingDeviceType(y.type) || !sameGeometry(x, y)) {
    whyNot = "floating-point X and Y of one form only";
    return false;
  }
  if (x.shape.size() < 2) {
    whyNot = "X needs a channel dimension";
    return false;
  }
  analysis.channels = x.shape[1];
  for (size_t i = 1; i < 5; ++i) {
    const reference::Tensor *c = request.inputs[i].constant;
    if (!c ||
        (c->dtype() != reference::DType::Float32 &&
         c->dtype() != reference::DType::Float64) ||
        c->numElements() != analysis.channels) {
      whyNot = "scale, B, mean and var must be floating-point constants "
               "of C elements";
      return false;
    }
  }
  std::vector<int64_t> perChannel(x.shape.size() - 1, 1);
  perChannel[0] = analysis.channels;
  if (!broadcastPattern(y, perChannel, analysis.pattern, whyNot))
    return false;
  analysis.tableLongWords =
      periodicTableLongWords(analysis.pattern.periodLongWords);
  if (analysis.tableLongWords > kMaxTableLongWords) {
    whyNot = "channels repeat every " +
             std::to_string(analysis.pattern.periodLongWords) +
             " long words in this DRAM order: the tables are over a GRF";
    return false;
  }
  return true;
}

class BatchNormGenerator : public KernelGenerator {
public:
  const char *name() const override { return "batchnorm"; }

  bool matches(const KernelRequest &request,
               std::string &whyNot) const override {
    if (request.opType != "BatchNormalization")
      return false;
    // In its own order, or in the one the planner will give it.
    Analysis analysis;
    std::string given;
    if (analyse(request, analysis, given))
      return true;
    if (analyse(withPreferredOrders(request, *this), analysis, whyNot))
      return true;
    whyNot = given;
    return false;
  }

  /// Channels last (NHWC for 4-D): the convolutions' order, and the one
  /// whose tables are a row long.
  std::vector<unsigned> preferredOrder(const KernelRequest &request,
                                       size_t operand) const override {
    bool dataOperand = operand == 0 || operand == request.inputs.size();
    if (!dataOperand || request.inputs.empty())
      return {};
    return channelsLastOrder(request.inputs[0].form.shape.size());
  }

  /// scale carries the table of s, B the table of t; mean and var stay in
  /// their canonical form (the kernel never reads them).
  std::optional<int64_t> constantLongWords(const KernelRequest &request,
                                           size_t input) const override {
    Analysis analysis;
    std::string whyNot;
    if ((input != 1 && input != 2) || !analyse(request, analysis, whyNot))
      return std::nullopt;
    return analysis.tableLongWords * 64;
  }

  bool packConstant(const KernelRequest &request, size_t input,
                    DramImage &image, std::string &error) const override {
    Analysis analysis;
    if (!analyse(request, analysis, error))
      return false;
    if (input != 1 && input != 2) {
      error = "batchnorm packs only the scale and B tables";
      return false;
    }
    double epsilon = request.getFloat("epsilon", 1e-5f);
    auto constant = [&](size_t i, int64_t c) {
      return request.inputs[i].constant->elementAsDouble(c);
    };
    VectorFormat format(request.outputs[0].form.type);
    std::vector<uint64_t> table(size_t(analysis.channels));
    for (int64_t c = 0; c < analysis.channels; ++c) {
      double s = constant(1, c) / std::sqrt(constant(4, c) + epsilon);
      double value = input == 1 ? s : constant(2, c) - constant(3, c) * s;
      // Rounded once to single (and that to half), or kept in double.
      table[size_t(c)] = format.laneOf(
          format.type() == DeviceType::Double ? value : double(float(value)));
    }
    image = packPeriodicTable(
        request.outputs[0].form, analysis.tableLongWords,
        [&](unsigned g, int64_t a, unsigned slot) -> uint64_t {
          int64_t c = analysis.pattern.element(g, a, slot);
          return c < 0 ? 0 : table[size_t(c)];
        });
    return true;
  }

  bool emit(const KernelRequest &request, VsmWriter &out,
            KernelDescription &description, std::string &error) const override {
    Analysis analysis;
    if (!analyse(request, analysis, error))
      return false;
    description.generator = name();
    description.variant = "x * s + t, tables of " +
                          std::to_string(analysis.tableLongWords) +
                          " long words per PE";
    description.parameters.push_back(
        {"period", std::to_string(analysis.pattern.periodLongWords) + " lw"});
    // Half: hvfmar, t read as the single addend with "e", rounded once;
    // double: dvfmau, then dvfmad through $mauf.
    VectorFormat format(request.outputs[0].form.type);
    auto expression = [&format](int64_t j, int64_t t) {
      return format.mauSteps("vfma",
                             {peOperand(PeMemory::LM0, Width::Long, 2 * j),
                              peOperand(PeMemory::GRF0, Width::Long, 2 * t),
                              peOperand(PeMemory::GRF1, Width::Long, 2 * t)},
                             peOperand(PeMemory::LM1, Width::Long, 2 * j));
    };
    emitTableKernel(out, request.inputs[0].form, request.outputs[0].form,
                    analysis.tableLongWords,
                    {{request.inputs[1].form.base, PeMemory::GRF0},
                     {request.inputs[2].form.base, PeMemory::GRF1}},
                    expression, true);
    return true;
  }
};

std::unique_ptr<KernelGenerator> createBatchNormGenerator() {
  return std::make_unique<BatchNormGenerator>();
}

} // namespace

MNCC_KERNEL_GENERATOR(BatchNorm, 100, createBatchNormGenerator);
