//===- GeneralIndex.cpp - Selections by index, Trilu, copies --------------===//
//
// The general kernel's operators that pick elements by an index known only
// at run time (Gather, GatherElements, ArgMax, ArgMin, Hardmax, and the
// losses NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, which pick
// by the target class), Trilu, and the copies whose index map is known at
// compile time (Unsqueeze, Squeeze, Expand, Tile, DepthToSpace,
// SpaceToDepth, Dropout in inference); CumSum, whose axis may be known only
// at run time; ScatterElements and ScatterND, which write by runtime
// indices.
//
// An element program has no indirect addressing, so a runtime index i
// along an axis of extent K selects by comparing: for each k < K, the
// mask "i == k" as a sign (GeneralMore.h), `frelu mask x_k` (x_k or the
// sign pattern), and the K results combined. Floats are combined by
// adding (the sign pattern is -0, which adds exactly: the sum is the one
// chosen, or 0 when no k matches); int32 by xor with the pattern.
//
//===----------------------------------------------------------------------===//

#include "GeneralMore.h"

#include <algorithm>
#include <map>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::general;
using namespace mncc::codegen::general::more;

namespace {

constexpr auto LM0 = PeMemory::LM0;
constexpr auto LM1 = PeMemory::LM1;
constexpr auto GRF0 = PeMemory::GRF0;
constexpr auto GRF1 = PeMemory::GRF1;

/// frelu s v: v where s's sign bit is clear, else the sign pattern.
void signSelect(ElemProgram &p, Slot dst, Slot s, Slot v) {
  ElemOp op;
  op.opcode = ElemOpcode::Relu;
  op.dst = dst;
  op.src[0] = s;
  op.src[1] = v;
  p.record(op);
}

/// The mask of "index == k" (clear sign where equal): lnot(index ^ k) - 1.
void equalMask(ElemProgram &p, Slot dst, Slot index, int64_t k) {
  p.integer(ElemOpcode::IXor, dst, index, p.constantBits(uint32_t(k)));
  p.integer(ElemOpcode::ILNot, dst, dst, dst);
  p.integer(ElemOpcode::ISub, dst, dst, p.constantBits(1));
}

/// index + extent where index < 0 (ONNX's negative indices), into dst.
void wrapNegative(Lowering &l, Ring &ring, Slot dst, Slot index,
                  int64_t extent) {
  ElemProgram &p = l.program();
  Slot plus = ring.take();
  p.integer(ElemOpcode::IAdd, plus, index,
            p.constantBits(uint32_t(int32_t(extent))));
  selectBySign(l, ring, dst, index, index, plus);
}

/// dst = the candidate whose mask is clear (masks[k] for candidates[k]):
/// the sum of frelu mask x for floats, the xor for int32.
void pick(Lowering &l, Ring &ring, Slot dst, const std::vector<Slot> &masks,
          const std::vector<Slot> &candidates, ElementKind kind) {
  ElemProgram &p = l.program();
  if (candidates.empty()) {
    p.zero(dst);
    return;
  }
  for (size_t k = 0; k < candidates.size(); ++k) {
    Slot chosen = k == 0 ? dst : ring.take();
    signSelect(p, chosen, masks[k], candidates[k]);
    if (k == 0)
      continue;
    if (kind == ElementKind::Float)
      p.add(dst, dst, chosen);
    else
      p.integer(ElemOpcode::IXor, dst, dst, chosen);
  }
  // int32: every candidate but the chosen one gave the pattern; an even
  // number of them cancel, an odd number leave it once.
  if (kind == ElementKind::Int && candidates.size() % 2 == 0)
    p.integer(ElemOpcode::IXor, dst, dst, p.constantBits(kSignBit));
}

int64_t normaliseAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

//===----------------------------------------------------------------------===//
// Gather, GatherElements
//===----------------------------------------------------------------------===//

bool lowerGather(Lowering &l) {
  if (!checkInputs(l, 2, 2) || !checkOutputs(l, 1))
    return false;
  const KernelRequest &r = l.request();
  bool elements = r.opType == "GatherElements";
  std::optional<ElementKind> kind = kindOf(l, r.inputs[0], "the data");
  std::optional<ElementKind> out =
      kind ? kindOf(l, r.outputs[0], "the output") : std::nullopt;
  if (!out)
    return false;
  if (*out != *kind || r.inputs[1].form.type != DeviceType::Int32)
    return l.fail(r.opType + " takes int32 indices and gives the data's type");
  const DramForm &data = r.inputs[0].form, &indices = r.inputs[1].form,
                 &result = r.outputs[0].form;
  int64_t rank = int64_t(data.shape.size());
  int64_t axis = r.getInt("axis", 0);
  if (rank == 0 || axis < -rank || axis >= rank)
    return l.fail("axis " + std::to_string(axis) + " is out of range");
  axis = normaliseAxis(axis, rank);
  int64_t extent = data.shape[size_t(axis)];
  std::vector<int64_t> expected;
  if (elements) {
    expected = indices.shape;
    if (indices.shape.size() != data.shape.size())
      return l.fail("GatherElements' indices have the data's rank");
  } else {
    expected.assign(data.shape.begin(), data.shape.begin() + axis);
    expected.insert(expected.end(), indices.shape.begin(), indices.shape.end());
    expected.insert(expected.end(), data.shape.begin() + axis + 1,
                    data.shape.end());
  }
  if (expected != result.shape)
    return l.fail("the output shape " + shapeText(result.shape) + " is not " +
                  r.opType + "'s " + shapeText(expected));
  // The data element that output `index` reads, with the index along the
  // axis given.
  auto dataIndex = [&](const std::vector<int64_t> &index, int64_t k) {
    std::vector<int64_t> from;
    if (elements) {
      from = index;
      from[size_t(axis)] = k;
      return from;
    }
    from.assign(index.begin(), index.begin() + axis);
    from.push_back(k);
    from.insert(from.end(),
                index.begin() + axis + int64_t(indices.shape.size()),
                index.end());
    return from;
  };
  auto indexOf = [&](const std::vector<int64_t> &index) {
    if (elements)
      return index;
    return std::vector<int64_t>(index.begin() + axis,
                                index.begin() + axis +
                                    int64_t(indices.shape.size()));
  };
  const PeImage *x = l.placeInput(0, {LM0, LM1});
  if (!x)
    return false;
  std::optional<std::vector<int64_t>> known = constantInts(r.inputs[1]);
  if (known) {
    // Indices known at compile time: copies.
    for (int64_t v : *known)
      if (v < -extent || v >= extent)
        return l.fail("index " + std::to_string(v) + " is out of range [" +
                      std::to_string(-extent) + ", " + std::to_string(extent) +
                      ")");
    const PeImage *y = l.placeOutput(0, {LM1, LM0});
    if (!y)
      return false;
    l.loadInputs();
    std::vector<std::pair<Slot, Slot>> moves;
    forEachIndex(result.shape, [&](const std::vector<int64_t> &index) {
      std::vector<int64_t> at = indexOf(index);
      int64_t flat = 0;
      for (size_t d = 0; d < at.size(); ++d)
        flat = flat * indices.shape[d] + at[d];
      int64_t k = (*known)[size_t(flat)];
      if (k < 0)
        k += extent;
      moves.push_back({{y->memory, y->wordOf(index)},
                       {x->memory, x->wordOf(dataIndex(index, k))}});
    });
    l.copyWords(moves);
    return true;
  }
  const PeImage *ix = l.placeInput(1, {GRF0, GRF1, LM1, LM0});
  const PeImage *y = ix ? l.placeOutput(0, {LM1, LM0}) : nullptr;
  if (!y)
    return false;
  // Gather: the masks of every index element, extent words each, computed
  // once (each serves a slice of the output). GatherElements uses each
  // index once: its masks come from the ring.
  int64_t indexCount = elementCount(indices.shape);
  std::optional<Slot> masks;
  if (!elements &&
      !(masks = l.allocate({GRF1, GRF0, LM0, LM1},
                           int32_t((indexCount * extent + 7) / 8 * 8))))
    return false;
  Ring ring;
  if (!ring.allocate(l, {GRF1, GRF0, LM0, LM1},
                     int32_t(std::max<int64_t>(64, (3 * extent + 7) / 8 * 8))))
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  auto masksOf = [&](Slot index, std::vector<Slot> &into,
                     std::optional<Slot> base) {
    Slot wrapped = ring.take();
    wrapNegative(l, ring, wrapped, index, extent);
    into.clear();
    for (int64_t k = 0; k < extent; ++k) {
      Slot mask = base ? base->offset(int32_t(k)) : ring.take();
      equalMask(p, mask, wrapped, k);
      into.push_back(mask);
    }
  };
  std::vector<std::vector<Slot>> gatherMasks;
  if (!elements) {
    gatherMasks.resize(size_t(indexCount));
    int64_t flat = 0;
    forEachIndex(indices.shape, [&](const std::vector<int64_t> &index) {
      masksOf({ix->memory, ix->wordOf(index)}, gatherMasks[size_t(flat)],
              masks->offset(int32_t(flat * extent)));
      ++flat;
    });
  }
  std::vector<Slot> local, candidates;
  forEachIndex(result.shape, [&](const std::vector<int64_t> &index) {
    std::vector<int64_t> at = indexOf(index);
    const std::vector<Slot> *use = &local;
    if (elements) {
      masksOf({ix->memory, ix->wordOf(at)}, local, std::nullopt);
    } else {
      int64_t flat = 0;
      for (size_t d = 0; d < at.size(); ++d)
        flat = flat * indices.shape[d] + at[d];
      use = &gatherMasks[size_t(flat)];
    }
    candidates.clear();
    for (int64_t k = 0; k < extent; ++k)
      candidates.push_back({x->memory, x->wordOf(dataIndex(index, k))});
    pick(l, ring, {y->memory, y->wordOf(index)}, *use, candidates, *kind);
  });
  return true;
}

/// OneHot: values[1] where the (wrapped) index equals the position along
/// the new axis, values[0] elsewhere. Float indices are truncated to
/// integers (fftoi), as ONNX casts them; depth is the output's extent.
bool lowerOneHot(Lowering &l) {
  if (!checkInputs(l, 3, 3) || !checkOutputs(l, 1))
    return false;
  const KernelRequest &r = l.request();
  std::optional<ElementKind> indexKind = kindOf(l, r.inputs[0], "indices");
  std::optional<ElementKind> valueKind =
      indexKind ? kindOf(l, r.inputs[2], "values") : std::nullopt;
  std::optional<ElementKind> outKind =
      valueKind ? kindOf(l, r.outputs[0], "the output") : std::nullopt;
  if (!outKind)
    return false;
  if (*outKind != *valueKind || elementCount(r.inputs[2].form.shape) != 2)
    return l.fail("OneHot's values are two elements of the output's type");
  const std::vector<int64_t> &indices = r.inputs[0].form.shape;
  const std::vector<int64_t> &out = r.outputs[0].form.shape;
  int64_t rank = int64_t(out.size());
  int64_t axis = r.getInt("axis", -1);
  if (axis < -rank || axis >= rank)
    return l.fail("axis " + std::to_string(axis) + " is out of range");
  axis = normaliseAxis(axis, rank);
  std::vector<int64_t> expected = indices;
  int64_t depth = out.empty() ? 0 : out[size_t(axis)];
  expected.insert(expected.begin() + axis, depth);
  if (expected != out)
    return l.fail("the output shape " + shapeText(out) +
                  " is not the indices' with depth inserted at axis " +
                  std::to_string(axis));
  const PeImage *ix = l.placeInput(0, {LM0, LM1});
  const PeImage *values = ix ? l.placeInput(2, {GRF0, GRF1, LM1}) : nullptr;
  const PeImage *y = values ? l.placeOutput(0, {LM1, LM0}) : nullptr;
  std::optional<Slot> wrapped =
      y ? l.allocate({GRF0, GRF1, LM0, LM1},
                     int32_t((elementCount(indices) + 7) / 8 * 8))
        : std::nullopt;
  Ring ring;
  if (!wrapped || !ring.allocate(l, {GRF1, GRF0, LM0, LM1}))
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  int64_t flat = 0;
  forEachIndex(indices, [&](const std::vector<int64_t> &index) {
    Slot from{ix->memory, ix->wordOf(index)};
    Slot to = wrapped->offset(int32_t(flat++));
    if (*indexKind == ElementKind::Float) {
      p.toInteger(to, from);
      from = to;
    }
    wrapNegative(l, ring, to, from, depth);
  });
  Slot off{values->memory, values->wordOf({0})},
      on{values->memory, values->wordOf({1})};
  forEachIndex(out, [&](const std::vector<int64_t> &index) {
    std::vector<int64_t> at = index;
    int64_t k = at[size_t(axis)];
    at.erase(at.begin() + axis);
    int64_t position = 0;
    for (size_t d = 0; d < at.size(); ++d)
      position = position * indices[d] + at[d];
    Slot mask = ring.take();
    equalMask(p, mask, wrapped->offset(int32_t(position)), k);
    selectBySign(l, ring, {y->memory, y->wordOf(index)}, mask, on, off);
  });
  return true;
}

//===----------------------------------------------------------------------===//
// ArgMax, ArgMin, Hardmax
//===----------------------------------------------------------------------===//

/// For each row along `axis`: the extreme (max or min, by the data's own
/// comparison, which passes one of its inputs unchanged), then the index
/// of the first (or last) element with its bits: each element's candidate
/// is its index, or that moved out of reach by 2^24 where it differs.
/// `emit(row, indexSlot)` receives each row's index word.
bool argExtreme(
    Lowering &l, const PeImage &x, int64_t axis, bool isMax, bool last,
    ElementKind kind, Ring &ring,
    const std::function<void(const std::vector<int64_t> &, Slot)> &emit) {
  ElemProgram &p = l.program();
  const std::vector<int64_t> &shape = x.form.shape;
  int64_t extent = shape[size_t(axis)];
  if (extent >= (int64_t(1) << 24))
    return l.fail("the axis is longer than 2^24");
  std::vector<int64_t> rows = shape;
  rows[size_t(axis)] = 1;
  forEachIndex(rows, [&](const std::vector<int64_t> &row) {
    std::vector<Slot> members;
    std::vector<int64_t> at = row;
    for (int64_t k = 0; k < extent; ++k) {
      at[size_t(axis)] = k;
      members.push_back({x.memory, x.wordOf(at)});
    }
    Slot extreme = ring.take();
    p.copy(extreme, members[0]);
    for (size_t k = 1; k < members.size(); ++k) {
      if (kind == ElementKind::Float) {
        if (isMax)
          p.max(extreme, extreme, members[k]);
        else
          p.min(extreme, extreme, members[k]);
      } else {
        p.integer(isMax ? ElemOpcode::IMax : ElemOpcode::IMin, extreme, extreme,
                  members[k]);
      }
    }
    Slot best = ring.take();
    for (int64_t k = 0; k < extent; ++k) {
      // differs: 1 where the bits differ, else 0; candidate = k -/+ 2^24
      // differs (first: the smallest candidate; last: the largest).
      Slot c = ring.take();
      p.integer(ElemOpcode::IXor, c, extreme, members[size_t(k)]);
      p.integer(ElemOpcode::ILNot, c, c, c);
      p.integer(ElemOpcode::ISub, c, p.constantBits(1), c);
      p.integer(ElemOpcode::ILsl, c, c, p.constantBits(24));
      if (last)
        p.integer(ElemOpcode::ISub, c, p.constantBits(uint32_t(k)), c);
      else
        p.integer(ElemOpcode::IAdd, c, c, p.constantBits(uint32_t(k)));
      if (k == 0)
        p.copy(best, c);
      else
        p.integer(last ? ElemOpcode::IMax : ElemOpcode::IMin, best, best, c);
    }
    emit(row, best);
  });
  return true;
}

bool lowerArgExtreme(Lowering &l) {
  if (!checkInputs(l, 1, 1) || !checkOutputs(l, 1))
    return false;
  const KernelRequest &r = l.request();
  std::optional<ElementKind> kind = kindOf(l, r.inputs[0], "the data");
  if (!kind)
    return false;
  if (r.outputs[0].form.type != DeviceType::Int32)
    return l.fail(r.opType + " gives integer indices");
  const DramForm &in = r.inputs[0].form, &out = r.outputs[0].form;
  int64_t rank = int64_t(in.shape.size());
  int64_t axis = r.getInt("axis", 0);
  if (rank == 0 || axis < -rank || axis >= rank)
    return l.fail("axis " + std::to_string(axis) + " is out of range");
  axis = normaliseAxis(axis, rank);
  bool keepDims = r.getInt("keepdims", 1) != 0;
  std::vector<int64_t> expected;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      expected.push_back(in.shape[size_t(d)]);
    else if (keepDims)
      expected.push_back(1);
  if (expected != out.shape)
    return l.fail("the output shape " + shapeText(out.shape) + " is not " +
                  r.opType + "'s " + shapeText(expected));
  if (in.shape[size_t(axis)] == 0)
    return l.fail(r.opType + " over an empty axis");
  const PeImage *x = l.placeInput(0, {LM0, LM1});
  const PeImage *y = x ? l.placeOutput(0, {LM1, LM0}) : nullptr;
  Ring ring;
  if (!y || !ring.allocate(l, {GRF1, GRF0, LM0, LM1},
                           int32_t((in.shape[size_t(axis)] + 16 + 7) / 8 * 8)))
    return false;
  l.loadInputs();
  return argExtreme(l, *x, axis, r.opType == "ArgMax",
                    r.getInt("select_last_index", 0) != 0, *kind, ring,
                    [&](const std::vector<int64_t> &row, Slot best) {
                      std::vector<int64_t> to;
                      for (int64_t d = 0; d < rank; ++d)
                        if (d != axis || keepDims)
                          to.push_back(row[size_t(d)]);
                      l.program().copy({y->memory, y->wordOf(to)}, best);
                    });
}

/// Hardmax (opset 13): 1 at the first maximum along the axis, else 0.
bool lowerHardmax(Lowering &l) {
  if (!checkInputs(l, 1, 1) || !checkOutputs(l, 1))
    return false;
  const KernelRequest &r = l.request();
  std::optional<ElementKind> kind = kindOf(l, r.inputs[0], "the input");
  if (!kind)
    return false;
  if (*kind != ElementKind::Float ||
      r.outputs[0].form.type != r.inputs[0].form.type)
    return l.fail("Hardmax takes floating tensors");
  const DramForm &in = r.inputs[0].form;
  if (in.shape != r.outputs[0].form.shape || in.shape.empty())
    return l.fail("Hardmax's output is shaped as its input");
  int64_t rank = int64_t(in.shape.size());
  int64_t axis = r.getInt("axis", -1);
  if (axis < -rank || axis >= rank)
    return l.fail("axis " + std::to_string(axis) + " is out of range");
  axis = normaliseAxis(axis, rank);
  if (in.shape[size_t(axis)] == 0)
    return l.fail("Hardmax over an empty axis");
  const PeImage *x = l.placeInput(0, {LM0, LM1});
  const PeImage *y = x ? l.placeOutput(0, {LM1, LM0}) : nullptr;
  int64_t extent = in.shape[size_t(axis)];
  Ring ring;
  if (!y ||
      !ring.allocate(l, {GRF1, GRF0, LM0, LM1},
                     int32_t(std::max<int64_t>(64, (extent + 16 + 7) / 8 * 8))))
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  return argExtreme(
      l, *x, axis, true, false, ElementKind::Float, ring,
      [&](const std::vector<int64_t> &row, Slot best) {
        std::vector<int64_t> at = row;
        for (int64_t k = 0; k < extent; ++k) {
          // 1.0's bits where best == k: (0 - (best == k)) & bits(1.0).
          at[size_t(axis)] = k;
          Slot dst{y->memory, y->wordOf(at)};
          p.integer(ElemOpcode::IXor, dst, best, p.constantBits(uint32_t(k)));
          p.integer(ElemOpcode::ILNot, dst, dst, dst);
          p.integer(ElemOpcode::ISub, dst, p.constantBits(0), dst);
          p.integer(ElemOpcode::IAnd, dst, dst, p.constantBits(0x3f800000u));
        }
      });
}

//===----------------------------------------------------------------------===//
// Trilu
//===----------------------------------------------------------------------===//

bool lowerTrilu(Lowering &l) {
  if (!checkInputs(l, 1, 2) || !checkOutputs(l, 1))
    return false;
  const KernelRequest &r = l.request();
  std::optional<ElementKind> kind = kindOf(l, r.inputs[0], "the input");
  if (!kind || !kindOf(l, r.outputs[0], "the output"))
    return false;
  const DramForm &in = r.inputs[0].form;
  if (in.shape != r.outputs[0].form.shape || in.shape.size() < 2)
    return l.fail(
        "Trilu takes a tensor of rank 2 or more, and gives its shape");
  bool upper = r.getInt("upper", 1) != 0;
  std::optional<int64_t> k = 0;
  bool runtimeK = false;
  if (r.hasInput(1)) {
    std::optional<std::vector<int64_t>> given = constantInts(r.inputs[1]);
    if (given && given->size() == 1)
      k = (*given)[0];
    else if (elementCount(r.inputs[1].form.shape) != 1)
      return l.fail("Trilu's k is a scalar");
    else
      runtimeK = true;
  }
  int64_t rows = in.shape[in.shape.size() - 2],
          columns = in.shape[in.shape.size() - 1];
  const PeImage *x = l.placeInput(0, {LM0, LM1});
  const PeImage *kImage =
      x && runtimeK ? l.placeInput(1, {GRF0, GRF1, LM1, LM0}) : nullptr;
  if (!x || (runtimeK && !kImage))
    return false;
  const PeImage *y = l.placeOutput(0, {LM1, LM0});
  if (!y)
    return false;
  // Runtime k: for each diagonal d = j - i, the sign of (d - k) (upper:
  // kept where clear) or of (k - d) (lower), once.
  int64_t diagonals = rows + columns - 1;
  std::optional<Slot> keep;
  Ring ring;
  if (runtimeK && (!(keep = l.allocate({GRF1, GRF0, LM0, LM1},
                                       int32_t((diagonals + 7) / 8 * 8))) ||
                   !ring.allocate(l, {GRF1, GRF0, LM0, LM1})))
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  if (runtimeK) {
    Slot kSlot{kImage->memory, kImage->wordOf(std::vector<int64_t>(
                                   kImage->form.shape.size(), 0))};
    for (int64_t d = -(rows - 1); d < columns; ++d) {
      Slot s = keep->offset(int32_t(d + rows - 1));
      Slot diagonal = p.constantBits(uint32_t(int32_t(d)));
      if (upper)
        p.integer(ElemOpcode::ISub, s, diagonal, kSlot);
      else
        p.integer(ElemOpcode::ISub, s, kSlot, diagonal);
    }
  }
  std::vector<std::pair<Slot, Slot>> moves;
  forEachIndex(in.shape, [&](const std::vector<int64_t> &index) {
    int64_t i = index[index.size() - 2], j = index[index.size() - 1];
    Slot dst{y->memory, y->wordOf(index)}, src{x->memory, x->wordOf(index)};
    if (runtimeK) {
      selectBySign(l, ring, dst, keep->offset(int32_t(j - i + rows - 1)), src,
                   p.constantBits(0));
      return;
    }
    bool kept = upper ? j - i >= *k : j - i <= *k;
    if (kept)
      moves.push_back({dst, src});
    else
      p.zero(dst);
  });
  l.copyWords(moves);
  return true;
}

//===----------------------------------------------------------------------===//
// Copies with a compile-time index map
//===----------------------------------------------------------------------===//

/// out[index] = in[source(index)] for every output element.
bool lowerCopy(Lowering &l, const std::function<std::vector<int64_t>(
                                const std::vector<int64_t> &)> &source) {
  const KernelRequest &r = l.request();
  std::optional<ElementKind> in = kindOf(l, r.inputs[0], "the input");
  if (!in || !kindOf(l, r.outputs[0], "the output"))
    return false;
  if (r.inputs[0].form.type != r.outputs[0].form.type)
    return l.fail(r.opType + " keeps the element type");
  const PeImage *x = l.placeInput(0, {LM0, LM1});
  const PeImage *y = x ? l.placeOutput(0, {LM1, LM0}) : nullptr;
  if (!y)
    return false;
  l.loadInputs();
  std::vector<std::pair<Slot, Slot>> moves;
  forEachIndex(y->form.shape, [&](const std::vector<int64_t> &index) {
    moves.push_back(
        {{y->memory, y->wordOf(index)}, {x->memory, x->wordOf(source(index))}});
  });
  l.copyWords(moves);
  return true;
}

/// Unsqueeze, Squeeze: the same elements in row-major order (the output's
/// shape says where the axes went).
bool lowerSqueeze(Lowering &l) {
  if (!checkInputs(l, 1, 2) || !checkOutputs(l, 1))
    return false;
  const std::vector<int64_t> &in = l.request().inputs[0].form.shape;
  const std::vector<int64_t> &out = l.request().outputs[0].form.shape;
  if (elementCount(in) != elementCount(out))
    return l.fail("the output has " + std::to_string(elementCount(out)) +
                  " elements, the input " + std::to_string(elementCount(in)));
  return lowerCopy(l, [&](const std::vector<int64_t> &index) {
    int64_t position = 0;
    for (size_t d = 0; d < index.size(); ++d)
      position = position * out[d] + index[d];
    return unravel(position, in);
  });
}

/// Expand: the input broadcast to the output (the shape input only fixes
/// the output's shape, which the form holds).
bool lowerExpand(Lowering &l) {
  if (!checkInputs(l, 2, 2) || !checkOutputs(l, 1))
    return false;
  const std::vector<int64_t> &in = l.request().inputs[0].form.shape;
  const std::vector<int64_t> &out = l.request().outputs[0].form.shape;
  if (!broadcastsTo(in, out))
    return l.fail("the input " + shapeText(in) + " does not broadcast to " +
                  shapeText(out));
  return lowerCopy(l, [&](const std::vector<int64_t> &index) {
    return broadcastIndex(index, in);
  });
}

/// Tile: output index modulo the input's extents.
bool lowerTile(Lowering &l) {
  if (!checkInputs(l, 2, 2) || !checkOutputs(l, 1))
    return false;
  const std::vector<int64_t> &in = l.request().inputs[0].form.shape;
  const std::vector<int64_t> &out = l.request().outputs[0].form.shape;
  if (in.size() != out.size())
    return l.fail("Tile keeps the rank");
  for (size_t d = 0; d < in.size(); ++d)
    if (in[d] == 0 ? out[d] != 0 : out[d] % in[d] != 0)
      return l.fail("the output " + shapeText(out) +
                    " is not a tiling of the input " + shapeText(in));
  return lowerCopy(l, [&](const std::vector<int64_t> &index) {
    std::vector<int64_t> from(index.size());
    for (size_t d = 0; d < index.size(); ++d)
      from[d] = in[d] ? index[d] % in[d] : 0;
    return from;
  });
}

/// DepthToSpace (DCR and CRD) and SpaceToDepth on NCHW tensors.
bool lowerDepthSpace(Lowering &l) {
  if (!checkInputs(l, 1, 1) || !checkOutputs(l, 1))
    return false;
  const KernelRequest &r = l.request();
  const std::vector<int64_t> &in = r.inputs[0].form.shape;
  const std::vector<int64_t> &out = r.outputs[0].form.shape;
  int64_t b = r.getInt("blocksize", 0);
  bool toSpace = r.opType == "DepthToSpace";
  std::string mode = r.getString("mode", "DCR");
  if (in.size() != 4 || out.size() != 4 || b < 1)
    return l.fail(r.opType + " takes a 4-D tensor and a positive blocksize");
  if (toSpace && mode != "DCR" && mode != "CRD")
    return l.fail("DepthToSpace mode '" + mode + "' is unknown");
  std::vector<int64_t> expected =
      toSpace
          ? std::vector<int64_t>{in[0], in[1] / (b * b), in[2] * b, in[3] * b}
          : std::vector<int64_t>{in[0], in[1] * b * b, in[2] / b, in[3] / b};
  if ((toSpace ? in[1] % (b * b) : (in[2] % b) + (in[3] % b)) != 0 ||
      expected != out)
    return l.fail("the output shape " + shapeText(out) + " is not " + r.opType +
                  "'s " + shapeText(expected));
  return lowerCopy(l, [&](const std::vector<int64_t> &o) {
    if (toSpace) {
      int64_t c = o[1], bh = o[2] % b, bw = o[3] % b;
      int64_t channel =
          mode == "DCR" ? (bh * b + bw) * out[1] + c : c * b * b + bh * b + bw;
      return std::vector<int64_t>{o[0], channel, o[2] / b, o[3] / b};
    }
    int64_t block = o[1] / in[1], c = o[1] % in[1];
    return std::vector<int64_t>{o[0], c, o[2] * b + block / b,
                                o[3] * b + block % b};
  });
}

/// The constant `value` in the program's elements of `kind`: int32 bits
/// (`integer`) or a float of the compute type.
Slot constantOfKind(ElemProgram &p, ElementKind kind, double value,
                    int64_t integer) {
  return kind == ElementKind::Int ? p.constantBits(uint32_t(int32_t(integer)))
                                  : p.constant(value);
}

/// EyeLike: ones on the k-th diagonal of a 2-D output, zeros elsewhere
/// (the input gives only the shape). Any output type, double too: a copy
/// of the constant one or a zero per element.
bool lowerEyeLike(Lowering &l) {
  if (!checkInputs(l, 1, 1) || !checkOutputs(l, 1))
    return false;
  const KernelRequest &r = l.request();
  std::optional<ElementKind> kind =
      kindOf(l, r.outputs[0], "the output", /*allowDouble=*/true);
  if (!kind)
    return false;
  const std::vector<int64_t> &shape = r.outputs[0].form.shape;
  if (shape.size() != 2 || r.inputs[0].form.shape != shape)
    return l.fail("EyeLike takes and gives a 2-D tensor");
  int64_t k = r.getInt("k", 0);
  const PeImage *y = l.placeOutput(0, {LM1, LM0});
  if (!y)
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  forEachIndex(shape, [&](const std::vector<int64_t> &index) {
    Slot dst{y->memory, y->wordOf(index)};
    if (index[1] - index[0] != k)
      p.zero(dst);
    else
      p.copy(dst, constantOfKind(p, *kind, 1.0, 1));
  });
  return true;
}

/// ConstantOfShape whose output shape the model gives (declared or
/// inferred at compile time, as every device tensor's): the value
/// (attribute `value`, a one-element tensor; 0 without it) in every
/// element. The shape input's values are not read.
bool lowerConstantOfShape(Lowering &l) {
  if (!checkInputs(l, 1, 1) || !checkOutputs(l, 1))
    return false;
  const KernelRequest &r = l.request();
  std::optional<ElementKind> kind =
      kindOf(l, r.outputs[0], "the output", /*allowDouble=*/true);
  if (!kind)
    return false;
  double value = 0;
  int64_t integerValue = 0;
  auto found = r.attributes.find("value");
  if (found != r.attributes.end()) {
    const reference::Attribute &a = found->second;
    if (a.kind != reference::Attribute::Kind::Tensor || a.t.numElements() != 1)
      return l.fail("ConstantOfShape's value is a one-element tensor");
    value = a.t.elementAsDouble(0);
    integerValue = a.t.elementAsInt64(0);
  }
  const PeImage *y = l.placeOutput(0, {LM1, LM0});
  if (!y)
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  forEachIndex(r.outputs[0].form.shape, [&](const std::vector<int64_t> &index) {
    p.copy({y->memory, y->wordOf(index)},
           constantOfKind(p, *kind, value, integerValue));
  });
  return true;
}

/// Range whose output length the model gives (its inputs may be known only
/// at run time): y[i] = start + i delta, by one fma for floats (one
/// rounding), by running sums for int32 (exact).
bool lowerRange(Lowering &l) {
  if (!checkInputs(l, 3, 3) || !checkOutputs(l, 1))
    return false;
  const KernelRequest &r = l.request();
  std::optional<ElementKind> kind =
      kindOf(l, r.outputs[0], "the output", /*allowDouble=*/true);
  if (!kind)
    return false;
  for (size_t i = 0; i < 3; ++i) {
    std::optional<ElementKind> input =
        kindOf(l, r.inputs[i], "input " + std::to_string(i), true);
    if (!input)
      return false;
    if (*input != *kind || elementCount(r.inputs[i].form.shape) != 1)
      return l.fail("Range takes three scalars of its output's type");
  }
  if (r.outputs[0].form.shape.size() != 1)
    return l.fail("Range gives a 1-D tensor");
  const PeImage *start = l.placeInput(0, {GRF0, GRF1, LM0});
  const PeImage *delta = start ? l.placeInput(2, {LM0, GRF1, GRF0}) : nullptr;
  const PeImage *y = delta ? l.placeOutput(0, {LM1, LM0}) : nullptr;
  if (!y)
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  auto scalar = [](const PeImage *image) {
    return Slot{image->memory, image->wordOf(std::vector<int64_t>(
                                   image->form.shape.size(), 0))};
  };
  Slot first = scalar(start), step = scalar(delta), previous;
  for (int64_t i = 0; i < r.outputs[0].form.shape[0]; ++i) {
    Slot dst{y->memory, y->wordOf({i})};
    if (i == 0)
      p.copy(dst, first);
    else if (*kind == ElementKind::Int)
      p.integer(ElemOpcode::IAdd, dst, previous, step);
    else
      p.fma(dst, p.constant(double(i)), step, first);
    previous = dst;
  }
  return true;
}

/// Dropout where nothing is dropped: in inference (training_mode absent or
/// a constant 0), or with a constant ratio of 0. The output is the input,
/// the mask (if asked for) all true.
bool lowerDropout(Lowering &l) {
  if (!checkInputs(l, 1, 3))
    return false;
  const KernelRequest &r = l.request();
  bool training = false;
  if (r.hasInput(2)) {
    std::optional<std::vector<int64_t>> mode = constantInts(r.inputs[2]);
    if (!mode || mode->size() != 1)
      return l.fail("Dropout's training_mode must be a constant");
    training = (*mode)[0] != 0;
  }
  if (training) {
    const reference::Tensor *ratio =
        r.hasInput(1) ? r.inputs[1].constant : nullptr;
    if (!ratio || ratio->numElements() != 1 || ratio->elementAsDouble(0) != 0)
      return l.fail("Dropout in training mode drops at random (only a "
                    "constant ratio of 0 runs on the device)");
  }
  bool wantMask = r.outputs.size() > 1 && !r.outputs[1].omitted;
  if (r.outputs.empty() || r.outputs[0].omitted)
    return l.fail("Dropout's output is required");
  std::optional<ElementKind> kind = kindOf(l, r.inputs[0], "the input");
  if (!kind || !kindOf(l, r.outputs[0], "the output"))
    return false;
  if (r.inputs[0].form.type != r.outputs[0].form.type ||
      r.inputs[0].form.shape != r.outputs[0].form.shape)
    return l.fail("Dropout's output is its input");
  if (wantMask && (r.outputs[1].form.type != DeviceType::Int32 ||
                   r.outputs[1].form.shape != r.outputs[0].form.shape))
    return l.fail("Dropout's mask is a bool tensor shaped as the data");
  const PeImage *x = l.placeInput(0, {LM0, LM1});
  const PeImage *y = x ? l.placeOutput(0, {LM1, LM0}) : nullptr;
  const PeImage *mask = y && wantMask ? l.placeOutput(1, {LM0, LM1}) : nullptr;
  if (!y || (wantMask && !mask))
    return false;
  l.loadInputs();
  std::vector<std::pair<Slot, Slot>> moves;
  forEachIndex(y->form.shape, [&](const std::vector<int64_t> &index) {
    moves.push_back(
        {{y->memory, y->wordOf(index)}, {x->memory, x->wordOf(index)}});
    if (mask)
      l.program().copy({mask->memory, mask->wordOf(index)},
                       l.program().constantBits(1));
  });
  l.copyWords(moves);
  return true;
}

//===----------------------------------------------------------------------===//
// NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
//===----------------------------------------------------------------------===//

/// The loss of every position (n, d...) from log-probabilities `logProb`
/// ([N, C, d...], words at logProbWord(index)) and the targets: -lp[n,
/// t, d] w[t] (0 where t is ignore_index), then the reduction.
bool lossFromLogProb(
    Lowering &l, const std::vector<int64_t> &inShape,
    const std::function<Slot(const std::vector<int64_t> &)> &logProbAt,
    const PeImage &target, const PeImage *weight, const PeImage &y,
    std::optional<Slot> losses, std::optional<Slot> weightSum, Ring &ring) {
  const KernelRequest &r = l.request();
  ElemProgram &p = l.program();
  std::string reduction = r.getString("reduction", "mean");
  std::optional<int64_t> ignore;
  if (r.hasAttribute("ignore_index"))
    ignore = r.getInt("ignore_index", 0);
  int64_t classes = inShape[1];
  std::vector<int64_t> positions = target.form.shape;
  int64_t position = 0;
  std::vector<Slot> masks, values, weights;
  forEachIndex(positions, [&](const std::vector<int64_t> &at) {
    Slot t{target.memory, target.wordOf(at)};
    masks.clear();
    values.clear();
    weights.clear();
    std::vector<int64_t> index = at;
    index.insert(index.begin() + 1, 0);
    for (int64_t k = 0; k < classes; ++k) {
      // The ignored class picks nothing (0, the weight 0).
      if (ignore && *ignore == k)
        continue;
      Slot mask = ring.take();
      equalMask(p, mask, t, k);
      masks.push_back(mask);
      index[1] = k;
      values.push_back(logProbAt(index));
      if (weight)
        weights.push_back({weight->memory, weight->wordOf({k})});
    }
    // Without weights every class weighs 1 (the constant asked for after
    // the masks' constants, which may recycle pool entries).
    if (!weight)
      weights.assign(masks.size(), p.constant(1.0));
    Slot picked = ring.take(), w = ring.take();
    pick(l, ring, picked, masks, values, ElementKind::Float);
    pick(l, ring, w, masks, weights, ElementKind::Float);
    Slot dst = reduction == "none" ? Slot{y.memory, y.wordOf(at)}
                                   : losses->offset(int32_t(position));
    // -(lp w): the product's negation is exact.
    p.mul(dst, picked, w);
    p.integer(ElemOpcode::IXor, dst, dst, p.constantBits(kSignBit));
    if (weightSum) {
      if (position == 0)
        p.copy(*weightSum, w);
      else
        p.add(*weightSum, *weightSum, w);
    }
    ++position;
  });
  if (reduction == "none")
    return true;
  Slot out{y.memory, y.wordOf({})};
  std::vector<Slot> all;
  for (int64_t i = 0; i < position; ++i)
    all.push_back(losses->offset(int32_t(i)));
  l.fold(out, all, Lowering::Fold::Sum);
  if (reduction == "mean") {
    // sum / sum of the weights picked (the count without weights or an
    // ignored class).
    if (!l.math(MathFunction::Reciprocal, {*weightSum}, *weightSum, 8))
      return false;
    p.mul(out, out, *weightSum);
  }
  return true;
}

/// Checks the loss operators' shapes and types and places what both share:
/// the target (int32) and the optional weight [C], the output, the
/// per-position losses and the weight sum (reductions), the ring.
struct LossPlan {
  const PeImage *target = nullptr, *weight = nullptr, *y = nullptr;
  std::optional<Slot> losses, weightSum;
  Ring ring;
};

bool planLoss(Lowering &l, size_t inputCount, LossPlan &plan,
              const std::function<bool()> &placeScores) {
  const KernelRequest &r = l.request();
  const DramForm &scores = r.inputs[0].form;
  std::optional<ElementKind> kind = kindOf(l, r.inputs[0], "the scores");
  if (!kind || !kindOf(l, r.outputs[0], "the output"))
    return false;
  if (*kind != ElementKind::Float)
    return l.fail(r.opType + " takes floating scores");
  if (r.inputs[1].form.type != DeviceType::Int32)
    return l.fail(r.opType + "'s target is an integer tensor");
  if (scores.shape.size() < 2)
    return l.fail(r.opType + " takes scores of rank 2 or more");
  std::vector<int64_t> positions = scores.shape;
  positions.erase(positions.begin() + 1);
  if (r.inputs[1].form.shape != positions)
    return l.fail("the target " + shapeText(r.inputs[1].form.shape) +
                  " is not shaped as the scores without C " +
                  shapeText(positions));
  bool weighted = inputCount > 2 && r.hasInput(2);
  if (weighted &&
      r.inputs[2].form.shape != std::vector<int64_t>{scores.shape[1]})
    return l.fail("the weight is a [C] vector");
  std::string reduction = r.getString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return l.fail("reduction '" + reduction + "' is unknown");
  std::vector<int64_t> expected =
      reduction == "none" ? positions : std::vector<int64_t>{};
  if (r.outputs[0].form.shape != expected)
    return l.fail("the output shape " + shapeText(r.outputs[0].form.shape) +
                  " is not the loss's " + shapeText(expected));
  if (!placeScores())
    return false;
  // The small operands in LM first: SoftmaxCrossEntropyLoss's MathLib
  // needs its scratch in both GRFs.
  plan.target = l.placeInput(1, {LM1, LM0, GRF0, GRF1});
  if (!plan.target)
    return false;
  if (weighted && !(plan.weight = l.placeInput(2, {LM1, LM0, GRF0, GRF1})))
    return false;
  if (!(plan.y = l.placeOutput(0, {LM1, LM0})))
    return false;
  int64_t count = elementCount(positions);
  if (reduction != "none" &&
      !(plan.losses =
            l.allocate({LM0, LM1, GRF0, GRF1}, int32_t((count + 7) / 8 * 8))))
    return false;
  // The weight sum in LM: MathLib's reciprocal runs over LM blocks.
  if (reduction == "mean" && !(plan.weightSum = l.allocate({LM0, LM1}, 8)))
    return false;
  int64_t classes = scores.shape[1];
  return plan.ring.allocate(
      l, {GRF1, GRF0, LM0, LM1},
      int32_t(std::max<int64_t>(64, (4 * classes + 16 + 7) / 8 * 8)));
}

bool lowerNllLoss(Lowering &l) {
  if (!checkInputs(l, 2, 3) || !checkOutputs(l, 1))
    return false;
  const PeImage *x = nullptr;
  LossPlan plan;
  if (!planLoss(l, 3, plan, [&] {
        return (x = l.placeInput(0, {LM0, LM1})) != nullptr;
      }))
    return false;
  if (plan.weightSum && !l.reserveMath({MathFunction::Reciprocal}))
    return false;
  l.loadInputs();
  return lossFromLogProb(
      l, x->form.shape,
      [&](const std::vector<int64_t> &index) {
        return Slot{x->memory, x->wordOf(index)};
      },
      *plan.target, plan.weight, *plan.y, plan.losses, plan.weightSum,
      plan.ring);
}

/// SoftmaxCrossEntropyLoss: log-softmax over C per position (the maximum
/// m, d = x - m, exp over d, the sum s, log s, lp = d - log s), into the
/// log_prob output when asked for, then the NLL loss.
bool lowerSoftmaxCrossEntropy(Lowering &l) {
  const KernelRequest &r = l.request();
  bool wantLogProb = r.outputs.size() > 1 && !r.outputs[1].omitted;
  if (!checkInputs(l, 2, 3) || !checkOutputs(l, wantLogProb ? 2 : 1))
    return false;
  const DramForm &scores = r.inputs[0].form;
  if (wantLogProb && r.outputs[1].form.shape != scores.shape)
    return l.fail("log_prob is shaped as the scores");
  const PeImage *x = nullptr, *logProbImage = nullptr;
  LossPlan plan;
  if (!planLoss(l, 3, plan, [&] {
        return (x = l.placeInput(0, {LM0, LM1})) != nullptr;
      }))
    return false;
  int64_t count = elementCount(scores.shape);
  int64_t classes = scores.shape.size() > 1 ? scores.shape[1] : 1;
  int64_t positions = count / std::max<int64_t>(classes, 1);
  int32_t countWords = int32_t((count + 7) / 8 * 8);
  int32_t positionWords = int32_t((positions + 7) / 8 * 8);
  // d = x - m (dense, or the log_prob output's words), e = exp(d) (LM),
  // s per position (LM), m per position (a GRF).
  std::optional<Slot> shifted;
  if (wantLogProb) {
    if (!(logProbImage = l.placeOutput(1, {LM0, LM1})))
      return false;
  } else if (!(shifted = l.allocate({LM0, LM1, GRF0, GRF1}, countWords))) {
    return false;
  }
  std::optional<Slot> exps = l.allocate({LM1, LM0}, countWords);
  std::optional<Slot> sums = l.allocate({LM0, LM1}, positionWords);
  std::optional<Slot> maxima =
      l.allocate({LM0, LM1, GRF0, GRF1}, positionWords);
  if (!exps || !sums || !maxima ||
      !l.reserveMath(
          {MathFunction::Exp, MathFunction::Log, MathFunction::Reciprocal}))
    return false;
  l.loadInputs();
  ElemProgram &p = l.program();
  // The dense index of element (n, c, d...): its row-major position.
  auto dense = [&](const std::vector<int64_t> &index) {
    int64_t flat = 0;
    for (size_t d = 0; d < index.size(); ++d)
      flat = flat * scores.shape[d] + index[d];
    return int32_t(flat);
  };
  auto logProbAt = [&](const std::vector<int64_t> &index) {
    return logProbImage
               ? Slot{logProbImage->memory, logProbImage->wordOf(index)}
               : shifted->offset(dense(index));
  };
  std::vector<int64_t> rowShape = scores.shape;
  rowShape[1] = 1;
  std::vector<std::vector<std::vector<int64_t>>> rows;
  forEachIndex(rowShape, [&](const std::vector<int64_t> &row) {
    std::vector<std::vector<int64_t>> members;
    std::vector<int64_t> at = row;
    for (int64_t c = 0; c < classes; ++c) {
      at[1] = c;
      members.push_back(at);
    }
    rows.push_back(std::move(members));
  });
  for (size_t n = 0; n < rows.size(); ++n) {
    std::vector<Slot> members;
    for (const auto &index : rows[n])
      members.push_back({x->memory, x->wordOf(index)});
    Slot m = maxima->offset(int32_t(n));
    l.fold(m, members, Lowering::Fold::Max);
    for (const auto &index : rows[n]) {
      p.add(logProbAt(index), {x->memory, x->wordOf(index)}, m, true);
      p.copy(exps->offset(dense(index)), logProbAt(index));
    }
  }
  if (!l.math(MathFunction::Exp, {*exps}, *exps, countWords))
    return false;
  for (size_t n = 0; n < rows.size(); ++n) {
    std::vector<Slot> terms;
    for (const auto &index : rows[n])
      terms.push_back(exps->offset(dense(index)));
    l.fold(sums->offset(int32_t(n)), terms, Lowering::Fold::Sum);
  }
  if (!l.math(MathFunction::Log, {*sums}, *sums, positionWords))
    return false;
  for (size_t n = 0; n < rows.size(); ++n)
    for (const auto &index : rows[n])
      p.add(logProbAt(index), logProbAt(index), sums->offset(int32_t(n)), true);
  return lossFromLogProb(l, scores.shape, logProbAt, *plan.target, plan.weight,
                         *plan.y, plan.losses, plan.weightSum, plan.ring);
}

//===----------------------------------------------------------------------===//
// CumSum
//===----------------------------------------------------------------------===//

/// CumSum along a constant axis, the only axis of a rank-1 tensor, or an
/// axis known only at run time: then the sums along every axis, each in a
/// block of its own, and per element the one the axis names, selected as
/// the file's header says (in a double program `frelu` is `drelu`, which
/// tests bit 63: the mask word is the long word's high one).
bool lowerCumSum(Lowering &l) {
  if (!checkInputs(l, 2, 2) || !checkOutputs(l, 1))
    return false;
  const KernelRequest &r = l.request();
  // Adds, copies and frelu have double forms (G13).
  std::optional<ElementKind> kind = kindOf(l, r.inputs[0], "input 0", true);
  if (!kind || !kindOf(l, r.outputs[0], "the output", true))
    return false;
  const DramForm &in = r.inputs[0].form;
  int64_t rank = int64_t(in.shape.size());
  if (in.shape != r.outputs[0].form.shape || rank == 0)
    return l.fail("CumSum takes a tensor of rank 1 or more, and gives its "
                  "shape");
  if (elementCount(r.inputs[1].form.shape) != 1)
    return l.fail("CumSum's axis is a scalar");
  bool exclusive = r.getInt("exclusive", 0) != 0;
  bool reverse = r.getInt("reverse", 0) != 0;
  bool integer = *kind == ElementKind::Int;
  std::vector<int64_t> axes;
  bool runtimeAxis = false;
  if (std::optional<std::vector<int64_t>> given = constantInts(r.inputs[1])) {
    int64_t axis = (*given)[0];
    if (axis < -rank || axis >= rank)
      return l.fail("axis " + std::to_string(axis) + " is out of range");
    axes.push_back(axis < 0 ? axis + rank : axis);
  } else if (rank == 1) {
    axes.push_back(0);
  } else {
    if (r.inputs[1].form.type != DeviceType::Int32)
      return l.fail("CumSum's runtime axis must be an integer");
    runtimeAxis = true;
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  const PeImage *x = l.placeInput(0, {LM0, LM1});
  const PeImage *axisImage =
      x && runtimeAxis ? l.placeInput(1, {GRF0, GRF1, LM1, LM0}) : nullptr;
  if (!x || (runtimeAxis && !axisImage))
    return false;
  const PeImage *y = l.placeOutput(0, {LM1, LM0});
  if (!y)
    return false;
  std::vector<Slot> sums;
  std::optional<Slot> masks;
  Ring ring;
  if (runtimeAxis) {
    for (int64_t d = 0; d < rank; ++d) {
      std::optional<Slot> block =
          l.allocate({LM0, LM1, GRF0, GRF1}, y->words());
      if (!block)
        return l.fail("CumSum's sums along each axis do not fit the PE "
                      "memories left (" +
                      l.roomLeft() + ")");
      sums.push_back(*block);
    }
    masks =
        l.allocate({GRF1, GRF0, LM0, LM1}, int32_t(rank) * l.elementWords());
    if (!masks || !ring.allocate(l, {GRF1, GRF0, LM0, LM1}))
      return false;
  } else {
    sums.push_back({y->memory, y->word});
  }
  l.loadInputs();
  ElemProgram &p = l.program();
  auto add = [&](Slot dst, Slot a, Slot b) {
    if (integer)
      p.integer(ElemOpcode::IAdd, dst, a, b);
    else
      p.add(dst, a, b);
  };
  for (size_t c = 0; c < axes.size(); ++c) {
    int64_t axis = axes[c];
    int64_t extent = in.shape[size_t(axis)];
    std::vector<int64_t> lines = in.shape;
    lines[size_t(axis)] = 1;
    forEachIndex(lines, [&](const std::vector<int64_t> &start) {
      std::vector<int64_t> index = start;
      auto at = [&](int64_t k) {
        index[size_t(axis)] = reverse ? extent - 1 - k : k;
        return std::make_pair(sums[c].offset(y->wordOf(index) - y->word),
                              Slot{x->memory, x->wordOf(index)});
      };
      Slot previousSum, previousX;
      for (int64_t k = 0; k < extent; ++k) {
        auto [sum, source] = at(k);
        if (k == 0 && exclusive)
          p.zero(sum);
        else if (k == 0)
          p.copy(sum, source);
        else
          add(sum, previousSum, exclusive ? previousX : source);
        previousSum = sum;
        previousX = source;
      }
    });
  }
  if (!runtimeAxis)
    return true;
  // The mask of axis d: sign clear where the axis is d or d - rank.
  Slot axisSlot{axisImage->memory, axisImage->wordOf(std::vector<int64_t>(
                                       axisImage->form.shape.size(), 0))};
  for (int64_t d = 0; d < rank; ++d) {
    Slot mask = l.element(*masks, d), a = ring.take(), b = ring.take();
    p.integer(ElemOpcode::IXor, a, axisSlot,
              p.constantBits(uint32_t(int32_t(d))));
    p.integer(ElemOpcode::ILNot, a, a, a);
    p.integer(ElemOpcode::IXor, b, axisSlot,
              p.constantBits(uint32_t(int32_t(d - rank))));
    p.integer(ElemOpcode::ILNot, b, b, b);
    p.integer(ElemOpcode::IOr, a, a, b);
    p.integer(ElemOpcode::ISub, mask, a, p.constantBits(1));
  }
  forEachIndex(in.shape, [&](const std::vector<int64_t> &index) {
    int32_t offset = y->wordOf(index) - y->word;
    Slot dst{y->memory, y->wordOf(index)};
    for (int64_t d = 0; d < rank; ++d) {
      Slot picked = d == 0 ? dst : ring.take();
      ElemOp relu;
      relu.opcode = ElemOpcode::Relu;
      relu.dst = picked;
      relu.src[0] = l.element(*masks, d);
      relu.src[1] = sums[size_t(d)].offset(offset);
      p.record(relu);
      if (d == 0)
        continue;
      // Floats: the others are -0, which adds exactly; int32: the sign
      // pattern, xored away below.
      if (integer)
        p.integer(ElemOpcode::IXor, dst, dst, picked);
      else
        p.add(dst, dst, picked);
    }
    if (integer && (rank - 1) % 2)
      p.integer(ElemOpcode::IXor, dst, dst, p.constantBits(kSignBit));
  });
  return true;
}

//===----------------------------------------------------------------------===//
// ScatterElements, ScatterND
//===----------------------------------------------------------------------===//

/// The update of one target element by `reduction` (none, add, mul, max,
/// min) into `combined`; false when the kind has no such operation.
bool combineUpdate(ElemProgram &p, const std::string &reduction,
                   ElementKind kind, Slot combined, Slot target, Slot update) {
  bool integer = kind == ElementKind::Int;
  if (reduction == "none")
    p.copy(combined, update);
  else if (reduction == "add" && integer)
    p.integer(ElemOpcode::IAdd, combined, target, update);
  else if (reduction == "add")
    p.add(combined, target, update);
  else if (reduction == "mul" && !integer)
    p.mul(combined, target, update);
  else if (reduction == "max")
    integer ? p.integer(ElemOpcode::IMax, combined, target, update)
            : p.max(combined, target, update);
  else if (reduction == "min")
    integer ? p.integer(ElemOpcode::IMin, combined, target, update)
            : p.min(combined, target, update);
  else
    return false;
  return true;
}

/// The checks ScatterElements and ScatterND share: three inputs (data,
/// int32 indices, updates of the data's kind), the data's shape out, and a
/// reduction the kind has; the kind, or nullopt after fail().
std::optional<ElementKind> checkScatter(Lowering &l, std::string &reduction) {
  if (!checkInputs(l, 3, 3) || !checkOutputs(l, 1))
    return std::nullopt;
  const KernelRequest &r = l.request();
  std::optional<ElementKind> kind = kindOf(l, r.inputs[0], "the data");
  std::optional<ElementKind> updateKind =
      kind ? kindOf(l, r.inputs[2], "the updates") : std::nullopt;
  if (!updateKind || !kindOf(l, r.outputs[0], "the output"))
    return std::nullopt;
  if (*updateKind != *kind || r.inputs[1].form.type != DeviceType::Int32 ||
      r.outputs[0].form.shape != r.inputs[0].form.shape ||
      r.inputs[1].form.shape.empty()) {
    l.fail(r.opType + " takes int32 indices, updates of the data's type, "
                      "and gives the data's shape");
    return std::nullopt;
  }
  reduction = r.getString("reduction", "none");
  // Whether the reduction exists for the kind, recording nothing.
  ElemProgram &p = l.program();
  bool recording = p.recording();
  p.setRecording(false);
  bool supported = combineUpdate(p, reduction, *kind, Slot{}, Slot{}, Slot{});
  p.setRecording(recording);
  if (!supported) {
    l.fail(r.opType + "'s reduction '" + reduction + "' is not supported for " +
           (*kind == ElementKind::Int ? "int32" : "floating") + " tensors");
    return std::nullopt;
  }
  return kind;
}

/// Y = X, element by element (the scatters' start).
void copyImage(Lowering &l, const PeImage &x, const PeImage &y) {
  std::vector<std::pair<Slot, Slot>> moves;
  forEachIndex(x.form.shape, [&](const std::vector<int64_t> &index) {
    moves.push_back({{y.memory, y.wordOf(index)}, {x.memory, x.wordOf(index)}});
  });
  l.copyWords(moves);
}

/// Where a scatter's operands live: the data, the updates, the indices
/// (read at run time only; null for constant ones) and the output.
struct ScatterImages {
  const PeImage *data = nullptr, *updates = nullptr, *indices = nullptr,
                *output = nullptr;
};

bool placeScatter(Lowering &l, bool constantIndices, ScatterImages &images) {
  images.data = l.placeInput(0, {LM0, LM1});
  images.updates =
      images.data ? l.placeInput(2, {GRF0, GRF1, LM0, LM1}) : nullptr;
  images.indices = images.updates && !constantIndices
                       ? l.placeInput(1, {GRF1, GRF0, LM0, LM1})
                       : nullptr;
  if (!images.updates || (!constantIndices && !images.indices))
    return false;
  images.output = l.placeOutput(0, {LM1, LM0});
  return images.output != nullptr;
}

/// ScatterElements (and the older Scatter): the data copied, then each
/// update in order into the element its index names along the axis, so
/// that duplicate indices reduce (or the last wins) as the reference does.
/// A runtime index compares with each position k of the axis and selects
/// the updated value where equal (extent selections per update).
bool lowerScatterElements(Lowering &l) {
  std::string reduction;
  std::optional<ElementKind> kind = checkScatter(l, reduction);
  if (!kind)
    return false;
  const KernelRequest &r = l.request();
  const DramForm &data = r.inputs[0].form, &indices = r.inputs[1].form,
                 &updates = r.inputs[2].form;
  if (indices.shape != updates.shape ||
      indices.shape.size() != data.shape.size())
    return l.fail(r.opType + "'s indices and updates have one shape, of the "
                             "data's rank");
  int64_t rank = int64_t(data.shape.size());
  int64_t axis = r.getInt("axis", 0);
  if (rank == 0 || axis < -rank || axis >= rank)
    return l.fail("axis " + std::to_string(axis) + " is out of range");
  axis = normaliseAxis(axis, rank);
  int64_t extent = data.shape[size_t(axis)];
  ElemProgram &p = l.program();
  std::optional<std::vector<int64_t>> known = constantInts(r.inputs[1]);
  if (known)
    for (int64_t v : *known)
      if (v < -extent || v >= extent)
        return l.fail("index " + std::to_string(v) + " is out of range [" +
                      std::to_string(-extent) + ", " + std::to_string(extent) +
                      ")");
  ScatterImages images;
  if (!placeScatter(l, bool(known), images))
    return false;
  const PeImage *x = images.data, *u = images.updates, *ix = images.indices,
                *y = images.output;
  Ring ring;
  if (!ring.allocate(l, {GRF1, GRF0, LM0, LM1},
                     int32_t(std::max<int64_t>(64, (5 * extent + 23) / 8 * 8))))
    return false;
  l.loadInputs();
  copyImage(l, *x, *y);
  int64_t flat = 0;
  forEachIndex(indices.shape, [&](const std::vector<int64_t> &index) {
    Slot update{u->memory, u->wordOf(index)};
    std::vector<int64_t> target = index;
    if (known) {
      int64_t k = (*known)[size_t(flat++)];
      target[size_t(axis)] = k < 0 ? k + extent : k;
      Slot t{y->memory, y->wordOf(target)};
      combineUpdate(p, reduction, *kind, t, t, update);
      return;
    }
    Slot wrapped = ring.take();
    wrapNegative(l, ring, wrapped, {ix->memory, ix->wordOf(index)}, extent);
    for (int64_t k = 0; k < extent; ++k) {
      target[size_t(axis)] = k;
      Slot t{y->memory, y->wordOf(target)};
      Slot mask = ring.take(), combined = ring.take();
      equalMask(p, mask, wrapped, k);
      combineUpdate(p, reduction, *kind, combined, t, update);
      selectBySign(l, ring, t, mask, combined, t);
    }
  });
  return true;
}

/// ScatterND: the data copied, then each index tuple's slice of updates
/// in order. A runtime tuple compares with every prefix of the data's
/// first q dimensions (the mask: every component equal) and selects the
/// updated slice where it matches.
bool lowerScatterND(Lowering &l) {
  std::string reduction;
  std::optional<ElementKind> kind = checkScatter(l, reduction);
  if (!kind)
    return false;
  const KernelRequest &r = l.request();
  const DramForm &data = r.inputs[0].form, &indices = r.inputs[1].form,
                 &updates = r.inputs[2].form;
  int64_t q = indices.shape.back();
  int64_t rank = int64_t(data.shape.size());
  if (q < 1 || q > rank)
    return l.fail("ScatterND's index depth " + std::to_string(q) +
                  " is not in [1, " + std::to_string(rank) + "]");
  std::vector<int64_t> tuples(indices.shape.begin(), indices.shape.end() - 1);
  std::vector<int64_t> prefix(data.shape.begin(), data.shape.begin() + q);
  std::vector<int64_t> slice(data.shape.begin() + q, data.shape.end());
  std::vector<int64_t> expected = tuples;
  expected.insert(expected.end(), slice.begin(), slice.end());
  if (updates.shape != expected)
    return l.fail("ScatterND's updates are shaped " + shapeText(expected) +
                  ", not " + shapeText(updates.shape));
  ElemProgram &p = l.program();
  std::optional<std::vector<int64_t>> known = constantInts(r.inputs[1]);
  if (known)
    for (size_t i = 0; i < known->size(); ++i) {
      int64_t extent = prefix[i % size_t(q)], v = (*known)[i];
      if (v < -extent || v >= extent)
        return l.fail("index " + std::to_string(v) + " is out of range");
    }
  ScatterImages images;
  if (!placeScatter(l, bool(known), images))
    return false;
  const PeImage *x = images.data, *u = images.updates, *ix = images.indices,
                *y = images.output;
  int64_t prefixes = elementCount(prefix);
  std::optional<Slot> wrapped, masks;
  Ring ring;
  if (!known && (!(wrapped = l.allocate({GRF1, GRF0, LM0, LM1},
                                        int32_t((q + 7) / 8 * 8))) ||
                 !(masks = l.allocate({GRF1, GRF0, LM0, LM1},
                                      int32_t((prefixes + 7) / 8 * 8)))))
    return false;
  if (!ring.allocate(l, {GRF1, GRF0, LM0, LM1}))
    return false;
  l.loadInputs();
  copyImage(l, *x, *y);
  auto concat = [](std::vector<int64_t> a, const std::vector<int64_t> &b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  int64_t flat = 0;
  forEachIndex(tuples, [&](const std::vector<int64_t> &tuple) {
    if (known) {
      std::vector<int64_t> at;
      for (int64_t c = 0; c < q; ++c) {
        int64_t v = (*known)[size_t(flat * q + c)];
        at.push_back(v < 0 ? v + prefix[size_t(c)] : v);
      }
      ++flat;
      forEachIndex(slice, [&](const std::vector<int64_t> &s) {
        Slot t{y->memory, y->wordOf(concat(at, s))};
        combineUpdate(p, reduction, *kind, t, t,
                      {u->memory, u->wordOf(concat(tuple, s))});
      });
      return;
    }
    for (int64_t c = 0; c < q; ++c) {
      std::vector<int64_t> component = tuple;
      component.push_back(c);
      wrapNegative(l, ring, wrapped->offset(int32_t(c)),
                   {ix->memory, ix->wordOf(component)}, prefix[size_t(c)]);
    }
    int64_t position = 0;
    forEachIndex(prefix, [&](const std::vector<int64_t> &at) {
      // 1 where every component equals, then the mask (clear where so).
      Slot all = masks->offset(int32_t(position++));
      for (int64_t c = 0; c < q; ++c) {
        Slot e = c == 0 ? all : ring.take();
        p.integer(ElemOpcode::IXor, e, wrapped->offset(int32_t(c)),
                  p.constantBits(uint32_t(int32_t(at[size_t(c)]))));
        p.integer(ElemOpcode::ILNot, e, e, e);
        if (c)
          p.integer(ElemOpcode::IAnd, all, all, e);
      }
      p.integer(ElemOpcode::ISub, all, all, p.constantBits(1));
      forEachIndex(slice, [&](const std::vector<int64_t> &s) {
        Slot t{y->memory, y->wordOf(concat(at, s))}, combined = ring.take();
        combineUpdate(p, reduction, *kind, combined, t,
                      {u->memory, u->wordOf(concat(tuple, s))});
        selectBySign(l, ring, t, all, combined, t);
      });
    });
  });
  return true;
}

struct IndexOp {
  const char *opType;
  LoweringFn lower;
};

const IndexOp kIndexOps[] = {
    {"Gather", lowerGather},
    {"GatherElements", lowerGather},
    {"ArgMax", lowerArgExtreme},
    {"ArgMin", lowerArgExtreme},
    {"Hardmax", lowerHardmax},
    {"OneHot", lowerOneHot},
    {"Trilu", lowerTrilu},
    {"CumSum", lowerCumSum},
    {"ScatterElements", lowerScatterElements},
    {"Scatter", lowerScatterElements},
    {"ScatterND", lowerScatterND},
    {"Unsqueeze", lowerSqueeze},
    {"Squeeze", lowerSqueeze},
    {"Expand", lowerExpand},
    {"Tile", lowerTile},
    {"DepthToSpace", lowerDepthSpace},
    {"SpaceToDepth", lowerDepthSpace},
    {"Dropout", lowerDropout},
    {"EyeLike", lowerEyeLike},
    {"ConstantOfShape", lowerConstantOfShape},
    {"Range", lowerRange},
    {"NegativeLogLikelihoodLoss", lowerNllLoss},
    {"SoftmaxCrossEntropyLoss", lowerSoftmaxCrossEntropy},
};

} // namespace

LoweringFn general::findIndexLowering(const std::string &opType) {
  for (const IndexOp &op : kIndexOps)
    if (opType == op.opType)
      return op.lower;
  return nullptr;
}
