//===- ShapeOps.cpp - Shape, layout and constant operators ----------------===//
//
// Operators that only move elements or make constants: they work on every
// element type by moving bytes (strings as strings). Reshape, Flatten,
// Squeeze and Unsqueeze share the input's storage; the others copy through
// mapCopy, which moves contiguous runs with memcpy.
//
//===----------------------------------------------------------------------===//

#include "LinalgGemm.h"
#include "ShapeUtils.h"

#include "mncc/reference/PadSource.h"

using namespace mncc::reference;
using namespace mncc::reference::shape;

namespace {

Status reshapeKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  std::vector<int64_t> shape;
  if (Status status = readRequiredInts(context, 1, shape); !status)
    return status;
  bool allowZero = context.getInt("allowzero", 0) != 0;
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= data->rank())
        return opError(context, "0 at position " + std::to_string(i) +
                                    " has no input dimension to copy");
      shape[i] = data->shape()[i];
    }
    if (shape[i] == -1) {
      if (inferred >= 0)
        return opError(context, "more than one -1 in the shape");
      inferred = i;
    } else if (shape[i] < 0) {
      return opError(context, "negative dimension " + std::to_string(shape[i]));
    } else {
      known *= shape[i];
    }
  }
  int64_t total = data->numElements();
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      return opError(context, "cannot infer -1 reshaping " +
                                  shapeToString(data->shape()) + " to " +
                                  shapeToString(shape));
    shape[inferred] = total / known;
  } else if (known != total) {
    return opError(context, "cannot reshape " + shapeToString(data->shape()) +
                                " to " + shapeToString(shape));
  }
  context.setOutput(0, data->reshaped(shape));
  return Status::success();
}

Status flattenKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  int64_t axis = context.getInt("axis", 1);
  // The axis may equal the rank (everything goes to the first dimension).
  if (axis < -data->rank() || axis > data->rank())
    return badAxis(context, axis, data->rank());
  if (axis < 0)
    axis += data->rank();
  const std::vector<int64_t> &shape = data->shape();
  context.setOutput(0, data->reshaped({product(shape, 0, axis),
                                       product(shape, axis, shape.size())}));
  return Status::success();
}

Status squeezeKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  std::vector<int64_t> axes;
  Status status = readAxes(context, 1, axes);
  if (!status)
    return status;
  if (!(status = normalizeAxes(context, axes, data->rank())))
    return status;
  std::vector<bool> drop(data->rank(), false);
  for (int64_t axis : axes) {
    if (data->shape()[axis] != 1)
      return opError(context, "cannot squeeze axis " + std::to_string(axis) +
                                  " of size " +
                                  std::to_string(data->shape()[axis]));
    drop[axis] = true;
  }
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < data->rank(); ++i)
    if (!(axes.empty() ? data->shape()[i] == 1 : drop[i]))
      shape.push_back(data->shape()[i]);
  context.setOutput(0, data->reshaped(shape));
  return Status::success();
}

Status unsqueezeKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  std::vector<int64_t> axes;
  Status status = readAxes(context, 1, axes);
  if (!status)
    return status;
  int64_t rank = data->rank() + static_cast<int64_t>(axes.size());
  if (!(status = normalizeAxes(context, axes, rank)))
    return status;
  std::vector<int64_t> shape(rank, 1);
  std::vector<bool> inserted(rank, false);
  for (int64_t axis : axes)
    inserted[axis] = true;
  for (int64_t i = 0, next = 0; i < rank; ++i)
    if (!inserted[i])
      shape[i] = data->shape()[next++];
  context.setOutput(0, data->reshaped(shape));
  return Status::success();
}

Status transposeKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  int64_t rank = data->rank();
  std::vector<int64_t> perm = context.getInts("perm");
  if (!context.hasAttribute("perm"))
    for (int64_t i = rank; i-- > 0;)
      perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != rank)
    return opError(context, "perm has " + std::to_string(perm.size()) +
                                " entries for rank " + std::to_string(rank));
  Status status = normalizeAxes(context, perm, rank);
  if (!status)
    return status;
  context.setOutput(0, transposeView(*data, data->shape(), perm));
  return Status::success();
}

