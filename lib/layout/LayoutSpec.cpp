//===- LayoutSpec.cpp - layout_spec.json / gemm_layout_spec.json ----------===//
//
// The project builds with -fno-exceptions, under which nlohmann::json
// aborts on any failed conversion, so every value's type is checked before
// it is read and the text is parsed with exceptions disabled.
//
//===----------------------------------------------------------------------===//

#include "mncc/layout/LayoutSpec.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace mncc {
namespace layout {

using nlohmann::json;

const char *specTriggerName(SpecTrigger trigger) {
  return trigger == SpecTrigger::SwitchInput ? "SwitchInput" : "FixOutput";
}

namespace {

// Records where a JSON syntax error is; the DOM parse that follows cannot
// say.
class SyntaxErrorFinder : public nlohmann::json_sax<json> {
public:
  std::optional<std::string> error;

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
  bool parse_error(std::size_t position, const std::string &,
                   const nlohmann::detail::exception &) override {
    error = "invalid JSON near byte " + std::to_string(position);
    return false;
  }
};

class EntryReader {
public:
  EntryReader(std::string_view fileName, size_t index, const json &object)
      : prefix(std::string(fileName) + ": entry " + std::to_string(index) +
               ": "),
        object(object) {}

  LayoutError fieldError(const char *field, const std::string &message) const {
    return LayoutError{0, prefix + "field '" + field + "': " + message};
  }

  const json *field(const char *name, std::optional<LayoutError> &error) const {
    auto it = object.find(name);
    if (it == object.end()) {
      if (!error)
        error = LayoutError{0, prefix + "missing field '" + name + "'"};
      return nullptr;
    }
    return &*it;
  }

  bool readString(const char *name, std::string &out,
                  std::optional<LayoutError> &error) const {
    const json *value = field(name, error);
    if (!value)
      return false;
    if (!value->is_string()) {
      if (!error)
        error = fieldError(name, "expected a string");
      return false;
    }
    out = value->get<std::string>();
    return true;
  }

  bool readLayout(const char *name, Layout &out,
                  std::optional<LayoutError> &error) const {
    std::string text;
    if (!readString(name, text, error))
      return false;
    LayoutResult<Layout> parsed = parseLayout(text);
    if (!parsed) {
      if (!error)
        error = fieldError(name, parsed.error().str());
      return false;
    }
    out = std::move(*parsed);
    return true;
  }

  bool readShape(const char *name, std::vector<int64_t> &out,
                 std::optional<LayoutError> &error) const {
    const json *value = field(name, error);
    if (!value)
      return false;
    bool valid = value->is_array();
    if (valid)
      for (const json &extent : *value)
        valid =
            valid && extent.is_number_integer() && extent.get<int64_t>() >= 0;
    if (!valid) {
      if (!error)
        error = fieldError(name, "expected an array of non-negative integers");
      return false;
    }
    for (const json &extent : *value)
      out.push_back(extent.get<int64_t>());
    return true;
  }

private:
  std::string prefix;
  const json &object;
};

// Parses the top level: an array of objects. Calls `readEntry` for each.
template <typename Entry, typename ReadEntry>
LayoutResult<std::vector<Entry>> parseEntries(std::string_view jsonText,
                                              std::string_view fileName,
                                              ReadEntry readEntry) {
  std::string name(fileName);
  SyntaxErrorFinder finder;
  json::sax_parse(jsonText.begin(), jsonText.end(), &finder);
  if (finder.error)
    return LayoutError{0, name + ": " + *finder.error};
  json document = json::parse(jsonText.begin(), jsonText.end(), nullptr,
                              /*allow_exceptions=*/false);
  if (document.is_discarded())
    return LayoutError{0, name + ": invalid JSON"};
  if (!document.is_array())
    return LayoutError{0, name + ": expected a JSON array of entries"};
  std::vector<Entry> entries;
  for (size_t i = 0; i < document.size(); ++i) {
    const json &object = document[i];
    if (!object.is_object())
      return LayoutError{0, name + ": entry " + std::to_string(i) +
                                ": expected a JSON object"};
    EntryReader reader(fileName, i, object);
    std::optional<LayoutError> error;
    Entry entry;
    readEntry(reader, entry, error);
    if (error)
      return *error;
    entries.push_back(std::move(entry));
  }
  return entries;
}

LayoutResult<std::string> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return LayoutError{0, path + ": cannot open file"};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

LayoutResult<std::vector<LayoutSpecEntry>>
parseLayoutSpec(std::string_view jsonText, std::string_view fileName) {
  return parseEntries<LayoutSpecEntry>(
      jsonText, fileName,
      [](const EntryReader &reader, LayoutSpecEntry &entry,
         std::optional<LayoutError> &error) {
        std::string trigger;
        if (reader.readString("trigger", trigger, error)) {
          if (trigger == "SwitchInput")
            entry.trigger = SpecTrigger::SwitchInput;
          else if (trigger == "FixOutput")
            entry.trigger = SpecTrigger::FixOutput;
          else if (!error)
            error = reader.fieldError(
                "trigger", "expected \"SwitchInput\" or \"FixOutput\" but "
                           "found \"" +
                               trigger + "\"");
        }
        reader.readString("op_type", entry.opType, error);
        bool haveShape = reader.readShape("shape", entry.shape, error);
        bool haveLayout = reader.readLayout("layout", entry.layout, error);
        if (error || !haveShape || !haveLayout)
          return;
        if (entry.layout.shape) {
          if (*entry.layout.shape != entry.shape)
            error = reader.fieldError(
                "shape", "differs from the shape prefix of the layout");
          return;
        }
        LayoutResult<Layout> shaped = withShape(entry.layout, entry.shape);
        if (!shaped)
          error = reader.fieldError("shape", shaped.error().str());
        else
          entry.layout = std::move(*shaped);
      });
}

LayoutResult<std::vector<GemmLayoutSpecEntry>>
parseGemmLayoutSpec(std::string_view jsonText, std::string_view fileName) {
  return parseEntries<GemmLayoutSpecEntry>(
      jsonText, fileName,
      [](const EntryReader &reader, GemmLayoutSpecEntry &entry,
         std::optional<LayoutError> &error) {
        reader.readString("key", entry.key, error);
        reader.readLayout("A", entry.a, error);
        reader.readLayout("BT", entry.bt, error);
        reader.readLayout("C", entry.c, error);
      });
}

LayoutResult<std::vector<LayoutSpecEntry>>
loadLayoutSpec(const std::string &path) {
  LayoutResult<std::string> text = readFile(path);
  if (!text)
    return text.error();
  return parseLayoutSpec(*text, path);
}

LayoutResult<std::vector<GemmLayoutSpecEntry>>
loadGemmLayoutSpec(const std::string &path) {
  LayoutResult<std::string> text = readFile(path);
  if (!text)
    return text.error();
  return parseGemmLayoutSpec(*text, path);
}

} // namespace layout
} // namespace mncc
