//===- Run.cpp - mncc run: a model on a device
//-----------------------------===//
//
//   mncc run --device=pfvm:cpu model.onnx --input NAME=FILE... --output-dir DIR
//            [--random-inputs SEED] [--repeat N] [--profile]
//   mncc run --device=emu2 (model.onnx | CODEGEN_DIR) [--codegen-dir DIR]
//            [compile options] [--verify] [--profile] [--fill-random=SEED]
//
// pfvm:cpu and emu2 are entries of the runtime's device list
// (mncc/runtime/Runtime.h); emu2 runs a codegen_dir, compiling a model it is
// given first.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "mncc/emu/Machine.h"
#include "mncc/Registration.h"
#include "mncc/interpreter/OnnxInterpreter.h"
#include "mncc/interpreter/ValueFiles.h"
#include "mncc/onnx/Import.h"
#include "mncc/onnx/TensorIo.h"
#include "mncc/reference/Broadcast.h"
#include "mncc/reference/Threads.h"
#include "mncc/pipeline/Compile.h"
#include "mncc/runtime/Runtime.h"
#include "mncc/support/Diagnostics.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include "llvm/ADT/ScopeExit.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>

using namespace mlir;
using namespace mncc::tool;
namespace cl = llvm::cl;

cl::SubCommand mncc::tool::runCommand(
    "run", "Run an ONNX model on a device and write its outputs (.npy and "
           ".pb)");

namespace {

cl::opt<std::string> runDevice(
    "device",
    cl::desc("Device: pfvm:cpu (the host reference executor) or emu2 "
             "(MN-Core 2 on the emulator)"),
    cl::init("pfvm:cpu"), cl::sub(runCommand), cl::cat(category()));
cl::opt<std::string> runModelFile(cl::Positional, cl::Required,
                                  cl::desc("<model.onnx | codegen_dir>"),
                                  cl::sub(runCommand), cl::cat(category()));
cl::list<std::string> runInputShapes(
    "input-shape",
    cl::desc("Static shape of a graph input, NAME:D0,D1,... (repeatable)"),
    cl::sub(runCommand), cl::cat(category()));
cl::opt<std::string> runCodegenDir(
    "codegen-dir",
    cl::desc("emu2: keep the codegen_dir of the model's compile here "
             "(default: a temporary folder, removed after the run)"),
    cl::sub(runCommand), cl::cat(category()));
cl::opt<bool> runVerify(
    "verify",
    cl::desc("emu2: run pfvm:cpu on the same inputs and compare every "
             "output within the float_dtype's tolerance (exit status 1 "
             "when one fails)"),
    cl::init(false), cl::sub(runCommand), cl::cat(category()));
cl::opt<uint64_t> runFillRandom(
    "fill-random",
    cl::desc("emu2: the emulated memory starts as random bytes from this "
             "seed, as gpfn3-smi clear leaves a board (0: zeros; default 1)"),
    cl::init(1), cl::sub(runCommand), cl::cat(category()));
cl::opt<bool> runAllGroups(
    "emu-all-groups",
    cl::desc("emu2: run every group's PE steps, also in the kernels whose "
             "transfers leave a group out (skipped by default: the results "
             "are the same)"),
    cl::init(false), cl::sub(runCommand), cl::cat(category()));
cl::list<std::string>
    runInputs("input",
              cl::desc("A graph input, NAME=FILE (.npy or .pb; repeatable)"),
              cl::sub(runCommand), cl::cat(category()));
cl::opt<int64_t> runRandomInputs(
    "random-inputs",
    cl::desc("Fill every input not given with --input from this seed "
             "(floats uniform in [-1, 1), integers in [0, 10), booleans); "
             "the input shapes must be static"),
    cl::init(-1), cl::sub(runCommand), cl::cat(category()));
cl::opt<unsigned> runRepeat(
    "repeat",
    cl::desc("Run N more times after the first and print the median time "
             "(threads: the MNCC_REFERENCE_THREADS environment variable, "
             "default 2)"),
    cl::init(0), cl::sub(runCommand), cl::cat(category()));
cl::opt<bool> runProfile("profile",
                         cl::desc("Print the time spent per operator type"),
                         cl::init(false), cl::sub(runCommand),
                         cl::cat(category()));
cl::opt<bool> runFuseActivations(
    "fuse-activations",
    cl::desc("Run a Relu or a constant-bound Clip inside the float32 Conv "
             "or Add that feeds it (the same result, bit for bit; default "
             "on)"),
    cl::init(true), cl::sub(runCommand), cl::cat(category()));
cl::opt<bool> runConcatInPlace(
    "concat-in-place",
    cl::desc("Let a Conv whose only use is a Concat write straight into its "
             "part of the Concat's output (the same result; default on)"),
    cl::init(true), cl::sub(runCommand), cl::cat(category()));
cl::opt<std::string> runMaxMemory(
    "max-memory",
    cl::desc("The most tensor data pfvm:cpu may hold at once, in bytes or "
             "with K, M, G, T (default: 3/4 of the machine's memory); a "
             "node that would need more fails with its shape"),
    cl::value_desc("SIZE"), cl::sub(runCommand), cl::cat(category()));
cl::opt<std::string> runOutputDir(
    "output-dir",
    cl::desc("Folder for the outputs, NAME.npy and NAME.pb (default: out)"),
    cl::init("out"), cl::sub(runCommand), cl::cat(category()));
cl::opt<std::string> runSaveInputs(
    "save-inputs",
    cl::desc("Write every input the run used (given or random) to this "
             "folder as NAME.npy and NAME.pb, to repeat the run elsewhere "
             "with --input NAME=FILE"),
    cl::value_desc("DIR"), cl::sub(runCommand), cl::cat(category()));

/// Names become file names: anything but [A-Za-z0-9_.-] becomes '_'.
std::string fileStem(llvm::StringRef name) {
  std::string stem;
  for (char c : name)
    stem += llvm::isAlnum(c) || c == '_' || c == '.' || c == '-' ? c : '_';
  return stem.empty() || stem[0] == '.' ? "_" + stem : stem;
}


/// The file stems of values named `names` in `dir`; an error when two map
/// to the same file (names differing only in characters fileStem
/// replaces), checked before anything is written.
llvm::Expected<std::vector<std::string>>
valueFileStems(llvm::StringRef dir, const std::vector<std::string> &names,
               llvm::StringRef what) {
  std::vector<std::string> stems;
  llvm::StringMap<std::string> owner;
  for (const std::string &name : names) {
    llvm::SmallString<256> stem(dir);
    llvm::sys::path::append(stem, fileStem(name));
    auto [entry, inserted] = owner.try_emplace(stem, name);
    if (!inserted)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          what + " '" + entry->second + "' and '" + name +
              "' would both be written to " + stem + ".{npy,pb}");
    stems.push_back(std::string(stem));
  }
  return stems;
}

