// pfvm-reuse-constants makes identical initializers and constants share
// one value: the first is kept, with its name. PFVM_DISABLE_CONSTANT_REUSE
// leaves the pass out of the pfvm phase (test/pfvm/pipeline-flags.mlir).

// RUN: mncc-opt --pfvm-reuse-constants %s | FileCheck %s

// Same type and data: one value, an initializer and a constant alike;
// another type or other data: apart.
// CHECK-LABEL: func.func @literals
// CHECK: %[[A:.*]] = onnx.Initializer "a" dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NOT: onnx.Initializer "b"
// CHECK: %[[C:.*]] = onnx.Initializer "c" dense<[1.000000e+00, 3.000000e+00]>
// CHECK: %[[D:.*]] = onnx.Initializer "d" dense<{{\[\[}}1.000000e+00, 2.000000e+00]]> : tensor<1x2xf32>
// CHECK-NOT: onnx.Constant
// CHECK: return %[[A]], %[[A]], %[[C]], %[[D]], %[[A]], %[[A]]
func.func @literals() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %a = onnx.Initializer "a" dense<[1.0, 2.0]> : tensor<2xf32>
  %b = onnx.Initializer "b" dense<[1.0, 2.0]> : tensor<2xf32>
  %c = onnx.Initializer "c" dense<[1.0, 3.0]> : tensor<2xf32>
  %d = onnx.Initializer "d" dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %k = "onnx.Constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %l = "onnx.Constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  return %a, %b, %c, %d, %k, %l : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>
}

// Weights in resources (the importer's form for 1 KiB and more) are
// compared by their bytes.
// CHECK-LABEL: func.func @resources
// CHECK: %[[W:.*]] = onnx.Initializer "w1" dense_resource<w1>
// CHECK-NOT: onnx.Initializer "w2"
// CHECK: %[[V:.*]] = onnx.Initializer "w3" dense_resource<w3>
// CHECK: return %[[W]], %[[W]], %[[V]]
func.func @resources() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %w1 = onnx.Initializer "w1" dense_resource<w1> : tensor<2xf32>
  %w2 = onnx.Initializer "w2" dense_resource<w2> : tensor<2xf32>
  %w3 = onnx.Initializer "w3" dense_resource<w3> : tensor<2xf32>
  return %w1, %w2, %w3 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// Constants of a subgraph share within their block.
// CHECK-LABEL: func.func @subgraph
// CHECK: "onnx.If"
// CHECK: %[[K:.*]] = "onnx.Constant"
// CHECK-NOT: "onnx.Constant"
// CHECK: "onnx.Add"(%[[K]], %[[K]])
func.func @subgraph(%c: tensor<i1>) -> tensor<2xf32> {
  %y = "onnx.If"(%c) ({
    %k = "onnx.Constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
    %l = "onnx.Constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
    %s = "onnx.Add"(%k, %l) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %s : tensor<2xf32>
  }, {
    %k = "onnx.Constant"() {value = dense<[3.0, 4.0]> : tensor<2xf32>} : () -> tensor<2xf32>
    onnx.Yield %k : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w1: "0x040000000000803F00000040",
      w2: "0x040000000000803F00000040",
      w3: "0x040000000000803F00004040"
    }
  }
#-}
