// mncc-select-kernels gives every kernel its generator; a node no kernel
// takes is an error naming the node, its operator and each generator's
// reason.

// RUN: mncc-opt --mncc-plan-layouts --mncc-lower-to-l3 --mncc-select-kernels %s | FileCheck %s
// CHECK: l3.kernel "Relu" "relu" {{.*}}generator = "elementwise"
// CHECK: l3.kernel "Softmax" "softmax" {{.*}}generator = "general"

// A node no kernel takes runs on the host, with the reason; without host
// fallback it is an error.
// RUN: mncc-opt --mncc-plan-layouts --mncc-lower-to-l3 --mncc-select-kernels %S/Inputs/topk.mlir | FileCheck %s --check-prefix=HOST
// HOST: l3.kernel "TopK" "topk" {{.*}}generator = "host", host_reason = "no device kernel: no kernel generator handles TopK"
// RUN: not mncc-opt --mncc-plan-layouts --mncc-lower-to-l3 --mncc-select-kernels='host-fallback=0' %S/Inputs/topk.mlir 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: error: {{.*}}node 'topk' (TopK) has no device kernel: no kernel generator handles TopK
// RUN: mncc-opt --mncc-plan-layouts --mncc-lower-to-l3 --mncc-select-kernels='ops-on-host=Relu' %s | FileCheck %s --check-prefix=FORCED
// FORCED: l3.kernel "Relu" "relu" {{.*}}generator = "host", host_reason = "CODEGEN_OPS_ON_HOST"
func.func @selected(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = "onnx.Relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> loc("relu")
  %s = "onnx.Softmax"(%r) {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32> loc("softmax")
  return %s : tensor<4x8xf32>
}
