//===- L3.td - L3IR: the scheduled program ------------------*- tablegen -*-===//
//
// L3IR is the third stage of mncc: the graph as a schedule of kernels over
// buffers in DRAM. Each kernel is one graph node with the generator and
// variant chosen for it; each buffer is a tensor in its DRAM form, with
// its address once address planning ran.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_DIALECTS_L3_L3_TD
#define MNCC_DIALECTS_L3_L3_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def L3_Dialect : Dialect {
  let name = "l3";
  let cppNamespace = "::mncc::l3";
  let summary = "L3IR: kernels in order over buffers with DRAM addresses";
  let description = [{
    A module of L3IR holds `l3.buffer` symbols, one per tensor in DRAM, and
    one `l3.schedule` whose kernels run in order. After the emit phase an
    `l3.program` holds the linked MN-Core 2 assembly. docs/codegen.md
    describes the execution model.
  }];
}

class L3_Op<string mnemonic, list<Trait> traits = []>
    : Op<L3_Dialect, mnemonic, traits>;

def L3_BufferOp : L3_Op<"buffer", [Symbol]> {
  let summary = "A tensor in DRAM";
  let description = [{
    `kind` says what the buffer holds: a graph `input` or `output` (staged
    by the host), a `constant` (an initializer, staged once), or a
    `temporary` between kernels. The type is the tensor on the device: its
    element type is the device format (f16 is MN-Core's half) and its
    encoding the `#mngraph.layout` of its DRAM form. `order` is that form's
    DRAM dimension order. A buffer with `alias` shares the bytes of another
    (a Reshape between identical DRAM forms). A constant packed by a kernel
    in its own arrangement names the generator in `arrangement` and has
    `long_words` set to that arrangement's size.

    Example:

    ```mlir
    l3.buffer @x : tensor<16x784xf32, #mngraph.layout<...>>
        {kind = "input", name = "x", index = 0 : i64, order = array<i64: 0, 1>,
         groups = 4 : i64, long_words = 1600 : i64, address = 0 : i64}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttr:$type,
      StrAttr:$kind, DenseI64ArrayAttr:$order, I64Attr:$groups,
      I64Attr:$long_words, OptionalAttr<I64Attr>:$address,
      OptionalAttr<StrAttr>:$name, OptionalAttr<I64Attr>:$index,
      OptionalAttr<TypeAttr>:$host_type, OptionalAttr<ElementsAttr>:$value,
      OptionalAttr<StrAttr>:$arrangement,
      OptionalAttr<FlatSymbolRefAttr>:$alias);
  let assemblyFormat = "$sym_name `:` $type attr-dict";
  let hasVerifier = 1;
}

def L3_ScheduleOp : L3_Op<"schedule", [NoTerminator, SingleBlock,
                                       NoRegionArguments]> {
  let summary = "The kernels of the program, in the order they run";
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict-with-keyword $body";
}

def L3_KernelOp : L3_Op<"kernel", [HasParent<"ScheduleOp">]> {
  let summary = "One graph node run on the device";
  let description = [{
    `op_type` is the ONNX operator, `node` the graph node's name, `inputs`
    and `outputs` the buffers it reads and writes (an omitted optional
    input is `@none`), `onnx` the node's ONNX attributes. Kernel selection
    sets `generator`; emission sets `variant`, `parameters` and `vsm`, the
    kernel's assembly. `activation` names a Relu or Clip node folded into
    the kernel (mncc-fuse-epilogues), which clamps its result to
    `activation_bounds` (lo, hi) as it stores it.
  }];
  let arguments = (ins StrAttr:$op_type, StrAttr:$node,
      SymbolRefArrayAttr:$inputs, SymbolRefArrayAttr:$outputs,
      DictionaryAttr:$onnx, OptionalAttr<StrAttr>:$generator,
      OptionalAttr<StrAttr>:$variant, OptionalAttr<DictionaryAttr>:$parameters,
      OptionalAttr<StrAttr>:$vsm,
      OptionalAttr<StrAttr>:$activation,
      OptionalAttr<DenseF32ArrayAttr>:$activation_bounds);
  let assemblyFormat = "$op_type $node $inputs `->` $outputs attr-dict";
  let hasVerifier = 1;
}

def L3_ProgramOp : L3_Op<"program"> {
  let summary = "The linked MN-Core 2 assembly of the schedule";
  let description = [{
    The concatenation of every kernel's assembly, each preceded by a comment
    naming its graph node, as `program.vsm` of the codegen_dir holds it.
    `steps` is the sum of the kernels' PE steps, a lower bound of the run
    time.
  }];
  let arguments = (ins StrAttr:$text, I64Attr:$steps);
  let assemblyFormat = "attr-dict";
}

#endif // MNCC_DIALECTS_L3_L3_TD
