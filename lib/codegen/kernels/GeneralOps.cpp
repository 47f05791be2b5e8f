//===- GeneralOps.cpp - Element-wise, data movement, reductions, pools ----===//
//
// The general kernel's operators other than the products (GeneralLinear):
// each places its images, loads them and records element operations. Where
// an input's image and the output's lie alike (same shape, order and
// groups) the work runs over whole long words, two elements a cycle;
// otherwise element by element through the index map.
//
//===----------------------------------------------------------------------===//

#include "GeneralLowering.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::general;

namespace {

constexpr auto LM0 = PeMemory::LM0;
constexpr auto LM1 = PeMemory::LM1;
constexpr auto GRF0 = PeMemory::GRF0;
constexpr auto GRF1 = PeMemory::GRF1;

bool sameLayout(const DramForm &a, const DramForm &b) {
  return a.type == b.type && a.shape == b.shape && a.order == b.order &&
         a.groups == b.groups;
}

/// Whether two forms put every element at the same long word and slot of
/// their images: the same row length, rows and groups, and the same
/// row-major element order.
bool sameImage(const DramForm &a, const DramForm &b) {
  auto identity = [](const DramForm &f) {
    for (size_t i = 0; i < f.order.size(); ++i)
      if (f.order[i] != i)
        return false;
    return true;
  };
  return a.type == b.type && identity(a) && identity(b) &&
         a.innerExtent() == b.innerExtent() && a.rows() == b.rows() &&
         a.groups == b.groups;
}

/// A floating-point scalar known at compile time.
std::optional<double> scalarConstant(const KernelTensor &tensor) {
  if (!tensor.constant || tensor.constant->numElements() != 1)
    return std::nullopt;
  if (!reference::isFloatingPoint(tensor.constant->dtype()))
    return std::nullopt;
  return tensor.constant->elementAsDouble(0);
}

/// A scalar of the node's element type: a 32-bit integer's bits for int32
/// tensors, else a floating-point value (a single or a double in the PE).
struct Scalar {
  uint32_t bits = 0;
  double value = 0;
};

std::optional<Scalar> scalarOf(const KernelTensor &tensor, bool integer) {
  if (!tensor.constant || tensor.constant->numElements() != 1)
    return std::nullopt;
  if (integer)
    return Scalar{uint32_t(int32_t(tensor.constant->elementAsInt64(0))), 0};
  if (std::optional<double> value = scalarConstant(tensor))
    return Scalar{0, *value};
  return std::nullopt;
}

/// The constant pool's entry of a scalar.
Slot scalarSlot(ElemProgram &p, const Scalar &scalar, bool integer) {
  return integer ? p.constantBits(scalar.bits) : p.constant(scalar.value);
}

//===----------------------------------------------------------------------===//
// Data movement: Identity, Reshape, Flatten, Transpose
//===----------------------------------------------------------------------===//

/// out[index] = in[source(index)], element by element, or nothing at all
/// when the two images are the same words.
bool lowerMove(
    Lowering &l,
    const std::function<std::vector<int64_t>(const std::vector<int64_t> &)>
        &source,
    bool rowMajorSame) {
  const KernelRequest &r = l.request();
  const DramForm &in = r.inputs[0].form, &out = r.outputs[0].form;
  if (elementCount(in.shape) != elementCount(out.shape))
    return l.fail("the output has " + std::to_string(elementCount(out.shape)) +
                  " elements, the input " +
                  std::to_string(elementCount(in.shape)));
  const PeImage *x = l.placeInput(0, {LM0, LM1});
  if (!x)
    return false;
  // The same words in DRAM: nothing to compute (a half tensor would go
  // out widened, so it is copied instead).
  if (rowMajorSame && sameImage(in, out) && in.type != DeviceType::Half) {
    l.loadInputs();
    l.aliasOutput(0, *x);
    return true;
  }
  const PeImage *y = l.placeOutput(0, {LM1, LM0});
  if (!y)
    return false;
  l.loadInputs();
  std::vector<std::pair<Slot, Slot>> moves;
  forEachIndex(out.shape, [&](const std::vector<int64_t> &index) {
    moves.push_back(
        {{y->memory, y->wordOf(index)}, {x->memory, x->wordOf(source(index))}});
  });
  l.copyWords(moves);
  return true;
}

bool lowerReshapeLike(Lowering &l) {
  if (!checkOutputs(l, 1) || !checkInputs(l, 1, 2))
    return false;
  const std::vector<int64_t> inShape = l.request().inputs[0].form.shape;
  const std::vector<int64_t> outShape = l.request().outputs[0].form.shape;
  auto source = [&](const std::vector<int64_t> &index) {
    int64_t position = 0;
    for (size_t d = 0; d < index.size(); ++d)
      position = position * outShape[d] + index[d];
    return unravel(position, inShape);
  };
  return lowerMove(l, source, true);
}

bool lowerTranspose(Lowering &l) {
  if (!checkOutputs(l, 1) || !checkInputs(l, 1, 1))
    return false;
  const DramForm &in = l.request().inputs[0].form;
  size_t rank = in.shape.size();
  std::vector<int64_t> perm = l.request().getInts("perm");
  if (perm.empty())
    for (size_t d = rank; d-- > 0;)
      perm.push_back(int64_t(d));
  std::vector<bool> seen(rank, false);
  if (perm.size() != rank)
    return l.fail("perm has " + std::to_string(perm.size()) +
                  " entries for rank " + std::to_string(rank));
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(rank) || seen[size_t(p)])
      return l.fail("perm is not a permutation");
    seen[size_t(p)] = true;
  }
  auto source = [&](const std::vector<int64_t> &index) {
    std::vector<int64_t> from(rank);
    for (size_t k = 0; k < rank; ++k)
      from[size_t(perm[k])] = index[k];
    return from;
  };
  bool identity = true;
  for (size_t k = 0; k < rank; ++k)
    identity &= perm[k] == int64_t(k);
  return lowerMove(l, source, identity);
}

