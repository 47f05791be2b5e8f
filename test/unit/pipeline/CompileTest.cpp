//===- CompileTest.cpp - compileModel, as the runtime's compile() calls it
//-===//

#include "mncc/pipeline/Compile.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

using namespace mncc::pipeline;
namespace fs = llvm::sys::fs;

namespace {

// Stands for a phase's pass that reports an error.
struct FailingPass
    : public mlir::PassWrapper<FailingPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FailingPass)
  void runOnOperation() override {
    getOperation().emitError("the phase found something wrong");
    signalPassFailure();
  }
};

class Compile : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(fs::createUniqueDirectory("mncc-compile", root));
    request.input = MNCC_SOURCE_DIR "/test/onnx/Inputs/add_relu.onnxtxt";
    request.codegenDir = path("cg");
    request.inputShapes = {{"X", {2, 4}}};
    context.getDiagEngine().registerHandler(
        [this](mlir::Diagnostic &d) { errors.push_back(d.str()); });
  }
  void TearDown() override { fs::remove_directories(root); }

  std::string path(llvm::StringRef relative) const {
    llvm::SmallString<256> full(root);
    llvm::sys::path::append(full, relative);
    return full.str().str();
  }
  std::string read(llvm::StringRef relative) const {
    auto buffer = llvm::MemoryBuffer::getFile(path(relative));
    return buffer ? (*buffer)->getBuffer().str() : "(missing)";
  }

  llvm::SmallString<256> root;
  mlir::MLIRContext context;
  CompileRequest request;
  std::vector<std::string> errors;
};

TEST_F(Compile, RunsThePhasesAndWritesTheCodegenDir) {
  request.compileTo = Phase::Pfvm;
  CompileResult result = compileModel(context, request);
  ASSERT_TRUE(result.succeeded);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(result.phases[0].state, PhaseState::Ok);
  EXPECT_EQ(result.phases[1].state, PhaseState::Ok);
  EXPECT_EQ(result.phases[2].state, PhaseState::NotRun);
  EXPECT_EQ(result.lastPhase, Phase::Pfvm);
  EXPECT_EQ(result.stopReason, "--compile-to=pfvm");
  EXPECT_EQ(read("cg/option.json"), writeOptionJson(CompileOptions()));
  EXPECT_EQ(read("cg/compile_status.json"), result.statusJson);
  EXPECT_NE(read("cg/ir/1-import.mlir").find("tensor<2x4xf32>"),
            std::string::npos);
  EXPECT_NE(read("cg/ir/2-pfvm.mlir").find("onnx.Relu"), std::string::npos);
}

TEST_F(Compile, AFailingPhaseLeavesThePreviousCodegenDir) {
  request.compileTo = Phase::Pfvm;
  ASSERT_TRUE(compileModel(context, request).succeeded);
  std::string status = read("cg/compile_status.json");
  request.configurePassManager = [](mlir::PassManager &pm) {
    pm.addPass(std::make_unique<FailingPass>());
    return mlir::success();
  };
  CompileResult result = compileModel(context, request);
  EXPECT_FALSE(result.succeeded);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "the phase found something wrong");
  EXPECT_EQ(result.phases[0].state, PhaseState::Ok);
  EXPECT_EQ(result.phases[1].state, PhaseState::Failed);
  EXPECT_NE(result.statusJson.find(
                R"({"name": "pfvm", "status": "failed", "seconds": )"),
            std::string::npos);
  EXPECT_NE(result.statusJson.find(R"("status": "failed")"), std::string::npos);
  // The previous codegen_dir, whole; nothing beside it.
  EXPECT_EQ(read("cg/compile_status.json"), status);
  std::vector<std::string> names;
  std::error_code error;
  for (fs::directory_iterator it(root, error), end; !error && it != end;
       it.increment(error))
    names.push_back(llvm::sys::path::filename(it->path()).str());
  EXPECT_EQ(names, std::vector<std::string>{"cg"});
}

TEST_F(Compile, StopsWhereAsked) {
  request.compileTo = Phase::Import;
  CompileResult result = compileModel(context, request);
  ASSERT_TRUE(result.succeeded);
  EXPECT_EQ(result.stopReason, "--compile-to=import");
  EXPECT_EQ(read("cg/ir/2-pfvm.mlir"), "(missing)");
  EXPECT_EQ(phaseIrPath(Phase::TimeSlice), "ir/4-time-slice.mlir");
}

TEST(Phases, NamesAndAvailability) {
  EXPECT_EQ(phaseNames(), "import, pfvm, graph, time-slice, l3, emit");
  EXPECT_EQ(parsePhase("time-slice"), Phase::TimeSlice);
  EXPECT_EQ(parsePhase("codegen"), std::nullopt);
  EXPECT_EQ(lastReachablePhase(Phase::Import, Phase::Import), Phase::Import);
  EXPECT_EQ(lastReachablePhase(Phase::Import, Phase::Pfvm), Phase::Pfvm);
  // A compile stops before the first phase that is not available.
  Phase last = Phase::Emit;
  for (const PhaseInfo &info : getPhases())
    if (!info.available) {
      last = static_cast<Phase>(static_cast<unsigned>(info.phase) - 1);
      EXPECT_EQ(unavailableReason(info.phase),
                std::string("the ") + info.name +
                    " phase is not implemented yet (" + issueText(info.issue) +
                    ")");
      break;
    }
  EXPECT_EQ(lastReachablePhase(Phase::Import, Phase::Emit), last);
  // buildPipeline is the one place passes come from: pfvm's passes on
  // each function and symbol-dce, and nothing for import.
  mlir::MLIRContext context;
  mlir::PassManager pm(&context);
  buildPipeline(pm, CompileOptions(), Phase::Import, Phase::Import);
  EXPECT_EQ(pm.size(), 0u);
  buildPipeline(pm, CompileOptions(), Phase::Import, Phase::Pfvm);
  EXPECT_EQ(pm.size(), 2u);
}

} // namespace
