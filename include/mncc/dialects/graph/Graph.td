//===- Graph.td - MNGraph: the optimized-graph dialect ----*- tablegen -*-===//
//
// MNGraph is the second stage of mncc: the ONNX graph after simplification,
// with the dtype, location and layout decisions that map it onto MN-Core 2.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_DIALECTS_GRAPH_GRAPH_TD
#define MNCC_DIALECTS_GRAPH_GRAPH_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/TensorEncoding.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Graph_Dialect : Dialect {
  let name = "mngraph";
  let cppNamespace = "::mncc::graph";
  let summary = "The optimized graph of mncc (MNGraph)";
  let description = [{
    MNGraph holds a model after graph-level optimization. Tensors carry their
    MN-Core 2 placement as a `#mngraph.layout` encoding on the ranked tensor
    type, written in the MLSDK layout notation, for example
    `tensor<256x16xf16, #mngraph.layout<((8_L2B:1, 4:2, 8_L1B:1), (2:1, 4_PE:1, 2_W:1); B@[MAB])>>`.
  }];
  // The layout notation is not made of MLIR tokens (`75_Time:4`), so the
  // dialect reads the raw attribute text itself.
  let useDefaultAttributePrinterParser = 0;
  let extraClassDeclaration = [{
    ::mlir::Attribute parseAttribute(::mlir::DialectAsmParser &parser,
                                     ::mlir::Type type) const override;
    void printAttribute(::mlir::Attribute attr,
                        ::mlir::DialectAsmPrinter &printer) const override;
  }];
}

class Graph_Attr<string name, list<Trait> traits = []>
    : AttrDef<Graph_Dialect, name, traits>;

def Graph_LayoutAttr : Graph_Attr<"Layout",
    [DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "Placement of a tensor on MN-Core 2 in the MLSDK notation";
  let description = [{
    One parenthesized group per tensor dimension, each split into modes
    `size_Axis:stride` from major to minor, where Axis is one of L2B, L1B,
    MAB, PE, W and Time, and a plain `size:stride` is an address in long
    words. `; B@[...]` names the axes the tensor is replicated over.
    docs/layout.md defines the notation.

    The text is parsed and kept in canonical form; as the encoding of a
    tensor it must have one group per dimension, cover the tensor's shape,
    and fit its element type (W) and the hardware's axes.
  }];
  // The parsed layout, not its text: planners compare and query layouts
  // often, and parsing them again each time would cost every pass.
  let parameters = (ins
      AttrParameter<"::mncc::layout::Layout", "layout in MLSDK notation",
                    "const ::mncc::layout::Layout &">:$layout);
  // No mnemonic: GraphDialect::parseAttribute reads the raw text.
  let attrName = "mngraph.layout";
  let extraClassDeclaration = [{
    /// The canonical text of the layout.
    std::string getText() const { return getLayout().str(); }
  }];
}

class Graph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic, traits>;

def Graph_LayoutSwitchOp : Graph_Op<"layout_switch", [Pure,
    SameOperandsAndResultShape, SameOperandsAndResultElementType]> {
  let summary = "Moves a tensor from one layout to another";
  let description = [{
    The value is unchanged; only its placement on the device changes, which
    costs transfers. The source and destination layouts are the encodings of
    the operand and result types.

    A switch to the layout a value already has is the identity, and two
    switches in a row are one switch from the first layout to the last.

    Example:

    ```mlir
    %1 = mngraph.layout_switch %0
        : tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>>
       -> tensor<64xf16, #mngraph.layout<((4_PE:1, 16_MAB:1))>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // MNCC_DIALECTS_GRAPH_GRAPH_TD
