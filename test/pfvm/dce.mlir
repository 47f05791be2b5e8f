// pfvm-dce removes nodes nothing uses, from the last up, unused
// initializers and constants, random nodes and Dropout whose results
// nobody reads, and the same inside subgraphs.

// RUN: mncc-opt --pfvm-dce %s | FileCheck %s

// CHECK-LABEL: func.func @dead
// CHECK-NEXT: %[[W:.*]] = onnx.Initializer "used"
// CHECK-NEXT: %[[Y:.*]] = "onnx.Add"(%arg0, %[[W]])
// CHECK-NEXT: %[[I:.*]] = "onnx.If"
// CHECK-NEXT: %[[K:.*]] = "onnx.Constant"
// CHECK-NEXT: onnx.Yield %[[K]]
// CHECK: onnx.Yield %arg0
// CHECK: return %[[Y]], %[[I]]
func.func @dead(%x: tensor<2xf32>, %c: tensor<i1>) -> (tensor<2xf32>, tensor<2xf32>) {
  %w = onnx.Initializer "used" dense<1.0> : tensor<2xf32>
  %unused = onnx.Initializer "unused" dense<2.0> : tensor<2xf32>
  %k = "onnx.Constant"() {value = dense<3.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = "onnx.Add"(%x, %w) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %a = "onnx.Exp"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %b = "onnx.Log"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %r = "onnx.RandomUniformLike"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %d = "onnx.Dropout"(%x) {operandSegmentSizes = array<i32: 1, 0, 0>, resultSegmentSizes = array<i32: 1, 0>} : (tensor<2xf32>) -> tensor<2xf32>
  %i = "onnx.If"(%c) ({
    %dead = "onnx.Neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    %one = "onnx.Constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
    onnx.Yield %one : tensor<2xf32>
  }, {
    onnx.Yield %x : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  %j = "onnx.If"(%c) ({
    onnx.Yield %x : tensor<2xf32>
  }, {
    onnx.Yield %x : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  return %y, %i : tensor<2xf32>, tensor<2xf32>
}
