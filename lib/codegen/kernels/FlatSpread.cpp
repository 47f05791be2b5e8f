//===- FlatSpread.cpp - A tensor spread flat over every PE ----------------===//

#include "FlatSpread.h"

#include <algorithm>

using namespace mncc;
using namespace mncc::codegen;

namespace {
constexpr int64_t kL1bsPerGroup = kL1bsPerL2b * kL2bsPerGroup;
} // namespace

FlatSpread::FlatSpread(const DramForm &form) : Form(form) {
  int64_t groupLongWords = form.rowsPerGroup() * form.rowLongWords();
  PeLongWords = roundUp(ceilDiv(groupLongWords, kL1bsPerGroup * kPesPerL1b),
                        4);
}

L1bRanges FlatSpread::rangesOf(int64_t first, int64_t count) const {
  L1bRanges ranges;
  ranges.base = Form.base + first * kPesPerL1b;
  ranges.l1bStride = shareLongWords();
  ranges.l2bStride = shareLongWords() * kL1bsPerL2b;
  ranges.longWords = count * kPesPerL1b;
  ranges.limit = Form.groupLongWords() - first * kPesPerL1b;
  ranges.onlyGroup0 = Form.groups == 1;
  return ranges;
}

void FlatSpread::emitLoad(VsmWriter &out, int64_t first, int64_t count,
                          PeMemory memory, int64_t lmLongWord) const {
  for (int64_t done = 0; done < count; done += kChunkLongWords) {
    int64_t chunk = std::min(kChunkLongWords, count - done);
    emitDramToL1bm(out, rangesOf(first + done, chunk), 0, 0);
    emitL1bmToPe(out, Spread::AllPes, 0, memory, lmLongWord + done, chunk);
  }
}

void FlatSpread::emitStore(VsmWriter &out, int64_t first, int64_t count,
                           PeMemory memory, int64_t lmLongWord) const {
  for (int64_t done = 0; done < count; done += kChunkLongWords) {
    int64_t chunk = std::min(kChunkLongWords, count - done);
    emitPeToL1bm(out, Spread::AllPes, memory, lmLongWord + done, chunk, 0);
    emitL1bmToDram(out, rangesOf(first + done, chunk), 0, 0);
  }
}
