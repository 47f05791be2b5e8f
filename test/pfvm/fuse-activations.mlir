// pfvm-fuse-activations marks a float32 Conv or Add whose only use is a
// Relu, or a Clip with constant or absent bounds, with the activation it
// runs (onnx.fused_activation); both nodes stay. pfvm:cpu follows the mark
// (test/tools/mncc/fuse-activations.test compares the outputs).

// RUN: mncc-opt --pfvm-fuse-activations %s | FileCheck %s
// A second run decides again and gives the same marks.
// RUN: mncc-opt --pfvm-fuse-activations --pfvm-fuse-activations %s | FileCheck %s

// CHECK-LABEL: func.func @marked
// CHECK: "onnx.Conv"{{.*}}onnx.fused_activation = "Relu"
// CHECK: "onnx.Relu"
// CHECK: "onnx.Add"{{.*}}onnx.fused_activation = "Clip"
// CHECK: "onnx.Clip"
// CHECK: "onnx.Add"{{.*}}onnx.fused_activation = "Clip"
// CHECK: "onnx.Clip"
func.func @marked(%x: tensor<1x1x2x2xf32>, %w: tensor<1x1x1x1xf32>, %y: tensor<4xf32>) -> (tensor<1x1x2x2xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c = "onnx.Conv"(%x, %w) : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32>
  %r = "onnx.Relu"(%c) : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %a = "onnx.Add"(%y, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %lo = "onnx.Constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %hi = "onnx.Constant"() {value = dense<6.0> : tensor<f32>} : () -> tensor<f32>
  %k = "onnx.Clip"(%a, %lo, %hi) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<4xf32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  %b = "onnx.Add"(%y, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = "onnx.Clip"(%b) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %r, %k, %l : tensor<1x1x2x2xf32>, tensor<4xf32>, tensor<4xf32>
}

// Not marked: a producer used twice, a Clip whose bound is computed, a
// double Conv, and other activations.
// CHECK-LABEL: func.func @unmarked
// CHECK-NOT: onnx.fused_activation
func.func @unmarked(%y: tensor<4xf32>, %d: tensor<4xf64>, %bound: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>, tensor<4xf32>) {
  %a = "onnx.Add"(%y, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = "onnx.Relu"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %b = "onnx.Add"(%y, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %k = "onnx.Clip"(%b, %bound) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = "onnx.Add"(%d, %d) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %f = "onnx.Relu"(%e) : (tensor<4xf64>) -> tensor<4xf64>
  %g = "onnx.Add"(%y, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = "onnx.Sigmoid"(%g) : (tensor<4xf32>) -> tensor<4xf32>
  return %r, %a, %k, %f, %s : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>, tensor<4xf32>
}

// A stale mark (the Relu is gone) is removed.
// CHECK-LABEL: func.func @stale
// CHECK-NOT: onnx.fused_activation
func.func @stale(%y: tensor<4xf32>) -> tensor<4xf32> {
  %a = "onnx.Add"(%y, %y) {onnx.fused_activation = "Relu"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
