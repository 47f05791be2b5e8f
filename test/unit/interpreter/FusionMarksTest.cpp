//===- FusionMarksTest.cpp - pfvm:cpu follows the pfvm passes' marks ------===//
//
// What pfvm:cpu runs fused is decided by pfvm-fuse-activations and
// pfvm-concat-in-place (passes/pfvm), not by the interpreter: prepare()
// follows the marks a graph carries (onnx.fused_activation,
// onnx.in_place_inputs), ignores one whose conditions no longer hold, and
// by default runs the two passes on a copy first. Each way gives the same
// bits as running every node apart.
//
//===----------------------------------------------------------------------===//

#include "mncc/interpreter/OnnxInterpreter.h"

#include "mncc/dialects/onnx/OnnxDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace mlir;
using namespace mncc;

namespace {

// A Conv feeding a Relu, with the Conv's result used nowhere else; @stale
// also returns the Conv's result, so a mark on it no longer holds. A
// second Conv and Relu feed a Concat with the first Relu and the graph
// input (the input cannot be written in place).
constexpr const char *kGraph = R"mlir(
func.func @main(%x: tensor<1x1x3x3xf32>) -> tensor<1x5x3x3xf32> {
  %w = onnx.Initializer "w" dense<[[[[1.5]]], [[[-0.75]]]]> : tensor<2x1x1x1xf32>
  %b = onnx.Initializer "b" dense<[0.25, -0.125]> : tensor<2xf32>
  %c = "onnx.Conv"(%x, %w, %b) FUSED : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %r = "onnx.Relu"(%c) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %v = onnx.Initializer "v" dense<[[[[-2.0]]], [[[0.5]]]]> : tensor<2x1x1x1xf32>
  %d = "onnx.Conv"(%x, %v) : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = "onnx.Concat"(%r, %d, %x) {axis = 1 : i64 INPLACE} : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x5x3x3xf32>
  return %y : tensor<1x5x3x3xf32>
}
func.func @stale(%x: tensor<1x1x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %w = onnx.Initializer "w" dense<[[[[1.5]]], [[[-0.75]]]]> : tensor<2x1x1x1xf32>
  %c = "onnx.Conv"(%x, %w) FUSED : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %r = "onnx.Relu"(%c) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %r, %c : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}
)mlir";

std::string graphText(llvm::StringRef fused, llvm::StringRef inPlace) {
  std::string text = kGraph;
  for (auto [placeholder, value] :
       {std::pair<std::string, std::string>{"FUSED", fused.str()},
        std::pair<std::string, std::string>{"INPLACE", inPlace.str()}})
    for (size_t at; (at = text.find(placeholder)) != std::string::npos;)
      text.replace(at, placeholder.size(), value);
  return text;
}

class FusionMarks : public ::testing::Test {
protected:
  FusionMarks() { context.loadDialect<func::FuncDialect, onnx::OnnxDialect>(); }

  /// Parses the graph with the given marks (empty: none).
  func::FuncOp parse(llvm::StringRef name, llvm::StringRef fused = "",
                     llvm::StringRef inPlace = "") {
    module = parseSourceString<ModuleOp>(graphText(fused, inPlace), &context);
    if (!module)
      return nullptr;
    return module->lookupSymbol<func::FuncOp>(name);
  }

  /// Prepares and runs `function` on a fixed input with negative and
  /// positive values; the profile's operator names go to `profileNames`.
  std::vector<reference::Tensor> run(func::FuncOp function,
                                     const PrepareOptions &options) {
    profileNames.clear();
    auto program = OnnxProgram::prepare(function, nullptr, options);
    if (failed(program)) {
      ADD_FAILURE() << "prepare failed";
      return {};
    }
    std::vector<reference::Value> inputs = {
        reference::Tensor::fromVector<float>(
            reference::DType::Float32, {1, 1, 3, 3},
            {-1.0f, 0.5f, 2.0f, -0.25f, 0.0f, 1.25f, -3.0f, 0.75f, -0.5f})};
    std::vector<reference::Value> outputs;
    RunProfile profile;
    reference::Status status = (*program)->run(inputs, outputs, &profile);
    EXPECT_TRUE(status.ok()) << status.message();
    for (const auto &[name, entry] : profile.perOperator)
      profileNames.push_back(name);
    std::vector<reference::Tensor> tensors;
    for (reference::Value &output : outputs)
      tensors.push_back(output.tensor);
    return tensors;
  }

