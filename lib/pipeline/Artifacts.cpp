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
#include "mncc/dialects/onnx/OnnxOps.h"
#include "mncc/onnx/Import.h"
#include "mncc/onnx/TensorIo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
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
  entry["shape"] =
      std::vector<int64_t>(type.getShape().begin(), type.getShape().end());
  Type host =
      buffer.getHostType() ? *buffer.getHostType() : type.getElementType();
  entry["host_type"] = hostTypeName(host);
  entry["device_type"] = std::string(deviceTypeName(
      deviceTypeOf(type.getElementType()).value_or(DeviceType::Single)));
  if (auto layoutAttr = graph::getLayout(type))
    entry["layout"] = layoutAttr.getText();
  entry["dram"] = dramJson(buffer);
  return entry;
}

/// The element type a host node computes a tensor in: the device's half
/// is read as float32; everything else in its own type.
Type hostComputeType(Type element) {
  if (element.isF16())
    return Float32Type::get(element.getContext());
  return element;
}

/// The one-node function the host runs for a host kernel: the node's
/// operator and ONNX attributes over tensors of its buffers' shapes.
FailureOr<func::FuncOp> buildHostFunction(l3::KernelOp kernel,
                                          OpBuilder &builder, StringRef name) {
  SymbolTableCollection symbols;
  auto bufferOf = [&](Attribute attribute) -> l3::BufferOp {
    auto symbol = llvm::cast<SymbolRefAttr>(attribute);
    if (symbol.getRootReference() == l3::kNoneBuffer)
      return {};
    return symbols.lookupNearestSymbolFrom<l3::BufferOp>(kernel, symbol);
  };
  auto hostType = [](l3::BufferOp buffer) -> Type {
    auto type = llvm::cast<RankedTensorType>(buffer.getType());
    return RankedTensorType::get(type.getShape(),
                                 hostComputeType(type.getElementType()));
  };
  bool segmented = kernel.getOnnx().contains("operandSegmentSizes");
  SmallVector<Type> argumentTypes, resultTypes;
  for (Attribute input : kernel.getInputs())
    if (l3::BufferOp buffer = bufferOf(input))
      argumentTypes.push_back(hostType(buffer));
  for (Attribute output : kernel.getOutputs())
    resultTypes.push_back(hostType(bufferOf(output)));
  auto function = builder.create<func::FuncOp>(
      kernel.getLoc(), name,
      builder.getFunctionType(argumentTypes, resultTypes));
  Block *body = function.addEntryBlock();
  OpBuilder inside = OpBuilder::atBlockEnd(body);
  SmallVector<Value> operands;
  unsigned next = 0;
  for (Attribute input : kernel.getInputs()) {
    if (bufferOf(input)) {
      operands.push_back(body->getArgument(next++));
      continue;
    }
    // An omitted input: an empty segment, or an onnx.None operand.
    if (!segmented) {
      OperationState none(kernel.getLoc(), "onnx.None");
      none.addTypes(NoneType::get(builder.getContext()));
      operands.push_back(inside.create(none)->getResult(0));
    }
  }
  OperationState state(kernel.getLoc(), "onnx." + kernel.getOpType().str());
  state.addOperands(operands);
  state.addAttributes(kernel.getOnnx().getValue());
  state.addTypes(resultTypes);
  Operation *node = inside.create(state);
  inside.create<func::ReturnOp>(kernel.getLoc(), node->getResults());
  if (failed(verify(function)))
    return kernel.emitError("node '")
           << kernel.getNode() << "': the host cannot build its node";
  return function;
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
  nlohmann::json partitions = nlohmann::json::array();
  int64_t totalFlops = 0;
  OwningOpRef<ModuleOp> hostModule = ModuleOp::create(module.getLoc());
  OpBuilder hostBuilder(hostModule->getBodyRegion());
  unsigned hostNodes = 0;
  SymbolTableCollection symbolTables;
  module.walk([&](l3::KernelOp kernel) {
    nlohmann::json entry;
    bool onHost = kernel.getGenerator() == l3::kHostGenerator;
    nlohmann::json partition;
    partition["node"] = kernel.getNode().str();
    partition["op_type"] = kernel.getOpType().str();
    partition["where"] = onHost ? "host" : "device";
    partition["why"] =
        onHost ? kernel->getAttrOfType<StringAttr>("host_reason").str()
               : "kernel " + kernel.getGenerator().value_or("").str();
    partitions.push_back(partition);
    if (onHost) {
      std::string name = "host_" + std::to_string(hostNodes++);
      hostBuilder.setInsertionPointToEnd(hostModule->getBody());
      if (failed(buildHostFunction(kernel, hostBuilder, name))) {
        failedAny = true;
        return;
      }
      entry["host_function"] = name;
      nlohmann::json ins = nlohmann::json::array(),
                     outs = nlohmann::json::array();
      for (Attribute input : kernel.getInputs()) {
        auto symbol = llvm::cast<SymbolRefAttr>(input);
        auto buffer = symbol.getRootReference() == l3::kNoneBuffer
                          ? l3::BufferOp()
                          : symbolTables.lookupNearestSymbolFrom<l3::BufferOp>(
                                kernel, symbol);
        ins.push_back(buffer ? bufferJson(buffer) : nlohmann::json());
      }
      for (Attribute output : kernel.getOutputs())
        outs.push_back(
            bufferJson(symbolTables.lookupNearestSymbolFrom<l3::BufferOp>(
                kernel, llvm::cast<SymbolRefAttr>(output))));
      for (nlohmann::json *list : {&ins, &outs})
        for (nlohmann::json &tensor : *list)
          if (!tensor.is_null()) {
            // The host computes a half tensor as float32.
            if (tensor["device_type"] == "half")
              tensor["host_type"] = "float";
            else if (tensor["device_type"] == "single" ||
                     tensor["device_type"] == "double")
              tensor["host_type"] =
                  tensor["device_type"] == "single" ? "float" : "double";
          }
      entry["inputs"] = ins;
      entry["outputs"] = outs;
    }
    entry["node"] = kernel.getNode().str();
    entry["op_type"] = kernel.getOpType().str();
    entry["generator"] = kernel.getGenerator().value_or("").str();
    entry["variant"] = kernel.getVariant().value_or("").str();
    // What the device reference (runtime/DeviceReference.cpp) follows: the
    // formats the kernel reads and writes, in the node's input and output
    // order (null for an omitted input), and its matrix unit.
    for (auto [key, list] :
         {std::pair{"input_types", kernel.getInputs()},
          std::pair{"output_types", kernel.getOutputs()}}) {
      nlohmann::json types = nlohmann::json::array();
      for (Attribute operand : list) {
        auto symbol = llvm::cast<SymbolRefAttr>(operand);
        auto buffer = symbol.getRootReference() == l3::kNoneBuffer
                          ? l3::BufferOp()
                          : symbolTables.lookupNearestSymbolFrom<l3::BufferOp>(
                                kernel, symbol);
        types.push_back(buffer ? bufferJson(buffer)["device_type"]
                               : nlohmann::json());
      }
      entry[key] = types;
    }
    if (std::string node = onnxNodeIdentity(kernel.getLoc()); !node.empty())
      entry["onnx_node"] = node;
    if (auto unit = kernel->getAttrOfType<StringAttr>("matrix_unit"))
      entry["matrix_unit"] = unit.str();
    if (std::optional<StringRef> activation = kernel.getActivation())
      entry["activation"] = activation->str();
    // A Conv over packed taps cuts its blocks along X's rows (docs/codegen.md
    // X9): the device reference follows it.
    if (auto parameters = kernel.getParameters())
      if (auto packed = parameters->getAs<StringAttr>("packed_taps"))
        entry["packed_taps"] = packed.str();
    for (const char *name : {"first_line", "last_line", "steps", "flops"})
      if (auto value = kernel->getAttrOfType<IntegerAttr>(name))
        entry[name] = value.getInt();
    if (auto flops = kernel->getAttrOfType<IntegerAttr>("flops"))
      totalFlops += flops.getInt();
    kernels.push_back(entry);
  });
  if (failedAny)
    return failure();
  manifest["kernels"] = kernels;
  manifest["model_flops"] = totalFlops;
  module.walk([&](l3::ScheduleOp schedule) {
    for (const char *name : {"scheduler", "scheduled_as"})
      if (auto value = schedule->getAttrOfType<StringAttr>(name))
        manifest[name] = value.str();
    if (auto value = schedule->getAttrOfType<IntegerAttr>("dram_long_words"))
      manifest["dram_long_words_per_group"] = value.getInt();
  });
  if (hostNodes) {
    std::string text;
    llvm::raw_string_ostream os(text);
    OpPrintingFlags flags;
    hostModule->print(os, flags);
    if (llvm::Error error = dir.writeFile("host.mlir", text))
      return module.emitError("host.mlir: ")
             << llvm::toString(std::move(error));
    manifest["host"] = "host.mlir";
  }
  if (llvm::Error error = dir.writeFile(
          "partitions.json", nlohmann::json(partitions).dump(2) + "\n"))
    return module.emitError("partitions.json: ")
           << llvm::toString(std::move(error));
  if (llvm::Error error = dir.writeFile("constants.bin", blob))
    return module.emitError("constants.bin: ")
           << llvm::toString(std::move(error));
  if (llvm::Error error =
          dir.writeFile("manifest.json", manifest.dump(2) + "\n"))
    return module.emitError("manifest.json: ")
           << llvm::toString(std::move(error));
  return success();
}

