//===- Artifacts.h - The files the L3 and emit phases add -------*- C++ -*-===//

#ifndef MNCC_LIB_PIPELINE_ARTIFACTS_H
#define MNCC_LIB_PIPELINE_ARTIFACTS_H

#include "mncc/pipeline/CodegenDir.h"
#include "mncc/pipeline/Options.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

namespace mncc::pipeline {

/// l3ir.txt: the schedule, as the MLSDK's codegen_dir has it.
mlir::LogicalResult writeL3Artifacts(mlir::ModuleOp module,
                                     CodegenDirTransaction &dir);
/// program.vsm, constants.bin and manifest.json.
mlir::LogicalResult writeEmitArtifacts(mlir::ModuleOp module,
                                       const CompileOptions &options,
                                       CodegenDirTransaction &dir);

} // namespace mncc::pipeline

#endif // MNCC_LIB_PIPELINE_ARTIFACTS_H