Status concatKernel(KernelContext &context) {
  std::vector<const Tensor *> inputs;
  for (size_t i = 0; i < context.numInputs(); ++i) {
    const Tensor *input = context.inputTensor(i);
    if (!input)
      return missingInput(context, i);
    inputs.push_back(input);
  }
  if (inputs.empty())
    return opError(context, "needs at least one input");
  if (!context.hasAttribute("axis"))
    return opError(context, "missing attribute axis");
  const Tensor &first = *inputs[0];
  int64_t axis = context.getInt("axis", 0);
  if (!normalizeAxis(axis, first.rank()))
    return badAxis(context, axis, first.rank());
  std::vector<int64_t> shape = first.shape();
  shape[axis] = 0;
  for (const Tensor *input : inputs) {
    bool same =
        input->dtype() == first.dtype() && input->rank() == first.rank();
    for (int64_t d = 0; same && d < first.rank(); ++d)
      same = d == axis || input->shape()[d] == first.shape()[d];
    if (!same)
      return opError(context, "cannot concatenate " +
                                  shapeToString(input->shape()) + " " +
                                  dtypeName(input->dtype()) + " with " +
                                  shapeToString(first.shape()) + " " +
                                  dtypeName(first.dtype()));
    shape[axis] += input->shape()[axis];
  }
  // The copies below write every element (strings start empty as usual),
  // but for the parts their producers already wrote in place.
  Tensor result = first.dtype() == DType::String
                      ? Tensor(first.dtype(), shape)
                      : context.allocateOutput(0, first.dtype(), shape);
  concatenateInto(inputs, axis, result);
  context.setOutput(0, result);
  return Status::success();
}

Status splitKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  int64_t axis = context.getInt("axis", 0);
  if (!normalizeAxis(axis, data->rank()))
    return badAxis(context, axis, data->rank());
  int64_t dim = data->shape()[axis];
  std::vector<int64_t> split;
  bool present;
  Status status = readIntsInput(context, 1, split, present);
  if (!status)
    return status;
  if (!present)
    split = context.getInts("split"); // before opset 13
  int64_t count = context.getInt("num_outputs", context.numOutputs());
  if (split.empty()) {
    if (count <= 0)
      return opError(context, "no outputs to split into");
    // Opset 18's num_outputs allows a smaller last part; before it, the
    // parts must be equal.
    int64_t part = (dim + count - 1) / count;
    if (!context.hasAttribute("num_outputs") && dim % count != 0)
      return opError(context, "dimension " + std::to_string(dim) +
                                  " does not split into " +
                                  std::to_string(count) + " equal parts");
    for (int64_t i = 0; i < count; ++i)
      split.push_back(std::max<int64_t>(0, std::min(part, dim - i * part)));
  }
  int64_t sum = 0;
  for (int64_t size : split) {
    if (size < 0)
      return opError(context, "negative split size");
    sum += size;
  }
  if (sum != dim || split.size() != context.numOutputs())
    return opError(context, "split sizes sum to " + std::to_string(sum) +
                                " in " + std::to_string(split.size()) +
                                " parts, for dimension " + std::to_string(dim) +
                                " and " + std::to_string(context.numOutputs()) +
                                " outputs");
  int64_t begin = 0;
  for (size_t i = 0; i < split.size(); ++i) {
    context.setOutput(i, sliceAxis(*data, axis, begin, split[i]));
    begin += split[i];
  }
  return Status::success();
}

