//===- HostDevice.cpp - pfvm:cpu as a device ------------------------------===//

#include "HostDevice.h"

#include "mncc/interpreter/OnnxInterpreter.h"
#include "mncc/onnx/Import.h"
#include "mncc/onnx/TensorIo.h"

#include "mncc/Registration.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mncc;
using namespace mncc::runtime;

namespace {

class HostExecutable : public Executable {
public:
  /// `context` owns `module` when the executable owns its context (a
  /// codegen_dir's host.mlir); null when the caller's context does.
  HostExecutable(std::unique_ptr<MLIRContext> context,
                 OwningOpRef<ModuleOp> module,
                 std::unique_ptr<OnnxProgram> program)
      : Context(std::move(context)), Module(std::move(module)),
        Program(std::move(program)) {
    auto describe = [](const std::vector<ProgramValueInfo> &infos) {
      std::vector<TensorInfo> result;
      for (const ProgramValueInfo &info : infos) {
        TensorInfo tensor;
        tensor.name = info.name;
        if (auto type = llvm::dyn_cast<RankedTensorType>(info.type)) {
          tensor.type = referenceDTypeOf(type.getElementType());
          tensor.shape.assign(type.getShape().begin(), type.getShape().end());
        } else {
          llvm::raw_string_ostream os(tensor.valueType);
          info.type.print(os);
        }
        result.push_back(tensor);
      }
      return result;
    };
    Inputs = describe(Program->inputs());
    Outputs = describe(Program->outputs());
  }

  const std::vector<TensorInfo> &inputs() const override { return Inputs; }
  const std::vector<TensorInfo> &outputs() const override { return Outputs; }

  bool run(const std::vector<reference::Tensor> &inputs,
           std::vector<reference::Tensor> &outputs, const RunOptions &options,
           runtime::RunProfile *profile, std::string &error) override {
    std::vector<reference::Value> in, out;
    for (const reference::Tensor &tensor : inputs)
      in.push_back(reference::Value(tensor));
    if (!runValues(in, out, options, profile, error))
      return false;
    outputs.clear();
    for (auto [i, value] : llvm::enumerate(out)) {
      if (!value.isTensor()) {
        error = "output '" + Outputs[i].name +
                "' is a sequence or optional, not a tensor";
        return false;
      }
      outputs.push_back(std::move(value.tensor));
    }
    return true;
  }

  bool runValues(const std::vector<reference::Value> &inputs,
                 std::vector<reference::Value> &outputs, const RunOptions &,
                 runtime::RunProfile *, std::string &error) override {
    outputs.clear();
    reference::Status status = Program->run(inputs, outputs);
    if (!status.ok()) {
      error = status.message();
      return false;
    }
    return true;
  }

private:
  // Declared first: destroyed after the module and program that use it.
  std::unique_ptr<MLIRContext> Context;
  OwningOpRef<ModuleOp> Module;
  std::unique_ptr<OnnxProgram> Program;
  std::vector<TensorInfo> Inputs, Outputs;
};

} // namespace

std::unique_ptr<Executable> runtime::loadModelOnHost(
    MLIRContext &context, const std::string &modelPath,
    const std::vector<std::pair<std::string, std::vector<int64_t>>>
        &inputShapes,
    std::string &error) {
  return loadModelOnHostWith(context, modelPath, inputShapes, {}, error);
}

std::unique_ptr<Executable> runtime::loadModelOnHostWith(
    MLIRContext &context, const std::string &modelPath,
    const std::vector<std::pair<std::string, std::vector<int64_t>>>
        &inputShapes,
    const PrepareOptions &prepareOptions, std::string &error) {
  OnnxImportOptions options;
  options.inputShapes = inputShapes;
  OwningOpRef<ModuleOp> module = importOnnxFile(modelPath, &context, options);
  if (!module) {
    error = "cannot import " + modelPath;
    return nullptr;
  }
  auto functions = module->getOps<func::FuncOp>();
  if (functions.empty()) {
    error = modelPath + " has no graph";
    return nullptr;
  }
  auto program =
      OnnxProgram::prepare(*functions.begin(), nullptr, prepareOptions);
  if (failed(program)) {
    error = "pfvm:cpu cannot run " + modelPath;
    return nullptr;
  }
  return std::make_unique<HostExecutable>(nullptr, std::move(module),
                                          std::move(*program));
}

std::unique_ptr<Executable>
runtime::loadWholeGraphOnHost(const std::string &hostMlirPath,
                              std::string &error) {
  DialectRegistry registry;
  registerAllDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  ParserConfig config(context.get());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(hostMlirPath, config);
  if (!module) {
    error = hostMlirPath + ": cannot be read";
    return nullptr;
  }
  auto functions = module->getOps<func::FuncOp>();
  if (functions.empty()) {
    error = hostMlirPath + " has no graph";
    return nullptr;
  }
  auto program = OnnxProgram::prepare(*functions.begin());
  if (failed(program)) {
    error = "pfvm:cpu cannot run the graph of " + hostMlirPath;
    return nullptr;
  }
  return std::make_unique<HostExecutable>(std::move(context), std::move(module),
                                          std::move(*program));
}
