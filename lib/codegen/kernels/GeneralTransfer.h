//===- GeneralTransfer.h - Whole tensors in and out of every PE -*- C++ -*-===//
//
// The general kernel works on a tensor's *DRAM image* in a PE memory: the
// long words of every group's block, group after group, each block as long
// as it is in DRAM (DramForm::groupLongWords, a multiple of 64), so that a
// block moves between the DRAM and the PE without any rearranging:
//
//   load:  mvb (group g's DRAM -> every L2BM), l2bmb (-> every L1BM),
//          l1bmp (-> every PE), double long words, 8 a step per PE;
//   store: l1bmd gathers the 64 PEs of each L1B, each PE reading through
//          its LM base address register set to 2 x $peid, so that PE p
//          sends long words p, p + 64, ... and the L1BM receives the image
//          in order, 256 long words a step; l2bm@0 and mvp take block g
//          back to group g's DRAM.
//
// Every PE holds the same image and computes the same results, so any 64
// PEs of an L1B can gather it (there is no PE -> L1BM inverse of l1bmp).
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_CODEGEN_KERNELS_GENERALTRANSFER_H
#define MNCC_LIB_CODEGEN_KERNELS_GENERALTRANSFER_H

#include "mncc/codegen/DramForm.h"
#include "mncc/codegen/VsmWriter.h"

#include <vector>

namespace mncc::codegen::general {

/// A tensor's DRAM image at a word of a PE memory (4-word aligned).
struct PeImage {
  DramForm form;
  PeMemory memory = PeMemory::LM0;
  int32_t word = 0;
  /// Words per long word of the DRAM image: 2 as loaded (32-bit elements);
  /// 4 for a half tensor widened to singles (GeneralLowering.h).
  int32_t longWordWords = 2;

  /// Long words of the image: every group block of the form.
  int64_t longWords() const {
    return int64_t(form.groups) * form.groupLongWords();
  }
  int32_t words() const { return int32_t(longWordWords * longWords()); }
  /// The word of logical element `index` (32-bit elements, or halves
  /// widened to singles).
  int32_t wordOf(const std::vector<int64_t> &index) const;
};

/// Long words of the L1BM and L2BM that loading `images` stages through
/// (from address 0); at most kL1bmLongWords.
int64_t stagedLongWords(const std::vector<PeImage> &images);

/// Loads every image into every PE. Ends with the PE writes landed.
void emitLoadToEveryPe(VsmWriter &out, const std::vector<PeImage> &images);

/// Stores an image held alike by every PE (LM0 or LM1) to its DRAM form;
/// `grfWord` is a word of GRF0 the store may overwrite. Ends with the
/// transfers done and the base address register back at 0.
void emitStoreFromEveryPe(VsmWriter &out, const PeImage &image,
                          int32_t grfWord);

} // namespace mncc::codegen::general

#endif // MNCC_LIB_CODEGEN_KERNELS_GENERALTRANSFER_H
