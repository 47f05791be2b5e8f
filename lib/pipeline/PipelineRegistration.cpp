//===- PipelineRegistration.cpp - The phases as mncc-opt pipelines --------===//
//
// mlir::PassPipelineRegistration's builder cannot fail, and resolving the
// options can (float_dtype=quad, a missing option_json), so the pipelines
// are registered with mlir::registerPassPipeline, which is what
// PassPipelineRegistration does underneath, with a builder that reports
// through MLIR's error handler. The options are an
// mlir::PassPipelineOptions generated from the option table, so
// `mncc-opt --help` lists them.
//
//===----------------------------------------------------------------------===//

#include "mncc/pipeline/Pipeline.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

using namespace mncc::pipeline;

namespace {

struct PipelineOptions : public mlir::PassPipelineOptions<PipelineOptions> {
#define MNCC_ARG(NAME, TYPE, CPPTYPE, DEFAULT, MIN, MAX, READER, STATUS,       \
                 ISSUE, DESCRIPTION)                                           \
  Option<std::string> NAME{*this, #NAME, llvm::cl::desc(DESCRIPTION)};
#include "mncc/pipeline/OptionTable.def"
};

void registerPhases(const std::string &argument, const std::string &summary,
                    Phase from, std::optional<Phase> only,
                    const OptionEnvironment &environment,
                    const std::string &presetDir) {
  mlir::registerPassPipeline(
      argument, summary,
      [=](mlir::OpPassManager &pm, llvm::StringRef text,
          llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)>
              errorHandler) -> mlir::LogicalResult {
        PipelineOptions parsed;
        if (mlir::failed(parsed.parseFromString(text)))
          return mlir::failure();
        OptionRequest request;
        request.directOrigin = "the pipeline options";
        request.environment = environment;
        request.presetDir = presetDir;
#define MNCC_ARG(NAME, ...)                                                    \
  if (parsed.NAME.hasValue())                                                  \
    request.direct.emplace_back(#NAME, parsed.NAME.getValue());
#include "mncc/pipeline/OptionTable.def"
        auto resolved = resolveCompileOptions(request);
        if (!resolved)
          return errorHandler(llvm::toString(resolved.takeError()));
        Phase to = only ? *only : Phase::Emit;
        if (only && !getPhaseInfo(*only).available)
          return errorHandler(unavailableReason(*only));
        if (!only && lastReachablePhase(Phase::Import, to) == Phase::Import)
          return errorHandler(unavailableReason(Phase::Pfvm));
        for (const std::string &note : notImplementedNotes(resolved->options))
          llvm::errs() << "note: " << note << "\n";
        buildPipeline(pm, resolved->options, from,
                      only ? *only : lastReachablePhase(Phase::Import, to));
        return mlir::success();
      },
      [](llvm::function_ref<void(const mlir::detail::PassOptions &)> handler) {
        handler(PipelineOptions());
      });
}

} // namespace

void mncc::pipeline::registerPipelines(const OptionEnvironment &environment,
                                       const std::string &presetDir) {
  for (const PhaseInfo &info : getPhases()) {
    if (info.phase == Phase::Import)
      continue;
    registerPhases(std::string("mncc-") + info.name,
                   std::string("mncc's ") + info.name +
                       " phase: " + info.summary,
                   info.phase, info.phase, environment, presetDir);
  }
  registerPhases("mncc-compile",
                 "Every available phase of mncc after import (as mncc "
                 "compile runs them)",
                 Phase::Pfvm, std::nullopt, environment, presetDir);
}
