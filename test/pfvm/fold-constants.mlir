// pfvm-fold-constants runs nodes of constant inputs through their pfvm:cpu
// kernels, and turns Shape and Size of static shapes into constants, so
// torch's shape arithmetic folds away. A fold may create at most size-limit
// bytes beyond the constants that die with it.

// RUN: mncc-opt --pfvm-fold-constants %s | FileCheck %s
// RUN: mncc-opt --pfvm-fold-constants='size-limit=16' %s | FileCheck %s --check-prefix=SMALL

// Shape, Gather, Unsqueeze and Concat feeding a Reshape, as torch writes a
// flatten: the shape becomes one constant.
// CHECK-LABEL: func.func @shape_arithmetic
// CHECK-NOT: onnx.Shape
// CHECK-NOT: onnx.Gather
// CHECK-NOT: onnx.Unsqueeze
// CHECK-NOT: onnx.Concat
// CHECK: %[[SHAPE:.*]] = "onnx.Constant"() {value = dense<[2, -1]> : tensor<2xi64>}
// CHECK: "onnx.Reshape"(%arg0, %[[SHAPE]])
func.func @shape_arithmetic(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  %shape = "onnx.Shape"(%x) : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %zero = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %batch = "onnx.Gather"(%shape, %zero) {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %axes = "onnx.Constant"() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %b1 = "onnx.Unsqueeze"(%batch, %axes) : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %minus = "onnx.Constant"() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %target = "onnx.Concat"(%b1, %minus) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %y = "onnx.Reshape"(%x, %target) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
  return %y : tensor<2x12xf32>
}

// Shape takes start and end; Size counts the elements. A dynamic dimension
// is not known, so that Shape stays.
// CHECK-LABEL: func.func @shape_and_size
// CHECK: "onnx.Constant"() {value = dense<[3, 4]> : tensor<2xi64>}
// CHECK: "onnx.Constant"() {value = dense<24> : tensor<i64>}
// CHECK: "onnx.Shape"(%arg1)
func.func @shape_and_size(%x: tensor<2x3x4xf32>, %d: tensor<?x3xf32>) -> (tensor<2xi64>, tensor<i64>, tensor<2xi64>) {
  %s = "onnx.Shape"(%x) {start = -2 : i64} : (tensor<2x3x4xf32>) -> tensor<2xi64>
  %n = "onnx.Size"(%x) : (tensor<2x3x4xf32>) -> tensor<i64>
  %t = "onnx.Shape"(%d) : (tensor<?x3xf32>) -> tensor<2xi64>
  return %s, %n, %t : tensor<2xi64>, tensor<i64>, tensor<2xi64>
}

// Element-wise arithmetic on constants, with the kernels' semantics
// (integer division truncates, as pfvm:cpu's Div does).
// CHECK-LABEL: func.func @arithmetic
// CHECK: "onnx.Constant"() {value = dense<[3.500000e+00, 5.000000e+00]> : tensor<2xf32>}
// CHECK: "onnx.Constant"() {value = dense<[2, -2]> : tensor<2xi32>}
// CHECK-NOT: onnx.Add
// CHECK-NOT: onnx.Div
func.func @arithmetic() -> (tensor<2xf32>, tensor<2xi32>) {
  %a = "onnx.Constant"() {value = dense<[1.5, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %b = "onnx.Constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %c = "onnx.Add"(%a, %b) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %i = "onnx.Constant"() {value = dense<[7, -7]> : tensor<2xi32>} : () -> tensor<2xi32>
  %j = "onnx.Constant"() {value = dense<3> : tensor<2xi32>} : () -> tensor<2xi32>
  %k = "onnx.Div"(%i, %j) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %c, %k : tensor<2xf32>, tensor<2xi32>
}

// A weight used once may be transposed at compile time whatever its
// size: the result replaces it. A weight also used elsewhere is not
// duplicated beyond the limit (here 24 bytes over 16).
// CHECK-LABEL: func.func @weights
// CHECK-NOT: onnx.Transpose
// SMALL-LABEL: func.func @weights
// SMALL: "onnx.Constant"() {value = dense<{{.*}}> : tensor<3x2xf32>}
// SMALL: %[[W:.*]] = onnx.Initializer "shared"
// SMALL: "onnx.Transpose"(%[[W]])
func.func @weights() -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<2x3xf32>) {
  %once = onnx.Initializer "once" dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %t = "onnx.Transpose"(%once) {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %shared = onnx.Initializer "shared" dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %u = "onnx.Transpose"(%shared) {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %t, %u, %shared : tensor<3x2xf32>, tensor<3x2xf32>, tensor<2x3xf32>
}

// Results over the limit stay computed at run time: under 16 bytes, the
// 8 x 4 ConstantOfShape (128 bytes) is not folded; by default it is.
// CHECK-LABEL: func.func @limit
// CHECK: "onnx.Constant"() {value = dense<1.000000e+00> : tensor<8x4xf32>}
// SMALL-LABEL: func.func @limit
// SMALL: "onnx.ConstantOfShape"
func.func @limit() -> tensor<8x4xf32> {
  %shape = "onnx.Constant"() {value = dense<[8, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %y = "onnx.ConstantOfShape"(%shape) {value = dense<1.0> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// A result type less static than the fold is refined where no terminator
// ties it; random nodes, nodes without a kernel's success, and nodes of
// non-constant inputs stay.
// CHECK-LABEL: func.func @left_alone
// CHECK: "onnx.RandomUniformLike"
// CHECK: "onnx.Reshape"{{.*}} : (tensor<4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
// CHECK: "onnx.Add"(%arg0
func.func @left_alone(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<?x?xf32>, tensor<2xf32>) {
  %c = "onnx.Constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %r = "onnx.RandomUniformLike"(%c) : (tensor<2xf32>) -> tensor<2xf32>
  %data = "onnx.Constant"() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %bad = "onnx.Constant"() {value = dense<[3, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %y = "onnx.Reshape"(%data, %bad) : (tensor<4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %z = "onnx.Add"(%x, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %r, %y, %z : tensor<2xf32>, tensor<?x?xf32>, tensor<2xf32>
}

// CHECK-LABEL: func.func @refined
// CHECK: %[[C:.*]] = "onnx.Constant"() {value = dense<{{.*}}> : tensor<2x2xf32>}
// CHECK: "onnx.Add"(%arg0, %[[C]]) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK: %[[D:.*]] = "onnx.Reshape"
// CHECK: return %{{.*}}, %[[D]] : tensor<2x2xf32>, tensor<*xf32>
func.func @refined(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<*xf32>) {
  %data = "onnx.Constant"() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %shape = "onnx.Constant"() {value = dense<[2, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %y = "onnx.Reshape"(%data, %shape) : (tensor<4xf32>, tensor<2xi64>) -> tensor<*xf32>
  %z = "onnx.Add"(%x, %y) : (tensor<2x2xf32>, tensor<*xf32>) -> tensor<2x2xf32>
  // Returned, the result keeps its declared type: not folded.
  %r = "onnx.Reshape"(%data, %shape) : (tensor<4xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %z, %r : tensor<2x2xf32>, tensor<*xf32>
}

// A Slice whose bounds have become constants gets its static type, as
// shape inference could not know it at import (torch's attention splits
// its projection this way).
// CHECK-LABEL: func.func @slice_type
// CHECK: "onnx.Slice"{{.*}} -> tensor<2x2xf32>
// CHECK: "onnx.Slice"{{.*}} -> tensor<2x1xf32>
// CHECK: "onnx.Relu"({{.*}}) : (tensor<2x2xf32>) -> tensor<2x2xf32>
func.func @slice_type(%x: tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<*xf32>) {
  %shape = "onnx.Shape"(%x) : (tensor<2x6xf32>) -> tensor<2xi64>
  %one = "onnx.Constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %width = "onnx.Gather"(%shape, %one) {axis = 0 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %three = "onnx.Constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
  %third = "onnx.Div"(%width, %three) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %zero = "onnx.Constant"() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %axes = "onnx.Constant"() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %end = "onnx.Unsqueeze"(%third, %zero) : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %a = "onnx.Slice"(%x, %zero, %end, %axes) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>} : (tensor<2x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xf32>
  // From the end, backwards, by 2 up to -2 (exclusive): element 5 alone.
  %minus = "onnx.Constant"() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %two = "onnx.Constant"() {value = dense<-2> : tensor<1xi64>} : () -> tensor<1xi64>
  %b = "onnx.Slice"(%x, %minus, %two, %axes, %two) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<2x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xf32>
  %c = "onnx.Relu"(%a) : (tensor<*xf32>) -> tensor<2x2xf32>
  %d = "onnx.Relu"(%b) : (tensor<*xf32>) -> tensor<*xf32>
  return %c, %d : tensor<2x2xf32>, tensor<*xf32>
}