//===----------------------------------------------------------------------===//
// Unary element-wise: Relu, LeakyRelu, Clip
//===----------------------------------------------------------------------===//

/// Places input 0 and output 0 of a unary operator.
bool placeUnary(Lowering &l) {
  const KernelRequest &r = l.request();
  const DramForm &in = r.inputs[0].form, &out = r.outputs[0].form;
  if (in.shape != out.shape)
    return l.fail("the output shape " + shapeText(out.shape) +
                  " differs from the input's " + shapeText(in.shape));
  const PeImage *x = l.placeInput(0, {LM0, LM1});
  const PeImage *y = x ? l.placeOutput(0, {LM1, LM0}) : nullptr;
  return y != nullptr;
}

/// Runs `op(dst, src, width)` over the elements of input 0 into output 0:
/// over whole long words when the images lie alike (the padding computes
/// too and is zeroed after), element by element otherwise.
void runUnary(Lowering &l, const std::function<void(Slot, Slot, Width)> &op) {
  const PeImage &x = l.input(0), &y = l.output(0);
  if (sameLayout(x.form, y.form)) {
    for (int32_t w = 0; w < x.words(); w += 2)
      op({y.memory, y.word + w}, {x.memory, x.word + w}, Width::Long);
    return;
  }
  forEachIndex(y.form.shape, [&](const std::vector<int64_t> &index) {
    op({y.memory, y.wordOf(index)}, {x.memory, x.wordOf(index)}, Width::Word);
  });
}

bool lowerRelu(Lowering &l) {
  if (!checkOutputs(l, 1) || !checkInputs(l, 1, 1))
    return false;
  bool integer = l.integerTensors();
  auto op = [&](Slot d, Slot x, Width w) {
    if (integer)
      l.program().integer(ElemOpcode::IMax, d, x, l.program().constantBits(0),
                          w);
    else
      l.program().relu(d, x, w);
  };
  if (!placeUnary(l))
    return false;
  l.loadInputs();
  runUnary(l, op);
  return true;
}

bool lowerLeakyRelu(Lowering &l) {
  if (!checkOutputs(l, 1) || !checkInputs(l, 1, 1))
    return false;
  float alpha = l.request().getFloat("alpha", 0.01f);
  // alpha x is the larger of x and alpha x for negative x when alpha <= 1
  // (and the smaller for positive x), the other way round above 1.
  bool useMax = alpha <= 1;
  auto op = [&](Slot d, Slot x, Width w) {
    l.program().mul(d, x, l.program().constant(alpha), w);
    if (useMax)
      l.program().max(d, x, d, w);
    else
      l.program().min(d, x, d, w);
  };
  if (!placeUnary(l))
    return false;
  l.loadInputs();
  runUnary(l, op);
  return true;
}

bool lowerClip(Lowering &l) {
  if (!checkOutputs(l, 1) || !checkInputs(l, 1, 3))
    return false;
  const KernelRequest &r = l.request();
  if (!placeUnary(l))
    return false;
  // The bounds: attributes (opset 6) or scalar inputs, constant or not,
  // as bits of the element type.
  bool integer = l.integerTensors();
  std::optional<Scalar> lowValue, highValue;
  if (r.hasAttribute("min"))
    lowValue = Scalar{0, double(r.getFloat("min", 0))};
  if (r.hasAttribute("max"))
    highValue = Scalar{0, double(r.getFloat("max", 0))};
  const PeImage *bound[3] = {nullptr, nullptr, nullptr};
  for (size_t i = 1; i < 3; ++i) {
    if (!r.hasInput(i))
      continue;
    if (elementCount(r.inputs[i].form.shape) != 1)
      return l.fail("the bounds of Clip are scalars");
    std::optional<Scalar> value = scalarOf(r.inputs[i], integer);
    if (value) {
      (i == 1 ? lowValue : highValue) = value;
      continue;
    }
    bound[i] = l.placeInput(i, {GRF0, LM0, LM1});
    if (!bound[i])
      return false;
  }
  l.loadInputs();
  auto boundSlot = [&](size_t i, std::optional<Scalar> value) {
    if (bound[i])
      return std::optional<Slot>(
          Slot{bound[i]->memory, bound[i]->wordOf(std::vector<int64_t>(
                                     bound[i]->form.shape.size(), 0))});
    if (value)
      return std::optional<Slot>(scalarSlot(l.program(), *value, integer));
    return std::optional<Slot>();
  };
  std::optional<Slot> low = boundSlot(1, lowValue),
                      high = boundSlot(2, highValue);
  // A runtime bound is one element: it serves element operations only.
  bool wordsOnly = bound[1] || bound[2];
  auto op = [&](Slot d, Slot x, Width w) {
    if (!low && !high) {
      l.program().copy(d, x, w);
      return;
    }
    Slot from = x;
    if (low) {
      if (integer)
        l.program().integer(ElemOpcode::IMax, d, from, *low, w);
      else
        l.program().max(d, from, *low, w);
      from = d;
    }
    if (high) {
      if (integer)
        l.program().integer(ElemOpcode::IMin, d, from, *high, w);
      else
        l.program().min(d, from, *high, w);
    }
  };
  if (wordsOnly) {
    const PeImage &x = l.input(0), &y = l.output(0);
    forEachIndex(y.form.shape, [&](const std::vector<int64_t> &index) {
      op({y.memory, y.wordOf(index)}, {x.memory, x.wordOf(index)}, Width::Word);
    });
  } else {
    runUnary(l, op);
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Binary element-wise with broadcasting: Add, Sub, Mul
//===----------------------------------------------------------------------===//

bool checkBroadcast(Lowering &l) {
  const KernelRequest &r = l.request();
  const DramForm &out = r.outputs[0].form;
  for (size_t i = 0; i < 2; ++i) {
    const std::vector<int64_t> &shape = r.inputs[i].form.shape;
    if (shape.size() > out.shape.size())
      return l.fail("input " + std::to_string(i) +
                    " has a higher rank than the output");
    size_t offset = out.shape.size() - shape.size();
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] != 1 && shape[d] != out.shape[offset + d])
        return l.fail("input " + std::to_string(i) + " " + shapeText(shape) +
                      " does not broadcast to " + shapeText(out.shape));
  }
  return true;
}

