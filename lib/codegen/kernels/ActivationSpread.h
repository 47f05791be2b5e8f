//===- ActivationSpread.h - Flat spreads with periodic tables ---*- C++ -*-===//
//
// The flat spread of FlatSpread.h (each group's block cut into sixteen
// shares, one per L1B, dealt to the PEs by l1bmd), with each PE's share a
// multiple of a table length L. Long word j of PE q = 4 mab + pe of L1B k
// covers block address k * share + 64 j + q; with share and every pass
// start a multiple of 64 L, that address is 64 (j mod L) + q modulo 64 L.
// So anything that depends only on the block address modulo a period that
// divides 64 L -- the zero padding of the rows, a per-channel operand of
// NCHW or NHWC data, a bias row -- is the same table of L long words in
// every L1B and every pass: a PE-uniform address (j mod L) for every PE
// (docs/codegen.md E1).
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_CODEGEN_KERNELS_ACTIVATIONSPREAD_H
#define MNCC_LIB_CODEGEN_KERNELS_ACTIVATIONSPREAD_H

#include "mncc/codegen/DramForm.h"
#include "mncc/codegen/Kernel.h"
#include "mncc/codegen/Transfer.h"
#include "mncc/reference/Tensor.h"

#include <functional>
#include <string>

namespace mncc::codegen {

/// Long words per PE of the table of a pattern with `period` long words
/// (a multiple of 4): the least multiple of 4 whose 64-fold is a multiple
/// of the period.
int64_t periodicTableLongWords(int64_t period);

class AlignedSpread {
public:
  /// Long words per PE moved through the L1BM at once (as FlatSpread).
  static constexpr int64_t kChunkLongWords = 32;

  /// `align` (a multiple of 4) divides every PE's share.
  AlignedSpread(const DramForm &form, int64_t align);

  int64_t peLongWords() const { return PeLongWords; }
  int64_t align() const { return Align; }
  /// The largest pass (a multiple of align) not over `limit` long words,
  /// or 0 when align itself is over it.
  int64_t passLongWords(int64_t limit) const;

  void emitLoad(VsmWriter &out, int64_t first, int64_t count, PeMemory memory,
                int64_t lmLongWord) const;
  void emitStore(VsmWriter &out, int64_t first, int64_t count, PeMemory memory,
                 int64_t lmLongWord) const;
  /// Where PE long words [first, first + count) of every L1B lie in DRAM
  /// (count at most a chunk), for kernels that move them themselves.
  L1bRanges rangesOf(int64_t first, int64_t count) const;

private:

  DramForm Form;
  int64_t Align;
  int64_t PeLongWords;
};

/// A table's DRAM image: 64 L long words in each group the data uses,
/// long word 64 k + q holding what PE q needs at table long word k. The
/// value of each element is `element(group, blockLongWord, slot)` as bit
/// patterns of the form's type (the block address taken modulo nothing:
/// the caller reduces it by its period).
using TableElement = std::function<uint64_t(
    unsigned group, int64_t blockLongWord, unsigned slot)>;
DramImage packPeriodicTable(const DramForm &data, int64_t tableLongWords,
                            const TableElement &element);

/// Loads a table image at DRAM `base` (every L1B gets the same) into
/// [lmLongWord, lmLongWord + tableLongWords) of `memory` in every PE.
void emitLoadTable(VsmWriter &out, const DramForm &data, int64_t base,
                   int64_t tableLongWords, PeMemory memory, int64_t lmLongWord);

/// The broadcast of `operand` (shape broadcastable to `data`'s logical
/// shape, numpy rules) over `data`'s DRAM form: the period in long words
/// of its pattern over each group's block, and the element of the operand
/// at each block position (-1 for padding). Fails when the operand's
/// shape does not broadcast.
struct BroadcastPattern {
  int64_t periodLongWords = 0;
  /// Operand element index (row-major over its own shape) of block long
  /// word a, slot s of group g; -1 for padding.
  std::function<int64_t(unsigned group, int64_t a, unsigned slot)> element;
};
bool broadcastPattern(const DramForm &data,
                      const std::vector<int64_t> &operandShape,
                      BroadcastPattern &pattern, std::string &error);

/// Channels last: (0, 2, 3, ..., 1) for rank 3 and up (NHWC for 4-D, the
/// convolutions' order), empty (the identity) below.
std::vector<unsigned> channelsLastOrder(size_t rank);
/// The request with every tensor in the DRAM order `generator` prefers for
/// it, as the planner gives them (docs/codegen.md C4): matches() judges a
/// request in its canonical forms by what the kernel will get.
KernelRequest withPreferredOrders(const KernelRequest &request,
                                  const KernelGenerator &generator);

/// A per-element kernel over `data` with periodic tables (one step a
/// chunk, two for a double product): loads the tables (DRAM images of
/// packPeriodicTable) into their memories at long word 0, then per pass
/// loads the data into LM0, emits the steps `expression(lmLongWord,
/// tableLongWord)` for each chunk of four long words (result into LM1 at
/// lmLongWord) and stores LM1 in `result`'s form (the data's geometry).
/// `mau` says which latency the results need before the store. Tables of
/// at most 256 long words (a GRF).
struct TableOperand {
  int64_t dramBase = 0;
  PeMemory memory = PeMemory::GRF0;
};
void emitTableKernel(
    VsmWriter &out, const DramForm &data, const DramForm &result,
    int64_t tableLongWords, const std::vector<TableOperand> &tables,
    const std::function<std::vector<std::string>(int64_t, int64_t)> &expression,
    bool mau);

} // namespace mncc::codegen

#endif // MNCC_LIB_CODEGEN_KERNELS_ACTIVATIONSPREAD_H
