//===- FlatSpread.h - A tensor spread flat over every PE --------*- C++ -*-===//
//
// The simplest placement for element-wise work. Each group's DRAM block is
// cut into two equal shares, one per L2B, and each share into chunks of
// 512 long words per PE long word: a chunk goes DRAM -> L2BM in one MV,
// L2BM -> L1BM by l2bmd (256 long words a step, L1B k taking long words
// 8k..8k+7 of every 64) and L1BM -> PE by l1bmd (PE q long word j from
// L1BM long word 64 j + q). Every tensor of the same DRAM geometry gets
// the same spread, so an element-wise kernel works long word by long word
// with no communication.
//
// Why l2bmd and not l2bmb@k: it moves four times the long words a step
// (256 against 64 for one L1B), and why chunks in two L2BM buffers: the
// MV of the next chunk runs while the PEs move the current one, so loads
// and stores run at the DRAM's rate instead of the DRAM's plus the L2BM's
// (docs/codegen.md C7: ResNet-50's residual Add 96704 -> 57752 cycles).
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_CODEGEN_KERNELS_FLATSPREAD_H
#define MNCC_LIB_CODEGEN_KERNELS_FLATSPREAD_H

#include "mncc/codegen/DramForm.h"
#include "mncc/codegen/Transfer.h"

namespace mncc::codegen {

class FlatSpread {
public:
  /// Long words per PE one chunk moves: 16 Ki long words of an L2BM, half
  /// of it, so that two chunks are in flight.
  static constexpr int64_t kChunkLongWords = 32;

  explicit FlatSpread(const DramForm &form);

  /// Long words each PE holds (a multiple of 4).
  int64_t peLongWords() const { return PeLongWords; }

  /// Loads PE long words [first, first + count) of the tensor into
  /// [lmLongWord, lmLongWord + count) of `memory` in every PE (count a
  /// multiple of 4).
  void emitLoad(VsmWriter &out, int64_t first, int64_t count,
                PeMemory memory, int64_t lmLongWord) const;
  /// Stores them back.
  void emitStore(VsmWriter &out, int64_t first, int64_t count,
                 PeMemory memory, int64_t lmLongWord) const;

private:
  /// The MV transfers of the chunk of PE long words [first, first +
  /// count) between DRAM and L2BM buffer `buffer`, clipped to the tensor
  /// (the L2BM past the clip holds what it held; a store never writes it
  /// back). They carry one tag, returned (none when the chunk is past the
  /// tensor).
  std::vector<unsigned> emitChunkMoves(VsmWriter &out, int64_t first,
                                       int64_t count, int64_t buffer,
                                       bool toDram) const;

  DramForm Form;
  int64_t PeLongWords;
};

} // namespace mncc::codegen

#endif // MNCC_LIB_CODEGEN_KERNELS_FLATSPREAD_H
