//===- Registration.cpp - Everything mncc registers -----------------------===//

#include "mncc/Registration.h"

#include "mncc/dialects/graph/GraphDialect.h"
#include "mncc/dialects/l3/L3Dialect.h"
#include "mncc/dialects/onnx/OnnxDialect.h"
#include "mncc/passes/graph/Passes.h"
#include "mncc/passes/l3/Passes.h"
#include "mncc/passes/pfvm/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void mncc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<graph::GraphDialect, l3::L3Dialect, onnx::OnnxDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::tensor::TensorDialect>();
  mlir::func::registerInlinerExtension(registry);
}

void mncc::registerAllPasses() {
  graph::registerGraphPasses();
  l3::registerL3Passes();
  pfvm::registerPfvmPasses();
  // canonicalize, cse, inline, symbol-dce and the other generic cleanups.
  mlir::registerTransformsPasses();
}
