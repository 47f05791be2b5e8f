//===- PluginCheck.h - Refuse plugins that cannot work -------*- C++ -*-===//
//
// MLIR's own plugin loader dlopens whatever it is given: a plugin built
// against another LLVM drags a second libLLVM into the process, and a file
// that is not a plugin is only "ignored" with a warning. mncc tools check a
// plugin before anything is loaded and stop with a clear error instead.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_PLUGIN_PLUGINCHECK_H
#define MNCC_PLUGIN_PLUGINCHECK_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace mncc {

enum class PluginKind { Pass, Dialect };

/// Checks, without loading it, that `path` is a shared library for this
/// machine, built against the LLVM and mncc versions of this build, that
/// exports the entry point of `kind`; then loads it to check MLIR's plugin
/// API version.
llvm::Error checkPlugin(llvm::StringRef path, PluginKind kind);

/// Checks every plugin named by --load-pass-plugin and --load-dialect-plugin
/// on a tool's command line. Prints each problem to `errs` as
/// "<tool>: error: ..." and returns false if any.
bool checkPluginArguments(int argc, char **argv, llvm::raw_ostream &errs);

} // namespace mncc

#endif // MNCC_PLUGIN_PLUGINCHECK_H
