//===- GeneralMath.cpp - Comparisons, logic, selections, reductions ------===//
//
// The general kernel's comparisons (Equal, Greater, Less, GreaterOrEqual,
// LessOrEqual), logic on bools (And, Or, Xor, Not), Where, the variadic
// Max, Min, Sum and Mean, PRelu and the piecewise activations (HardSigmoid,
// HardSwish, ThresholdedRelu, Shrink, Elu, Selu, Softplus, Sign), Round,
// Floor, Ceil, Pow, LayerNormalization, and the reductions GeneralOps
// leaves (ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare,
// ReduceLogSum, ReduceLogSumExp; also in double). GeneralMore.h says how
// selections are made on the bits.
//
//===----------------------------------------------------------------------===//

#include "GeneralMore.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::general;
using namespace mncc::codegen::general::more;

//===----------------------------------------------------------------------===//
// Shared helpers (GeneralMore.h)
//===----------------------------------------------------------------------===//

std::optional<ElementKind> more::kindOf(Lowering &l, const KernelTensor &tensor,
                                        const std::string &what,
                                        bool allowDouble) {
  switch (tensor.form.type) {
  case DeviceType::Single:
  case DeviceType::Half:
    return ElementKind::Float;
  case DeviceType::Int32:
    return ElementKind::Int;
  case DeviceType::Double:
    if (allowDouble)
      return ElementKind::Float;
    break;
  }
  l.fail(what + " is double: the general kernel's " + l.request().opType +
         " takes single, half and int32 tensors");
  return std::nullopt;
}

bool Ring::allocate(Lowering &l, std::initializer_list<PeMemory> preference,
                    int32_t elements) {
  Stride = l.elementWords();
  std::optional<Slot> slot = l.allocate(preference, elements * Stride);
  if (!slot)
    return false;
  Base = *slot;
  Words = elements * Stride;
  Next = 0;
  return true;
}

Slot Ring::take() {
  Slot slot = Base.offset(Next);
  Next = (Next + Stride) % std::max(Words, 1);
  return slot;
}

namespace {

/// frelu s v: v where s's sign bit is clear, else the sign pattern.
void signSelect(ElemProgram &p, Slot dst, Slot s, Slot v) {
  ElemOp op;
  op.opcode = ElemOpcode::Relu;
  op.dst = dst;
  op.src[0] = s;
  op.src[1] = v;
  p.record(op);
}

/// fvpassa: the value normalised (-0 becomes +0).
void normalise(ElemProgram &p, Slot dst, Slot x) {
  ElemOp op;
  op.opcode = ElemOpcode::Pass;
  op.dst = dst;
  op.src[0] = x;
  p.record(op);
}

} // namespace

void more::selectBySign(Lowering &l, Ring &ring, Slot dst, Slot s, Slot a,
                        Slot b) {
  ElemProgram &p = l.program();
  Slot fromA = ring.take(), flipped = ring.take(), fromB = ring.take();
  signSelect(p, fromA, s, a);
  p.integer(ElemOpcode::IXor, flipped, s, p.constantBits(kSignBit));
  signSelect(p, fromB, flipped, b);
  // One of the two is the sign pattern, the other the value chosen.
  p.integer(ElemOpcode::IXor, fromA, fromA, fromB);
  p.integer(ElemOpcode::IXor, dst, fromA, p.constantBits(kSignBit));
}

Slot more::conditionSign(Lowering &l, Ring &ring, Slot c) {
  Slot s = ring.take();
  l.program().integer(ElemOpcode::ISub, s, c, l.program().constantBits(1));
  return s;
}

namespace {

constexpr auto LM0 = PeMemory::LM0;
constexpr auto LM1 = PeMemory::LM1;
constexpr auto GRF0 = PeMemory::GRF0;
constexpr auto GRF1 = PeMemory::GRF1;

/// A scalar known at compile time, as the bits of its element kind.
std::optional<uint32_t> scalarBits(const KernelTensor &tensor,
                                   ElementKind kind) {
  const reference::Tensor *c = tensor.constant;
  if (!c || c->numElements() != 1)
    return std::nullopt;
  if (kind == ElementKind::Int)
    return uint32_t(int32_t(c->elementAsInt64(0)));
  float value = float(c->elementAsDouble(0));
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

/// Places the inputs of an element-wise operator whose every input
/// broadcasts to output 0: scalar constants become constant words, the
/// first image goes to LM0, the others wherever they fit (GRF first: so
/// that an operation reads its operands from different memories), then
/// output 0 in LM1 or LM0. `inputs` are the positions to place.
bool placeElementwise(Lowering &l, const std::vector<size_t> &inputs,
                      const std::vector<ElementKind> &kinds,
                      std::vector<Operand> &operands,
                      std::vector<std::optional<uint32_t>> &constants) {
  const KernelRequest &r = l.request();
  const DramForm &out = r.outputs[0].form;
  operands.assign(inputs.size(), Operand{});
  constants.assign(inputs.size(), std::nullopt);
  bool first = true;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const KernelTensor &tensor = r.inputs[inputs[k]];
    if (!broadcastsTo(tensor.form.shape, out.shape))
      return l.fail("input " + std::to_string(inputs[k]) + " " +
                    shapeText(tensor.form.shape) + " does not broadcast to " +
                    shapeText(out.shape));
    constants[k] = scalarBits(tensor, kinds[k]);
    if (constants[k])
      continue;
    operands[k].image = first ? l.placeInput(inputs[k], {LM0, LM1, GRF0, GRF1})
                              : l.placeInput(inputs[k], {GRF0, GRF1, LM1, LM0});
    if (!operands[k].image)
      return false;
    first = false;
  }
  return l.placeOutput(0, {LM1, LM0}) != nullptr;
}

/// Loads the inputs and gives the constant operands their words. Call
/// right before the operations that read them (the pool may recycle an
/// entry after 32 others).
void bindConstants(Lowering &l, std::vector<Operand> &operands,
                   const std::vector<std::optional<uint32_t>> &constants) {
  for (size_t k = 0; k < operands.size(); ++k)
    if (constants[k])
      operands[k].fixed = l.program().constantBits(*constants[k]);
}

/// The kinds of the listed inputs, all `want` (or all alike when unset).
bool inputKinds(Lowering &l, const std::vector<size_t> &inputs,
                std::optional<ElementKind> want,
                std::vector<ElementKind> &kinds) {
  kinds.clear();
  for (size_t i : inputs) {
    std::optional<ElementKind> kind =
        kindOf(l, l.request().inputs[i], "input " + std::to_string(i));
    if (!kind)
      return false;
    if (!want)
      want = kind;
    if (*kind != *want)
      return l.fail(
          "input " + std::to_string(i) + " is " +
          std::string(deviceTypeName(l.request().inputs[i].form.type)) +
          " beside " + (*want == ElementKind::Int ? "int32" : "floating") +
          " operands");
    kinds.push_back(*kind);
  }
  return true;
}

bool outputKind(Lowering &l, ElementKind want) {
  std::optional<ElementKind> kind =
      kindOf(l, l.request().outputs[0], "the output");
  if (!kind)
    return false;
  if (*kind != want)
    return l.fail(
        std::string("the output of ") + l.request().opType + " must be " +
        (want == ElementKind::Int ? "int32" : "floating") + ", not " +
        std::string(deviceTypeName(l.request().outputs[0].form.type)));
  return true;
}

} // namespace