std::optional<std::string>
mncc::pipeline::wholeGraphHostReason(ModuleOp module) {
  auto printed = [](Type type) {
    std::string text;
    llvm::raw_string_ostream os(text);
    type.print(os);
    return text;
  };
  std::optional<std::string> reason;
  auto check = [&](Value value, const std::string &where) {
    Type type = value.getType();
    if (reason || llvm::isa<NoneType>(type))
      return;
    auto tensor = llvm::dyn_cast<RankedTensorType>(type);
    std::string what;
    if (llvm::isa<onnx::SeqType>(type))
      what = "a sequence, " + printed(type) + ",";
    else if (llvm::isa<onnx::OptType>(type))
      what = "an optional, " + printed(type) + ",";
    else if (!tensor)
      what = "a value of type " + printed(type);
    else if (!tensor.hasStaticShape())
      what = "a tensor whose shape is known only at run time (" +
             printed(type) + ")";
    else if (!deviceHolds(referenceDTypeOf(tensor.getElementType())))
      what = "a tensor of " + printed(tensor.getElementType()) +
             ", which the device has no format for";
    if (!what.empty())
      reason = "the graph holds " + what + " (" + where + ")";
  };
  for (auto function : module.getOps<func::FuncOp>()) {
    // A sequence or optional input or output is a value of no device
    // form like any other: the runtimes pass such values to pfvm:cpu.
    for (BlockArgument argument : function.getArguments()) {
      std::string name = "input " + std::to_string(argument.getArgNumber());
      if (auto names = function.getArgAttrOfType<StringAttr>(
              argument.getArgNumber(), "onnx.name"))
        name = "input '" + names.str() + "'";
      check(argument, name);
    }
    function.walk([&](Operation *op) {
      if (reason || llvm::isa<func::FuncOp, func::ReturnOp>(op))
        return;
      std::string node = "node '" + nodeNameOf(op) + "'";
      // A subgraph's body runs once per iteration or branch, decided at
      // run time: no device program holds it, and the graph's values
      // around it would cross to the host and back at every node.
      if (op->getNumRegions() != 0 && onnxOpTypeOf(op) != "Constant") {
        reason = "the graph holds " + node + " (" + onnxOpTypeOf(op) +
                 "), an operator with subgraphs, which the device does not "
                 "run";
        return;
      }
      // Gradient differentiates through the nodes that compute its
      // inputs: only pfvm:cpu's interpreter, holding the whole graph,
      // knows them.
      if (onnxOpTypeOf(op) == "Gradient") {
        reason = "the graph holds " + node +
                 " (Gradient), which differentiates through the graph's "
                 "other nodes";
        return;
      }
      // The device has no NaN (docs/target/mncore2.md, "Number formats"):
      // a NaN staged into DRAM or computed there is an infinity, for host
      // nodes too, which read their inputs from DRAM. Only pfvm:cpu
      // running the whole graph tells a NaN from an infinity.
      std::string opType = onnxOpTypeOf(op);
      if (opType == "IsNaN" || opType == "IsInf") {
        reason = "the graph holds " + node + " (" + opType +
                 "), which tells NaN from infinity; the device has no NaN";
        return;
      }
      for (Value result : op->getResults())
        check(result, node);
    });
  }
  return reason;
}