/// Writes `values` named `names` into `dir` (NAME.npy and NAME.pb) and
/// prints one line per value.
bool writeValueFiles(llvm::StringRef dir, const std::vector<std::string> &names,
                     const std::vector<mncc::reference::Value> &values,
                     llvm::StringRef what) {
  auto stems = valueFileStems(dir, names, what);
  if (!stems) {
    llvm::errs() << "mncc: error: " << llvm::toString(stems.takeError())
                 << "\n";
    return false;
  }
  if (std::error_code error = llvm::sys::fs::create_directories(dir)) {
    llvm::errs() << "mncc: error: " << dir << ": " << error.message() << "\n";
    return false;
  }
  for (size_t i = 0; i < values.size() && i < names.size(); ++i) {
    if (llvm::Error error =
            mncc::writeOutputFiles((*stems)[i], names[i], values[i])) {
      llvm::errs() << "mncc: error: " << llvm::toString(std::move(error))
                   << "\n";
      return false;
    }
    const auto &value = values[i];
    llvm::outs() << names[i] << ": "
                 << mncc::reference::dtypeName(value.tensor.dtype()) << " "
                 << mncc::reference::shapeToString(value.tensor.shape())
                 << " -> " << (*stems)[i] << ".{npy,pb}\n";
  }
  return true;
}

