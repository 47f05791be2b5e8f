// pfvm-fold-batchnorm folds an inference BatchNormalization into the Conv
// or Gemm before it: W'[m] = W[m] s[m], B'[m] = (B[m] - mean[m]) s[m] +
// bias[m], s = scale / sqrt(var + epsilon), computed in double and
// rounded once. The new weights take the old ones' names.

// RUN: mncc-opt --pfvm-fold-batchnorm %s | FileCheck %s

// s = 2 / sqrt(1 + 0) = 2 for both channels.
// CHECK-LABEL: func.func @conv
// CHECK-DAG: onnx.Initializer "w" dense<{{\[\[\[\[}}2.000000e+00]]], {{\[\[\[}}4.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-DAG: onnx.Initializer "b" dense<[5.000000e-01, 2.000000e+00]> : tensor<2xf32>
// CHECK: %[[Y:.*]] = "onnx.Conv"
// CHECK-NOT: onnx.BatchNormalization
// CHECK: return %[[Y]]
func.func @conv(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = onnx.Initializer "w" dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %b = onnx.Initializer "b" dense<1.0> : tensor<2xf32>
  %c = "onnx.Conv"(%x, %w, %b) : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %scale = onnx.Initializer "scale" dense<2.0> : tensor<2xf32>
  %bias = onnx.Initializer "bias" dense<[0.5, 0.0]> : tensor<2xf32>
  %mean = onnx.Initializer "mean" dense<[1.0, 0.0]> : tensor<2xf32>
  %var = onnx.Initializer "var" dense<1.0> : tensor<2xf32>
  %y = "onnx.BatchNormalization"(%c, %scale, %bias, %mean, %var) {epsilon = 0.0 : f32, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// A Conv without a bias gets one.
// CHECK-LABEL: func.func @conv_no_bias
// CHECK: %[[B:.*]] = onnx.Initializer "w2_bias" dense<[-1.500000e+00, 0.000000e+00]>
// CHECK: "onnx.Conv"(%arg0, %{{.*}}, %[[B]])
func.func @conv_no_bias(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = onnx.Initializer "w2" dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %c = "onnx.Conv"(%x, %w) : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %scale = onnx.Initializer "scale" dense<2.0> : tensor<2xf32>
  %bias = onnx.Initializer "bias" dense<[0.5, 0.0]> : tensor<2xf32>
  %mean = onnx.Initializer "mean" dense<[1.0, 0.0]> : tensor<2xf32>
  %var = onnx.Initializer "var" dense<1.0> : tensor<2xf32>
  %y = "onnx.BatchNormalization"(%c, %scale, %bias, %mean, %var) {epsilon = 0.0 : f32, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// Gemm with transB: the rows of B are the channels; C becomes
// beta C s + t and beta 1.
// CHECK-LABEL: func.func @gemm
// CHECK-DAG: onnx.Initializer "gw" dense<{{\[\[}}2.000000e+00, 2.000000e+00], [4.000000e+00, 4.000000e+00]]>
// CHECK-DAG: onnx.Initializer "gc" dense<[2.500000e+00, 4.000000e+00]>
// CHECK: "onnx.Gemm"{{.*}}beta = 1.000000e+00 : f32{{.*}}transB = 1
// CHECK-NOT: onnx.BatchNormalization
func.func @gemm(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = onnx.Initializer "gw" dense<[[1.0, 1.0], [2.0, 2.0]]> : tensor<2x2xf32>
  %c = onnx.Initializer "gc" dense<1.0> : tensor<2xf32>
  %g = "onnx.Gemm"(%x, %w, %c) {beta = 2.0 : f32, transB = 1 : i64} : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %scale = onnx.Initializer "scale" dense<2.0> : tensor<2xf32>
  %bias = onnx.Initializer "bias" dense<[0.5, 0.0]> : tensor<2xf32>
  %mean = onnx.Initializer "mean" dense<[1.0, 0.0]> : tensor<2xf32>
  %var = onnx.Initializer "var" dense<1.0> : tensor<2xf32>
  %y = "onnx.BatchNormalization"(%g, %scale, %bias, %mean, %var) {epsilon = 0.0 : f32, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// Gemm without transB: the columns of B are the channels (B is K x N);
// without C, the new C is t alone.
// CHECK-LABEL: func.func @gemm_columns
// CHECK-DAG: onnx.Initializer "hw" dense<{{\[\[}}2.000000e+00, 1.000000e+00], [6.000000e+00, 2.000000e+00], [1.000000e+01, 3.000000e+00]]> : tensor<3x2xf32>
// CHECK-DAG: onnx.Initializer "hw_bias" dense<[-1.500000e+00, -1.000000e+00]> : tensor<2xf32>
// CHECK: "onnx.Gemm"
// CHECK-NOT: onnx.BatchNormalization
func.func @gemm_columns(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = onnx.Initializer "hw" dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %g = "onnx.Gemm"(%x, %w) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %scale = onnx.Initializer "scale" dense<[2.0, 0.5]> : tensor<2xf32>
  %bias = onnx.Initializer "bias" dense<[0.5, 0.0]> : tensor<2xf32>
  %mean = onnx.Initializer "mean" dense<[1.0, 2.0]> : tensor<2xf32>
  %var = onnx.Initializer "var" dense<1.0> : tensor<2xf32>
  %y = "onnx.BatchNormalization"(%g, %scale, %bias, %mean, %var) {epsilon = 0.0 : f32, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// Left alone: weights another node reads, a Conv result used twice, and
// training mode.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: onnx.BatchNormalization
func.func @kept(%x: tensor<1x1x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %w = onnx.Initializer "w" dense<1.0> : tensor<2x1x1x1xf32>
  %scale = onnx.Initializer "scale" dense<2.0> : tensor<2xf32>
  %bias = onnx.Initializer "bias" dense<0.5> : tensor<2xf32>
  %mean = onnx.Initializer "mean" dense<1.0> : tensor<2xf32>
  %var = onnx.Initializer "var" dense<1.0> : tensor<2xf32>
  %c1 = "onnx.Conv"(%x, %w) : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %c2 = "onnx.Conv"(%x, %w) {group = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %y1 = "onnx.BatchNormalization"(%c1, %scale, %bias, %mean, %var) {resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %w3 = onnx.Initializer "w3" dense<1.0> : tensor<2x1x1x1xf32>
  %c3 = "onnx.Conv"(%x, %w3) : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %y3 = "onnx.BatchNormalization"(%c3, %scale, %bias, %mean, %var) {resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %w4 = onnx.Initializer "w4" dense<1.0> : tensor<2x1x1x1xf32>
  %c4 = "onnx.Conv"(%x, %w4) : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %y4 = "onnx.BatchNormalization"(%c4, %scale, %bias, %mean, %var) {training_mode = 1 : i64, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %y1, %c2, %y3, %c3, %y4 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}
