//===- L3Dialect.h - L3IR dialect --------------------------*- C++ -*-===//
//
// The one header to include for the l3 dialect and its ops.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_DIALECTS_L3_L3DIALECT_H
#define MNCC_DIALECTS_L3_L3DIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"

#include "mncc/dialects/l3/L3Dialect.h.inc"

#define GET_OP_CLASSES
#include "mncc/dialects/l3/L3Ops.h.inc"

namespace mncc::l3 {

/// The symbol name kernels use for an omitted optional input.
inline constexpr llvm::StringLiteral kNoneBuffer = "none";
/// The generator of a kernel the host runs (pfvm:cpu) between the device
/// programs.
inline constexpr llvm::StringLiteral kHostGenerator = "host";

} // namespace mncc::l3

#endif // MNCC_DIALECTS_L3_L3DIALECT_H
