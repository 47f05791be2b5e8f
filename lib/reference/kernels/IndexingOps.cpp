//===- IndexingOps.cpp - Gather, scatter, sort and select operators -------===//
//
// Operators that pick elements by index or by value. Gathers and scatters
// move elements by bytes (any type, strings included); every index is
// checked before anything is read or written.
//
//===----------------------------------------------------------------------===//

#include "ShapeUtils.h"

#include <functional>
#include <numeric>

using namespace mncc::reference;
using namespace mncc::reference::shape;

namespace {

/// Maps index `index` into [0, dim), accepting [-dim, dim).
Status checkIndex(const KernelContext &context, int64_t &index, int64_t dim) {
  if (index < -dim || index >= dim)
    return opError(context, "index " + std::to_string(index) +
                                " out of range for dimension " +
                                std::to_string(dim));
  if (index < 0)
    index += dim;
  return Status::success();
}

/// Calls fn(linear, index) for every element of `shape` in row-major order.
template <typename Fn>
void forEachIndex(const std::vector<int64_t> &shape, Fn &&fn) {
  int64_t total = product(shape, 0, shape.size());
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t linear = 0; linear < total; ++linear) {
    fn(linear, index);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

Status gatherKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  std::vector<int64_t> indices;
  Status status = readRequiredInts(context, 1, indices);
  if (!status)
    return status;
  int64_t axis = context.getInt("axis", 0);
  if (!normalizeAxis(axis, data->rank()))
    return badAxis(context, axis, data->rank());
  int64_t dim = data->shape()[axis];
  for (int64_t &index : indices)
    if (!(status = checkIndex(context, index, dim)))
      return status;
  const std::vector<int64_t> &indexShape = context.inputTensor(1)->shape();
  std::vector<int64_t> shape(data->shape().begin(),
                             data->shape().begin() + axis);
  shape.insert(shape.end(), indexShape.begin(), indexShape.end());
  shape.insert(shape.end(), data->shape().begin() + axis + 1,
               data->shape().end());
  Tensor result(data->dtype(), shape);
  int64_t outer = product(data->shape(), 0, axis);
  int64_t inner = product(data->shape(), axis + 1, data->rank());
  int64_t count = indices.size();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < count; ++j)
      copyElements(result, (o * count + j) * inner, *data,
                   (o * dim + indices[j]) * inner, inner);
  context.setOutput(0, result);
  return Status::success();
}

enum class Reduction { None, Add, Mul, Max, Min };

template <typename T> T combine(T a, T b, Reduction reduction) {
  switch (reduction) {
  case Reduction::Add:
    return addValues(a, b);
  case Reduction::Mul:
    return mulValues(a, b);
  case Reduction::Max:
    if constexpr (!isComplex<T>)
      return lessKey(a, b) ? b : a;
    break;
  case Reduction::Min:
    if constexpr (!isComplex<T>)
      return lessKey(b, a) ? b : a;
    break;
  case Reduction::None:
    break;
  }
  return b;
}

/// Parses the reduction attribute and checks that the type supports it.
Status readReduction(const KernelContext &context, DType dtype,
                     Reduction &reduction) {
  std::string name = context.getString("reduction", "none");
  if (name == "none")
    reduction = Reduction::None;
  else if (name == "add")
    reduction = Reduction::Add;
  else if (name == "mul")
    reduction = Reduction::Mul;
  else if (name == "max")
    reduction = Reduction::Max;
  else if (name == "min")
    reduction = Reduction::Min;
  else
    return opError(context, "unknown reduction '" + name + "'");
  bool complex = dtype == DType::Complex64 || dtype == DType::Complex128;
  if (reduction != Reduction::None &&
      (dtype == DType::String ||
       (complex && reduction != Reduction::Add && reduction != Reduction::Mul)))
    return opError(context, "reduction '" + name + "' on " + dtypeName(dtype));
  return Status::success();
}

/// dst[di + i] = combine(dst[di + i], src[si + i]) for i < count.
void combineElements(Tensor &dst, int64_t di, const Tensor &src, int64_t si,
                     int64_t count, Reduction reduction) {
  if (reduction == Reduction::None) {
    copyElements(dst, di, src, si, count);
    return;
  }
  dispatchNumeric(dst.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T *out = dst.data<T>() + di;
    const T *in = src.data<T>() + si;
    for (int64_t i = 0; i < count; ++i)
      out[i] = combine(out[i], in[i], reduction);
  });
}

