//===- ToolOptions.cpp - Command-line hygiene of the mncc tools -----------===//

#include "mncc/support/ToolOptions.h"

#include "mncc/Version.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace cl = llvm::cl;

void mncc::setToolVersionPrinter() {
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "mncc version " << MNCC_VERSION_STRING << " (MLIR "
       << MNCC_LLVM_VERSION_STRING << ")\n";
  });
}

void mncc::hideUnrelatedOptions(
    llvm::ArrayRef<const cl::OptionCategory *> categories, bool keepMlirOptions,
    cl::SubCommand &sub) {
  cl::HideUnrelatedOptions(categories, sub);
  if (!keepMlirOptions)
    return;
  static cl::OptionCategory mlirCategory("MLIR options");
  for (auto &entry : cl::getRegisteredOptions(sub))
    if (entry.getKey().starts_with("mlir-") &&
        entry.getValue()->getOptionHiddenFlag() == cl::ReallyHidden) {
      entry.getValue()->setHiddenFlag(cl::NotHidden);
      entry.getValue()->addCategory(mlirCategory);
    }
}

llvm::StringSet<> mncc::registeredOptionNames() {
  llvm::StringSet<> names;
  for (auto &entry : cl::getRegisteredOptions())
    names.insert(entry.getKey());
  return names;
}

void mncc::moveNewOptionsToSubCommand(const llvm::StringSet<> &before,
                                      cl::SubCommand &sub,
                                      cl::OptionCategory &category) {
  auto &topLevel = cl::getRegisteredOptions();
  auto &target = cl::getRegisteredOptions(sub);
  std::vector<std::string> moved;
  for (auto &entry : topLevel) {
    if (before.contains(entry.getKey()))
      continue;
    cl::Option *option = entry.getValue();
    target[entry.getKey()] = option;
    option->addSubCommand(sub);
    option->addCategory(category);
    moved.push_back(entry.getKey().str());
  }
  for (const std::string &name : moved)
    topLevel.erase(name);
}

namespace {

/// Every option of `sub` (and the top level) that takes one value and was
/// given more than once, as "--name" texts; for an option spelled by its
/// values (clEnumValN without a name), all its names.
std::string repeatedOption(cl::SubCommand &sub) {
  llvm::DenseSet<cl::Option *> seen;
  std::map<cl::Option *, std::vector<std::string>> names;
  auto collect = [&](cl::SubCommand &from) {
    for (auto &entry : cl::getRegisteredOptions(from))
      names[entry.getValue()].push_back(entry.getKey().str());
  };
  collect(cl::SubCommand::getTopLevel());
  if (&sub != &cl::SubCommand::getTopLevel())
    collect(sub);
  for (auto &[option, spellings] : names) {
    if (option->getNumOccurrences() < 2 ||
        option->isPositional() || option->isSink() ||
        option->isConsumeAfter() ||
        (option->getNumOccurrencesFlag() != cl::Optional &&
         option->getNumOccurrencesFlag() != cl::Required))
      continue;
    if (!option->ArgStr.empty())
      return (option->ArgStr.size() == 1 ? "-" : "--") + option->ArgStr.str() +
             " is given more than once; it takes one value";
    std::string list;
    for (size_t i = 0; i < spellings.size(); ++i)
      list += (i ? (i + 1 == spellings.size() ? " or --" : ", --") : "--") +
              spellings[i];
    return "give only one of " + list;
  }
  return "";
}

} // namespace

bool mncc::parseToolCommandLine(int argc, const char *const *argv,
                                llvm::StringRef overview) {
  std::string tool = llvm::sys::path::filename(argv[0]).str();
  std::string messages;
  llvm::raw_string_ostream errors(messages);
  bool parsed = cl::ParseCommandLineOptions(argc, argv, overview, &errors);
  errors.flush();
  if (!parsed) {
    // LLVM prints each error on its own line, most as "TOOL: message";
    // print each as "TOOL: error: message", once.
    llvm::SmallVector<llvm::StringRef> lines;
    llvm::StringRef(messages).split(lines, '\n', -1, false);
    llvm::StringSet<> printed;
    for (llvm::StringRef line : lines) {
      line = line.trim();
      if (line.consume_front(tool + ":"))
        line = line.ltrim();
      if (line.empty() || !printed.insert(line).second)
        continue;
      llvm::errs() << tool
                   << (line.starts_with("Did you mean") ? ": note: "
                                                        : ": error: ")
                   << line << "\n";
    }
    if (printed.empty())
      llvm::errs() << tool << ": error: bad command line (" << tool
                   << " --help lists the options)\n";
    return false;
  }
  return rejectRepeatedOptions(tool);
}

bool mncc::rejectRepeatedOptions(llvm::StringRef tool) {
  cl::SubCommand *active = &cl::SubCommand::getTopLevel();
  for (cl::SubCommand *sub : cl::getRegisteredSubcommands())
    if (*sub)
      active = sub;
  if (std::string repeated = repeatedOption(*active); !repeated.empty()) {
    llvm::errs() << tool << ": error: " << repeated << "\n";
    return false;
  }
  return true;
}
