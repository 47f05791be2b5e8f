//===- Passes.td - PFVM passes on the onnx dialect -------*- tablegen -*-===//
//
// The pfvm phase (lib/pipeline/Pipeline.cpp, populatePfvmPasses): graph
// simplification and fusion on the onnx dialect, as the MLSDK's PFVM does
// before planning. Every pass keeps the graph valid ONNX with the same
// meaning (out_onnx exports it), keeps the verifier green, and leaves a
// node it cannot rewrite as it is.
//
//===----------------------------------------------------------------------===//

#ifndef MNCC_PASSES_PFVM_PASSES_TD
#define MNCC_PASSES_PFVM_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Simplification (CODEGEN_DEFER_SIMPLIFY names them without "pfvm-")
//===----------------------------------------------------------------------===//

def FoldConstants : Pass<"pfvm-fold-constants", "mlir::func::FuncOp"> {
  let summary = "Evaluates nodes of constant inputs with the pfvm:cpu kernels";
  let description = [{
    A node whose inputs are all constants (`onnx.Constant`,
    `onnx.Initializer`, omitted optional inputs) is run once with its
    pfvm:cpu kernel (lib/reference, through `SimpleKernelContext`) and
    replaced by an `onnx.Constant` of its results. `Shape` and `Size` of a
    tensor with a static shape become constants first, so the shape
    arithmetic torch exports (Shape, Gather, Unsqueeze, Concat feeding a
    Reshape) folds away.

    A fold is bounded: its results may hold at most `size-limit` bytes, or
    no more than the constant inputs that die with it (a Transpose of a
    weight used once is folded, one used twice is not): weights are never
    duplicated. A Slice of a static tensor whose bounds became constants
    gets its static result type (the graph phase needs static shapes).
    Nodes with subgraphs, random nodes, non-tensor values,
    strings and nodes without a kernel are left alone, as is a node whose
    kernel fails (the run reports it) or whose result would not match its
    declared type.

    Example:

    ```mlir
    %s = onnx.Shape(%x) : (tensor<2x3x4xf32>) -> tensor<3xi64>
    ```
    becomes
    ```mlir
    %s = onnx.Constant() {value = dense<[2, 3, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
    ```
  }];
  let options = [
    Option<"sizeLimit", "size-limit", "int64_t", "65536",
           "Bytes a fold may create beyond the constants it replaces">,
  ];
}

def RemoveNoops : Pass<"pfvm-remove-noops", "mlir::func::FuncOp"> {
  let summary = "Removes Identity, inference Dropout, no-op Reshape, "
                "Transpose pairs and Cast pairs";
  let description = [{
    Applies the onnx ops' folders and canonicalization patterns
    (dialects/onnx): Identity is its input; Dropout in inference (no
    training_mode, or a constant false, its mask unused) is its input; a
    Reshape, Flatten, Squeeze or Expand to the input's own static type is
    its input; Reshape(Reshape(x)) is one Reshape; Transpose(Transpose(x))
    is one Transpose, or x when the permutations cancel; Cast(Cast(x))
    through a type that holds every value of x's is one Cast, or x. A node
    whose result type differs from its input's stays.

    Example:

    ```mlir
    %t = onnx.Transpose(%x) {perm = [0, 2, 1]} : (tensor<1x2x3xf32>) -> tensor<1x3x2xf32>
    %u = onnx.Transpose(%t) {perm = [0, 2, 1]} : (tensor<1x3x2xf32>) -> tensor<1x2x3xf32>
    ```
    becomes `%x`.
  }];
}

def ReuseConstants : Pass<"pfvm-reuse-constants", "mlir::func::FuncOp"> {
  let summary = "Makes identical initializers and constants share one value";
  let description = [{
    Initializers and `onnx.Constant`s of the same type and the same bytes
    (compared by a hash of their data, then byte for byte) become one: the
    first in the graph is kept, with its name, and the others' uses read
    it. Constants inside subgraphs share with constants of the same block.
    `PFVM_DISABLE_CONSTANT_REUSE=1` leaves this pass out of the pfvm phase.
  }];
}

def Cse : Pass<"pfvm-cse", "mlir::func::FuncOp"> {
  let summary = "Merges nodes that compute the same value";
  let description = [{
    Two side-effect-free nodes without subgraphs, with the same op,
    attributes, result types and operands (in any order for the
    `Commutative` ops: Add, Mul, Sum, And, Or, Xor, Equal) compute the same
    value: the later one's uses read the earlier one. Constants and
    initializers are left to pfvm-reuse-constants, so
    PFVM_DISABLE_CONSTANT_REUSE keeps them apart.
  }];
}

