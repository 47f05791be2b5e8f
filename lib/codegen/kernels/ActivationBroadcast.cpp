//===- ActivationBroadcast.cpp - Binary operators with a small operand ----===//
//
// Add, Sub, Mul, Div, Max and Min where one operand has the result's shape
// and DRAM form and the other is a constant that broadcasts into it (ONNX
// rules): a bias b[C, 1, 1] over x[N, C, H, W], b[N] over x[M, N], a
// per-channel vector over NHWC data, a scalar divisor. The constant's
// pattern over each group's block repeats with a period of the DRAM
// dimensions it spans; packed as a periodic table (ActivationSpread.h) it
// sits at the same address in every PE (table long word j mod L), so the
// kernel is one MAU (or ALU) step per chunk of four long words (E4).
//
// Not here: two-sided broadcasts, non-constant small operands, and
// periods whose table is over a GRF (256 long words): the general kernel
// takes those. Scalar constants of Add, Sub, Mul, Max and Min are the
// elementwise kernel's immediates.
//
//===----------------------------------------------------------------------===//

#include "ActivationSpread.h"
#include "Generators.h"
#include "MathLib.h"

#include "mncc/codegen/DeviceType.h"

#include <cmath>

using namespace mncc;
using namespace mncc::codegen;

namespace {

constexpr int64_t kMaxTableLongWords = 256;

bool sameGeometry(const DramForm &a, const DramForm &b) {
  return a.type == b.type && a.shape == b.shape && a.order == b.order &&
         a.groups == b.groups;
}

bool isBroadcastOp(const std::string &op) {
  return op == "Add" || op == "Sub" || op == "Mul" || op == "Div" ||
         op == "Max" || op == "Min";
}

/// Which input is the data (the other the table), or -1.
struct Shape {
  int data = -1;
  int table = -1;
  BroadcastPattern pattern;
  int64_t tableLongWords = 0;
};

bool analyse(const KernelRequest &request, Shape &shape, std::string &whyNot) {
  if (request.inputs.size() != 2 || request.outputs.size() != 1) {
    whyNot = "expects two inputs and one output";
    return false;
  }
  const DramForm &out = request.outputs[0].form;
  if (!isFloatingDeviceType(out.type)) {
    whyNot = "only floating-point results";
    return false;
  }
  for (int i = 0; i < 2; ++i) {
    const KernelTensor &tensor = request.inputs[size_t(i)];
    const KernelTensor &other = request.inputs[size_t(1 - i)];
    if (sameGeometry(tensor.form, out) && other.constant &&
        (other.constant->dtype() == reference::DType::Float32 ||
         other.constant->dtype() == reference::DType::Float64) &&
        !sameGeometry(other.form, out)) {
      shape.data = i;
      shape.table = 1 - i;
      break;
    }
  }
  if (shape.data < 0) {
    whyNot = "no operand of the result's form with a constant other";
    return false;
  }
  const reference::Tensor &constant =
      *request.inputs[size_t(shape.table)].constant;
  bool scalar = constant.numElements() == 1;
  if (scalar && request.opType != "Div" && shape.table == 1) {
    whyNot = "a scalar constant: the elementwise kernel's immediate";
    return false;
  }
  if (request.opType == "Div" && shape.table == 0) {
    whyNot = "a constant numerator over a tensor";
    return false;
  }
  if (!broadcastPattern(out, constant.shape(), shape.pattern, whyNot))
    return false;
  shape.tableLongWords = periodicTableLongWords(shape.pattern.periodLongWords);
  if (shape.tableLongWords > kMaxTableLongWords) {
    whyNot = "the broadcast operand repeats every " +
             std::to_string(shape.pattern.periodLongWords) +
             " long words: its table is over a GRF";
    return false;
  }
  return true;
}

class BroadcastGenerator : public KernelGenerator {
public:
  const char *name() const override { return "broadcast"; }

  bool matches(const KernelRequest &request,
               std::string &whyNot) const override {
    if (!isBroadcastOp(request.opType))
      return false;
    Shape shape;
    std::string given;
    if (analyse(request, shape, given))
      return true;
    if (!preferredOrder(request, 0).empty() &&
        analyse(withPreferredOrders(request, *this), shape, whyNot))
      return true;
    whyNot = given;
    return false;
  }

