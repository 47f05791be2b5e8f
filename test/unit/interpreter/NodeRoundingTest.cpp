//===- NodeRoundingTest.cpp - Hooks around pfvm:cpu's nodes ---------------===//
//
// PrepareOptions::rounding sees every top-level node by its identity (its
// name, or "node (index N, Op)" for one without), may replace what the
// node reads (for that node only: another reader of the value still gets
// the original, and an initializer is never changed for the next run),
// what it writes (for every later reader) and the kernel that computes it.
//
//===----------------------------------------------------------------------===//

#include "mncc/interpreter/OnnxInterpreter.h"

#include "mncc/dialects/onnx/OnnxDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mncc;

namespace {

// y = (x * w) + x, z = Neg(y); "mul" is named, the Add and Neg are not.
constexpr const char *kGraph = R"mlir(
func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %w = onnx.Initializer "w" dense<[2.0, 3.0, 4.0]> : tensor<3xf32>
  %m = "onnx.Mul"(%x, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> loc("mul")
  %y = "onnx.Add"(%m, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> loc(fused<"node (index 2, Add)">["m.onnx":0:0])
  %z = "onnx.Neg"(%y) : (tensor<3xf32>) -> tensor<3xf32>
  return %y, %z : tensor<3xf32>, tensor<3xf32>
}
)mlir";

/// Doubles the Mul's second input (w), adds 100 to the Add's output, and
/// computes the Neg itself as 7 - y; records the identities it saw.
class Hook : public NodeRounding {
public:
  mutable std::vector<std::string> seen;

  reference::Status
  roundInputs(const NodeView &node,
              const std::vector<const reference::Value *> &inputs,
              std::vector<reference::Value> &replacements) const override {
    seen.push_back(std::string(node.name) + "/" + std::string(node.opType));
    if (node.name == "mul") {
      reference::Tensor doubled = inputs[1]->tensor.clone();
      for (int64_t i = 0; i < doubled.numElements(); ++i)
        doubled.data<float>()[i] *= 2;
      replacements[1] = reference::Value(doubled);
    }
    return reference::Status::success();
  }
  reference::Status
  roundOutputs(const NodeView &node,
               const std::vector<reference::Value *> &outputs) const override {
    if (node.name == "node (index 2, Add)") {
      EXPECT_EQ((*node.outputTypes)[0], reference::DType::Float32);
      reference::Tensor shifted = outputs[0]->tensor.clone();
      for (int64_t i = 0; i < shifted.numElements(); ++i)
        shifted.data<float>()[i] += 100;
      *outputs[0] = reference::Value(shifted);
    }
    return reference::Status::success();
  }
  reference::KernelFunction kernelFor(const NodeView &node) const override {
    if (node.opType != "Neg")
      return {};
    return [](reference::KernelContext &context) {
      reference::Tensor result = context.input(0)->tensor.clone();
      for (int64_t i = 0; i < result.numElements(); ++i)
        result.data<float>()[i] = 7 - result.data<float>()[i];
      context.setOutput(0, reference::Value(result));
      return reference::Status::success();
    };
  }
};

std::vector<float> values(const reference::Value &value) {
  return value.tensor.toVector<float>();
}

TEST(NodeRounding, ReplacesInputsOutputsAndKernels) {
  MLIRContext context;
  context.loadDialect<func::FuncDialect, onnx::OnnxDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kGraph, &context);
  ASSERT_TRUE(module);
  auto function = module->lookupSymbol<func::FuncOp>("main");
  auto hook = std::make_shared<Hook>();
  PrepareOptions options;
  options.fuseActivations = false;
  options.concatInPlace = false;
  options.rounding = hook;
  auto program = OnnxProgram::prepare(function, nullptr, options);
  ASSERT_TRUE(succeeded(program));
  std::vector<reference::Value> inputs = {
      reference::Value(reference::Tensor::fromVector<float>(
          reference::DType::Float32, {3}, {1, 2, 3}))};
  for (int run = 0; run < 2; ++run) {
    std::vector<reference::Value> outputs;
    reference::Status status = (*program)->run(inputs, outputs);
    ASSERT_TRUE(status.ok()) << status.message();
    // x * 2w + x + 100: the Add read the original x, the second run the
    // original w (the doubled copy was the Mul's alone).
    EXPECT_EQ(values(outputs[0]), (std::vector<float>{105, 114, 127}));
    EXPECT_EQ(values(outputs[1]), (std::vector<float>{-98, -107, -120}));
  }
  EXPECT_EQ(hook->seen[0], "mul/Mul");
  EXPECT_EQ(hook->seen[1], "node (index 2, Add)/Add");
  // The Neg has no location of a node: an empty identity.
  EXPECT_EQ(hook->seen[2], "/Neg");

  // Without the hook the same program is ONNX's.
  auto plain = OnnxProgram::prepare(function);
  ASSERT_TRUE(succeeded(plain));
  std::vector<reference::Value> outputs;
  ASSERT_TRUE((*plain)->run(inputs, outputs).ok());
  EXPECT_EQ(values(outputs[0]), (std::vector<float>{3, 8, 15}));
}

} // namespace
