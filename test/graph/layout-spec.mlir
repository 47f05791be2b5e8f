// layout_spec entries (MLSDK compile options 4.2.2.9) override the planner;
// every entry must match a tensor and be valid for it.

// An entry fixes the Relu's output in NHWC; the Softmax after it then needs
// a switch back to the identity order.
// RUN: mncc-opt --mncc-plan-layouts='layout-spec=%S/Inputs/spec-nhwc.json' %s | FileCheck %s --check-prefix=APPLIED
// APPLIED: "onnx.Relu"{{.*}} -> tensor<2x8x4x4xf32, #mngraph.layout<(2,8,4,4)/((2:64), (4:1, 2_W:1), (4:16), (4:4))>>
// APPLIED-NEXT: mngraph.layout_switch

// RUN: not mncc-opt --mncc-plan-layouts='layout-spec=%S/Inputs/spec-unused.json' %s 2>&1 | FileCheck %s --check-prefix=UNUSED
// UNUSED: error: layout_spec {{.*}}spec-unused.json: entry 0 (FixOutput Conv) matches no tensor (set CODEGEN_ALLOW_UNUSED_LAYOUT_SPEC=1 to allow it)
// RUN: mncc-opt --mncc-plan-layouts='layout-spec=%S/Inputs/spec-unused.json allow-unused-layout-spec=1' %s | FileCheck %s --check-prefix=ALLOWED
// ALLOWED: "onnx.Softmax"

// RUN: not mncc-opt --mncc-plan-layouts='layout-spec=%S/Inputs/spec-bad-field.json' %s 2>&1 | FileCheck %s --check-prefix=FIELD
// FIELD: error: layout_spec {{.*}}spec-bad-field.json: entry 0 field 'trigger': must be SwitchInput or FixOutput

// RUN: not mncc-opt --mncc-plan-layouts='layout-spec=%S/Inputs/spec-bad-layout.json' %s 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: error: layout_spec {{.*}}spec-bad-layout.json: entry 0 field 'layout': column

// RUN: not mncc-opt --mncc-plan-layouts='layout-spec=%S/Inputs/spec-not-a-form.json' %s 2>&1 | FileCheck %s --check-prefix=FORM
// FORM: error: layout_spec {{.*}}spec-not-a-form.json: entry 0 field 'layout': it is not one of the DRAM forms the code generator places tensors in

// RUN: not mncc-opt --mncc-plan-layouts='layout-spec=%S/Inputs/spec-truncated.json' %s 2>&1 | FileCheck %s --check-prefix=JSON
// JSON: error: layout_spec {{.*}}spec-truncated.json: not valid JSON

// RUN: not mncc-opt --mncc-plan-layouts='layout-spec=%S/Inputs/no-such.json' %s 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: layout_spec {{.*}}no-such.json: No such file or directory
func.func @spec(%x: tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32> {
  %r = "onnx.Relu"(%x) : (tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  %z = "onnx.Softmax"(%r) {axis = 1 : i64} : (tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  return %z : tensor<2x8x4x4xf32>
}
