//===- VsmWriter.cpp - Building MN-Core 2 assembly text -------------------===//

#include "mncc/codegen/VsmWriter.h"

#include "mncc/emu/Machine.h"

#include <algorithm>
#include <cstdio>
#include <vector>

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

namespace {

/// A run's steps, an empty string for each idle step; false when the run
/// holds anything else.
bool stepsOf(const std::string &text, std::vector<std::string_view> &steps) {
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view()
                                         : rest.substr(end + 1);
    if (line.empty())
      continue;
    if (line == "nop") {
      steps.emplace_back();
      continue;
    }
    if (line.substr(0, 4) == "nop/") {
      unsigned count = 0;
      for (char c : line.substr(4)) {
        if (c < '0' || c > '9')
          return false;
        count = count * 10 + unsigned(c - '0');
      }
      steps.insert(steps.end(), count, std::string_view());
      continue;
    }
    // A step that waits, an MV, a comment or a control: not a plain step.
    if (line[0] == '#' || line.substr(0, 2) == "mv" ||
        line.find("wait") != std::string_view::npos ||
        line.substr(0, 2) == "d " || line.substr(0, 4) == "mask")
      return false;
    steps.push_back(line);
  }
  return true;
}

} // namespace

void VsmWriter::sideBySide(const VsmWriter &first, const VsmWriter &second) {
  std::vector<std::string_view> a, b;
  if (!stepsOf(first.Text, a) || !stepsOf(second.Text, b)) {
    Text += first.Text;
    Text += second.Text;
    Steps += first.Steps + second.Steps;
    return;
  }
  unsigned idle = 0;
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    std::string_view x = i < a.size() ? a[i] : std::string_view();
    std::string_view y = i < b.size() ? b[i] : std::string_view();
    if (x.empty() && y.empty()) {
      ++idle;
      continue;
    }
    nop(idle);
    idle = 0;
    step({x, y});
  }
  nop(idle);
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
