//===- ToolOptions.cpp - Command-line hygiene of the mncc tools -----------===//

#include "mncc/support/ToolOptions.h"

#include "mncc/Version.h"

#include "llvm/Support/raw_ostream.h"

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