/// GatherElements (scatter == false) and ScatterElements / Scatter: the
/// element at position p of indices pairs data[p with p[axis] replaced by
/// the index] with output (or updates) element p.
Status elementsKernel(KernelContext &context, bool scatter) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  std::vector<int64_t> indices;
  Status status = readRequiredInts(context, 1, indices);
  if (!status)
    return status;
  const std::vector<int64_t> &indexShape = context.inputTensor(1)->shape();
  const Tensor *updates = context.inputTensor(2);
  if (scatter && !updates)
    return missingInput(context, 2);
  int64_t rank = data->rank();
  int64_t axis = context.getInt("axis", 0);
  if (!normalizeAxis(axis, rank))
    return badAxis(context, axis, rank);
  bool fits = static_cast<int64_t>(indexShape.size()) == rank;
  for (int64_t d = 0; fits && d < rank; ++d)
    fits = d == axis || indexShape[d] <= data->shape()[d];
  if (!fits || (scatter && (updates->shape() != indexShape ||
                            updates->dtype() != data->dtype())))
    return opError(context, "indices " + shapeToString(indexShape) +
                                " do not fit data " +
                                shapeToString(data->shape()) +
                                (scatter ? " and updates" : ""));
  for (int64_t &index : indices)
    if (!(status = checkIndex(context, index, data->shape()[axis])))
      return status;
  Reduction reduction = Reduction::None;
  if (scatter && !(status = readReduction(context, data->dtype(), reduction)))
    return status;
  std::vector<int64_t> strides = stridesOf(data->shape());
  Tensor result = scatter ? data->clone() : Tensor(data->dtype(), indexShape);
  forEachIndex(
      indexShape, [&](int64_t linear, const std::vector<int64_t> &position) {
        int64_t offset = 0;
        for (int64_t d = 0; d < rank; ++d)
          offset += (d == axis ? indices[linear] : position[d]) * strides[d];
        if (scatter)
          combineElements(result, offset, *updates, linear, 1, reduction);
        else
          copyElements(result, linear, *data, offset, 1);
      });
  context.setOutput(0, result);
  return Status::success();
}

Status gatherElementsKernel(KernelContext &context) {
  return elementsKernel(context, false);
}
Status scatterElementsKernel(KernelContext &context) {
  return elementsKernel(context, true);
}

/// GatherND and ScatterND: the last dimension of indices holds k-tuples
/// indexing the leading dimensions of data (after batch_dims), each
/// naming a chunk of the remaining dimensions.
Status ndKernel(KernelContext &context, bool scatter) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  std::vector<int64_t> indices;
  Status status = readRequiredInts(context, 1, indices);
  if (!status)
    return status;
  const std::vector<int64_t> &indexShape = context.inputTensor(1)->shape();
  int64_t batchDims = scatter ? 0 : context.getInt("batch_dims", 0);
  int64_t rank = data->rank(), q = indexShape.size();
  if (q < 1 || batchDims < 0 || batchDims >= q || batchDims > rank)
    return opError(context, "bad indices rank or batch_dims");
  int64_t k = indexShape.back();
  if (k < 1 || batchDims + k > rank)
    return opError(context, "index tuples of length " + std::to_string(k) +
                                " do not fit data of rank " +
                                std::to_string(rank));
  for (int64_t d = 0; d < batchDims; ++d)
    if (indexShape[d] != data->shape()[d])
      return opError(context, "batch dimensions differ");
  std::vector<int64_t> shape(indexShape.begin(), indexShape.end() - 1);
  shape.insert(shape.end(), data->shape().begin() + batchDims + k,
               data->shape().end());
  const Tensor *updates = context.inputTensor(2);
  Reduction reduction = Reduction::None;
  if (scatter) {
    if (!updates)
      return missingInput(context, 2);
    if (updates->shape() != shape || updates->dtype() != data->dtype())
      return opError(context, "updates must be " + shapeToString(shape) + " " +
                                  dtypeName(data->dtype()));
    if (!(status = readReduction(context, data->dtype(), reduction)))
      return status;
  }
  int64_t batches = product(data->shape(), 0, batchDims);
  int64_t batchSize = product(data->shape(), batchDims, rank);
  int64_t chunk = product(data->shape(), batchDims + k, rank);
  int64_t tuples = product(indexShape, batchDims, q - 1);
  std::vector<int64_t> strides = stridesOf(data->shape());
  // Resolve every tuple to an element offset first: nothing moves unless
  // all indices are in range.
  std::vector<int64_t> offsets(batches * tuples);
  for (int64_t t = 0; t < batches * tuples; ++t) {
    int64_t offset = (t / tuples) * batchSize;
    for (int64_t j = 0; j < k; ++j) {
      int64_t index = indices[t * k + j];
      if (!(status = checkIndex(context, index, data->shape()[batchDims + j])))
        return status;
      offset += index * strides[batchDims + j];
    }
    offsets[t] = offset;
  }
  Tensor result = scatter ? data->clone() : Tensor(data->dtype(), shape);
  for (int64_t t = 0; t < batches * tuples; ++t) {
    if (scatter)
      combineElements(result, offsets[t], *updates, t * chunk, chunk,
                      reduction);
    else
      copyElements(result, t * chunk, *data, offsets[t], chunk);
  }
  context.setOutput(0, result);
  return Status::success();
}

