//===- FlatSpread.cpp - A tensor spread flat over every PE ----------------===//

#include "FlatSpread.h"

#include <algorithm>

using namespace mncc;
using namespace mncc::codegen;

namespace {
constexpr int64_t kL1bsPerGroup = kL1bsPerL2b * kL2bsPerGroup;
/// Long words of an L2B's share per PE long word: one for each PE of its
/// eight L1Bs.
constexpr int64_t kL2bLongWordsPerPeLongWord = kPesPerL1b * kL1bsPerL2b;
/// The two L2BM buffers chunks alternate between.
constexpr int64_t kL2bmBufferLongWords =
    FlatSpread::kChunkLongWords * kL2bLongWordsPerPeLongWord;
static_assert(2 * kL2bmBufferLongWords <= kL2bmLongWords,
              "two chunks fit the L2BM");
/// Long words l2bmd moves a step on the L2BM side, and to each L1BM.
constexpr int64_t kL2bmdLongWords = 256;
constexpr int64_t kL2bmdL1bLongWords = kL2bmdLongWords / kL1bsPerL2b;

int64_t bufferAddress(int64_t chunkIndex) {
  return (chunkIndex % 2) * kL2bmBufferLongWords;
}
} // namespace

FlatSpread::FlatSpread(const DramForm &form) : Form(form) {
  int64_t groupLongWords = form.rowsPerGroup() * form.rowLongWords();
  PeLongWords = roundUp(ceilDiv(groupLongWords, kL1bsPerGroup * kPesPerL1b),
                        4);
}

std::vector<unsigned> FlatSpread::emitChunkMoves(VsmWriter &out, int64_t first,
                                                 int64_t count, int64_t buffer,
                                                 bool toDram) const {
  // One tag for the chunk's transfers (T5).
  unsigned tag = 0;
  int64_t share = PeLongWords * kL2bLongWordsPerPeLongWord;
  for (unsigned l2b = 0; l2b < kL2bsPerGroup; ++l2b) {
    int64_t offset = l2b * share + first * kL2bLongWordsPerPeLongWord;
    int64_t longWords = std::min(count * kL2bLongWordsPerPeLongWord,
                                 Form.groupLongWords() - offset);
    if (longWords <= 0)
      continue;
    bool onlyGroup0 = Form.groups == 1;
    tag = toDram ? emitMvL2bmToDram(out, buffer, Form.base + offset,
                                    longWords, l2b, onlyGroup0, tag)
                 : emitMvDramToL2bm(out, Form.base + offset, buffer, longWords,
                                    l2b, onlyGroup0, tag);
  }
  return tag ? std::vector<unsigned>{tag} : std::vector<unsigned>{};
}

void FlatSpread::emitLoad(VsmWriter &out, int64_t first, int64_t count,
                          PeMemory memory, int64_t lmLongWord) const {
  auto chunkCount = [&](int64_t done) {
    return std::min(kChunkLongWords, count - done);
  };
  std::vector<unsigned> pending =
      emitChunkMoves(out, first, chunkCount(0), bufferAddress(0), false);
  for (int64_t done = 0, index = 0; done < count;
       done += kChunkLongWords, ++index) {
    int64_t chunk = chunkCount(done);
    // The next chunk's MV into the other buffer, while this one moves on:
    // that buffer's last reader (the l2bmd two chunks back) is long done.
    std::vector<unsigned> next;
    if (done + kChunkLongWords < count)
      next = emitChunkMoves(out, first + done + kChunkLongWords,
                            chunkCount(done + kChunkLongWords),
                            bufferAddress(index + 1), false);
    for (unsigned tag : pending)
      out.wait(tag);
    int64_t buffer = bufferAddress(index);
    for (int64_t s = 0; s * kL2bmdLongWords < chunk * kL2bLongWordsPerPeLongWord;
         ++s)
      out.step({"l2bmd " + l2bmOperand(buffer + s * kL2bmdLongWords) + " " +
                l1bmOperand(s * kL2bmdL1bLongWords)});
    // The L1BM writes land six cycles after their step.
    out.nop();
    emitL1bmToPe(out, Spread::AllPes, 0, memory, lmLongWord + done, chunk);
    pending = std::move(next);
  }
}

void FlatSpread::emitStore(VsmWriter &out, int64_t first, int64_t count,
                           PeMemory memory, int64_t lmLongWord) const {
  // The tags of the MVs still reading each buffer.
  std::vector<unsigned> reading[2];
  for (int64_t done = 0, index = 0; done < count;
       done += kChunkLongWords, ++index) {
    int64_t chunk = std::min(kChunkLongWords, count - done);
    emitPeToL1bm(out, Spread::AllPes, memory, lmLongWord + done, chunk, 0);
    // This buffer's previous chunk must be in DRAM before l2bmd overwrites
    // it.
    for (unsigned tag : reading[index % 2])
      out.wait(tag);
    int64_t buffer = bufferAddress(index);
    for (int64_t s = 0; s * kL2bmdLongWords < chunk * kL2bLongWordsPerPeLongWord;
         ++s)
      out.step({"l2bmd " + l1bmOperand(s * kL2bmdL1bLongWords) + " " +
                l2bmOperand(buffer + s * kL2bmdLongWords)});
    // An MV may read the L2BM only once the writes have landed.
    out.nop(2);
    reading[index % 2] =
        emitChunkMoves(out, first + done, chunk, buffer, true);
  }
  for (const std::vector<unsigned> &tags : reading)
    for (unsigned tag : tags)
      out.wait(tag);
}
