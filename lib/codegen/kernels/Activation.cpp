//===- Activation.cpp - Element-wise math operators on the flat spread ----===//
//
// Exp, Log, Sigmoid, Tanh, Erf, Softplus, Elu, Selu, HardSigmoid,
// HardSwish, Sqrt, Reciprocal, Pow by a short constant, Div (operands of
// one shape), Abs, LeakyRelu, PRelu (a scalar slope) and Clip on single
// and double tensors (Erf and Softplus on single only; one program per
// operator, built in the tensor's format), and on half ones through
// single (E7). Every operand of one DRAM geometry shares the flat spread
// (ActivationSpread.h), so each pass loads a block per PE into LM0 (the
// second Div operand into LM1), runs the operator's MathProgram (MathLib.h)
// into LM1 and stores it.
//
// Padding (docs/codegen.md C2): where f(0) is not 0 (Exp, Sigmoid, Log,
// Reciprocal, Div, a Clip that excludes 0) and the rows are padded, the
// result is and-ed with a mask that is all ones on elements and zero on
// padding. The mask depends only on the block address modulo the row, so
// with the spread's shares and passes aligned to its table it is one block
// per PE, computed once at the start from $peid (E2).
//
//===----------------------------------------------------------------------===//

#include "ActivationSpread.h"
#include "Generators.h"
#include "MathLib.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mncc;
using namespace mncc::codegen;