  bool ran(llvm::StringRef name) const {
    return llvm::is_contained(profileNames, name.str());
  }

  static PrepareOptions marksOnly() {
    PrepareOptions options;
    options.runFusionPasses = false;
    return options;
  }

  static PrepareOptions apart() {
    PrepareOptions options;
    options.fuseActivations = false;
    options.concatInPlace = false;
    return options;
  }

  static void expectSameBits(const std::vector<reference::Tensor> &a,
                             const std::vector<reference::Tensor> &b) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i].numElements(), b[i].numElements());
      EXPECT_EQ(0, std::memcmp(a[i].data<float>(), b[i].data<float>(),
                               a[i].numElements() * sizeof(float)))
          << "output " << i;
    }
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::vector<std::string> profileNames;
};

// Without marks and without the passes, the interpreter fuses nothing on
// its own.
TEST_F(FusionMarks, NoMarksNoFusion) {
  func::FuncOp function = parse("main");
  ASSERT_TRUE(function);
  std::vector<reference::Tensor> reference = run(function, apart());
  std::vector<reference::Tensor> unmarked = run(function, marksOnly());
  EXPECT_TRUE(ran("Conv"));
  EXPECT_TRUE(ran("Relu"));
  EXPECT_TRUE(ran("Concat"));
  EXPECT_FALSE(ran("Conv+Relu"));
  EXPECT_FALSE(ran("Concat (in place)"));
  expectSameBits(reference, unmarked);
}

// The marks the passes leave are followed: the Relu runs inside its Conv,
// both Convs write into the Concat (the first through its fused Relu), and
// the graph input is copied.
TEST_F(FusionMarks, MarksAreFollowed) {
  func::FuncOp function = parse("main", "{onnx.fused_activation = \"Relu\"}",
                                ", onnx.in_place_inputs = array<i64: 0, 1>");
  ASSERT_TRUE(function);
  std::vector<reference::Tensor> reference = run(function, apart());
  std::vector<reference::Tensor> marked = run(function, marksOnly());
  EXPECT_TRUE(ran("Conv+Relu"));
  EXPECT_TRUE(ran("Relu (fused)"));
  EXPECT_TRUE(ran("Concat (in place)"));
  expectSameBits(reference, marked);
}

// A mark that no longer holds is ignored: the Conv's result is also a
// graph output, so the Relu cannot run inside it; a Concat input that is
// not a Conv's result (the graph input) is copied.
TEST_F(FusionMarks, StaleMarksAreIgnored) {
  func::FuncOp stale = parse("stale", "{onnx.fused_activation = \"Relu\"}");
  ASSERT_TRUE(stale);
  std::vector<reference::Tensor> reference = run(stale, apart());
  std::vector<reference::Tensor> marked = run(stale, marksOnly());
  EXPECT_FALSE(ran("Conv+Relu"));
  EXPECT_TRUE(ran("Conv"));
  EXPECT_TRUE(ran("Relu"));
  expectSameBits(reference, marked);

  func::FuncOp main =
      parse("main", "", ", onnx.in_place_inputs = array<i64: 2>");
  ASSERT_TRUE(main);
  reference = run(main, apart());
  marked = run(main, marksOnly());
  EXPECT_FALSE(ran("Concat (in place)"));
  EXPECT_TRUE(ran("Concat"));
  expectSameBits(reference, marked);
}

// By default prepare() decides the marks with the passes, on a copy: the
// caller's graph is left without them.
TEST_F(FusionMarks, PassesRunOnACopy) {
  func::FuncOp function = parse("main");
  ASSERT_TRUE(function);
  std::vector<reference::Tensor> reference = run(function, apart());
  std::vector<reference::Tensor> fused = run(function, PrepareOptions());
  EXPECT_TRUE(ran("Conv+Relu"));
  EXPECT_TRUE(ran("Concat (in place)"));
  expectSameBits(reference, fused);
  bool marked = false;
  function.walk([&](Operation *op) {
    marked |= op->hasAttr(onnx::kFusedActivationAttrName) ||
              op->hasAttr(onnx::kInPlaceInputsAttrName);
  });
  EXPECT_FALSE(marked);
}

} // namespace
