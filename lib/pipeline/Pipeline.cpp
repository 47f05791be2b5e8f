//===- Pipeline.cpp - Which passes run, phase by phase --------------------===//

#include "mncc/pipeline/Pipeline.h"

#include "mncc/passes/graph/Passes.h"
#include "mncc/passes/l3/Passes.h"
#include "mncc/passes/pfvm/Passes.h"

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
     "MNGraph: float_dtype, location and layout planning", true, kNoIssue},
    {Phase::TimeSlice, "time-slice", "time slicing", true, kNoIssue},
    {Phase::L3, "l3", "L3IR: node simulation, scheduling, addresses", true,
     kNoIssue},
    {Phase::Emit, "emit", "MN-Core 2 assembly: concatenation or L1Merge", true,
     kNoIssue},
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

namespace {

/// The pfvm phase's simplifications, in order (passes/pfvm); a name may
/// come more than once. CODEGEN_DEFER_SIMPLIFY moves every step of a name
/// to the start of the graph phase.
struct Simplification {
  llvm::StringLiteral name;
  std::unique_ptr<mlir::Pass> (*create)(const CompileOptions &);
};

const Simplification kSimplifications[] = {
    {"remove-noops",
     [](const CompileOptions &) { return mncc::pfvm::createRemoveNoops(); }},
    {"fold-constants",
     [](const CompileOptions &) { return mncc::pfvm::createFoldConstants(); }},
    // The Reshapes the folded shapes made no-ops.
    {"remove-noops",
     [](const CompileOptions &) { return mncc::pfvm::createRemoveNoops(); }},
    {"fold-batchnorm",
     [](const CompileOptions &) { return mncc::pfvm::createFoldBatchNorm(); }},
    {"resolve-negative-indices",
     [](const CompileOptions &) {
       return mncc::pfvm::createResolveNegativeIndices();
     }},
    {"reuse-constants",
     [](const CompileOptions &) { return mncc::pfvm::createReuseConstants(); }},
    {"cse", [](const CompileOptions &) { return mncc::pfvm::createCse(); }},
    {"dce", [](const CompileOptions &) { return mncc::pfvm::createDce(); }},
};

bool isDeferred(const CompileOptions &options, llvm::StringRef name) {
  return llvm::any_of(options.CODEGEN_DEFER_SIMPLIFY,
                      [&](const std::string &item) {
                        llvm::StringRef given(item);
                        given.consume_front("pfvm-");
                        return given == name;
                      });
}

/// Whether a variable turns the simplification off altogether.
bool isSkipped(const CompileOptions &options, llvm::StringRef name) {
  return (name == "resolve-negative-indices" &&
          options.CODEGEN_SKIP_RESOLVE_NEGATIVE_INDICES) ||
         (name == "reuse-constants" && options.PFVM_DISABLE_CONSTANT_REUSE);
}

/// Adds the simplifications (deferred or not) to a pass manager on
/// func.func.
void addSimplifications(mlir::OpPassManager &functionPasses,
                        const CompileOptions &options, bool deferred) {
  for (const Simplification &step : kSimplifications)
    if (isDeferred(options, step.name) == deferred &&
        !isSkipped(options, step.name))
      functionPasses.addPass(step.create(options));
}

} // namespace

llvm::ArrayRef<llvm::StringRef> mncc::pipeline::pfvmSimplificationNames() {
  static const std::vector<llvm::StringRef> names = [] {
    std::vector<llvm::StringRef> unique;
    for (const Simplification &step : kSimplifications)
      if (!llvm::is_contained(unique, step.name))
        unique.push_back(step.name);
    return unique;
  }();
  return names;
}

