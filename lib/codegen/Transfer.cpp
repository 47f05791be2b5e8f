//===- Transfer.cpp - Moving data between DRAM and the PEs ----------------===//

#include "mncc/codegen/Transfer.h"

#include <algorithm>
#include <string>
#include <vector>

using namespace mncc;
using namespace mncc::codegen;

namespace {

/// One MV transfer: a contiguous range between a group's DRAM and one of
/// its L2BMs.
struct Piece {
  unsigned l2b;
  int64_t dram;
  int64_t l2bm;
  int64_t longWords;
};

/// The pieces of a transfer, clipped to the tensor; `wholeL2b` merges the
/// eight L1B ranges of an L2B when they are back to back in DRAM.
std::vector<Piece> piecesOf(const L1bRanges &ranges, int64_t l2bmAddress) {
  std::vector<Piece> pieces;
  unsigned l2bs = ranges.l2bStride == 0 ? 1 : kL2bsPerGroup;
  bool l1bBroadcast = ranges.l1bStride == 0;
  bool contiguous = ranges.l1bStride == ranges.longWords;
  auto add = [&](unsigned l2b, int64_t offset, int64_t l2bm, int64_t count) {
    count = std::min(count, ranges.limit - offset);
    if (count > 0)
      pieces.push_back({l2b, ranges.base + offset, l2bm, count});
  };
  for (unsigned l = 0; l < l2bs; ++l) {
    int64_t start = int64_t(l) * ranges.l2bStride;
    if (l1bBroadcast) {
      add(l, start, l2bmAddress, ranges.longWords);
    } else if (contiguous) {
      add(l, start, l2bmAddress, ranges.longWords * kL1bsPerL2b);
    } else {
      for (unsigned k = 0; k < kL1bsPerL2b; ++k)
        add(l, start + int64_t(k) * ranges.l1bStride,
            l2bmAddress + int64_t(k) * ranges.longWords, ranges.longWords);
    }
  }
  return pieces;
}

std::string dramOperand(bool onlyGroup0, int64_t address) {
  return "$d" + std::to_string(address) + (onlyGroup0 ? "@0" : "");
}

std::string l2bmMvOperand(bool onlyGroup0, int64_t address, unsigned l2b) {
  return "$lc" + std::to_string(address) + "@" + (onlyGroup0 ? "0" : "") +
         "." + std::to_string(l2b);
}

std::string mvOpcode(const char *name, int64_t longWords, unsigned tag) {
  return std::string(name) + "/n" + std::to_string(longWords) +
         VsmWriter::tagName(tag);
}

} // namespace

namespace {
/// An mvp of `longWords` from `from` to `to`, carrying `tag` (a fresh one
/// for 0); returns the tag.
unsigned emitMvp(VsmWriter &out, const std::string &from, const std::string &to,
                 int64_t longWords, unsigned tag) {
  if (tag == 0)
    tag = out.newTag();
  out.statement(mvOpcode("mvp", longWords, tag) + " " + from + " " + to);
  return tag;
}
} // namespace

unsigned codegen::emitMvDramToL2bm(VsmWriter &out, int64_t dram, int64_t l2bm,
                                   int64_t longWords, unsigned l2b,
                                   bool onlyGroup0, unsigned tag) {
  return emitMvp(out, dramOperand(onlyGroup0, dram),
                 l2bmMvOperand(onlyGroup0, l2bm, l2b), longWords, tag);
}

unsigned codegen::emitMvL2bmToDram(VsmWriter &out, int64_t l2bm, int64_t dram,
                                   int64_t longWords, unsigned l2b,
                                   bool onlyGroup0, unsigned tag) {
  return emitMvp(out, l2bmMvOperand(onlyGroup0, l2bm, l2b),
                 dramOperand(onlyGroup0, dram), longWords, tag);
}

std::vector<unsigned> codegen::emitDramToL2bm(VsmWriter &out,
                                              const L1bRanges &ranges,
                                              int64_t l2bmAddress) {
  // One tag for all the pieces: a wait waits for every transfer its tag
  // carried (T5), and a tag per piece would run through the 63 tags when
  // two blocks are in flight, making a wait for one block also wait for
  // the next that reused its tags.
  std::vector<unsigned> tags;
  unsigned tag = 0;
  bool bothL2bsSame = ranges.l2bStride == 0;
  for (const Piece &piece : piecesOf(ranges, l2bmAddress)) {
    if (tag == 0)
      tag = out.newTag();
    if (bothL2bsSame && !ranges.onlyGroup0) {
      // One transfer fills both L2BMs of every group.
      out.statement(mvOpcode("mvb2", piece.longWords, tag) + " $d" +
                    std::to_string(piece.dram) + " $lc" +
                    std::to_string(piece.l2bm));
      continue;
    }
    for (unsigned l = piece.l2b;
         l < (bothL2bsSame ? kL2bsPerGroup : piece.l2b + 1); ++l)
      emitMvDramToL2bm(out, piece.dram, piece.l2bm, piece.longWords, l,
                       ranges.onlyGroup0, tag);
  }
  if (tag != 0)
    tags.push_back(tag);
  return tags;
}

