//===- Pipeline.h - The phases of the compiler ----------------*- C++ -*-===//
//
// The compiler is a chain of named phases that follow the MLSDK's stages:
//
//   import      ONNX model -> onnx dialect (mncc::importOnnxFile; not a pass)
//   pfvm        PFVM: graph simplification and fusion on the onnx dialect
//   graph       MNGraph: float_dtype, location and layout planning
//   time-slice  time slicing
//   l3          L3IR: node simulation, scheduling, addresses
//   emit        MN-Core 2 assembly: concatenation or L1Merge
//
// buildPipeline is the only place that decides which passes run; each phase
// adds its passes in its own populate<Phase>Passes. The driver (mncc
// compile, through compileModel), mncc-opt's registered pipelines
// (--mncc-pfvm ... --mncc-compile), the runtime and the tests all build
// their pass managers through it.
//
// A phase is available once it has passes: set `available` for it in
// Pipeline.cpp's phase table when its populate function gets them. A
// compile stops after the last available phase and says why.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_PIPELINE_PIPELINE_H
#define MNCC_PIPELINE_PIPELINE_H

#include "mncc/pipeline/Options.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mncc::pipeline {

enum class Phase { Import, Pfvm, Graph, TimeSlice, L3, Emit };

struct PhaseInfo {
  Phase phase;
  /// "import", "pfvm", "graph", "time-slice", "l3", "emit".
  const char *name;
  const char *summary;
  /// Whether the phase does its work today.
  bool available;
  /// When not available: the issue that implements it (kLater: later).
  int issue;
};

/// Every phase, in order.
llvm::ArrayRef<PhaseInfo> getPhases();
const PhaseInfo &getPhaseInfo(Phase phase);
std::optional<Phase> parsePhase(llvm::StringRef name);
/// "import, pfvm, graph, time-slice, l3, emit".
std::string phaseNames();
/// The phase's position, 1 for import: ir/<N>-<name>.mlir.
unsigned phaseNumber(Phase phase);

/// The last phase a compile that starts after `start` and wants to reach
/// `to` can run: it stops before the first unavailable phase. Returns
/// `start` when the phase after it is not available.
Phase lastReachablePhase(Phase start, Phase to);

/// "the graph phase is not implemented yet (issue 14)".
std::string unavailableReason(Phase phase);

void populatePfvmPasses(mlir::OpPassManager &pm, const CompileOptions &options);
/// The simplifications CODEGEN_DEFER_SIMPLIFY moved after the pfvm phase:
/// buildPipeline adds them at the start of the graph phase.
void populateDeferredSimplifyPasses(mlir::OpPassManager &pm,
                                    const CompileOptions &options);
/// The names CODEGEN_DEFER_SIMPLIFY takes, in the pfvm phase's order:
/// "remove-noops", "fold-constants", ... (the passes' names without
/// "pfvm-", which is accepted too).
llvm::ArrayRef<llvm::StringRef> pfvmSimplificationNames();
void populateGraphPasses(mlir::OpPassManager &pm,
                         const CompileOptions &options);
void populateTimeSlicePasses(mlir::OpPassManager &pm,
                             const CompileOptions &options);
void populateL3Passes(mlir::OpPassManager &pm, const CompileOptions &options);
void populateEmitPasses(mlir::OpPassManager &pm, const CompileOptions &options);

/// Adds the passes of the phases from `from` to `to`, both included, to a
/// pass manager on builtin.module. Import has no passes (it is
/// importOnnxFile); a phase that is not available adds none.
void buildPipeline(mlir::OpPassManager &pm, const CompileOptions &options,
                   Phase from, Phase to);

/// Registers with MLIR's pass registry, for mncc-opt, one pipeline per
/// phase that has passes (--mncc-pfvm, --mncc-graph, --mncc-time-slice,
/// --mncc-l3, --mncc-emit) and --mncc-compile (every available phase after
/// import). Their options are the command-line options of the table
/// (float_dtype=..., option_json=...), resolved by resolveCompileOptions
/// with `environment` and `presetDir`, so a lit test runs a phase as
/// `mncc compile` would.
void registerPipelines(const OptionEnvironment &environment,
                       const std::string &presetDir);

} // namespace mncc::pipeline

#endif // MNCC_PIPELINE_PIPELINE_H