void mncc::pipeline::populatePfvmPasses(mlir::OpPassManager &pm,
                                        const CompileOptions &options) {
  // PFVM simplify (passes/pfvm; docs/pfvm.md), less what
  // CODEGEN_DEFER_SIMPLIFY defers; PFVM_DISABLE_CONSTANT_REUSE and
  // CODEGEN_SKIP_RESOLVE_NEGATIVE_INDICES leave their pass out.
  mlir::OpPassManager &functionPasses = pm.nest<mlir::func::FuncOp>();
  addSimplifications(functionPasses, options, /*deferred=*/false);
  // Fusion: one optimizer node per parameter update, then the marks
  // pfvm:cpu runs fused (activations into their Conv or Add, Convs
  // written into their Concat).
  if (!options.CODEGEN_SKIP_OPTIMIZER_FUSION)
    functionPasses.addPass(mncc::pfvm::createFuseOptimizers());
  functionPasses.addPass(mncc::pfvm::createFuseActivations());
  functionPasses.addPass(mncc::pfvm::createConcatInPlace());
  // Functions nothing calls (an ONNX model is one function).
  pm.addPass(mlir::createSymbolDCEPass());
}

void mncc::pipeline::populateDeferredSimplifyPasses(
    mlir::OpPassManager &pm, const CompileOptions &options) {
  if (options.CODEGEN_DEFER_SIMPLIFY.empty())
    return;
  addSimplifications(pm.nest<mlir::func::FuncOp>(), options,
                     /*deferred=*/true);
}

void mncc::pipeline::populateGraphPasses(mlir::OpPassManager &pm,
                                         const CompileOptions &options) {
  // The graph stage keeps the ONNX operators and attaches the decisions:
  // device formats, locations, DRAM forms (docs/codegen.md).
  graph::PlanDtypesOptions dtypes;
  dtypes.floatDtype = options.getText(OptionId::float_dtype);
  pm.addPass(graph::createPlanDtypes(dtypes));
  graph::PlanLocationsOptions locations;
  locations.gemmForceWeightOnDram = options.CODEGEN_GEMM_FORCE_WEIGHT_ON_DRAM;
  pm.addPass(graph::createPlanLocations(locations));
  graph::PlanLayoutsOptions layouts;
  layouts.layoutPlanner = options.getText(OptionId::layout_planner);
  layouts.layoutSpec = options.layout_spec;
  layouts.gemmLayoutSpec = options.gemm_layout_spec;
  layouts.allowUnusedLayoutSpec = options.CODEGEN_ALLOW_UNUSED_LAYOUT_SPEC;
  layouts.ignoreLayoutCheck = options.CODEGEN_IGNORE_LAYOUT_CHECK;
  pm.addPass(graph::createPlanLayouts(layouts));
}

void mncc::pipeline::populateTimeSlicePasses(mlir::OpPassManager &pm,
                                             const CompileOptions &options) {
  graph::TimeSliceOptions slicing;
  slicing.maxTimeSlice = options.CODEGEN_MAX_TIME_SLICE;
  pm.addPass(graph::createTimeSlice(slicing));
}

void mncc::pipeline::populateL3Passes(mlir::OpPassManager &pm,
                                      const CompileOptions &options) {
  pm.addPass(l3::createLowerToL3());
  l3::SelectKernelsOptions select;
  select.opsOnHost = options.CODEGEN_OPS_ON_HOST;
  pm.addPass(l3::createSelectKernels(select));
  pm.addPass(l3::createFuseEpilogues());
  l3::ScheduleOptions schedule;
  schedule.scheduler = options.getText(OptionId::scheduler);
  pm.addPass(l3::createSchedule(schedule));
  pm.addPass(l3::createPlanAddresses());
}

void mncc::pipeline::populateEmitPasses(mlir::OpPassManager &pm,
                                        const CompileOptions &options) {
  pm.addPass(l3::createEmitKernels());
  l3::LinkProgramOptions link;
  link.useMerge = options.CODEGEN_USE_MERGE;
  pm.addPass(l3::createLinkProgram(link));
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
      populateDeferredSimplifyPasses(pm, options);
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
