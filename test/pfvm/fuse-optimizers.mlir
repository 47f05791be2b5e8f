// pfvm-fuse-optimizers makes each parameter's update one node of
// ai.onnx.preview.training: element-wise chains of Momentum (standard and
// Nesterov), Adam and Adagrad become one node each, and a training operator
// over several tensors is split per tensor. CODEGEN_SKIP_OPTIMIZER_FUSION
// leaves the pass out of the pfvm phase (test/pfvm/pipeline-flags.mlir);
// test/pfvm/optimizer-fusion.test runs both forms on pfvm:cpu.

// RUN: mncc-opt --pfvm-fuse-optimizers %s | FileCheck %s

// SGD with momentum and weight decay, as a framework writes it:
// V' = 0.9 V + (G + 1e-4 X), X' = X - lr V'.
// CHECK-LABEL: func.func @momentum
// CHECK: %[[T:.*]] = "onnx.Constant"() {value = dense<1> : tensor<i64>}
// CHECK: %[[X:.*]]:2 = "onnx.Momentum"(%arg3, %[[T]], %arg0, %arg2, %arg1) {alpha = 0.899999976 : f32, beta = 1.000000e+00 : f32, mode = "standard", norm_coefficient = 9.99999974E-5 : f32}
// CHECK-NOT: onnx.Sub
// CHECK-NOT: onnx.Mul
// CHECK: return %[[X]]#0, %[[X]]#1
func.func @momentum(%x: tensor<4xf32>, %v: tensor<4xf32>, %g: tensor<4xf32>, %lr: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %wd = "onnx.Constant"() {value = dense<1.0e-4> : tensor<f32>} : () -> tensor<f32>
  %mom = "onnx.Constant"() {value = dense<0.9> : tensor<f32>} : () -> tensor<f32>
  %decay = "onnx.Mul"(%wd, %x) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %gr = "onnx.Add"(%g, %decay) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m = "onnx.Mul"(%v, %mom) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %vn = "onnx.Add"(%m, %gr) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %step = "onnx.Mul"(%lr, %vn) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %xn = "onnx.Sub"(%x, %step) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %xn, %vn : tensor<4xf32>, tensor<4xf32>
}

// Nesterov: X' = X - lr (G + 0.9 V'), with dampening: V' = 0.9 V + 0.5 G.
// CHECK-LABEL: func.func @nesterov
// CHECK: "onnx.Momentum"(%arg3, %{{.*}}, %arg0, %arg2, %arg1) {alpha = 0.899999976 : f32, beta = 5.000000e-01 : f32, mode = "nesterov", norm_coefficient = 0.000000e+00 : f32}
// CHECK-NOT: onnx.Sub
func.func @nesterov(%x: tensor<4xf32>, %v: tensor<4xf32>, %g: tensor<4xf32>, %lr: tensor<1xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %mom = "onnx.Constant"() {value = dense<0.9> : tensor<f32>} : () -> tensor<f32>
  %half = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %m = "onnx.Mul"(%mom, %v) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %h = "onnx.Mul"(%half, %g) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %vn = "onnx.Add"(%m, %h) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %look = "onnx.Mul"(%mom, %vn) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %u = "onnx.Add"(%g, %look) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %step = "onnx.Mul"(%u, %lr) : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %xn = "onnx.Sub"(%x, %step) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %xn, %vn : tensor<4xf32>, tensor<4xf32>
}

