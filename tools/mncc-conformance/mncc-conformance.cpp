//===- mncc-conformance.cpp - ONNX test data as mncc's conformance suite --===//
//
//   mncc-conformance --stage=frontend|run|device [--device=pfvm:cpu|emu2]
//                    --suite=DIR... [--report=FILE.json] [--markdown=FILE.md]
//                    [--baseline=FILE] [--operators=Gemm,Conv,...]
//
// Every case is a folder with a model.onnx and test_data_set_*/ folders of
// input_*.pb and output_*.pb (the layout of ONNX's backend test data).
// - frontend: each model imports, verifies, exports to a model the ONNX
//   checker accepts, and imports again to the same IR.
// - run: each model runs on the device, and every output matches the
//   stored one within ONNX's backend tolerances (rtol 1e-3, atol 1e-7;
//   models with random operators compare dtype and shape only).
// - device: each model goes through the whole compiler (mncc compile, with
//   --float_dtype) and runs on --device=emu2 from random-filled memory; the
//   outputs are compared as for run. A model with a node no device kernel
//   takes is "unsupported", with the node's reason.
// Each case ends as pass, fail, unsupported (no kernel for an operator) or
// skip, each with its reason; the last line is "N passed, N failed, N
// skipped" (unsupported cases count as skipped). With --baseline, the run
// fails if fewer cases pass than the number in that file; a second number
// there is the least that must pass with host fallback included.
//
//===----------------------------------------------------------------------===//

#include "mncc/emu/Machine.h"
#include "mncc/Registration.h"
#include "mncc/Version.h"
#include "mncc/onnx/TensorIo.h"
#include "mncc/pipeline/Compile.h"
#include "mncc/runtime/Runtime.h"
#include "mncc/dialects/onnx/OnnxOps.h"
#include "mncc/interpreter/OnnxInterpreter.h"
#include "mncc/interpreter/ValueFiles.h"
#include "mncc/onnx/Export.h"
#include "mncc/onnx/Import.h"
#include "mncc/reference/Threads.h"
#include "mncc/support/ToolOptions.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("mncc-conformance options");

enum class Stage { Frontend, Run, Device };
cl::opt<Stage> stage(
    "stage", cl::desc("What to check"),
    cl::values(clEnumValN(Stage::Frontend, "frontend",
                          "import, verify, export, check, re-import"),
               clEnumValN(Stage::Run, "run",
                          "run on --device and compare the outputs"),
               clEnumValN(Stage::Device, "device",
                          "compile for MN-Core 2, run on --device=emu2 and "
                          "compare the outputs")),
    cl::init(Stage::Frontend), cl::cat(category));
cl::opt<std::string> floatDtype(
    "float_dtype",
    cl::desc("--stage=device: the float_dtype to compile with (default "
             "float: ONNX's float32 semantics, which the stored outputs "
             "follow)"),
    cl::init("float"), cl::cat(category));
cl::list<std::string> operatorList(
    "operators",
    cl::desc("Only cases whose operators are all in this list "
             "(comma-separated; Constant and Identity always allowed)"),
    cl::CommaSeparated, cl::cat(category));
cl::opt<std::string> device("device", cl::desc("Device for --stage=run"),
                            cl::init("pfvm:cpu"), cl::cat(category));
cl::opt<std::string> baselinePath(
    "baseline",
    cl::desc("File holding the least number of cases that must pass (and, "
             "optionally, a second number: the least that must pass with "
             "host fallback included)"),
    cl::cat(category));
cl::opt<double> rtol("rtol", cl::desc("Relative tolerance"), cl::init(1e-3),
                     cl::cat(category));
cl::opt<double> atol("atol", cl::desc("Absolute tolerance"), cl::init(1e-7),
                     cl::cat(category));
cl::list<std::string> suites("suite",
                             cl::desc("Folder of cases, or of suites of cases"),
                             cl::OneOrMore, cl::cat(category));
cl::opt<std::string> reportPath("report", cl::desc("JSON report to write"),
                                cl::cat(category));
cl::opt<std::string> markdownPath(
    "markdown", cl::desc("Markdown summary to write (docs/supported-ops.md)"),
    cl::cat(category));
cl::opt<std::string> filter("filter",
                            cl::desc("Only cases whose path contains this"),
                            cl::cat(category));
