// RUN: mncc-opt %s --canonicalize --split-input-file | FileCheck %s

// A switch to the layout the value already has disappears.
// CHECK-LABEL: func.func @same_layout
// CHECK-SAME: (%[[A:.*]]: tensor
// CHECK-NOT: mngraph.layout_switch
// CHECK: return %[[A]]
func.func @same_layout(%a: tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>>)
    -> tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>> {
  %b = mngraph.layout_switch %a
      : tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>>
     -> tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>>
  return %b : tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>>
}

// -----

// A -> B -> C is one switch A -> C.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[A:.*]]: tensor
// CHECK: %[[C:.*]] = mngraph.layout_switch %[[A]] : tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>> -> tensor<64xf16, #mngraph.layout<((64_Time:1))>>
// CHECK-NOT: mngraph.layout_switch
// CHECK: return %[[C]]
func.func @chain(%a: tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>>)
    -> tensor<64xf16, #mngraph.layout<((64_Time:1))>> {
  %b = mngraph.layout_switch %a
      : tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>>
     -> tensor<64xf16, #mngraph.layout<((4_PE:1, 16_MAB:1))>>
  %c = mngraph.layout_switch %b
      : tensor<64xf16, #mngraph.layout<((4_PE:1, 16_MAB:1))>>
     -> tensor<64xf16, #mngraph.layout<((64_Time:1))>>
  return %c : tensor<64xf16, #mngraph.layout<((64_Time:1))>>
}

// -----

// A -> B -> A moves nothing at all.
// CHECK-LABEL: func.func @round_trip
// CHECK-SAME: (%[[A:.*]]: tensor
// CHECK-NOT: mngraph.layout_switch
// CHECK: return %[[A]]
func.func @round_trip(%a: tensor<8xf32, #mngraph.layout<((8_L1B:1))>>)
    -> tensor<8xf32, #mngraph.layout<((8_L1B:1))>> {
  %b = mngraph.layout_switch %a
      : tensor<8xf32, #mngraph.layout<((8_L1B:1))>>
     -> tensor<8xf32, #mngraph.layout<((8_L2B:1))>>
  %c = mngraph.layout_switch %b
      : tensor<8xf32, #mngraph.layout<((8_L2B:1))>>
     -> tensor<8xf32, #mngraph.layout<((8_L1B:1))>>
  return %c : tensor<8xf32, #mngraph.layout<((8_L1B:1))>>
}