/// The inputs of a device program: --input files, then --random-inputs for
/// the rest. Fails with a message when one is missing or wrong.
bool collectInputs(MLIRContext &context,
                   const std::vector<mncc::runtime::TensorInfo> &infos,
                   std::vector<mncc::reference::Value> &values) {
  values.assign(infos.size(), mncc::reference::Value());
  std::vector<bool> given(infos.size(), false);
  for (const std::string &spec : runInputs) {
    auto [name, path] = llvm::StringRef(spec).split('=');
    auto found = llvm::find_if(
        infos, [&](const auto &info) { return info.name == name; });
    if (path.empty() || found == infos.end()) {
      llvm::errs() << "mncc: error: --input '" << spec
                   << (path.empty() ? "': expected NAME=FILE\n"
                                    : "': the program has no such input\n");
      return false;
    }
    size_t index = found - infos.begin();
    // A sequence or optional (a whole graph on the host) names its type;
    // its file is a SequenceProto or OptionalProto of any shape.
    Type type = found->valueType.empty()
                    ? RankedTensorType::get(
                          found->shape, mncc::elementTypeOfOnnx(
                                            int32_t(found->type), &context))
                    : mlir::parseType(found->valueType, &context);
    if (!type) {
      llvm::errs() << "mncc: error: input '" << found->name
                   << "': cannot read its type " << found->valueType << "\n";
      return false;
    }
    auto value = mncc::readValueFile(path, type);
    if (!value) {
      llvm::errs() << "mncc: error: " << llvm::toString(value.takeError())
                   << "\n";
      return false;
    }
    if (!found->valueType.empty()) {
      values[index] = std::move(*value);
      given[index] = true;
      continue;
    }
    if (value->tensor.shape() != found->shape) {
      llvm::errs() << "mncc: error: --input '" << spec << "': shape "
                   << mncc::reference::shapeToString(value->tensor.shape())
                   << ", the program takes "
                   << mncc::reference::shapeToString(found->shape) << "\n";
      return false;
    }
    values[index] = std::move(*value);
    given[index] = true;
  }
  std::mt19937_64 generator(static_cast<uint64_t>(runRandomInputs));
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (size_t i = 0; i < infos.size(); ++i) {
    if (given[i])
      continue;
    if (runRandomInputs < 0) {
      llvm::errs() << "mncc: error: no value for input '" << infos[i].name
                   << "' (give --input " << infos[i].name
                   << "=FILE or --random-inputs SEED)\n";
      return false;
    }
    if (!infos[i].valueType.empty()) {
      llvm::errs() << "mncc: error: --random-inputs cannot fill input '"
                   << infos[i].name << "' of type " << infos[i].valueType
                   << " (give --input " << infos[i].name << "=FILE)\n";
      return false;
    }
    mncc::reference::Tensor tensor(infos[i].type, infos[i].shape);
    for (int64_t e = 0; e < tensor.numElements(); ++e) {
      double value = uniform(generator);
      switch (infos[i].type) {
      case mncc::reference::DType::Float32:
        tensor.data<float>()[e] = float(value);
        break;
      case mncc::reference::DType::Float64:
        tensor.data<double>()[e] = value;
        break;
      case mncc::reference::DType::Float16:
        tensor.data<mncc::reference::Float16>()[e] =
            mncc::reference::Float16(float(value));
        break;
      case mncc::reference::DType::Int32:
        tensor.data<int32_t>()[e] = int32_t((value + 1) * 5);
        break;
      case mncc::reference::DType::Int64:
        tensor.data<int64_t>()[e] = int64_t((value + 1) * 5);
        break;
      // The other integers take the same 0..10, which each of them holds.
      case mncc::reference::DType::Int8:
        tensor.data<int8_t>()[e] = int8_t((value + 1) * 5);
        break;
      case mncc::reference::DType::Int16:
        tensor.data<int16_t>()[e] = int16_t((value + 1) * 5);
        break;
      case mncc::reference::DType::UInt8:
        tensor.data<uint8_t>()[e] = uint8_t((value + 1) * 5);
        break;
      case mncc::reference::DType::UInt16:
        tensor.data<uint16_t>()[e] = uint16_t((value + 1) * 5);
        break;
      case mncc::reference::DType::UInt32:
        tensor.data<uint32_t>()[e] = uint32_t((value + 1) * 5);
        break;
      case mncc::reference::DType::UInt64:
        tensor.data<uint64_t>()[e] = uint64_t((value + 1) * 5);
        break;
      case mncc::reference::DType::Bool:
        tensor.data<bool>()[e] = value > 0;
        break;
      default:
        llvm::errs() << "mncc: error: --random-inputs cannot fill input '"
                     << infos[i].name << "' of type "
                     << mncc::reference::dtypeName(infos[i].type) << "\n";
        return false;
      }
    }
    values[i] = mncc::reference::Value(std::move(tensor));
  }
  return true;
}