cl::opt<bool> runPfvm(
    "pfvm",
    cl::desc("--stage=run: put each model through the compiler's pfvm "
             "phase (simplify and fusion, default options) before it runs"),
    cl::init(false), cl::cat(category));

struct CaseResult {
  std::string suite;
  std::string name;
  std::string status; // pass, fail, unsupported, skip
  std::string reason;
  /// The operators the model uses ("Conv", "ai.onnx.ml.LinearClassifier").
  std::set<std::string> operators;
};

/// Operators whose outputs are random: only dtype and shape are compared.
const std::set<std::string> kRandomOperators = {
    "RandomNormal",     "RandomUniform", "RandomNormalLike",
    "RandomUniformLike", "Bernoulli",    "Multinomial"};

std::set<std::string> operatorsOf(ModuleOp module, bool &random) {
  std::set<std::string> operators;
  random = false;
  module.walk([&](Operation *op) {
    if (!op->getDialect() || op->getDialect()->getNamespace() != "onnx" ||
        llvm::isa<mncc::onnx::InitializerOp, mncc::onnx::NoneOp,
                  mncc::onnx::YieldOp>(op))
      return;
    std::string name = op->getName().stripDialect().str();
    if (auto custom = llvm::dyn_cast<mncc::onnx::CustomOp>(op))
      name = (custom.getDomain() + "." + custom.getOpType()).str();
    // Dropout in training mode (a third input) draws a random mask.
    random |= kRandomOperators.count(name) ||
              (name == "Dropout" && op->getNumOperands() > 2);
    operators.insert(name);
  });
  return operators;
}

/// Collects the diagnostics of one case as its failure reason.
struct Capture {
  explicit Capture(MLIRContext &context)
      : handler(&context, [this](Diagnostic &diagnostic) {
          if (diagnostic.getSeverity() == DiagnosticSeverity::Error &&
              text.empty())
            text = diagnostic.str();
          return success();
        }) {}
  std::string text;
  ScopedDiagnosticHandler handler;
};

std::string print(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

CaseResult runFrontend(const std::string &suite, const std::string &caseDir,
                       const DialectRegistry &registry) {
  CaseResult result{suite, llvm::sys::path::filename(caseDir).str(), "fail",
                    ""};
  std::string model = caseDir + "/model.onnx";
  MLIRContext context(registry);
  Capture capture(context);
  OwningOpRef<ModuleOp> first = mncc::importOnnxFile(model, &context);
  if (!first) {
    result.reason = "import: " + capture.text;
    return result;
  }
  bool random = false;
  result.operators = operatorsOf(*first, random);
  std::string bytes;
  {
    llvm::raw_string_ostream os(bytes);
    if (failed(mncc::exportOnnx(*first, os))) {
      result.reason = "export: " + capture.text;
      return result;
    }
  }
  if (std::string problem = mncc::checkOnnxBytes(bytes); !problem.empty()) {
    result.reason = "the exported model fails the ONNX checker: " + problem;
    return result;
  }
  llvm::SmallString<128> exported;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("mncc-conformance", "onnx", fd,
                                         exported)) {
    result.reason = "cannot create a temporary file";
    return result;
  }
  llvm::FileRemover remover(exported);
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << bytes;
  }
  MLIRContext secondContext(registry);
  Capture secondCapture(secondContext);
  OwningOpRef<ModuleOp> second =
      mncc::importOnnxFile(exported, &secondContext);
  if (!second) {
    result.reason = "re-import: " + secondCapture.text;
    return result;
  }
  if (print(*first) != print(*second)) {
    result.reason = "import, export, import does not give the same IR";
    return result;
  }
  result.status = "pass";
  return result;
}

