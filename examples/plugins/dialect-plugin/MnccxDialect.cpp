//===- MnccxDialect.cpp - An example dialect loaded as a plugin -----------===//

#include "mncc/dialects/graph/GraphDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"

#include "MnccxDialect.h.inc"

#define GET_OP_CLASSES
#include "MnccxOps.h.inc"

#include "MnccxDialect.cpp.inc"

#define GET_OP_CLASSES
#include "MnccxOps.cpp.inc"

void mnccx::MnccxDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "MnccxOps.cpp.inc"
      >();
}

mlir::LogicalResult mnccx::DeviceBytesOp::verify() {
  if (!mncc::graph::getLayout(getInput().getType()))
    return emitOpError("needs a tensor placed with a #mngraph.layout");
  return mlir::success();
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "MnccxDialectPlugin", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            registry->insert<mnccx::MnccxDialect>();
            registry->insert<mncc::graph::GraphDialect>();
          }};
}