Status gatherNDKernel(KernelContext &context) {
  return ndKernel(context, false);
}
Status scatterNDKernel(KernelContext &context) {
  return ndKernel(context, true);
}

Status oneHotKernel(KernelContext &context) {
  const Tensor *indices = context.inputTensor(0);
  const Tensor *depthTensor = context.inputTensor(1);
  const Tensor *values = context.inputTensor(2);
  if (!indices || !depthTensor || !values)
    return missingInput(context, !indices ? 0 : !depthTensor ? 1 : 2);
  if (depthTensor->numElements() != 1 || values->numElements() != 2)
    return opError(context, "depth must have one element and values two");
  // Values may be of any type (strings too); indices and depth are numbers.
  if (indices->dtype() == DType::String ||
      depthTensor->dtype() == DType::String)
    return opError(context, "indices and depth must be numeric");
  int64_t depth = depthTensor->elementAsInt64(0);
  if (depth < 1)
    return opError(context, "depth must be positive");
  int64_t rank = indices->rank() + 1;
  int64_t axis = context.getInt("axis", -1);
  if (!normalizeAxis(axis, rank))
    return badAxis(context, axis, rank);
  std::vector<int64_t> shape = indices->shape();
  shape.insert(shape.begin() + axis, depth);
  Tensor result(values->dtype(), shape);
  fillRange(result, 0, result.numElements(), *values);
  int64_t outer = product(indices->shape(), 0, axis);
  int64_t inner = product(indices->shape(), axis, indices->rank());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t index = indices->elementAsInt64(o * inner + i);
      if (index < 0)
        index += depth;
      // Out of range indices give an all-off vector, as ONNX says.
      if (index >= 0 && index < depth)
        copyElements(result, (o * depth + index) * inner + i, *values, 1, 1);
    }
  context.setOutput(0, result);
  return Status::success();
}

Status nonZeroKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  std::vector<bool> nonZero(data->numElements());
  if (data->dtype() == DType::String) {
    for (size_t i = 0; i < nonZero.size(); ++i)
      nonZero[i] = !data->strings()[i].empty();
  } else {
    dispatchNumeric(data->dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (size_t i = 0; i < nonZero.size(); ++i)
        nonZero[i] = arith(data->data<T>()[i]) != decltype(arith(T{}))(0);
    });
  }
  // numpy treats a scalar as a 1-element vector.
  std::vector<int64_t> shape =
      data->rank() ? data->shape() : std::vector<int64_t>{1};
  int64_t rank = shape.size();
  int64_t count = std::count(nonZero.begin(), nonZero.end(), true);
  Tensor result(DType::Int64, {rank, count});
  int64_t *out = result.data<int64_t>();
  int64_t column = 0;
  forEachIndex(shape, [&](int64_t linear, const std::vector<int64_t> &index) {
    if (!nonZero[linear])
      return;
    for (int64_t d = 0; d < rank; ++d)
      out[d * count + column] = index[d];
    ++column;
  });
  context.setOutput(0, result);
  return Status::success();
}

