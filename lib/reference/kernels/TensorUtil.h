//===- TensorUtil.h - Small helpers every kernel family uses ---*- C++ -*-===//
//
// Private to the kernels: axis normalization, shape products and element
// copies, shared by the shape, control and Nn families (each used to keep
// its own copy).
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_REFERENCE_KERNELS_TENSORUTIL_H
#define MNCC_LIB_REFERENCE_KERNELS_TENSORUTIL_H

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

} // namespace mncc::reference

#endif // MNCC_LIB_REFERENCE_KERNELS_TENSORUTIL_H
