//===- Compile.h - Compile a model into a codegen_dir --------*- C++ -*-===//
//
// compileModel is the compiler as a function: `mncc compile`, the
// runtime's compile() and the tests call it. It imports the model (or loads
// the IR a previous compile dumped, with compileFrom), runs the phases
// buildPipeline builds, one pass manager per phase, up to compileTo or the
// last available phase, and writes the codegen_dir in one transaction:
//
//   option.json          the effective options, in option_json format
//   ir/<N>-<phase>.mlir  the IR at the end of each phase run
//   compile.log          effective options, notes, phases, where it stopped
//   compile_status.json  each phase: "ok", "failed" or "not run", seconds
//
// Errors are emitted through the context's diagnostic handler; after one,
// the codegen_dir is left as it was.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_PIPELINE_COMPILE_H
#define MNCC_PIPELINE_COMPILE_H

#include "mncc/pipeline/CodegenDir.h"
#include "mncc/pipeline/Options.h"
#include "mncc/pipeline/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
class MLIRContext;
class PassManager;
class TimingScope;
} // namespace mlir

namespace mncc::pipeline {

struct CompileRequest {
  /// The ONNX model; with compileFrom, the .mlir dumped at the end of that
  /// phase.
  std::string input;
  /// The codegen_dir to write.
  std::string codegenDir;
  /// The options (resolveCompileOptions).
  ResolvedOptions options;
  /// Static shapes for graph inputs (--input-shape NAME:D0,...).
  std::vector<std::pair<std::string, std::vector<int64_t>>> inputShapes;
  /// Start after this phase, from its dumped IR.
  std::optional<Phase> compileFrom;
  /// Stop after this phase.
  Phase compileTo = Phase::Emit;
  /// Called on each phase's pass manager before it runs: the tools apply
  /// MLIR's pass-manager options (--mlir-print-ir-after-all, ...) here.
  std::function<mlir::LogicalResult(mlir::PassManager &)> configurePassManager;
  /// When set, each phase is timed under it (--mlir-timing).
  mlir::TimingScope *timing = nullptr;
  /// When set, a compileFrom input is loaded through it, so diagnostics
  /// show the source line.
  llvm::SourceMgr *sourceMgr = nullptr;
};

enum class PhaseState { NotRun, Ok, Failed };

struct PhaseResult {
  Phase phase;
  PhaseState state = PhaseState::NotRun;
  double seconds = 0;
};

struct CompileResult {
  bool succeeded = false;
  /// Every phase, in order.
  std::vector<PhaseResult> phases;
  /// The last phase that ran (or was loaded, with compileFrom).
  std::optional<Phase> lastPhase;
  /// Why the compile stopped after lastPhase when it did not reach emit:
  /// "--compile-to=pfvm", "the graph phase is not implemented yet (issue
  /// 14)". Empty when it ran every phase.
  std::string stopReason;
  /// Why the whole graph runs on pfvm:cpu (a value the device cannot
  /// hold; the compile stopped after pfvm with host.mlir), or empty.
  std::string wholeGraphOnHost;
  /// notImplementedNotes of the options.
  std::vector<std::string> notImplemented;
  /// The text of compile_status.json.
  std::string statusJson;
  /// What out_onnx got: "opt.onnx (the graph after the pfvm phase)"; empty
  /// without out_onnx.
  std::string outOnnx;
};

/// Compiles request.input into request.codegenDir.
CompileResult compileModel(mlir::MLIRContext &context,
                           const CompileRequest &request);

/// The files a phase adds to the codegen_dir besides its IR (emit:
/// program.vsm, manifest.json; l3: l3ir.txt), called after the phase ran.
/// Nothing today; the stages that write files add them here.
mlir::LogicalResult writePhaseArtifacts(Phase phase, mlir::ModuleOp module,
                                        const CompileOptions &options,
                                        CodegenDirTransaction &codegenDir);

/// "ir/2-pfvm.mlir".
std::string phaseIrPath(Phase phase);

} // namespace mncc::pipeline

#endif // MNCC_PIPELINE_COMPILE_H
