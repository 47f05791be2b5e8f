//===- GraphDialect.h - MNGraph dialect ----------------------*- C++ -*-===//
//
// The one header to include for the MNGraph dialect, its attributes and ops.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_DIALECTS_GRAPH_GRAPHDIALECT_H
#define MNCC_DIALECTS_GRAPH_GRAPHDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "mncc/layout/Layout.h"

#include "llvm/ADT/Hashing.h"

namespace mncc::layout {
/// Hash of a layout, for the storage of #mngraph.layout.
llvm::hash_code hash_value(const Layout &layout);
} // namespace mncc::layout

#include "mncc/dialects/graph/GraphDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "mncc/dialects/graph/GraphAttrs.h.inc"

#define GET_OP_CLASSES
#include "mncc/dialects/graph/GraphOps.h.inc"

namespace mncc::graph {

/// The layout encoding of a ranked tensor type, or null when it has none.
LayoutAttr getLayout(mlir::Type type);

} // namespace mncc::graph

#endif // MNCC_DIALECTS_GRAPH_GRAPHDIALECT_H