Status sliceKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  int64_t rank = data->rank();
  std::vector<int64_t> starts, ends, axes, steps;
  bool hasStarts, hasEnds, hasAxes, hasSteps;
  Status status;
  if (!(status = readIntsInput(context, 1, starts, hasStarts)) ||
      !(status = readIntsInput(context, 2, ends, hasEnds)) ||
      !(status = readIntsInput(context, 3, axes, hasAxes)) ||
      !(status = readIntsInput(context, 4, steps, hasSteps)))
    return status;
  if (!hasStarts || !hasEnds)
    return missingInput(context, hasStarts ? 2 : 1);
  if (!hasAxes)
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (!hasSteps)
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return opError(context, "starts, ends, axes and steps differ in length");
  if (!(status = normalizeAxes(context, axes, rank)))
    return status;
  std::vector<int64_t> shape = data->shape();
  std::vector<int64_t> first(rank, 0), step(rank, 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i], dim = shape[axis];
    if (steps[i] == 0)
      return opError(context, "step 0 on axis " + std::to_string(axis));
    int64_t start = starts[i], end = ends[i];
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    // Clamp as ONNX says: into [0, dim] going forward, [-1, dim - 1] back.
    if (steps[i] > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      // Written so that steps near the int64 limits cannot overflow.
      shape[axis] = end > start ? (end - start - 1) / steps[i] + 1 : 0;
    } else {
      start = std::clamp<int64_t>(start, -1, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      shape[axis] = start > end ? 1 - (start - end - 1) / steps[i] : 0;
    }
    first[axis] = start;
    step[axis] = steps[i];
  }
  std::vector<int64_t> strides = stridesOf(data->shape());
  std::vector<std::vector<int64_t>> offsets(rank);
  for (int64_t d = 0; d < rank; ++d)
    offsets[d] = linearOffsets(shape[d], first[d], step[d], strides[d]);
  Tensor result(data->dtype(), shape);
  mapCopy(result, *data, offsets);
  context.setOutput(0, result);
  return Status::success();
}

} // namespace

int64_t mncc::reference::padSource(const std::string &mode, int64_t out,
                                   int64_t begin, int64_t dim) {
  int64_t i = out - begin;
  if (i >= 0 && i < dim)
    return i;
  if (mode == "edge")
    return std::clamp<int64_t>(i, 0, dim - 1);
  if (mode == "wrap")
    return ((i % dim) + dim) % dim;
  if (mode == "reflect") {
    if (dim == 1)
      return 0;
    int64_t period = 2 * (dim - 1);
    i = ((i % period) + period) % period;
    return i < dim ? i : period - i;
  }
  return -1;
}

namespace {

Status padKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  int64_t rank = data->rank();
  std::string mode = context.getString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" &&
      mode != "wrap")
    return opError(context, "unknown mode '" + mode + "'");
  std::vector<int64_t> pads, axes;
  bool hasPads, hasAxes;
  Status status;
  if (!(status = readIntsInput(context, 1, pads, hasPads)) ||
      !(status = readIntsInput(context, 3, axes, hasAxes)))
    return status;
  if (!hasPads)
    pads = context.getInts("pads"); // before opset 11
  if (!hasAxes)
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  if (!(status = normalizeAxes(context, axes, rank)))
    return status;
  if (pads.size() != 2 * axes.size())
    return opError(context, "pads has " + std::to_string(pads.size()) +
                                " entries for " + std::to_string(axes.size()) +
                                " axes");
  Tensor value(data->dtype(), {});
  if (const Tensor *given = context.inputTensor(2)) {
    if (given->dtype() != data->dtype())
      return opError(context, "constant_value is " +
                                  std::string(dtypeName(given->dtype())) +
                                  ", data is " + dtypeName(data->dtype()));
    if (given->numElements() > 0)
      copyElements(value, 0, *given, 0, 1);
  } else if (context.hasAttribute("value") && isFloatingPoint(data->dtype())) {
    float old = context.getFloat("value", 0); // before opset 11
    dispatchNumeric(data->dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (isFloatLike<T>)
        value.data<T>()[0] = T(old);
    });
  }
  std::vector<int64_t> begin(rank, 0), end(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    begin[axes[i]] = pads[i];
    end[axes[i]] = pads[i + axes.size()];
  }
  std::vector<int64_t> shape(rank), strides = stridesOf(data->shape());
  std::vector<std::vector<int64_t>> offsets(rank);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t dim = data->shape()[d];
    shape[d] = dim + begin[d] + end[d];
    if (shape[d] < 0)
      return opError(context,
                     "pads make axis " + std::to_string(d) + " negative");
    if (dim == 0 && shape[d] > 0 && mode != "constant")
      return opError(context,
                     "cannot " + mode + "-pad empty axis " + std::to_string(d));
    offsets[d].resize(shape[d]);
    for (int64_t o = 0; o < shape[d]; ++o) {
      int64_t source = padSource(mode, o, begin[d], dim);
      offsets[d][o] = source < 0 ? -1 : source * strides[d];
    }
  }
  Tensor result(data->dtype(), shape);
  mapCopy(result, *data, offsets, &value);
  context.setOutput(0, result);
  return Status::success();
}

