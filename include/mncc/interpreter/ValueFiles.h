//===- ValueFiles.h - Model inputs and outputs as files -------*- C++ -*-===//
//
// What `mncc run` and the conformance runner read and write: .npy files
// and ONNX protobuf files (TensorProto, SequenceProto, OptionalProto),
// chosen by extension and by the type the model gives the value.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_INTERPRETER_VALUEFILES_H
#define MNCC_INTERPRETER_VALUEFILES_H

#include "mncc/reference/Tensor.h"

#include "mlir/IR/Types.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mncc {

/// Reads the value of a graph input or output of type `type` from a .npy
/// or .pb file.
llvm::Expected<reference::Value> readValueFile(llvm::StringRef path,
                                               mlir::Type type);

/// Writes a tensor output as `<stem>.npy` (when NumPy has its type) and
/// `<stem>.pb` (TensorProto named `name`).
llvm::Error writeOutputFiles(llvm::StringRef stem, llvm::StringRef name,
                             const reference::Value &value);

/// Compares an output with the expected value as ONNX's backend tests do:
/// floating point within atol + rtol * |expected| (NaN matches NaN),
/// everything else exactly. `shapeOnly` compares dtype and shape only (for
/// random operators). Returns "" or what differs.
std::string compareValues(const reference::Value &actual,
                          const reference::Value &expected, double rtol,
                          double atol, bool shapeOnly);

} // namespace mncc

#endif // MNCC_INTERPRETER_VALUEFILES_H
