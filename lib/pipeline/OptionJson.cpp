//===- OptionJson.cpp - Resolving options; option_json and presets ------===//
//
// resolveCompileOptions applies, in order: option_json's "args", its
// "envs" (unless the environment sets the variable), the environment, and
// the values given directly. Each value is checked as it is applied, and the
// first bad one is the error, naming the option and where it came from.
//
// The project builds with -fno-exceptions, under which nlohmann::json
// aborts on a failed conversion: the text is parsed with exceptions off,
// every value's type is checked before it is read, and option.json is
// written by hand.
//
//===----------------------------------------------------------------------===//

#include "mncc/pipeline/Options.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace mncc::pipeline;
using llvm::StringRef;
using nlohmann::json;

namespace {

llvm::Error optionError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

// Records where a JSON syntax error is and what it is; the DOM parse that
// follows cannot say.
class SyntaxErrorFinder : public nlohmann::json_sax<json> {
public:
  bool failed = false;
  size_t position = 0;
  std::string message;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool string(string_t &) override { return true; }
  bool binary(binary_t &) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t &) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t bytePosition, const std::string &,
                   const nlohmann::detail::exception &error) override {
    failed = true;
    position = bytePosition;
    // "[json.exception.parse_error.101] parse error at line 1, column 2:
    // syntax error ..." - keep what follows the position, which is given
    // in our own terms.
    StringRef what = error.what();
    size_t column = what.find("column ");
    size_t colon =
        column == StringRef::npos ? StringRef::npos : what.find(": ", column);
    message = colon == StringRef::npos ? what.str()
                                       : what.drop_front(colon + 2).str();
    return false;
  }
};

// 1-based line and column of the byte nlohmann stopped at (`position`
// bytes were read; the last of them is the offending one).
std::pair<size_t, size_t> lineAndColumn(StringRef text, size_t position) {
  size_t offset = std::min(position ? position - 1 : 0, text.size());
  StringRef before = text.take_front(offset);
  size_t line = 1 + before.count('\n');
  size_t lineStart = before.rfind('\n');
  size_t column =
      lineStart == StringRef::npos ? offset + 1 : offset - lineStart;
  return {line, column};
}

// A JSON scalar as the text an environment variable would hold.
std::optional<std::string> scalarText(const json &value) {
  if (value.is_string())
    return value.get_ref<const std::string &>();
  if (value.is_boolean())
    return std::string(value.get<bool>() ? "1" : "0");
  // is_number_integer() holds for unsigned numbers too: ask first.
  if (value.is_number_unsigned())
    return std::to_string(value.get<uint64_t>());
  if (value.is_number_integer())
    return std::to_string(value.get<int64_t>());
  if (value.is_number_float()) {
    char buffer[40];
    double number = value.get<double>();
    // 1000.0 (or 1e3) is 1000, which an int option takes.
    if (std::floor(number) == number && std::fabs(number) < 1e15) {
      std::snprintf(buffer, sizeof(buffer), "%.0f", number);
      return std::string(buffer);
    }
    for (int precision = 1; precision <= 17; ++precision) {
      std::snprintf(buffer, sizeof(buffer), "%.*g", precision, number);
      if (std::strtod(buffer, nullptr) == number)
        break;
    }
    return std::string(buffer);
  }
  return std::nullopt;
}

std::string inQuotes(StringRef text) { return "'" + text.str() + "'"; }

// The closest option name, for "did you mean".
std::string suggestion(StringRef name, OptionKind kind) {
  const OptionInfo *best = nullptr;
  unsigned bestDistance = 4;
  for (const OptionInfo &info : getOptionTable()) {
    if (info.kind != kind)
      continue;
    unsigned distance = name.edit_distance(info.name, true, bestDistance);
    if (distance < bestDistance) {
      best = &info;
      bestDistance = distance;
    }
  }
  return best ? std::string("; did you mean '") + best->name + "'?" : "";
}

// Applies one value, or says what is wrong with it.
llvm::Error apply(CompileOptions &options, const OptionInfo &info,
                  StringRef value, OptionOrigin origin,
                  const std::string &where) {
  if (llvm::Error error = options.setText(info.id, value))
    return optionError(std::string(info.name) + "=" + value.str() + " (" +
                       where + "): " + llvm::toString(std::move(error)));
  options.origins[static_cast<unsigned>(info.id)] = origin;
  return llvm::Error::success();
}

// Looks up a command-line option named in `where`.
llvm::Expected<const OptionInfo *> lookupArg(StringRef name,
                                             const std::string &where) {
  const OptionInfo *info = lookupOption(name);
  if (!info)
    return optionError("unknown option " + inQuotes(name) + " (" + where + ")" +
                       suggestion(name, OptionKind::Arg));
  if (info->kind == OptionKind::Env)
    return optionError(inQuotes(name) +
                       " is an environment variable, not a command-line "
                       "option (" +
                       where +
                       "): set it in the environment or in "
                       "option_json's \"envs\"");
  return info;
}

