//===- CompileCommand.cpp - mncc compile: a model into a codegen_dir
//-------===//
//
//   mncc compile MODEL -o CODEGEN_DIR [--option_json=O1|FILE]
//                [--float_dtype=float ...] [--input-shape NAME:D0,...]
//                [--compile-to=PHASE] [--compile-from=PHASE]
//                [--mlir-timing] [--mlir-print-ir-after-all ...]
//
// The compile options are spelled as in option_json's "args", so an "args"
// list pastes onto the command line. The environment is read here, once.
// The compiler itself is mncc::pipeline::compileModel.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "mncc/Registration.h"
#include "mncc/onnx/Import.h"
#include "mncc/pipeline/Compile.h"
#include "mncc/runtime/Runtime.h"
#include "mncc/support/Diagnostics.h"
#include "mncc/support/ToolOptions.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SourceMgr.h"

#include <deque>
#include <memory>

extern char **environ;

using namespace mncc::pipeline;
using namespace mncc::tool;
namespace cl = llvm::cl;

cl::SubCommand mncc::tool::compileCommand(
    "compile", "Compile an ONNX model into a codegen_dir (program.vsm, "
               "manifest.json, the IR of each phase, option.json, "
               "compile.log, compile_status.json)");

namespace {

cl::opt<std::string> compileInput(cl::Positional, cl::Required,
                                  cl::desc("<model.onnx | phase.mlir>"),
                                  cl::sub(compileCommand), cl::cat(category()));
cl::opt<std::string> compileOutput("o", cl::Required,
                                   cl::desc("The codegen_dir to write"),
                                   cl::value_desc("codegen_dir"),
                                   cl::sub(compileCommand),
                                   cl::cat(category()));
cl::list<std::string> compileInputShapes(
    "input-shape",
    cl::desc("Static shape of a graph input, NAME:D0,D1,... (repeatable)"),
    cl::sub(compileCommand), cl::cat(category()));
cl::opt<std::string> compileTo(
    "compile-to",
    cl::desc("Stop after this phase (import, pfvm, graph, time-slice, l3, "
             "emit; default emit)"),
    cl::value_desc("phase"), cl::sub(compileCommand), cl::cat(category()));
cl::opt<std::string>
    compileFrom("compile-from",
                cl::desc("Start after this phase; the input is the "
                         "ir/<N>-<phase>.mlir a compile dumped at its end"),
                cl::value_desc("phase"), cl::sub(compileCommand),
                cl::cat(category()));
// Everything else that looks like an option, so that a misspelt compile
// option gets mncc's error, which says where it came from.
cl::list<std::string> compileUnknown(cl::Sink, cl::sub(compileCommand));

cl::OptionCategory &mlirCategory() {
  static cl::OptionCategory category("MLIR pass manager options");
  return category;
}

/// The flags of the option table's command-line options, by OptionId.
std::vector<std::unique_ptr<cl::opt<std::string>>> &tableFlags() {
  static std::vector<std::unique_ptr<cl::opt<std::string>>> flags;
  return flags;
}

std::string helpText(const OptionInfo &info) {
  static const CompileOptions defaults;
  std::string text = info.description;
  std::string value = defaults.getText(info.id);
  text += value.empty() ? std::string(" (no default") : " (default " + value;
  if (info.status == OptionStatus::NotImplemented)
    text += "; accepted, not implemented: " + issueText(info.issue);
  return text + ")";
}

std::string valueText(const OptionInfo &info) {
  if (info.type != OptionType::Enum)
    return optionTypeName(info.type).str();
  std::vector<std::string> names;
  for (const EnumValueInfo &value : info.values)
    names.push_back(value.spelling);
  return llvm::join(names, "|");
}

std::optional<Phase> phaseFlag(const cl::opt<std::string> &flag,
                               const char *name) {
  std::optional<Phase> phase = parsePhase(flag);
  if (!phase)
    llvm::errs() << "mncc: error: unknown phase '" << flag << "' for --" << name
                 << "; the phases are " << phaseNames() << "\n";
  return phase;
}

} // namespace

void mncc::tool::registerCompileFlags() {
  // cl keeps StringRefs to the texts.
  static std::deque<std::string> texts;
  for (const OptionInfo &info : getOptionTable()) {
    if (info.kind != OptionKind::Arg)
      continue;
    const std::string &help = texts.emplace_back(helpText(info));
    const std::string &value = texts.emplace_back(valueText(info));
    // `mncc run` compiles a model it is given for a device first, with the
    // same options.
    tableFlags().push_back(std::make_unique<cl::opt<std::string>>(
        llvm::StringRef(info.name), cl::desc(help), cl::value_desc(value),
        cl::sub(compileCommand), cl::sub(runCommand), cl::cat(category())));
  }
  // --mlir-print-ir-after-all, --mlir-timing and the rest, on compile only.
  llvm::StringSet<> before = mncc::registeredOptionNames();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  mncc::moveNewOptionsToSubCommand(before, compileCommand, mlirCategory());
}