std::vector<std::string> testDataSets(const std::string &caseDir) {
  std::vector<std::string> sets;
  std::error_code error;
  for (llvm::sys::fs::directory_iterator it(caseDir, error), end;
       it != end && !error; it.increment(error))
    if (llvm::sys::path::filename(it->path()).starts_with("test_data_set_"))
      sets.push_back(it->path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

CaseResult runOnDevice(const std::string &suite, const std::string &caseDir,
                       const DialectRegistry &registry) {
  CaseResult result{suite, llvm::sys::path::filename(caseDir).str(), "fail",
                    "", {}};
  MLIRContext context(registry);
  Capture capture(context);
  OwningOpRef<ModuleOp> module =
      mncc::importOnnxFile(caseDir + "/model.onnx", &context);
  if (!module) {
    result.reason = "import: " + capture.text;
    return result;
  }
  bool random = false;
  result.operators = operatorsOf(*module, random);
  if (runPfvm) {
    PassManager pm(&context, ModuleOp::getOperationName());
    mncc::pipeline::buildPipeline(pm, mncc::pipeline::CompileOptions(),
                                  mncc::pipeline::Phase::Pfvm,
                                  mncc::pipeline::Phase::Pfvm);
    if (failed(pm.run(*module))) {
      result.reason = "pfvm phase: " + capture.text;
      return result;
    }
  }
  std::vector<std::string> unsupported;
  auto functions = module->getOps<func::FuncOp>();
  auto program =
      mncc::OnnxProgram::prepare(*functions.begin(), &unsupported);
  if (failed(program)) {
    if (!unsupported.empty()) {
      std::sort(unsupported.begin(), unsupported.end());
      unsupported.erase(std::unique(unsupported.begin(), unsupported.end()),
                        unsupported.end());
      result.status = "unsupported";
      result.reason = "no " + device + " kernel for " +
                      llvm::join(unsupported, ", ");
    } else {
      result.reason = "prepare: " + capture.text;
    }
    return result;
  }
  std::vector<std::string> sets = testDataSets(caseDir);
  if (sets.empty()) {
    result.status = "skip";
    result.reason = "the case has no test_data_set";
    return result;
  }
  const auto &inputs = (*program)->inputs();
  const auto &outputs = (*program)->outputs();
  for (const std::string &set : sets) {
    std::string setName = llvm::sys::path::filename(set).str();
    std::vector<mncc::reference::Value> inputValues, outputValues;
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto value = mncc::readValueFile(
          set + "/input_" + std::to_string(i) + ".pb", inputs[i].type);
      if (!value) {
        result.reason = setName + ": " + llvm::toString(value.takeError());
        return result;
      }
      inputValues.push_back(std::move(*value));
    }
    mncc::reference::Status status =
        (*program)->run(inputValues, outputValues);
    if (!status.ok()) {
      result.reason = setName + ": " + status.message();
      return result;
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      auto expected = mncc::readValueFile(
          set + "/output_" + std::to_string(i) + ".pb", outputs[i].type);
      if (!expected) {
        result.reason = setName + ": " + llvm::toString(expected.takeError());
        return result;
      }
      std::string problem =
          mncc::compareValues(outputValues[i], *expected, rtol, atol, random);
      if (!problem.empty()) {
        result.reason =
            setName + ": output '" + outputs[i].name + "': " + problem;
        return result;
      }
    }
  }
  result.status = "pass";
  if (random)
    result.reason = "random operator: dtype and shape compared";
  return result;
}

/// --stage=device: the model through the whole compiler, then on emu2.
CaseResult runThroughCompiler(const std::string &suite,
                              const std::string &caseDir,
                              const DialectRegistry &registry) {
  CaseResult result{suite, llvm::sys::path::filename(caseDir).str(), "fail",
                    "", {}};
  MLIRContext context(registry);
  Capture capture(context);
  OwningOpRef<ModuleOp> module =
      mncc::importOnnxFile(caseDir + "/model.onnx", &context);
  if (!module) {
    result.reason = "import: " + capture.text;
    return result;
  }
  bool random = false;
  result.operators = operatorsOf(*module, random);
  std::vector<std::string> sets = testDataSets(caseDir);
  if (sets.empty()) {
    result.status = "skip";
    result.reason = "the case has no test_data_set";
    return result;
  }
  llvm::SmallString<128> scratch;
  if (llvm::sys::fs::createUniqueDirectory("mncc-conformance", scratch)) {
    result.reason = "cannot create a temporary folder";
    return result;
  }
  auto cleanup = llvm::make_scope_exit(
      [&] { llvm::sys::fs::remove_directories(scratch); });
  mncc::pipeline::OptionRequest optionRequest;
  optionRequest.direct.emplace_back("float_dtype", floatDtype);
  auto resolved = mncc::pipeline::resolveCompileOptions(optionRequest);
  if (!resolved) {
    result.reason = llvm::toString(resolved.takeError());
    return result;
  }
  mncc::pipeline::CompileRequest compile;
  compile.input = caseDir + "/model.onnx";
  compile.codegenDir = std::string(scratch) + "/codegen";
  compile.options = std::move(*resolved);
  mncc::pipeline::CompileResult compiled =
      mncc::pipeline::compileModel(context, compile);
  if (!compiled.succeeded ||
      (compiled.lastPhase != mncc::pipeline::Phase::Emit &&
       compiled.wholeGraphOnHost.empty())) {
    bool noKernel = capture.text.find("has no device kernel") !=
                        std::string::npos ||
                    capture.text.find("not supported on the device") !=
                        std::string::npos;
    result.status = noKernel ? "unsupported" : "fail";
    result.reason = "compile: " + (capture.text.empty() ? compiled.stopReason
                                                        : capture.text);
    return result;
  }
  std::string error;
  auto executable = mncc::runtime::loadCodegenDir(compile.codegenDir, error);
  if (!executable) {
    result.reason = error;
    return result;
  }
  const auto &inputs = executable->inputs();
  const auto &outputs = executable->outputs();
  // A sequence or optional (a whole graph on the host) names its type as
  // text: the test data's protobuf kind follows from it.
  auto typeOf = [&](const mncc::runtime::TensorInfo &info) -> Type {
    if (!info.valueType.empty())
      if (Type parsed = mlir::parseType(info.valueType, &context))
        return parsed;
    return RankedTensorType::get(
        info.shape, mncc::elementTypeOfOnnx(int32_t(info.type), &context));
  };
  for (const std::string &set : sets) {
    std::string setName = llvm::sys::path::filename(set).str();
    std::vector<mncc::reference::Value> inputValues, outputValues;
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto value = mncc::readValueFile(
          set + "/input_" + std::to_string(i) + ".pb", typeOf(inputs[i]));
      if (!value) {
        result.reason = setName + ": " + llvm::toString(value.takeError());
        return result;
      }
      inputValues.push_back(std::move(*value));
    }
    mncc::runtime::RunOptions options;
    if (!executable->runValues(inputValues, outputValues, options, nullptr,
                               error)) {
      result.reason = setName + ": emu2: " + error;
      return result;
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      auto expected = mncc::readValueFile(
          set + "/output_" + std::to_string(i) + ".pb", typeOf(outputs[i]));
      if (!expected) {
        result.reason = setName + ": " + llvm::toString(expected.takeError());
        return result;
      }
      std::string problem = mncc::compareValues(outputValues[i], *expected,
                                                rtol, atol, random);
      if (!problem.empty()) {
        result.reason =
            setName + ": output '" + outputs[i].name + "': " + problem;
        return result;
      }
    }
  }
  // A case passes on the device when every node ran there; otherwise it
  // passed with host fallback (docs/codegen.md, "Host partitions").
  // A graph run whole on pfvm:cpu (H4) passed on the host, even when it
  // lists no node (a lone Identity of a sequence).
  if (!compiled.wholeGraphOnHost.empty()) {
    result.status = "host";
    result.reason = "passed with host fallback: the whole graph on pfvm:cpu (" +
                    compiled.wholeGraphOnHost + ")";
    return result;
  }
  std::vector<std::string> hosted =
      mncc::runtime::hostNodesOfCodegenDir(compile.codegenDir);
  if (!hosted.empty()) {
    result.status = "host";
    result.reason = "passed with host fallback: " + llvm::join(hosted, ", ");
    return result;
  }
  result.status = "pass";
  return result;
}

