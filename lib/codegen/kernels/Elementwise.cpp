//===- Elementwise.cpp - Element-wise operators spread over every PE -----===//
//
// Operands of one shape and DRAM form share the flat spread (FlatSpread.h),
// so each step computes four long words per PE. The first input goes to
// LM0 and the second to LM1; the result overwrites the second input in
// place (a step may read and write LM1 only at the same addresses, manual
// 3.6.4), or goes to LM1 for one input. A scalar constant operand is an
// immediate kept in GRF0.
//
// Every floating format takes one code path (VectorFormat, MathLib.h):
// half tensors (float_dtype=half) the MAU's hv* operations with the output
// reduction "r" (four halves a long word, rounded once; the addend read as
// halves with the "e" option) and the ALU's h-precision max and min (E6);
// double tensors (float_dtype=double) dvadd, dvpassa, the product in two
// steps (dvmulu, then dvfmad through $mauf) and dmax, dmin (E8).
//
//===----------------------------------------------------------------------===//

#include "FlatSpread.h"
#include "Generators.h"
#include "MathLib.h"

#include "mncc/codegen/DeviceType.h"

using namespace mncc;
using namespace mncc::codegen;

namespace {

/// Long words per PE one pass keeps in LM0 and LM1.
constexpr int64_t kPassLongWords = 1024;

enum class Arity { Unary, Binary };

struct ElementwiseOp {
  const char *opType;
  Arity arity;
};

constexpr ElementwiseOp kOps[] = {
    {"Relu", Arity::Unary}, {"Identity", Arity::Unary}, {"Neg", Arity::Unary},
    {"Add", Arity::Binary}, {"Sub", Arity::Binary},     {"Mul", Arity::Binary},
    {"Max", Arity::Binary}, {"Min", Arity::Binary},
};

const ElementwiseOp *findOp(const std::string &opType) {
  for (const ElementwiseOp &op : kOps)
    if (opType == op.opType)
      return &op;
  return nullptr;
}

bool sameGeometry(const DramForm &a, const DramForm &b) {
  return a.type == b.type && a.shape == b.shape && a.order == b.order &&
         a.groups == b.groups;
}

/// A scalar constant operand: one element known at compile time (a
/// float32 or float64 initializer).
std::optional<double> scalarConstant(const KernelTensor &tensor) {
  if (!tensor.constant || tensor.constant->numElements() != 1 ||
      (tensor.constant->dtype() != reference::DType::Float32 &&
       tensor.constant->dtype() != reference::DType::Float64))
    return std::nullopt;
  return tensor.constant->elementAsDouble(0);
}

class ElementwiseGenerator : public KernelGenerator {
public:
  const char *name() const override { return "elementwise"; }

  bool matches(const KernelRequest &request,
               std::string &whyNot) const override {
    const ElementwiseOp *op = findOp(request.opType);
    if (!op)
      return false;
    if (request.outputs.size() != 1 ||
        !isFloatingDeviceType(request.outputs[0].form.type)) {
      whyNot = "only floating-point results";
      return false;
    }
    const DramForm &out = request.outputs[0].form;
    size_t arity = op->arity == Arity::Unary ? 1 : 2;
    if (request.inputs.size() != arity) {
      whyNot = "expects " + std::to_string(arity) + " inputs";
      return false;
    }
    for (size_t i = 0; i < arity; ++i) {
      const KernelTensor &in = request.inputs[i];
      if (sameGeometry(in.form, out))
        continue;
      // A scalar constant as the second operand becomes an immediate.
      if (i == 1 && scalarConstant(in))
        continue;
      whyNot = "operands of different shapes or DRAM forms";
      return false;
    }
    return true;
  }

  /// Any of its operators clamps its result in LM1 before the store.
  bool fusesActivation(const KernelRequest &request) const override {
    std::string whyNot;
    return matches(request, whyNot);
  }

