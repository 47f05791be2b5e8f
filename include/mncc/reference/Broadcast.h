//===- Broadcast.h - ONNX multidirectional broadcasting -------*- C++ -*-===//

#ifndef MNCC_REFERENCE_BROADCAST_H
#define MNCC_REFERENCE_BROADCAST_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mncc::reference {

/// The numpy-style broadcast of `shapes`, or nullopt if two dimensions
/// differ and neither is 1.
std::optional<std::vector<int64_t>>
broadcastShapes(const std::vector<std::vector<int64_t>> &shapes);

/// Row-major element strides of `inputShape` seen from `outputShape`
/// (aligned on the right): 0 along dimensions the input broadcasts.
std::vector<int64_t> broadcastStrides(const std::vector<int64_t> &inputShape,
                                      const std::vector<int64_t> &outputShape);

/// Calls fn(outputIndex, offsets) for every element of `outputShape`, in
/// row-major order, with the offset of that element in each of N inputs
/// whose broadcast strides are given. The innermost dimension runs as a
/// plain strided loop.
template <size_t N, typename Fn>
void forEachBroadcast(const std::vector<int64_t> &outputShape,
                      const std::array<std::vector<int64_t>, N> &strides,
                      Fn &&fn) {
  int64_t total = 1;
  for (int64_t dim : outputShape)
    total *= dim;
  if (total == 0)
    return;
  size_t rank = outputShape.size();
  if (rank == 0) {
    std::array<int64_t, N> offsets{};
    fn(int64_t(0), offsets);
    return;
  }
  std::vector<int64_t> counter(rank, 0);
  std::array<int64_t, N> base{};
  int64_t inner = outputShape[rank - 1];
  int64_t outputIndex = 0;
  while (true) {
    std::array<int64_t, N> offsets = base;
    for (int64_t i = 0; i < inner; ++i) {
      fn(outputIndex++, offsets);
      for (size_t k = 0; k < N; ++k)
        offsets[k] += strides[k][rank - 1];
    }
    // Advance the outer dimensions like an odometer.
    size_t dim = rank - 1;
    while (true) {
      if (dim == 0)
        return;
      --dim;
      ++counter[dim];
      for (size_t k = 0; k < N; ++k)
        base[k] += strides[k][dim];
      if (counter[dim] < outputShape[dim])
        break;
      for (size_t k = 0; k < N; ++k)
        base[k] -= strides[k][dim] * outputShape[dim];
      counter[dim] = 0;
    }
  }
}

/// "3x4x5" for messages.
std::string shapeToString(const std::vector<int64_t> &shape);

} // namespace mncc::reference

#endif // MNCC_REFERENCE_BROADCAST_H
