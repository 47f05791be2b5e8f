//===- Options.h - The compile options of mncc ---------------*- C++ -*-===//
//
// CompileOptions holds every MLSDK compile option and CODEGEN_* variable
// (OptionTable.def), one typed field each, named exactly as the option. It
// is filled once, by resolveCompileOptions, from the values given directly
// (the command line, compile()'s options), option_json and the environment
// the driver read, and then passed down by const reference: no library
// reads the environment.
//
// Precedence (MLSDK compile-option document, 4.2 and 4.2.2.1):
//   1. a value given directly beats option_json's "args";
//   2. an environment variable already set beats option_json's "envs";
//   3. "args" naming --option_json inside an option_json are ignored (no
//      nesting), and the log says so.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_PIPELINE_OPTIONS_H
#define MNCC_PIPELINE_OPTIONS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace mncc::pipeline {

/// Types the table uses.
using StringList = std::vector<std::string>;
using KeyValueList = std::vector<std::pair<std::string, std::string>>;

/// MIN/MAX of an option without a bound.
constexpr double kNoLimit = std::numeric_limits<double>::infinity();
/// ISSUE of an option or value a later issue implements.
constexpr int kLater = 0;
/// ISSUE of an implemented option or value.
constexpr int kNoIssue = -1;

#define MNCC_ENUM_BEGIN(ENUM) enum class ENUM {
#define MNCC_ENUM_VALUE(ENUM, IDENT, SPELLING, ISSUE, DESCRIPTION) IDENT,
#define MNCC_ENUM_END(ENUM)                                                    \
  }                                                                            \
  ;
#include "mncc/pipeline/OptionTable.def"

/// One id per table entry, in table order.
enum class OptionId : unsigned {
#define MNCC_OPTION(KIND, NAME, ...) NAME,
#include "mncc/pipeline/OptionTable.def"
};

constexpr unsigned kNumOptions = 0
#define MNCC_OPTION(...) +1
#include "mncc/pipeline/OptionTable.def"
    ;

/// A command-line option (`--name=value`, option_json "args") or an
/// environment variable (option_json "envs").
enum class OptionKind { Arg, Env };

enum class OptionType {
  Bool,
  Int,
  Float,
  String,
  Path,
  Enum,
  /// Comma-separated items.
  List,
  /// Comma-separated KEY=VALUE items.
  KeyValueList
};

enum class OptionStatus { Implemented, NotImplemented };

struct EnumValueInfo {
  const char *spelling;
  /// The issue implementing this value; kLater or kNoIssue.
  int issue;
  const char *description;
};

/// What the table says about one option.
struct OptionInfo {
  OptionId id;
  const char *name;
  OptionKind kind;
  OptionType type;
  /// The accepted range of an Int or Float (kNoLimit: unbounded).
  double min, max;
  /// The phase, pass or component that acts on the value.
  const char *reader;
  OptionStatus status;
  /// The issue that implements it; kLater or kNoIssue.
  int issue;
  const char *description;
  /// An Enum's values, in the document's order; the enum class's
  /// enumerators are in the same order.
  llvm::ArrayRef<EnumValueInfo> values;
};

/// Every option, in table order (the 10 options, then the 37 variables).
llvm::ArrayRef<OptionInfo> getOptionTable();
const OptionInfo &getOptionInfo(OptionId id);
/// The entry named `name` (exactly, case-sensitive), or null.
const OptionInfo *lookupOption(llvm::StringRef name);

/// "bool", "int", "float", "string", "path", "enum", "list", "key=value
/// list".
llvm::StringRef optionTypeName(OptionType type);
/// "issue N", or "later".
std::string issueText(int issue);

/// Where an effective value came from.
enum class OptionOrigin { Default, OptionJson, Environment, Direct };

/// Every compile option, typed. Fields are named exactly as the option or
/// variable (`options.CODEGEN_SA_STEPS`, `options.float_dtype`).
struct CompileOptions {
#define MNCC_OPTION(KIND, NAME, TYPE, CPPTYPE, DEFAULT, ...)                   \
  CPPTYPE NAME = DEFAULT;
#include "mncc/pipeline/OptionTable.def"

  /// option_json's "name", or "custom".
  std::string name = "custom";
  /// Where each value came from, by OptionId.
  std::array<OptionOrigin, kNumOptions> origins{};

  /// The value as text, as option.json and `--name=value` spell it: bools
  /// 1/0, enums by name, lists comma-separated, floats shortest round-trip.
  std::string getText(OptionId id) const;
  /// Parses and checks `text` (type, range, enum values) into the field;
  /// on failure the field is unchanged and the error says what is wrong
  /// with the value (without naming the option).
  llvm::Error setText(OptionId id, llvm::StringRef text);
  /// Whether the value differs from the table's default.
  bool isDefault(OptionId id) const;
};

/// Environment variables as the driver read them, name -> value.
using OptionEnvironment = std::map<std::string, std::string>;

/// Whether `name` looks like a variable of mncc or the MLSDK: CODEGEN_*,
/// MNCORE_* or PFVM_*.
bool isOptionVariableName(llvm::StringRef name);

/// The variables of an environment block (`environ`) that
/// isOptionVariableName accepts. Drivers call this once.
OptionEnvironment collectOptionEnvironment(const char *const *envp);

/// Inputs of option resolution.
struct OptionRequest {
  /// Options given directly, `name` -> `value` without the leading "--",
  /// in the order given (a later one wins).
  std::vector<std::pair<std::string, std::string>> direct;
  /// How messages name where `direct` came from: "the command line", "the
  /// pipeline options", "compile()'s options".
  std::string directOrigin = "the command line";
  /// The environment (collectOptionEnvironment).
  OptionEnvironment environment;
  /// Where presets are found (presetDirectoryFor).
  std::string presetDir;
};

/// The effective options and what resolution has to say about them.
struct ResolvedOptions {
  CompileOptions options;
  /// The option_json file read, if any.
  std::string optionJsonPath;
  /// How the direct values' origin is named (OptionRequest::directOrigin).
  std::string directOrigin;
  /// Lines for the compile log: ignored nested option_json args, option_json
  /// envs the environment overrode, ignored environment variables.
  std::vector<std::string> notes;
};

/// Resolves every option from its sources. An unknown name, a value of the
/// wrong type or out of range, a malformed or unreadable option_json and an
/// unknown preset are errors that name the option and where it came from.
llvm::Expected<ResolvedOptions>
resolveCompileOptions(const OptionRequest &request);

/// `<bindir>/../share/mncc/preset_options` for the executable at
/// `executablePath`.
std::string presetDirectoryFor(llvm::StringRef executablePath);

/// The preset names in `presetDir` (its *.json files), sorted.
std::vector<std::string> listPresets(llvm::StringRef presetDir);

/// option.json for `options`: "envs" (every variable, effective value),
/// "args" (every command-line option but option_json, `--name=value`),
/// "name", in table order, indented by four spaces, ending in a newline.
std::string writeOptionJson(const CompileOptions &options);

/// "NAME=VALUE: accepted, not implemented (issue N)" for every option that
/// is set to a value other than its default and that nothing acts on yet.
std::vector<std::string> notImplementedNotes(const CompileOptions &options);

/// One line per option for the compile log: `name=value (origin)`.
std::vector<std::string>
describeEffectiveOptions(const ResolvedOptions &resolved);

/// The options table in Markdown (docs/options.md, `mncc options
/// --markdown`).
std::string optionsMarkdown();

} // namespace mncc::pipeline

#endif // MNCC_PIPELINE_OPTIONS_H
