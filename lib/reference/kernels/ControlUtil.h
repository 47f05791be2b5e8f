//===- ControlUtil.h - Helpers of the control, sequence kernels -*- C++ -*-===//
//
// Element copies that work for every element type (String included), and
// the slicing and stacking along an axis that Loop, Scan, SplitToSequence
// and ConcatFromSequence all need. Private to lib/reference/kernels.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_REFERENCE_KERNELS_CONTROLUTIL_H
#define MNCC_REFERENCE_KERNELS_CONTROLUTIL_H

#include "TensorUtil.h"

#include "mncc/reference/Broadcast.h"
#include "mncc/reference/Kernel.h"

#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace mncc::reference::control {

/// `axis` in [-rank, rank) made non-negative, or nullopt when out of range.
inline std::optional<int64_t> normalizedAxis(int64_t axis, int64_t rank) {
  if (!normalizeAxis(axis, rank))
    return std::nullopt;
  return axis;
}

/// Joins `parts` along `axis`. With `newAxis`, the parts all have one
/// shape and a new axis of size parts.size() is inserted at `axis` (like
/// numpy.stack); otherwise they must agree except along `axis` (like
/// numpy.concatenate). `axis` is already non-negative.
inline Status joinAxis(const std::vector<Tensor> &parts, int64_t axis,
                       bool newAxis, const char *opName, Tensor &result) {
  if (parts.empty())
    return Status::error(std::string(opName) + ": nothing to concatenate");
  const Tensor &first = parts.front();
  std::vector<int64_t> base = first.shape();
  if (newAxis)
    base.insert(base.begin() + axis, 1);
  std::vector<int64_t> shape = base;
  shape[axis] = 0;
  for (const Tensor &part : parts) {
    if (part.dtype() != first.dtype())
      return Status::error(std::string(opName) + ": element types " +
                           dtypeName(first.dtype()) + " and " +
                           dtypeName(part.dtype()) + " differ");
    std::vector<int64_t> partShape = part.shape();
    if (newAxis)
      partShape.insert(partShape.begin() + axis, 1);
    bool same = partShape.size() == base.size();
    for (size_t i = 0; same && i < base.size(); ++i)
      same = static_cast<int64_t>(i) == axis || partShape[i] == base[i];
    if (!same)
      return Status::error(
          std::string(opName) + ": shapes " + shapeToString(first.shape()) +
          " and " + shapeToString(part.shape()) +
          " do not fit together along axis " + std::to_string(axis));
    shape[axis] += partShape[axis];
  }
  // concatenateInto writes every element (strings start empty as usual).
  result = first.dtype() == DType::String
               ? Tensor(first.dtype(), shape)
               : Tensor::uninitialized(first.dtype(), shape);
  std::vector<const Tensor *> pointers;
  for (const Tensor &part : parts)
    pointers.push_back(&part);
  concatenateInto(pointers, axis, result);
  return Status::success();
}

/// A scalar (or one-element) tensor as an int64, for positions and counts.
inline std::optional<int64_t> scalarInt(const Tensor *tensor) {
  if (!tensor || tensor->numElements() != 1 ||
      !(isSignedInteger(tensor->dtype()) || isUnsignedInteger(tensor->dtype())))
    return std::nullopt;
  return tensor->elementAsInt64(0);
}

} // namespace mncc::reference::control

#endif // MNCC_REFERENCE_KERNELS_CONTROLUTIL_H
