// mncc-plan-dtypes gives every float32 tensor its device format by
// float_dtype and inserts onnx.Cast where a format changes (f16 is
// MN-Core's half in the graph stage).

// RUN: mncc-opt --mncc-plan-dtypes='float-dtype=mixed' %s | FileCheck %s --check-prefix=MIXED
// RUN: mncc-opt --mncc-plan-dtypes='float-dtype=half' %s | FileCheck %s --check-prefix=HALF
// RUN: mncc-opt --mncc-plan-dtypes='float-dtype=double' %s | FileCheck %s --check-prefix=DOUBLE
// RUN: mncc-opt --mncc-plan-dtypes='float-dtype=float' %s | FileCheck %s --check-prefix=FLOAT
// RUN: not mncc-opt --mncc-plan-dtypes='float-dtype=quad' %s 2>&1 | FileCheck %s --check-prefix=BAD

// Under mixed the product's A, B and bias are half and so is its result
// (the bias goes through the matrix unit with the products); the Relu that
// is its only user stays half with it (mncc-fuse-epilogues folds it into
// the product's kernel), and its result is single again.
// MIXED-LABEL: func.func @gemm_relu
// MIXED: %[[X:.*]] = "onnx.Cast"(%arg0) {to = 10 : i64} : (tensor<16x784xf32>) -> tensor<16x784xf16>
// MIXED: %[[W:.*]] = "onnx.Cast"(%{{.*}}) {to = 10 : i64} : (tensor<10x784xf32>) -> tensor<10x784xf16>
// MIXED: %[[B:.*]] = "onnx.Cast"(%{{.*}}) {to = 10 : i64} : (tensor<10xf32>) -> tensor<10xf16>
// MIXED: %[[Y:.*]] = "onnx.Gemm"(%[[X]], %[[W]], %[[B]]) {{.*}} : (tensor<16x784xf16>, tensor<10x784xf16>, tensor<10xf16>) -> tensor<16x10xf16>
// MIXED: %[[R:.*]] = "onnx.Relu"(%[[Y]]) : (tensor<16x10xf16>) -> tensor<16x10xf16>
// MIXED: "onnx.Cast"(%[[R]]) {to = 1 : i64} : (tensor<16x10xf16>) -> tensor<16x10xf32>

// Under half every tensor is half, the bias too; the graph's inputs and
// outputs keep their host type, with a Cast at the boundary.
// HALF-LABEL: func.func @gemm_relu(%arg0: tensor<16x784xf32>) -> tensor<16x10xf32>
// HALF: "onnx.Cast"(%arg0) {to = 10 : i64}
// HALF: "onnx.Gemm"{{.*}} : (tensor<16x784xf16>, tensor<10x784xf16>, tensor<10xf16>) -> tensor<16x10xf16>
// HALF: %[[R:.*]] = "onnx.Relu"(%{{.*}}) : (tensor<16x10xf16>) -> tensor<16x10xf16>
// HALF: %[[OUT:.*]] = "onnx.Cast"(%[[R]]) {to = 1 : i64} : (tensor<16x10xf16>) -> tensor<16x10xf32>
// HALF: return %[[OUT]]

// DOUBLE: "onnx.Gemm"{{.*}} -> tensor<16x10xf64>
// DOUBLE: "onnx.Cast"(%{{.*}}) {to = 1 : i64} : (tensor<16x10xf64>) -> tensor<16x10xf32>

// FLOAT-NOT: onnx.Cast

// BAD: error: float-dtype must be mixed, half, float or double, not 'quad'
func.func @gemm_relu(%x: tensor<16x784xf32>) -> tensor<16x10xf32> {
  %w = onnx.Initializer "w" dense<0.5> : tensor<10x784xf32>
  %b = onnx.Initializer "b" dense<0.25> : tensor<10xf32>
  %y = "onnx.Gemm"(%x, %w, %b) {transB = 1 : i64} : (tensor<16x784xf32>, tensor<10x784xf32>, tensor<10xf32>) -> tensor<16x10xf32>
  %r = "onnx.Relu"(%y) : (tensor<16x10xf32>) -> tensor<16x10xf32>
  return %r : tensor<16x10xf32>
}

