//===- Options.cpp - The option table, parsing and printing by name -------===//
//
// Generated from OptionTable.def: the table of OptionInfo, and getText /
// setText by OptionId, which switch over the fields and dispatch on each
// field's C++ type.
//
//===----------------------------------------------------------------------===//

#include "mncc/pipeline/Options.h"
#include "mncc/pipeline/Pipeline.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

using namespace mncc::pipeline;
using llvm::StringRef;

namespace {

template <typename T> llvm::ArrayRef<EnumValueInfo> enumValuesOf() {
  return {};
}

#define MNCC_ENUM_BEGIN(ENUM) const EnumValueInfo k##ENUM##Values[] = {
#define MNCC_ENUM_VALUE(ENUM, IDENT, SPELLING, ISSUE, DESCRIPTION)             \
  {SPELLING, ISSUE, DESCRIPTION},
#define MNCC_ENUM_END(ENUM)                                                    \
  }                                                                            \
  ;                                                                            \
  template <> llvm::ArrayRef<EnumValueInfo> enumValuesOf<ENUM>() {             \
    return k##ENUM##Values;                                                    \
  }
#include "mncc/pipeline/OptionTable.def"

// Each field's C++ type is the one its TYPE says.
template <OptionType Type, typename T> constexpr bool typeMatches() {
  switch (Type) {
  case OptionType::Bool:
    return std::is_same_v<T, bool>;
  case OptionType::Int:
    return std::is_same_v<T, int64_t>;
  case OptionType::Float:
    return std::is_same_v<T, double>;
  case OptionType::String:
  case OptionType::Path:
    return std::is_same_v<T, std::string>;
  case OptionType::Enum:
    return std::is_enum_v<T>;
  case OptionType::List:
    return std::is_same_v<T, StringList>;
  case OptionType::KeyValueList:
    return std::is_same_v<T, KeyValueList>;
  }
  return false;
}
#define MNCC_OPTION(KIND, NAME, TYPE, CPPTYPE, ...)                            \
  static_assert(typeMatches<OptionType::TYPE, CPPTYPE>(),                      \
                #NAME ": its C++ type does not match its TYPE");
#include "mncc/pipeline/OptionTable.def"

const OptionInfo kOptionTable[] = {
#define MNCC_OPTION(KIND, NAME, TYPE, CPPTYPE, DEFAULT, MIN, MAX, READER,      \
                    STATUS, ISSUE, DESCRIPTION)                                \
  {OptionId::NAME,                                                             \
   #NAME,                                                                      \
   OptionKind::KIND,                                                           \
   OptionType::TYPE,                                                           \
   MIN,                                                                        \
   MAX,                                                                        \
   READER,                                                                     \
   OptionStatus::STATUS,                                                       \
   ISSUE,                                                                      \
   DESCRIPTION,                                                                \
   enumValuesOf<CPPTYPE>()},
#include "mncc/pipeline/OptionTable.def"
};

static_assert(std::size(kOptionTable) == kNumOptions);

//===----------------------------------------------------------------------===//
// Values as text
//===----------------------------------------------------------------------===//

// The shortest text that reads back as the same double.
std::string formatDouble(double value) {
  char buffer[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value)
      break;
  }
  return buffer;
}

std::string formatBound(const OptionInfo &info, double bound) {
  if (info.type == OptionType::Int)
    return std::to_string(static_cast<int64_t>(bound));
  return formatDouble(bound);
}

llvm::Error valueError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error checkRange(const OptionInfo &info, double value) {
  if (value >= info.min && value <= info.max)
    return llvm::Error::success();
  if (info.max == kNoLimit)
    return valueError("must be at least " + formatBound(info, info.min));
  if (info.min == -kNoLimit)
    return valueError("must be at most " + formatBound(info, info.max));
  return valueError("must be between " + formatBound(info, info.min) + " and " +
                    formatBound(info, info.max));
}

