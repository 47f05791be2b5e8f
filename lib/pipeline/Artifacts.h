//===- Artifacts.h - The files the L3 and emit phases add -------*- C++ -*-===//

#ifndef MNCC_LIB_PIPELINE_ARTIFACTS_H
#define MNCC_LIB_PIPELINE_ARTIFACTS_H

#include "mncc/pipeline/CodegenDir.h"
#include "mncc/pipeline/Options.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <optional>
#include <string>

namespace mncc::pipeline {

/// l3ir.txt: the schedule, as the MLSDK's codegen_dir has it.
mlir::LogicalResult writeL3Artifacts(mlir::ModuleOp module,
                                     CodegenDirTransaction &dir);
/// program.vsm, constants.bin and manifest.json.
mlir::LogicalResult writeEmitArtifacts(mlir::ModuleOp module,
                                       const CompileOptions &options,
                                       CodegenDirTransaction &dir);

/// Why the device cannot hold some value of the graph `module` holds after
/// the pfvm phase (a sequence, a string, an unsigned 32- or 64-bit integer,
/// a shape known only at run time), naming the value; nullopt when it can,
/// or when the graph's own inputs or outputs are not tensors (no runtime
/// passes those).
std::optional<std::string> wholeGraphHostReason(mlir::ModuleOp module);
/// For a graph wholeGraphHostReason refuses: host.mlir (the graph itself,
/// which pfvm:cpu runs whole), partitions.json (every node on the host,
/// for `reason`) and a manifest.json that says so.
mlir::LogicalResult writeWholeHostArtifacts(mlir::ModuleOp module,
                                            const CompileOptions &options,
                                            const std::string &reason,
                                            CodegenDirTransaction &dir);

} // namespace mncc::pipeline

#endif // MNCC_LIB_PIPELINE_ARTIFACTS_H
