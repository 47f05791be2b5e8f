//===- VsmWriter.cpp - Building MN-Core 2 assembly text -------------------===//

#include "mncc/codegen/VsmWriter.h"

#include "mncc/emu/Machine.h"

#include <cstdio>

using namespace mncc;
using namespace mncc::codegen;

unsigned codegen::widthWords(Width width) {
  switch (width) {
  case Width::Word:
    return 1;
  case Width::Long:
    return 2;
  case Width::DoubleLong:
    return 4;
  }
  return 2;
}

int64_t codegen::peMemoryLongWords(PeMemory memory) {
  return memory == PeMemory::LM0 || memory == PeMemory::LM1
             ? emu::LmWords / 2
             : emu::GrfWords / 2;
}

const char *codegen::peMemoryName(PeMemory memory) {
  switch (memory) {
  case PeMemory::LM0:
    return "LM0";
  case PeMemory::LM1:
    return "LM1";
  case PeMemory::GRF0:
    return "GRF0";
  case PeMemory::GRF1:
    return "GRF1";
  }
  return "LM0";
}

namespace {

std::string operandPrefix(PeMemory memory, Width width) {
  std::string text = "$";
  if (width == Width::Long)
    text += "l";
  else if (width == Width::DoubleLong)
    text += "ll";
  switch (memory) {
  case PeMemory::LM0:
    text += "m";
    break;
  case PeMemory::LM1:
    text += "n";
    break;
  case PeMemory::GRF0:
    text += "r";
    break;
  case PeMemory::GRF1:
    text += "s";
    break;
  }
  return text;
}

} // namespace

std::string codegen::peOperand(PeMemory memory, Width width,
                               int64_t wordAddress) {
  return operandPrefix(memory, width) + std::to_string(wordAddress) + "v";
}

std::string codegen::peOperand(PeMemory memory, Width width,
                               int64_t wordAddress, unsigned wordsPerCycle) {
  std::string text = operandPrefix(memory, width) + std::to_string(wordAddress);
  if (wordsPerCycle == widthWords(width))
    return text + "v";
  if (wordsPerCycle != 0)
    text += "v" + std::to_string(wordsPerCycle);
  return text;
}

std::string codegen::peOperandFlat(PeMemory memory, Width width,
                                   const std::array<int64_t, 4> &addresses) {
  std::string text = operandPrefix(memory, width) + "[";
  for (size_t c = 0; c < 4; ++c)
    text += (c ? "," : "") + std::to_string(addresses[c]);
  return text + "]";
}

std::string codegen::l1bmOperand(int64_t address, bool doubleLong) {
  return (doubleLong ? "$llb" : "$lb") + std::to_string(address);
}

std::string codegen::l2bmOperand(int64_t address) {
  return "$lc" + std::to_string(address);
}

void VsmWriter::comment(std::string_view text) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos)
      end = text.size();
    Text += "# ";
    Text += text.substr(start, end - start);
    Text += '\n';
    start = end + 1;
  }
}

void VsmWriter::statement(std::string_view text) {
  Text += text;
  Text += '\n';
  if (text.substr(0, 2) != "mv" && text.substr(0, 4) != "mask" &&
      text.substr(0, 2) != "d ")
    ++Steps;
}

void VsmWriter::step(std::initializer_list<std::string_view> expressions) {
  bool first = true;
  for (std::string_view expression : expressions) {
    if (expression.empty())
      continue;
    if (!first)
      Text += "; ";
    Text += expression;
    first = false;
  }
  Text += '\n';
  ++Steps;
}

void VsmWriter::nop(unsigned count) {
  if (count == 0)
    return;
  Text += count == 1 ? std::string("nop") : "nop/" + std::to_string(count);
  Text += '\n';
  Steps += count;
}

unsigned VsmWriter::newTag() {
  unsigned tag = NextTag;
  NextTag = NextTag == 63 ? 1 : NextTag + 1;
  return tag;
}

std::string VsmWriter::tagName(unsigned tag) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "i%02x", tag);
  return buffer;
}

void VsmWriter::wait(unsigned tag) {
  Text += "nop; wait " + tagName(tag) + "\n";
  ++Steps;
}
