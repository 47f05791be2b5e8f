//===- Passes.h - L3IR and emission passes -------------------*- C++ -*-===//

#ifndef MNCC_PASSES_L3_PASSES_H
#define MNCC_PASSES_L3_PASSES_H

#include "mncc/dialects/graph/GraphDialect.h"
#include "mncc/dialects/l3/L3Dialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mncc::l3 {

#define GEN_PASS_DECL
#include "mncc/passes/l3/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mncc/passes/l3/Passes.h.inc"

} // namespace mncc::l3

#endif // MNCC_PASSES_L3_PASSES_H
