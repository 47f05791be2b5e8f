// pfvm-cse merges side-effect-free nodes with the same op, attributes,
// result types and operands (in any order for the Commutative ops).
// Constants are left to pfvm-reuse-constants.

// RUN: mncc-opt --pfvm-cse %s | FileCheck %s

// CHECK-LABEL: func.func @same
// CHECK: %[[A:.*]] = "onnx.Add"(%arg0, %arg1)
// CHECK-NOT: onnx.Add
// CHECK: %[[S:.*]] = "onnx.Sub"(%arg0, %arg1)
// CHECK: %[[T:.*]] = "onnx.Sub"(%arg1, %arg0)
// CHECK: %[[M:.*]] = "onnx.Softmax"(%arg0) {axis = 0 : i64}
// CHECK: %[[N:.*]] = "onnx.Softmax"(%arg0) {axis = 1 : i64}
// CHECK: return %[[A]], %[[A]], %[[S]], %[[T]], %[[M]], %[[N]], %[[M]]
func.func @same(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %a = "onnx.Add"(%x, %y) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  // Add is commutative: the same value.
  %b = "onnx.Add"(%y, %x) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  // Sub is not.
  %s = "onnx.Sub"(%x, %y) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %t = "onnx.Sub"(%y, %x) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  // Other attributes, another value.
  %m = "onnx.Softmax"(%x) {axis = 0 : i64} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %n = "onnx.Softmax"(%x) {axis = 1 : i64} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %o = "onnx.Softmax"(%x) {axis = 0 : i64} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %a, %b, %s, %t, %m, %n, %o : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

// Chains merge node by node; random nodes and constants stay apart.
// CHECK-LABEL: func.func @chains
// CHECK: %[[R:.*]] = "onnx.Relu"(%arg0)
// CHECK: %[[E:.*]] = "onnx.Exp"(%[[R]])
// CHECK-COUNT-2: "onnx.Constant"
// CHECK-COUNT-2: "onnx.RandomUniformLike"
// CHECK: return %[[E]], %[[E]]
func.func @chains(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %r1 = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %e1 = "onnx.Exp"(%r1) : (tensor<2xf32>) -> tensor<2xf32>
  %r2 = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %e2 = "onnx.Exp"(%r2) : (tensor<2xf32>) -> tensor<2xf32>
  %k1 = "onnx.Constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %k2 = "onnx.Constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %u1 = "onnx.RandomUniformLike"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %u2 = "onnx.RandomUniformLike"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %e1, %e2, %k1, %k2, %u1, %u2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