// Looks up an environment variable named in `where`.
llvm::Expected<const OptionInfo *> lookupEnv(StringRef name,
                                             const std::string &where) {
  const OptionInfo *info = lookupOption(name);
  if (!info)
    return optionError("unknown variable " + inQuotes(name) + " (" + where +
                       ")" + suggestion(name, OptionKind::Env));
  if (info->kind == OptionKind::Arg)
    return optionError(inQuotes(name) +
                       " is a command-line option, not an "
                       "environment variable (" +
                       where +
                       "): put it in "
                       "\"args\" as --" +
                       name.str() + "=VALUE");
  return info;
}

struct OptionJsonFile {
  std::string path;
  json document;
};

// Finds, reads and parses the option_json `spec` (a path, or a preset name:
// no '/' and no .json ending).
llvm::Expected<OptionJsonFile>
readOptionJson(StringRef spec, StringRef presetDir, const std::string &where) {
  OptionJsonFile file;
  if (spec.contains('/') || spec.ends_with(".json")) {
    file.path = spec.str();
  } else {
    llvm::SmallString<256> path(presetDir);
    llvm::sys::path::append(path, spec + ".json");
    if (!llvm::sys::fs::is_regular_file(path)) {
      std::vector<std::string> presets = listPresets(presetDir);
      if (presets.empty())
        return optionError("unknown preset " + inQuotes(spec) +
                           " for option_json (" + where + "): no presets in " +
                           presetDir.str());
      return optionError("unknown preset " + inQuotes(spec) +
                         " for option_json (" + where + "); the presets are " +
                         llvm::join(presets, ", "));
    }
    file.path = path.str().str();
  }
  auto buffer = llvm::MemoryBuffer::getFile(file.path, /*IsText=*/true);
  if (!buffer)
    return optionError("option_json " + file.path + " (" + where +
                       "): cannot read it: " + buffer.getError().message());
  StringRef text = (*buffer)->getBuffer();
  SyntaxErrorFinder finder;
  json::sax_parse(text.begin(), text.end(), &finder);
  if (finder.failed) {
    auto [line, column] = lineAndColumn(text, finder.position);
    return optionError(file.path + ":" + llvm::Twine(line) + ":" +
                       llvm::Twine(column) + ": option_json (" + where +
                       ") is not valid JSON: " + finder.message);
  }
  file.document = json::parse(text.begin(), text.end(), nullptr,
                              /*allow_exceptions=*/false);
  if (file.document.is_discarded())
    return optionError("option_json " + file.path + " (" + where +
                       ") is not valid JSON");
  return file;
}

} // namespace

llvm::Expected<ResolvedOptions>
mncc::pipeline::resolveCompileOptions(const OptionRequest &request) {
  ResolvedOptions resolved;
  resolved.directOrigin = request.directOrigin;
  CompileOptions &options = resolved.options;
  const std::string direct = "from " + request.directOrigin;

  // The values given directly must name command-line options.
  std::string optionJson;
  for (const auto &[name, value] : request.direct) {
    auto info = lookupArg(name, direct);
    if (!info)
      return info.takeError();
    if ((*info)->id == OptionId::option_json)
      optionJson = value;
  }

  if (!optionJson.empty()) {
    auto file = readOptionJson(optionJson, request.presetDir, direct);
    if (!file)
      return file.takeError();
    resolved.optionJsonPath = file->path;
    const json &document = file->document;
    const std::string where = "from option_json " + file->path;
    if (!document.is_object())
      return optionError("option_json " + file->path + " (" + direct +
                         "): expected a JSON object with \"envs\", \"args\" "
                         "and \"name\"");
    for (const auto &item : document.items())
      if (item.key() != "envs" && item.key() != "args" && item.key() != "name")
        return optionError("option_json " + file->path + " (" + direct +
                           "): unknown key " + inQuotes(item.key()) +
                           " (expected \"envs\", \"args\" and \"name\")");

    // "args": each "--name=value", in order.
    if (auto args = document.find("args"); args != document.end()) {
      if (!args->is_array())
        return optionError("option_json " + file->path +
                           ": \"args\" must be an array of strings");
      for (size_t i = 0; i < args->size(); ++i) {
        const json &arg = (*args)[i];
        std::string position = "args[" + std::to_string(i) + "]";
        if (!arg.is_string())
          return optionError("option_json " + file->path + ": " + position +
                             " must be a string \"--name=value\"");
        StringRef text = arg.get_ref<const std::string &>();
        if (!text.starts_with("--") || !text.contains('='))
          return optionError("option_json " + file->path + ": " + position +
                             ": expected \"--name=value\", got \"" + text +
                             "\"");
        auto [name, value] = text.drop_front(2).split('=');
        auto info = lookupArg(name, where);
        if (!info)
          return info.takeError();
        if ((*info)->id == OptionId::option_json) {
          resolved.notes.push_back("ignored " + text.str() + " in " +
                                   file->path +
                                   "'s args: option_json does not nest");
          continue;
        }
        if (llvm::Error error =
                apply(options, **info, value, OptionOrigin::OptionJson, where))
          return std::move(error);
      }
    }

    // "envs": variables the environment does not set.
    if (auto envs = document.find("envs"); envs != document.end()) {
      if (!envs->is_object())
        return optionError("option_json " + file->path +
                           ": \"envs\" must be an object of variables");
      for (const auto &item : envs->items()) {
        auto info = lookupEnv(item.key(), where);
        if (!info)
          return info.takeError();
        std::optional<std::string> value = scalarText(item.value());
        if (!value)
          return optionError("option_json " + file->path + ": envs." +
                             item.key() +
                             " must be a string, a number or a boolean");
        auto set = request.environment.find(item.key());
        if (set != request.environment.end() && !set->second.empty()) {
          resolved.notes.push_back(item.key() + "=" + *value + " from " +
                                   file->path +
                                   " ignored: the environment "
                                   "sets " +
                                   item.key() + "=" + set->second);
          continue;
        }
        if (llvm::Error error =
                apply(options, **info, *value, OptionOrigin::OptionJson, where))
          return std::move(error);
      }
    }

    if (auto name = document.find("name"); name != document.end()) {
      if (!name->is_string())
        return optionError("option_json " + file->path +
                           ": \"name\" must be a string");
      options.name = name->get_ref<const std::string &>();
    }
  }

  // The environment: every CODEGEN_* must be known; other MNCORE_* and
  // PFVM_* variables belong to other MLSDK components.
  for (const auto &[name, value] : request.environment) {
    const OptionInfo *info = lookupOption(name);
    if (!info || info->kind != OptionKind::Env) {
      if (StringRef(name).starts_with("CODEGEN_"))
        return optionError("unknown variable " + inQuotes(name) +
                           " (from the environment)" +
                           suggestion(name, OptionKind::Env));
      resolved.notes.push_back("ignored " + name +
                               " from the environment: not a compile option");
      continue;
    }
    if (value.empty()) {
      resolved.notes.push_back("ignored " + name +
                               " from the environment: set but empty");
      continue;
    }
    if (llvm::Error error =
            apply(options, *info, value, OptionOrigin::Environment,
                  "from the environment"))
      return std::move(error);
  }

  for (const auto &[name, value] : request.direct)
    if (llvm::Error error = apply(options, *lookupOption(name), value,
                                  OptionOrigin::Direct, direct))
      return std::move(error);
  return resolved;
}

