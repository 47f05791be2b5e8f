// mncc-emit-kernels writes every kernel's assembly; mncc-link-program joins
// them, each after a comment naming its node and the pragma that says it
// is self-contained, into one l3.program whose text is program.vsm.

// RUN: mncc-opt --mncc-plan-layouts --mncc-lower-to-l3 --mncc-select-kernels --mncc-plan-addresses --mncc-emit-kernels --mncc-link-program %s | FileCheck %s
// CHECK: l3.kernel "Relu" "relu" {{.*}}first_line = 2 : i64{{.*}}variant = "Relu, flat over 4 long words per PE"{{.*}}vsm = "zero $llr0
// CHECK: l3.program {steps = {{[0-9]+}} : i64, text = "# MN-Core 2 program written by mncc\0A# node relu (Relu): elementwise, Relu, flat over 4 long words per PE\0A#pragma mncc kernel\0Azero

// Without kernel selection there is nothing to emit.
// RUN: not mncc-opt --mncc-plan-layouts --mncc-lower-to-l3 --mncc-emit-kernels %s 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: error: {{.*}}node 'relu': no kernel generator selected (run mncc-select-kernels first)
func.func @one(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %a = "onnx.Relu"(%x) : (tensor<16x64xf32>) -> tensor<16x64xf32> loc("relu")
  return %a : tensor<16x64xf32>
}