  /// A per-channel operand (b[C, 1, ..., 1] over x[N, C, ...]) prefers
  /// channels last, where its table is one row: the convolutions' order.
  std::vector<unsigned> preferredOrder(const KernelRequest &request,
                                       size_t operand) const override {
    if (request.inputs.size() != 2 || request.outputs.size() != 1)
      return {};
    const std::vector<int64_t> &out = request.outputs[0].form.shape;
    int data = -1;
    for (int i = 0; i < 2; ++i)
      if (request.inputs[size_t(i)].form.shape == out &&
          request.inputs[size_t(1 - i)].constant)
        data = i;
    if (data < 0 || out.size() < 3 || (operand != size_t(data) && operand != 2))
      return {};
    const std::vector<int64_t> &small =
        request.inputs[size_t(1 - data)].form.shape;
    // Right-aligned: only the channel dimension (1) may be over 1.
    size_t offset = out.size() - std::min(out.size(), small.size());
    bool perChannel =
        small.size() <= out.size() && small.size() >= out.size() - 1;
    for (size_t j = 0; perChannel && j < small.size(); ++j)
      if (small[j] != 1 && offset + j != 1)
        perChannel = false;
    return perChannel ? channelsLastOrder(out.size()) : std::vector<unsigned>{};
  }

  std::optional<int64_t> constantLongWords(const KernelRequest &request,
                                           size_t input) const override {
    Shape shape;
    std::string whyNot;
    if (!analyse(request, shape, whyNot) || int(input) != shape.table)
      return std::nullopt;
    return shape.tableLongWords * 64;
  }

  bool packConstant(const KernelRequest &request, size_t input,
                    DramImage &image, std::string &error) const override {
    Shape shape;
    if (!analyse(request, shape, error) || int(input) != shape.table) {
      error = "broadcast packs only its table operand";
      return false;
    }
    const reference::Tensor &constant = *request.inputs[input].constant;
    bool reciprocal = request.opType == "Div";
    VectorFormat format(request.outputs[0].form.type);
    bool isDouble = format.type() == DeviceType::Double;
    image = packPeriodicTable(
        request.outputs[0].form, shape.tableLongWords,
        [&](unsigned g, int64_t a, unsigned slot) -> uint64_t {
          int64_t index = shape.pattern.element(g, a, slot);
          if (index < 0)
            return 0; // padding stays zero whatever the operation
          double value = constant.elementAsDouble(index);
          // Single and half: the constant as a single first, as it was.
          if (!isDouble)
            value = double(float(value));
          // x / b as x * (1 / b), 1 / b rounded once on the host (to
          // single, then to half; or to double).
          if (reciprocal)
            value = isDouble ? 1.0 / value : double(float(1.0 / value));
          return format.laneOf(value);
        });
    return true;
  }

  bool emit(const KernelRequest &request, VsmWriter &out,
            KernelDescription &description, std::string &error) const override {
    Shape shape;
    if (!analyse(request, shape, error))
      return false;
    const std::string &op = request.opType;
    bool alu = op == "Max" || op == "Min";
    bool tableFirst = shape.table == 0;
    description.generator = name();
    description.variant = op + ", table of " +
                          std::to_string(shape.tableLongWords) +
                          " long words per PE";
    description.parameters.push_back(
        {"period", std::to_string(shape.pattern.periodLongWords) + " lw"});
    const DramForm &data = request.inputs[size_t(shape.data)].form;
    int64_t tableBase = request.inputs[size_t(shape.table)].form.base;
    // Half: the hv* forms, rounded once to half, the table read as the
    // addend in halves with "e" (E6); double: products in two steps (E8).
    VectorFormat format(request.outputs[0].form.type);
    auto expression = [&](int64_t j, int64_t t) -> std::vector<std::string> {
      std::string x = peOperand(PeMemory::LM0, Width::Long, 2 * j);
      std::string b = peOperand(PeMemory::GRF0, Width::Long, 2 * t);
      std::string y = peOperand(PeMemory::LM1, Width::Long, 2 * j);
      if (op == "Add")
        return format.mauSteps("vadd", {x, b}, y);
      if (op == "Sub")
        return tableFirst ? format.mauSteps("vadd", {"-" + x, b}, y)
                          : format.mauSteps("vadd", {x, "-" + b}, y);
      if (op == "Mul" || op == "Div")
        return format.mauSteps("vmul", {x, b}, y);
      return {format.alu(op == "Max" ? "max" : "min") + " " + x + " " + b +
              " " + y};
    };
    emitTableKernel(out, data, request.outputs[0].form, shape.tableLongWords,
                    {{tableBase, PeMemory::GRF0}}, expression, !alu);
    return true;
  }
};

std::unique_ptr<KernelGenerator> createBroadcastGenerator() {
  return std::make_unique<BroadcastGenerator>();
}

} // namespace

MNCC_KERNEL_GENERATOR(Broadcast, 100, createBroadcastGenerator);
