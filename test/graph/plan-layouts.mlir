// mncc-plan-layouts (the legacy planner) gives every device tensor the
// #mngraph.layout of its DRAM form (docs/codegen.md C2, C4).

// RUN: mncc-opt --mncc-plan-layouts %s | FileCheck %s

// A kernel's preferred order decides its output; the graph input takes the
// order its consumer wants (the host lays it out); an element-wise operator
// passes its operand's order on; a consumer that wants the identity order
// gets a layout_switch. Constants are placed by a switch from their own
// type, which the host does when it stages them.
// CHECK-LABEL: func.func @planned
// CHECK-SAME: (%arg0: tensor<2x8x4x4xf32, #mngraph.layout<(2,8,4,4)/((2:64), (4:1, 2_W:1), (4:16), (4:4))>>)
// CHECK: %[[S:.*]] = onnx.Initializer "s"
// CHECK-NEXT: mngraph.layout_switch %[[S]] : tensor<8xf32> -> tensor<8xf32, #mngraph.layout<(8)/((4:1, 2_W:1))>>
// CHECK: %[[BN:.*]] = "onnx.BatchNormalization"(%arg0,
// CHECK-SAME: -> tensor<2x8x4x4xf32, #mngraph.layout<(2,8,4,4)/((2:64), (4:1, 2_W:1), (4:16), (4:4))>>
// CHECK: %[[R:.*]] = "onnx.Relu"(%[[BN]]) {{.*}} -> tensor<2x8x4x4xf32, #mngraph.layout<(2,8,4,4)/((2:64), (4:1, 2_W:1), (4:16), (4:4))>>
// CHECK: %[[MOVED:.*]] = mngraph.layout_switch %[[R]] : {{.*}} -> tensor<2x8x4x4xf32, #mngraph.layout<(2,8,4,4)/((2:128), (8:16), (4:4), (4:1, 2_W:1))>>
// CHECK: "onnx.Softmax"(%[[MOVED]])
func.func @planned(%x: tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32> {
  %s = onnx.Initializer "s" dense<1.5> : tensor<8xf32>
  %b = onnx.Initializer "b" dense<0.25> : tensor<8xf32>
  %m = onnx.Initializer "m" dense<0.1> : tensor<8xf32>
  %v = onnx.Initializer "v" dense<2.0> : tensor<8xf32>
  %y = "onnx.BatchNormalization"(%x, %s, %b, %m, %v) {epsilon = 1.0e-5 : f32, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32>
  %r = "onnx.Relu"(%y) : (tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  %z = "onnx.Softmax"(%r) {axis = 1 : i64} : (tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  return %z : tensor<2x8x4x4xf32>
}

// The outermost DRAM dimension is split over the four groups' DRAMs once
// the tensor is large enough: `4_L2B:2` on it; its padding is in the shape
// prefix (784 singles fill 98 quads exactly, 10 need two quads).
// CHECK-LABEL: func.func @groups
// CHECK-SAME: tensor<16x784xf32, #mngraph.layout<(16,784)/((4_L2B:2, 4:392), (392:1, 2_W:1))>>
// CHECK-SAME: tensor<16x10xf32, #mngraph.layout<(16,10)/((16:8), (8:1, 2_W:1))>>
func.func @groups(%x: tensor<16x784xf32>, %y: tensor<16x10xf32>) -> (tensor<16x784xf32>, tensor<16x10xf32>) {
  %a = "onnx.Relu"(%x) : (tensor<16x784xf32>) -> tensor<16x784xf32>
  %b = "onnx.Relu"(%y) : (tensor<16x10xf32>) -> tensor<16x10xf32>
  return %a, %b : tensor<16x784xf32>, tensor<16x10xf32>
}

// A reshape whose operand already holds its result's bytes keeps the
// producer's order: [2, 8, 1, 1] channels last is [2, 8] row-major, so the
// Flatten after the pool is an alias. A Flatten of [2, 8, 4, 4] channels
// last reorders, and gets its switch to the identity order.
// CHECK-LABEL: func.func @reshape_in_place
// CHECK: %[[P:.*]] = "onnx.GlobalAveragePool"
// CHECK-NOT: mngraph.layout_switch %[[P]]
// CHECK: "onnx.Flatten"(%[[P]])
// CHECK: %[[MOVED:.*]] = mngraph.layout_switch %{{.*}} : {{.*}} -> tensor<2x8x4x4xf32, #mngraph.layout<(2,8,4,4)/((2:128), (8:16), (4:4), (4:1, 2_W:1))>>
// CHECK: "onnx.Flatten"(%[[MOVED]])
func.func @reshape_in_place(%x: tensor<2x8x4x4xf32>) -> (tensor<2x8xf32>, tensor<2x128xf32>) {
  %p = "onnx.GlobalAveragePool"(%x) : (tensor<2x8x4x4xf32>) -> tensor<2x8x1x1xf32>
  %f = "onnx.Flatten"(%p) {axis = 1 : i64} : (tensor<2x8x1x1xf32>) -> tensor<2x8xf32>
  %q = "onnx.MaxPool"(%x) {kernel_shape = [1, 1]} : (tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  %g = "onnx.Flatten"(%q) {axis = 1 : i64} : (tensor<2x8x4x4xf32>) -> tensor<2x128xf32>
  return %f, %g : tensor<2x8xf32>, tensor<2x128xf32>
}

// Clip's bounds are scalars: they do not tie it to the identity order, so
// it works in the channels-last order the pool gave its data, without a
// switch, and its bounds keep their own.
// CHECK-LABEL: func.func @clip_after_pool
// CHECK: %[[P:.*]] = "onnx.MaxPool"
// CHECK-NOT: mngraph.layout_switch %[[P]]
// CHECK: "onnx.Clip"(%[[P]], %{{.*}}, %{{.*}}) {{.*}} : (tensor<2x8x4x4xf32, #mngraph.layout<(2,8,4,4)/((2:64), (4:1, 2_W:1), (4:16), (4:4))>>, tensor<f32{{.*}}>, tensor<f32{{.*}}>) -> tensor<2x8x4x4xf32, #mngraph.layout<(2,8,4,4)/((2:64), (4:1, 2_W:1), (4:16), (4:4))>>
func.func @clip_after_pool(%x: tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32> {
  %lo = onnx.Initializer "lo" dense<0.0> : tensor<f32>
  %hi = onnx.Initializer "hi" dense<6.0> : tensor<f32>
  %q = "onnx.MaxPool"(%x) {kernel_shape = [1, 1]} : (tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  %c = "onnx.Clip"(%q, %lo, %hi) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<2x8x4x4xf32>, tensor<f32>, tensor<f32>) -> tensor<2x8x4x4xf32>
  %r = "onnx.Relu"(%c) : (tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  return %r : tensor<2x8x4x4xf32>
}