namespace {

using Home = MathProgram::Home;
using Ref = MathProgram::Ref;

/// Long words per PE of one pass: LM0 holds the first operand and the
/// mask, LM1 the result (and the second operand it overwrites).
constexpr int64_t kPassLongWords = 1024;
constexpr int64_t kMaskLongWord = 1024;

bool sameGeometry(const DramForm &a, const DramForm &b) {
  return a.type == b.type && a.shape == b.shape && a.order == b.order &&
         a.groups == b.groups;
}

/// A scalar constant input (a float32 or float64 initializer).
std::optional<double> scalarConstant(const KernelRequest &request, size_t i) {
  if (!request.hasInput(i))
    return std::nullopt;
  const reference::Tensor *tensor = request.inputs[i].constant;
  if (!tensor || tensor->numElements() != 1 ||
      (tensor->dtype() != reference::DType::Float32 &&
       tensor->dtype() != reference::DType::Float64))
    return std::nullopt;
  return tensor->elementAsDouble(0);
}

/// The format the operator's program computes in: half tensors go
/// through single (E7).
DeviceType programType(const KernelRequest &request) {
  DeviceType type = request.outputs[0].form.type;
  return type == DeviceType::Half ? DeviceType::Single : type;
}

struct Plan {
  MathProgram program;
  unsigned inputs = 1;
  /// f(0) == 0: the padding stays zero by itself.
  bool zeroAtZero = false;
  std::string variant;
};

std::optional<MathFunction> mathFunctionOf(const std::string &opType) {
  if (opType == "Exp")
    return MathFunction::Exp;
  if (opType == "Log")
    return MathFunction::Log;
  if (opType == "Sigmoid")
    return MathFunction::Sigmoid;
  if (opType == "Tanh")
    return MathFunction::Tanh;
  if (opType == "Sqrt")
    return MathFunction::Sqrt;
  if (opType == "Reciprocal")
    return MathFunction::Reciprocal;
  if (opType == "Div")
    return MathFunction::Divide;
  if (opType == "Erf")
    return MathFunction::Erf;
  if (opType == "Softplus")
    return MathFunction::Softplus;
  return std::nullopt;
}

bool isActivation(const std::string &opType) {
  return mathFunctionOf(opType) || opType == "Abs" || opType == "LeakyRelu" ||
         opType == "Clip" || opType == "Elu" || opType == "Selu" ||
         opType == "HardSigmoid" || opType == "HardSwish" ||
         opType == "PRelu" || opType == "Pow";
}

bool hasPadding(const DramForm &form) {
  return form.innerPadded() != form.innerExtent();
}

/// Add, Sub, Max and Min with a scalar constant c whose f(0) = c (or
/// max(0, c)) is not zero, over padded rows: the elementwise kernel's
/// immediate would write c into the padding (C2), so they take the
/// masked path here (E5).
std::optional<double> paddingScalar(const KernelRequest &request) {
  const std::string &op = request.opType;
  if ((op != "Add" && op != "Sub" && op != "Max" && op != "Min") ||
      request.inputs.size() != 2 || request.outputs.size() != 1 ||
      !hasPadding(request.outputs[0].form))
    return std::nullopt;
  std::optional<double> c = scalarConstant(request, 1);
  if (!c || (request.inputs[0].form.shape != request.outputs[0].form.shape))
    return std::nullopt;
  bool leaks = op == "Add" || op == "Sub" ? *c != 0
               : op == "Max"              ? *c > 0
                                          : *c < 0;
  return leaks ? c : std::nullopt;
}

bool planOperator(const KernelRequest &request, Plan &plan,
                  std::string &whyNot) {
  const std::string &op = request.opType;
  DeviceType type = programType(request);
  if (std::optional<MathFunction> function = mathFunctionOf(op)) {
    if ((*function == MathFunction::Erf ||
         *function == MathFunction::Softplus) &&
        type == DeviceType::Double) {
      whyNot = op + " in double is not implemented (MathLib's " +
               mathFunctionName(*function) +
               " is single: docs/codegen.md M9, M12)";
      return false;
    }
    plan.program = mathFunctionProgram(*function, type);
    plan.inputs = mathFunctionInputs(*function);
    plan.zeroAtZero = *function == MathFunction::Tanh ||
                      *function == MathFunction::Sqrt ||
                      *function == MathFunction::Erf;
    plan.variant = mathFunctionName(*function);
    return true;
  }
  plan.program = MathProgram(type);
  MathProgram &p = plan.program;
  const VectorFormat &f = p.format();
  Ref x = p.input();
  if (std::optional<double> c = paddingScalar(request)) {
    Ref k = p.constant(op == "Sub" ? -*c : *c, Home::First);
    if (op == "Add" || op == "Sub")
      p.setResult(p.mau(f.mau("vadd"), {x, k}, Home::Destination));
    else
      p.setResult(p.alu(f.alu(op == "Max" ? "max" : "min"), {x, k},
                        Home::Destination));
    plan.variant = op + " of a scalar";
    return true;
  }
  if (op == "Abs") {
    p.setResult(
        p.alu(f.integer("and"), {x, p.constantLane(f.magnitudeMask(), Home::First)},
              Home::Destination));
    plan.zeroAtZero = true;
    plan.variant = "abs";
    return true;
  }
  if (op == "Elu" || op == "Selu") {
    // Selu's defaults are ONNX's float attributes.
    double alpha = request.getFloat(
        "alpha", op == "Elu" ? 1.0f : 1.67326319217681884765625f);
    double gamma = op == "Elu" ? 1.0
                               : request.getFloat(
                                     "gamma", 1.05070102214813232421875f);
    plan.program = scaledEluProgram(alpha, gamma, type);
    plan.zeroAtZero = true;
    plan.variant = op == "Elu" ? "elu" : "selu";
    return true;
  }
  if (op == "HardSigmoid" || op == "HardSwish") {
    // max(0, min(1, alpha x + beta)), one rounding of the fma; HardSwish
    // times x (alpha 1/6, beta 1/2).
    bool swish = op == "HardSwish";
    double alpha = swish ? 1.0 / 6 : request.getFloat("alpha", 0.2f);
    double beta = swish ? 0.5 : request.getFloat("beta", 0.5f);
    Ref t = p.mau(f.mau("vfma"),
                  {x, p.constant(alpha, Home::First),
                   p.constant(beta, Home::Second)},
                  Home::Second);
    t = p.alu(f.alu("max"), {t, p.constantLane(0, Home::First)}, Home::Second);
    if (!swish) {
      p.setResult(p.alu(f.alu("min"), {t, p.constant(1.0, Home::First)},
                        Home::Destination));
      plan.variant = "hard sigmoid";
      return true;
    }
    t = p.alu(f.alu("min"), {t, p.constant(1.0, Home::First)}, Home::Second);
    p.setResult(p.mau(f.mau("vmul"), {x, t}, Home::Destination));
    plan.zeroAtZero = true;
    plan.variant = "hard swish";
    return true;
  }
  if (op == "Pow") {
    // A scalar constant exponent with a short exact form.
    std::optional<double> c = scalarConstant(request, 1);
    if (!c || (*c != 0.5 && *c != 1 && *c != 2 && *c != 3 && *c != -1)) {
      whyNot = "Pow's exponent is not a scalar constant of 0.5, 1, 2, 3 or -1";
      return false;
    }
    if (*c == 0.5 || *c == -1) {
      MathFunction function =
          *c == 0.5 ? MathFunction::Sqrt : MathFunction::Reciprocal;
      plan.program = mathFunctionProgram(function, type);
      plan.zeroAtZero = *c == 0.5;
      plan.variant = std::string("pow as ") + mathFunctionName(function);
      return true;
    }
    if (*c == 1) {
      p.setResult(p.alu("lpassa", {x}, Home::Destination));
    } else {
      Ref square = p.mau(f.mau("vmul"), {x, x},
                         *c == 2 ? Home::Destination : Home::Second);
      if (*c == 3)
        square = p.mau(f.mau("vmul"), {square, x}, Home::Destination);
      p.setResult(square);
    }
    plan.zeroAtZero = true;
    plan.variant = "pow " + std::to_string(int(*c));
    return true;
  }
  if (op == "LeakyRelu" || op == "PRelu") {
    // The attribute is a float; alpha x in the format (double: alpha
    // widened exactly, one rounding of the product). PRelu's slope is a
    // scalar constant here (per-channel slopes broadcast: not covered).
    double alpha = request.getFloat("alpha", 0.01f);
    if (op == "PRelu") {
      std::optional<double> slope = scalarConstant(request, 1);
      if (!slope) {
        whyNot = "PRelu's slope is not a scalar constant";
        return false;
      }
      alpha = *slope;
    }
    Ref scaled =
        p.mau(f.mau("vmul"), {x, p.constant(alpha, Home::First)}, Home::Second);
    if (alpha >= 0 && alpha <= 1) {
      p.setResult(p.alu(f.alu("max"), {x, scaled}, Home::Destination));
    } else if (alpha > 1) {
      p.setResult(p.alu(f.alu("min"), {x, scaled}, Home::Destination));
    } else {
      // A negative slope: choose by the sign bit.
      Ref negative = p.alu(f.integer("lsr"),
                           {x, p.constantLane(f.bits() - 1, Home::Second)},
                           Home::First);
      Ref diff = p.alu(f.integer("xor"), {x, scaled}, Home::Second);
      diff = p.alu(f.integer("and"), {diff, negative}, Home::Second);
      p.setResult(p.alu(f.integer("xor"), {x, diff}, Home::Destination));
    }
    plan.zeroAtZero = true;
    plan.variant = "leaky relu";
    return true;
  }
  if (op == "Clip") {
    // Opset 11 and up: min and max are optional constant inputs; before,
    // attributes. Absent bounds are unbounded.
    std::optional<double> low, high;
    if (request.hasInput(1)) {
      low = scalarConstant(request, 1);
      if (!low) {
        whyNot = "Clip's min is not a floating-point scalar constant";
        return false;
      }
    } else if (request.hasAttribute("min")) {
      low = request.getFloat("min", 0);
    }
    if (request.hasInput(2)) {
      high = scalarConstant(request, 2);
      if (!high) {
        whyNot = "Clip's max is not a floating-point scalar constant";
        return false;
      }
    } else if (request.hasAttribute("max")) {
      high = request.getFloat("max", 0);
    }
    Ref y = x;
    if (low)
      y = p.alu(f.alu("max"), {y, p.constant(*low, Home::First)}, Home::Second);
    if (high)
      y = p.alu(f.alu("min"), {y, p.constant(*high, Home::First)}, Home::Second);
    if (!low && !high)
      y = p.alu("lpassa", {x}, Home::Second);
    p.setResult(y);
    plan.zeroAtZero = (!low || *low <= 0) && (!high || *high >= 0);
    plan.variant = "clip";
    return true;
  }
  whyNot = op + " is not an activation";
  return false;
}

/// The row long word (64 k + q) mod R that long word k of PE q covers, as
/// a float of the program's format in the destination's slot, from the
/// input 64 k.
Ref rowColumn(MathProgram &p, const DramForm &form) {
  const VectorFormat &f = p.format();
  double rowLongWords = double(form.rowLongWords());
  Ref k = p.input();
  // $peid as a float: its bits in the mantissa of 2^m, less 2^m.
  double magic = std::ldexp(1.0, int(f.mantissaBits()));
  Ref pe = p.alu(f.integer("or"),
                 {p.fixed("$peid"), p.constant(magic, Home::First)},
                 Home::Second);
  pe = p.mau(f.mau("vadd"), {pe, -p.constant(magic, Home::First)},
             Home::Second);
  Ref index = p.mau(f.mau("vadd"), {k, pe}, Home::Destination);
  // floor((index + 1/2) / R): the half keeps a multiple of R off the
  // rounding boundary (index < 2^17, far inside single precision).
  Ref t = p.mau(f.mau("vfma"),
                {index, p.constant(1.0 / rowLongWords, Home::First),
                 p.constant(0.5 / rowLongWords, Home::Second)},
                Home::First);
  Ref row = p.alu(f.alu("floor"), {t}, Home::Second);
  return p.mau(f.mau("vfma"),
               {row, -p.constant(rowLongWords, Home::First), index},
               Home::Destination);
}

/// The mask of the row padding over a pass, in single or double: long
/// word k of PE q covers row long word (64 k + q) mod R; its lane e is an
/// element while P ((64 k + q) mod R) + e < the row's extent (P lanes a
/// long word). In: 64 k (LM1); out: all ones or zero per lane (LM0).
MathProgram paddingMaskProgram(const DramForm &form, DeviceType type) {
  MathProgram p(type);
  const VectorFormat &f = p.format();
  double extent = double(form.innerExtent());
  Ref column = rowColumn(p, form);
  uint64_t offsets = f.longWord(
      [&](unsigned lane) { return f.laneOf(double(lane) - extent); });
  Ref lane = p.mau(f.mau("vfma"),
                   {column, p.constant(double(f.lanes()), Home::First),
                    p.constantLongWord(offsets, Home::Second)},
                   Home::First);
  p.setResult(p.alu(f.integer("lsr"),
                    {lane, p.constantLane(f.bits() - 1, Home::Second)},
                    Home::Destination));
  return p;
}

class ActivationGenerator : public KernelGenerator {
  bool emitHalf(const KernelRequest &request, const Plan &plan, bool masked,
                VsmWriter &out, KernelDescription &description,
                std::string &error) const;

public:
  const char *name() const override { return "activation"; }

