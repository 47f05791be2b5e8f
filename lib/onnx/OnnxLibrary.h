//===- OnnxLibrary.h - The calls into libonnx, without exceptions -*- C++ -*-===//
//
// libonnx reports errors by throwing. Every call the project makes into it
// goes through these wrappers, compiled with exceptions on, which turn a
// throw into an llvm::Error; nothing is thrown across MLIR code.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_LIB_ONNX_ONNXLIBRARY_H
#define MNCC_LIB_ONNX_ONNXLIBRARY_H

#include "onnx/onnx_pb.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <vector>

namespace mncc::onnxlib {

/// Parses the ONNX text syntax (`<ir_version: 8, ...> graph (...) => (...)`).
llvm::Error parseText(llvm::StringRef text, ::onnx::ModelProto &model);

/// Converts the ai.onnx operators of `model` to `targetOpset`.
llvm::Error convertVersion(::onnx::ModelProto &model, int targetOpset);

/// Runs ONNX shape inference. With `checkTypes`, types already present
/// must agree with the inferred ones.
llvm::Error inferShapes(::onnx::ModelProto &model, bool checkTypes = true);

/// The ONNX checker (full_check off: shape inference runs separately).
llvm::Error checkModel(const ::onnx::ModelProto &model);

/// The ONNX checker on a model file (external data is found beside it).
llvm::Error checkModelFile(llvm::StringRef path);

/// What the schema of `opType` in `domain` at `opset` says of its inputs:
/// for each formal input, its type parameter name and allowed type strings.
struct FormalInput {
  std::string name;
  std::string typeParameter;
  std::vector<std::string> allowedTypes;
  bool variadic = false;
  /// Whether it may be omitted (given as "" or left off at the end).
  bool optional = false;
  /// Whether every value bound to a variadic input has the same type.
  bool homogeneous = true;
};
struct SchemaInfo {
  bool found = false;
  int sinceVersion = 0;
  std::vector<FormalInput> inputs;
  size_t outputCount = 0;
  /// How many inputs and outputs a node may list (the schema's min_input,
  /// max_input, min_output, max_output; variadic ones make the maximum
  /// large).
  int minInputs = 0, maxInputs = 0, minOutputs = 0, maxOutputs = 0;
  /// Attribute name -> AttributeProto::AttributeType, sorted by name (the
  /// order in which graph attributes become regions).
  std::map<std::string, int> attributeTypes;
  std::vector<std::string> requiredAttributes;
};
SchemaInfo lookupSchema(llvm::StringRef opType, llvm::StringRef domain,
                        int opset);

/// The newest opset of `domain` this libonnx knows, or -1.
int maxKnownOpset(llvm::StringRef domain);

/// ONNX's own spelling of a type ("tensor(float)").
std::string typeString(const ::onnx::TypeProto &type);

} // namespace mncc::onnxlib

#endif // MNCC_LIB_ONNX_ONNXLIBRARY_H