Status tileKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  std::vector<int64_t> repeats;
  if (Status status = readRequiredInts(context, 1, repeats); !status)
    return status;
  if (static_cast<int64_t>(repeats.size()) != data->rank())
    return opError(context, "repeats has " + std::to_string(repeats.size()) +
                                " entries for rank " +
                                std::to_string(data->rank()));
  std::vector<int64_t> shape(data->rank()), strides = stridesOf(data->shape());
  std::vector<std::vector<int64_t>> offsets(data->rank());
  for (int64_t d = 0; d < data->rank(); ++d) {
    if (repeats[d] < 0)
      return opError(context, "negative repeat");
    if (__builtin_mul_overflow(data->shape()[d], repeats[d], &shape[d]))
      return opError(context, "the output shape overflows 64 bits");
  }
  // The offset tables below are as long as the output's dimensions: check
  // the output's size before building them.
  if (TensorSize size = checkTensorSize(data->dtype(), shape); !size.ok())
    return Status::error(size.error);
  for (int64_t d = 0; d < data->rank(); ++d) {
    int64_t dim = data->shape()[d];
    offsets[d].reserve(shape[d]);
    for (int64_t o = 0; o < shape[d]; ++o)
      offsets[d].push_back((o % dim) * strides[d]);
  }
  Tensor result(data->dtype(), shape);
  mapCopy(result, *data, offsets);
  context.setOutput(0, result);
  return Status::success();
}

Status shapeKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  int64_t rank = data->rank();
  int64_t start = context.getInt("start", 0);
  int64_t end = context.getInt("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  std::vector<int64_t> dims(data->shape().begin() + start,
                            data->shape().begin() + std::max(start, end));
  context.setOutput(0, Tensor::fromVector(DType::Int64,
                                          {static_cast<int64_t>(dims.size())},
                                          dims));
  return Status::success();
}

Status sizeKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  context.setOutput(
      0, Tensor::fromVector<int64_t>(DType::Int64, {}, {data->numElements()}));
  return Status::success();
}

Status constantOfShapeKernel(KernelContext &context) {
  std::vector<int64_t> shape;
  if (Status status = readRequiredInts(context, 0, shape); !status)
    return status;
  for (int64_t dim : shape)
    if (dim < 0)
      return opError(context, "negative dimension in " + shapeToString(shape));
  Tensor value(DType::Float32, {1});
  if (const Attribute *given = context.attribute("value")) {
    if (given->kind != Attribute::Kind::Tensor || given->t.numElements() != 1)
      return opError(context, "value must be a one-element tensor");
    value = given->t;
  }
  Tensor result(value.dtype(), shape);
  fillRange(result, 0, result.numElements(), value);
  context.setOutput(0, result);
  return Status::success();
}

Status constantKernel(KernelContext &context) {
  const Attribute *given = nullptr;
  const char *names[] = {"value",         "value_float", "value_floats",
                         "value_int",     "value_ints",  "value_string",
                         "value_strings", "sparse_value"};
  int found = -1;
  for (int i = 0; i < 8; ++i)
    if (const Attribute *attribute = context.attribute(names[i])) {
      if (given)
        return opError(context, "needs exactly one value attribute");
      given = attribute;
      found = i;
    }
  if (!given)
    return opError(context, "needs a value attribute");
  int64_t count;
  switch (found) {
  case 0:
    if (given->kind != Attribute::Kind::Tensor)
      return opError(context, "value must be a tensor");
    context.setOutput(0, given->t);
    return Status::success();
  case 1:
    context.setOutput(0, Tensor::fromVector(DType::Float32, {},
                                            std::vector<float>{given->f}));
    return Status::success();
  case 2:
    count = given->floats.size();
    context.setOutput(
        0, Tensor::fromVector(DType::Float32, {count}, given->floats));
    return Status::success();
  case 3:
    context.setOutput(0, Tensor::fromVector(DType::Int64, {},
                                            std::vector<int64_t>{given->i}));
    return Status::success();
  case 4:
    count = given->ints.size();
    context.setOutput(0,
                      Tensor::fromVector(DType::Int64, {count}, given->ints));
    return Status::success();
  case 5:
    context.setOutput(0,
                      Tensor::fromVector(DType::String, {},
                                         std::vector<std::string>{given->s}));
    return Status::success();
  case 6:
    count = given->strings.size();
    context.setOutput(
        0, Tensor::fromVector(DType::String, {count}, given->strings));
    return Status::success();
  default:
    return opError(context, "sparse_value is not supported");
  }
}