llvm::Expected<ResolvedOptions>
mncc::tool::resolveCommandLineOptions(const char *argv0,
                                      llvm::ArrayRef<std::string> unknown) {
  // Options given on the command line, in table order; unknown ones first,
  // so that resolution reports them.
  OptionRequest request;
  for (llvm::StringRef option : unknown) {
    auto [name, value] = option.ltrim('-').split('=');
    request.direct.emplace_back(name.str(), value.str());
  }
  size_t flag = 0;
  for (const OptionInfo &info : getOptionTable()) {
    if (info.kind != OptionKind::Arg)
      continue;
    const cl::opt<std::string> &option = *tableFlags()[flag++];
    if (option.getNumOccurrences())
      request.direct.emplace_back(info.name, option.getValue());
  }
  request.environment = collectOptionEnvironment(environ);
  request.presetDir = presetDirectoryFor(
      llvm::sys::fs::getMainExecutable(argv0, (void *)&runCompile));
  return resolveCompileOptions(request);
}

int mncc::tool::runCompile(const char *argv0) {
  std::vector<std::string> unknown(compileUnknown.begin(),
                                   compileUnknown.end());
  auto resolved = resolveCommandLineOptions(argv0, unknown);
  if (!resolved) {
    llvm::errs() << "mncc: error: " << llvm::toString(resolved.takeError())
                 << "\n";
    return 1;
  }

  CompileRequest compile;
  compile.input = compileInput;
  compile.codegenDir = compileOutput;
  compile.options = std::move(*resolved);
  for (const std::string &spec : compileInputShapes) {
    auto shape = mncc::parseInputShape(spec);
    if (!shape) {
      llvm::errs() << "mncc: error: " << llvm::toString(shape.takeError())
                   << "\n";
      return 1;
    }
    compile.inputShapes.push_back(std::move(*shape));
  }
  if (compileTo.getNumOccurrences()) {
    std::optional<Phase> phase = phaseFlag(compileTo, "compile-to");
    if (!phase)
      return 1;
    compile.compileTo = *phase;
  }
  if (compileFrom.getNumOccurrences()) {
    std::optional<Phase> phase = phaseFlag(compileFrom, "compile-from");
    if (!phase)
      return 1;
    compile.compileFrom = *phase;
  }
  compile.configurePassManager = [](mlir::PassManager &pm) {
    return mlir::applyPassManagerCLOptions(pm);
  };

  mlir::DialectRegistry registry;
  mncc::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  // Diagnostics name the node; a dump of the op adds nothing for a user.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  mncc::ToolDiagnosticHandler diagnostics(sourceMgr, &context);
  compile.sourceMgr = &sourceMgr;

  mlir::DefaultTimingManager timing;
  mlir::applyDefaultTimingManagerCLOptions(timing);
  mlir::TimingScope root = timing.getRootScope();
  if (timing.isEnabled())
    compile.timing = &root;

  CompileResult result = compileModel(context, compile);
  root.stop();
  if (!result.succeeded) {
    for (const PhaseResult &phase : result.phases)
      if (phase.state == PhaseState::Failed)
        llvm::errs() << "mncc: error: the " << getPhaseInfo(phase.phase).name
                     << " phase failed; " << compileOutput
                     << " was left as it was\n";
    return 1;
  }
  std::vector<std::string> ran;
  for (const PhaseResult &phase : result.phases)
    if (phase.state == PhaseState::Ok)
      ran.push_back(getPhaseInfo(phase.phase).name);
  llvm::outs() << "mncc: wrote " << compileOutput << " ("
               << (ran.empty() ? std::string("no phase run")
                               : "phases " + llvm::join(ran, ", "))
               << ")\n";
  if (!result.stopReason.empty())
    llvm::outs() << "mncc: stopped after "
                 << getPhaseInfo(*result.lastPhase).name << ": "
                 << result.stopReason << "\n";
  std::vector<std::string> hosted =
      mncc::runtime::hostNodesOfCodegenDir(compileOutput);
  if (!hosted.empty())
    llvm::outs() << "mncc: " << hosted.size()
                 << (hosted.size() == 1 ? " node runs" : " nodes run")
                 << " on the host (" << compileOutput
                 << "/partitions.json says why): " << llvm::join(hosted, ", ")
                 << "\n";
  llvm::outs().flush(); // before the note, when both go to one pipe
  if (!result.notImplemented.empty())
    llvm::errs() << "mncc: note: " << result.notImplemented.size()
                 << (result.notImplemented.size() == 1 ? " option is"
                                                       : " options are")
                 << " accepted but not implemented yet (listed in "
                 << compileOutput << "/compile.log)\n";
  return 0;
}