/// y[i] = op(a[i], b[i]) over the output's elements, with broadcasting;
/// pairs of elements whose operands are pairs too run as long words.
void runBinary(Lowering &l, const PeImage &y, const Operand &a,
               const Operand &b,
               const std::function<void(Slot, Slot, Slot, Width)> &op) {
  std::vector<std::array<Slot, 3>> pending;
  auto pairable = [&](const std::array<Slot, 3> &e0,
                      const std::array<Slot, 3> &e1) {
    if (e0[0].word % 2 || e1[0].word != e0[0].word + 1)
      return false;
    for (unsigned k = 1; k < 3; ++k) {
      if (!(k == 1 ? a : b).image)
        continue;
      if (e0[k].word % 2 || e1[k].word != e0[k].word + 1)
        return false;
    }
    return true;
  };
  forEachIndex(y.form.shape, [&](const std::vector<int64_t> &index) {
    std::array<Slot, 3> e = {Slot{y.memory, y.wordOf(index)}, a.at(index),
                             b.at(index)};
    if (!pending.empty() && pairable(pending[0], e)) {
      op(pending[0][0], pending[0][1], pending[0][2], Width::Long);
      pending.clear();
      return;
    }
    for (const auto &q : pending)
      op(q[0], q[1], q[2], Width::Word);
    pending.assign(1, e);
  });
  for (const auto &q : pending)
    op(q[0], q[1], q[2], Width::Word);
}

bool lowerBinary(Lowering &l) {
  if (!checkOutputs(l, 1) || !checkInputs(l, 2, 2) || !checkBroadcast(l))
    return false;
  const KernelRequest &r = l.request();
  const std::string &opType = r.opType;
  // A scalar constant becomes a constant word; the other operand goes to
  // LM0, the second to a GRF when it fits (broadcast operands are small),
  // so that no memory is read twice by one operation.
  bool integer = l.integerTensors();
  std::optional<Scalar> constant[2] = {scalarOf(r.inputs[0], integer),
                                       scalarOf(r.inputs[1], integer)};
  if (constant[0] && constant[1])
    constant[0].reset();
  Operand a, b;
  if (!constant[0] && !(a.image = l.placeInput(0, {LM0, LM1})))
    return false;
  if (!constant[1] && !(b.image = l.placeInput(1, {GRF0, GRF1, LM1, LM0})))
    return false;
  const PeImage *y = l.placeOutput(0, {LM1, LM0});
  if (!y)
    return false;
  // Integer products go through single precision: adding 1.5 x 2^23 to
  // an integer's bits gives the single 1.5 x 2^23 + x, exact for
  // |x| < 2^22, from which the MAU takes 1.5 x 2^23 away again.
  std::optional<Slot> converted;
  if (integer && opType == "Mul")
    converted = l.allocate({LM0, GRF0, GRF1, LM1}, y->words());
  if (integer && opType == "Mul" && !converted)
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  if (constant[0])
    a.fixed = scalarSlot(p, *constant[0], integer);
  if (constant[1])
    b.fixed = scalarSlot(p, *constant[1], integer);
  Slot magic = converted ? p.constantBits(0x4b400000) : Slot{};
  runBinary(l, *y, a, b, [&](Slot d, Slot x, Slot y2, Width w) {
    if (integer && opType != "Mul") {
      p.integer(opType == "Add" ? ElemOpcode::IAdd : ElemOpcode::ISub, d, x, y2,
                w);
    } else if (integer) {
      Slot t = converted->offset(d.word - y->word);
      p.integer(ElemOpcode::IAdd, d, x, magic, w);
      p.add(d, d, magic, true, w);
      p.integer(ElemOpcode::IAdd, t, y2, magic, w);
      p.add(t, t, magic, true, w);
      p.mul(d, d, t, w);
      p.toInteger(d, d, w);
    } else if (opType == "Add") {
      p.add(d, x, y2, false, w);
    } else if (opType == "Sub") {
      p.add(d, x, y2, true, w);
    } else {
      p.mul(d, x, y2, w);
    }
  });
  return true;
}