Status rangeKernel(KernelContext &context) {
  const Tensor *limits[3];
  for (size_t i = 0; i < 3; ++i) {
    limits[i] = context.inputTensor(i);
    if (!limits[i])
      return missingInput(context, i);
    if (limits[i]->numElements() != 1 ||
        limits[i]->dtype() != limits[0]->dtype())
      return opError(context, "start, limit and delta must be scalars of "
                              "one type");
  }
  Status status = opError(context, std::string("unsupported type ") +
                                       dtypeName(limits[0]->dtype()));
  dispatchNumeric(limits[0]->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!isComplex<T> && !std::is_same_v<T, bool>) {
      auto start = arith(limits[0]->data<T>()[0]);
      auto limit = arith(limits[1]->data<T>()[0]);
      auto delta = arith(limits[2]->data<T>()[0]);
      if (delta == 0) {
        status = opError(context, "delta is 0");
        return;
      }
      int64_t count;
      if constexpr (std::is_integral_v<T>) {
        // Exact ceiling division in 128 bits: limit - start of two int64
        // (or uint64) values may not fit in 64, and doubles would round.
        __int128 span = static_cast<__int128>(limit) - start, step = delta;
        __int128 quotient =
            span / step + (span % step != 0 && (span > 0) == (step > 0));
        if (quotient > INT64_MAX) {
          status = opError(context, "more than 2^63 elements");
          return;
        }
        count = static_cast<int64_t>(std::max<__int128>(quotient, 0));
      } else {
        double exact =
            std::ceil((double(limit) - double(start)) / double(delta));
        // NaN bounds or a count past int64 have no int64 to convert to.
        if (std::isnan(exact) || exact >= 9.2e18) {
          status = opError(context, "start, limit and delta give " +
                                        (std::isnan(exact)
                                             ? std::string("no element count")
                                             : "more than 2^63 elements"));
          return;
        }
        count = exact > 0 ? static_cast<int64_t>(exact) : 0;
      }
      Tensor result(limits[0]->dtype(), {count});
      for (int64_t i = 0; i < count; ++i) {
        if constexpr (std::is_integral_v<T>)
          result.data<T>()[i] = static_cast<T>(static_cast<__int128>(start) +
                                               static_cast<__int128>(i) * delta);
        else
          result.data<T>()[i] = toElement<T>(start + i * delta);
      }
      context.setOutput(0, result);
      status = Status::success();
    }
  });
  return status;
}

/// DepthToSpace and SpaceToDepth: a reshape to 6-D, a transpose and a
/// reshape back.
Status blockKernel(KernelContext &context, bool toSpace) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  int64_t b = context.getInt("blocksize", 0);
  if (data->rank() != 4 || b <= 0)
    return opError(context, "needs a 4-D input and a positive blocksize");
  int64_t n = data->shape()[0], c = data->shape()[1], h = data->shape()[2],
          w = data->shape()[3];
  std::vector<int64_t> view, perm, shape;
  if (toSpace) {
    if (c % (b * b) != 0)
      return opError(context, "channels not divisible by blocksize^2");
    std::string mode = context.getString("mode", "DCR");
    if (mode == "DCR") {
      view = {n, b, b, c / (b * b), h, w};
      perm = {0, 3, 4, 1, 5, 2};
    } else if (mode == "CRD") {
      view = {n, c / (b * b), b, b, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      return opError(context, "unknown mode '" + mode + "'");
    }
    shape = {n, c / (b * b), h * b, w * b};
  } else {
    if (h % b != 0 || w % b != 0)
      return opError(context, "height and width not divisible by blocksize");
    view = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    shape = {n, c * b * b, h / b, w / b};
  }
  context.setOutput(0, transposeView(*data, view, perm).reshaped(shape));
  return Status::success();
}