bool more::placeFloatUnary(Lowering &l, const PeImage *&x, const PeImage *&y,
                           Ring &ring) {
  x = y = nullptr;
  if (!checkInputs(l, 1, 1) || !checkOutputs(l, 1))
    return false;
  const KernelRequest &r = l.request();
  std::vector<ElementKind> kinds;
  if (!inputKinds(l, {0}, ElementKind::Float, kinds) ||
      !outputKind(l, ElementKind::Float))
    return false;
  if (r.inputs[0].form.shape != r.outputs[0].form.shape)
    return l.fail("the output of " + r.opType + " is shaped as its input");
  x = l.placeInput(0, {LM0, LM1});
  y = x ? l.placeOutput(0, {LM1, LM0}) : nullptr;
  return y && ring.allocate(l, {GRF1, GRF0, LM0, LM1});
}

namespace {

//===----------------------------------------------------------------------===//
// Comparisons and logic
//===----------------------------------------------------------------------===//

/// Equal, Greater, Less, GreaterOrEqual, LessOrEqual: bools (int32 0 / 1)
/// from two operands of one kind. x > y where max(x, y) is not y's bits
/// (the ALU's max compares floats as sign-magnitude integers, exactly);
/// floats are normalised first so that -0 and +0 are one value.
bool lowerCompare(Lowering &l) {
  if (!checkInputs(l, 2, 2) || !checkOutputs(l, 1))
    return false;
  const std::string &op = l.request().opType;
  std::vector<ElementKind> kinds;
  if (!inputKinds(l, {0, 1}, std::nullopt, kinds) ||
      !outputKind(l, ElementKind::Int))
    return false;
  std::vector<Operand> operands;
  std::vector<std::optional<uint32_t>> constants;
  if (!placeElementwise(l, {0, 1}, kinds, operands, constants))
    return false;
  Ring ring;
  if (!ring.allocate(l, {GRF1, GRF0, LM0, LM1}))
    return false;
  l.loadInputs();
  bool floating = kinds[0] == ElementKind::Float;
  bool swap = op == "Less" || op == "GreaterOrEqual";
  const PeImage &y = l.output(0);
  ElemProgram &p = l.program();
  forEachIndex(y.form.shape, [&](const std::vector<int64_t> &index) {
    bindConstants(l, operands, constants);
    Slot a = operands[swap ? 1 : 0].at(index);
    Slot b = operands[swap ? 0 : 1].at(index);
    Slot dst{y.memory, y.wordOf(index)};
    if (floating) {
      Slot na = ring.take(), nb = ring.take();
      normalise(p, na, a);
      normalise(p, nb, b);
      a = na;
      b = nb;
    }
    if (op == "Equal") {
      Slot d = ring.take();
      p.integer(ElemOpcode::IXor, d, a, b);
      p.integer(ElemOpcode::ILNot, dst, d, d);
      return;
    }
    // a > b (Greater, Less swapped) or a <= b (LessOrEqual, GreaterOrEqual
    // swapped): whether max(a, b) differs from b.
    Slot m = ring.take();
    if (floating)
      p.max(m, a, b);
    else
      p.integer(ElemOpcode::IMax, m, a, b);
    p.integer(ElemOpcode::IXor, m, m, b);
    bool greater = op == "Greater" || op == "Less";
    if (greater) {
      Slot z = ring.take();
      p.integer(ElemOpcode::ILNot, z, m, m);
      p.integer(ElemOpcode::ILNot, dst, z, z);
    } else {
      p.integer(ElemOpcode::ILNot, dst, m, m);
    }
  });
  return true;
}

/// And, Or, Xor on bools (0 / 1): min, max and xor; Not: lnot.
bool lowerLogic(Lowering &l) {
  const std::string &op = l.request().opType;
  size_t count = op == "Not" ? 1 : 2;
  if (!checkInputs(l, count, count) || !checkOutputs(l, 1))
    return false;
  std::vector<size_t> inputs =
      count == 1 ? std::vector<size_t>{0} : std::vector<size_t>{0, 1};
  std::vector<ElementKind> kinds;
  if (!inputKinds(l, inputs, ElementKind::Int, kinds) ||
      !outputKind(l, ElementKind::Int))
    return false;
  std::vector<Operand> operands;
  std::vector<std::optional<uint32_t>> constants;
  if (!placeElementwise(l, inputs, kinds, operands, constants))
    return false;
  l.loadInputs();
  const PeImage &y = l.output(0);
  ElemProgram &p = l.program();
  ElemOpcode opcode = op == "And"   ? ElemOpcode::IMin
                      : op == "Or"  ? ElemOpcode::IMax
                      : op == "Xor" ? ElemOpcode::IXor
                                    : ElemOpcode::ILNot;
  forEachIndex(y.form.shape, [&](const std::vector<int64_t> &index) {
    bindConstants(l, operands, constants);
    Slot a = operands[0].at(index);
    Slot b = count == 2 ? operands[1].at(index) : a;
    p.integer(opcode, {y.memory, y.wordOf(index)}, a, b);
  });
  return true;
}

/// BitShift on unsigned integers (held in int32): ilsl, or uilsr (zeros
/// shifted in); a shift of 32 or more gives 0, as ONNX's wider types do
/// for the values an int32 holds.
bool lowerBitShift(Lowering &l) {
  if (!checkInputs(l, 2, 2) || !checkOutputs(l, 1))
    return false;
  const KernelRequest &r = l.request();
  std::string direction = r.getString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return l.fail("BitShift's direction is LEFT or RIGHT, not '" + direction +
                  "'");
  std::vector<ElementKind> kinds;
  if (!inputKinds(l, {0, 1}, ElementKind::Int, kinds) ||
      !outputKind(l, ElementKind::Int))
    return false;
  std::vector<Operand> operands;
  std::vector<std::optional<uint32_t>> constants;
  if (!placeElementwise(l, {0, 1}, kinds, operands, constants))
    return false;
  l.loadInputs();
  const PeImage &y = l.output(0);
  ElemOpcode opcode =
      direction == "LEFT" ? ElemOpcode::ILsl : ElemOpcode::ILsrU;
  forEachIndex(y.form.shape, [&](const std::vector<int64_t> &index) {
    bindConstants(l, operands, constants);
    l.program().integer(opcode, {y.memory, y.wordOf(index)},
                        operands[0].at(index), operands[1].at(index));
  });
  return true;
}

//===----------------------------------------------------------------------===//
// Where and the variadic operators
//===----------------------------------------------------------------------===//

bool lowerWhere(Lowering &l) {
  if (!checkInputs(l, 3, 3) || !checkOutputs(l, 1))
    return false;
  std::vector<ElementKind> conditionKind, kinds;
  if (!inputKinds(l, {0}, ElementKind::Int, conditionKind))
    return false;
  std::optional<ElementKind> out =
      kindOf(l, l.request().outputs[0], "the output");
  if (!out || !inputKinds(l, {1, 2}, *out, kinds))
    return false;
  std::vector<Operand> operands;
  std::vector<std::optional<uint32_t>> constants;
  if (!placeElementwise(l, {0, 1, 2}, {ElementKind::Int, *out, *out}, operands,
                        constants))
    return false;
  Ring ring;
  if (!ring.allocate(l, {GRF1, GRF0, LM0, LM1}))
    return false;
  l.loadInputs();
  const PeImage &y = l.output(0);
  forEachIndex(y.form.shape, [&](const std::vector<int64_t> &index) {
    bindConstants(l, operands, constants);
    Slot s = conditionSign(l, ring, operands[0].at(index));
    selectBySign(l, ring, {y.memory, y.wordOf(index)}, s, operands[1].at(index),
                 operands[2].at(index));
  });
  return true;
}

/// Max, Min, Sum, Mean over one or more inputs, broadcasting.
bool lowerVariadic(Lowering &l) {
  const KernelRequest &r = l.request();
  if (r.inputs.empty() || !checkInputs(l, r.inputs.size(), r.inputs.size()) ||
      !checkOutputs(l, 1))
    return false;
  std::optional<ElementKind> out = kindOf(l, r.outputs[0], "the output");
  std::vector<size_t> inputs;
  for (size_t i = 0; i < r.inputs.size(); ++i)
    inputs.push_back(i);
  std::vector<ElementKind> kinds;
  if (!out || !inputKinds(l, inputs, *out, kinds))
    return false;
  bool integer = *out == ElementKind::Int;
  if (integer && r.opType == "Mean")
    return l.fail("Mean of int32 tensors is not an ONNX operation");
  std::vector<Operand> operands;
  std::vector<std::optional<uint32_t>> constants;
  if (!placeElementwise(l, inputs, kinds, operands, constants))
    return false;
  l.loadInputs();
  const PeImage &y = l.output(0);
  ElemProgram &p = l.program();
  const std::string &op = r.opType;
  auto combine = [&](Slot d, Slot a, Slot b) {
    if (op == "Max") {
      if (integer)
        p.integer(ElemOpcode::IMax, d, a, b);
      else
        p.max(d, a, b);
    } else if (op == "Min") {
      if (integer)
        p.integer(ElemOpcode::IMin, d, a, b);
      else
        p.min(d, a, b);
    } else if (integer) {
      p.integer(ElemOpcode::IAdd, d, a, b);
    } else {
      p.add(d, a, b);
    }
  };
  forEachIndex(y.form.shape, [&](const std::vector<int64_t> &index) {
    bindConstants(l, operands, constants);
    Slot dst{y.memory, y.wordOf(index)};
    if (operands.size() == 1)
      p.copy(dst, operands[0].at(index));
    else
      combine(dst, operands[0].at(index), operands[1].at(index));
    for (size_t k = 2; k < operands.size(); ++k)
      combine(dst, dst, operands[k].at(index));
    if (op == "Mean" && operands.size() > 1)
      p.mul(dst, dst, p.constant(1.0 / double(operands.size())));
  });
  return true;
}

//===----------------------------------------------------------------------===//
// PRelu and the piecewise activations
//===----------------------------------------------------------------------===//

/// PRelu: x where x >= 0, else slope x (slope broadcasts to x).
bool lowerPRelu(Lowering &l) {
  if (!checkInputs(l, 2, 2) || !checkOutputs(l, 1))
    return false;
  std::vector<ElementKind> kinds;
  if (!inputKinds(l, {0, 1}, ElementKind::Float, kinds) ||
      !outputKind(l, ElementKind::Float))
    return false;
  if (l.request().inputs[0].form.shape != l.request().outputs[0].form.shape)
    return l.fail("PRelu's output is shaped as X");
  std::vector<Operand> operands;
  std::vector<std::optional<uint32_t>> constants;
  if (!placeElementwise(l, {0, 1}, kinds, operands, constants))
    return false;
  Ring ring;
  if (!ring.allocate(l, {GRF1, GRF0, LM0, LM1}))
    return false;
  l.loadInputs();
  const PeImage &y = l.output(0);
  ElemProgram &p = l.program();
  forEachIndex(y.form.shape, [&](const std::vector<int64_t> &index) {
    bindConstants(l, operands, constants);
    Slot x = operands[0].at(index);
    Slot scaled = ring.take();
    p.mul(scaled, x, operands[1].at(index));
    selectBySign(l, ring, {y.memory, y.wordOf(index)}, x, x, scaled);
  });
  return true;
}

/// The unary activations of one float input: HardSigmoid, HardSwish,
/// ThresholdedRelu, Shrink, Sign (ALU and MAU only), Elu, Selu, Softplus
/// (MathLib's exp, and log for Softplus, over the output's image).
bool lowerActivation(Lowering &l) {
  const KernelRequest &r = l.request();
  const std::string &op = r.opType;
  const PeImage *x, *y;
  Ring ring;
  if (!placeFloatUnary(l, x, y, ring))
    return false;
  bool exponential = op == "Elu" || op == "Selu" || op == "Softplus";
  if (exponential &&
      !l.reserveMath({MathFunction::Exp, op == "Softplus" ? MathFunction::Log
                                                          : MathFunction::Exp}))
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  auto each = [&](const std::function<void(Slot, Slot)> &fn) {
    forEachIndex(y->form.shape, [&](const std::vector<int64_t> &index) {
      fn({y->memory, y->wordOf(index)}, {x->memory, x->wordOf(index)});
    });
  };
  Slot image{y->memory, y->word};
  if (exponential) {
    // exp(x) into the output's words, then the piece for x < 0 (Elu,
    // Selu) or log(1 + e) (Softplus).
    each([&](Slot d, Slot s) { p.copy(d, s); });
    if (!l.math(MathFunction::Exp, {image}, image, y->words()))
      return false;
  }
  if (op == "HardSigmoid" || op == "HardSwish") {
    double alpha =
        op == "HardSwish" ? 1.0 / 6 : double(r.getFloat("alpha", 0.2f));
    double beta = op == "HardSwish" ? 0.5 : double(r.getFloat("beta", 0.5f));
    each([&](Slot d, Slot s) {
      Slot t = op == "HardSwish" ? ring.take() : d;
      p.fma(t, s, p.constant(alpha), p.constant(beta));
      p.min(t, t, p.constant(1.0));
      p.max(t, t, p.constantBits(0));
      if (op == "HardSwish")
        p.mul(d, s, t);
    });
  } else if (op == "ThresholdedRelu") {
    double alpha = r.getFloat("alpha", 1.0f);
    each([&](Slot d, Slot s) {
      // alpha - x is negative exactly where x > alpha.
      Slot t = ring.take();
      p.add(t, p.constant(alpha), s, true);
      selectBySign(l, ring, d, t, p.constantBits(0), s);
    });
  } else if (op == "Shrink") {
    double bias = r.getFloat("bias", 0.0f), lambd = r.getFloat("lambd", 0.5f);
    each([&](Slot d, Slot s) {
      Slot below = ring.take(), above = ring.take(), high = ring.take(),
           low = ring.take(), inner = ring.take();
      p.add(below, s, p.constant(lambd));       // < 0 where x < -lambd
      p.add(above, p.constant(lambd), s, true); // < 0 where x > lambd
      p.add(high, s, p.constant(bias), true);   // x - bias
      p.add(low, s, p.constant(bias));          // x + bias
      selectBySign(l, ring, inner, above, p.constantBits(0), high);
      selectBySign(l, ring, d, below, inner, low);
    });
  } else if (op == "Sign") {
    each([&](Slot d, Slot s) {
      // +1 or -1 by the sign bit, then 0 where every other bit is 0.
      Slot unit = ring.take(), magnitude = ring.take(), zero = ring.take();
      selectBySign(l, ring, unit, s, p.constant(1.0), p.constant(-1.0));
      p.integer(ElemOpcode::IAnd, magnitude, s, p.constantBits(~kSignBit));
      p.integer(ElemOpcode::ILNot, zero, magnitude, magnitude);
      selectBySign(l, ring, d, conditionSign(l, ring, zero), p.constantBits(0),
                   unit);
    });
  } else if (op == "Elu" || op == "Selu") {
    double alpha = r.getFloat("alpha", op == "Elu" ? 1.0f : 1.67326319f);
    double gamma = op == "Elu" ? 1.0 : double(r.getFloat("gamma", 1.05070102f));
    each([&](Slot d, Slot s) {
      // gamma alpha (e - 1) for x < 0 (x <= 0: both pieces are 0 at 0),
      // gamma x above.
      Slot negative = ring.take();
      p.fma(negative, d, p.constant(alpha * gamma), p.constant(-alpha * gamma));
      Slot positive = s;
      if (gamma != 1.0) {
        positive = ring.take();
        p.mul(positive, s, p.constant(gamma));
      }
      selectBySign(l, ring, d, s, positive, negative);
    });
  } else if (op == "Softplus") {
    each([&](Slot d, Slot) { p.add(d, d, p.constant(1.0)); });
    if (!l.math(MathFunction::Log, {image}, image, y->words()))
      return false;
  } else {
    return l.fail(op + " is not an activation of this table");
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Reductions: ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare,
// ReduceLogSum, ReduceLogSumExp
//===----------------------------------------------------------------------===//

bool lowerReduce(Lowering &l) {
  if (!checkInputs(l, 1, 2) || !checkOutputs(l, 1))
    return false;
  const KernelRequest &r = l.request();
  const std::string &op = r.opType;
  // Every operation below has a double form (G13).
  std::optional<ElementKind> kind = kindOf(l, r.inputs[0], "input 0", true);
  std::optional<ElementKind> out =
      kind ? kindOf(l, r.outputs[0], "the output", true) : std::nullopt;
  if (!out)
    return false;
  if (*out != *kind)
    return l.fail(op + " gives its input's element type");
  bool integer = *kind == ElementKind::Int;
  if (integer && op != "ReduceMin")
    return l.fail(op + " of int32 tensors is not supported (no integer "
                       "product on the device)");
  std::vector<bool> reduced;
  if (!resolveAxes(l, size_t(1), reduced))
    return false;
  const DramForm &in = r.inputs[0].form;
  int64_t rank = int64_t(in.shape.size());
  bool logSumExp = op == "ReduceLogSumExp";
  const PeImage *x = l.placeInput(0, {LM0, LM1});
  const PeImage *y = x ? l.placeOutput(0, {LM1, LM0}) : nullptr;
  if (!y)
    return false;
  // The sources of each output word, in input order.
  std::map<int32_t, std::vector<Slot>> sources;
  std::vector<int32_t> order;
  forEachIndex(y->form.shape, [&](const std::vector<int64_t> &index) {
    int32_t word = y->wordOf(index);
    if (!sources.count(word))
      order.push_back(word);
    sources[word];
  });
  forEachIndex(in.shape, [&](const std::vector<int64_t> &index) {
    std::vector<int64_t> to;
    for (int64_t d = 0; d < rank; ++d)
      if (!reduced[size_t(d)])
        to.push_back(index[size_t(d)]);
      else if (r.getInt("keepdims", 1) != 0)
        to.push_back(0);
    sources[y->wordOf(to)].push_back({x->memory, x->wordOf(index)});
  });
  // ReduceLogSumExp: x - max into a dense LM array (exp runs over LM
  // blocks), the maxima in a GRF.
  std::optional<Slot> shifted, maxima;
  int64_t inputs = elementCount(in.shape);
  int32_t shiftedWords = int32_t((inputs * l.elementWords() + 7) / 8 * 8);
  if (logSumExp) {
    for (int32_t word : order)
      if (sources[word].empty())
        return l.fail("ReduceLogSumExp over an empty set is not supported");
    shifted =
        l.allocate({x->memory == LM0 ? LM1 : LM0, LM0, LM1}, shiftedWords);
    maxima = l.allocate(
        {GRF0, GRF1, LM0, LM1},
        int32_t((int64_t(order.size()) * l.elementWords() + 7) / 8 * 8));
    if (!shifted || !maxima)
      return false;
  }
  Ring ring;
  if (op == "ReduceL1" && !ring.allocate(l, {GRF1, GRF0, LM0, LM1}))
    return false;
  if (op == "ReduceL2" && !l.reserveMath({MathFunction::Sqrt}))
    return false;
  if ((op == "ReduceLogSum" || logSumExp) &&
      !l.reserveMath({MathFunction::Log, MathFunction::Exp}))
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  // The value of an empty reduction: ONNX's identity of each.
  auto identity = [&]() -> Slot {
    if (op == "ReduceMin")
      return integer ? p.constantBits(0x7fffffffu)
                     : p.constant(std::numeric_limits<double>::infinity());
    if (op == "ReduceProd")
      return p.constant(1.0);
    return p.constantBits(0); // the sums; log 0 = -inf follows
  };
  for (int32_t word : order) {
    const std::vector<Slot> &list = sources[word];
    Slot dst{y->memory, word};
    if (list.empty()) {
      p.copy(dst, identity());
      continue;
    }
    if (op == "ReduceMin") {
      l.fold(dst, list, Lowering::Fold::Min);
    } else if (op == "ReduceProd") {
      p.copy(dst, list[0]);
      for (size_t k = 1; k < list.size(); ++k)
        p.mul(dst, dst, list[k]);
    } else if (op == "ReduceSumSquare" || op == "ReduceL2") {
      p.mul(dst, list[0], list[0]);
      for (size_t k = 1; k < list.size(); ++k)
        p.fma(dst, list[k], list[k], dst);
    } else if (op == "ReduceL1") {
      for (size_t k = 0; k < list.size(); ++k) {
        // |x| = max(x, -x) (the product by -1 is exact).
        Slot negated = ring.take(), magnitude = ring.take();
        p.mul(negated, list[k], p.constant(-1.0));
        p.max(magnitude, list[k], negated);
        if (k == 0)
          p.copy(dst, magnitude);
        else
          p.add(dst, dst, magnitude);
      }
    } else if (op == "ReduceLogSum") {
      l.fold(dst, list, Lowering::Fold::Sum);
    }
  }
  Slot image{y->memory, y->word};
  if (logSumExp) {
    // log(sum(exp(x - m))) + m, m the maximum: no overflow for large x.
    int32_t next = 0;
    std::vector<std::pair<int32_t, int32_t>> ranges;
    for (size_t k = 0; k < order.size(); ++k) {
      const std::vector<Slot> &list = sources[order[k]];
      Slot m = l.element(*maxima, int64_t(k));
      l.fold(m, list, Lowering::Fold::Max);
      ranges.push_back({next, int32_t(list.size())});
      for (const Slot &s : list)
        p.add(l.element(*shifted, next++), s, m, true);
    }
    if (!l.math(MathFunction::Exp, {*shifted}, *shifted, shiftedWords))
      return false;
    for (size_t k = 0; k < order.size(); ++k) {
      std::vector<Slot> terms;
      for (int32_t i = 0; i < ranges[k].second; ++i)
        terms.push_back(l.element(*shifted, ranges[k].first + i));
      l.fold({y->memory, order[k]}, terms, Lowering::Fold::Sum);
    }
    if (!l.math(MathFunction::Log, {image}, image, y->words()))
      return false;
    for (size_t k = 0; k < order.size(); ++k)
      p.add({y->memory, order[k]}, {y->memory, order[k]},
            l.element(*maxima, int64_t(k)));
  } else if (op == "ReduceL2") {
    if (!l.math(MathFunction::Sqrt, {image}, image, y->words()))
      return false;
  } else if (op == "ReduceLogSum") {
    if (!l.math(MathFunction::Log, {image}, image, y->words()))
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Round, Floor, Ceil, Pow
//===----------------------------------------------------------------------===//

/// Round (to nearest, ties to even), Floor, Ceil: x + 2^23 (with x's
/// sign) - 2^23 rounds x to an integer on the MAU (the sum's last place is
/// 1); |x| >= 2^23 is an integer already. Floor and Ceil step the rounded
/// value by one where it lies on the wrong side of x.
bool lowerRound(Lowering &l) {
  const std::string &op = l.request().opType;
  const PeImage *x, *y;
  Ring ring;
  if (!placeFloatUnary(l, x, y, ring))
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  constexpr uint32_t kTwo23 = 0x4b000000u; // 2^23
  forEachIndex(y->form.shape, [&](const std::vector<int64_t> &index) {
    Slot s{x->memory, x->wordOf(index)}, dst{y->memory, y->wordOf(index)};
    Slot magic = ring.take(), rounded = ring.take(), magnitude = ring.take(),
         large = ring.take();
    p.integer(ElemOpcode::IAnd, magic, s, p.constantBits(kSignBit));
    p.integer(ElemOpcode::IOr, magic, magic, p.constantBits(kTwo23));
    p.add(rounded, s, magic);
    p.add(rounded, rounded, magic, true);
    p.integer(ElemOpcode::IAnd, magnitude, s, p.constantBits(~kSignBit));
    p.add(large, magnitude, p.constantBits(kTwo23), true);
    Slot integral = op == "Round" ? dst : ring.take();
    selectBySign(l, ring, integral, large, s, rounded);
    if (op == "Round")
      return;
    // Floor: one less where x < the integer; Ceil: one more where x is
    // above it.
    Slot side = ring.take(), stepped = ring.take();
    bool floor = op == "Floor";
    if (floor)
      p.add(side, s, integral, true);
    else
      p.add(side, integral, s, true);
    p.add(stepped, integral, p.constant(1.0), floor);
    selectBySign(l, ring, dst, side, integral, stepped);
  });
  return true;
}

/// Pow: exp(y log |x|) (MathLib over the output's image), negated where
/// x < 0 and y is an odd integer; 1 where y is 0. An integer exponent is
/// converted to single exactly (|y| < 2^22). Negative x with a fractional
/// y has no real result (ONNX: NaN, which the device does not have).
bool lowerPow(Lowering &l) {
  if (!checkInputs(l, 2, 2) || !checkOutputs(l, 1))
    return false;
  // An int32 base gives int32 results: the power rounded to the nearest
  // integer (exact while it stays below 2^22, as G9).
  std::vector<ElementKind> base, exponent;
  if (!inputKinds(l, {0}, std::nullopt, base) ||
      !inputKinds(l, {1}, std::nullopt, exponent) || !outputKind(l, base[0]))
    return false;
  bool integerBase = base[0] == ElementKind::Int;
  std::vector<Operand> operands;
  std::vector<std::optional<uint32_t>> constants;
  if (!placeElementwise(l, {0, 1}, {base[0], exponent[0]}, operands, constants))
    return false;
  Ring ring;
  if (!ring.allocate(l, {GRF1, GRF0, LM0, LM1}) ||
      !l.reserveMath({MathFunction::Log, MathFunction::Exp}))
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  const PeImage &y = l.output(0);
  bool integerExponent = exponent[0] == ElementKind::Int;
  constexpr uint32_t kMagic = 0x4b400000u; // 1.5 x 2^23
  // The exponent as a single (G9's conversion for integers).
  auto exponentAt = [&](const std::vector<int64_t> &index) {
    Slot e = operands[1].at(index);
    if (!integerExponent)
      return e;
    Slot f = ring.take();
    p.integer(ElemOpcode::IAdd, f, e, p.constantBits(kMagic));
    p.add(f, f, p.constantBits(kMagic), true);
    return f;
  };
  forEachIndex(y.form.shape, [&](const std::vector<int64_t> &index) {
    bindConstants(l, operands, constants);
    Slot x = operands[0].at(index), dst{y.memory, y.wordOf(index)};
    if (integerBase) {
      p.integer(ElemOpcode::IAdd, dst, x, p.constantBits(kMagic));
      p.add(dst, dst, p.constantBits(kMagic), true);
      x = dst;
    }
    p.integer(ElemOpcode::IAnd, dst, x, p.constantBits(~kSignBit));
  });
  Slot image{y.memory, y.word};
  if (!l.math(MathFunction::Log, {image}, image, y.words()))
    return false;
  forEachIndex(y.form.shape, [&](const std::vector<int64_t> &index) {
    bindConstants(l, operands, constants);
    Slot dst{y.memory, y.wordOf(index)};
    p.mul(dst, dst, exponentAt(index));
  });
  if (!l.math(MathFunction::Exp, {image}, image, y.words()))
    return false;
  forEachIndex(y.form.shape, [&](const std::vector<int64_t> &index) {
    bindConstants(l, operands, constants);
    Slot dst{y.memory, y.wordOf(index)};
    Slot e = exponentAt(index);
    // The parity of an integral exponent: the last bit of |e| + 2^23.
    Slot parity = ring.take();
    p.integer(ElemOpcode::IAnd, parity, e, p.constantBits(~kSignBit));
    p.add(parity, parity, p.constantBits(0x4b000000u));
    p.integer(ElemOpcode::IAnd, parity, parity, p.constantBits(1));
    p.integer(ElemOpcode::ILsl, parity, parity, p.constantBits(31));
    p.integer(ElemOpcode::IAnd, parity, parity, operands[0].at(index));
    p.integer(ElemOpcode::IXor, dst, dst, parity);
    // x^0 = 1, whatever x.
    Slot zero = ring.take();
    p.integer(ElemOpcode::IAnd, zero, e, p.constantBits(~kSignBit));
    p.integer(ElemOpcode::ILNot, zero, zero, zero);
    selectBySign(l, ring, dst, conditionSign(l, ring, zero), p.constant(1.0),
                 dst);
    if (integerBase) {
      // The nearest integer: the bits of v + 1.5 x 2^23 less the magic's.
      p.add(dst, dst, p.constantBits(kMagic));
      p.integer(ElemOpcode::ISub, dst, dst, p.constantBits(kMagic));
    }
  });
  return true;
}

/// Mod: r = x - n y with n = round(x / y) (MathLib's reciprocal, then
/// x + 2^23 - 2^23 as in Round), then n stepped by one where r has the
/// wrong sign (the divisor's for fmod = 0, the dividend's for fmod = 1)
/// and r recomputed by one fma, so that r is exact. int32 operands go
/// through single precision (G9: exact below 2^22).
bool lowerMod(Lowering &l) {
  if (!checkInputs(l, 2, 2) || !checkOutputs(l, 1))
    return false;
  const KernelRequest &r = l.request();
  std::vector<ElementKind> kinds;
  if (!inputKinds(l, {0, 1}, std::nullopt, kinds) || !outputKind(l, kinds[0]))
    return false;
  bool integer = kinds[0] == ElementKind::Int;
  bool fmod = r.getInt("fmod", 0) != 0;
  if (!integer && !fmod)
    return l.fail("Mod of floating tensors needs fmod = 1");
  std::vector<Operand> operands;
  std::vector<std::optional<uint32_t>> constants;
  if (!placeElementwise(l, {0, 1}, kinds, operands, constants))
    return false;
  const PeImage &y = l.output(0);
  int64_t count = elementCount(y.form.shape);
  std::optional<Slot> inverse =
      l.allocate({LM0, LM1}, int32_t((count + 7) / 8 * 8));
  Ring ring;
  if (!inverse || !ring.allocate(l, {GRF1, GRF0, LM0, LM1}, 128) ||
      !l.reserveMath({MathFunction::Reciprocal}))
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  constexpr uint32_t kMagic = 0x4b400000u; // 1.5 x 2^23
  constexpr uint32_t kTwo23 = 0x4b000000u; // 2^23
  auto asSingle = [&](Slot v) {
    if (!integer)
      return v;
    Slot f = ring.take();
    p.integer(ElemOpcode::IAdd, f, v, p.constantBits(kMagic));
    p.add(f, f, p.constantBits(kMagic), true);
    return f;
  };
  int64_t position = 0;
  forEachIndex(y.form.shape, [&](const std::vector<int64_t> &index) {
    bindConstants(l, operands, constants);
    p.copy(inverse->offset(int32_t(position++)),
           asSingle(operands[1].at(index)));
  });
  if (!l.math(MathFunction::Reciprocal, {*inverse}, *inverse,
              int32_t((count + 7) / 8 * 8)))
    return false;
  position = 0;
  forEachIndex(y.form.shape, [&](const std::vector<int64_t> &index) {
    bindConstants(l, operands, constants);
    Slot x = asSingle(operands[0].at(index));
    Slot d = asSingle(operands[1].at(index));
    Slot dst{y.memory, y.wordOf(index)};
    // n = round(x / d).
    Slot q = ring.take(), magic = ring.take(), n = ring.take(),
         large = ring.take(), nearest = ring.take();
    p.mul(q, x, inverse->offset(int32_t(position++)));
    p.integer(ElemOpcode::IAnd, magic, q, p.constantBits(kSignBit));
    p.integer(ElemOpcode::IOr, magic, magic, p.constantBits(kTwo23));
    p.add(nearest, q, magic);
    p.add(nearest, nearest, magic, true);
    p.integer(ElemOpcode::IAnd, large, q, p.constantBits(~kSignBit));
    p.add(large, large, p.constantBits(kTwo23), true);
    selectBySign(l, ring, n, large, q, nearest);
    // r0 = x - n d; where r0 is not 0 and its sign is not the one wanted,
    // n - k (k = 1 for the divisor's sign, sign(x) sign(d) for fmod).
    Slot r0 = ring.take(), wrong = ring.take(), k = ring.take(),
         stepped = ring.take(), zero = ring.take();
    p.fma(r0, n, d, x, 1);
    p.integer(ElemOpcode::IXor, wrong, r0, fmod ? x : d);
    if (fmod) {
      p.integer(ElemOpcode::IXor, k, x, d);
      p.integer(ElemOpcode::IAnd, k, k, p.constantBits(kSignBit));
      p.integer(ElemOpcode::IOr, k, k, p.constantBits(0x3f800000u));
    } else {
      p.copy(k, p.constant(1.0));
    }
    p.add(stepped, n, k, true);
    selectBySign(l, ring, stepped, wrong, n, stepped);
    p.integer(ElemOpcode::IAnd, zero, r0, p.constantBits(~kSignBit));
    p.integer(ElemOpcode::ILNot, zero, zero, zero);
    selectBySign(l, ring, stepped, conditionSign(l, ring, zero), n, stepped);
    p.fma(dst, stepped, d, x, 1);
    if (integer)
      p.toInteger(dst, dst);
  });
  return true;
}

//===----------------------------------------------------------------------===//
// LayerNormalization
//===----------------------------------------------------------------------===//

/// Per row (the dimensions from `axis` on): the mean, the deviations into
/// Y, the (population) variance, 1 / sqrt(var + epsilon) from frsqrt and
/// four Newton steps (G8), then y = d inv scale + B; Mean and InvStdDev as
/// optional outputs.
bool lowerLayerNorm(Lowering &l) {
  const KernelRequest &r = l.request();
  if (!checkInputs(l, 2, 3))
    return false;
  size_t outputs = 0;
  for (size_t o = 0; o < r.outputs.size(); ++o)
    if (!r.outputs[o].omitted)
      outputs = o + 1;
  if (outputs == 0 || r.outputs[0].omitted)
    return l.fail("LayerNormalization's Y is required");
  std::vector<size_t> inputs = {0, 1};
  if (r.hasInput(2))
    inputs.push_back(2);
  std::vector<ElementKind> kinds;
  if (!inputKinds(l, inputs, ElementKind::Float, kinds) ||
      !outputKind(l, ElementKind::Float))
    return false;
  const DramForm &in = r.inputs[0].form;
  int64_t rank = int64_t(in.shape.size());
  int64_t axis = r.getInt("axis", -1);
  if (rank == 0 || axis < -rank || axis >= rank)
    return l.fail("axis " + std::to_string(axis) + " is out of range");
  if (axis < 0)
    axis += rank;
  if (r.outputs[0].form.shape != in.shape)
    return l.fail("Y is shaped as X");
  std::vector<int64_t> inner(in.shape.begin() + axis, in.shape.end());
  std::vector<int64_t> statsShape(in.shape.begin(), in.shape.begin() + axis);
  statsShape.resize(size_t(rank), 1);
  for (size_t i = 1; i < inputs.size(); ++i)
    if (!broadcastsTo(r.inputs[inputs[i]].form.shape, inner))
      return l.fail("input " + std::to_string(inputs[i]) +
                    " does not broadcast to the normalized shape " +
                    shapeText(inner));
  for (size_t o = 1; o < outputs; ++o)
    if (!r.outputs[o].omitted &&
        (r.outputs[o].form.shape != statsShape ||
         !kindOf(l, r.outputs[o], "output " + std::to_string(o))))
      return l.fail("Mean and InvStdDev are shaped " + shapeText(statsShape));
  const PeImage *x = l.placeInput(0, {LM0, LM1});
  const PeImage *y = x ? l.placeOutput(0, {LM1, LM0}) : nullptr;
  if (!y)
    return false;
  const PeImage *params[3] = {nullptr, nullptr, nullptr};
  for (size_t i = 1; i < inputs.size(); ++i)
    if (!(params[i] = l.placeInput(inputs[i], {GRF0, GRF1, LM0, LM1})))
      return false;
  const PeImage *stats[3] = {nullptr, nullptr, nullptr};
  for (size_t o = 1; o < outputs; ++o)
    if (!r.outputs[o].omitted && !(stats[o] = l.placeOutput(o, {LM0, LM1})))
      return false;
  int64_t rows = elementCount(statsShape);
  int32_t rowWords = int32_t((rows + 7) / 8 * 8);
  std::optional<Slot> mean = l.allocate({GRF0, GRF1, LM0, LM1}, rowWords);
  std::optional<Slot> inv = l.allocate({GRF1, GRF0, LM0, LM1}, rowWords);
  std::optional<Slot> half = l.allocate({LM0, LM1, GRF0}, rowWords);
  std::optional<Slot> step = l.allocate({LM1, LM0, GRF1}, rowWords);
  if (!mean || !inv || !half || !step)
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  int64_t count = elementCount(inner);
  double inverseCount = count ? 1.0 / double(count) : 0.0;
  float epsilon = r.getFloat("epsilon", 1e-5f);
  std::vector<int64_t> outerShape(in.shape.begin(), in.shape.begin() + axis);
  int64_t row = 0;
  forEachIndex(outerShape, [&](const std::vector<int64_t> &outer) {
    std::vector<std::vector<int64_t>> members;
    forEachIndex(inner, [&](const std::vector<int64_t> &tail) {
      std::vector<int64_t> index = outer;
      index.insert(index.end(), tail.begin(), tail.end());
      members.push_back(index);
    });
    Slot m = mean->offset(int32_t(row)), g = inv->offset(int32_t(row)),
         v = half->offset(int32_t(row)), q = step->offset(int32_t(row));
    std::vector<Slot> sources;
    for (const auto &index : members)
      sources.push_back({x->memory, x->wordOf(index)});
    l.fold(m, sources, Lowering::Fold::Sum);
    p.mul(m, m, p.constant(inverseCount));
    for (size_t k = 0; k < members.size(); ++k) {
      Slot d{y->memory, y->wordOf(members[k])};
      p.add(d, sources[k], m, true);
      if (k == 0)
        p.mul(v, d, d);
      else
        p.fma(v, d, d, v);
    }
    // v = var + epsilon; g ~ 1 / sqrt(v) (G8).
    p.fma(v, v, p.constant(inverseCount), p.constant(epsilon));
    p.rsqrt(g, v);
    p.mul(v, v, p.constant(0.5));
    for (int iteration = 0; iteration < 4; ++iteration) {
      p.mul(q, g, g);
      p.mul(q, q, v);
      p.add(q, p.constant(1.5), q, true);
      p.mul(g, g, q);
    }
    for (const auto &index : members) {
      Slot d{y->memory, y->wordOf(index)};
      std::vector<int64_t> tail(index.begin() + axis, index.end());
      auto paramAt = [&](size_t i) {
        return Slot{params[i]->memory, params[i]->wordOf(broadcastIndex(
                                           tail, params[i]->form.shape))};
      };
      p.mul(d, d, g);
      if (params[2])
        p.fma(d, d, paramAt(1), paramAt(2));
      else
        p.mul(d, d, paramAt(1));
    }
    std::vector<int64_t> at = outer;
    at.resize(size_t(rank), 0);
    if (stats[1])
      p.copy({stats[1]->memory, stats[1]->wordOf(at)}, m);
    if (stats[2])
      p.copy({stats[2]->memory, stats[2]->wordOf(at)}, g);
    ++row;
  });
  return true;
}

struct MathOp {
  const char *opType;
  LoweringFn lower;
};

const MathOp kMathOps[] = {
    {"Equal", lowerCompare},
    {"Greater", lowerCompare},
    {"Less", lowerCompare},
    {"GreaterOrEqual", lowerCompare},
    {"LessOrEqual", lowerCompare},
    {"And", lowerLogic},
    {"Or", lowerLogic},
    {"Xor", lowerLogic},
    {"Not", lowerLogic},
    {"BitShift", lowerBitShift},
    {"Where", lowerWhere},
    {"Max", lowerVariadic},
    {"Min", lowerVariadic},
    {"Sum", lowerVariadic},
    {"Mean", lowerVariadic},
    {"PRelu", lowerPRelu},
    {"HardSigmoid", lowerActivation},
    {"HardSwish", lowerActivation},
    {"ThresholdedRelu", lowerActivation},
    {"Shrink", lowerActivation},
    {"Sign", lowerActivation},
    {"Elu", lowerActivation},
    {"Selu", lowerActivation},
    {"Softplus", lowerActivation},
    {"ReduceMin", lowerReduce},
    {"ReduceProd", lowerReduce},
    {"ReduceL1", lowerReduce},
    {"ReduceL2", lowerReduce},
    {"ReduceSumSquare", lowerReduce},
    {"ReduceLogSum", lowerReduce},
    {"ReduceLogSumExp", lowerReduce},
    {"Round", lowerRound},
    {"Floor", lowerRound},
    {"Ceil", lowerRound},
    {"Pow", lowerPow},
    {"Mod", lowerMod},
    {"LayerNormalization", lowerLayerNorm},
};

} // namespace

LoweringFn general::findMathLowering(const std::string &opType) {
  for (const MathOp &op : kMathOps)
    if (opType == op.opType)
      return op.lower;
  return nullptr;
}

LoweringFn general::findMoreLowering(const std::string &opType) {
  if (LoweringFn fn = findMathLowering(opType))
    return fn;
  if (LoweringFn fn = findTrigLowering(opType))
    return fn;
  return findIndexLowering(opType);
}