// A Clip with constant bounds after a Conv stays half too, its bounds cast
// with it; a Relu after a product that has another user stays single.
// MIXED-LABEL: func.func @conv_clip
// MIXED: %[[C:.*]] = "onnx.Conv"{{.*}} -> tensor<1x4x3x3xf16>
// MIXED-DAG: %[[LO:.*]] = "onnx.Cast"(%{{.*}}) {to = 10 : i64} : (tensor<f32>) -> tensor<f16>
// MIXED-DAG: %[[HI:.*]] = "onnx.Cast"(%{{.*}}) {to = 10 : i64} : (tensor<f32>) -> tensor<f16>
// MIXED: %[[K:.*]] = "onnx.Clip"(%[[C]], %[[LO]], %[[HI]]) {{.*}} : (tensor<1x4x3x3xf16>, tensor<f16>, tensor<f16>) -> tensor<1x4x3x3xf16>
// MIXED: "onnx.Cast"(%[[K]]) {to = 1 : i64}
// MIXED-LABEL: func.func @shared_relu
// MIXED: %[[G:.*]] = "onnx.Gemm"{{.*}} -> tensor<16x10xf16>
// MIXED: %[[S:.*]] = "onnx.Cast"(%[[G]]) {to = 1 : i64} : (tensor<16x10xf16>) -> tensor<16x10xf32>
// MIXED: "onnx.Relu"(%[[S]]) : (tensor<16x10xf32>) -> tensor<16x10xf32>
func.func @conv_clip(%x: tensor<1x2x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %w = onnx.Initializer "cw" dense<0.5> : tensor<4x2x1x1xf32>
  %lo = onnx.Initializer "lo" dense<0.0> : tensor<f32>
  %hi = onnx.Initializer "hi" dense<6.0> : tensor<f32>
  %b = onnx.Initializer "cb" dense<0.25> : tensor<4xf32>
  %y = "onnx.Conv"(%x, %w, %b) {kernel_shape = [1, 1]} : (tensor<1x2x3x3xf32>, tensor<4x2x1x1xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
  %c = "onnx.Clip"(%y, %lo, %hi) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<1x4x3x3xf32>, tensor<f32>, tensor<f32>) -> tensor<1x4x3x3xf32>
  return %c : tensor<1x4x3x3xf32>
}
func.func @shared_relu(%x: tensor<16x784xf32>) -> (tensor<16x10xf32>, tensor<16x10xf32>) {
  %w = onnx.Initializer "sw" dense<0.5> : tensor<10x784xf32>
  %y = "onnx.Gemm"(%x, %w) {transB = 1 : i64} : (tensor<16x784xf32>, tensor<10x784xf32>) -> tensor<16x10xf32>
  %r = "onnx.Relu"(%y) : (tensor<16x10xf32>) -> tensor<16x10xf32>
  return %r, %y : tensor<16x10xf32>, tensor<16x10xf32>
}

