//===- KernelAttributes.h - ONNX attributes as kernels read them -*- C++ -*-===//
//
// The one conversion from an onnx-dialect attribute to the attribute value
// the reference kernels take (reference::Attribute); pfvm:cpu and the code
// generator's kernel requests both use it.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_INTERPRETER_KERNELATTRIBUTES_H
#define MNCC_INTERPRETER_KERNELATTRIBUTES_H

#include "mncc/reference/Kernel.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

namespace mncc {

/// Converts attribute `name` of `op`; on a value kernels cannot take,
/// emits an error at op and fails.
mlir::FailureOr<reference::Attribute>
convertOnnxAttribute(mlir::Operation *op, llvm::StringRef name,
                     mlir::Attribute value);

/// The element type of a tensor, sequence or optional type, for kernels.
reference::DType kernelElementTypeOf(mlir::Type type);

} // namespace mncc

#endif // MNCC_INTERPRETER_KERNELATTRIBUTES_H