Status topKKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  const Tensor *kTensor = context.inputTensor(1);
  if (!data || !kTensor)
    return missingInput(context, data ? 1 : 0);
  if (kTensor->numElements() != 1 || !isIndexType(kTensor->dtype()))
    return opError(context, "K must be a one-element int64 tensor");
  int64_t axis = context.getInt("axis", -1);
  if (!normalizeAxis(axis, data->rank()))
    return badAxis(context, axis, data->rank());
  int64_t dim = data->shape()[axis];
  int64_t k = kTensor->elementAsInt64(0);
  if (k < 0 || k > dim)
    return opError(context, "K = " + std::to_string(k) +
                                " out of range for dimension " +
                                std::to_string(dim));
  bool largest = context.getInt("largest", 1) != 0;
  std::vector<int64_t> shape = data->shape();
  shape[axis] = k;
  Tensor values(data->dtype(), shape), indices(DType::Int64, shape);
  int64_t outer = product(shape, 0, axis);
  int64_t inner = product(shape, axis + 1, shape.size());
  bool supported = false;
  dispatchNumeric(data->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!isComplex<T>) {
      supported = true;
      const T *in = data->data<T>();
      std::vector<int64_t> order(dim);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const T *line = in + o * dim * inner + i;
          std::iota(order.begin(), order.end(), 0);
          // Sorted output always (allowed when sorted = 0); equal values
          // keep the lower index first.
          std::partial_sort(order.begin(), order.begin() + k, order.end(),
                            [&](int64_t a, int64_t b) {
                              T x = line[a * inner], y = line[b * inner];
                              if (largest ? lessKey(y, x) : lessKey(x, y))
                                return true;
                              if (largest ? lessKey(x, y) : lessKey(y, x))
                                return false;
                              return a < b;
                            });
          for (int64_t j = 0; j < k; ++j) {
            int64_t out = (o * k + j) * inner + i;
            values.data<T>()[out] = line[order[j] * inner];
            indices.data<int64_t>()[out] = order[j];
          }
        }
    }
  });
  if (!supported)
    return opError(context,
                   std::string("unsupported type ") + dtypeName(data->dtype()));
  context.setOutput(0, values);
  setIfWanted(context, 1, indices);
  return Status::success();
}

Status uniqueKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  bool hasAxis = context.hasAttribute("axis");
  int64_t axis = context.getInt("axis", 0);
  if (hasAxis && !normalizeAxis(axis, data->rank()))
    return badAxis(context, axis, data->rank());
  // Lay the slices along `axis` out contiguously: slice s is
  // flat[s * length, (s + 1) * length).
  std::vector<int64_t> perm;
  Tensor flat;
  if (hasAxis) {
    perm.push_back(axis);
    for (int64_t d = 0; d < data->rank(); ++d)
      if (d != axis)
        perm.push_back(d);
    flat = transposeView(*data, data->shape(), perm);
  } else {
    flat = data->reshaped({data->numElements()});
  }
  int64_t slices = hasAxis ? data->shape()[axis] : data->numElements();
  int64_t length = slices ? flat.numElements() / slices : 0;
  std::function<bool(int64_t, int64_t)> less;
  if (data->dtype() == DType::String) {
    const std::vector<std::string> &text = flat.strings();
    less = [&text, length](int64_t a, int64_t b) {
      return std::lexicographical_compare(
          text.begin() + a * length, text.begin() + (a + 1) * length,
          text.begin() + b * length, text.begin() + (b + 1) * length);
    };
  } else {
    dispatchNumeric(data->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T *in = flat.data<T>();
      less = [in, length](int64_t a, int64_t b) {
        return std::lexicographical_compare(
            in + a * length, in + (a + 1) * length, in + b * length,
            in + (b + 1) * length, lessKey<T>);
      };
    });
  }
  if (!less)
    return opError(context, "unsupported type");
  std::vector<int64_t> order(slices);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), less);
  // Groups of equal slices in sorted order; stability makes each group's
  // first member its first occurrence.
  std::vector<int64_t> first, counts, inverse(slices);
  for (int64_t i = 0; i < slices; ++i) {
    if (i == 0 || less(order[i - 1], order[i])) {
      first.push_back(order[i]);
      counts.push_back(0);
    }
    inverse[order[i]] = first.size() - 1;
    ++counts.back();
  }
  int64_t unique = first.size();
  if (context.getInt("sorted", 1) == 0) {
    // Order the groups by first occurrence instead.
    std::vector<int64_t> groups(unique), rank(unique);
    std::iota(groups.begin(), groups.end(), 0);
    std::sort(groups.begin(), groups.end(),
              [&](int64_t a, int64_t b) { return first[a] < first[b]; });
    std::vector<int64_t> newFirst(unique), newCounts(unique);
    for (int64_t g = 0; g < unique; ++g) {
      rank[groups[g]] = g;
      newFirst[g] = first[groups[g]];
      newCounts[g] = counts[groups[g]];
    }
    for (int64_t &group : inverse)
      group = rank[group];
    first = newFirst;
    counts = newCounts;
  }
  std::vector<int64_t> shape = flat.shape();
  shape[0] = unique;
  Tensor gathered(data->dtype(), shape);
  for (int64_t g = 0; g < unique; ++g)
    copyElements(gathered, g * length, flat, first[g] * length, length);
  if (hasAxis) {
    std::vector<int64_t> back(perm.size());
    for (size_t i = 0; i < perm.size(); ++i)
      back[perm[i]] = i;
    gathered = transposeView(gathered, shape, back);
  }
  context.setOutput(0, gathered);
  setIfWanted(context, 1, Tensor::fromVector(DType::Int64, {unique}, first));
  setIfWanted(context, 2, Tensor::fromVector(DType::Int64, {slices}, inverse));
  setIfWanted(context, 3, Tensor::fromVector(DType::Int64, {unique}, counts));
  return Status::success();
}

