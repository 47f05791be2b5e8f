// The pfvm phase (mncc-opt --mncc-pfvm, as mncc compile runs it) and the
// variables that change it.

// RUN: mncc-opt --mncc-pfvm %s | FileCheck %s --check-prefix=ALL
// RUN: env PFVM_DISABLE_CONSTANT_REUSE=1 mncc-opt --mncc-pfvm %s | FileCheck %s --check-prefix=NOREUSE
// RUN: env CODEGEN_SKIP_RESOLVE_NEGATIVE_INDICES=1 mncc-opt --mncc-pfvm %s | FileCheck %s --check-prefix=NORESOLVE
// RUN: env CODEGEN_SKIP_OPTIMIZER_FUSION=1 mncc-opt --mncc-pfvm %s | FileCheck %s --check-prefix=NOFUSION
// RUN: env CODEGEN_DEFER_SIMPLIFY=fold-constants,pfvm-dce mncc-opt --mncc-pfvm %s | FileCheck %s --check-prefix=DEFER
// The deferred simplifications run at the start of the graph phase.
// RUN: env CODEGEN_DEFER_SIMPLIFY=fold-constants mncc-opt --mncc-pfvm %s \
// RUN:   | env CODEGEN_DEFER_SIMPLIFY=fold-constants mncc-opt --mncc-graph=float_dtype=float \
// RUN:   --mlir-print-ir-after=pfvm-fold-constants 2>&1 | FileCheck %s --check-prefix=GRAPH
// RUN: not env CODEGEN_DEFER_SIMPLIFY=fold mncc-opt --mncc-pfvm %s 2>&1 | FileCheck %s --check-prefix=BAD

// ALL-LABEL: func.func @step
// ALL-NOT: onnx.Shape
// ALL: onnx.Initializer "a"
// ALL-NOT: onnx.Initializer "b"
// ALL: "onnx.Softmax"(%arg0) {axis = 1 : i64}
// ALL-NOT: onnx.RandomUniformLike
// ALL: "onnx.Momentum"
// ALL-NOT: onnx.Sub

// NOREUSE-LABEL: func.func @step
// NOREUSE: onnx.Initializer "a"
// NOREUSE: onnx.Initializer "b"

// NORESOLVE-LABEL: func.func @step
// NORESOLVE: "onnx.Softmax"(%arg0) {axis = -1 : i64}

// NOFUSION-LABEL: func.func @step
// NOFUSION-NOT: onnx.Momentum
// NOFUSION: onnx.Sub

// Deferred: Shape, and the random node nothing reads (which only pfvm-dce
// removes; the rewrite drivers keep nodes with effects), stay after the
// pfvm phase.
// DEFER-LABEL: func.func @step
// DEFER: onnx.Shape
// DEFER: "onnx.Softmax"(%arg0) {axis = 1 : i64}
// DEFER: onnx.RandomUniformLike

// GRAPH: IR Dump After FoldConstants (pfvm-fold-constants)
// GRAPH-NOT: onnx.Shape
// GRAPH: return

// BAD: error: CODEGEN_DEFER_SIMPLIFY=fold (from the environment): unknown simplification 'fold'; the simplifications are remove-noops, fold-constants, fold-batchnorm, resolve-negative-indices, reuse-constants, cse, dce

func.func @step(%x: tensor<2x3xf32>, %p: tensor<4xf32>, %v: tensor<4xf32>, %g: tensor<4xf32>, %lr: tensor<f32>) -> (tensor<2xi64>, tensor<4xf32>, tensor<4xf32>, tensor<2x3xf32>, tensor<4xf32>, tensor<4xf32>) {
  %shape = "onnx.Shape"(%x) : (tensor<2x3xf32>) -> tensor<2xi64>
  %a = onnx.Initializer "a" dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b = onnx.Initializer "b" dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %s = "onnx.Softmax"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %unused = "onnx.RandomUniformLike"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %mom = "onnx.Constant"() {value = dense<0.9> : tensor<f32>} : () -> tensor<f32>
  %m = "onnx.Mul"(%mom, %v) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %vn = "onnx.Add"(%m, %g) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %step = "onnx.Mul"(%lr, %vn) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %pn = "onnx.Sub"(%p, %step) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %shape, %a, %b, %s, %pn, %vn : tensor<2xi64>, tensor<4xf32>, tensor<4xf32>, tensor<2x3xf32>, tensor<4xf32>, tensor<4xf32>
}
