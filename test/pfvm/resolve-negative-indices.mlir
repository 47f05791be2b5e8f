// pfvm-resolve-negative-indices rewrites negative axes and indices as the
// positive positions they stand for. CODEGEN_SKIP_RESOLVE_NEGATIVE_INDICES
// leaves the pass out of the pfvm phase (test/pfvm/pipeline-flags.mlir).

// RUN: mncc-opt --pfvm-resolve-negative-indices %s | FileCheck %s

// axis attributes, the negative default of Softmax included; Flatten's
// axis may be the rank itself.
// CHECK-LABEL: func.func @axis_attributes
// CHECK: "onnx.Softmax"(%arg0) {axis = 2 : i64}
// CHECK: "onnx.LogSoftmax"(%arg0) {axis = 1 : i64}
// CHECK: "onnx.Concat"(%arg0, %arg0) {axis = 2 : i64}
// CHECK: "onnx.Flatten"(%arg0) {axis = 0 : i64}
// CHECK: "onnx.ReduceMean"(%arg0) {axes = [0, 2]
// CHECK: "onnx.Gather"(%arg0, %{{.*}}) {axis = 1 : i64}
func.func @axis_attributes(%x: tensor<2x3x4xf32>, %i: tensor<2xi64>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x8xf32>, tensor<1x24xf32>, tensor<1x3x1xf32>, tensor<2x2x4xf32>) {
  %a = "onnx.Softmax"(%x) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %b = "onnx.LogSoftmax"(%x) {axis = -2 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %c = "onnx.Concat"(%x, %x) {axis = -1 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x8xf32>
  %d = "onnx.Flatten"(%x) {axis = -3 : i64} : (tensor<2x3x4xf32>) -> tensor<1x24xf32>
  %e = "onnx.ReduceMean"(%x) {axes = [0, -1]} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  %f = "onnx.Gather"(%x, %i) {axis = -2 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x2x4xf32>
  return %a, %b, %c, %d, %e, %f : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x8xf32>, tensor<1x24xf32>, tensor<1x3x1xf32>, tensor<2x2x4xf32>
}

// Constant axes inputs get a constant of their own: Unsqueeze counts in
// its output's rank.
// CHECK-LABEL: func.func @axes_inputs
// CHECK: %[[U:.*]] = "onnx.Constant"() {value = dense<[0, 3]> : tensor<2xi64>}
// CHECK: "onnx.Unsqueeze"(%arg0, %[[U]])
// CHECK: %[[S:.*]] = "onnx.Constant"() {value = dense<1> : tensor<1xi64>}
// CHECK: "onnx.Squeeze"(%arg1, %[[S]])
// CHECK: %[[R:.*]] = "onnx.Constant"() {value = dense<1> : tensor<1xi64>}
// CHECK: "onnx.ReduceSum"(%arg0, %[[R]])
func.func @axes_inputs(%x: tensor<2x3xf32>, %y: tensor<2x1xf32>) -> (tensor<1x2x3x1xf32>, tensor<2xf32>, tensor<2x1xf32>) {
  %ua = "onnx.Constant"() {value = dense<[0, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %u = "onnx.Unsqueeze"(%x, %ua) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<1x2x3x1xf32>
  %sa = "onnx.Constant"() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %s = "onnx.Squeeze"(%y, %sa) {operandSegmentSizes = array<i32: 1, 1>} : (tensor<2x1xf32>, tensor<1xi64>) -> tensor<2xf32>
  %r = "onnx.ReduceSum"(%x, %sa) {operandSegmentSizes = array<i32: 1, 1>} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  return %u, %s, %r : tensor<1x2x3x1xf32>, tensor<2xf32>, tensor<2x1xf32>
}

// Gather's constant indices count from the end of a static dimension; an
// index out of range is left for the run to report.
// CHECK-LABEL: func.func @gather_indices
// CHECK: %[[I:.*]] = "onnx.Constant"() {value = dense<[3, 0]> : tensor<2xi32>}
// CHECK: "onnx.Gather"(%arg0, %[[I]])
// CHECK: %[[BAD:.*]] = "onnx.Constant"() {value = dense<[-5, 0]> : tensor<2xi64>}
// CHECK: "onnx.Gather"(%arg0, %[[BAD]])
func.func @gather_indices(%x: tensor<4x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %i = "onnx.Constant"() {value = dense<[-1, 0]> : tensor<2xi32>} : () -> tensor<2xi32>
  %a = "onnx.Gather"(%x, %i) : (tensor<4x2xf32>, tensor<2xi32>) -> tensor<2x2xf32>
  %j = "onnx.Constant"() {value = dense<[-5, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  %b = "onnx.Gather"(%x, %j) : (tensor<4x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  return %a, %b : tensor<2x2xf32>, tensor<2x2xf32>
}

// Slice: axes, starts and ends; an end before the first element with a
// negative step has no positive form and stays.
// CHECK-LABEL: func.func @slice
// CHECK-DAG: %[[ST:.*]] = "onnx.Constant"() {value = dense<[2, 0]> : tensor<2xi64>}
// CHECK-DAG: %[[EN:.*]] = "onnx.Constant"() {value = dense<[5, 1]> : tensor<2xi64>}
// CHECK-DAG: %[[AX:.*]] = "onnx.Constant"() {value = dense<[1, 0]> : tensor<2xi64>}
// CHECK: "onnx.Slice"(%arg0, %[[ST]], %[[EN]], %[[AX]])
// CHECK: %[[RS:.*]] = "onnx.Constant"() {value = dense<5> : tensor<1xi64>}
// CHECK: "onnx.Slice"(%arg0, %[[RS]], %{{.*}}, %{{.*}}, %{{.*}})
func.func @slice(%x: tensor<3x6xf32>) -> (tensor<1x3xf32>, tensor<3x6xf32>) {
  %starts = "onnx.Constant"() {value = dense<[-4, -9]> : tensor<2xi64>} : () -> tensor<2xi64>
  %ends = "onnx.Constant"() {value = dense<[-1, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %axes = "onnx.Constant"() {value = dense<[-1, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  %a = "onnx.Slice"(%x, %starts, %ends, %axes) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>} : (tensor<3x6xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x3xf32>
  %rs = "onnx.Constant"() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %re = "onnx.Constant"() {value = dense<-9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %ra = "onnx.Constant"() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %rstep = "onnx.Constant"() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %b = "onnx.Slice"(%x, %rs, %re, %ra, %rstep) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<3x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3x6xf32>
  return %a, %b : tensor<1x3xf32>, tensor<3x6xf32>
}

// Without a ranked operand nothing is known: the axis stays. (An axis out
// of range for a ranked operand is an error of the verifier,
// test/pfvm/errors.mlir.)
// CHECK-LABEL: func.func @unranked
// CHECK: "onnx.Softmax"(%arg0) {axis = -1 : i64}
func.func @unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  %a = "onnx.Softmax"(%x) {axis = -1 : i64} : (tensor<*xf32>) -> tensor<*xf32>
  return %a : tensor<*xf32>
}