/// The case folders under `root`, each with its suite: the name of the
/// folder that holds the cases.
void findCases(const std::string &root,
               std::vector<std::pair<std::string, std::string>> &cases) {
  std::error_code error;
  std::vector<std::string> children;
  for (llvm::sys::fs::directory_iterator it(root, error), end;
       it != end && !error; it.increment(error))
    if (llvm::sys::fs::is_directory(it->path()))
      children.push_back(it->path());
  std::sort(children.begin(), children.end());
  std::string suite = llvm::sys::path::filename(root).str();
  for (const std::string &child : children) {
    if (llvm::sys::fs::exists(child + "/model.onnx"))
      cases.emplace_back(suite, child);
    else
      findCases(child, cases);
  }
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mncc::setToolVersionPrinter();
  mncc::hideUnrelatedOptions({&category});
  if (!mncc::parseToolCommandLine(
          argc, argv, "mncc-conformance: ONNX test data through mncc\n"))
    return 1;
  // mncc's own run-time variable for pfvm:cpu, read once, here.
  mncc::reference::setNumThreads(mncc::reference::threadCountFromText(
      std::getenv("MNCC_REFERENCE_THREADS")));
  mncc::emu::setDefaultStepThreads(
      mncc::emu::stepThreadsFromText(std::getenv("MNCC_EMU_THREADS")));
  DialectRegistry registry;
  mncc::registerAllDialects(registry);

  std::vector<std::pair<std::string, std::string>> cases;
  for (const std::string &root : suites) {
    if (!llvm::sys::fs::is_directory(root)) {
      llvm::errs() << "mncc-conformance: error: suite '" << root
                   << "' is not a folder\n";
      return 1;
    }
    size_t before = cases.size();
    findCases(root, cases);
    if (cases.size() == before) {
      llvm::errs() << "mncc-conformance: error: suite '" << root
                   << "' holds no case (no model.onnx below it)\n";
      return 1;
    }
  }

  std::vector<CaseResult> results;
  for (const auto &[suite, caseDir] : cases) {
    if (!filter.empty() && caseDir.find(filter) == std::string::npos)
      continue;
    if (stage == Stage::Device && device != "emu2") {
      llvm::errs() << "mncc-conformance: error: --stage=device runs on "
                      "--device=emu2\n";
      return 1;
    }
    CaseResult outcome = stage == Stage::Run
                            ? runOnDevice(suite, caseDir, registry)
                        : stage == Stage::Device
                            ? runThroughCompiler(suite, caseDir, registry)
                            : runFrontend(suite, caseDir, registry);
    if (!operatorList.empty()) {
      std::set<std::string> allowed(operatorList.begin(), operatorList.end());
      allowed.insert({"Constant", "Identity"});
      if (!std::includes(allowed.begin(), allowed.end(),
                         outcome.operators.begin(), outcome.operators.end()))
        continue;
    }
    results.push_back(std::move(outcome));
    const CaseResult &result = results.back();
    if (result.status != "pass" && result.status != "unsupported" &&
        result.status != "host")
      llvm::outs() << result.status << ": " << result.suite << "/"
                   << result.name << ": " << result.reason << "\n";
  }

  std::map<std::string, std::map<std::string, int>> perSuite;
  std::map<std::string, int> totals;
  for (const CaseResult &result : results) {
    ++perSuite[result.suite][result.status];
    ++totals[result.status];
  }
  for (const auto &[suite, counts] : perSuite) {
    int all = 0;
    for (const auto &entry : counts)
      all += entry.second;
    llvm::outs() << suite << ": " << (counts.count("pass") ? counts.at("pass") : 0) << "/"
                 << all << " pass";
    if (counts.count("host"))
      llvm::outs() << ", " << counts.at("host") << " more with host fallback";
    llvm::outs() << "\n";
  }

  std::string stageName =
      stage == Stage::Run
          ? "run on " + device + (runPfvm ? " after the pfvm phase" : "")
      : stage == Stage::Device ? "compile for MN-Core 2 (float_dtype " +
                                     floatDtype + "), run on " + device
                               : std::string("frontend");
  if (!reportPath.empty()) {
    std::error_code error;
    llvm::raw_fd_ostream os(reportPath, error);
    if (error) {
      llvm::errs() << "mncc-conformance: error: " << reportPath << ": "
                   << error.message() << "\n";
      return 1;
    }
    llvm::json::OStream json(os, 2);
    json.object([&] {
      // Which mncc produced the report, so reports can be compared.
      json.attribute("mncc_version", MNCC_VERSION_STRING);
      json.attribute("stage", stageName);
      json.attributeObject("totals", [&] {
        for (const char *status : {"pass", "host", "fail", "unsupported", "skip"})
          json.attribute(status, totals[status]);
      });
      json.attributeArray("cases", [&] {
        for (const CaseResult &result : results)
          json.object([&] {
            json.attribute("suite", result.suite);
            json.attribute("case", result.name);
            json.attribute("status", result.status);
            if (!result.reason.empty())
              json.attribute("reason", result.reason);
            json.attributeArray("operators", [&] {
              for (const std::string &op : result.operators)
                json.value(op);
            });
          });
      });
    });
  }
  if (!markdownPath.empty()) {
    std::error_code error;
    llvm::raw_fd_ostream os(markdownPath, error);
    if (error) {
      llvm::errs() << "mncc-conformance: error: " << markdownPath << ": "
                   << error.message() << "\n";
      return 1;
    }
    auto count = [](const std::map<std::string, int> &counts,
                    const char *status) {
      auto found = counts.find(status);
      return found == counts.end() ? 0 : found->second;
    };
    os << "## " << (stage == Stage::Run
                        ? device + ": run every test data set and compare"
                    : stage == Stage::Device
                        ? "MN-Core 2 on " + device +
                              ": compile every model (float_dtype " +
                              floatDtype +
                              "), run every test data set and compare"
                        : std::string("Front end: import, verify, export, "
                                      "ONNX checker, re-import"))
       << "\n\n| suite | pass | pass with host fallback | fail | unsupported | skip |\n"
       << "| --- | --- | --- | --- | --- | --- |\n";
    for (const auto &[suite, counts] : perSuite)
      os << "| " << suite << " | " << count(counts, "pass") << " | "
         << count(counts, "host") << " | " << count(counts, "fail") << " | "
         << count(counts, "unsupported") << " | " << count(counts, "skip")
         << " |\n";
    if (stage != Stage::Frontend) {
      // An operator passes in a case when the whole case passes.
      std::map<std::string, std::map<std::string, int>> perOperator;
      for (const CaseResult &result : results)
        for (const std::string &op : result.operators)
          ++perOperator[op][result.status];
      os << "\nPer operator (cases that use it):\n\n"
         << "| operator | pass | pass with host fallback | fail | unsupported |\n"
         << "| --- | --- | --- | --- | --- |\n";
      for (const auto &[op, counts] : perOperator)
        os << "| " << op << " | " << count(counts, "pass") << " | "
           << count(counts, "host") << " | " << count(counts, "fail") << " | "
           << count(counts, "unsupported") << " |\n";
    }
    os << "\n";
    bool any = false;
    for (const CaseResult &result : results)
      if (result.status != "pass") {
        if (!any)
          os << "Cases that do not pass, and why:\n\n";
        any = true;
        os << "- `" << result.suite << "/" << result.name << "` ("
           << result.status << "): " << result.reason << "\n";
      }
    if (!any)
      os << "Every case passes.\n";
    os << "\n";
  }
  llvm::outs() << totals["pass"] << " passed, ";
  if (totals["host"])
    llvm::outs() << totals["host"] << " passed with host fallback, ";
  llvm::outs() << totals["fail"] << " failed, "
               << totals["skip"] + totals["unsupported"] << " skipped\n";
  if (!baselinePath.empty()) {
    std::ifstream file(baselinePath);
    long long baseline = -1;
    if (!(file >> baseline) || baseline < 0) {
      llvm::errs() << "mncc-conformance: error: " << baselinePath
                   << ": expected a number of passing cases\n";
      return 1;
    }
    if (totals["pass"] < baseline) {
      llvm::errs() << "mncc-conformance: error: " << totals["pass"]
                   << " cases pass, fewer than the baseline of " << baseline
                   << " (" << baselinePath << ")\n";
      return 1;
    }
    long long withHost = -1;
    if (file >> withHost) {
      if (withHost < baseline) {
        llvm::errs() << "mncc-conformance: error: " << baselinePath
                     << ": the count with host fallback (" << withHost
                     << ") is below the device count (" << baseline << ")\n";
        return 1;
      }
      long long passed = totals["pass"] + totals["host"];
      if (passed < withHost) {
        llvm::errs() << "mncc-conformance: error: " << passed
                     << " cases pass with host fallback, fewer than the "
                        "baseline of "
                     << withHost << " (" << baselinePath << ")\n";
        return 1;
      }
    } else if (!file.eof()) {
      llvm::errs() << "mncc-conformance: error: " << baselinePath
                   << ": expected a second number (cases passing with host "
                      "fallback) or nothing after the first\n";
      return 1;
    }
    return 0;
  }
  return totals["fail"] ? 1 : 0;
}