  bool matches(const KernelRequest &request,
               std::string &whyNot) const override {
    if (!isActivation(request.opType) && !paddingScalar(request))
      return false;
    if (request.outputs.size() != 1 ||
        !isFloatingDeviceType(request.outputs[0].form.type)) {
      whyNot = "only floating-point results";
      return false;
    }
    const DramForm &out = request.outputs[0].form;
    Plan plan;
    if (!planOperator(request, plan, whyNot))
      return false;
    if (request.inputs.size() < plan.inputs) {
      whyNot = "expects " + std::to_string(plan.inputs) + " inputs";
      return false;
    }
    for (unsigned i = 0; i < plan.inputs; ++i)
      if (!sameGeometry(request.inputs[i].form, out)) {
        whyNot = "operands of different shapes or DRAM forms (broadcasts are "
                 "the broadcast kernel's)";
        return false;
      }
    if (!plan.zeroAtZero && hasPadding(out) &&
        periodicTableLongWords(out.rowLongWords()) > kPassLongWords) {
      whyNot = "rows of " + std::to_string(out.rowLongWords()) +
               " long words make the padding mask longer than a pass";
      return false;
    }
    return true;
  }

  bool emit(const KernelRequest &request, VsmWriter &out,
            KernelDescription &description, std::string &error) const override {
    Plan plan;
    if (!planOperator(request, plan, error))
      return false;
    const DramForm &result = request.outputs[0].form;
    bool masked = !plan.zeroAtZero && hasPadding(result);
    if (result.type == DeviceType::Half)
      return emitHalf(request, plan, masked, out, description, error);
    // Single and double: the program in the tensors' format.
    VectorFormat format(result.type);
    int64_t align = masked ? periodicTableLongWords(result.rowLongWords()) : 4;
    AlignedSpread spread(result, align);
    int64_t pass = spread.passLongWords(kPassLongWords);
    if (pass == 0) {
      error = "the padding mask is longer than a pass";
      return false;
    }
    MathScratch scratch{{PeMemory::GRF0, 0, peMemoryLongWords(PeMemory::GRF0)},
                        {PeMemory::GRF1, 0, peMemoryLongWords(PeMemory::GRF1)}};
    description.generator = name();
    description.variant =
        plan.variant + (result.type == DeviceType::Double ? " in double" : "") +
        ", flat over " + std::to_string(spread.peLongWords()) +
        " long words per PE" + (masked ? ", padding masked" : "");
    description.parameters.push_back(
        {"spread", "flat, " + std::to_string(spread.peLongWords()) +
                       " lw per PE, passes of " + std::to_string(pass)});

    MathProgram program = plan.program;
    if (masked) {
      // 64 k in LM1, then the mask into LM0 after the first operand.
      out.comment("padding mask: rows of " +
                  std::to_string(result.innerExtent()) + " in " +
                  std::to_string(result.rowLongWords()) + " long words");
      for (int64_t k = 0; k < pass; ++k)
        emitLongWordConstant(out, PeMemory::LM1, kMaskLongWord + k,
                             format.splat(double(64 * k)));
      out.nop();
      if (!paddingMaskProgram(result, result.type)
               .emit(out, {{PeMemory::LM1, kMaskLongWord, pass}},
                     {PeMemory::LM0, kMaskLongWord, pass}, scratch, error))
        return false;
      Ref value{program.result()};
      program.setResult(program.alu(format.integer("and"),
                                    {value, program.input(plan.inputs)},
                                    Home::Destination));
    }

    std::vector<AlignedSpread> inputs;
    for (unsigned i = 0; i < plan.inputs; ++i)
      inputs.emplace_back(request.inputs[i].form, align);
    for (int64_t first = 0; first < spread.peLongWords(); first += pass) {
      int64_t count = std::min(pass, spread.peLongWords() - first);
      std::vector<PeBlock> sources = {{PeMemory::LM0, 0, count}};
      inputs[0].emitLoad(out, first, count, PeMemory::LM0, 0);
      if (plan.inputs == 2) {
        inputs[1].emitLoad(out, first, count, PeMemory::LM1, 0);
        sources.push_back({PeMemory::LM1, 0, count});
      }
      if (masked)
        sources.push_back({PeMemory::LM0, kMaskLongWord, count});
      if (!program.emit(out, sources, {PeMemory::LM1, 0, count}, scratch,
                        error))
        return false;
      spread.emitStore(out, first, count, PeMemory::LM1, 0);
    }
    return true;
  }
};

/// The padding mask of a half tensor over a pass: half long word j of PE
/// q covers row long word (64 j + q) mod R, whose first E - 4 col halves
/// (0 to 4) are elements; the mask is all ones over those halves, from
/// the top. In: 64 j (LM1); out: the mask (LM0).
MathProgram halfPaddingMaskProgram(const DramForm &form) {
  using Home = MathProgram::Home;
  MathProgram p;
  Ref column = rowColumn(p, form);
  // Elements in the long word: E - 4 column, clamped to [0, 4].
  Ref count = p.mau("fvfma",
                    {column, p.constant(-4.0f, Home::First),
                     p.constant(float(form.innerExtent()), Home::Second)},
                    Home::Destination);
  count =
      p.alu("fmax", {count, p.constantBits(0, Home::First)}, Home::Destination);
  count =
      p.alu("fmin", {count, p.constant(4.0f, Home::First)}, Home::Destination);
  // All ones shifted left by 16 (4 - count) bits (64 and up give 0).
  Ref shift = p.mau(
      "fvfma",
      {count, p.constant(-16.0f, Home::First), p.constant(64.0f, Home::Second)},
      Home::First);
  shift = p.alu("fftoi", {shift}, Home::Second);
  shift = p.alu("land", {shift, p.constantPair(0, 0xffffffffu, Home::First)},
                Home::Second);
  p.setResult(p.alu("llsl", {p.constantBits(0xffffffffu, Home::First), shift},
                    Home::Destination));
  return p;
}

bool ActivationGenerator::emitHalf(const KernelRequest &request,
                                   const Plan &plan, bool masked,
                                   VsmWriter &out,
                                   KernelDescription &description,
                                   std::string &error) const {
  // Half tensors: each pass converts to single (hvpassa, exact), runs the
  // single program and rounds back once (fvpassar) (E7). LM0: the half
  // operand and the half result; LM1: the singles (long words [0, 2n)),
  // Div's first operand in half at 1024, the mask at 1536.
  const DramForm &result = request.outputs[0].form;
  int64_t align = masked ? periodicTableLongWords(result.rowLongWords()) : 4;
  AlignedSpread spread(result, align);
  int64_t pass = spread.passLongWords(512);
  if (pass == 0) {
    error = "the padding mask is longer than a pass";
    return false;
  }
  MathScratch scratch{{PeMemory::GRF0, 0, peMemoryLongWords(PeMemory::GRF0)},
                      {PeMemory::GRF1, 0, peMemoryLongWords(PeMemory::GRF1)}};
  description.generator = name();
  description.variant = plan.variant + " in half, flat over " +
                        std::to_string(spread.peLongWords()) +
                        " long words per PE" +
                        (masked ? ", padding masked" : "");
  constexpr int64_t kHalfMask = 1536;
  if (masked) {
    for (int64_t k = 0; k < pass; ++k)
      emitLongWordConstant(out, PeMemory::LM1, 1024 + k,
                           VectorFormat(DeviceType::Single).splat(64.0 * k));
    out.nop();
    if (!halfPaddingMaskProgram(result).emit(out, {{PeMemory::LM1, 1024, pass}},
                                             {PeMemory::LM0, 1024, pass},
                                             scratch, error))
      return false;
    for (int64_t k = 0; k < pass; k += 4)
      out.step({"lpassa " +
                peOperand(PeMemory::LM0, Width::Long, 2 * (1024 + k)) + " " +
                peOperand(PeMemory::LM1, Width::Long, 2 * (kHalfMask + k))});
    out.nop();
  }
  std::vector<AlignedSpread> inputs;
  for (unsigned i = 0; i < plan.inputs; ++i)
    inputs.emplace_back(request.inputs[i].form, align);
  bool divide = plan.inputs == 2;
  for (int64_t first = 0; first < spread.peLongWords(); first += pass) {
    int64_t count = std::min(pass, spread.peLongWords() - first);
    // The (last) operand in half into LM0, to singles in LM1.
    inputs[plan.inputs - 1].emitLoad(out, first, count, PeMemory::LM0, 0);
    for (int64_t j = 0; j < count; j += 4)
      out.step({"hvpassa " + peOperand(PeMemory::LM0, Width::Long, 2 * j) +
                " " + peOperand(PeMemory::LM1, Width::DoubleLong, 4 * j)});
    std::vector<PeBlock> sources = {{PeMemory::LM1, 0, 2 * count}};
    if (divide) {
      // The numerator in half into LM1 at 1024, to singles in LM0 at 1024.
      inputs[0].emitLoad(out, first, count, PeMemory::LM1, 1024);
      for (int64_t j = 0; j < count; j += 4)
        out.step(
            {"hvpassa " +
             peOperand(PeMemory::LM1, Width::Long, 2 * (1024 + j)) + " " +
             peOperand(PeMemory::LM0, Width::DoubleLong, 2 * (1024 + 2 * j))});
      sources = {{PeMemory::LM0, 1024, 2 * count},
                 {PeMemory::LM1, 0, 2 * count}};
    }
    out.nop(2);
    if (!plan.program.emit(out, sources, {PeMemory::LM1, 0, 2 * count}, scratch,
                           error))
      return false;
    // Back to half, one word (two halves) per single long word.
    for (int64_t k = 0; k < 2 * count; k += 4)
      out.step({"fvpassar " + peOperand(PeMemory::LM1, Width::Long, 2 * k) +
                " " + peOperand(PeMemory::LM0, Width::Word, k)});
    out.nop(2);
    if (masked) {
      for (int64_t j = 0; j < count; j += 4)
        out.step({"land " + peOperand(PeMemory::LM0, Width::Long, 2 * j) + " " +
                  peOperand(PeMemory::LM1, Width::Long, 2 * (kHalfMask + j)) +
                  " " + peOperand(PeMemory::LM0, Width::Long, 2 * j)});
      out.nop();
    }
    spread.emitStore(out, first, count, PeMemory::LM0, 0);
  }
  return true;
}

std::unique_ptr<KernelGenerator> createActivationGenerator() {
  return std::make_unique<ActivationGenerator>();
}

} // namespace

MNCC_KERNEL_GENERATOR(Activation, 100, createActivationGenerator);
