//===- Emu2Device.cpp - A codegen_dir on the emulator ---------------------===//
//
// Loads the compiler's output once (the program parsed, the constants
// mapped from constants.bin) and runs it as often as asked: each run
// starts a board (random or zero memory), stages the constants and the
// inputs into DRAM in their forms, runs the program and reads the outputs
// back (docs/codegen.md C2: the host's part of the DRAM form).
//
//===----------------------------------------------------------------------===//

#include "mncc/runtime/Runtime.h"

#include "mncc/codegen/DramForm.h"
#include "mncc/emu/Parser.h"
#include "mncc/emu/Simulator.h"
#include "mncc/emu/Timing.h"

#include "mncc/Registration.h"
#include "mncc/interpreter/OnnxInterpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <cstring>
#include <optional>

using namespace mncc;
using namespace mncc::runtime;
using codegen::DramForm;
using codegen::DramImage;

namespace {

std::optional<reference::DType> hostTypeNamed(const std::string &name) {
  for (reference::DType type :
       {reference::DType::Float32, reference::DType::Float16,
        reference::DType::BFloat16, reference::DType::Float64,
        reference::DType::Int8, reference::DType::Int16,
        reference::DType::Int32, reference::DType::Int64,
        reference::DType::UInt8, reference::DType::UInt16,
        reference::DType::Bool})
    if (name == reference::dtypeName(type))
      return type;
  return std::nullopt;
}

/// A graph input, output or constant of the manifest.
struct Placed {
  TensorInfo info;
  DramForm form;
  /// Constants: where their image is in constants.bin.
  uint64_t offset = 0;
  unsigned imageGroups = 0;
  int64_t imageLongWords = 0;
};

bool readPlaced(const nlohmann::json &entry, Placed &placed,
                std::string &error) {
  try {
    placed.info.name = entry.at("name").get<std::string>();
    placed.info.shape = entry.at("shape").get<std::vector<int64_t>>();
    std::optional<reference::DType> host =
        hostTypeNamed(entry.at("host_type").get<std::string>());
    std::optional<codegen::DeviceType> device = codegen::parseDeviceTypeName(
        entry.at("device_type").get<std::string>());
    if (!host || !device) {
      error = "tensor '" + placed.info.name + "' has an unknown type";
      return false;
    }
    placed.info.type = *host;
    const nlohmann::json &dram = entry.at("dram");
    placed.form.type = *device;
    placed.form.shape = placed.info.shape;
    placed.form.order = dram.at("order").get<std::vector<unsigned>>();
    placed.form.base = dram.at("address").get<int64_t>();
    placed.form.groups = dram.at("groups").get<unsigned>();
    if (entry.contains("offset")) {
      placed.offset = entry.at("offset").get<uint64_t>();
      placed.imageGroups = entry.at("image_groups").get<unsigned>();
      placed.imageLongWords =
          entry.at("image_long_words_per_group").get<int64_t>();
    }
  } catch (const nlohmann::json::exception &exception) {
    error = std::string("manifest.json: ") + exception.what();
    return false;
  }
  if (placed.form.order.size() != placed.form.shape.size() ||
      (placed.form.groups != 1 && placed.form.groups != 4)) {
    error = "manifest.json: tensor '" + placed.info.name +
            "' has an inconsistent DRAM form";
    return false;
  }
  return true;
}

struct KernelSpan {
  NodeProfile profile;
  uint32_t firstLine = 0, lastLine = 0;
  /// A node the host runs (pfvm:cpu), with its tensors in DRAM.
  std::string hostFunction;
  std::vector<std::optional<Placed>> hostInputs;
  std::vector<Placed> hostOutputs;
};

/// What runs in order: a stretch of the device program, or one host node.
struct Segment {
  emu::Program program;
  size_t hostKernel = SIZE_MAX;
};

class Emu2Executable : public Executable {
public:
  bool load(const std::string &dir, std::string &error) {
    auto manifestBuffer =
        llvm::MemoryBuffer::getFile(dir + "/manifest.json");
    if (!manifestBuffer) {
      error = dir + ": no manifest.json (" +
              manifestBuffer.getError().message() +
              "); is it a codegen_dir written by mncc compile?";
      return false;
    }
    nlohmann::json manifest = nlohmann::json::parse(
        (*manifestBuffer)->getBuffer().begin(),
        (*manifestBuffer)->getBuffer().end(), nullptr, false);
    if (manifest.is_discarded() || !manifest.is_object()) {
      error = dir + "/manifest.json: not valid JSON";
      return false;
    }
    FloatDtype = manifest.value("float_dtype", "");
    ModelFlops = manifest.value("model_flops", int64_t(0));
    std::string programName = manifest.value("program", "program.vsm");
    auto programBuffer = llvm::MemoryBuffer::getFile(dir + "/" + programName);
    if (!programBuffer) {
      error = dir + "/" + programName + ": " +
              programBuffer.getError().message();
      return false;
    }
    emu::Diagnostic diagnostic;
    std::string programPath = dir + "/" + programName;
    if (!emu::parseProgram((*programBuffer)->getBuffer(), programPath, Program,
                           diagnostic)) {
      error = diagnostic.str();
      return false;
    }
    auto readList = [&](const char *key, std::vector<Placed> &list) {
      if (!manifest.contains(key) || !manifest[key].is_array()) {
        error = dir + "/manifest.json: no '" + std::string(key) + "' list";
        return false;
      }
      for (const nlohmann::json &entry : manifest[key]) {
        Placed placed;
        if (!readPlaced(entry, placed, error))
          return false;
        list.push_back(std::move(placed));
      }
      return true;
    };
    if (!readList("inputs", InputPlaces) || !readList("outputs", OutputPlaces) ||
        !readList("constants", ConstantPlaces))
      return false;
    for (const Placed &placed : InputPlaces)
      Inputs.push_back(placed.info);
    for (const Placed &placed : OutputPlaces)
      Outputs.push_back(placed.info);
    if (!ConstantPlaces.empty()) {
      // Mapped, not read: a large model's weights are staged from the
      // page cache without a copy.
      auto blob = llvm::MemoryBuffer::getFile(dir + "/constants.bin",
                                              /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
      if (!blob) {
        error = dir + "/constants.bin: " + blob.getError().message();
        return false;
      }
      Constants = std::move(*blob);
      for (const Placed &placed : ConstantPlaces)
        if (placed.offset + uint64_t(placed.imageGroups) *
                                placed.imageLongWords * 8 >
            Constants->getBufferSize()) {
          error = dir + "/constants.bin is shorter than the manifest says";
          return false;
        }
    }
    if (manifest.contains("kernels"))
      for (const nlohmann::json &kernel : manifest["kernels"]) {
        KernelSpan span;
        if (kernel.contains("host_function")) {
          span.hostFunction = kernel.value("host_function", "");
          for (const nlohmann::json &input : kernel["inputs"]) {
            if (input.is_null()) {
              span.hostInputs.push_back(std::nullopt);
              continue;
            }
            Placed placed;
            if (!readPlaced(input, placed, error))
              return false;
            span.hostInputs.push_back(std::move(placed));
          }
          for (const nlohmann::json &output : kernel["outputs"]) {
            Placed placed;
            if (!readPlaced(output, placed, error))
              return false;
            span.hostOutputs.push_back(std::move(placed));
          }
        }
        span.profile.node = kernel.value("node", "");
        span.profile.opType = kernel.value("op_type", "");
        span.profile.generator = kernel.value("generator", "");
        span.profile.variant = kernel.value("variant", "");
        span.profile.flops = kernel.value("flops", int64_t(0));
        span.firstLine = kernel.value("first_line", 0u);
        span.lastLine = kernel.value("last_line", 0u);
        Kernels.push_back(span);
      }
    if (manifest.contains("host") && !loadHostNodes(dir, error))
      return false;
    splitProgram();
    return true;
  }

  const std::vector<TensorInfo> &inputs() const override { return Inputs; }
  const std::vector<TensorInfo> &outputs() const override { return Outputs; }
  std::string floatDtype() const override { return FloatDtype; }

  bool run(const std::vector<reference::Tensor> &inputs,
           std::vector<reference::Tensor> &outputs, const RunOptions &options,
           runtime::RunProfile *profile, std::string &error) override {
    auto start = std::chrono::steady_clock::now();
    if (inputs.size() != InputPlaces.size()) {
      error = "the program takes " + std::to_string(InputPlaces.size()) +
              " inputs, " + std::to_string(inputs.size()) + " given";
      return false;
    }
    emu::Simulator simulator;
    simulator.setSkipIdleGroups(!options.allGroups);
    if (options.fillSeed)
      simulator.fillRandom(options.fillSeed);
    for (const Placed &constant : ConstantPlaces) {
      const char *base = Constants->getBufferStart() + constant.offset;
      for (unsigned g = 0; g < constant.imageGroups; ++g) {
        emu::Region region{emu::Space::DRAM, g, uint64_t(constant.form.base),
                           uint64_t(constant.imageLongWords)};
        std::vector<uint64_t> words(size_t(constant.imageLongWords));
        std::memcpy(words.data(),
                    base + uint64_t(g) * constant.imageLongWords * 8,
                    words.size() * 8);
        if (!simulator.write(region, words.data(), error))
          return false;
      }
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Placed &placed = InputPlaces[i];
      if (inputs[i].shape() != placed.info.shape) {
        error = "input '" + placed.info.name + "' has the wrong shape";
        return false;
      }
      DramImage image;
      if (!codegen::packHost(placed.form, inputs[i], image, error)) {
        error = "input '" + placed.info.name + "': " + error;
        return false;
      }
      for (unsigned g = 0; g < image.groups; ++g) {
        emu::Region region{emu::Space::DRAM, g, uint64_t(placed.form.base),
                           uint64_t(image.data[g].size())};
        if (!simulator.write(region, image.data[g].data(), error))
          return false;
      }
    }
    emu::Timing timing(profile && options.profile);
    simulator.machine().setTiming(&timing);
    for (const Segment &segment : Segments) {
      if (segment.hostKernel != SIZE_MAX) {
        if (!runOnHost(Kernels[segment.hostKernel], simulator, error)) {
          simulator.machine().setTiming(nullptr);
          return false;
        }
        continue;
      }
      emu::Diagnostic diagnostic;
      if (!simulator.machine().run(segment.program, nullptr, diagnostic)) {
        simulator.machine().setTiming(nullptr);
        error = diagnostic.str();
        return false;
      }
    }
    simulator.machine().setTiming(nullptr);
    timing.finish();
    outputs.clear();
    for (const Placed &placed : OutputPlaces) {
      DramImage image;
      image.groups = placed.form.groups;
      image.longWordsPerGroup = placed.form.groupLongWords();
      for (unsigned g = 0; g < image.groups; ++g) {
        image.data[g].resize(size_t(image.longWordsPerGroup));
        emu::Region region{emu::Space::DRAM, g, uint64_t(placed.form.base),
                           uint64_t(image.longWordsPerGroup)};
        if (!simulator.read(region, image.data[g].data(), error))
          return false;
      }
      reference::Tensor host;
      if (!codegen::unpackHost(placed.form, image, placed.info.type, host,
                               error)) {
        error = "output '" + placed.info.name + "': " + error;
        return false;
      }
      outputs.push_back(std::move(host));
    }
    if (profile) {
      const emu::TimingStats &stats = timing.stats();
      profile->cycles = stats.Cycles;
      profile->transferCycles = stats.Busy[unsigned(emu::Unit::Mv)];
      profile->mauCycles = stats.Busy[unsigned(emu::Unit::Mau)] +
                           stats.Busy[unsigned(emu::Unit::Matrix)];
      profile->modelFlops = ModelFlops;
      profile->groupSteps = simulator.machine().groupSteps();
      profile->groupStepsLeftOut = simulator.machine().groupStepsLeftOut();
      profile->nodes.clear();
      if (options.profile)
        attribute(timing, *profile);
      profile->hostSeconds = std::chrono::duration<double>(
                                 std::chrono::steady_clock::now() - start)
                                 .count();
    }
    return true;
  }

private:
  /// Parses host.mlir and prepares each host node for pfvm:cpu.
  bool loadHostNodes(const std::string &dir, std::string &error) {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    HostContext = std::make_unique<mlir::MLIRContext>(registry);
    HostContext->loadAllAvailableDialects();
    llvm::SourceMgr sources;
    std::string path = dir + "/host.mlir";
    mlir::ParserConfig config(HostContext.get());
    HostModule = mlir::parseSourceFile<mlir::ModuleOp>(path, config);
    if (!HostModule) {
      error = path + ": cannot be read";
      return false;
    }
    for (KernelSpan &kernel : Kernels) {
      if (kernel.hostFunction.empty())
        continue;
      auto function =
          HostModule->lookupSymbol<mlir::func::FuncOp>(kernel.hostFunction);
      if (!function) {
        error = path + ": no function " + kernel.hostFunction;
        return false;
      }
      auto program = OnnxProgram::prepare(function);
      if (mlir::failed(program)) {
        error = "node '" + kernel.profile.node + "': pfvm:cpu cannot run it";
        return false;
      }
      HostPrograms[kernel.hostFunction] = std::move(*program);
    }
    return true;
  }

  /// Device programs between host nodes: the statements of consecutive
  /// device kernels' lines.
  void splitProgram() {
    Segments.clear();
    Segment current;
    size_t statement = 0;
    const std::vector<emu::Statement> &all = Program.Statements;
    // The kernels' starts go with their statements (emu::Program).
    const std::vector<uint32_t> &starts = Program.KernelStarts;
    size_t nextStart = 0;
    auto take = [&] {
      for (; nextStart < starts.size() && starts[nextStart] <= statement;
           ++nextStart)
        current.program.KernelStarts.push_back(
            uint32_t(current.program.Statements.size()));
      current.program.Statements.push_back(all[statement++]);
    };
    auto flush = [&] {
      if (!current.program.Statements.empty()) {
        current.program.FileName = Program.FileName;
        Segments.push_back(std::move(current));
      }
      current = Segment();
    };
    for (size_t k = 0; k < Kernels.size(); ++k) {
      if (Kernels[k].hostFunction.empty())
        continue;
      // Everything before the host node's line runs first.
      while (statement < all.size() && all[statement].Line < Kernels[k].firstLine)
        take();
      flush();
      Segment host;
      host.hostKernel = k;
      Segments.push_back(std::move(host));
    }
    while (statement < all.size())
      take();
    flush();
  }

  /// A host node: its inputs from DRAM in their forms, pfvm:cpu, its
  /// outputs back.
  bool runOnHost(const KernelSpan &kernel, emu::Simulator &simulator,
                 std::string &error) {
    auto readTensor = [&](const Placed &placed,
                          reference::Tensor &tensor) -> bool {
      DramImage image;
      image.groups = placed.form.groups;
      image.longWordsPerGroup = placed.form.groupLongWords();
      for (unsigned g = 0; g < image.groups; ++g) {
        image.data[g].resize(size_t(image.longWordsPerGroup));
        emu::Region region{emu::Space::DRAM, g, uint64_t(placed.form.base),
                           uint64_t(image.longWordsPerGroup)};
        if (!simulator.read(region, image.data[g].data(), error))
          return false;
      }
      return codegen::unpackHost(placed.form, image, placed.info.type, tensor,
                                 error);
    };
    std::vector<reference::Value> inputs, outputs;
    for (const std::optional<Placed> &input : kernel.hostInputs) {
      if (!input)
        continue;
      reference::Tensor tensor;
      if (!readTensor(*input, tensor)) {
        error = "host node '" + kernel.profile.node + "': " + error;
        return false;
      }
      inputs.push_back(reference::Value(std::move(tensor)));
    }
    reference::Status status =
        HostPrograms.at(kernel.hostFunction)->run(inputs, outputs);
    if (!status.ok()) {
      error = "host node '" + kernel.profile.node + "': " + status.message();
      return false;
    }
    for (size_t i = 0; i < kernel.hostOutputs.size() && i < outputs.size();
         ++i) {
      const Placed &placed = kernel.hostOutputs[i];
      DramImage image;
      if (!codegen::packHost(placed.form, outputs[i].tensor, image, error)) {
        error = "host node '" + kernel.profile.node + "': " + error;
        return false;
      }
      for (unsigned g = 0; g < image.groups; ++g) {
        emu::Region region{emu::Space::DRAM, g, uint64_t(placed.form.base),
                           uint64_t(image.data[g].size())};
        if (!simulator.write(region, image.data[g].data(), error))
          return false;
      }
    }
    return true;
  }

  /// Each kernel's cycles: from the first event of its lines to the end of
  /// the last (kernels run one after another; each waits for its own
  /// transfers before the next starts).
  void attribute(const emu::Timing &timing, runtime::RunProfile &profile) const {
    std::vector<uint64_t> first(Kernels.size(), UINT64_MAX), last(Kernels.size(), 0);
    size_t k = 0;
    for (const emu::TraceEvent &event : timing.events()) {
      // Events come in statement order, and kernels in line order.
      while (k < Kernels.size() && event.Line > Kernels[k].lastLine)
        ++k;
      if (k == Kernels.size())
        break;
      if (event.Line < Kernels[k].firstLine)
        continue;
      first[k] = std::min(first[k], event.Start);
      last[k] = std::max(last[k], event.Start + event.Duration);
    }
    for (size_t i = 0; i < Kernels.size(); ++i) {
      NodeProfile node = Kernels[i].profile;
      node.cycles = first[i] == UINT64_MAX ? 0 : last[i] - first[i];
      profile.nodes.push_back(node);
    }
  }

  emu::Program Program;
  std::vector<Segment> Segments;
  std::unique_ptr<mlir::MLIRContext> HostContext;
  mlir::OwningOpRef<mlir::ModuleOp> HostModule;
  std::map<std::string, std::unique_ptr<OnnxProgram>> HostPrograms;
  std::vector<Placed> InputPlaces, OutputPlaces, ConstantPlaces;
  std::vector<TensorInfo> Inputs, Outputs;
  std::unique_ptr<llvm::MemoryBuffer> Constants;
  std::vector<KernelSpan> Kernels;
  std::string FloatDtype;
  int64_t ModelFlops = 0;
};

} // namespace

std::unique_ptr<Executable> runtime::loadCodegenDir(const std::string &dir,
                                                    std::string &error) {
  if (auto buffer = llvm::MemoryBuffer::getFile(dir + "/manifest.json")) {
    nlohmann::json manifest =
        nlohmann::json::parse((*buffer)->getBuffer().begin(),
                              (*buffer)->getBuffer().end(), nullptr, false);
    if (manifest.is_object() && manifest.contains("whole_graph_on_host"))
      return loadWholeGraphOnHost(
          dir + "/" + manifest.value("host", std::string("host.mlir")), error);
  }
  auto executable = std::make_unique<Emu2Executable>();
  if (!executable->load(dir, error))
    return nullptr;
  return executable;
}

std::string runtime::modelOfCodegenDir(const std::string &dir) {
  auto buffer = llvm::MemoryBuffer::getFile(dir + "/manifest.json");
  if (!buffer)
    return "";
  nlohmann::json manifest =
      nlohmann::json::parse((*buffer)->getBuffer().begin(),
                            (*buffer)->getBuffer().end(), nullptr, false);
  if (!manifest.is_object() || !manifest.contains("model") ||
      !manifest["model"].is_string())
    return "";
  return manifest["model"].get<std::string>();
}

std::vector<std::string>
runtime::hostNodesOfCodegenDir(const std::string &dir) {
  std::vector<std::string> nodes;
  auto buffer = llvm::MemoryBuffer::getFile(dir + "/partitions.json");
  if (!buffer)
    return nodes;
  nlohmann::json partitions =
      nlohmann::json::parse((*buffer)->getBuffer().begin(),
                            (*buffer)->getBuffer().end(), nullptr, false);
  if (!partitions.is_array())
    return nodes;
  for (const nlohmann::json &entry : partitions)
    if (entry.is_object() && entry.value("where", "") == "host")
      nodes.push_back(entry.value("node", "") + " (" +
                      entry.value("op_type", "") + ")");
  return nodes;
}