void codegen::emitL2bmToL1bm(VsmWriter &out, const L1bRanges &ranges,
                             int64_t l1bmAddress, int64_t l2bmAddress) {
  // L2BM -> L1BM, 64 long words a step; the instruction runs in every L2B
  // of every group at once, so it moves the longest piece everywhere
  // (clipped pieces carry whatever the L2BM held, which nobody reads).
  bool l1bBroadcast = ranges.l1bStride == 0;
  for (unsigned k = 0; k < (l1bBroadcast ? 1 : kL1bsPerL2b); ++k)
    for (int64_t offset = 0; offset < ranges.longWords;
         offset += kL2bmStepLongWords) {
      std::string opcode =
          l1bBroadcast ? std::string("l2bmb") : "l2bmb@" + std::to_string(k);
      out.step({opcode + " " +
                l2bmOperand(l2bmAddress + int64_t(k) * ranges.longWords *
                                              !l1bBroadcast +
                            offset) +
                " " + l1bmOperand(l1bmAddress + offset)});
    }
  // The L1BM writes land six cycles after their step: one step before a
  // reader may start.
  out.nop();
}

void codegen::emitDramToL1bm(VsmWriter &out, const L1bRanges &ranges,
                             int64_t l1bmAddress, int64_t l2bmAddress) {
  for (unsigned tag : emitDramToL2bm(out, ranges, l2bmAddress))
    out.wait(tag);
  emitL2bmToL1bm(out, ranges, l1bmAddress, l2bmAddress);
}

void codegen::emitL1bmToL2bm(VsmWriter &out, const L1bRanges &ranges,
                             int64_t l1bmAddress, int64_t l2bmAddress) {
  bool l1bBroadcast = ranges.l1bStride == 0;
  for (unsigned k = 0; k < (l1bBroadcast ? 1 : kL1bsPerL2b); ++k)
    for (int64_t offset = 0; offset < ranges.longWords;
         offset += kL2bmStepLongWords)
      out.step({"l2bm@" + std::to_string(k) + " " +
                l1bmOperand(l1bmAddress + offset) + " " +
                l2bmOperand(l2bmAddress +
                            int64_t(k) * ranges.longWords * !l1bBroadcast +
                            offset)});
  // An MV may read the L2BM only once the writes have landed.
  out.nop(2);
}

std::vector<unsigned> codegen::emitL2bmToDram(VsmWriter &out,
                                              const L1bRanges &ranges,
                                              int64_t l2bmAddress) {
  // One tag for all the pieces, as above.
  unsigned tag = 0;
  for (const Piece &piece : piecesOf(ranges, l2bmAddress))
    tag = emitMvL2bmToDram(out, piece.l2bm, piece.dram, piece.longWords,
                           piece.l2b, ranges.onlyGroup0, tag);
  return tag ? std::vector<unsigned>{tag} : std::vector<unsigned>{};
}

void codegen::emitL1bmToDram(VsmWriter &out, const L1bRanges &ranges,
                             int64_t l1bmAddress, int64_t l2bmAddress) {
  emitL1bmToL2bm(out, ranges, l1bmAddress, l2bmAddress);
  for (unsigned tag : emitL2bmToDram(out, ranges, l2bmAddress))
    out.wait(tag);
}

int64_t codegen::spreadL1bmLongWords(Spread spread, int64_t longWords) {
  switch (spread) {
  case Spread::AllPes:
    return longWords * kPesPerL1b;
  case Spread::MabBroadcast:
    return longWords * 4;
  case Spread::PeBroadcast:
    return longWords;
  }
  return longWords;
}

void codegen::emitL1bmToPe(VsmWriter &out, Spread spread, int64_t l1bmAddress,
                           PeMemory memory, int64_t lmLongWord,
                           int64_t longWords) {
  int64_t j = 0;
  switch (spread) {
  case Spread::AllPes:
    // l1bmd moves one long word per PE and cycle (manual table 3.8).
    for (; j < longWords; j += 4)
      out.step({"l1bmd " + l1bmOperand(l1bmAddress + 64 * j) + " " +
                peOperand(memory, Width::Long, 2 * (lmLongWord + j))});
    break;
  case Spread::MabBroadcast:
  case Spread::PeBroadcast: {
    const char *opcode = spread == Spread::MabBroadcast ? "l1bmm" : "l1bmp";
    int64_t group = spread == Spread::MabBroadcast ? 4 : 1;
    // Double long words where they fit: two long words per PE and cycle.
    for (; j + 8 <= longWords; j += 8)
      out.step({std::string(opcode) + " " +
                l1bmOperand(l1bmAddress + group * j, true) + " " +
                peOperand(memory, Width::DoubleLong, 2 * (lmLongWord + j))});
    for (; j < longWords; j += 4)
      out.step({std::string(opcode) + " " +
                l1bmOperand(l1bmAddress + group * j) + " " +
                peOperand(memory, Width::Long, 2 * (lmLongWord + j))});
    break;
  }
  }
  // PE memory writes land six cycles after their step.
  out.nop();
}

void codegen::emitPeToL1bm(VsmWriter &out, Spread spread, PeMemory memory,
                           int64_t lmLongWord, int64_t longWords,
                           int64_t l1bmAddress) {
  int64_t j = 0;
  if (spread == Spread::AllPes) {
    for (; j < longWords; j += 4)
      out.step({"l1bmd " +
                peOperand(memory, Width::Long, 2 * (lmLongWord + j)) + " " +
                l1bmOperand(l1bmAddress + 64 * j)});
  } else {
    for (; j + 8 <= longWords; j += 8)
      out.step({"l1bmm@0 " +
                peOperand(memory, Width::DoubleLong, 2 * (lmLongWord + j)) +
                " " + l1bmOperand(l1bmAddress + 4 * j, true)});
    for (; j < longWords; j += 4)
      out.step({"l1bmm@0 " +
                peOperand(memory, Width::Long, 2 * (lmLongWord + j)) + " " +
                l1bmOperand(l1bmAddress + 4 * j)});
  }
  // The L1BM writes land six cycles after their step.
  out.nop();
}
