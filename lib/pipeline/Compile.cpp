//===- Compile.cpp - Compile a model into a codegen_dir -------------------===//

#include "mncc/pipeline/Compile.h"

#include "Artifacts.h"

#include "mncc/Version.h"
#include "mncc/onnx/Export.h"
#include "mncc/onnx/Import.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <map>
#include <set>

using namespace mncc::pipeline;
using mlir::failure;
using mlir::success;

namespace {

const char *stateName(PhaseState state) {
  switch (state) {
  case PhaseState::NotRun:
    return "not run";
  case PhaseState::Ok:
    return "ok";
  case PhaseState::Failed:
    return "failed";
  }
  return "";
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

std::string statusJson(const CompileResult &result) {
  std::string text = "{\n    \"phases\": [\n";
  for (size_t i = 0; i < result.phases.size(); ++i) {
    const PhaseResult &phase = result.phases[i];
    text += llvm::formatv("        {{\"name\": \"{0}\", \"status\": \"{1}\", "
                          "\"seconds\": {2:f3}}",
                          getPhaseInfo(phase.phase).name,
                          stateName(phase.state), phase.seconds)
                .str();
    text += i + 1 < result.phases.size() ? ",\n" : "\n";
  }
  text += "    ],\n";
  text += std::string("    \"status\": \"") +
          (!result.succeeded           ? "failed"
           : result.stopReason.empty() ? "ok"
                                       : "stopped") +
          "\"";
  if (result.succeeded && result.lastPhase)
    text += std::string(",\n    \"last_phase\": \"") +
            getPhaseInfo(*result.lastPhase).name + "\"";
  if (!result.stopReason.empty()) {
    std::string reason;
    for (char c : result.stopReason)
      reason +=
          c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    text += ",\n    \"stop_reason\": \"" + reason + "\"";
  }
  return text + "\n}\n";
}

std::string compileLog(const CompileRequest &request,
                       const CompileResult &result) {
  const ResolvedOptions &resolved = request.options;
  std::string log;
  log += "mncc compile (mncc " MNCC_VERSION_STRING
         ", MLIR " MNCC_LLVM_VERSION_STRING ")\n";
  log += "input: " + request.input + "\n";
  if (request.compileFrom)
    log += std::string("compile from: ") +
           getPhaseInfo(*request.compileFrom).name + "\n";
  log +=
      std::string("compile to: ") + getPhaseInfo(request.compileTo).name + "\n";
  for (const auto &[name, shape] : request.inputShapes)
    log += "input shape: " + name + ":" +
           llvm::join(llvm::map_range(
                          shape, [](int64_t d) { return std::to_string(d); }),
                      ",") +
           "\n";
  log += "option_json: " +
         (resolved.optionJsonPath.empty() ? std::string("none")
                                          : resolved.optionJsonPath) +
         "\nname: " + resolved.options.name + "\n";
  log += "\neffective options:\n";
  for (const std::string &line : describeEffectiveOptions(resolved))
    log += "  " + line + "\n";
  if (!resolved.notes.empty()) {
    log += "\nnotes:\n";
    for (const std::string &note : resolved.notes)
      log += "  " + note + "\n";
  }
  if (!result.notImplemented.empty()) {
    log += "\naccepted, not implemented:\n";
    for (const std::string &note : result.notImplemented)
      log += "  " + note + "\n";
  }
  if (!result.outOnnx.empty())
    log += "\nout_onnx: " + result.outOnnx + "\n";
  log += "\nphases:\n";
  for (const PhaseResult &phase : result.phases)
    log += std::string("  ") + getPhaseInfo(phase.phase).name + ": " +
           stateName(phase.state) + "\n";
  if (result.lastPhase) {
    log += std::string("\n") +
           (result.stopReason.empty() ? "completed" : "stopped") + " after " +
           getPhaseInfo(*result.lastPhase).name;
    if (!result.stopReason.empty())
      log += ": " + result.stopReason;
    log += "\n";
  }
  return log;
}

/// Calls `visit` on every dense resource attribute of the module.
template <typename Visit>
void forEachDenseResource(mlir::ModuleOp module, Visit visit) {
  module->walk([&](mlir::Operation *op) {
    for (mlir::NamedAttribute named : op->getAttrs())
      named.getValue().walk(
          [&](mlir::DenseResourceElementsAttr attr) { visit(attr); });
  });
}

/// The keys of the module's dense resources: after the import they are the
/// model's initializers, whose bytes the model file keeps.
std::set<std::string> resourceKeysOf(mlir::ModuleOp module) {
  std::set<std::string> keys;
  forEachDenseResource(module, [&](mlir::DenseResourceElementsAttr attr) {
    keys.insert(attr.getRawHandle().getKey().str());
  });
  return keys;
}

/// Resources larger than this are left out of the phase dumps when they are
/// the model's: a ResNet's weights would otherwise be written, in hex, once
/// per phase. --compile-from takes them back from the model.
constexpr int64_t kElidedResourceBytes = 4096;

mlir::LogicalResult dumpIr(mlir::ModuleOp module, Phase phase,
                           const std::set<std::string> &modelResources,
                           CodegenDirTransaction &dir) {
  auto stream = dir.createFile(phaseIrPath(phase));
  if (!stream) {
    mlir::emitError(module.getLoc())
        << "cannot write the IR of the " << getPhaseInfo(phase).name
        << " phase: " << llvm::toString(stream.takeError());
    return failure();
  }
  // As `mlir-opt --mlir-print-debuginfo` writes it: the locations hold the
  // node names, which --compile-from must get back. Large resources are
  // elided only when every resource is the model's (a pass that made one of
  // its own keeps them all).
  mlir::OpPrintingFlags flags;
  flags.enableDebugInfo();
  bool onlyModelResources = true;
  forEachDenseResource(module, [&](mlir::DenseResourceElementsAttr attr) {
    onlyModelResources &=
        modelResources.count(attr.getRawHandle().getKey().str()) != 0;
  });
  if (onlyModelResources && !modelResources.empty()) {
    flags.elideLargeResourceString(kElidedResourceBytes);
    **stream << "// Constants of the model larger than " << kElidedResourceBytes
             << " bytes are not repeated here; --compile-from reads them "
                "from the model (mncc.model).\n";
  }
  module->print(**stream, flags);
  **stream << "\n";
  (*stream)->close();
  if (std::error_code error = (*stream)->error()) {
    (*stream)->clear_error();
    mlir::emitError(module.getLoc())
        << "cannot write " << phaseIrPath(phase) << ": " << error.message();
    return failure();
  }
  return success();
}

/// Writes the onnx-dialect graph `module` to out_onnx as an ONNX model
/// (MNCORE_USE_EXTERNAL_DATA_FORMAT: tensors of 1 KiB and more in
/// out_onnx + ".data"). Each file is written whole to a temporary file and
/// renamed, the data first, so a failure leaves no half-written model.
mlir::LogicalResult writeOutOnnx(mlir::ModuleOp module,
                                 const CompileOptions &options, Phase phase,
                                 CompileResult &result) {
  const std::string &path = options.out_onnx;
  mncc::OnnxExportOptions exportOptions;
  std::string dataPath;
  if (options.MNCORE_USE_EXTERNAL_DATA_FORMAT) {
    exportOptions.externalDataThresholdBytes = 1024;
    dataPath = path + ".data";
    exportOptions.externalDataLocation =
        llvm::sys::path::filename(dataPath).str();
  }
  std::string model, data;
  llvm::raw_string_ostream modelOut(model), dataOut(data);
  if (mlir::failed(mncc::exportOnnx(module, modelOut, exportOptions,
                                    dataPath.empty() ? nullptr : &dataOut))) {
    mlir::emitError(module.getLoc())
        << "out_onnx: the graph of the " << getPhaseInfo(phase).name
        << " phase cannot be written as ONNX";
    return failure();
  }
  modelOut.flush();
  dataOut.flush();
  llvm::SmallVector<std::pair<std::string, const std::string *>, 2> files;
  if (!dataPath.empty())
    files.push_back({dataPath, &data});
  files.push_back({path, &model});
  for (const auto &[file, bytes] : files)
    if (llvm::Error error =
            llvm::writeToOutput(file, [&](llvm::raw_ostream &os) {
              os << *bytes;
              return llvm::Error::success();
            })) {
      mlir::emitError(module.getLoc())
          << "out_onnx: cannot write '" << file
          << "': " << llvm::errorToErrorCode(std::move(error)).message();
      return failure();
    }
  result.outOnnx =
      path + " (the graph after the " + getPhaseInfo(phase).name + " phase" +
      (dataPath.empty() ? std::string() : ", large tensors in " + dataPath) +
      ")";
  return success();
}

/// Gives the resources a dump left out their bytes from the model the
/// module names (mncc.model), imported again, and collects the keys whose
/// bytes are the model's: later dumps may leave those out again.
mlir::LogicalResult restoreModelResources(mlir::ModuleOp module,
                                          std::set<std::string> &fromModel) {
  std::vector<mlir::DenseResourceElementsAttr> resources;
  bool anyMissing = false;
  forEachDenseResource(module, [&](mlir::DenseResourceElementsAttr attr) {
    resources.push_back(attr);
    anyMissing |= attr.getRawHandle().getBlob() == nullptr;
  });
  auto model = module->getAttrOfType<mlir::StringAttr>("mncc.model");
  if (resources.empty() || (!model && !anyMissing))
    return success();
  if (!model)
    return mlir::emitError(module.getLoc())
           << "the IR leaves out the bytes of its constants and does not "
              "name its model (mncc.model)";
  // A context of its own: its keys are the ones the first import gave.
  mlir::MLIRContext modelContext(module->getContext()->getDialectRegistry());
  mlir::OwningOpRef<mlir::ModuleOp> imported;
  {
    // A model that moved away only matters when bytes are missing.
    mlir::ScopedDiagnosticHandler quiet(
        &modelContext, [](mlir::Diagnostic &) { return success(); });
    imported = mncc::importOnnxFile(model.getValue(), &modelContext, {});
  }
  if (!imported) {
    if (!anyMissing)
      return success();
    return mlir::emitError(module.getLoc())
           << "cannot read the constants the IR leaves out from its model "
           << model.getValue();
  }
  std::map<std::string, mlir::AsmResourceBlob *> blobs;
  forEachDenseResource(*imported, [&](mlir::DenseResourceElementsAttr attr) {
    if (mlir::AsmResourceBlob *blob = attr.getRawHandle().getBlob())
      blobs[attr.getRawHandle().getKey().str()] = blob;
  });
  for (mlir::DenseResourceElementsAttr attr : resources) {
    mlir::DenseResourceElementsHandle handle = attr.getRawHandle();
    std::string key = handle.getKey().str();
    auto found = blobs.find(key);
    if (mlir::AsmResourceBlob *own = handle.getBlob()) {
      if (found != blobs.end() && own->getData() == found->second->getData())
        fromModel.insert(key);
      continue;
    }
    if (found == blobs.end())
      return mlir::emitError(module.getLoc())
             << "constant '" << key << "' is left out of the IR and is not in "
             << model.getValue() << "; compile again from the model";
    mlir::AsmResourceBlob *blob = found->second;
    handle.getResource()->setBlob(
        mlir::HeapAsmResourceBlob::allocateAndCopyWithAlign(
            blob->getData(), blob->getDataAlignment(), blob->isMutable()));
    fromModel.insert(key);
  }
  return success();
}

} // namespace

std::string mncc::pipeline::phaseIrPath(Phase phase) {
  return "ir/" + std::to_string(phaseNumber(phase)) + "-" +
         getPhaseInfo(phase).name + ".mlir";
}

mlir::LogicalResult
mncc::pipeline::writePhaseArtifacts(Phase phase, mlir::ModuleOp module,
                                    const CompileOptions &options,
                                    CodegenDirTransaction &dir) {
  switch (phase) {
  case Phase::L3:
    return writeL3Artifacts(module, dir);
  case Phase::Emit:
    return writeEmitArtifacts(module, options, dir);
  default:
    return success();
  }
}

CompileResult mncc::pipeline::compileModel(mlir::MLIRContext &context,
                                           const CompileRequest &request) {
  CompileResult result;
  for (const PhaseInfo &info : getPhases())
    result.phases.push_back({info.phase});
  auto state = [&](Phase phase) -> PhaseResult & {
    return result.phases[static_cast<unsigned>(phase)];
  };
  mlir::Location unknown = mlir::UnknownLoc::get(&context);
  const CompileOptions &options = request.options.options;
  result.notImplemented = notImplementedNotes(options);

  Phase start = request.compileFrom.value_or(Phase::Import);
  if (request.compileFrom && *request.compileFrom >= request.compileTo) {
    mlir::emitError(unknown)
        << "nothing to run from --compile-from="
        << getPhaseInfo(*request.compileFrom).name
        << " to --compile-to=" << getPhaseInfo(request.compileTo).name
        << ": the phases run after the first and up to the second";
    return result;
  }
  // out_onnx is the graph of the pfvm phase (or of the import, when the
  // compile stops there): a compile that starts after it has none.
  if (!options.out_onnx.empty() && request.compileFrom &&
      *request.compileFrom > Phase::Pfvm) {
    mlir::emitError(unknown)
        << "out_onnx: this compile starts after the "
        << getPhaseInfo(*request.compileFrom).name
        << " phase, so there is no graph of the pfvm phase to write; give "
           "out_onnx to a compile that runs the pfvm phase, or use "
           "--compile-from=pfvm";
    return result;
  }
  if (request.compileFrom && !request.inputShapes.empty()) {
    mlir::emitError(unknown) << "--input-shape applies to an ONNX model, not "
                                "to IR loaded with --compile-from";
    return result;
  }

  auto transaction = CodegenDirTransaction::begin(request.codegenDir);
  if (!transaction) {
    mlir::emitError(unknown) << "cannot write the codegen_dir: "
                             << llvm::toString(transaction.takeError());
    return result;
  }
  CodegenDirTransaction &dir = **transaction;

  // The model: imported (the import phase), or loaded from a dump.
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::set<std::string> modelResources;
  if (request.compileFrom) {
    std::optional<mlir::TimingScope> timer;
    if (request.timing)
      timer.emplace(request.timing->nest("load " + request.input));
    mlir::ParserConfig config(&context);
    if (request.sourceMgr)
      module = mlir::parseSourceFile<mlir::ModuleOp>(
          request.input, *request.sourceMgr, config);
    else
      module = mlir::parseSourceFile<mlir::ModuleOp>(request.input, config);
    if (!module || mlir::failed(restoreModelResources(*module, modelResources)))
      return result;
  } else {
    std::optional<mlir::TimingScope> timer;
    if (request.timing)
      timer.emplace(request.timing->nest("import"));
    auto begin = std::chrono::steady_clock::now();
    OnnxImportOptions importOptions;
    importOptions.inputShapes = request.inputShapes;
    module = importOnnxFile(request.input, &context, importOptions);
    state(Phase::Import).seconds = secondsSince(begin);
    if (!module) {
      state(Phase::Import).state = PhaseState::Failed;
      result.statusJson = statusJson(result);
      return result;
    }
    state(Phase::Import).state = PhaseState::Ok;
    // Where the graph came from: a runtime verifying a codegen_dir on the
    // host needs the model (manifest.json "model").
    llvm::SmallString<256> absolute(request.input);
    llvm::sys::fs::make_absolute(absolute);
    (*module)->setAttr("mncc.model",
                       mlir::StringAttr::get(&context, absolute.str()));
    modelResources = resourceKeysOf(*module);
    if (mlir::failed(dumpIr(*module, Phase::Import, modelResources, dir)))
      return result;
  }
  result.lastPhase = start;
  bool wroteOnnx = false;
  if (!options.out_onnx.empty() && request.compileFrom == Phase::Pfvm) {
    if (mlir::failed(writeOutOnnx(*module, options, Phase::Pfvm, result)))
      return result;
    wroteOnnx = true;
  }

  Phase last = lastReachablePhase(start, request.compileTo);
  for (unsigned p = static_cast<unsigned>(start) + 1;
       p <= static_cast<unsigned>(last); ++p) {
    Phase phase = static_cast<Phase>(p);
    const char *name = getPhaseInfo(phase).name;
    // A graph the device cannot hold at all runs whole on pfvm:cpu
    // (docs/codegen.md, H4) instead of failing in the graph phase.
    if (phase == Phase::Graph) {
      if (std::optional<std::string> reason = wholeGraphHostReason(*module)) {
        if (mlir::failed(
                writeWholeHostArtifacts(*module, options, *reason, dir)))
          return result;
        result.wholeGraphOnHost = *reason;
        break;
      }
    }
    mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName());
    buildPipeline(pm, options, phase, phase);
    if (request.configurePassManager &&
        mlir::failed(request.configurePassManager(pm)))
      return result;
    std::optional<mlir::TimingScope> timer;
    if (request.timing) {
      timer.emplace(request.timing->nest(name));
      pm.enableTiming(*timer);
    }
    auto begin = std::chrono::steady_clock::now();
    mlir::LogicalResult ran = pm.run(*module);
    state(phase).seconds = secondsSince(begin);
    if (mlir::failed(ran)) {
      state(phase).state = PhaseState::Failed;
      result.statusJson = statusJson(result);
      return result;
    }
    state(phase).state = PhaseState::Ok;
    result.lastPhase = phase;
    // The emit phase's IR is the program text and the manifest again,
    // which program.vsm and manifest.json hold; no phase resumes from it.
    if ((phase != Phase::Emit &&
         mlir::failed(dumpIr(*module, phase, modelResources, dir))) ||
        mlir::failed(writePhaseArtifacts(phase, *module, options, dir)))
      return result;
    if (phase == Phase::Pfvm && !options.out_onnx.empty()) {
      if (mlir::failed(writeOutOnnx(*module, options, phase, result)))
        return result;
      wroteOnnx = true;
    }
  }
  if (!options.out_onnx.empty() && !wroteOnnx &&
      mlir::failed(writeOutOnnx(*module, options, *result.lastPhase, result)))
    return result;

  if (!result.wholeGraphOnHost.empty())
    result.stopReason = result.wholeGraphOnHost +
                        "; the whole graph runs on pfvm:cpu (host.mlir)";
  else if (last != request.compileTo)
    result.stopReason =
        unavailableReason(static_cast<Phase>(static_cast<unsigned>(last) + 1));
  else if (request.compileTo != Phase::Emit)
    result.stopReason =
        std::string("--compile-to=") + getPhaseInfo(request.compileTo).name;
  result.succeeded = true;
  result.statusJson = statusJson(result);

  for (auto [file, contents] : {std::pair<const char *, std::string>{
                                    "option.json", writeOptionJson(options)},
                                {"compile.log", compileLog(request, result)},
                                {"compile_status.json", result.statusJson}}) {
    if (llvm::Error error = dir.writeFile(file, contents)) {
      mlir::emitError(unknown) << llvm::toString(std::move(error));
      result.succeeded = false;
      return result;
    }
  }
  if (llvm::Error error = dir.commit()) {
    mlir::emitError(unknown)
        << "cannot write the codegen_dir " << request.codegenDir << ": "
        << llvm::toString(std::move(error));
    result.succeeded = false;
  }
  return result;
}
