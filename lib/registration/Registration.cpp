//===- Registration.cpp - Everything mncc registers -----------------------===//

#include "mncc/Registration.h"

#include "mncc/dialects/graph/GraphDialect.h"
#include "mncc/dialects/onnx/OnnxDialect.h"
#include "mncc/passes/graph/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void mncc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<graph::GraphDialect, onnx::OnnxDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::tensor::TensorDialect>();
  mlir::func::registerInlinerExtension(registry);
}

void mncc::registerAllPasses() {
  graph::registerGraphPasses();
  // canonicalize, cse, inline, symbol-dce and the other generic cleanups.
  mlir::registerTransformsPasses();
}