// Two products in a row under mixed: the half result of the first feeds the
// second directly; the Cast to single and back is removed.
// MIXED-LABEL: func.func @matmul_chain
// MIXED: %[[A:.*]] = "onnx.MatMul"{{.*}} -> tensor<4x8xf16>
// MIXED-NOT: "onnx.Cast"(%[[A]]) {to = 1
// MIXED: "onnx.MatMul"(%[[A]], %{{.*}}) : (tensor<4x8xf16>, tensor<8x2xf16>) -> tensor<4x2xf16>
func.func @matmul_chain(%x: tensor<4x8xf32>, %w1: tensor<8x8xf32>, %w2: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %a = "onnx.MatMul"(%x, %w1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %b = "onnx.MatMul"(%a, %w2) : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %b : tensor<4x2xf32>
}

// One Cast to half per single value: a block input read by two
// convolutions (a ResNet block's conv1 and downsample) is cast once.
// MIXED-LABEL: func.func @shared_input
// MIXED: %[[H:.*]] = "onnx.Cast"(%arg0) {to = 10 : i64}
// MIXED-NOT: "onnx.Cast"(%arg0)
// MIXED: "onnx.Conv"(%[[H]]
// MIXED: "onnx.Conv"(%[[H]]
func.func @shared_input(%x: tensor<1x2x3x3xf32>) -> (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) {
  %w1 = onnx.Initializer "w1" dense<0.5> : tensor<4x2x1x1xf32>
  %w2 = onnx.Initializer "w2" dense<0.25> : tensor<4x2x1x1xf32>
  %a = "onnx.Conv"(%x, %w1) {kernel_shape = [1, 1]} : (tensor<1x2x3x3xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x3x3xf32>
  %b = "onnx.Conv"(%x, %w2) {kernel_shape = [1, 1]} : (tensor<1x2x3x3xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x3x3xf32>
  return %a, %b : tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>
}

// An op that only selects values (MaxPool, Reshape, Concat) of halves
// widened for it alone runs in half and the widening follows it: between
// Conv -> Relu -> MaxPool -> Conv no Cast is left, and the Concat of two
// products' results is half. A MaxPool whose input has another reader
// stays single.
// MIXED-LABEL: func.func @pool_between_convs
// MIXED: %[[R:.*]] = "onnx.Relu"(%{{.*}}) : (tensor<1x4x4x4xf16>) -> tensor<1x4x4x4xf16>
// MIXED-NEXT: %[[P:.*]] = "onnx.MaxPool"(%[[R]]) {{.*}} : (tensor<1x4x4x4xf16>) -> tensor<1x4x2x2xf16>
// MIXED-NOT: onnx.Cast
// MIXED: "onnx.Conv"(%[[P]], %{{.*}}) {{.*}} : (tensor<1x4x2x2xf16>, tensor<4x4x1x1xf16>) -> tensor<1x4x2x2xf16>
// MIXED-LABEL: func.func @concat_of_products
// MIXED: %[[A:.*]] = "onnx.Conv"{{.*}} -> tensor<1x4x3x3xf16>
// MIXED: %[[B:.*]] = "onnx.Conv"{{.*}} -> tensor<1x4x3x3xf16>
// MIXED: %[[C:.*]] = "onnx.Concat"(%[[A]], %[[B]]) {{.*}} -> tensor<1x8x3x3xf16>
// MIXED: "onnx.Cast"(%[[C]]) {to = 1 : i64}
// MIXED-LABEL: func.func @pool_of_shared
// MIXED: %[[S:.*]] = "onnx.Cast"(%{{.*}}) {to = 1 : i64} : (tensor<1x4x4x4xf16>) -> tensor<1x4x4x4xf32>
// MIXED: "onnx.MaxPool"(%[[S]]) {{.*}} : (tensor<1x4x4x4xf32>) -> tensor<1x4x2x2xf32>
func.func @pool_between_convs(%x: tensor<1x2x4x4xf32>) -> tensor<1x4x2x2xf32> {
  %w1 = onnx.Initializer "pw1" dense<0.5> : tensor<4x2x1x1xf32>
  %w2 = onnx.Initializer "pw2" dense<0.25> : tensor<4x4x1x1xf32>
  %a = "onnx.Conv"(%x, %w1) {kernel_shape = [1, 1]} : (tensor<1x2x4x4xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x4x4xf32>
  %r = "onnx.Relu"(%a) : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %p = "onnx.MaxPool"(%r) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x4x4x4xf32>) -> tensor<1x4x2x2xf32>
  %b = "onnx.Conv"(%p, %w2) {kernel_shape = [1, 1]} : (tensor<1x4x2x2xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x2x2xf32>
  return %b : tensor<1x4x2x2xf32>
}
func.func @concat_of_products(%x: tensor<1x2x3x3xf32>) -> tensor<1x8x3x3xf32> {
  %w1 = onnx.Initializer "cw1" dense<0.5> : tensor<4x2x1x1xf32>
  %w2 = onnx.Initializer "cw2" dense<0.25> : tensor<4x2x1x1xf32>
  %a = "onnx.Conv"(%x, %w1) {kernel_shape = [1, 1]} : (tensor<1x2x3x3xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x3x3xf32>
  %b = "onnx.Conv"(%x, %w2) {kernel_shape = [1, 1]} : (tensor<1x2x3x3xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x3x3xf32>
  %c = "onnx.Concat"(%a, %b) {axis = 1 : i64} : (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x8x3x3xf32>
  return %c : tensor<1x8x3x3xf32>
}
func.func @pool_of_shared(%x: tensor<1x2x4x4xf32>) -> (tensor<1x4x2x2xf32>, tensor<1x4x4x4xf32>) {
  %w1 = onnx.Initializer "sw1" dense<0.5> : tensor<4x2x1x1xf32>
  %a = "onnx.Conv"(%x, %w1) {kernel_shape = [1, 1]} : (tensor<1x2x4x4xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x4x4xf32>
  %p = "onnx.MaxPool"(%a) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x4x4x4xf32>) -> tensor<1x4x2x2xf32>
  return %p, %a : tensor<1x4x2x2xf32>, tensor<1x4x4x4xf32>
}
