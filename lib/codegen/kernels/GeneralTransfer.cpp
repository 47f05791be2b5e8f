//===- GeneralTransfer.cpp - Whole tensors into and out of every PE -------===//

#include "GeneralTransfer.h"

#include "mncc/codegen/Transfer.h"

#include <string>

using namespace mncc;
using namespace mncc::codegen;
using namespace mncc::codegen::general;

int32_t PeImage::wordOf(const std::vector<int64_t> &index) const {
  DramForm::Location at = form.locate(index);
  int64_t longWord =
      int64_t(at.group) * form.groupLongWords() + (at.address - form.base);
  // The first element of a long word in its first word.
  return word + int32_t(longWordWords * longWord) + int32_t(at.slot);
}

int64_t general::stagedLongWords(const std::vector<PeImage> &images) {
  int64_t total = 0;
  for (const PeImage &image : images)
    total += image.longWords();
  return total;
}

void general::emitLoadToEveryPe(VsmWriter &out,
                                const std::vector<PeImage> &images) {
  if (images.empty())
    return;
  // Every block to every L2BM, staged back to back from address 0.
  std::vector<unsigned> tags;
  int64_t staged = 0;
  for (const PeImage &image : images) {
    int64_t block = image.form.groupLongWords();
    for (unsigned g = 0; g < image.form.groups; ++g) {
      unsigned tag = out.newTag();
      tags.push_back(tag);
      out.statement("mvb/n" + std::to_string(block) + VsmWriter::tagName(tag) +
                    " $d" + std::to_string(image.form.base) + "@" +
                    std::to_string(g) + " " +
                    l2bmOperand(staged + int64_t(g) * block));
    }
    staged += image.longWords();
  }
  for (unsigned tag : tags)
    out.wait(tag);
  for (int64_t offset = 0; offset < staged; offset += kL2bmStepLongWords)
    out.step({"l2bmb " + l2bmOperand(offset) + " " + l1bmOperand(offset)});
  // L1BM writes land six cycles after their step.
  out.nop();
  int64_t l1bm = 0;
  for (const PeImage &image : images) {
    for (int64_t j = 0; j < image.longWords(); j += 8)
      out.step(
          {"l1bmp " + l1bmOperand(l1bm + j, true) + " " +
           peOperand(image.memory, Width::DoubleLong, image.word + 2 * j)});
    l1bm += image.longWords();
  }
  out.nop();
}

void general::emitStoreFromEveryPe(VsmWriter &out, const PeImage &image,
                                   int32_t grfWord) {
  const char *bar = image.memory == PeMemory::LM0 ? "$mb" : "$nb";
  // Base address 2 x $peid (words): PE p of an L1B reads long word
  // 64 c + p of each 256-long-word chunk in cycle c.
  out.step(
      {"imm i\"1\" " + peOperand(PeMemory::GRF0, Width::Word, grfWord, 0)});
  out.nop();
  out.step({std::string("ilsl $peid ") +
            peOperand(PeMemory::GRF0, Width::Word, grfWord, 0) + " " + bar});
  // The base address is read a step before the access (H8).
  out.nop(2);
  int64_t total = image.longWords();
  for (int64_t chunk = 0; chunk < total; chunk += 4 * kPesPerL1b)
    out.step({"l1bmd " +
              peOperand(image.memory, Width::Long,
                        image.word + int32_t(2 * chunk), 2 * kPesPerL1b) +
              " " + l1bmOperand(chunk)});
  out.step({std::string("zero ") + bar});
  // The gather's L1BM writes have landed (one step in between).
  for (int64_t offset = 0; offset < total; offset += kL2bmStepLongWords)
    out.step({"l2bm@0 " + l1bmOperand(offset) + " " + l2bmOperand(offset)});
  // An MV may read the L2BM once the writes have landed.
  out.nop(2);
  std::vector<unsigned> tags;
  int64_t block = image.form.groupLongWords();
  for (unsigned g = 0; g < image.form.groups; ++g) {
    unsigned tag = out.newTag();
    tags.push_back(tag);
    std::string group = std::to_string(g);
    out.statement("mvp/n" + std::to_string(block) + VsmWriter::tagName(tag) +
                  " " + l2bmOperand(int64_t(g) * block) + "@" + group +
                  ".0 $d" + std::to_string(image.form.base) + "@" + group);
  }
  for (unsigned tag : tags)
    out.wait(tag);
}