Status cumSumKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  const Tensor *axisTensor = context.inputTensor(1);
  if (!data || !axisTensor)
    return missingInput(context, data ? 1 : 0);
  if (axisTensor->numElements() != 1 || !isIndexType(axisTensor->dtype()))
    return opError(context, "axis must be an int32 or int64 scalar");
  int64_t axis = axisTensor->elementAsInt64(0);
  if (!normalizeAxis(axis, data->rank()))
    return badAxis(context, axis, data->rank());
  bool exclusive = context.getInt("exclusive", 0) != 0;
  bool reverse = context.getInt("reverse", 0) != 0;
  int64_t dim = data->shape()[axis];
  int64_t outer = product(data->shape(), 0, axis);
  int64_t inner = product(data->shape(), axis + 1, data->rank());
  Tensor result(data->dtype(), data->shape());
  bool supported = false;
  dispatchNumeric(data->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      supported = true;
      const T *in = data->data<T>();
      T *out = result.data<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          // Round to T after every step, as numpy's cumsum does.
          T sum = toElement<T>(0);
          for (int64_t j = 0; j < dim; ++j) {
            int64_t at = (o * dim + (reverse ? dim - 1 - j : j)) * inner + i;
            if (exclusive)
              out[at] = sum;
            sum = addValues(sum, in[at]);
            if (!exclusive)
              out[at] = sum;
          }
        }
    }
  });
  if (!supported)
    return opError(context,
                   std::string("unsupported type ") + dtypeName(data->dtype()));
  context.setOutput(0, result);
  return Status::success();
}

Status compressKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  const Tensor *condition = context.inputTensor(1);
  if (!data || !condition)
    return missingInput(context, data ? 1 : 0);
  if (condition->dtype() != DType::Bool || condition->rank() != 1)
    return opError(context, "condition must be a 1-D bool tensor");
  bool hasAxis = context.hasAttribute("axis");
  int64_t axis = context.getInt("axis", 0);
  Tensor input = hasAxis ? *data : data->reshaped({data->numElements()});
  if (!normalizeAxis(axis, input.rank()))
    return badAxis(context, axis, input.rank());
  int64_t dim = input.shape()[axis];
  std::vector<int64_t> selected;
  for (int64_t i = 0; i < condition->numElements(); ++i) {
    if (!condition->data<bool>()[i])
      continue;
    if (i >= dim)
      return opError(context, "condition selects index " + std::to_string(i) +
                                  " beyond dimension " + std::to_string(dim));
    selected.push_back(i);
  }
  std::vector<int64_t> shape = input.shape(), strides = stridesOf(shape);
  shape[axis] = selected.size();
  std::vector<std::vector<int64_t>> offsets(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    offsets[d] = linearOffsets(shape[d], 0, 1, strides[d]);
  for (size_t j = 0; j < selected.size(); ++j)
    offsets[axis][j] = selected[j] * strides[axis];
  Tensor result(data->dtype(), shape);
  mapCopy(result, input, offsets);
  context.setOutput(0, result);
  return Status::success();
}

