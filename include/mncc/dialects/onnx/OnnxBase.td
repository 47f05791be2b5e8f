//===- OnnxBase.td - The onnx dialect: types and hand-written ops -*- tablegen -*-===//
//
// The ONNX stage holds a model exactly as ONNX defines it. The operator ops
// are generated from libonnx's schemas (OnnxOps.td in the build tree); this
// file has what the schemas do not describe: the dialect, ONNX's non-tensor
// types, initializers, subgraph terminators, missing optional inputs and
// operators of other domains.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_DIALECTS_ONNX_ONNXBASE_TD
#define MNCC_DIALECTS_ONNX_ONNXBASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Onnx_Dialect : Dialect {
  let name = "onnx";
  let cppNamespace = "::mncc::onnx";
  let summary = "ONNX models as ONNX defines them";
  let description = [{
    One op per operator of `ai.onnx` (opset 17, the canonical opset every
    imported model is converted to) and `ai.onnx.preview.training`, named as
    in ONNX (`onnx.Conv`), with ONNX's inputs, outputs and attributes.
    Operators of other domains are `onnx.Custom`.
  }];
  // ONNX attributes stay visible in the attribute dictionary, as in ONNX.
  let usePropertiesForAttributes = 0;
  let useDefaultTypePrinterParser = 1;
  // The discardable attributes the pfvm passes attach (onnx.fused_activation,
  // onnx.in_place_inputs; OnnxDialect.h) are checked where they stand.
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerTypes();
  }];
}

class Onnx_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Onnx_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Onnx_StringType : Onnx_Type<"String", "string"> {
  let summary = "ONNX string element";
}

def Onnx_SeqType : Onnx_Type<"Seq", "seq"> {
  let summary = "ONNX sequence";
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

def Onnx_OptType : Onnx_Type<"Opt", "opt"> {
  let summary = "ONNX optional value";
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

def Onnx_MapType : Onnx_Type<"Map", "map"> {
  let summary = "ONNX map";
  let parameters = (ins "::mlir::Type":$keyType, "::mlir::Type":$valueType);
  let assemblyFormat = "`<` $keyType `,` $valueType `>`";
}

class Onnx_Op<string mnemonic, list<Trait> traits = []>
    : Op<Onnx_Dialect, mnemonic, traits>;

def Onnx_InitializerOp : Onnx_Op<"Initializer", [Pure]> {
  let summary = "A named tensor stored in the model (an ONNX initializer)";
  let description = [{
    The data lives in an MLIR resource (`dense_resource`), so large weights
    are neither printed inline nor copied.

    ```mlir
    %w = onnx.Initializer "conv1.weight" dense_resource<conv1.weight> : tensor<64x3x7x7xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, ElementsAttr:$value);
  let results = (outs AnyType:$output);
  // The result type is the type of the value, printed once.
  let hasCustomAssemblyFormat = 1;
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$name, "::mlir::ElementsAttr":$value), [{
      build($_builder, $_state, value.getType(), name, value);
    }]>
  ];
  let hasVerifier = 1;
}

def Onnx_NoneOp : Onnx_Op<"None", [Pure]> {
  let summary = "An omitted optional input of an onnx.Custom op";
  let results = (outs NoneType:$none);
  let assemblyFormat = "attr-dict";
}

def Onnx_YieldOp : Onnx_Op<"Yield", [Pure, ReturnLike, Terminator]> {
  let summary = "The outputs of a subgraph (If, Loop, Scan bodies)";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def Onnx_CustomOp : Onnx_Op<"Custom", []> {
  let summary = "An operator of a domain without typed ops";
  let description = [{
    Keeps what ONNX says of a node whose domain mncc does not model
    (ai.onnx.ml, com.microsoft, a model's own functions): its domain and
    type, its inputs (`onnx.None` for an omitted optional input), its
    attributes, and its graph attributes as regions, named in order by
    `graph_attribute_names`.
  }];
  let arguments = (ins Variadic<AnyType>:$inputs, StrAttr:$domain,
                   StrAttr:$op_type, DictionaryAttr:$onnx_attributes,
                   StrArrayAttr:$graph_attribute_names);
  let results = (outs Variadic<AnyType>:$outputs);
  let regions = (region VariadicRegion<AnyRegion>:$graphs);
  let hasVerifier = 1;
}

#endif // MNCC_DIALECTS_ONNX_ONNXBASE_TD
