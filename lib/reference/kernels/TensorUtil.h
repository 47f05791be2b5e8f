//===- TensorUtil.h - Small helpers every kernel family uses ---*- C++ -*-===//
//
// Private to the kernels: axis normalization, shape products, element
// copies, and slicing and joining along an axis, shared by the shape,
// control, sequence and Nn families (each used to keep its own copy).
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_REFERENCE_KERNELS_TENSORUTIL_H
#define MNCC_LIB_REFERENCE_KERNELS_TENSORUTIL_H

#include "LinalgGemm.h"

#include "mncc/reference/Tensor.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace mncc::reference {

/// Maps `axis` in [-rank, rank) to [0, rank); false if out of range.
inline bool normalizeAxis(int64_t &axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return false;
  if (axis < 0)
    axis += rank;
  return true;
}

/// Product of shape[begin, end).
inline int64_t product(const std::vector<int64_t> &shape, size_t begin,
                       size_t end) {
  int64_t result = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i)
    result *= shape[i];
  return result;
}

/// Copies `count` elements from src[srcIndex] to dst[dstIndex]; both have
/// the same element type.
inline void copyElements(Tensor &dst, int64_t dstIndex, const Tensor &src,
                         int64_t srcIndex, int64_t count) {
  if (count <= 0)
    return;
  if (src.dtype() == DType::String) {
    std::copy_n(src.strings().begin() + srcIndex, count,
                dst.strings().begin() + dstIndex);
    return;
  }
  size_t size = dtypeSize(src.dtype());
  std::memcpy(static_cast<unsigned char *>(dst.raw()) + dstIndex * size,
              static_cast<const unsigned char *>(src.raw()) + srcIndex * size,
              count * size);
}

/// Elements [begin, begin + length) of `input` along `axis` (non-negative),
/// as a tensor that keeps the axis (with size `length`).
inline Tensor sliceAxis(const Tensor &input, int64_t axis, int64_t begin,
                        int64_t length) {
  std::vector<int64_t> shape = input.shape();
  int64_t dim = shape[axis];
  shape[axis] = length;
  Tensor result(input.dtype(), shape);
  int64_t outer = product(shape, 0, axis);
  int64_t inner = product(shape, axis + 1, shape.size());
  for (int64_t o = 0; o < outer; ++o)
    copyElements(result, o * length * inner, input, (o * dim + begin) * inner,
                 length * inner);
  return result;
}

/// Copies `parts` one after the other along `axis` (non-negative) into
/// `result`, already shaped to hold them all (the parts agree with it
/// except along `axis`). One copy per (outer index, part), at offsets known
/// in advance, so that large ones spread over the threads (a batch-1
/// channel concatenation is a few big copies).
inline void concatenateInto(const std::vector<const Tensor *> &parts,
                            int64_t axis, Tensor &result) {
  const std::vector<int64_t> &shape = result.shape();
  int64_t outer = product(shape, 0, axis);
  struct Copy {
    const Tensor *part;
    int64_t from, to, count;
  };
  std::vector<Copy> copies;
  int64_t out = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor *part : parts) {
      int64_t chunk = outer ? part->numElements() / outer : 0;
      copies.push_back({part, o * chunk, out, chunk});
      out += chunk;
    }
  size_t elementSize = dtypeSize(result.dtype());
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const Copy &copy = copies[i];
      // A part its producer wrote where it goes (KernelContext::
      // allocateOutput) stays.
      bool inPlace =
          result.dtype() != DType::String &&
          static_cast<const char *>(copy.part->raw()) +
                  copy.from * elementSize ==
              static_cast<const char *>(result.raw()) + copy.to * elementSize;
      if (!inPlace)
        copyElements(result, copy.to, *copy.part, copy.from, copy.count);
    }
  };
  bool large = result.dtype() != DType::String &&
               result.numElements() >= (int64_t(1) << 16);
  if (large)
    linalg::parallelFor(static_cast<int64_t>(copies.size()), 1, run);
  else
    run(0, static_cast<int64_t>(copies.size()));
}

} // namespace mncc::reference

#endif // MNCC_LIB_REFERENCE_KERNELS_TENSORUTIL_H
