//===- OnnxRunFuzzer.cpp - libFuzzer target: import and run on pfvm:cpu ---===//
//
// A small ONNX model (text syntax or binary), optionally followed by a line
// "---" and bytes for its inputs, is imported, prepared and run on
// pfvm:cpu. Whatever the model, its attributes, initializers and inputs,
// the result must be outputs or an error Status; never a crash, an abort,
// undefined behaviour or an allocation past the memory limit (4 MiB). Built by
// `make fuzz-run`.
//
// Dynamic input dimensions are pinned to 2 (a second import with
// --input-shape), and input elements are the trailing bytes, repeated.
// Models with a Loop are skipped: a trip count from data may be any
// length, which is not an error.
//
//===----------------------------------------------------------------------===//

#include "mncc/interpreter/OnnxInterpreter.h"
#include "mncc/onnx/Import.h"
#include "mncc/onnx/TensorIo.h"
#include "mncc/reference/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

using namespace mlir;

namespace {

/// Inputs of `function` filled with `bytes` repeated; false when one is
/// not a static tensor of a numeric type.
bool makeInputs(func::FuncOp function, llvm::StringRef bytes,
                std::vector<mncc::reference::Value> &inputs) {
  for (Type type : function.getArgumentTypes()) {
    auto ranked = llvm::dyn_cast<RankedTensorType>(type);
    if (!ranked || !ranked.hasStaticShape())
      return false;
    mncc::reference::DType dtype =
        mncc::referenceDTypeOf(ranked.getElementType());
    if (mncc::reference::dtypeSize(dtype) == 0)
      return false;
    std::vector<int64_t> shape(ranked.getShape().begin(),
                               ranked.getShape().end());
    mncc::reference::TensorSize size =
        mncc::reference::checkTensorSize(dtype, shape);
    if (!size.ok())
      return false;
    mncc::reference::Tensor tensor(dtype, shape);
    auto *out = static_cast<unsigned char *>(tensor.raw());
    for (uint64_t i = 0; !bytes.empty() && i < size.bytes; ++i)
      out[i] = bytes[i % bytes.size()];
    // Booleans must be 0 or 1.
    if (dtype == mncc::reference::DType::Bool)
      for (uint64_t i = 0; i < size.bytes; ++i)
        out[i] &= 1;
    inputs.emplace_back(std::move(tensor));
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Small enough that a run stays fast: a kernel's work grows with the
  // data it touches, and with 64 MiB a Conv over a 1x2x400000x4 input the
  // mutator had made ran past the 30 s timeout under ASan. A larger tensor
  // is an error, which is a path worth fuzzing too.
  static bool limited = [] {
    mncc::reference::setMemoryLimit(4 << 20);
    return true;
  }();
  (void)limited;
  llvm::StringRef all(reinterpret_cast<const char *>(data), size);
  auto [model, inputBytes] = all.split("\n---\n");

  MLIRContext context;
  context.disableMultithreading();
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> module =
      mncc::importOnnxBytes(model, "fuzz.onnx", &context);
  if (!module)
    return 0;
  auto functions = module->getOps<func::FuncOp>();
  if (functions.empty())
    return 0;
  func::FuncOp function = *functions.begin();

  // Pin dynamic dimensions by importing again with input shapes.
  mncc::OnnxImportOptions options;
  bool dynamic = false;
  for (auto [index, type] : llvm::enumerate(function.getArgumentTypes())) {
    auto ranked = llvm::dyn_cast<RankedTensorType>(type);
    auto name = function.getArgAttrOfType<StringAttr>(index, "onnx.name");
    if (!ranked || !name || ranked.hasStaticShape())
      continue;
    std::vector<int64_t> shape(ranked.getShape().begin(),
                               ranked.getShape().end());
    for (int64_t &dim : shape)
      if (ShapedType::isDynamic(dim))
        dim = 2;
    options.inputShapes.emplace_back(name.str(), shape);
    dynamic = true;
  }
  if (dynamic) {
    module = mncc::importOnnxBytes(model, "fuzz.onnx", &context, options);
    if (!module)
      return 0;
    functions = module->getOps<func::FuncOp>();
    function = *functions.begin();
  }
  bool hasLoop = false;
  module->walk([&](Operation *op) {
    hasLoop |= op->getName().getStringRef() == "onnx.Loop";
  });
  if (hasLoop)
    return 0;

  std::vector<mncc::reference::Value> inputs, outputs;
  if (!makeInputs(function, inputBytes, inputs))
    return 0;
  auto program = mncc::OnnxProgram::prepare(function);
  if (failed(program))
    return 0;
  (void)(*program)->run(inputs, outputs);
  return 0;
}
