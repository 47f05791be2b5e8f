//===- OptionsCommand.cpp - mncc options: every compile option
//-------------===//
//
//   mncc options             one paragraph per option and variable
//   mncc options --markdown  the tables of docs/options.md
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "mncc/pipeline/Options.h"

#include "llvm/Support/raw_ostream.h"

using namespace mncc::pipeline;
using namespace mncc::tool;
namespace cl = llvm::cl;

cl::SubCommand mncc::tool::optionsCommand(
    "options", "List every compile option and environment variable: type, "
               "default, what reads it, whether it is implemented");

namespace {

cl::opt<bool> markdown("markdown",
                       cl::desc("Print the tables of docs/options.md"),
                       cl::init(false), cl::sub(optionsCommand),
                       cl::cat(category()));

} // namespace

int mncc::tool::runOptions() {
  if (markdown) {
    llvm::outs() << optionsMarkdown();
    return 0;
  }
  static const CompileOptions defaults;
  for (const OptionInfo &info : getOptionTable()) {
    llvm::outs() << (info.kind == OptionKind::Arg ? "--" : "") << info.name
                 << " (" << optionTypeName(info.type);
    if (info.type == OptionType::Enum) {
      llvm::outs() << ":";
      for (const EnumValueInfo &value : info.values)
        llvm::outs() << " " << value.spelling;
    }
    std::string value = defaults.getText(info.id);
    llvm::outs() << "; default " << (value.empty() ? "empty" : value) << ")\n"
                 << "    " << info.description << ".\n"
                 << "    read by: " << info.reader << "; "
                 << (info.status == OptionStatus::Implemented
                         ? std::string("implemented")
                         : "accepted, not implemented (" +
                               issueText(info.issue) + ")")
                 << "\n";
  }
  return 0;
}