Status reverseSequenceKernel(KernelContext &context) {
  const Tensor *data = context.inputTensor(0);
  std::vector<int64_t> lengths;
  if (!data)
    return missingInput(context, 0);
  Status status = readRequiredInts(context, 1, lengths);
  if (!status)
    return status;
  int64_t timeAxis = context.getInt("time_axis", 0);
  int64_t batchAxis = context.getInt("batch_axis", 1);
  if (data->rank() < 2 || timeAxis < 0 || timeAxis > 1 || batchAxis < 0 ||
      batchAxis > 1 || timeAxis == batchAxis)
    return opError(context, "needs rank >= 2 and time_axis, batch_axis "
                            "being 0 and 1");
  int64_t steps = data->shape()[timeAxis], batch = data->shape()[batchAxis];
  if (static_cast<int64_t>(lengths.size()) != batch)
    return opError(context, "sequence_lens must have one entry per batch");
  int64_t inner = product(data->shape(), 2, data->rank());
  auto at = [&](int64_t t, int64_t b) {
    return (timeAxis == 0 ? t * batch + b : b * steps + t) * inner;
  };
  Tensor result = data->clone();
  for (int64_t b = 0; b < batch; ++b) {
    if (lengths[b] < 0 || lengths[b] > steps)
      return opError(context, "sequence length " + std::to_string(lengths[b]) +
                                  " out of range");
    for (int64_t t = 0; t < lengths[b]; ++t)
      copyElements(result, at(t, b), *data, at(lengths[b] - 1 - t, b), inner);
  }
  context.setOutput(0, result);
  return Status::success();
}

/// ArgMax and ArgMin. NaN wins over numbers (numpy returns the first NaN).
Status argKernel(KernelContext &context, bool max) {
  const Tensor *data = context.inputTensor(0);
  if (!data)
    return missingInput(context, 0);
  int64_t axis = context.getInt("axis", 0);
  if (!normalizeAxis(axis, data->rank()))
    return badAxis(context, axis, data->rank());
  bool keepDims = context.getInt("keepdims", 1) != 0;
  bool last = context.getInt("select_last_index", 0) != 0;
  int64_t dim = data->shape()[axis];
  if (dim == 0)
    return opError(context, "cannot reduce an empty axis");
  std::vector<int64_t> shape = data->shape();
  if (keepDims)
    shape[axis] = 1;
  else
    shape.erase(shape.begin() + axis);
  int64_t outer = product(data->shape(), 0, axis);
  int64_t inner = product(data->shape(), axis + 1, data->rank());
  Tensor result(DType::Int64, shape);
  bool supported = false;
  dispatchNumeric(data->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!isComplex<T>) {
      supported = true;
      auto better = [&](T x, T best) {
        if (isNaN(x) || isNaN(best))
          return isNaN(x) && (!isNaN(best) || last);
        return max ? (last ? !lessKey(x, best) : lessKey(best, x))
                   : (last ? !lessKey(best, x) : lessKey(x, best));
      };
      const T *in = data->data<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const T *line = in + o * dim * inner + i;
          int64_t best = 0;
          for (int64_t j = 1; j < dim; ++j)
            if (better(line[j * inner], line[best * inner]))
              best = j;
          result.data<int64_t>()[o * inner + i] = best;
        }
    }
  });
  if (!supported)
    return opError(context,
                   std::string("unsupported type ") + dtypeName(data->dtype()));
  context.setOutput(0, result);
  return Status::success();
}

Status argMaxKernel(KernelContext &context) { return argKernel(context, true); }
Status argMinKernel(KernelContext &context) {
  return argKernel(context, false);
}

} // namespace

MNCC_REFERENCE_KERNEL("", Gather, gatherKernel);
MNCC_REFERENCE_KERNEL("", GatherElements, gatherElementsKernel);
MNCC_REFERENCE_KERNEL("", GatherND, gatherNDKernel);
MNCC_REFERENCE_KERNEL("", ScatterElements, scatterElementsKernel);
MNCC_REFERENCE_KERNEL("", Scatter, scatterElementsKernel);
MNCC_REFERENCE_KERNEL("", ScatterND, scatterNDKernel);
MNCC_REFERENCE_KERNEL("", OneHot, oneHotKernel);
MNCC_REFERENCE_KERNEL("", NonZero, nonZeroKernel);
MNCC_REFERENCE_KERNEL("", TopK, topKKernel);
MNCC_REFERENCE_KERNEL("", Unique, uniqueKernel);
MNCC_REFERENCE_KERNEL("", CumSum, cumSumKernel);
MNCC_REFERENCE_KERNEL("", Compress, compressKernel);
MNCC_REFERENCE_KERNEL("", ReverseSequence, reverseSequenceKernel);
MNCC_REFERENCE_KERNEL("", ArgMax, argMaxKernel);
MNCC_REFERENCE_KERNEL("", ArgMin, argMinKernel);
