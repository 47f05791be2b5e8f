//===- Pipeline.cpp - Which passes run, phase by phase --------------------===//

#include "mncc/pipeline/Pipeline.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mncc::pipeline;

namespace {

// A phase becomes available when its populate function below adds its
// passes.
const PhaseInfo kPhases[] = {
    {Phase::Import, "import", "ONNX model to the onnx dialect", true, kNoIssue},
    {Phase::Pfvm, "pfvm", "PFVM: simplification and fusion of the ONNX graph",
     true, kNoIssue},
    {Phase::Graph, "graph",
     "MNGraph: float_dtype, location and layout planning", false, 14},
    {Phase::TimeSlice, "time-slice", "time slicing", false, 14},
    {Phase::L3, "l3", "L3IR: node simulation, scheduling, addresses", false,
     14},
    {Phase::Emit, "emit", "MN-Core 2 assembly: concatenation or L1Merge", false,
     14},
};

} // namespace

llvm::ArrayRef<PhaseInfo> mncc::pipeline::getPhases() { return kPhases; }

const PhaseInfo &mncc::pipeline::getPhaseInfo(Phase phase) {
  return kPhases[static_cast<unsigned>(phase)];
}

std::optional<Phase> mncc::pipeline::parsePhase(llvm::StringRef name) {
  for (const PhaseInfo &info : kPhases)
    if (name == info.name)
      return info.phase;
  return std::nullopt;
}

std::string mncc::pipeline::phaseNames() {
  std::string names;
  for (const PhaseInfo &info : kPhases)
    names += (names.empty() ? "" : ", ") + std::string(info.name);
  return names;
}

unsigned mncc::pipeline::phaseNumber(Phase phase) {
  return static_cast<unsigned>(phase) + 1;
}

Phase mncc::pipeline::lastReachablePhase(Phase start, Phase to) {
  Phase last = start;
  for (unsigned p = static_cast<unsigned>(start) + 1;
       p <= static_cast<unsigned>(to); ++p) {
    if (!kPhases[p].available)
      break;
    last = static_cast<Phase>(p);
  }
  return last;
}

std::string mncc::pipeline::unavailableReason(Phase phase) {
  const PhaseInfo &info = getPhaseInfo(phase);
  return std::string("the ") + info.name + " phase is not implemented yet (" +
         issueText(info.issue) + ")";
}

void mncc::pipeline::populatePfvmPasses(mlir::OpPassManager &pm,
                                        const CompileOptions &) {
  // The generic cleanups until the PFVM passes arrive (issue 16: simplify,
  // fusion, PFVM_DISABLE_CONSTANT_REUSE, CODEGEN_DEFER_SIMPLIFY,
  // CODEGEN_SKIP_OPTIMIZER_FUSION, CODEGEN_SKIP_RESOLVE_NEGATIVE_INDICES).
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  pm.addPass(mlir::createSymbolDCEPass());
}

void mncc::pipeline::populateGraphPasses(mlir::OpPassManager &,
                                         const CompileOptions &) {
  // Issue 14: onnx to mngraph, float_dtype, location and layout planning.
}

void mncc::pipeline::populateTimeSlicePasses(mlir::OpPassManager &,
                                             const CompileOptions &) {
  // Issue 14; time slicing itself later (CODEGEN_MAX_TIME_SLICE, ...).
}

void mncc::pipeline::populateL3Passes(mlir::OpPassManager &,
                                      const CompileOptions &) {
  // Issue 14: lowering to L3IR, the always_from_dram scheduler, addresses.
}

void mncc::pipeline::populateEmitPasses(mlir::OpPassManager &,
                                        const CompileOptions &) {
  // Issue 14: MN-Core 2 assembly by concatenation.
}

void mncc::pipeline::buildPipeline(mlir::OpPassManager &pm,
                                   const CompileOptions &options, Phase from,
                                   Phase to) {
  for (unsigned p = static_cast<unsigned>(from); p <= static_cast<unsigned>(to);
       ++p) {
    if (!kPhases[p].available)
      continue;
    switch (static_cast<Phase>(p)) {
    case Phase::Import:
      break; // importOnnxFile, not a pass
    case Phase::Pfvm:
      populatePfvmPasses(pm, options);
      break;
    case Phase::Graph:
      populateGraphPasses(pm, options);
      break;
    case Phase::TimeSlice:
      populateTimeSlicePasses(pm, options);
      break;
    case Phase::L3:
      populateL3Passes(pm, options);
      break;
    case Phase::Emit:
      populateEmitPasses(pm, options);
      break;
    }
  }
}
