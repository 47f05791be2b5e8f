// mncc-opt runs the compiler's phases as registered pipelines, built by the
// same buildPipeline as mncc compile, with the same option names.

// RUN: mncc-opt --mncc-pfvm %s | FileCheck %s
// RUN: mncc-opt --mncc-compile %s | FileCheck %s --check-prefix=COMPILE
// RUN: mncc-opt --mncc-pfvm=float_dtype=float %s | FileCheck %s
// RUN: mncc-opt --pass-pipeline='builtin.module(mncc-pfvm{option_json=O1})' %s 2>/dev/null | FileCheck %s

// The pfvm phase's cleanups: the duplicate Relu goes (pfvm-cse), the
// unused private function goes (symbol-dce).
// CHECK-LABEL: func.func @relu_twice
// CHECK-COUNT-1: onnx.Relu
// CHECK-NOT: onnx.Relu
// CHECK-NOT: func.func private @unused
func.func @relu_twice(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "onnx.Relu"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "onnx.Relu"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
func.func private @unused() {
  return
}

// The whole compile ends with the program: kernels over DRAM buffers and
// their linked assembly.
// COMPILE: l3.buffer @in_input0
// COMPILE: l3.kernel "Relu" "Relu#0" [@in_input0] -> [@t0] {{.*}}generator = "elementwise"
// COMPILE: l3.kernel "Identity" "copy_output1" [@t0] -> [@out_output1]
// COMPILE: l3.program {{.*}}text = "# MN-Core 2 program written by mncc

// Values that nothing acts on yet are noted on stderr.
// RUN: mncc-opt --mncc-pfvm=option_json=debug %s 2>&1 >/dev/null | FileCheck %s --check-prefix=NOTE
// NOTE: note: simulation_mode=fake: accepted, not implemented (later)

// Bad options are errors.
// RUN: not mncc-opt --mncc-pfvm=float_dtype=quad %s 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: float_dtype=quad (from the pipeline options): expected one of mixed, half, float, double
// RUN: not env CODEGEN_SA_STEPS=0 mncc-opt --mncc-pfvm %s 2>&1 | FileCheck %s --check-prefix=ENV
// ENV: error: CODEGEN_SA_STEPS=0 (from the environment): must be at least 1
