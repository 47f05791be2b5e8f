//===- Artifacts.cpp - The files the L3 and emit phases add ---------------===//
//
//   l3ir.txt        the schedule after the l3 phase (constants elided)
//   program.vsm     the linked MN-Core 2 assembly
//   constants.bin   every constant's DRAM image, 4 KiB aligned so that a
//                   runtime can map the file and stage from it
//   manifest.json   what a runtime needs to run the program: the graph's
//                   inputs and outputs (shape, host and device type, layout,
//                   DRAM form and address), the constants and where their
//                   images are, and each kernel's lines of program.vsm
//
//===----------------------------------------------------------------------===//

#include "Artifacts.h"

#include "mncc/codegen/MLIRBridge.h"
#include "mncc/onnx/TensorIo.h"

#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mncc;
using namespace mncc::codegen;

namespace {

constexpr uint64_t kConstantAlignment = 4096;

std::string hostTypeName(Type element) {
  return reference::dtypeName(referenceDTypeOf(element));
}

nlohmann::json dramJson(l3::BufferOp buffer) {
  DramForm form = formOfBuffer(buffer);
  nlohmann::json dram;
  dram["address"] = form.base;
  dram["groups"] = form.groups;
  dram["long_words_per_group"] = buffer.getLongWords();
  dram["order"] = form.order;
  dram["rows"] = form.rows();
  dram["rows_per_group"] = form.rowsPerGroup();
  dram["row_long_words"] = form.rowLongWords();
  dram["inner_padded"] = form.innerPadded();
  return dram;
}

nlohmann::json bufferJson(l3::BufferOp buffer) {
  auto type = llvm::cast<RankedTensorType>(buffer.getType());
  nlohmann::json entry;
  entry["name"] = buffer.getName().value_or(buffer.getSymName()).str();
  if (buffer.getIndex())
    entry["index"] = *buffer.getIndex();
  entry["symbol"] = buffer.getSymName().str();
  entry["shape"] = std::vector<int64_t>(type.getShape().begin(),
                                        type.getShape().end());
  Type host = buffer.getHostType() ? *buffer.getHostType()
                                   : type.getElementType();
  entry["host_type"] = hostTypeName(host);
  entry["device_type"] = std::string(deviceTypeName(
      deviceTypeOf(type.getElementType()).value_or(DeviceType::Single)));
  if (auto layoutAttr = graph::getLayout(type))
    entry["layout"] = layoutAttr.getText();
  entry["dram"] = dramJson(buffer);
  return entry;
}

} // namespace

LogicalResult mncc::pipeline::writeL3Artifacts(ModuleOp module,
                                               CodegenDirTransaction &dir) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  flags.elideLargeElementsAttrs(16);
  flags.elideLargeResourceString(64);
  module.print(os, flags);
  if (llvm::Error error = dir.writeFile("l3ir.txt", text))
    return module.emitError("l3ir.txt: ") << llvm::toString(std::move(error));
  return success();
}

LogicalResult mncc::pipeline::writeEmitArtifacts(ModuleOp module,
                                                 const CompileOptions &options,
                                                 CodegenDirTransaction &dir) {
  auto programs = module.getOps<l3::ProgramOp>();
  if (programs.empty())
    return module.emitError("the emit phase produced no l3.program");
  l3::ProgramOp program = *programs.begin();
  if (llvm::Error error = dir.writeFile("program.vsm", program.getText()))
    return module.emitError("program.vsm: ")
           << llvm::toString(std::move(error));

  nlohmann::json manifest;
  manifest["format"] = "mncc codegen_dir";
  manifest["version"] = 1;
  manifest["program"] = "program.vsm";
  if (auto model = module->getAttrOfType<StringAttr>("mncc.model"))
    manifest["model"] = model.str();
  manifest["float_dtype"] = options.getText(OptionId::float_dtype);
  manifest["steps"] = program.getSteps();
  nlohmann::json inputs = nlohmann::json::array();
  nlohmann::json outputs = nlohmann::json::array();
  nlohmann::json constants = nlohmann::json::array();
  std::string blob;
  ConstantCache cache;
  bool failedAny = false;
  module.walk([&](l3::BufferOp buffer) {
    if (buffer.getKind() == "input")
      inputs.push_back(bufferJson(buffer));
    else if (buffer.getKind() == "output")
      outputs.push_back(bufferJson(buffer));
    if (buffer.getKind() != "constant")
      return;
    FailureOr<DramImage> image = packConstantBuffer(buffer, module, cache);
    if (failed(image)) {
      failedAny = true;
      return;
    }
    nlohmann::json entry = bufferJson(buffer);
    if (buffer.getArrangement())
      entry["arrangement"] = buffer.getArrangement()->str();
    blob.resize((blob.size() + kConstantAlignment - 1) / kConstantAlignment *
                kConstantAlignment);
    entry["file"] = "constants.bin";
    entry["offset"] = blob.size();
    entry["image_groups"] = image->groups;
    entry["image_long_words_per_group"] = image->longWordsPerGroup;
    for (unsigned g = 0; g < image->groups; ++g)
      blob.append(reinterpret_cast<const char *>(image->data[g].data()),
                  image->data[g].size() * sizeof(uint64_t));
    entry["bytes"] = blob.size() - entry["offset"].get<size_t>();
    constants.push_back(entry);
  });
  if (failedAny)
    return failure();
  auto byIndex = [](const nlohmann::json &a, const nlohmann::json &b) {
    return a["index"].get<int64_t>() < b["index"].get<int64_t>();
  };
  std::sort(inputs.begin(), inputs.end(), byIndex);
  std::sort(outputs.begin(), outputs.end(), byIndex);
  manifest["inputs"] = inputs;
  manifest["outputs"] = outputs;
  manifest["constants"] = constants;

  nlohmann::json kernels = nlohmann::json::array();
  int64_t totalFlops = 0;
  module.walk([&](l3::KernelOp kernel) {
    nlohmann::json entry;
    entry["node"] = kernel.getNode().str();
    entry["op_type"] = kernel.getOpType().str();
    entry["generator"] = kernel.getGenerator().value_or("").str();
    entry["variant"] = kernel.getVariant().value_or("").str();
    for (const char *name : {"first_line", "last_line", "steps", "flops"})
      if (auto value = kernel->getAttrOfType<IntegerAttr>(name))
        entry[name] = value.getInt();
    if (auto flops = kernel->getAttrOfType<IntegerAttr>("flops"))
      totalFlops += flops.getInt();
    kernels.push_back(entry);
  });
  manifest["kernels"] = kernels;
  manifest["model_flops"] = totalFlops;
  module.walk([&](l3::ScheduleOp schedule) {
    for (const char *name : {"scheduler", "scheduled_as"})
      if (auto value = schedule->getAttrOfType<StringAttr>(name))
        manifest[name] = value.str();
    if (auto value = schedule->getAttrOfType<IntegerAttr>("dram_long_words"))
      manifest["dram_long_words_per_group"] = value.getInt();
  });
  if (llvm::Error error = dir.writeFile("constants.bin", blob))
    return module.emitError("constants.bin: ")
           << llvm::toString(std::move(error));
  if (llvm::Error error = dir.writeFile("manifest.json", manifest.dump(2) + "\n"))
    return module.emitError("manifest.json: ")
           << llvm::toString(std::move(error));
  return success();
}
