//===- GeneralLowering.cpp - Checks and operands the operators share -----===//
//
// The helpers GeneralLowering.h declares for every operator file of the
// general kernel (GeneralOps, GeneralLinear, GeneralMath, GeneralIndex):
// input and output counts, constant integers, broadcast operands,
// reduction axes.
//
//===----------------------------------------------------------------------===//

#include "GeneralLowering.h"

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::general;

bool general::checkInputs(Lowering &l, size_t least, size_t most) {
  const KernelRequest &r = l.request();
  if (r.inputs.size() < least || r.inputs.size() > most)
    return l.fail(r.opType + " takes " + std::to_string(least) + " to " +
                  std::to_string(most) + " inputs, not " +
                  std::to_string(r.inputs.size()));
  for (size_t i = 0; i < least; ++i)
    if (r.inputs[i].omitted)
      return l.fail("input " + std::to_string(i) + " is required");
  return true;
}

bool general::checkOutputs(Lowering &l, size_t count) {
  const KernelRequest &r = l.request();
  size_t present = 0;
  for (size_t o = 0; o < r.outputs.size(); ++o)
    if (!r.outputs[o].omitted)
      present = o + 1;
  if (present != count)
    return l.fail(r.opType + " with " + std::to_string(present) +
                  " outputs is not supported (" + std::to_string(count) +
                  " expected)");
  return true;
}

std::optional<std::vector<int64_t>>
general::constantInts(const KernelTensor &tensor) {
  if (!tensor.constant)
    return std::nullopt;
  std::vector<int64_t> values;
  for (int64_t i = 0; i < tensor.constant->numElements(); ++i)
    values.push_back(tensor.constant->elementAsInt64(i));
  return values;
}

Slot Operand::at(const std::vector<int64_t> &index) const {
  if (!image)
    return fixed;
  return {image->memory,
          image->wordOf(broadcastIndex(index, image->form.shape))};
}

bool general::broadcastsTo(const std::vector<int64_t> &shape,
                           const std::vector<int64_t> &to) {
  if (shape.size() > to.size())
    return false;
  size_t offset = to.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1 && shape[d] != to[offset + d])
      return false;
  return true;
}

bool general::resolveAxes(Lowering &l, std::optional<size_t> axesInput,
                          std::vector<bool> &reduced) {
  const KernelRequest &r = l.request();
  const DramForm &in = r.inputs[0].form, &out = r.outputs[0].form;
  int64_t rank = int64_t(in.shape.size());
  bool keepDims = r.getInt("keepdims", 1) != 0;
  bool noop = r.getInt("noop_with_empty_axes", 0) != 0;
  std::vector<int64_t> axes = r.getInts("axes");
  if (axesInput && r.hasInput(*axesInput)) {
    const KernelTensor &given = r.inputs[*axesInput];
    if (std::optional<std::vector<int64_t>> values = constantInts(given)) {
      axes = *values;
    } else if (elementCount(given.form.shape) == 0) {
      axes.clear();
    } else if (keepDims && out.shape.size() == in.shape.size()) {
      // Not known at compile time, but a kept dimension of extent 1 whose
      // input is longer can only be reduced, and one of extent 1 gives the
      // same values reduced or not (G10).
      axes.clear();
      for (int64_t d = 0; d < rank; ++d)
        if (out.shape[size_t(d)] == 1 && in.shape[size_t(d)] != 1)
          axes.push_back(d);
      if (axes.empty())
        noop = true;
    } else {
      return l.fail("the axes of " + r.opType +
                    " must be a constant when keepdims is 0");
    }
  }
  reduced.assign(size_t(rank), axes.empty() && !noop);
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank)
      return l.fail("axis " + std::to_string(axis) + " is out of range");
    reduced[size_t(axis < 0 ? axis + rank : axis)] = true;
  }
  std::vector<int64_t> expected;
  for (int64_t d = 0; d < rank; ++d)
    if (!reduced[size_t(d)])
      expected.push_back(in.shape[size_t(d)]);
    else if (keepDims)
      expected.push_back(1);
  if (expected != out.shape)
    return l.fail("the output shape " + shapeText(out.shape) +
                  " is not the reduction's " + shapeText(expected));
  return true;
}
