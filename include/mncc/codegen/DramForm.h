//===- DramForm.h - How a tensor lies in DRAM between kernels ---*- C++ -*-===//
//
// Between kernels every tensor lives in DRAM in one canonical form, so that
// any kernel can read what any other wrote and the host stages inputs and
// outputs with a plain row-major copy (docs/codegen.md, decision C2):
//
//  * row-major over the tensor's dimensions in `order` (identity, or a
//    permutation such as NHWC for convolution activations);
//  * the innermost of those dimensions padded with zeros to a whole number
//    of quads, four long words (one long word for each PE of a MAB), so a
//    long word never holds two rows and a row never shares a MAB's quad;
//  * the indices of the outermost DRAM dimension (in a 4-D tensor the
//    outermost of extent above 1: dimensions of extent 1 before it change
//    no address) split into `groups` contiguous blocks, block g (its rows)
//    in group g's DRAM at the same address.
//
// Inside a long word the first element is the most significant, as MN-Core
// orders words. Constants a kernel reads in its own arrangement (GEMM
// weights, for example) use a DramImage the kernel packs instead.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_CODEGEN_DRAMFORM_H
#define MNCC_CODEGEN_DRAMFORM_H

#include "mncc/codegen/DeviceType.h"
#include "mncc/reference/Tensor.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace mncc::codegen {

/// Long words of a quad: one per PE of a MAB.
constexpr int64_t kQuadLongWords = 4;
/// MV transfers move whole units of 64 long words (manual 3.5); every DRAM
/// block starts and ends on one.
constexpr int64_t kMvUnitLongWords = 64;
/// Groups, each with its own DRAM.
constexpr unsigned kDramGroups = 4;

inline int64_t roundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}
inline int64_t ceilDiv(int64_t value, int64_t divisor) {
  return (value + divisor - 1) / divisor;
}

struct DramForm {
  DeviceType type = DeviceType::Single;
  /// Logical shape, in the tensor's own (ONNX) dimension order.
  std::vector<int64_t> shape;
  /// DRAM dimension order: dimension order[k] of the tensor is the k-th
  /// (outermost first) dimension of the DRAM array.
  std::vector<unsigned> order;
  /// Long word address of the tensor's block in every group it uses.
  int64_t base = 0;
  /// Groups holding rows: 1 (group 0 only) or 4.
  unsigned groups = 1;

  /// The canonical form of a tensor: rows over four groups when there are
  /// enough of them to be worth the spread, group 0 otherwise.
  static DramForm canonical(DeviceType type, std::vector<int64_t> shape,
                            std::vector<unsigned> order = {});

  /// Extent of the innermost DRAM dimension (1 for a scalar) and its
  /// padded extent, a multiple of a quad's elements.
  int64_t innerExtent() const;
  int64_t innerPadded() const;
  int64_t rowLongWords() const { return innerPadded() / elementsPerLongWord(type); }
  /// Product of the outer DRAM dimensions (1 for rank 0 and 1).
  int64_t rows() const;
  /// The DRAM position (0 outermost) of the dimension the groups split:
  /// in a 4-D tensor the first outer one whose extent is not 1, so that a
  /// batch-1 NHWC activation spreads its H over the groups as a batch-8
  /// one spreads N; else (and when every outer extent is 1) the outermost.
  size_t splitPosition() const;
  /// Rows in each group's block: the blocks split the split dimension
  /// (splitPosition), ceil(extent / groups) of its indices each.
  int64_t rowsPerGroup() const;
  /// Rows stored in group g (the last groups may hold fewer, or none).
  int64_t rowsInGroup(unsigned g) const;
  /// Long words the tensor occupies in each group it uses, a multiple of
  /// an MV unit.
  int64_t groupLongWords() const;
  int64_t numElements() const;
  /// The shape in DRAM order.
  std::vector<int64_t> dramShape() const;

  /// Where logical element `index` lives: group, long word address and
  /// the element's slot in it (0 = most significant).
  struct Location {
    unsigned group;
    int64_t address;
    unsigned slot;
  };
  Location locate(const std::vector<int64_t> &index) const;

  /// "single[16,784] rows 16 x 200 lw, order (0,1), 1 group @0" for logs.
  std::string str() const;
};

/// Long words of a tensor in each group's DRAM, starting at its base.
struct DramImage {
  unsigned groups = 1;
  int64_t longWordsPerGroup = 0;
  std::array<std::vector<uint64_t>, kDramGroups> data;
};

/// Packs a host tensor (any dtype convertible to form.type) into its DRAM
/// form; padding is zero. Fails with a message when the element count or
/// type does not fit.
bool packHost(const DramForm &form, const reference::Tensor &host,
              DramImage &image, std::string &error);
/// Reads a tensor of host type `hostType` back from its DRAM form.
bool unpackHost(const DramForm &form, const DramImage &image,
                reference::DType hostType, reference::Tensor &host,
                std::string &error);

} // namespace mncc::codegen

#endif // MNCC_CODEGEN_DRAMFORM_H