def Dce : Pass<"pfvm-dce", "mlir::func::FuncOp"> {
  let summary = "Removes nodes and initializers nothing uses";
  let description = [{
    Erases, from the last node up, every node none of whose results is used
    and which has no effect besides its results (random nodes and Dropout
    included), and every unused initializer and constant, in subgraphs
    too.
  }];
}

def FoldBatchNorm : Pass<"pfvm-fold-batchnorm", "mlir::func::FuncOp"> {
  let summary = "Folds an inference BatchNormalization into the Conv or Gemm "
                "before it";
  let description = [{
    `BatchNormalization(Conv(x, W, B))` with constant W, B, scale, bias,
    mean and variance, in inference (training_mode 0), where the Conv has
    no other use and W no other user, becomes `Conv(x, W', B')` with
    `W'[m] = W[m] * s[m]`, `B'[m] = (B[m] - mean[m]) * s[m] + bias[m]` and
    `s = scale / sqrt(var + epsilon)`, computed in double and rounded once.
    A Gemm whose output columns are the channels (rank-2 BatchNormalization)
    is folded the same way into B and C. Float and double only.
  }];
}

def ResolveNegativeIndices
    : Pass<"pfvm-resolve-negative-indices", "mlir::func::FuncOp"> {
  let summary = "Makes negative axes and indices positive";
  let description = [{
    Rewrites every negative axis (the `axis` and `axes` attributes, and the
    constant `axes` inputs of Squeeze, Unsqueeze, ReduceSum and Slice) as
    its positive equivalent for the operand's rank, the default axis of
    Softmax, LogSoftmax and Hardmax (-1) included, and the negative
    constant `indices` of Gather and `starts` / `ends` of Slice as positive
    positions along a static dimension. A constant input is replaced by a
    new constant for this node only. Values that have no positive form (a
    Slice end before the first element with a negative step) and axes out
    of range are left as they are. CODEGEN_SKIP_RESOLVE_NEGATIVE_INDICES=1
    leaves this pass out of the pfvm phase.

    Example: `onnx.Softmax(%x)` on `tensor<2x5xf32>` gets `axis = 1`.
  }];
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def FuseOptimizers : Pass<"pfvm-fuse-optimizers", "mlir::func::FuncOp"> {
  let summary = "One optimizer node per parameter update";
  let description = [{
    Recognizes parameter updates and makes each one node of
    ai.onnx.preview.training:

    - the element-wise chains of SGD with momentum (Momentum, standard and
      Nesterov), Adam without bias correction and Adagrad, as a framework
      writes them (`V' = alpha V + beta (G + wd X)`, `X' = X - lr V'`, ...,
      operands of Add and Mul in either order), each becomes one
      `onnx.Momentum` / `onnx.Adam` / `onnx.Adagrad` with its coefficients
      as attributes (T is a constant: 1 for Momentum, 0 for Adam and
      Adagrad, for which their formulas are those chains);
    - a training operator that updates several tensors is split into one
      node per tensor.

    The fused node computes in double and rounds once (lib/reference
    kernels), so its results may differ from the chain's by the chain's
    own rounding, a few units in the last place.
    CODEGEN_SKIP_OPTIMIZER_FUSION=1 leaves this pass out of the pfvm phase.
  }];
}

def FuseActivations : Pass<"pfvm-fuse-activations", "mlir::func::FuncOp"> {
  let summary = "Marks a Relu or Clip to run inside the Conv or Add before it";
  let description = [{
    A float32 Conv or Add whose result is used only by a Relu, or by a Clip
    with constant (or absent) bounds, of the same block gets
    `onnx.fused_activation = "Relu"` (or "Clip"): pfvm:cpu then clamps each
    value as the Conv or Add stores it, and the activation passes the value
    on, bit-identical to running both. The graph is unchanged otherwise
    (both nodes stay; a consumer may ignore the mark).
  }];
}

def ConcatInPlace : Pass<"pfvm-concat-in-place", "mlir::func::FuncOp"> {
  let summary = "Lets Convs write straight into the Concat that takes them";
  let description = [{
    In the top-level graph, a Concat of static shapes whose inputs each
    fill one contiguous block of its output (every dimension before the
    axis is 1) gets `onnx.in_place_inputs = array<i64: ...>`: the inputs
    produced by a Conv used only there (through activations it fuses, see
    pfvm-fuse-activations) that may write into their part of the output,
    which the Concat then does not copy. Run after pfvm-fuse-activations.
  }];
}

#endif // MNCC_PASSES_PFVM_PASSES_TD