std::string format(bool value, const OptionInfo &) { return value ? "1" : "0"; }
std::string format(int64_t value, const OptionInfo &) {
  return std::to_string(value);
}
std::string format(double value, const OptionInfo &) {
  return formatDouble(value);
}
std::string format(const std::string &value, const OptionInfo &) {
  return value;
}
std::string format(const StringList &value, const OptionInfo &) {
  return llvm::join(value, ",");
}
std::string format(const KeyValueList &value, const OptionInfo &) {
  std::string text;
  for (const auto &[key, item] : value) {
    if (!text.empty())
      text += ',';
    text += key + "=" + item;
  }
  return text;
}
template <typename E, typename = std::enable_if_t<std::is_enum_v<E>>>
std::string format(E value, const OptionInfo &info) {
  return info.values[static_cast<size_t>(value)].spelling;
}

llvm::Error parse(bool &field, const OptionInfo &, StringRef text) {
  std::string lower = text.lower();
  if (lower == "1" || lower == "true" || lower == "on" || lower == "yes") {
    field = true;
    return llvm::Error::success();
  }
  if (lower == "0" || lower == "false" || lower == "off" || lower == "no") {
    field = false;
    return llvm::Error::success();
  }
  return valueError("expected a boolean (1, 0, true, false, on, off, yes, no)");
}

llvm::Error parse(int64_t &field, const OptionInfo &info, StringRef text) {
  int64_t value;
  if (text.getAsInteger(10, value))
    return valueError("expected an integer");
  if (llvm::Error error = checkRange(info, static_cast<double>(value)))
    return error;
  if (info.id == OptionId::CODEGEN_GENERIC_MOVE_CHUNK_SIZE && value == 0)
    return valueError("expected -1 (off) or a positive number of long words");
  field = value;
  return llvm::Error::success();
}

llvm::Error parse(double &field, const OptionInfo &info, StringRef text) {
  std::string copy = text.str();
  char *end = nullptr;
  double value = copy.empty() || llvm::isSpace(copy[0])
                     ? 0
                     : std::strtod(copy.c_str(), &end);
  if (!end || *end != '\0' || !std::isfinite(value))
    return valueError("expected a number");
  if (llvm::Error error = checkRange(info, value))
    return error;
  field = value;
  return llvm::Error::success();
}

llvm::Error parse(std::string &field, const OptionInfo &, StringRef text) {
  field = text.str();
  return llvm::Error::success();
}

// Items separated by commas, each trimmed; "" is the empty list.
llvm::Expected<StringList> splitItems(StringRef text) {
  StringList items;
  if (text.trim().empty())
    return items;
  llvm::SmallVector<StringRef> parts;
  text.split(parts, ',');
  for (StringRef part : parts) {
    if (part.trim().empty())
      return valueError("expected items separated by commas, without empty "
                        "ones");
    items.push_back(part.trim().str());
  }
  return items;
}

llvm::Error parse(StringList &field, const OptionInfo &info, StringRef text) {
  auto items = splitItems(text);
  if (!items)
    return items.takeError();
  if (info.id == OptionId::CODEGEN_DEFER_SIMPLIFY)
    for (const std::string &item : *items) {
      StringRef name(item);
      name.consume_front("pfvm-");
      if (!llvm::is_contained(pfvmSimplificationNames(), name))
        return valueError("unknown simplification '" + item +
                          "'; the simplifications are " +
                          llvm::join(pfvmSimplificationNames(), ", "));
    }
  field = std::move(*items);
  return llvm::Error::success();
}

llvm::Error parse(KeyValueList &field, const OptionInfo &, StringRef text) {
  auto items = splitItems(text);
  if (!items)
    return items.takeError();
  KeyValueList pairs;
  for (StringRef item : *items) {
    auto [key, value] = item.split('=');
    if (key.trim().empty() || value.trim().empty() || !item.contains('='))
      return valueError("expected KEY=VALUE items separated by commas; '" +
                        item + "' is not KEY=VALUE");
    pairs.emplace_back(key.trim().str(), value.trim().str());
  }
  field = std::move(pairs);
  return llvm::Error::success();
}

