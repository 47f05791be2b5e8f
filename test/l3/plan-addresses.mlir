// mncc-plan-addresses gives every buffer a DRAM address, 64-long-word
// aligned; temporaries whose lifetimes do not overlap share memory, graph
// inputs, outputs and constants are never reused, an alias has no address.

// RUN: mncc-opt --mncc-plan-layouts --mncc-lower-to-l3 --mncc-select-kernels --mncc-plan-addresses %s | FileCheck %s

// Each tensor is 16 x 64 singles: 512 long words in group 0.
// CHECK-DAG: l3.buffer @in_input0 : {{.*}}address = [[X:[0-9]+]] : i64
// CHECK-DAG: l3.buffer @t0 : {{.*}}address = [[A:[0-9]+]] : i64
// CHECK-DAG: l3.buffer @t1 : {{.*}}address = [[B:[0-9]+]] : i64
// t2 is written by the third kernel, after t0's last reader: it reuses t0.
// CHECK-DAG: l3.buffer @t2 : {{.*}}address = [[A]] : i64
// CHECK-DAG: l3.buffer @t3 : {{.*}}kind = "output"
// CHECK: l3.schedule attributes {dram_long_words = 2048 : i64
func.func @chain(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %a = "onnx.Relu"(%x) : (tensor<16x64xf32>) -> tensor<16x64xf32>
  %b = "onnx.Neg"(%a) : (tensor<16x64xf32>) -> tensor<16x64xf32>
  %c = "onnx.Relu"(%b) : (tensor<16x64xf32>) -> tensor<16x64xf32>
  %d = "onnx.Neg"(%c) : (tensor<16x64xf32>) -> tensor<16x64xf32>
  return %d : tensor<16x64xf32>
}
