//===- Commands.h - The subcommands of mncc -------------------*- C++ -*-===//
//
// One file per subcommand; each defines its cl::SubCommand and options and
// the function main calls when it is chosen.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_TOOLS_MNCC_COMMANDS_H
#define MNCC_TOOLS_MNCC_COMMANDS_H

#include "llvm/Support/CommandLine.h"

namespace mncc::tool {

/// The category of every option of mncc; --help shows only these.
llvm::cl::OptionCategory &category();

extern llvm::cl::SubCommand summaryCommand;
extern llvm::cl::SubCommand runCommand;
extern llvm::cl::SubCommand compileCommand;
extern llvm::cl::SubCommand optionsCommand;

/// Declares the flags of `mncc compile` that come from the option table
/// and MLIR's pass-manager options; before the command line is parsed.
void registerCompileFlags();

int runSummary();
int runModel();
/// `argv0` locates the presets (<bindir>/../share/mncc/preset_options).
int runCompile(const char *argv0);
int runOptions();

} // namespace mncc::tool

#endif // MNCC_TOOLS_MNCC_COMMANDS_H
