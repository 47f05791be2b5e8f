//===- OnnxOps.cpp - The generated op definitions, one shard --------------===//
//
// Not compiled on its own: each shard source in the build tree
// (OnnxOps.<i>.cpp, dialects/onnx/CMakeLists.txt) defines GET_OP_DEFS_<i>
// and includes this file, so the several thousand generated op classes
// compile as MNCC_ONNX_OP_SHARDS units instead of one. The hooks the
// generator declares (folders, canonicalizers, verifiers) are defined in
// OnnxFolders.cpp, OnnxCanonicalize.cpp and OnnxVerifiers.cpp.
//
//===----------------------------------------------------------------------===//

#include "mncc/dialects/onnx/OnnxOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mncc::onnx;

#include "mncc/dialects/onnx/OnnxOps.cpp.inc"
