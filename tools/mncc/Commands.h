//===- Commands.h - The subcommands of mncc -------------------*- C++ -*-===//
//
// One file per subcommand; each defines its cl::SubCommand and options and
// the function main calls when it is chosen.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_TOOLS_MNCC_COMMANDS_H
#define MNCC_TOOLS_MNCC_COMMANDS_H

#include "mncc/onnx/Import.h"
#include "mncc/pipeline/Options.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include <string>

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

/// The compile options of the command line (the option table's flags of
/// compile and run, plus `unknown` NAME=VALUE texts, which are reported)
/// with the environment and option_json, resolved.
llvm::Expected<pipeline::ResolvedOptions>
resolveCommandLineOptions(const char *argv0,
                          llvm::ArrayRef<std::string> unknown);

/// The model at `path`: an ONNX model, imported with `options`, or the
/// onnx dialect's IR (.mlir), parsed through `sourceMgr`. Null after a
/// located error.
mlir::OwningOpRef<mlir::ModuleOp> loadModel(llvm::StringRef path,
                                            mlir::MLIRContext &context,
                                            llvm::SourceMgr &sourceMgr,
                                            const OnnxImportOptions &options);

int runSummary();
int runModel(const char *argv0);
/// `argv0` locates the presets (<bindir>/../share/mncc/preset_options).
int runCompile(const char *argv0);
int runOptions();

} // namespace mncc::tool

#endif // MNCC_TOOLS_MNCC_COMMANDS_H