//===----------------------------------------------------------------------===//
// MathLib: Exp, Sigmoid, Tanh, Div, Softmax, LogSoftmax
//===----------------------------------------------------------------------===//

/// Exp, Sigmoid, Tanh: one MathLib block over the input's image (the
/// output's when the two lie differently, after copying the elements).
bool lowerTranscendental(Lowering &l) {
  if (!checkOutputs(l, 1) || !checkInputs(l, 1, 1))
    return false;
  const std::string &opType = l.request().opType;
  MathFunction function = opType == "Exp"       ? MathFunction::Exp
                          : opType == "Sigmoid" ? MathFunction::Sigmoid
                                                : MathFunction::Tanh;
  if (!placeUnary(l) || !l.reserveMath({function}))
    return false;
  l.loadInputs();
  const PeImage &x = l.input(0), &y = l.output(0);
  Slot from{x.memory, x.word};
  if (!sameLayout(x.form, y.form)) {
    std::vector<std::pair<Slot, Slot>> moves;
    forEachIndex(y.form.shape, [&](const std::vector<int64_t> &index) {
      moves.push_back(
          {{y.memory, y.wordOf(index)}, {x.memory, x.wordOf(index)}});
    });
    l.copyWords(moves);
    from = {y.memory, y.word};
  }
  return l.math(function, {from}, {y.memory, y.word}, y.words());
}

/// a / b: MathLib's division over whole images when nothing broadcasts;
/// otherwise b's reciprocal (over b's own image) times a, broadcast like
/// the other binary operators.
bool lowerDiv(Lowering &l) {
  if (!checkOutputs(l, 1) || !checkInputs(l, 2, 2) || !checkBroadcast(l))
    return false;
  const KernelRequest &r = l.request();
  const DramForm &out = r.outputs[0].form;
  std::optional<double> constant[2] = {scalarConstant(r.inputs[0]),
                                       scalarConstant(r.inputs[1])};
  Operand a, b;
  if (constant[1]) {
    // Division by a constant is a product with its reciprocal.
    if (!(a.image = l.placeInput(0, {LM0, LM1})))
      return false;
    const PeImage *y = l.placeOutput(0, {LM1, LM0});
    if (!y)
      return false;
    l.loadInputs();
    b.fixed = l.program().constant(1.0 / *constant[1]);
    runBinary(l, *y, a, b, [&](Slot d, Slot x, Slot c, Width w) {
      l.program().mul(d, x, c, w);
    });
    return true;
  }
  if (!constant[0] && !(a.image = l.placeInput(0, {LM0, LM1})))
    return false;
  if (!(b.image = l.placeInput(1, {LM1, LM0})))
    return false;
  const PeImage *y = l.placeOutput(0, {LM1, LM0});
  if (!y || !l.reserveMath({MathFunction::Divide, MathFunction::Reciprocal}))
    return false;
  l.loadInputs();
  if (a.image && sameLayout(a.image->form, out) &&
      sameLayout(b.image->form, out))
    return l.math(
        MathFunction::Divide,
        {{a.image->memory, a.image->word}, {b.image->memory, b.image->word}},
        {y->memory, y->word}, y->words());
  Slot bs{b.image->memory, b.image->word};
  if (!l.math(MathFunction::Reciprocal, {bs}, bs, b.image->words()))
    return false;
  if (constant[0])
    a.fixed = l.program().constant(*constant[0]);
  runBinary(l, *y, a, b, [&](Slot d, Slot x, Slot c, Width w) {
    l.program().mul(d, x, c, w);
  });
  return true;
}