/// Peak of the matrix unit at half precision: 512 FLOP per cycle and MAB
/// (docs/target/mncore2.md).
constexpr double kHalfPeakFlopPerCycle = 512.0 * 1024;

void printEmulatorProfile(const mncc::runtime::RunProfile &profile) {
  llvm::outs() << "node                           operator             "
                  "cycles      %  generator\n";
  for (const auto &node : profile.nodes)
    llvm::outs() << llvm::format(
        "%-30s %-16s %10llu %6.1f  %s\n", node.node.c_str(),
        node.opType.c_str(), (unsigned long long)node.cycles,
        profile.cycles ? 100.0 * node.cycles / profile.cycles : 0.0,
        node.generator.c_str());
  double seconds = profile.cycles / 750e6;
  double tflops = seconds > 0 ? profile.modelFlops / seconds / 1e12 : 0;
  llvm::outs() << llvm::format(
      "total: %llu cycles, %.3f us at 750 MHz, %lld FLOP, %.4f TFLOPS "
      "effective (%.2f%% of the half matrix peak)\n",
      (unsigned long long)profile.cycles, seconds * 1e6,
      (long long)profile.modelFlops, tflops,
      profile.cycles ? 100.0 * profile.modelFlops /
                           (profile.cycles * kHalfPeakFlopPerCycle)
                     : 0.0);
  llvm::outs() << llvm::format(
      "busy: MV transfers %llu cycles, MAU %llu cycles; host time %.3f s\n",
      (unsigned long long)profile.transferCycles,
      (unsigned long long)profile.mauCycles, profile.hostSeconds);
  llvm::outs() << llvm::format(
      "emulator: %llu of %llu group steps left out (idle groups)\n",
      (unsigned long long)profile.groupStepsLeftOut,
      (unsigned long long)profile.groupSteps);
}