LogicalResult mncc::pipeline::writeWholeHostArtifacts(
    ModuleOp module, const CompileOptions &options, const std::string &reason,
    CodegenDirTransaction &dir) {
  nlohmann::json manifest;
  manifest["format"] = "mncc codegen_dir";
  manifest["version"] = 1;
  if (auto model = module->getAttrOfType<StringAttr>("mncc.model"))
    manifest["model"] = model.str();
  manifest["float_dtype"] = options.getText(OptionId::float_dtype);
  manifest["whole_graph_on_host"] = reason;
  manifest["host"] = "host.mlir";
  // The graph's own nodes: a subgraph's nodes run inside theirs.
  nlohmann::json partitions = nlohmann::json::array();
  for (auto function : module.getOps<func::FuncOp>())
    for (Operation &op : function.getBody().getOps()) {
      if (llvm::isa<func::ReturnOp, onnx::InitializerOp, onnx::NoneOp>(op) ||
          onnxOpTypeOf(&op) == "Constant")
        continue;
      nlohmann::json partition;
      partition["node"] = nodeNameOf(&op);
      partition["op_type"] = onnxOpTypeOf(&op);
      partition["where"] = "host";
      partition["why"] = reason + ": the whole graph runs on pfvm:cpu";
      partitions.push_back(partition);
    }
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, OpPrintingFlags());
  if (llvm::Error error = dir.writeFile("host.mlir", text))
    return module.emitError("host.mlir: ") << llvm::toString(std::move(error));
  if (llvm::Error error = dir.writeFile(
          "partitions.json", nlohmann::json(partitions).dump(2) + "\n"))
    return module.emitError("partitions.json: ")
           << llvm::toString(std::move(error));
  if (llvm::Error error =
          dir.writeFile("manifest.json", manifest.dump(2) + "\n"))
    return module.emitError("manifest.json: ")
           << llvm::toString(std::move(error));
  return success();
}