  bool emit(const KernelRequest &request, VsmWriter &out,
            KernelDescription &description, std::string &error) const override {
    const ElementwiseOp &op = *findOp(request.opType);
    const DramForm &result = request.outputs[0].form;
    FlatSpread spread(result);
    bool binary = op.arity == Arity::Binary;
    std::optional<double> immediate =
        binary ? scalarConstant(request.inputs[1]) : std::nullopt;
    if (binary && immediate && sameGeometry(request.inputs[1].form, result))
      immediate.reset();
    description.generator = name();
    description.variant = std::string(request.opType) + ", flat over " +
                          std::to_string(spread.peLongWords()) +
                          " long words per PE" +
                          (immediate ? ", immediate operand" : "") +
                          (request.activation
                               ? ", then " + request.activation->opType
                               : "");

    bool relu = op.opType == std::string_view("Relu");
    if (relu) {
      // Relu is max(x, +0) on the ALU: a negative x gives +0 and -0 stays
      // -0 (both zero: x is kept), bit for bit what pfvm:cpu gives
      // (x < 0 ? 0 : x); frelu would give -0 for every negative x.
      out.step({"zero " + peOperand(PeMemory::GRF0, Width::DoubleLong, 0, 0)});
      out.nop();
    }
    VectorFormat format(result.type);
    if (immediate) {
      // The constant, rounded to the format, in every lane of GRF0 long
      // word 0 of every PE.
      emitLongWordConstant(out, PeMemory::GRF0, 0, format.splat(*immediate));
      out.nop();
    }
    // A fused activation's bounds in GRF0 long words 1 and 2.
    ClampBounds clamp;
    if (request.activation) {
      clamp = emitClampBounds(out, format, request.activation->bounds,
                              PeMemory::GRF0, 1, 2);
      out.nop();
    }
    FlatSpread inputA(request.inputs[0].form);
    std::optional<FlatSpread> inputB;
    if (binary && !immediate)
      inputB.emplace(request.inputs[1].form);

    for (int64_t first = 0; first < spread.peLongWords();
         first += kPassLongWords) {
      int64_t count = std::min(kPassLongWords, spread.peLongWords() - first);
      inputA.emitLoad(out, first, count, PeMemory::LM0, 0);
      if (inputB)
        inputB->emitLoad(out, first, count, PeMemory::LM1, 0);
      for (int64_t j = 0; j < count; j += 4) {
        std::string a = peOperand(PeMemory::LM0, Width::Long, 2 * j);
        std::string b = immediate
                            ? peOperand(PeMemory::GRF0, Width::Long, 0, 0)
                            : peOperand(PeMemory::LM1, Width::Long, 2 * j);
        std::string o = peOperand(PeMemory::LM1, Width::Long, 2 * j);
        std::vector<std::string> steps;
        std::string_view type = op.opType;
        if (type == "Relu")
          steps = {format.alu("max") + " " + a + " " +
                   peOperand(PeMemory::GRF0, Width::Long, 0, 0) + " " + o};
        else if (type == "Identity")
          steps = {"lpassa " + a + " " + o};
        else if (type == "Neg")
          steps = format.mauSteps("vpassa", {"-" + a}, o);
        else if (type == "Add")
          steps = format.mauSteps("vadd", {a, b}, o);
        else if (type == "Sub")
          steps = format.mauSteps("vadd", {a, "-" + b}, o);
        else if (type == "Mul")
          steps = format.mauSteps("vmul", {a, b}, o);
        else if (type == "Max" || type == "Min")
          steps = {format.alu(type == "Max" ? "max" : "min") + " " + a + " " +
                   b + " " + o};
        for (const std::string &expression : steps)
          out.step({expression});
      }
      if (request.activation) {
        // The MAU's results land ten cycles after their step.
        out.nop(2);
        std::vector<std::string> values;
        for (int64_t j = 0; j < count; j += 4)
          values.push_back(peOperand(PeMemory::LM1, Width::Long, 2 * j));
        emitClamp(out, format, clamp, values);
      }
      // MAU results land ten cycles after their step: two steps before the
      // store reads them.
      out.nop(2);
      spread.emitStore(out, first, count, PeMemory::LM1, 0);
    }
    description.parameters.push_back(
        {"spread",
         "flat, " + std::to_string(spread.peLongWords()) + " lw per PE"});
    (void)error;
    return true;
  }
};

} // namespace

namespace {
std::unique_ptr<KernelGenerator> createElementwiseGenerator() {
  return std::make_unique<ElementwiseGenerator>();
}
} // namespace

MNCC_KERNEL_GENERATOR(Elementwise, 100, createElementwiseGenerator);
