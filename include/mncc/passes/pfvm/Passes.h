//===- Passes.h - PFVM passes on the onnx dialect -------------*- C++ -*-===//
//
// The passes of the pfvm phase (Passes.td). Two libraries hold them:
// MNCCPfvmFusion (pfvm-fuse-activations, pfvm-concat-in-place), which the
// interpreter runs before it prepares a graph, and MNCCPfvmPasses (the
// others, which evaluate constants with the interpreter's kernels).
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_PASSES_PFVM_PASSES_H
#define MNCC_PASSES_PFVM_PASSES_H

#include "mncc/dialects/onnx/OnnxDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mncc::pfvm {

#define GEN_PASS_DECL
#include "mncc/passes/pfvm/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mncc/passes/pfvm/Passes.h.inc"

} // namespace mncc::pfvm

#endif // MNCC_PASSES_PFVM_PASSES_H
