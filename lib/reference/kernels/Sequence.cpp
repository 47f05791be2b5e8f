//===- Sequence.cpp - Sequence and optional operators ---------------------===//
//
// Sequences hold tensor handles, so building a new sequence from an old one
// copies handles, not elements; the tensors themselves are never written
// after they are made, which makes the sharing safe.
//
//===----------------------------------------------------------------------===//

#include "ControlUtil.h"

using namespace mncc::reference;
using namespace mncc::reference::control;

namespace {

const std::vector<Tensor> *inputSequence(KernelContext &context, size_t index,
                                         const char *opName, Status &status) {
  const Value *value =
      index < context.numInputs() ? context.input(index) : nullptr;
  if (!value || !value->isSequence()) {
    status = Status::error(std::string(opName) + ": input " +
                           std::to_string(index) + " must be a sequence");
    return nullptr;
  }
  return &value->sequence;
}

/// Reads an optional position input (int32 or int64 scalar) and checks it
/// lies in [-size, size) or, when `allowEnd`, [-size, size].
Status readPosition(KernelContext &context, size_t index, int64_t size,
                    bool allowEnd, const char *opName, int64_t fallback,
                    int64_t &position) {
  position = fallback;
  if (index >= context.numInputs() || !context.input(index))
    return Status::success();
  const Tensor *tensor = context.inputTensor(index);
  if (!tensor ||
      (tensor->dtype() != DType::Int32 && tensor->dtype() != DType::Int64) ||
      tensor->numElements() != 1)
    return Status::error(std::string(opName) +
                         ": position must be a single int32 or int64");
  position = tensor->elementAsInt64(0);
  int64_t upper = allowEnd ? size : size - 1;
  if (position < -size || position > upper)
    return Status::error(
        std::string(opName) + ": position " + std::to_string(position) +
        " is out of range for a sequence of " + std::to_string(size));
  if (position < 0)
    position += size;
  return Status::success();
}

Status checkElementType(const std::vector<Tensor> &sequence,
                        const Tensor &tensor, const char *opName) {
  if (!sequence.empty() && sequence.front().dtype() != tensor.dtype())
    return Status::error(std::string(opName) + ": a " +
                         dtypeName(tensor.dtype()) +
                         " tensor cannot join a sequence of " +
                         dtypeName(sequence.front().dtype()));
  return Status::success();
}

/// SequenceEmpty: a sequence with no tensor. (Its `dtype` attribute has
/// nowhere to go: a Value does not record a sequence's element type.)
Status sequenceEmptyKernel(KernelContext &context) {
  context.setOutput(0, Value::makeSequence({}));
  return Status::success();
}

Status sequenceConstructKernel(KernelContext &context) {
  std::vector<Tensor> items;
  for (size_t i = 0; i < context.numInputs(); ++i) {
    const Tensor *tensor = context.inputTensor(i);
    if (!tensor)
      return Status::error("SequenceConstruct: input " + std::to_string(i) +
                           " must be a tensor");
    if (Status status = checkElementType(items, *tensor, "SequenceConstruct");
        !status)
      return status;
    items.push_back(*tensor);
  }
  if (items.empty())
    return Status::error("SequenceConstruct needs at least one input");
  context.setOutput(0, Value::makeSequence(std::move(items)));
  return Status::success();
}

Status sequenceAtKernel(KernelContext &context) {
  Status failure;
  const std::vector<Tensor> *sequence =
      inputSequence(context, 0, "SequenceAt", failure);
  if (!sequence)
    return failure;
  if (context.numInputs() < 2 || !context.input(1))
    return Status::error("SequenceAt needs a position");
  int64_t position = 0;
  if (Status status = readPosition(context, 1, sequence->size(), false,
                                   "SequenceAt", 0, position);
      !status)
    return status;
  context.setOutput(0, Value((*sequence)[position]));
  return Status::success();
}

Status sequenceInsertKernel(KernelContext &context) {
  Status failure;
  const std::vector<Tensor> *sequence =
      inputSequence(context, 0, "SequenceInsert", failure);
  if (!sequence)
    return failure;
  const Tensor *tensor = context.inputTensor(1);
  if (!tensor)
    return Status::error("SequenceInsert: input 1 must be a tensor");
  if (Status status = checkElementType(*sequence, *tensor, "SequenceInsert");
      !status)
    return status;
  int64_t size = static_cast<int64_t>(sequence->size());
  int64_t position = size;
  if (Status status = readPosition(context, 2, size, true, "SequenceInsert",
                                   size, position);
      !status)
    return status;
  std::vector<Tensor> items = *sequence;
  items.insert(items.begin() + position, *tensor);
  context.setOutput(0, Value::makeSequence(std::move(items)));
  return Status::success();
}

Status sequenceEraseKernel(KernelContext &context) {
  Status failure;
  const std::vector<Tensor> *sequence =
      inputSequence(context, 0, "SequenceErase", failure);
  if (!sequence)
    return failure;
  int64_t size = static_cast<int64_t>(sequence->size());
  if (size == 0)
    return Status::error("SequenceErase: the sequence is empty");
  int64_t position = size - 1;
  if (Status status = readPosition(context, 1, size, false, "SequenceErase",
                                   size - 1, position);
      !status)
    return status;
  std::vector<Tensor> items = *sequence;
  items.erase(items.begin() + position);
  context.setOutput(0, Value::makeSequence(std::move(items)));
  return Status::success();
}

Status sequenceLengthKernel(KernelContext &context) {
  Status failure;
  const std::vector<Tensor> *sequence =
      inputSequence(context, 0, "SequenceLength", failure);
  if (!sequence)
    return failure;
  Tensor length(DType::Int64, {});
  length.data<int64_t>()[0] = static_cast<int64_t>(sequence->size());
  context.setOutput(0, Value(std::move(length)));
  return Status::success();
}

/// SplitToSequence: chunks of 1 (dropping the axis unless keepdims), of a
/// scalar `split` (the last one shorter), or of the lengths in a 1-D
/// `split`.
Status splitToSequenceKernel(KernelContext &context) {
  const Tensor *input = context.inputTensor(0);
  if (!input)
    return Status::error("SplitToSequence: input 0 must be a tensor");
  std::optional<int64_t> axis =
      normalizedAxis(context.getInt("axis", 0), input->rank());
  if (!axis)
    return Status::error(
        "SplitToSequence: axis " + std::to_string(context.getInt("axis", 0)) +
        " is out of range for rank " + std::to_string(input->rank()));
  int64_t dim = input->shape()[*axis];
  std::vector<int64_t> lengths;
  bool dropAxis = false;
  const Tensor *split =
      context.numInputs() > 1 ? context.inputTensor(1) : nullptr;
  if (!split) {
    lengths.assign(dim, 1);
    dropAxis = context.getInt("keepdims", 1) == 0;
  } else if (split->dtype() != DType::Int32 && split->dtype() != DType::Int64) {
    return Status::error("SplitToSequence: split must be int32 or int64");
  } else if (split->rank() == 0) {
    int64_t chunk = split->elementAsInt64(0);
    if (chunk <= 0)
      return Status::error("SplitToSequence: split " + std::to_string(chunk) +
                           " must be positive");
    for (int64_t begin = 0; begin < dim; begin += chunk)
      lengths.push_back(std::min(chunk, dim - begin));
  } else if (split->rank() == 1) {
    int64_t total = 0;
    for (int64_t i = 0; i < split->numElements(); ++i) {
      int64_t length = split->elementAsInt64(i);
      if (length < 0)
        return Status::error("SplitToSequence: split lengths must not be "
                             "negative");
      lengths.push_back(length);
      total += length;
    }
    if (total != dim)
      return Status::error("SplitToSequence: split lengths sum to " +
                           std::to_string(total) + ", the axis has " +
                           std::to_string(dim));
  } else {
    return Status::error("SplitToSequence: split must be a scalar or 1-D");
  }
  std::vector<Tensor> items;
  int64_t begin = 0;
  for (int64_t length : lengths) {
    Tensor part = sliceAxis(*input, *axis, begin, length);
    if (dropAxis) {
      std::vector<int64_t> shape = part.shape();
      shape.erase(shape.begin() + *axis);
      part = part.reshaped(shape);
    }
    items.push_back(std::move(part));
    begin += length;
  }
  context.setOutput(0, Value::makeSequence(std::move(items)));
  return Status::success();
}

/// ConcatFromSequence: numpy.concatenate, or numpy.stack with new_axis.
Status concatFromSequenceKernel(KernelContext &context) {
  Status failure;
  const std::vector<Tensor> *sequence =
      inputSequence(context, 0, "ConcatFromSequence", failure);
  if (!sequence)
    return failure;
  if (!context.hasAttribute("axis"))
    return Status::error("ConcatFromSequence: the axis attribute is "
                         "required");
  if (sequence->empty())
    return Status::error("ConcatFromSequence: the sequence is empty");
  bool newAxis = context.getInt("new_axis", 0) != 0;
  int64_t rank = sequence->front().rank() + (newAxis ? 1 : 0);
  int64_t axisValue = context.getInt("axis", 0);
  std::optional<int64_t> axis = normalizedAxis(axisValue, rank);
  if (!axis || rank == 0)
    return Status::error("ConcatFromSequence: axis " +
                         std::to_string(axisValue) +
                         " is out of range for rank " + std::to_string(rank));
  Tensor result;
  if (Status status =
          joinAxis(*sequence, *axis, newAxis, "ConcatFromSequence", result);
      !status)
    return status;
  context.setOutput(0, Value(std::move(result)));
  return Status::success();
}

/// SequenceMap: runs `body` once per position of the first sequence; the
/// additional inputs are passed whole (tensors) or by position (sequences,
/// which must be as long as the first).
Status sequenceMapKernel(KernelContext &context) {
  Status failure;
  const std::vector<Tensor> *sequence =
      inputSequence(context, 0, "SequenceMap", failure);
  if (!sequence)
    return failure;
  size_t length = sequence->size();
  for (size_t i = 1; i < context.numInputs(); ++i) {
    const Value *value = context.input(i);
    if (!value || value->isEmpty())
      return Status::error("SequenceMap: input " + std::to_string(i) +
                           " is missing");
    if (value->isSequence() && value->sequence.size() != length)
      return Status::error("SequenceMap: input " + std::to_string(i) + " has " +
                           std::to_string(value->sequence.size()) +
                           " tensors, input 0 has " + std::to_string(length));
  }
  std::vector<std::vector<Tensor>> results(context.numOutputs());
  std::vector<Value> bodyInputs(context.numInputs());
  std::vector<Value> bodyOutputs;
  for (size_t position = 0; position < length; ++position) {
    bodyInputs[0] = Value((*sequence)[position]);
    for (size_t i = 1; i < context.numInputs(); ++i) {
      const Value *value = context.input(i);
      bodyInputs[i] =
          value->isSequence() ? Value(value->sequence[position]) : *value;
    }
    bodyOutputs.clear();
    if (Status status = context.runGraph("body", bodyInputs, bodyOutputs);
        !status)
      return status;
    if (bodyOutputs.size() < results.size())
      return Status::error(
          "SequenceMap: the body gives " + std::to_string(bodyOutputs.size()) +
          " outputs, the node has " + std::to_string(results.size()));
    for (size_t k = 0; k < results.size(); ++k) {
      if (!bodyOutputs[k].isTensor())
        return Status::error("SequenceMap: body output " + std::to_string(k) +
                             " must be a tensor");
      results[k].push_back(std::move(bodyOutputs[k].tensor));
    }
  }
  for (size_t k = 0; k < results.size(); ++k)
    if (context.wantsOutput(k))
      context.setOutput(k, Value::makeSequence(std::move(results[k])));
  return Status::success();
}

/// Optional: wraps its input, or makes an empty optional without one.
Status optionalKernel(KernelContext &context) {
  const Value *input = context.numInputs() > 0 ? context.input(0) : nullptr;
  if (!input) {
    if (!context.hasAttribute("type"))
      return Status::error("Optional: without an input the type attribute "
                           "is required");
    context.setOutput(0, Value::makeEmptyOptional());
    return Status::success();
  }
  if (input->isEmpty())
    return Status::error("Optional: the input cannot itself be an empty "
                         "optional");
  Value result = *input;
  result.optional = true;
  context.setOutput(0, std::move(result));
  return Status::success();
}

/// OptionalHasElement: false for an empty optional or an omitted input
/// (opset 18 allows that), true otherwise.
Status optionalHasElementKernel(KernelContext &context) {
  const Value *input = context.numInputs() > 0 ? context.input(0) : nullptr;
  Tensor result(DType::Bool, {});
  result.data<bool>()[0] = input && !input->isEmpty();
  context.setOutput(0, Value(std::move(result)));
  return Status::success();
}

/// OptionalGetElement: the tensor or sequence inside; a plain tensor or
/// sequence (opset 18) passes through.
Status optionalGetElementKernel(KernelContext &context) {
  const Value *input = context.numInputs() > 0 ? context.input(0) : nullptr;
  if (!input)
    return Status::error("OptionalGetElement needs an input");
  if (input->isEmpty())
    return Status::error("OptionalGetElement: the optional is empty");
  Value result = *input;
  result.optional = false;
  context.setOutput(0, std::move(result));
  return Status::success();
}

} // namespace

MNCC_REFERENCE_KERNEL("", SequenceEmpty, sequenceEmptyKernel);
MNCC_REFERENCE_KERNEL("", SequenceConstruct, sequenceConstructKernel);
MNCC_REFERENCE_KERNEL("", SequenceAt, sequenceAtKernel);
MNCC_REFERENCE_KERNEL("", SequenceInsert, sequenceInsertKernel);
MNCC_REFERENCE_KERNEL("", SequenceErase, sequenceEraseKernel);
MNCC_REFERENCE_KERNEL("", SequenceLength, sequenceLengthKernel);
MNCC_REFERENCE_KERNEL("", SplitToSequence, splitToSequenceKernel);
MNCC_REFERENCE_KERNEL("", ConcatFromSequence, concatFromSequenceKernel);
MNCC_REFERENCE_KERNEL("", SequenceMap, sequenceMapKernel);
MNCC_REFERENCE_KERNEL("", Optional, optionalKernel);
MNCC_REFERENCE_KERNEL("", OptionalHasElement, optionalHasElementKernel);
MNCC_REFERENCE_KERNEL("", OptionalGetElement, optionalGetElementKernel);
