// RUN: mncc-opt %s --mngraph-strip-layouts | FileCheck %s

// CHECK-LABEL: func.func @device_graph
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf16>, %[[B:.*]]: tensor<4x8xf16>) -> tensor<4x8xf16>
// CHECK-NOT: mngraph
// CHECK: %[[SUM:.*]] = arith.addf %[[A]], %[[B]] : tensor<4x8xf16>
// CHECK-NEXT: return %[[SUM]] : tensor<4x8xf16>
func.func @device_graph(
    %a: tensor<4x8xf16, #mngraph.layout<((4_MAB:1), (2_PE:1, 4_W:1))>>,
    %b: tensor<4x8xf16, #mngraph.layout<((4_PE:1), (8_MAB:1))>>)
    -> tensor<4x8xf16, #mngraph.layout<((4_MAB:1), (2_PE:1, 4_W:1))>> {
  %c = mngraph.layout_switch %b
      : tensor<4x8xf16, #mngraph.layout<((4_PE:1), (8_MAB:1))>>
     -> tensor<4x8xf16, #mngraph.layout<((4_MAB:1), (2_PE:1, 4_W:1))>>
  %d = arith.addf %a, %c : tensor<4x8xf16, #mngraph.layout<((4_MAB:1), (2_PE:1, 4_W:1))>>
  return %d : tensor<4x8xf16, #mngraph.layout<((4_MAB:1), (2_PE:1, 4_W:1))>>
}
