//===- VsmWriter.cpp - Building MN-Core 2 assembly text -------------------===//

#include "mncc/codegen/VsmWriter.h"

#include "mncc/emu/Machine.h"
#include "mncc/emu/Parser.h"

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

/// A line of a run: a PE step, an idle step (nop), a wait (a step of its
/// own), or a statement that takes no step (an MV, a comment, a control).
struct RunLine {
  enum Kind { Step, Idle, Wait, Other } kind;
  std::string_view text;
};

/// The lines of a run; false for a run with a control (a `mask` setting,
/// a debug access), which would change what the other run's steps do.
bool linesOf(const std::string &text, std::vector<RunLine> &lines) {
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view()
                                         : rest.substr(end + 1);
    if (line.empty())
      continue;
    unsigned idle = 0;
    if (line == "nop") {
      idle = 1;
    } else if (line.substr(0, 4) == "nop/") {
      for (char c : line.substr(4))
        idle = c >= '0' && c <= '9' ? idle * 10 + unsigned(c - '0') : 0;
    }
    if (idle > 0) {
      lines.insert(lines.end(), idle, RunLine{RunLine::Idle, {}});
      continue;
    }
    if (line.substr(0, 2) == "d " || line.substr(0, 4) == "mask")
      return false;
    RunLine::Kind kind = RunLine::Step;
    if (line[0] == '#' || line.substr(0, 2) == "mv")
      kind = RunLine::Other;
    else if (line.find("wait") != std::string_view::npos ||
             line.substr(0, 3) == "nop")
      kind = RunLine::Wait;
    lines.push_back({kind, line});
  }
  return true;
}

/// Whether two steps issue as one: what the emulator's parser takes
/// (manual 3.6.4, docs/target/mncore2.md S34), the one place the issue
/// rules are written down.
bool issueTogether(std::string_view a, std::string_view b) {
  std::string line(a);
  line += "; ";
  line += b;
  line += '\n';
  emu::Program program;
  emu::Diagnostic error;
  return emu::parseProgram(line, "", program, error);
}

} // namespace

VsmWriter VsmWriter::cut(const Mark &at) {
  VsmWriter run;
  run.Text = Text.substr(at.textSize);
  run.Steps = Steps - at.steps;
  run.NextTag = NextTag;
  run.TagsTaken = TagsTaken - at.tagsTaken;
  Text.resize(at.textSize);
  Steps = at.steps;
  NextTag = at.nextTag;
  TagsTaken = at.tagsTaken;
  return run;
}

VsmWriter VsmWriter::branch() const {
  VsmWriter run;
  run.NextTag = NextTag;
  return run;
}

void VsmWriter::sideBySide(const VsmWriter &first, const VsmWriter &second) {
  std::vector<RunLine> a, b;
  if (!linesOf(first.Text, a) || !linesOf(second.Text, b)) {
    Text += first.Text;
    Text += second.Text;
    Steps += first.Steps + second.Steps;
    for (unsigned t = 0; t < first.TagsTaken + second.TagsTaken; ++t)
      newTag();
    return;
  }
  size_t i = 0, j = 0;
  unsigned idle = 0;
  auto raw = [&](const RunLine &line) {
    nop(idle);
    idle = 0;
    Text += line.text;
    Text += '\n';
    if (line.kind == RunLine::Wait)
      ++Steps;
  };
  while (i < a.size() || j < b.size()) {
    // What takes no step goes out as its run reaches it.
    if (i < a.size() && a[i].kind == RunLine::Other) {
      raw(a[i++]);
      continue;
    }
    if (j < b.size() && b[j].kind == RunLine::Other) {
      raw(b[j++]);
      continue;
    }
    // A wait is a step of its own, and an idle step for the other run.
    if (i < a.size() && a[i].kind == RunLine::Wait) {
      raw(a[i++]);
      if (j < b.size() && b[j].kind == RunLine::Idle)
        ++j;
      continue;
    }
    if (j < b.size() && b[j].kind == RunLine::Wait) {
      raw(b[j++]);
      if (i < a.size() && a[i].kind == RunLine::Idle)
        ++i;
      continue;
    }
    bool x = i < a.size() && a[i].kind == RunLine::Step;
    bool y = j < b.size() && b[j].kind == RunLine::Step;
    if (!x && !y) {
      ++idle;
      i += i < a.size();
      j += j < b.size();
      continue;
    }
    nop(idle);
    idle = 0;
    if (x && y && !issueTogether(a[i].text, b[j].text)) {
      // Not one step: the first run's goes now, the second's waits.
      step({a[i++].text});
      continue;
    }
    step({x ? a[i].text : std::string_view(),
          y ? b[j].text : std::string_view()});
    i += i < a.size();
    j += j < b.size();
  }
  nop(idle);
  unsigned taken = first.TagsTaken + second.TagsTaken;
  for (unsigned t = 0; t < taken; ++t)
    newTag();
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
  ++TagsTaken;
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
