//===- OptionsDoc.cpp - The option table as Markdown ----------------------===//
//
// docs/options.md holds this text between its BEGIN/END markers
// (scripts/update-options-doc.py puts it there);
// test/pipeline/options-doc.test fails when the two differ (regenerate with
// `make options-doc`).
//
//===----------------------------------------------------------------------===//

#include "mncc/pipeline/Options.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <cstdio>

using namespace mncc::pipeline;

namespace {

std::string bound(const OptionInfo &info, double value) {
  if (info.type == OptionType::Int)
    return std::to_string(static_cast<int64_t>(value));
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return buffer;
}

std::string rangeText(const OptionInfo &info) {
  switch (info.type) {
  case OptionType::Int:
  case OptionType::Float:
    if (info.min == -kNoLimit && info.max == kNoLimit)
      return "any";
    if (info.max == kNoLimit)
      return "≥ " + bound(info, info.min);
    if (info.min == -kNoLimit)
      return "≤ " + bound(info, info.max);
    return bound(info, info.min) + " to " + bound(info, info.max);
  case OptionType::Enum: {
    std::vector<std::string> names;
    for (const EnumValueInfo &value : info.values)
      names.push_back("`" + std::string(value.spelling) + "`");
    return llvm::join(names, ", ");
  }
  case OptionType::Bool:
    return "1/0, true/false, on/off, yes/no";
  case OptionType::List:
    return "A,B,...";
  case OptionType::KeyValueList:
    return "K=V,...";
  case OptionType::String:
  case OptionType::Path:
    return "";
  }
  return "";
}

std::string statusText(const OptionInfo &info) {
  if (info.status == OptionStatus::Implemented)
    return "implemented";
  return "accepted, not implemented (" + issueText(info.issue) + ")";
}

void table(std::string &out, OptionKind kind) {
  static const CompileOptions defaults;
  out += "| name | type | default | values | read by | status | what it "
         "does |\n";
  out += "| --- | --- | --- | --- | --- | --- | --- |\n";
  for (const OptionInfo &info : getOptionTable()) {
    if (info.kind != kind)
      continue;
    std::string value = defaults.getText(info.id);
    out += "| `" + std::string(info.name) + "` | " +
           optionTypeName(info.type).str() + " | " +
           (value.empty() ? std::string("(empty)") : "`" + value + "`") +
           " | " + rangeText(info) + " | " + info.reader + " | " +
           statusText(info) + " | " + info.description + ". |\n";
  }
}

} // namespace

std::string mncc::pipeline::optionsMarkdown() {
  std::string out;
  out += "### Command-line options (4.2.2)\n\n";
  table(out, OptionKind::Arg);
  out += "\n### Environment variables (4.2.3)\n\n";
  table(out, OptionKind::Env);
  out += "\n### Values of the enum options\n\n";
  out += "| option | value | status | meaning |\n";
  out += "| --- | --- | --- | --- |\n";
  for (const OptionInfo &info : getOptionTable())
    for (const EnumValueInfo &value : info.values)
      out +=
          "| `" + std::string(info.name) + "` | `" + value.spelling + "` | " +
          (value.issue == kNoIssue
               ? std::string("implemented")
               : "accepted, not implemented (" + issueText(value.issue) + ")") +
          " | " + value.description + " |\n";
  return out;
}
