// mncc-lower-to-l3 turns the planned graph into kernels over DRAM buffers.

// RUN: mncc-opt --mncc-plan-layouts --mncc-lower-to-l3 %s -split-input-file | FileCheck %s

// A Reshape between forms with the same bytes is an alias, no kernel.
// Returning the input itself needs a copy into an output buffer. The
// function is gone.
// CHECK: l3.buffer @in_x : tensor<16x1x1x64xf32, {{.*}}> {{{.*}}host_type = f32, index = 0 : i64, kind = "input"{{.*}}name = "x"
// CHECK: l3.buffer @[[RELU:t[0-9]+]] : tensor<16x1x1x64xf32, {{.*}}kind = "temporary"
// CHECK: l3.buffer @[[ALIAS:t[0-9]+]] : tensor<16x64xf32, {{.*}}> {alias = @[[RELU]],
// CHECK: l3.buffer @[[OUT:t[0-9]+]] : tensor<16x64xf32, {{.*}}host_type = f32, index = 0 : i64, kind = "output"{{.*}}name = "y"
// CHECK: l3.buffer @out_again : tensor<16x1x1x64xf32, {{.*}}kind = "output"{{.*}}name = "again"
// CHECK: l3.schedule
// CHECK-NEXT: l3.kernel "Relu" "relu" [@in_x] -> [@[[RELU]]]
// CHECK-NEXT: l3.kernel "Sigmoid" "sigmoid" [@[[ALIAS]]] -> [@[[OUT]]]
// CHECK-NEXT: l3.kernel "Identity" "copy_again" [@in_x] -> [@out_again]
// CHECK-NOT: l3.kernel
// CHECK-NOT: func.func
func.func @lowered(%x: tensor<16x1x1x64xf32> {onnx.name = "x"}) -> (tensor<16x64xf32> {onnx.name = "y"}, tensor<16x1x1x64xf32> {onnx.name = "again"}) {
  %shape = onnx.Initializer "shape" dense<[16, 64]> : tensor<2xi64>
  %r = "onnx.Relu"(%x) : (tensor<16x1x1x64xf32>) -> tensor<16x1x1x64xf32> loc("relu")
  %f = "onnx.Reshape"(%r, %shape) : (tensor<16x1x1x64xf32>, tensor<2xi64>) -> tensor<16x64xf32> loc("reshape")
  %y = "onnx.Sigmoid"(%f) : (tensor<16x64xf32>) -> tensor<16x64xf32> loc("sigmoid")
  return %y, %x : tensor<16x64xf32>, tensor<16x1x1x64xf32>
}

// -----

// A Cast of a graph input, of a constant, or into a graph output is the
// host's conversion when it stages the value: the input buffer holds half
// for a host float32 (host_type), the constant is packed in half, the
// output is read back as float32. Only the Relu is a kernel.
// CHECK: l3.buffer @in_x : tensor<4xf16, {{.*}}host_type = f32{{.*}}kind = "input"
// CHECK: l3.buffer @c : tensor<4xf16, {{.*}}kind = "constant"{{.*}}value = dense<2.500000e-01> : tensor<4xf32>
// CHECK: l3.buffer @[[OUT:t[0-9]+]] : tensor<4xf16, {{.*}}host_type = f32{{.*}}kind = "output"
// CHECK: l3.schedule
// CHECK-NEXT: l3.kernel "Max" "max" [@in_x, @c] -> [@[[OUT]]]
// CHECK-NOT: l3.kernel
func.func @host_casts(%x: tensor<4xf32> {onnx.name = "x"}) -> (tensor<4xf32> {onnx.name = "y"}) {
  %c = onnx.Initializer "c" dense<0.25> : tensor<4xf32>
  %xh = "onnx.Cast"(%x) {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16>
  %ch = "onnx.Cast"(%c) {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16>
  %m = "onnx.Max"(%xh, %ch) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16> loc("max")
  %y = "onnx.Cast"(%m) {to = 1 : i64} : (tensor<4xf16>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