/// --device=emu2: compile the model first if one is given, run the
/// codegen_dir on the emulator, write the outputs, and with --verify
/// compare with pfvm:cpu.
int runOnEmulator(const char *argv0) {
  DialectRegistry registry;
  mncc::registerAllDialects(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  mncc::ToolDiagnosticHandler diagnostics(sourceMgr, &context);

  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  for (const std::string &spec : runInputShapes) {
    auto shape = mncc::parseInputShape(spec);
    if (!shape) {
      llvm::errs() << "mncc: error: " << llvm::toString(shape.takeError())
                   << "\n";
      return 1;
    }
    shapes.push_back(std::move(*shape));
  }

  std::string dir = runModelFile;
  std::string modelPath;
  llvm::SmallString<128> temporary;
  bool isDirectory = llvm::sys::fs::is_directory(runModelFile);
  if (!isDirectory) {
    modelPath = runModelFile;
    auto resolved = mncc::tool::resolveCommandLineOptions(argv0, {});
    if (!resolved) {
      llvm::errs() << "mncc: error: " << llvm::toString(resolved.takeError())
                   << "\n";
      return 1;
    }
    if (runCodegenDir.empty()) {
      if (std::error_code error =
              llvm::sys::fs::createUniqueDirectory("mncc-run", temporary)) {
        llvm::errs() << "mncc: error: a temporary folder: " << error.message()
                     << "\n";
        return 1;
      }
      dir = std::string(temporary) + "/codegen";
    } else {
      dir = runCodegenDir;
    }
    mncc::pipeline::CompileRequest compile;
    compile.input = modelPath;
    compile.codegenDir = dir;
    compile.options = std::move(*resolved);
    compile.inputShapes = shapes;
    mncc::pipeline::CompileResult result =
        mncc::pipeline::compileModel(context, compile);
    if (!result.succeeded ||
        (result.lastPhase != mncc::pipeline::Phase::Emit &&
         result.wholeGraphOnHost.empty())) {
      llvm::errs() << "mncc: error: " << modelPath
                   << " did not compile for emu2"
                   << (result.stopReason.empty() ? std::string()
                                                 : ": " + result.stopReason)
                   << "\n";
      if (!temporary.empty())
        llvm::sys::fs::remove_directories(temporary);
      return 1;
    }
  }
  auto cleanup = llvm::make_scope_exit([&] {
    if (!temporary.empty())
      llvm::sys::fs::remove_directories(temporary);
  });

  std::string error;
  std::unique_ptr<mncc::runtime::Executable> executable =
      mncc::runtime::loadCodegenDir(dir, error);
  if (!executable) {
    llvm::errs() << "mncc: error: " << error << "\n";
    return 1;
  }
  std::vector<mncc::reference::Value> inputs, outputs;
  if (!collectInputs(context, executable->inputs(), inputs))
    return 1;
  if (!runSaveInputs.empty()) {
    std::vector<std::string> inputNames;
    for (const auto &info : executable->inputs())
      inputNames.push_back(info.name);
    if (!writeValueFiles(runSaveInputs, inputNames, inputs, "inputs"))
      return 1;
  }
  mncc::runtime::RunOptions options;
  options.fillSeed = runFillRandom;
  options.profile = runProfile;
  options.allGroups = runAllGroups;
  mncc::runtime::RunProfile profile;
  if (!executable->runValues(inputs, outputs, options, &profile, error)) {
    llvm::errs() << "mncc: error: emu2: " << error << "\n";
    return 1;
  }
  if (runProfile)
    printEmulatorProfile(profile);

  if (std::error_code code = llvm::sys::fs::create_directories(runOutputDir)) {
    llvm::errs() << "mncc: error: " << runOutputDir << ": " << code.message()
                 << "\n";
    return 1;
  }
  const auto &infos = executable->outputs();
  std::vector<std::string> outputNames;
  for (const auto &info : infos)
    outputNames.push_back(info.name);
  if (auto stems = valueFileStems(runOutputDir, outputNames, "outputs");
      !stems) {
    llvm::errs() << "mncc: error: " << llvm::toString(stems.takeError())
                 << "\n";
    return 1;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    llvm::SmallString<256> stem(runOutputDir);
    llvm::sys::path::append(stem, fileStem(infos[i].name));
    if (llvm::Error problem =
            mncc::writeOutputFiles(stem, infos[i].name, outputs[i])) {
      llvm::errs() << "mncc: error: " << llvm::toString(std::move(problem))
                   << "\n";
      return 1;
    }
    llvm::outs() << infos[i].name << ": "
                 << mncc::reference::dtypeName(outputs[i].tensor.dtype())
                 << " "
                 << mncc::reference::shapeToString(outputs[i].tensor.shape())
                 << " -> " << stem << ".{npy,pb}\n";
  }

  if (!runVerify)
    return 0;
  if (modelPath.empty()) {
    auto manifestModel = mncc::runtime::modelOfCodegenDir(dir);
    if (manifestModel.empty()) {
      llvm::errs() << "mncc: error: --verify needs the model; " << dir
                   << " does not say which it was compiled from\n";
      return 1;
    }
    modelPath = manifestModel;
  }
  std::unique_ptr<mncc::runtime::Executable> host =
      mncc::runtime::loadModelOnHost(context, modelPath, shapes, error);
  if (!host) {
    llvm::errs() << "mncc: error: " << error << "\n";
    return 1;
  }
  std::vector<mncc::reference::Value> expected;
  if (!host->runValues(inputs, expected, options, nullptr, error)) {
    llvm::errs() << "mncc: error: pfvm:cpu: " << error << "\n";
    return 1;
  }
  std::string floatDtype = executable->floatDtype();
  std::vector<mncc::runtime::Comparison> plain;
  for (size_t i = 0; i < outputs.size() && i < expected.size(); ++i)
    // Only tensors reach here: writeOutputFiles refused any other output.
    plain.push_back(mncc::runtime::compare(
        outputs[i].tensor, expected[i].tensor,
        mncc::runtime::toleranceFor(floatDtype, expected[i].tensor.dtype())));
  // Beyond the float_dtype's constant tolerance, the device is held to
  // pfvm:cpu computing in the program's own formats (docs/codegen.md
  // "Tolerances"): the error the formats explain is then not counted. Run
  // every time, so that a user sees how much of the error is the formats'.
  std::vector<mncc::reference::Value> following;
  std::string followingError;
  bool followed = false;
  {
    std::unique_ptr<mncc::runtime::Executable> formats =
        mncc::runtime::loadModelFollowingDevice(context, modelPath, shapes,
                                                dir, followingError);
    followed = formats && formats->runValues(inputs, following, options,
                                             nullptr, followingError);
  }
  bool allPassed = true;
  for (size_t i = 0; i < plain.size(); ++i) {
    const mncc::runtime::Comparison &comparison = plain[i];
    mncc::runtime::Tolerance tolerance =
        mncc::runtime::toleranceFor(floatDtype, expected[i].tensor.dtype());
    std::optional<mncc::runtime::Comparison> formats;
    mncc::runtime::Tolerance formatsTolerance =
        mncc::runtime::followingToleranceFor(floatDtype,
                                             expected[i].tensor.dtype());
    if (followed && i < following.size() && following[i].isTensor())
      formats = mncc::runtime::compare(outputs[i].tensor, following[i].tensor,
                                       formatsTolerance);
    bool passed = comparison.passed || (formats && formats->passed);
    allPassed &= passed;
    llvm::outs() << llvm::format(
        "verify %s: max abs %.3g, max rel %.3g (tolerance rtol %.0e, atol "
        "%.0e x max|ref|, float_dtype %s): %s\n",
        infos[i].name.c_str(), comparison.maxAbs, comparison.maxRel,
        tolerance.rtol, tolerance.absoluteScale,
        floatDtype.empty() ? "?" : floatDtype.c_str(),
        static_cast<const char *>(comparison.passed ? "pass"
                                  : passed          ? "beyond it"
                                                    : "FAIL"));
    if (!comparison.passed && !passed)
      llvm::outs() << "  first failure: " << comparison.firstFailure << "\n";
    if (formats) {
      llvm::outs() << llvm::format(
          "  against pfvm:cpu in the program's formats: max abs %.3g, max "
          "rel %.3g (tolerance rtol %.0e, atol %.0e x max|ref|): %s\n",
          formats->maxAbs, formats->maxRel, formatsTolerance.rtol,
          formatsTolerance.absoluteScale,
          static_cast<const char *>(formats->passed ? "pass" : "FAIL"));
      if (!formats->passed)
        llvm::outs() << "  first failure: " << formats->firstFailure << "\n";
    } else if (!comparison.passed) {
      llvm::outs() << "  no reference in the program's formats: "
                   << (followingError.empty() ? "it gave no such output"
                                              : followingError)
                   << "\n";
    }
  }
  return allPassed ? 0 : 1;
}

} // namespace

