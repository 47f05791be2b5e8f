// pfvm-remove-noops removes Identity, inference Dropout, Reshape and the
// like to the input's own type, and the pairs of Transposes and Casts that
// cancel or merge (the onnx ops' folders and canonicalizers).

// RUN: mncc-opt --pfvm-remove-noops %s | FileCheck %s

// CHECK-LABEL: func.func @identity
// CHECK-NEXT: return %arg0
func.func @identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = "onnx.Identity"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// An Identity that makes a type more static is kept: the uses see the
// static type.
// CHECK-LABEL: func.func @identity_refines
// CHECK: "onnx.Identity"
func.func @identity_refines(%x: tensor<?x3xf32>) -> tensor<2x3xf32> {
  %y = "onnx.Identity"(%x) : (tensor<?x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// Dropout in inference is its input; in training, or with its mask used,
// it stays.
// CHECK-LABEL: func.func @dropout
// CHECK-NOT: "onnx.Dropout"(%arg0)
// CHECK: %[[TRUE:.*]] = "onnx.Constant"
// CHECK: "onnx.Dropout"(%arg0, %[[TRUE]])
// CHECK: "onnx.Dropout"(%arg1)
// CHECK: return %arg0, %arg0
func.func @dropout(%x: tensor<4xf32>, %z: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>) {
  %a = "onnx.Dropout"(%x) {operandSegmentSizes = array<i32: 1, 0, 0>, resultSegmentSizes = array<i32: 1, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  %false = "onnx.Constant"() {value = dense<false> : tensor<i1>} : () -> tensor<i1>
  %b = "onnx.Dropout"(%x, %false) {operandSegmentSizes = array<i32: 1, 0, 1>, resultSegmentSizes = array<i32: 1, 0>} : (tensor<4xf32>, tensor<i1>) -> tensor<4xf32>
  %true = "onnx.Constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %c = "onnx.Dropout"(%x, %true) {operandSegmentSizes = array<i32: 1, 0, 1>, resultSegmentSizes = array<i32: 1, 0>} : (tensor<4xf32>, tensor<i1>) -> tensor<4xf32>
  %d, %mask = "onnx.Dropout"(%z) {operandSegmentSizes = array<i32: 1, 0, 0>, resultSegmentSizes = array<i32: 1, 1>} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  return %a, %b, %c, %mask, %d : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>
}

// Reshape, Flatten, Squeeze and Expand to the input's own static type.
// CHECK-LABEL: func.func @same_type
// CHECK-NOT: onnx.Reshape
// CHECK-NOT: onnx.Flatten
// CHECK-NOT: onnx.Squeeze
// CHECK-NOT: onnx.Expand
// CHECK: return %arg0, %arg0, %arg0, %arg0
func.func @same_type(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %shape = "onnx.Constant"() {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %r = "onnx.Reshape"(%x, %shape) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %f = "onnx.Flatten"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = "onnx.Squeeze"(%x) {operandSegmentSizes = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %e = "onnx.Expand"(%x, %shape) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %r, %f, %s, %e : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// Reshape(Reshape(x)) is one Reshape; an outer shape with a 0 (copy the
// inner result's dimension) is not merged.
// CHECK-LABEL: func.func @reshape_pair
// CHECK-DAG: %[[S:.*]] = "onnx.Constant"() {value = dense<[3, 4]>
// CHECK-DAG: %[[Z:.*]] = "onnx.Constant"() {value = dense<[0, 3, 1]>
// CHECK-DAG: %[[INNER:.*]] = "onnx.Reshape"(%arg0
// CHECK-DAG: "onnx.Reshape"(%arg0, %[[S]])
// CHECK-DAG: "onnx.Reshape"(%[[INNER]], %[[Z]])
func.func @reshape_pair(%x: tensor<2x6xf32>) -> (tensor<3x4xf32>, tensor<4x3x1xf32>) {
  %s1 = "onnx.Constant"() {value = dense<[4, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %a = "onnx.Reshape"(%x, %s1) : (tensor<2x6xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  %s2 = "onnx.Constant"() {value = dense<[3, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %b = "onnx.Reshape"(%a, %s2) : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<3x4xf32>
  %s3 = "onnx.Constant"() {value = dense<[0, 3, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
  %c = "onnx.Reshape"(%a, %s3) : (tensor<4x3xf32>, tensor<3xi64>) -> tensor<4x3x1xf32>
  return %b, %c : tensor<3x4xf32>, tensor<4x3x1xf32>
}

// Transposes that cancel go; others compose into one.
// CHECK-LABEL: func.func @transpose_pairs
// CHECK: %[[T:.*]] = "onnx.Transpose"(%arg0) {perm = [2, 0, 1]}
// CHECK-NOT: onnx.Transpose
// CHECK: return %arg0, %[[T]]
func.func @transpose_pairs(%x: tensor<1x2x3xf32>) -> (tensor<1x2x3xf32>, tensor<3x1x2xf32>) {
  %t = "onnx.Transpose"(%x) {perm = [0, 2, 1]} : (tensor<1x2x3xf32>) -> tensor<1x3x2xf32>
  %u = "onnx.Transpose"(%t) {perm = [0, 2, 1]} : (tensor<1x3x2xf32>) -> tensor<1x2x3xf32>
  %v = "onnx.Transpose"(%t) {perm = [1, 0, 2]} : (tensor<1x3x2xf32>) -> tensor<3x1x2xf32>
  return %u, %v : tensor<1x2x3xf32>, tensor<3x1x2xf32>
}

// A Transpose without perm reverses the dimensions; with the identity
// permutation it is its input.
// CHECK-LABEL: func.func @transpose_default
// CHECK-NOT: onnx.Transpose
// CHECK: return %arg0, %arg1
func.func @transpose_default(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %t = "onnx.Transpose"(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %u = "onnx.Transpose"(%t) : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %i = "onnx.Transpose"(%y) {perm = [0, 1]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %u, %i : tensor<2x3xf32>, tensor<2x3xf32>
}

// Cast(Cast(x)) through a type that holds every value of x's is one Cast,
// or x when it comes back to x's type; through a narrower type both stay.
// CHECK-LABEL: func.func @cast_pairs
// CHECK: %[[WIDE:.*]] = "onnx.Cast"(%arg1) {to = 1 : i64} : (tensor<4xi8>) -> tensor<4xf32>
// CHECK: %[[DOWN:.*]] = "onnx.Cast"(%arg0) {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16>
// CHECK: %[[UP:.*]] = "onnx.Cast"(%[[DOWN]]) {to = 1 : i64} : (tensor<4xf16>) -> tensor<4xf32>
// CHECK: return %arg0, %[[WIDE]], %[[UP]], %arg0
func.func @cast_pairs(%x: tensor<4xf32>, %i: tensor<4xi8>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %d = "onnx.Cast"(%x) {to = 11 : i64} : (tensor<4xf32>) -> tensor<4xf64>
  %back = "onnx.Cast"(%d) {to = 1 : i64} : (tensor<4xf64>) -> tensor<4xf32>
  %i32 = "onnx.Cast"(%i) {to = 6 : i64} : (tensor<4xi8>) -> tensor<4xi32>
  %f = "onnx.Cast"(%i32) {to = 1 : i64} : (tensor<4xi32>) -> tensor<4xf32>
  %h = "onnx.Cast"(%x) {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16>
  %lossy = "onnx.Cast"(%h) {to = 1 : i64} : (tensor<4xf16>) -> tensor<4xf32>
  %same = "onnx.Cast"(%x) {to = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %back, %f, %lossy, %same : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
