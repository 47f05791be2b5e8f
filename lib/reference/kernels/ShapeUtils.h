//===- ShapeUtils.h - Helpers of the data movement kernels ------*- C++ -*-===//
//
// Private to the Shape/Indexing/Reduce kernels: error messages that name
// the operator, axis normalization, reading index tensors, and copies that
// move elements by bytes (or as strings), in contiguous runs where they can.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_REFERENCE_KERNELS_SHAPEUTILS_H
#define MNCC_LIB_REFERENCE_KERNELS_SHAPEUTILS_H

#include "TensorUtil.h"

#include "mncc/reference/Broadcast.h"
#include "mncc/reference/Kernel.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <type_traits>

namespace mncc::reference::shape {

/// "Op: message", so every error names the operator.
inline Status opError(const KernelContext &context, const std::string &text) {
  return Status::error(std::string(context.opType()) + ": " + text);
}

inline Status missingInput(const KernelContext &context, size_t index) {
  return opError(context, "missing input " + std::to_string(index) +
                              " (or it is not a tensor)");
}

/// Sets an optional output only if the node names it.
inline void setIfWanted(KernelContext &context, size_t index, Value value) {
  if (index < context.numOutputs() && context.wantsOutput(index))
    context.setOutput(index, std::move(value));
}

inline Status badAxis(const KernelContext &context, int64_t axis,
                      int64_t rank) {
  return opError(context, "axis " + std::to_string(axis) +
                              " out of range for rank " + std::to_string(rank));
}

/// Normalizes `axes` against `rank`; rejects out-of-range and repeated axes.
inline Status normalizeAxes(const KernelContext &context,
                            std::vector<int64_t> &axes, int64_t rank) {
  std::vector<bool> seen(rank, false);
  for (int64_t &axis : axes) {
    int64_t given = axis;
    if (!normalizeAxis(axis, rank))
      return badAxis(context, given, rank);
    if (seen[axis])
      return opError(context, "axis " + std::to_string(given) + " repeated");
    seen[axis] = true;
  }
  return Status::success();
}

inline bool isIndexType(DType dtype) {
  return dtype == DType::Int32 || dtype == DType::Int64;
}

/// The elements of an integer tensor as int64 (shapes, axes, indices).
inline std::vector<int64_t> readInts(const Tensor &tensor) {
  std::vector<int64_t> values(tensor.numElements());
  if (tensor.dtype() == DType::Int64)
    std::copy_n(tensor.data<int64_t>(), values.size(), values.begin());
  else
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = tensor.elementAsInt64(i);
  return values;
}

/// Reads an optional integer input (shape, axes, split, ...); an omitted
/// input leaves `present` false. Rejects non-integer tensors.
inline Status readIntsInput(const KernelContext &context, size_t index,
                            std::vector<int64_t> &values, bool &present) {
  present = false;
  const Tensor *tensor = context.inputTensor(index);
  if (!tensor)
    return Status::success();
  if (!isIndexType(tensor->dtype()))
    return opError(context, "input " + std::to_string(index) +
                                " must be int32 or int64, not " +
                                dtypeName(tensor->dtype()));
  values = readInts(*tensor);
  present = true;
  return Status::success();
}

/// Reads an integer input the operator requires (a shape, repeats,
/// indices); an omitted one is an error naming it.
inline Status readRequiredInts(const KernelContext &context, size_t index,
                               std::vector<int64_t> &values) {
  bool present;
  Status status = readIntsInput(context, index, values, present);
  if (status && !present)
    return missingInput(context, index);
  return status;
}

/// Axes as input `index` (opset 13 and later) or, when that input is
/// omitted, the `axes` attribute (earlier opsets).
inline Status readAxes(const KernelContext &context, size_t index,
                       std::vector<int64_t> &axes) {
  bool present;
  Status status = readIntsInput(context, index, axes, present);
  if (status && !present)
    axes = context.getInts("axes");
  return status;
}

inline std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

/// Fills dst[begin, begin + count) with fill[0], doubling the filled part
/// so large fills are a few memcpys.
inline void fillRange(Tensor &dst, int64_t begin, int64_t count,
                      const Tensor &fill) {
  if (count <= 0)
    return;
  copyElements(dst, begin, fill, 0, 1);
  for (int64_t done = 1; done < count; done *= 2)
    copyElements(dst, begin + done, dst, begin, std::min(done, count - done));
}

/// dst[i] = src[offsets[i]] for elements of `size` bytes: the transpose
/// inner loop, with fixed-size copies the compiler turns into moves.
template <size_t Size>
void gatherBytes(unsigned char *dst, const unsigned char *src,
                 const int64_t *offsets, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(dst + i * Size, src + offsets[i] * Size, Size);
}

/// The one strided-copy engine: writes dst (row-major over its shape) so
/// that dst[i0, ..., in] = src[offsets[0][i0] + ... + offsets[n][in]],
/// or `fill` element 0 where any of those offsets is -1. Transpose, Slice,
/// Pad, Tile, Compress and DepthToSpace are all tables of per-axis offsets.
/// The innermost axis is cut once into runs that are contiguous in both
/// tensors (or all fill), each moved with one memcpy per row.
inline void mapCopy(Tensor &dst, const Tensor &src,
                    const std::vector<std::vector<int64_t>> &offsets,
                    const Tensor *fill = nullptr) {
  const std::vector<int64_t> &shape = dst.shape();
  size_t rank = shape.size();
  if (dst.numElements() == 0)
    return;
  if (rank == 0) {
    copyElements(dst, 0, src, 0, 1);
    return;
  }
  const std::vector<int64_t> &inner = offsets[rank - 1];
  int64_t innerSize = shape[rank - 1];
  struct Run {
    int64_t begin, length, offset; // offset -1: fill
  };
  std::vector<Run> runs;
  for (int64_t i = 0; i < innerSize; ++i) {
    int64_t offset = inner[i] < 0 ? -1 : inner[i];
    if (!runs.empty()) {
      Run &last = runs.back();
      if (offset < 0
              ? last.offset < 0
              : last.offset >= 0 && offset == last.offset + last.length) {
        ++last.length;
        continue;
      }
    }
    runs.push_back({i, 1, offset});
  }
  size_t size = dtypeSize(src.dtype());
  bool scattered = runs.size() == static_cast<size_t>(innerSize) &&
                   innerSize > 1 && !fill && src.dtype() != DType::String &&
                   (size == 1 || size == 2 || size == 4 || size == 8);
  std::vector<int64_t> counter(rank, 0);
  int64_t out = 0;
  while (true) {
    int64_t base = 0;
    bool filled = false;
    for (size_t d = 0; d + 1 < rank; ++d) {
      int64_t offset = offsets[d][counter[d]];
      filled |= offset < 0;
      base += offset;
    }
    if (filled) {
      fillRange(dst, out, innerSize, *fill);
    } else if (scattered) {
      auto *to = static_cast<unsigned char *>(dst.raw()) + out * size;
      auto *from = static_cast<const unsigned char *>(src.raw()) + base * size;
      if (size == 1)
        gatherBytes<1>(to, from, inner.data(), innerSize);
      else if (size == 2)
        gatherBytes<2>(to, from, inner.data(), innerSize);
      else if (size == 4)
        gatherBytes<4>(to, from, inner.data(), innerSize);
      else
        gatherBytes<8>(to, from, inner.data(), innerSize);
    } else {
      for (const Run &run : runs) {
        if (run.offset < 0)
          fillRange(dst, out + run.begin, run.length, *fill);
        else
          copyElements(dst, out + run.begin, src, base + run.offset,
                       run.length);
      }
    }
    out += innerSize;
    size_t d = rank - 1;
    while (true) {
      if (d == 0)
        return;
      --d;
      if (++counter[d] < shape[d])
        break;
      counter[d] = 0;
    }
  }
}

/// Offsets of an axis read with a start and step: start + i * step, scaled
/// by the input stride.
inline std::vector<int64_t> linearOffsets(int64_t count, int64_t start,
                                          int64_t step, int64_t stride) {
  std::vector<int64_t> offsets(count);
  for (int64_t i = 0; i < count; ++i)
    offsets[i] = (start + i * step) * stride;
  return offsets;
}

/// Reads `src` viewed with `viewShape` (same element count) transposed by
/// `perm`: the output dimension i is the view's dimension perm[i].
inline Tensor transposeView(const Tensor &src,
                            const std::vector<int64_t> &viewShape,
                            const std::vector<int64_t> &perm) {
  std::vector<int64_t> strides = stridesOf(viewShape);
  std::vector<int64_t> shape(perm.size());
  std::vector<std::vector<int64_t>> offsets(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    shape[i] = viewShape[perm[i]];
    offsets[i] = linearOffsets(shape[i], 0, 1, strides[perm[i]]);
  }
  Tensor result(src.dtype(), shape);
  mapCopy(result, src, offsets);
  return result;
}

/// Whether element type T computes through float (half types).
template <typename T>
constexpr bool isHalf =
    std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;
template <typename T>
constexpr bool isComplex = std::is_same_v<T, std::complex<float>> ||
                           std::is_same_v<T, std::complex<double>>;
template <typename T>
constexpr bool isFloatLike = std::is_floating_point_v<T> || isHalf<T>;

/// A value of T compared and summed directly: float for half types.
template <typename T> auto arith(T value) {
  if constexpr (isHalf<T>)
    return static_cast<float>(value);
  else
    return value;
}

/// Converts an arithmetic result back to T (half types round from float).
template <typename T, typename U> T toElement(U value) {
  if constexpr (isHalf<T>)
    return T(static_cast<float>(value));
  else if constexpr (std::is_same_v<T, bool>)
    return value != U(0);
  else
    return static_cast<T>(value);
}

/// a + b and a * b in T. Integers wrap (through uint64, since signed
/// overflow is undefined in C++), as numpy's do; bool gives or / and.
template <typename T> T addValues(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else
    return toElement<T>(arith(a) + arith(b));
}
template <typename T> T mulValues(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else
    return toElement<T>(arith(a) * arith(b));
}

template <typename T> bool isNaN(T value) {
  if constexpr (isFloatLike<T>)
    return std::isnan(static_cast<double>(arith(value)));
  else
    return false;
}

/// Element of a numeric tensor compared as a key: a strict total order
/// with NaN above everything (numpy's sort order), so sorts are
/// deterministic.
template <typename T> bool lessKey(T a, T b) {
  if constexpr (isComplex<T>) {
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  } else {
    if (isNaN(a))
      return false;
    if (isNaN(b))
      return true;
    return arith(a) < arith(b);
  }
}

} // namespace mncc::reference::shape

#endif // MNCC_LIB_REFERENCE_KERNELS_SHAPEUTILS_H