int mncc::tool::runModel(const char *argv0) {
  // mncc's own run-time variable, read once, here (docs/reference.md).
  mncc::reference::setNumThreads(mncc::reference::threadCountFromText(
      std::getenv("MNCC_REFERENCE_THREADS")));
  mncc::emu::setDefaultStepThreads(
      mncc::emu::stepThreadsFromText(std::getenv("MNCC_EMU_THREADS")));
  if (runMaxMemory.getNumOccurrences()) {
    uint64_t bytes = 0;
    if (!mncc::reference::parseMemorySize(runMaxMemory, bytes)) {
      llvm::errs() << "mncc: error: --max-memory '" << runMaxMemory
                   << "': expected a size in bytes, or with K, M, G or T "
                      "(512M, 16G)\n";
      return 1;
    }
    mncc::reference::setMemoryLimit(bytes);
  }
  if (!mncc::runtime::findDevice(runDevice)) {
    std::string names;
    for (const auto &device : mncc::runtime::listDevices())
      names += (names.empty() ? "" : ", ") + std::string(device.name);
    llvm::errs() << "mncc: error: unknown device '" << runDevice
                 << "' (available: " << names << ")\n";
    return 1;
  }
  if (runDevice == "emu2")
    return runOnEmulator(argv0);
  DialectRegistry registry;
  mncc::registerAllDialects(registry);
  MLIRContext context(registry);
  // Diagnostics name the node; a dump of the op adds nothing for a user.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  mncc::ToolDiagnosticHandler diagnostics(sourceMgr, &context);
  mncc::OnnxImportOptions importOptions;
  for (const std::string &spec : runInputShapes) {
    auto shape = mncc::parseInputShape(spec);
    if (!shape) {
      llvm::errs() << "mncc: error: " << llvm::toString(shape.takeError())
                   << "\n";
      return 1;
    }
    importOptions.inputShapes.push_back(std::move(*shape));
  }
  OwningOpRef<ModuleOp> module =
      loadModel(runModelFile, context, sourceMgr, importOptions);
  if (!module)
    return 1;
  auto functions = module->getOps<func::FuncOp>();
  func::FuncOp function = *functions.begin();
  mncc::PrepareOptions options;
  options.fuseActivations = runFuseActivations;
  options.concatInPlace = runConcatInPlace;
  auto program = mncc::OnnxProgram::prepare(function, nullptr, options);
  if (failed(program))
    return 1;

  const auto &inputInfos = (*program)->inputs();
  std::vector<mncc::reference::Value> inputs(inputInfos.size());
  std::vector<bool> given(inputInfos.size(), false);
  for (const std::string &spec : runInputs) {
    auto [name, path] = llvm::StringRef(spec).split('=');
    if (path.empty()) {
      llvm::errs() << "mncc: error: --input '" << spec
                   << "': expected NAME=FILE\n";
      return 1;
    }
    auto found = llvm::find_if(
        inputInfos, [&](const auto &info) { return info.name == name; });
    if (found == inputInfos.end()) {
      llvm::errs() << "mncc: error: --input '" << spec
                   << "': the model has no input '" << name << "'\n";
      return 1;
    }
    size_t index = found - inputInfos.begin();
    if (given[index]) {
      llvm::errs() << "mncc: error: --input '" << spec << "': input '" << name
                   << "' is given twice\n";
      return 1;
    }
    auto value = mncc::readValueFile(path, found->type);
    if (!value) {
      llvm::errs() << "mncc: error: " << llvm::toString(value.takeError())
                   << "\n";
      return 1;
    }
    inputs[index] = std::move(*value);
    given[index] = true;
  }
  if (runRandomInputs >= 0) {
    std::mt19937_64 generator(static_cast<uint64_t>(runRandomInputs));
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (size_t i = 0; i < inputInfos.size(); ++i) {
      if (given[i])
        continue;
      auto type = llvm::dyn_cast<RankedTensorType>(inputInfos[i].type);
      if (!type) {
        llvm::errs() << "mncc: error: --random-inputs cannot fill input '"
                     << inputInfos[i].name << "' of type "
                     << inputInfos[i].type << " (give --input "
                     << inputInfos[i].name << "=FILE)\n";
        return 1;
      }
      if (!type.hasStaticShape()) {
        // Name the dimension: its dim_param when the model has one.
        int64_t dim = 0;
        while (!type.isDynamicDim(dim))
          ++dim;
        auto params = function.getArgAttrOfType<ArrayAttr>(i, "onnx.dim_params");
        StringAttr param =
            params && dim < (int64_t)params.size()
                ? llvm::dyn_cast<StringAttr>(params[dim])
                : StringAttr();
        std::string shape, example;
        for (int64_t d = 0; d < type.getRank(); ++d) {
          std::string size = type.isDynamicDim(d)
                                 ? std::string("?")
                                 : std::to_string(type.getDimSize(d));
          shape += (d ? "x" : "") + size;
          example += (d ? "," : "") + (type.isDynamicDim(d) ? "1" : size);
        }
        llvm::errs() << "mncc: error: --random-inputs: dimension " << dim
                     << (param && !param.getValue().empty()
                             ? " ('" + param.str() + "')"
                             : std::string())
                     << " of input '" << inputInfos[i].name << "' (shape "
                     << shape << ") has no size; give one with --input-shape "
                     << inputInfos[i].name << ":" << example
                     << " (for example)\n";
        return 1;
      }
      mncc::reference::DType dtype =
          mncc::referenceDTypeOf(type.getElementType());
      std::string error;
      std::optional<mncc::reference::Tensor> made =
          mncc::reference::Tensor::tryAllocate(
              dtype, std::vector<int64_t>(type.getShape().begin(),
                                          type.getShape().end()),
              error);
      if (!made) {
        llvm::errs() << "mncc: error: --random-inputs: input '"
                     << inputInfos[i].name << "': " << error << "\n";
        return 1;
      }
      mncc::reference::Tensor &tensor = *made;
      bool filled = mncc::reference::dispatchNumeric(dtype, [&](auto tag) {
        using T = decltype(tag);
        for (int64_t e = 0; e < tensor.numElements(); ++e) {
          double value = uniform(generator);
          if constexpr (std::is_same_v<T, bool>)
            tensor.data<T>()[e] = value > 0;
          else if constexpr (std::is_integral_v<T>)
            tensor.data<T>()[e] = static_cast<T>((value + 1) * 5);
          else if constexpr (std::is_same_v<T, std::complex<float>> ||
                             std::is_same_v<T, std::complex<double>>)
            tensor.data<T>()[e] = T(value, 0);
          else
            tensor.data<T>()[e] = static_cast<T>(static_cast<float>(value));
        }
      });
      if (!filled) {
        llvm::errs() << "mncc: error: --random-inputs cannot fill input '"
                     << inputInfos[i].name << "' of type "
                     << mncc::reference::dtypeName(dtype) << " (give --input "
                     << inputInfos[i].name << "=FILE)\n";
        return 1;
      }
      inputs[i] = mncc::reference::Value(std::move(tensor));
      given[i] = true;
    }
  }
  for (size_t i = 0; i < inputInfos.size(); ++i)
    if (!given[i]) {
      llvm::errs() << "mncc: error: no value for input '" << inputInfos[i].name
                   << "' (give --input " << inputInfos[i].name
                   << "=FILE or --random-inputs SEED)\n";
      return 1;
    }
  std::vector<std::string> inputNames, outputNames;
  for (const auto &info : inputInfos)
    inputNames.push_back(info.name);
  for (const auto &info : (*program)->outputs())
    outputNames.push_back(info.name);
  // Name clashes are errors before the run, so nothing is written.
  for (auto [dir, names, what] :
       {std::make_tuple(runOutputDir.getValue(), &outputNames, "outputs"),
        std::make_tuple(runSaveInputs.getValue(), &inputNames, "inputs")}) {
    if (dir.empty())
      continue;
    if (auto stems = valueFileStems(dir, *names, what); !stems) {
      llvm::errs() << "mncc: error: " << llvm::toString(stems.takeError())
                   << "\n";
      return 1;
    }
  }
  if (!runSaveInputs.empty()) {
    if (!writeValueFiles(runSaveInputs, inputNames, inputs, "inputs"))
      return 1;
    std::string again;
    for (size_t i = 0; i < inputNames.size(); ++i) {
      llvm::SmallString<256> stem(runSaveInputs);
      llvm::sys::path::append(stem, fileStem(inputNames[i]));
      again += " --input " + inputNames[i] + "=" + std::string(stem) + ".npy";
    }
    llvm::outs() << "inputs saved; to run again with them:" << again << "\n";
  }

  std::vector<mncc::reference::Value> outputs;
  mncc::reference::Status status = (*program)->run(inputs, outputs);
  if (!status.ok()) {
    llvm::errs() << runModelFile << ": error: " << status.message() << "\n";
    return 1;
  }
  mncc::RunProfile profile;
  if (runRepeat) {
    std::vector<double> milliseconds;
    for (unsigned i = 0; i < runRepeat; ++i) {
      auto start = std::chrono::steady_clock::now();
      std::vector<mncc::reference::Value> again;
      status = (*program)->run(inputs, again, runProfile ? &profile : nullptr);
      milliseconds.push_back(std::chrono::duration<double, std::milli>(
                                 std::chrono::steady_clock::now() - start)
                                 .count());
      if (!status.ok()) {
        llvm::errs() << runModelFile << ": error: " << status.message() << "\n";
        return 1;
      }
    }
    std::sort(milliseconds.begin(), milliseconds.end());
    llvm::outs() << llvm::format("%s: %u runs, median %.3f ms, min %.3f ms\n",
                                 runDevice.c_str(), (unsigned)runRepeat,
                                 milliseconds[milliseconds.size() / 2],
                                 milliseconds.front());
  } else if (runProfile) {
    std::vector<mncc::reference::Value> again;
    status = (*program)->run(inputs, again, &profile);
  }
  if (runProfile) {
    double total = 0;
    for (const auto &entry : profile.perOperator)
      total += entry.second.milliseconds;
    std::vector<std::pair<std::string, mncc::RunProfile::Entry>> rows(
        profile.perOperator.begin(), profile.perOperator.end());
    std::sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) {
      return a.second.milliseconds > b.second.milliseconds;
    });
    llvm::outs() << "operator                  calls        ms      %\n";
    for (const auto &[name, entry] : rows)
      llvm::outs() << llvm::format(
          "%-24s %6lld %9.2f %6.1f\n", name.c_str(), (long long)entry.calls,
          entry.milliseconds, total ? 100 * entry.milliseconds / total : 0.0);
  }
  if (!writeValueFiles(runOutputDir, outputNames, outputs, "outputs"))
    return 1;
  return 0;
}
