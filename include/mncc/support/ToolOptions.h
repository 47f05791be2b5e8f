//===- ToolOptions.h - Command-line hygiene of the mncc tools -*- C++ -*-===//
//
// libLLVM registers hundreds of backend flags (--amdgpu-*, --x86-*) in
// every program that links it; mncc's tools hide them from --help, show
// their own options (one cl::OptionCategory per tool), and print mncc's
// version.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_SUPPORT_TOOLOPTIONS_H
#define MNCC_SUPPORT_TOOLOPTIONS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"

namespace mncc {

/// Makes --version print "mncc version X.Y.Z (MLIR A.B.C)", and only that.
void setToolVersionPrinter();

/// Hides from --help every option of `sub` that is not in one of
/// `categories` (LLVM's --help and --version stay). With keepMlirOptions,
/// the options named mlir-* stay visible too.
void hideUnrelatedOptions(
    llvm::ArrayRef<const llvm::cl::OptionCategory *> categories,
    bool keepMlirOptions = false,
    llvm::cl::SubCommand &sub = llvm::cl::SubCommand::getTopLevel());

/// cl::ParseCommandLineOptions, with mncc's rules on top: every error is
/// printed as "TOOL: error: message" (LLVM's own say "TOOL: for the -o
/// option: ..." or name an option category), and an option that takes one
/// value (a cl::opt, a flag) given more than once is an error, as is more
/// than one of the names of one enum option (two modes of mncc-translate):
/// LLVM 19 silently keeps the last. Returns false after printing the
/// error; the caller exits with status 1.
bool parseToolCommandLine(int argc, const char *const *argv,
                          llvm::StringRef overview);

/// The repeated-option check of parseToolCommandLine alone, for a tool whose
/// command line another library parses (mncc-opt: MlirOptMain). Prints
/// "TOOL: error: ..." and returns false when an option that takes one
/// value was given more than once.
bool rejectRepeatedOptions(llvm::StringRef tool);

/// The names of the top-level options registered so far.
llvm::StringSet<> registeredOptionNames();

/// Makes the top-level options registered since `before` was taken options
/// of `sub` instead, listed under `category`: for MLIR's pass-manager
/// options (registerPassManagerCLOptions), which register at the top level
/// only, on a subcommand such as `mncc compile`.
void moveNewOptionsToSubCommand(const llvm::StringSet<> &before,
                                llvm::cl::SubCommand &sub,
                                llvm::cl::OptionCategory &category);

} // namespace mncc

#endif // MNCC_SUPPORT_TOOLOPTIONS_H
