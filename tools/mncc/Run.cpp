//===- Run.cpp - mncc run: a model on a device
//-----------------------------===//
//
//   mncc run --device=pfvm:cpu model.onnx --input NAME=FILE... --output-dir DIR
//            [--random-inputs SEED] [--repeat N] [--profile]
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "mncc/Registration.h"
#include "mncc/interpreter/OnnxInterpreter.h"
#include "mncc/interpreter/ValueFiles.h"
#include "mncc/onnx/Import.h"
#include "mncc/onnx/TensorIo.h"
#include "mncc/reference/Broadcast.h"
#include "mncc/reference/Threads.h"
#include "mncc/support/Diagnostics.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

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

cl::opt<std::string> runDevice("device", cl::desc("Device: pfvm:cpu"),
                               cl::init("pfvm:cpu"), cl::sub(runCommand),
                               cl::cat(category()));
cl::opt<std::string> runModelFile(cl::Positional, cl::Required,
                                  cl::desc("<model.onnx>"), cl::sub(runCommand),
                                  cl::cat(category()));
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
cl::opt<std::string> runOutputDir("output-dir", cl::Required,
                                  cl::desc("Folder for the outputs"),
                                  cl::sub(runCommand), cl::cat(category()));

/// Names become file names: anything but [A-Za-z0-9_.-] becomes '_'.
std::string fileStem(llvm::StringRef name) {
  std::string stem;
  for (char c : name)
    stem += llvm::isAlnum(c) || c == '_' || c == '.' || c == '-' ? c : '_';
  return stem.empty() || stem[0] == '.' ? "_" + stem : stem;
}

} // namespace

int mncc::tool::runModel() {
  // mncc's own run-time variable, read once, here (docs/reference.md).
  mncc::reference::setNumThreads(mncc::reference::threadCountFromText(
      std::getenv("MNCC_REFERENCE_THREADS")));
  if (runDevice != "pfvm:cpu") {
    llvm::errs() << "mncc: error: unknown device '" << runDevice
                 << "' (available: pfvm:cpu)\n";
    return 1;
  }
  DialectRegistry registry;
  mncc::registerAllDialects(registry);
  MLIRContext context(registry);
  // Diagnostics name the node; a dump of the op adds nothing for a user.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  mncc::ToolDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = mncc::importOnnxFile(runModelFile, &context);
  if (!module)
    return 1;
  auto functions = module->getOps<func::FuncOp>();
  mncc::PrepareOptions options;
  options.fuseActivations = runFuseActivations;
  options.concatInPlace = runConcatInPlace;
  auto program =
      mncc::OnnxProgram::prepare(*functions.begin(), nullptr, options);
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
      auto type = llvm::dyn_cast<RankedTensorType>(inputInfos[i].type);
      if (given[i] || !type || !type.hasStaticShape())
        continue;
      mncc::reference::DType dtype =
          mncc::referenceDTypeOf(type.getElementType());
      mncc::reference::Tensor tensor(
          dtype,
          std::vector<int64_t>(type.getShape().begin(), type.getShape().end()));
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
      if (!filled)
        continue;
      inputs[i] = mncc::reference::Value(std::move(tensor));
      given[i] = true;
    }
  }
  for (size_t i = 0; i < inputInfos.size(); ++i)
    if (!given[i]) {
      llvm::errs() << "mncc: error: no value for input '" << inputInfos[i].name
                   << "' (give --input " << inputInfos[i].name << "=FILE)\n";
      return 1;
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
  if (std::error_code error = llvm::sys::fs::create_directories(runOutputDir)) {
    llvm::errs() << "mncc: error: " << runOutputDir << ": " << error.message()
                 << "\n";
    return 1;
  }
  const auto &outputInfos = (*program)->outputs();
  for (size_t i = 0; i < outputs.size(); ++i) {
    llvm::SmallString<256> stem(runOutputDir);
    llvm::sys::path::append(stem, fileStem(outputInfos[i].name));
    if (llvm::Error error =
            mncc::writeOutputFiles(stem, outputInfos[i].name, outputs[i])) {
      llvm::errs() << "mncc: error: " << llvm::toString(std::move(error))
                   << "\n";
      return 1;
    }
    const auto &value = outputs[i];
    llvm::outs() << outputInfos[i].name << ": "
                 << mncc::reference::dtypeName(value.tensor.dtype()) << " "
                 << mncc::reference::shapeToString(value.tensor.shape())
                 << " -> " << stem << ".{npy,pb}\n";
  }
  return 0;
}