/// Softmax and LogSoftmax over one axis (opset 13): per row, the maximum
/// m, d = x - m into the output, exp over the output's image, the sum s,
/// then y = e / s (a reciprocal block and products) or y = (x - m) - log s.
bool lowerSoftmax(Lowering &l) {
  if (!checkOutputs(l, 1) || !checkInputs(l, 1, 1))
    return false;
  const KernelRequest &r = l.request();
  bool logarithm = r.opType == "LogSoftmax";
  const DramForm &in = r.inputs[0].form, &out = r.outputs[0].form;
  if (in.shape != out.shape || in.shape.empty())
    return l.fail(r.opType + " needs an output shaped as its input");
  int64_t rank = int64_t(in.shape.size());
  int64_t axis = r.getInt("axis", -1);
  if (axis < -rank || axis >= rank)
    return l.fail("axis " + std::to_string(axis) + " is out of range");
  if (axis < 0)
    axis += rank;
  int64_t extent = in.shape[size_t(axis)];
  int64_t rows = elementCount(in.shape) / std::max<int64_t>(extent, 1);
  if (!placeUnary(l))
    return false;
  // The row maxima in a GRF (read beside x and the output), the row sums
  // in LM (MathLib's blocks lie outside its GRF scratch).
  int32_t rowWords = int32_t((rows * l.elementWords() + 7) / 8 * 8);
  std::optional<Slot> maxima = l.allocate({GRF0, GRF1}, rowWords);
  std::optional<Slot> sums = l.allocate({LM0, LM1}, rowWords);
  if (!maxima || !sums ||
      !l.reserveMath({MathFunction::Exp, logarithm ? MathFunction::Log
                                                   : MathFunction::Reciprocal}))
    return false;
  l.loadInputs();
  const PeImage &x = l.input(0), &y = l.output(0);
  ElemProgram &p = l.program();
  // Row r holds the elements whose index with the axis set to 0 is the
  // r-th in row-major order.
  std::vector<std::vector<std::pair<int32_t, int32_t>>> members(
      static_cast<size_t>(rows)); // (x word, y word)
  std::vector<int64_t> outer = in.shape;
  outer[size_t(axis)] = 1;
  forEachIndex(in.shape, [&](const std::vector<int64_t> &index) {
    std::vector<int64_t> key = index;
    key[size_t(axis)] = 0;
    int64_t row = 0;
    for (int64_t d = 0; d < rank; ++d)
      row = row * outer[size_t(d)] + key[size_t(d)];
    members[size_t(row)].push_back({x.wordOf(index), y.wordOf(index)});
  });
  for (int64_t row = 0; row < rows; ++row) {
    std::vector<Slot> sources;
    for (const auto &[xw, yw] : members[size_t(row)])
      sources.push_back({x.memory, xw});
    Slot m = l.element(*maxima, row);
    l.fold(m, sources, Lowering::Fold::Max);
    for (const auto &[xw, yw] : members[size_t(row)])
      p.add({y.memory, yw}, {x.memory, xw}, m, true);
  }
  Slot image{y.memory, y.word};
  if (!l.math(MathFunction::Exp, {image}, image, y.words()))
    return false;
  for (int64_t row = 0; row < rows; ++row) {
    std::vector<Slot> sources;
    for (const auto &[xw, yw] : members[size_t(row)])
      sources.push_back({y.memory, yw});
    l.fold(l.element(*sums, row), sources, Lowering::Fold::Sum);
  }
  if (!l.math(logarithm ? MathFunction::Log : MathFunction::Reciprocal, {*sums},
              *sums, rowWords))
    return false;
  for (int64_t row = 0; row < rows; ++row) {
    Slot s = l.element(*sums, row), m = l.element(*maxima, row);
    for (const auto &[xw, yw] : members[size_t(row)]) {
      Slot to{y.memory, yw};
      if (logarithm) {
        // (x - m) - log s: x - m is exact near the maximum, where adding
        // log s to m first would round at m's scale.
        p.add(to, {x.memory, xw}, m, true);
        p.add(to, to, s, true);
      } else {
        p.mul(to, to, s);
      }
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Reductions: ReduceSum, ReduceMean, ReduceMax
//===----------------------------------------------------------------------===//

bool lowerReduce(Lowering &l) {
  if (!checkOutputs(l, 1) || !checkInputs(l, 1, 2))
    return false;
  const KernelRequest &r = l.request();
  const DramForm &in = r.inputs[0].form;
  int64_t rank = int64_t(in.shape.size());
  bool keepDims = r.getInt("keepdims", 1) != 0;
  std::vector<bool> reduced;
  if (!resolveAxes(l, size_t(1), reduced))
    return false;
  const PeImage *x = l.placeInput(0, {LM0, LM1});
  const PeImage *y = x ? l.placeOutput(0, {LM1, LM0}) : nullptr;
  if (!y)
    return false;
  l.loadInputs();
  // The sources of each output, in input order.
  std::map<int32_t, std::vector<Slot>> sources;
  std::vector<int32_t> order;
  forEachIndex(in.shape, [&](const std::vector<int64_t> &index) {
    std::vector<int64_t> to;
    for (int64_t d = 0; d < rank; ++d)
      if (!reduced[size_t(d)])
        to.push_back(index[size_t(d)]);
      else if (keepDims)
        to.push_back(0);
    int32_t word = y->wordOf(to);
    auto &list = sources[word];
    if (list.empty())
      order.push_back(word);
    list.push_back({x->memory, x->wordOf(index)});
  });
  Lowering::Fold kind =
      r.opType == "ReduceMax" ? Lowering::Fold::Max : Lowering::Fold::Sum;
  for (int32_t word : order) {
    const std::vector<Slot> &list = sources[word];
    Slot dst{y->memory, word};
    l.fold(dst, list, kind);
    if (r.opType == "ReduceMean" && list.size() > 1)
      l.program().mul(dst, dst,
                      l.program().constant(1.0 / double(list.size())));
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Pools: MaxPool, AveragePool, GlobalAveragePool
//===----------------------------------------------------------------------===//

bool lowerPool(Lowering &l) {
  const KernelRequest &r = l.request();
  bool global = r.opType == "GlobalAveragePool";
  bool isMax = r.opType == "MaxPool";
  // MaxPool's optional second output: the flat input index of each
  // maximum.
  bool wantIndices = isMax && r.outputs.size() > 1 && !r.outputs[1].omitted;
  if (!checkOutputs(l, wantIndices ? 2 : 1) || !checkInputs(l, 1, 1))
    return false;
  int64_t storageOrder = r.getInt("storage_order", 0);
  if (wantIndices && storageOrder != 0 && storageOrder != 1)
    return l.fail("storage_order must be 0 or 1");
  const DramForm &in = r.inputs[0].form, &out = r.outputs[0].form;
  if (in.shape.size() < 3)
    return l.fail(r.opType + " needs an input of rank 3 or more");
  std::vector<int64_t> spatial(in.shape.begin() + 2, in.shape.end());
  Window w;
  if (global) {
    w.in = spatial;
    w.kernel = spatial;
    w.out.assign(spatial.size(), 1);
    w.stride.assign(spatial.size(), 1);
    w.dilation.assign(spatial.size(), 1);
    w.padBegin.assign(spatial.size(), 0);
    w.padEnd.assign(spatial.size(), 0);
  } else {
    if (!isMax && r.hasAttribute("dilations")) {
      for (int64_t d : r.getInts("dilations"))
        if (d != 1)
          return l.fail("AveragePool with dilations is not supported");
    }
    if (!resolveWindow(l, spatial, {}, r.getInt("ceil_mode", 0) != 0, w))
      return false;
  }
  std::vector<int64_t> expected = {in.shape[0], in.shape[1]};
  expected.insert(expected.end(), w.out.begin(), w.out.end());
  if (expected != out.shape)
    return l.fail("the output shape " + shapeText(out.shape) +
                  " is not the pool's " + shapeText(expected));
  bool countPad = r.getInt("count_include_pad", 0) != 0;
  const PeImage *x = l.placeInput(0, {LM0, LM1});
  const PeImage *y = x ? l.placeOutput(0, {LM1, LM0}) : nullptr;
  if (!y)
    return false;
  const PeImage *indices = nullptr;
  std::optional<Slot> ring;
  constexpr int32_t kRingWords = 64;
  if (wantIndices) {
    if (r.outputs[1].form.type != DeviceType::Int32 ||
        r.outputs[1].form.shape != out.shape)
      return l.fail("MaxPool's indices are an int32 tensor shaped as Y");
    if (elementCount(in.shape) >= (int64_t(1) << 24))
      return l.fail("MaxPool's indices need an input under 2^24 elements");
    if (l.elementWords() != 1)
      return l.fail("MaxPool's indices are found by comparing 32-bit "
                    "elements (double given)");
    if (!(indices = l.placeOutput(1, {LM0, LM1})) ||
        !(ring = l.allocate({GRF0}, kRingWords)))
      return false;
  }
  l.loadInputs();
  size_t rank = w.rank();
  int32_t ringNext = 0;
  ElemProgram &p = l.program();
  forEachIndex(out.shape, [&](const std::vector<int64_t> &index) {
    std::vector<Slot> taps;
    int64_t padded = 1;
    std::vector<int64_t> from(index.begin(), index.begin() + 2);
    from.resize(2 + rank);
    std::vector<int64_t> k(rank, 0);
    std::vector<int64_t> flat; // each tap's index into the flattened input
    // Taps inside the input, and how many lie inside the padded input.
    for (size_t d = 0; d < rank; ++d) {
      int64_t count = 0;
      for (int64_t t = 0; t < w.kernel[d]; ++t) {
        int64_t i =
            index[2 + d] * w.stride[d] - w.padBegin[d] + t * w.dilation[d];
        count += i >= -w.padBegin[d] && i < w.in[d] + w.padEnd[d];
      }
      padded *= count;
    }
    forEachIndex(w.kernel, [&](const std::vector<int64_t> &tap) {
      for (size_t d = 0; d < rank; ++d) {
        int64_t i =
            index[2 + d] * w.stride[d] - w.padBegin[d] + tap[d] * w.dilation[d];
        if (i < 0 || i >= w.in[d])
          return;
        from[2 + d] = i;
      }
      taps.push_back({x->memory, x->wordOf(from)});
      // Row-major over the spatial dimensions, or column-major with
      // storage_order 1, after the plane (n, c).
      int64_t spatialIndex = 0, stride = 1;
      if (storageOrder == 1) {
        for (size_t d = 0; d < rank; ++d) {
          spatialIndex += from[2 + d] * stride;
          stride *= w.in[d];
        }
      } else {
        for (size_t d = rank; d-- > 0;) {
          spatialIndex += from[2 + d] * stride;
          stride *= w.in[d];
        }
      }
      int64_t plane = from[0] * in.shape[1] + from[1];
      flat.push_back(plane * elementCount(spatial) + spatialIndex);
    });
    Slot dst{y->memory, y->wordOf(index)};
    l.fold(dst, taps, isMax ? Lowering::Fold::Max : Lowering::Fold::Sum);
    if (indices) {
      // Each tap's candidate: its index where it equals the maximum (the
      // bits, which fmax passes unchanged), that plus 2^24 where not; the
      // smallest candidate is the first maximum in row-major order.
      Slot to{indices->memory, indices->wordOf(index)};
      for (size_t t = 0; t < taps.size(); ++t) {
        Slot c = ring->offset(ringNext);
        ringNext = (ringNext + 1) % kRingWords;
        p.integer(ElemOpcode::IXor, c, dst, taps[t]);
        p.integer(ElemOpcode::ILNot, c, c, c);
        p.integer(ElemOpcode::ISub, c, p.constantBits(1), c);
        p.integer(ElemOpcode::ILsl, c, c, p.constantBits(24));
        p.integer(ElemOpcode::IAdd, c, c, p.constantBits(uint32_t(flat[t])));
        if (t == 0)
          p.copy(to, c);
        else
          p.integer(ElemOpcode::IMin, to, to, c);
      }
    }
    int64_t divisor = countPad ? padded : int64_t(taps.size());
    if (!isMax && divisor > 1)
      l.program().mul(dst, dst, l.program().constant(1.0 / double(divisor)));
  });
  return true;
}

//===----------------------------------------------------------------------===//
// BatchNormalization (inference)
//===----------------------------------------------------------------------===//

bool lowerBatchNorm(Lowering &l) {
  const KernelRequest &r = l.request();
  bool training = r.getInt("training_mode", 0) != 0;
  if (!checkInputs(l, 5, 5))
    return false;
  // Training mode adds the running mean and variance (optional outputs).
  size_t outputs = 0;
  for (size_t o = 0; o < r.outputs.size(); ++o)
    if (!r.outputs[o].omitted)
      outputs = o + 1;
  if (r.outputs.empty() || r.outputs[0].omitted ||
      outputs > (training ? 3u : 1u))
    return l.fail("BatchNormalization with these outputs is not supported");
  const DramForm &in = r.inputs[0].form, &out = r.outputs[0].form;
  if (in.shape != out.shape || in.shape.size() < 2)
    return l.fail("BatchNormalization needs an output shaped as its input, "
                  "of rank 2 or more");
  int64_t channels = in.shape[1];
  for (size_t i = 1; i < 5; ++i)
    if (r.inputs[i].form.shape != std::vector<int64_t>{channels})
      return l.fail("the parameters of BatchNormalization are [C] vectors");
  for (size_t o = 1; o < outputs; ++o)
    if (!r.outputs[o].omitted &&
        r.outputs[o].form.shape != std::vector<int64_t>{channels})
      return l.fail("the running statistics are [C] vectors");
  const PeImage *x = l.placeInput(0, {LM0, LM1});
  const PeImage *y = x ? l.placeOutput(0, {LM1, LM0}) : nullptr;
  if (!y)
    return false;
  const PeImage *param[5] = {x, nullptr, nullptr, nullptr, nullptr};
  for (size_t i = 1; i < 5; ++i)
    if (!(param[i] = l.placeInput(i, {GRF0, LM0, LM1, GRF1})))
      return false;
  const PeImage *running[3] = {nullptr, nullptr, nullptr};
  for (size_t o = 1; o < outputs; ++o)
    if (!r.outputs[o].omitted && !(running[o] = l.placeOutput(o, {LM0, LM1})))
      return false;
  // Per channel: the scale s and the shift t (y = x s + t), and scratch,
  // each in its own memory so that no operation reads one memory twice;
  // in training mode the batch's mean and variance too.
  int32_t channelWords = int32_t(channels) * l.elementWords();
  std::optional<Slot> s = l.allocate({GRF0, LM0, LM1}, channelWords);
  std::optional<Slot> t = l.allocate({GRF1, LM1, LM0}, channelWords);
  std::optional<Slot> h = l.allocate({LM0, LM1}, channelWords);
  std::optional<Slot> e = l.allocate({LM1, LM0}, channelWords);
  std::optional<Slot> batchMean, batchVar;
  if (training) {
    batchMean = l.allocate({GRF0, GRF1, LM1, LM0}, channelWords);
    batchVar = l.allocate({GRF0, GRF1, LM1, LM0}, channelWords);
  }
  if (!s || !t || !h || !e || (training && (!batchMean || !batchVar)))
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  float epsilon = r.getFloat("epsilon", 1e-5f);
  float momentum = r.getFloat("momentum", 0.9f);
  auto at = [&](size_t i, int64_t c) {
    return Slot{param[i]->memory, param[i]->wordOf({c})};
  };
  // The statistics each channel uses: the inputs', or in training mode the
  // batch's, over N and the spatial dimensions (the variance of the values
  // around their mean, divided by their count, as the reference computes
  // it).
  std::vector<Slot> useMean(static_cast<size_t>(channels)),
      useVar(static_cast<size_t>(channels));
  if (training) {
    std::vector<std::vector<std::vector<int64_t>>> members(
        static_cast<size_t>(channels));
    forEachIndex(in.shape, [&](const std::vector<int64_t> &index) {
      members[size_t(index[1])].push_back(index);
    });
    for (int64_t c = 0; c < channels; ++c) {
      const auto &list = members[size_t(c)];
      Slot mean = l.element(*batchMean, c);
      Slot var = l.element(*batchVar, c);
      std::vector<Slot> sources;
      for (const auto &index : list)
        sources.push_back({x->memory, x->wordOf(index)});
      double inverse = list.empty() ? 0.0 : 1.0 / double(list.size());
      l.fold(mean, sources, Lowering::Fold::Sum);
      p.mul(mean, mean, p.constant(inverse));
      // Deviations in the output's words, then their squares summed.
      for (size_t k = 0; k < list.size(); ++k) {
        Slot d{y->memory, y->wordOf(list[k])};
        p.add(d, sources[k], mean, true);
        if (k == 0)
          p.mul(var, d, d);
        else
          p.fma(var, d, d, var);
      }
      p.mul(var, var, p.constant(inverse));
      useMean[size_t(c)] = mean;
      useVar[size_t(c)] = var;
    }
  } else {
    for (int64_t c = 0; c < channels; ++c) {
      useMean[size_t(c)] = at(3, c);
      useVar[size_t(c)] = at(4, c);
    }
  }
  for (int64_t c = 0; c < channels; ++c) {
    Slot v = l.element(*h, c), g = l.element(*s, c), q = l.element(*e, c),
         sh = l.element(*t, c);
    // v = var + epsilon; g ~ 1 / sqrt(v): frsqrt's 5 bits, then Newton
    // steps g (1.5 - 0.5 v g^2), each doubling the correct bits (four
    // reach single precision from the hardware's estimate).
    p.add(v, useVar[size_t(c)], p.constant(epsilon));
    p.rsqrt(g, v);
    p.mul(v, v, p.constant(0.5f));
    for (int iteration = 0; iteration < 4; ++iteration) {
      p.mul(q, g, g);
      p.mul(q, q, v);
      p.add(q, p.constant(1.5f), q, true);
      p.mul(g, g, q);
    }
    // s = scale / sqrt(var + eps); t = B - mean s.
    p.mul(g, g, at(1, c));
    p.mul(q, useMean[size_t(c)], g);
    p.add(sh, at(2, c), q, true);
  }
  forEachIndex(out.shape, [&](const std::vector<int64_t> &index) {
    p.fma({y->memory, y->wordOf(index)}, {x->memory, x->wordOf(index)},
          l.element(*s, index[1]), l.element(*t, index[1]));
  });
  // running = input * momentum + current * (1 - momentum).
  for (size_t o = 1; o < 3; ++o) {
    if (!running[o])
      continue;
    for (int64_t c = 0; c < channels; ++c) {
      Slot dst{running[o]->memory, running[o]->wordOf({c})};
      const std::vector<Slot> &current = o == 1 ? useMean : useVar;
      p.mul(dst, current[size_t(c)], p.constant(1.0 - double(momentum)));
      p.fma(dst, at(o + 2, c), p.constant(momentum), dst);
    }
  }
  return true;
}

struct ElementOp {
  const char *opType;
  LoweringFn lower;
};

const ElementOp kElementOps[] = {
    {"Identity", lowerReshapeLike},
    {"Reshape", lowerReshapeLike},
    {"Flatten", lowerReshapeLike},
    {"Transpose", lowerTranspose},
    {"Relu", lowerRelu},
    {"LeakyRelu", lowerLeakyRelu},
    {"Clip", lowerClip},
    {"Add", lowerBinary},
    {"Sub", lowerBinary},
    {"Mul", lowerBinary},
    {"Div", lowerDiv},
    {"Exp", lowerTranscendental},
    {"Sigmoid", lowerTranscendental},
    {"Tanh", lowerTranscendental},
    {"Softmax", lowerSoftmax},
    {"LogSoftmax", lowerSoftmax},
    {"ReduceSum", lowerReduce},
    {"ReduceMean", lowerReduce},
    {"ReduceMax", lowerReduce},
    {"MaxPool", lowerPool},
    {"AveragePool", lowerPool},
    {"GlobalAveragePool", lowerPool},
    {"BatchNormalization", lowerBatchNorm},
};

} // namespace

LoweringFn general::findElementLowering(const std::string &opType) {
  for (const ElementOp &op : kElementOps)
    if (opType == op.opType)
      return op.lower;
  return nullptr;
}

bool general::resolveWindow(Lowering &l, const std::vector<int64_t> &spatial,
                            const std::vector<int64_t> &weights, bool ceilMode,
                            Window &w) {
  const KernelRequest &r = l.request();
  size_t rank = spatial.size();
  std::vector<int64_t> kernel = r.getInts("kernel_shape");
  if (kernel.empty())
    kernel = weights;
  if (kernel.size() != rank)
    return l.fail("kernel_shape needs " + std::to_string(rank) + " values");
  if (!weights.empty() && kernel != weights)
    return l.fail("kernel_shape differs from the weights'");
  w.in = spatial;
  w.kernel = kernel;
  w.stride = r.getInts("strides", std::vector<int64_t>(rank, 1));
  w.dilation = r.getInts("dilations", std::vector<int64_t>(rank, 1));
  std::vector<int64_t> pads =
      r.getInts("pads", std::vector<int64_t>(2 * rank, 0));
  std::string autoPad = r.getString("auto_pad", "NOTSET");
  if (w.stride.size() != rank || w.dilation.size() != rank ||
      pads.size() != 2 * rank)
    return l.fail("strides, dilations and pads do not match the rank");
  w.out.resize(rank);
  w.padBegin.resize(rank);
  w.padEnd.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    if (kernel[i] < 1 || w.stride[i] < 1 || w.dilation[i] < 1 || pads[i] < 0 ||
        pads[i + rank] < 0)
      return l.fail("the window attributes must be positive");
    int64_t extent = (kernel[i] - 1) * w.dilation[i] + 1;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t out = (spatial[i] + w.stride[i] - 1) / w.stride[i];
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.stride[i] + extent - spatial[i]);
      // SAME_UPPER puts the odd padding at the end, SAME_LOWER at the start.
      w.padBegin[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.padEnd[i] = total - w.padBegin[i];
      w.out[i] = out;
      continue;
    }
    if (autoPad == "VALID") {
      w.padBegin[i] = w.padEnd[i] = 0;
    } else if (autoPad == "NOTSET" || autoPad.empty()) {
      w.padBegin[i] = pads[i];
      w.padEnd[i] = pads[i + rank];
    } else {
      return l.fail("auto_pad '" + autoPad + "' is unknown");
    }
    int64_t span = spatial[i] + w.padBegin[i] + w.padEnd[i] - extent;
    if (span < 0)
      return l.fail("the window is larger than the padded input");
    int64_t out = (ceilMode ? (span + w.stride[i] - 1) / w.stride[i]
                            : span / w.stride[i]) +
                  1;
    // In ceil mode the last window starts inside the input or the begin
    // padding (PyTorch's rule, which ONNX's reference follows).
    if (ceilMode && (out - 1) * w.stride[i] >= spatial[i] + w.padBegin[i])
      --out;
    w.out[i] = out;
  }
  return true;
}