template <typename E, typename = std::enable_if_t<std::is_enum_v<E>>>
llvm::Error parse(E &field, const OptionInfo &info, StringRef text) {
  for (size_t i = 0; i < info.values.size(); ++i)
    if (text == info.values[i].spelling) {
      field = static_cast<E>(i);
      return llvm::Error::success();
    }
  std::string allowed;
  for (const EnumValueInfo &value : info.values)
    allowed += (allowed.empty() ? "" : ", ") + std::string(value.spelling);
  return valueError("expected one of " + allowed);
}

} // namespace

llvm::ArrayRef<OptionInfo> mncc::pipeline::getOptionTable() {
  return kOptionTable;
}

const OptionInfo &mncc::pipeline::getOptionInfo(OptionId id) {
  return kOptionTable[static_cast<unsigned>(id)];
}

const OptionInfo *mncc::pipeline::lookupOption(StringRef name) {
  for (const OptionInfo &info : kOptionTable)
    if (name == info.name)
      return &info;
  return nullptr;
}

StringRef mncc::pipeline::optionTypeName(OptionType type) {
  switch (type) {
  case OptionType::Bool:
    return "bool";
  case OptionType::Int:
    return "int";
  case OptionType::Float:
    return "float";
  case OptionType::String:
    return "string";
  case OptionType::Path:
    return "path";
  case OptionType::Enum:
    return "enum";
  case OptionType::List:
    return "list";
  case OptionType::KeyValueList:
    return "key=value list";
  }
  return "";
}

std::string mncc::pipeline::issueText(int issue) {
  return issue > 0 ? "issue " + std::to_string(issue) : "later";
}

std::string CompileOptions::getText(OptionId id) const {
  const OptionInfo &info = getOptionInfo(id);
  switch (id) {
#define MNCC_OPTION(KIND, NAME, ...)                                           \
  case OptionId::NAME:                                                         \
    return format(NAME, info);
#include "mncc/pipeline/OptionTable.def"
  }
  return "";
}

llvm::Error CompileOptions::setText(OptionId id, StringRef text) {
  const OptionInfo &info = getOptionInfo(id);
  switch (id) {
#define MNCC_OPTION(KIND, NAME, ...)                                           \
  case OptionId::NAME:                                                         \
    return parse(NAME, info, text);
#include "mncc/pipeline/OptionTable.def"
  }
  return llvm::Error::success();
}

bool CompileOptions::isDefault(OptionId id) const {
  static const CompileOptions defaults;
  switch (id) {
#define MNCC_OPTION(KIND, NAME, ...)                                           \
  case OptionId::NAME:                                                         \
    return NAME == defaults.NAME;
#include "mncc/pipeline/OptionTable.def"
  }
  return true;
}

bool mncc::pipeline::isOptionVariableName(StringRef name) {
  return name.starts_with("CODEGEN_") || name.starts_with("MNCORE_") ||
         name.starts_with("PFVM_");
}

OptionEnvironment
mncc::pipeline::collectOptionEnvironment(const char *const *envp) {
  OptionEnvironment environment;
  for (; envp && *envp; ++envp) {
    auto [name, value] = StringRef(*envp).split('=');
    if (isOptionVariableName(name))
      environment[name.str()] = value.str();
  }
  return environment;
}

std::vector<std::string>
mncc::pipeline::notImplementedNotes(const CompileOptions &options) {
  std::vector<std::string> notes;
  for (const OptionInfo &info : kOptionTable) {
    // An enum's values carry their own issue: an implemented option may
    // still have values that nothing acts on yet, its default among them
    // (layout_planner=lpz runs the legacy planner), which is reported too
    // so that nothing is silently ignored.
    bool implemented = info.status == OptionStatus::Implemented;
    if (implemented ? info.type != OptionType::Enum
                    : options.isDefault(info.id))
      continue;
    std::string value = options.getText(info.id);
    int issue = info.issue;
    if (info.type == OptionType::Enum) {
      for (const EnumValueInfo &enumValue : info.values)
        if (value == enumValue.spelling)
          issue = enumValue.issue;
      if (issue == kNoIssue)
        continue;
    }
    notes.push_back(std::string(info.name) + "=" + value +
                    ": accepted, not implemented (" + issueText(issue) + ")");
  }
  return notes;
}