// Adam without bias correction (T = 0); 0.1 and 0.001 are 1 - 0.9 and
// 1 - 0.999 as the framework rounded them.
// CHECK-LABEL: func.func @adam
// CHECK: %[[T:.*]] = "onnx.Constant"() {value = dense<0> : tensor<i64>}
// CHECK: %[[A:.*]]:3 = "onnx.Adam"(%arg4, %[[T]], %arg0, %arg3, %arg1, %arg2) {alpha = 0.899999976 : f32, beta = 9.990000e-01 : f32, epsilon = 9.99999993E-9 : f32, norm_coefficient = 0.000000e+00 : f32, norm_coefficient_post = 0.000000e+00 : f32}
// CHECK-NOT: onnx.Sqrt
// CHECK: return %[[A]]#0, %[[A]]#1, %[[A]]#2
func.func @adam(%x: tensor<4xf32>, %v: tensor<4xf32>, %h: tensor<4xf32>, %g: tensor<4xf32>, %lr: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = "onnx.Constant"() {value = dense<0.9> : tensor<f32>} : () -> tensor<f32>
  %oma = "onnx.Constant"() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %b = "onnx.Constant"() {value = dense<0.999> : tensor<f32>} : () -> tensor<f32>
  %omb = "onnx.Constant"() {value = dense<0.001> : tensor<f32>} : () -> tensor<f32>
  %eps = "onnx.Constant"() {value = dense<1.0e-8> : tensor<f32>} : () -> tensor<f32>
  %m1 = "onnx.Mul"(%a, %v) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %m2 = "onnx.Mul"(%oma, %g) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %vn = "onnx.Add"(%m1, %m2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %h1 = "onnx.Mul"(%b, %h) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %gg = "onnx.Mul"(%g, %g) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %h2 = "onnx.Mul"(%omb, %gg) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %hn = "onnx.Add"(%h1, %h2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %sq = "onnx.Sqrt"(%hn) : (tensor<4xf32>) -> tensor<4xf32>
  %den = "onnx.Add"(%sq, %eps) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %q = "onnx.Div"(%vn, %den) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %st = "onnx.Mul"(%lr, %q) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %xn = "onnx.Sub"(%x, %st) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %xn, %vn, %hn : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// Adagrad: H' = H + G G, X' = X - lr G / (sqrt(H') + eps).
// CHECK-LABEL: func.func @adagrad
// CHECK: "onnx.Adagrad"(%arg3, %{{.*}}, %arg0, %arg2, %arg1) {decay_factor = 0.000000e+00 : f32, epsilon = 9.99999997E-7 : f32, norm_coefficient = 0.000000e+00 : f32}
// CHECK-NOT: onnx.Sqrt
func.func @adagrad(%x: tensor<4xf32>, %h: tensor<4xf32>, %g: tensor<4xf32>, %lr: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %eps = "onnx.Constant"() {value = dense<1.0e-6> : tensor<f32>} : () -> tensor<f32>
  %gg = "onnx.Mul"(%g, %g) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %hn = "onnx.Add"(%h, %gg) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %sq = "onnx.Sqrt"(%hn) : (tensor<4xf32>) -> tensor<4xf32>
  %den = "onnx.Add"(%eps, %sq) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %q = "onnx.Div"(%g, %den) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %st = "onnx.Mul"(%q, %lr) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %xn = "onnx.Sub"(%x, %st) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %xn, %hn : tensor<4xf32>, tensor<4xf32>
}

// A training operator over two tensors becomes one per tensor.
// CHECK-LABEL: func.func @split
// CHECK: %[[A:.*]]:2 = "onnx.Momentum"(%arg0, %arg1, %arg2, %arg4, %arg6)
// CHECK: %[[B:.*]]:2 = "onnx.Momentum"(%arg0, %arg1, %arg3, %arg5, %arg7)
// CHECK: return %[[A]]#0, %[[B]]#0, %[[A]]#1, %[[B]]#1
func.func @split(%r: tensor<f32>, %t: tensor<i64>, %x1: tensor<2xf32>, %x2: tensor<3xf32>, %g1: tensor<2xf32>, %g2: tensor<3xf32>, %v1: tensor<2xf32>, %v2: tensor<3xf32>) -> (tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>) {
  %o:4 = "onnx.Momentum"(%r, %t, %x1, %x2, %g1, %g2, %v1, %v2) {alpha = 0.9 : f32, beta = 1.0 : f32, mode = "standard", norm_coefficient = 0.0 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>) -> (tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>)
  return %o#0, %o#1, %o#2, %o#3 : tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>
}

// The same arithmetic is not an optimizer step when the new state is not
// kept (used only inside), or the "parameter" is computed: left alone.
// CHECK-LABEL: func.func @not_a_step
// CHECK-NOT: onnx.Momentum
func.func @not_a_step(%x: tensor<4xf32>, %v: tensor<4xf32>, %g: tensor<4xf32>, %lr: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %mom = "onnx.Constant"() {value = dense<0.9> : tensor<f32>} : () -> tensor<f32>
  %m = "onnx.Mul"(%mom, %v) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %vn = "onnx.Add"(%m, %g) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %step = "onnx.Mul"(%lr, %vn) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %xn = "onnx.Sub"(%x, %step) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %p = "onnx.Exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %m2 = "onnx.Mul"(%mom, %v) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %vn2 = "onnx.Add"(%m2, %g) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %step2 = "onnx.Mul"(%lr, %vn2) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %pn = "onnx.Sub"(%p, %step2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %xn, %pn, %vn2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// Adam's groups are X, G, V and H (three outputs each: X', V', H');
// Adagrad's X, G and H. Each tensor gets its own node with the same R, T
// and attributes.
// CHECK-LABEL: func.func @split_adam_adagrad
// CHECK: %[[A:.*]]:3 = "onnx.Adam"(%arg0, %arg1, %arg2, %arg4, %arg6, %arg8) {alpha = 8.750000e-01 : f32
// CHECK: %[[B:.*]]:3 = "onnx.Adam"(%arg0, %arg1, %arg3, %arg5, %arg7, %arg9) {alpha = 8.750000e-01 : f32
// CHECK: %[[C:.*]]:2 = "onnx.Adagrad"(%arg0, %arg1, %arg2, %arg4, %arg8) {decay_factor = 2.500000e-01 : f32
// CHECK: %[[D:.*]]:2 = "onnx.Adagrad"(%arg0, %arg1, %arg3, %arg5, %arg9) {decay_factor = 2.500000e-01 : f32
// CHECK: return %[[A]]#0, %[[B]]#0, %[[A]]#1, %[[B]]#1, %[[A]]#2, %[[B]]#2, %[[C]]#0, %[[D]]#0, %[[C]]#1, %[[D]]#1
func.func @split_adam_adagrad(%r: tensor<f32>, %t: tensor<i64>, %x1: tensor<2xf32>, %x2: tensor<3xf32>, %g1: tensor<2xf32>, %g2: tensor<3xf32>, %v1: tensor<2xf32>, %v2: tensor<3xf32>, %h1: tensor<2xf32>, %h2: tensor<3xf32>) -> (tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>) {
  %a:6 = "onnx.Adam"(%r, %t, %x1, %x2, %g1, %g2, %v1, %v2, %h1, %h2) {alpha = 0.875 : f32, beta = 0.75 : f32, epsilon = 0.0625 : f32, norm_coefficient = 0.125 : f32, norm_coefficient_post = 0.03125 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>) -> (tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>)
  %g:4 = "onnx.Adagrad"(%r, %t, %x1, %x2, %g1, %g2, %h1, %h2) {decay_factor = 0.25 : f32, epsilon = 0.5 : f32, norm_coefficient = 0.0625 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>) -> (tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>)
  return %a#0, %a#1, %a#2, %a#3, %a#4, %a#5, %g#0, %g#1, %g#2, %g#3 : tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>
}

// A training operator whose operands do not come in whole groups (here
// four tensors after R and T for Adagrad's groups of three) is not split:
// left as it is.
// CHECK-LABEL: func.func @split_uneven
// CHECK: "onnx.Adagrad"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5)
// CHECK-NOT: "onnx.Adagrad"
func.func @split_uneven(%r: tensor<f32>, %t: tensor<i64>, %x1: tensor<2xf32>, %x2: tensor<2xf32>, %g1: tensor<2xf32>, %g2: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %g:2 = "onnx.Adagrad"(%r, %t, %x1, %x2, %g1, %g2) : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %g#0, %g#1 : tensor<2xf32>, tensor<2xf32>
}
