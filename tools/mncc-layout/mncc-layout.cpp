//===- mncc-layout.cpp - Inspect MN-Core 2 layouts from the shell ---------===//
//
//   mncc-layout print LAYOUT
//   mncc-layout locate LAYOUT --index 3,5 [--json]
//   mncc-layout validate LAYOUT [--dtype f16] [--memory LM0]
//   mncc-layout switch-plan FROM TO
//
//===----------------------------------------------------------------------===//

#include "mncc/Version.h"
#include "mncc/layout/Layout.h"
#include "mncc/layout/LayoutAlgebra.h"
#include "mncc/layout/Staging.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace mncc::layout;

namespace {

const char *const kUsage =
    "usage: mncc-layout print LAYOUT\n"
    "       mncc-layout locate LAYOUT --index I0,I1,... [--json]\n"
    "       mncc-layout validate LAYOUT [--dtype f16|bf16|f32|f64|i8|...] "
    "[--memory LM0|LM1|L1BM|L2BM|PDM|DRAM]\n"
    "       mncc-layout switch-plan FROM TO\n"
    "       mncc-layout --version\n";

int usageError(const std::string &message) {
  std::fprintf(stderr, "mncc-layout: error: %s\n%s", message.c_str(), kUsage);
  return 1;
}

// Prints "mncc-layout: error: column N: message", the text, and a caret under column N.
void printLayoutError(const LayoutError &error, const std::string &text) {
  std::fprintf(stderr, "mncc-layout: error: %s\n", error.str().c_str());
  if (error.column == 0)
    return;
  std::fprintf(stderr, "%s\n%s^\n", text.c_str(),
               std::string(error.column - 1, ' ').c_str());
}

bool parseArgument(const std::string &text, Layout &layout) {
  LayoutResult<Layout> parsed = parseLayout(text);
  if (!parsed) {
    printLayoutError(parsed.error(), text);
    return false;
  }
  layout = std::move(*parsed);
  return true;
}

bool parseIndex(const std::string &text, std::vector<int64_t> &index) {
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string part = text.substr(
        pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char *end = nullptr;
    long long value = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0')
      return false;
    index.push_back(value);
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  return true;
}

int runPrint(const std::vector<std::string> &args) {
  if (args.size() != 1)
    return usageError("print takes one layout");
  Layout layout;
  if (!parseArgument(args[0], layout))
    return 1;
  std::printf("%s\n", layout.str().c_str());
  return 0;
}

int runLocate(const std::vector<std::string> &args) {
  std::string text;
  std::vector<int64_t> index;
  bool haveIndex = false, json = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json") {
      if (json)
        return usageError("--json is given more than once");
      json = true;
    } else if (args[i] == "--index" && i + 1 < args.size()) {
      if (haveIndex)
        return usageError("--index is given more than once");
      if (!parseIndex(args[++i], index))
        return usageError("--index takes comma-separated integers");
      haveIndex = true;
    } else if (text.empty()) {
      text = args[i];
    } else {
      return usageError("unexpected argument '" + args[i] + "'");
    }
  }
  if (text.empty() || !haveIndex)
    return usageError("locate takes a layout and --index");
  Layout layout;
  if (!parseArgument(text, layout))
    return 1;
  LayoutResult<std::vector<Place>> places = locate(layout, index);
  if (!places) {
    printLayoutError(places.error(), text);
    return 1;
  }
  if (json) {
    std::printf("[");
    for (size_t i = 0; i < places->size(); ++i)
      std::printf("%s%s", i ? ",\n " : "", (*places)[i].toJson().c_str());
    std::printf("]\n");
  } else {
    for (const Place &place : *places)
      std::printf("%s\n", place.str().c_str());
  }
  return 0;
}

int runValidate(const std::vector<std::string> &args) {
  std::string text;
  ValidationOptions options;
  bool haveDtype = false, haveMemory = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--dtype" && i + 1 < args.size()) {
      if (haveDtype)
        return usageError("--dtype is given more than once");
      haveDtype = true;
      std::optional<DType> dtype = parseDTypeName(args[++i]);
      if (!dtype)
        return usageError("unknown dtype '" + args[i] + "'");
      options.dtype = *dtype;
    } else if (args[i] == "--memory" && i + 1 < args.size()) {
      if (haveMemory)
        return usageError("--memory is given more than once");
      haveMemory = true;
      std::optional<MemoryKind> memory = parseMemoryKindName(args[++i]);
      if (!memory)
        return usageError("unknown memory '" + args[i] + "'");
      options.memory = *memory;
    } else if (text.empty()) {
      text = args[i];
    } else {
      return usageError("unexpected argument '" + args[i] + "'");
    }
  }
  if (text.empty())
    return usageError("validate takes a layout");
  Layout layout;
  if (!parseArgument(text, layout))
    return 1;
  std::vector<LayoutError> errors = validateLayout(layout, options);
  for (const LayoutError &error : errors)
    std::fprintf(stderr, "mncc-layout: error: %s\n", error.str().c_str());
  if (!errors.empty())
    return 1;
  std::printf("valid for %s in %s\n", dtypeName(options.dtype),
              memoryKindName(options.memory));
  // How host staging will copy it (docs/layout.md, "Host staging").
  StagingOptions staging;
  staging.memory = options.memory;
  LayoutResult<std::string> copyLoop =
      describeStaging(layout, options.dtype, staging);
  if (copyLoop)
    std::printf("staging: %s\n", copyLoop->c_str());
  else
    std::printf("staging: not possible: %s\n", copyLoop.error().str().c_str());
  return 0;
}

int runSwitchPlan(const std::vector<std::string> &args) {
  if (args.size() != 2)
    return usageError("switch-plan takes two layouts");
  Layout from, to;
  if (!parseArgument(args[0], from) || !parseArgument(args[1], to))
    return 1;
  LayoutResult<SwitchPlan> plan = planSwitch(from, to);
  if (!plan) {
    std::fprintf(stderr, "mncc-layout: error: %s\n", plan.error().str().c_str());
    return 1;
  }
  std::printf("%s", plan->str().c_str());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    return usageError("missing command");
  std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "print")
    return runPrint(args);
  if (command == "locate")
    return runLocate(args);
  if (command == "validate")
    return runValidate(args);
  if (command == "switch-plan")
    return runSwitchPlan(args);
  if (command == "--help" || command == "-h") {
    std::printf("%s", kUsage);
    return 0;
  }
  if (command == "--version") {
    std::printf("mncc version %s (MLIR %s)\n", MNCC_VERSION_STRING,
                MNCC_LLVM_VERSION_STRING);
    return 0;
  }
  return usageError("unknown command '" + command + "'");
}
