//===- Passes.h - MNGraph passes -----------------------------*- C++ -*-===//

#ifndef MNCC_PASSES_GRAPH_PASSES_H
#define MNCC_PASSES_GRAPH_PASSES_H

#include "mncc/dialects/graph/GraphDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mncc::graph {

#define GEN_PASS_DECL
#include "mncc/passes/graph/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mncc/passes/graph/Passes.h.inc"

} // namespace mncc::graph

#endif // MNCC_PASSES_GRAPH_PASSES_H
