//===- FlatSpread.h - A tensor spread flat over every PE --------*- C++ -*-===//
//
// The simplest placement for element-wise work: each group's DRAM block is
// cut into sixteen equal shares, one per L1B of the group (L2B-major), and
// each share is dealt out to the L1B's 64 PEs long word by long word
// (l1bmd). Long word j of PE (mab, pe) of L1B k of L2B l in group g is
//
//   DRAM_g[base + (8 l + k) * shareLongWords + 64 j + 4 mab + pe].
//
// Every tensor of the same DRAM geometry gets the same spread, so an
// element-wise kernel works long word by long word with no communication.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_CODEGEN_KERNELS_FLATSPREAD_H
#define MNCC_LIB_CODEGEN_KERNELS_FLATSPREAD_H

#include "mncc/codegen/DramForm.h"
#include "mncc/codegen/Transfer.h"

namespace mncc::codegen {

class FlatSpread {
public:
  /// Long words per PE moved through the L1BM at once: 2 Ki long words per
  /// L1B, 16 Ki per L2BM, half of it.
  static constexpr int64_t kChunkLongWords = 32;

  explicit FlatSpread(const DramForm &form);

  /// Long words each PE holds (a multiple of 4).
  int64_t peLongWords() const { return PeLongWords; }
  /// Long words of a group's DRAM block each L1B covers.
  int64_t shareLongWords() const { return PeLongWords * kPesPerL1b; }

  /// Loads PE long words [first, first + count) of the tensor into
  /// [lmLongWord, lmLongWord + count) of `memory` in every PE (count a
  /// multiple of 4).
  void emitLoad(VsmWriter &out, int64_t first, int64_t count,
                PeMemory memory, int64_t lmLongWord) const;
  /// Stores them back.
  void emitStore(VsmWriter &out, int64_t first, int64_t count,
                 PeMemory memory, int64_t lmLongWord) const;

private:
  L1bRanges rangesOf(int64_t first, int64_t count) const;

  DramForm Form;
  int64_t PeLongWords;
};

} // namespace mncc::codegen

#endif // MNCC_LIB_CODEGEN_KERNELS_FLATSPREAD_H