Status depthToSpaceKernel(KernelContext &context) {
  return blockKernel(context, true);
}
Status spaceToDepthKernel(KernelContext &context) {
  return blockKernel(context, false);
}

Status eyeLikeKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  if (data->rank() != 2)
    return opError(context, "needs a 2-D input");
  DType dtype = context.hasAttribute("dtype")
                    ? static_cast<DType>(context.getInt("dtype", 1))
                    : data->dtype();
  int64_t rows = data->shape()[0], cols = data->shape()[1];
  int64_t k = std::clamp<int64_t>(context.getInt("k", 0), -rows, cols);
  Tensor result;
  bool numeric = dispatchNumeric(dtype, [&](auto tag) {
    using T = decltype(tag);
    result = Tensor(dtype, data->shape());
    for (int64_t i = std::max<int64_t>(0, -k); i < rows && i + k < cols; ++i)
      result.data<T>()[i * cols + i + k] = toElement<T>(1);
  });
  if (!numeric)
    return opError(context,
                   std::string("unsupported type ") + dtypeName(dtype));
  context.setOutput(0, result);
  return Status::success();
}

Status triluKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  if (data->rank() < 2)
    return opError(context, "needs an input of rank 2 or more");
  int64_t k = 0;
  if (const Tensor *given = context.inputTensor(1)) {
    if (given->dtype() != DType::Int64 || given->numElements() != 1)
      return opError(context, "k must be an int64 scalar");
    k = given->data<int64_t>()[0];
  }
  bool upper = context.getInt("upper", 1) != 0;
  int64_t rows = data->shape()[data->rank() - 2];
  int64_t cols = data->shape()[data->rank() - 1];
  // Beyond this the mask is all or nothing; clamping avoids overflow.
  k = std::clamp<int64_t>(k, -rows - 1, cols + 1);
  Tensor result(data->dtype(), data->shape());
  int64_t matrices =
      data->rank() > 2 ? product(data->shape(), 0, data->rank() - 2) : 1;
  for (int64_t m = 0; m < matrices; ++m)
    for (int64_t i = 0; i < rows; ++i) {
      // Kept: j - i >= k (upper) or j - i <= k (lower).
      int64_t lo = upper ? std::clamp<int64_t>(i + k, 0, cols) : 0;
      int64_t hi = upper ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
      int64_t row = (m * rows + i) * cols;
      copyElements(result, row + lo, *data, row + lo, hi - lo);
    }
  context.setOutput(0, result);
  return Status::success();
}

} // namespace

MNCC_REFERENCE_KERNEL("", Reshape, reshapeKernel);
MNCC_REFERENCE_KERNEL("", Flatten, flattenKernel);
MNCC_REFERENCE_KERNEL("", Squeeze, squeezeKernel);
MNCC_REFERENCE_KERNEL("", Unsqueeze, unsqueezeKernel);
MNCC_REFERENCE_KERNEL("", Transpose, transposeKernel);
MNCC_REFERENCE_KERNEL("", Concat, concatKernel);
MNCC_REFERENCE_KERNEL("", Split, splitKernel);
MNCC_REFERENCE_KERNEL("", Slice, sliceKernel);
MNCC_REFERENCE_KERNEL("", Pad, padKernel);
MNCC_REFERENCE_KERNEL("", Tile, tileKernel);
MNCC_REFERENCE_KERNEL("", Shape, shapeKernel);
MNCC_REFERENCE_KERNEL("", Size, sizeKernel);
MNCC_REFERENCE_KERNEL("", ConstantOfShape, constantOfShapeKernel);
MNCC_REFERENCE_KERNEL("", Constant, constantKernel);
MNCC_REFERENCE_KERNEL("", Range, rangeKernel);
MNCC_REFERENCE_KERNEL("", DepthToSpace, depthToSpaceKernel);
MNCC_REFERENCE_KERNEL("", SpaceToDepth, spaceToDepthKernel);
MNCC_REFERENCE_KERNEL("", EyeLike, eyeLikeKernel);
MNCC_REFERENCE_KERNEL("", Trilu, triluKernel);