std::string mncc::pipeline::presetDirectoryFor(StringRef executablePath) {
  llvm::SmallString<256> path(llvm::sys::path::parent_path(executablePath));
  llvm::sys::path::append(path, "..", "share", "mncc", "preset_options");
  llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
  return path.str().str();
}

std::vector<std::string> mncc::pipeline::listPresets(StringRef presetDir) {
  std::vector<std::string> presets;
  std::error_code error;
  for (llvm::sys::fs::directory_iterator it(presetDir, error), end;
       !error && it != end; it.increment(error)) {
    StringRef file = llvm::sys::path::filename(it->path());
    if (file.ends_with(".json"))
      presets.push_back(file.drop_back(5).str());
  }
  llvm::sort(presets);
  return presets;
}

namespace {

std::string jsonString(StringRef text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\r':
      out += "\\r";
      break;
    default:
      if (c < 0x20) {
        char buffer[8];
        std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
        out += buffer;
      } else {
        out += static_cast<char>(c);
      }
    }
  }
  return out + "\"";
}

} // namespace

std::string mncc::pipeline::writeOptionJson(const CompileOptions &options) {
  std::vector<std::string> envs, args;
  for (const OptionInfo &info : getOptionTable()) {
    std::string value = options.getText(info.id);
    if (info.kind == OptionKind::Env)
      envs.push_back("        " + jsonString(info.name) + ": " +
                     jsonString(value));
    else if (info.id != OptionId::option_json)
      args.push_back("        " +
                     jsonString("--" + std::string(info.name) + "=" + value));
  }
  return "{\n    \"envs\": {\n" + llvm::join(envs, ",\n") +
         "\n    },\n    \"args\": [\n" + llvm::join(args, ",\n") +
         "\n    ],\n    \"name\": " + jsonString(options.name) + "\n}\n";
}

std::vector<std::string>
mncc::pipeline::describeEffectiveOptions(const ResolvedOptions &resolved) {
  std::vector<std::string> lines;
  const CompileOptions &options = resolved.options;
  for (const OptionInfo &info : getOptionTable()) {
    std::string origin;
    switch (options.origins[static_cast<unsigned>(info.id)]) {
    case OptionOrigin::Default:
      origin = "default";
      break;
    case OptionOrigin::OptionJson:
      origin = "from option_json " + resolved.optionJsonPath;
      break;
    case OptionOrigin::Environment:
      origin = "from the environment";
      break;
    case OptionOrigin::Direct:
      origin = "from " + resolved.directOrigin;
      break;
    }
    lines.push_back(std::string(info.name) + "=" + options.getText(info.id) +
                    " (" + origin + ")");
  }
  return lines;
}
