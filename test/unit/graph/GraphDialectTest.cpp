//===- GraphDialectTest.cpp - C++ API of the MNGraph dialect --------------===//

#include "mncc/Registration.h"
#include "mncc/dialects/graph/GraphDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mncc::graph;

namespace {

class GraphDialectTest : public ::testing::Test {
protected:
  GraphDialectTest() {
    DialectRegistry registry;
    mncc::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  MLIRContext context;
};

TEST_F(GraphDialectTest, LayoutIsTheEncodingOfARankedTensor) {
  auto layout = LayoutAttr::get(
      &context, *mncc::layout::parseLayout("((16_MAB:1, 4_PE:1))"));
  auto f16 = Float16Type::get(&context);
  EXPECT_EQ(getLayout(RankedTensorType::get({64}, f16, layout)), layout);
  EXPECT_FALSE(getLayout(RankedTensorType::get({64}, f16)));
  EXPECT_FALSE(getLayout(UnrankedTensorType::get(f16)));
  EXPECT_FALSE(getLayout(f16));
}

TEST_F(GraphDialectTest, LayoutTextSurvivesParseAndPrint) {
  const char *text =
      "((75_Time:4, 8_L2B:1, 16_MAB:1, 4:1, 4:4), "
      "(4_Time:1, 24:16, 4_W:1, 4_PE:1); B@[L1B])";
  Attribute parsed =
      parseAttribute(std::string("#mngraph.layout<") + text + ">", &context);
  auto layout = llvm::dyn_cast_or_null<LayoutAttr>(parsed);
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout.getText(), text);
  std::string printed;
  llvm::raw_string_ostream os(printed);
  layout.print(os);
  EXPECT_EQ(os.str(), std::string("#mngraph.layout<") + text + ">");
}

TEST_F(GraphDialectTest, SwitchChainFoldsToOneSwitch) {
  const char *source = R"mlir(
    func.func @f(%a: tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>>)
        -> tensor<64xf16, #mngraph.layout<((64_Time:1))>> {
      %b = mngraph.layout_switch %a
          : tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>>
         -> tensor<64xf16, #mngraph.layout<((4_PE:1, 16_MAB:1))>>
      %c = mngraph.layout_switch %b
          : tensor<64xf16, #mngraph.layout<((4_PE:1, 16_MAB:1))>>
         -> tensor<64xf16, #mngraph.layout<((64_Time:1))>>
      return %c : tensor<64xf16, #mngraph.layout<((64_Time:1))>>
    })mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(
      applyPatternsAndFoldGreedily(module->getOperation(), {})));

  SmallVector<LayoutSwitchOp> switches;
  module->walk([&](LayoutSwitchOp op) { switches.push_back(op); });
  ASSERT_EQ(switches.size(), 1u);
  EXPECT_EQ(getLayout(switches[0].getInput().getType()).getText(),
            "((16_MAB:1, 4_PE:1))");
  EXPECT_EQ(getLayout(switches[0].getType()).getText(), "((64_Time:1))");
  EXPECT_TRUE(llvm::isa<BlockArgument>(switches[0].getInput()));
}

} // namespace
