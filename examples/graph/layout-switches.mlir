// A graph placed on MN-Core 2: %x arrives spread over MABs and PEs, is moved
// twice before an addition, and the result goes back to the first layout.
func.func @add_placed(
    %x: tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>>,
    %y: tensor<64xf16, #mngraph.layout<((64_Time:1))>>)
    -> tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>> {
  %x1 = mngraph.layout_switch %x
      : tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>>
     -> tensor<64xf16, #mngraph.layout<((4_PE:1, 16_MAB:1))>>
  %x2 = mngraph.layout_switch %x1
      : tensor<64xf16, #mngraph.layout<((4_PE:1, 16_MAB:1))>>
     -> tensor<64xf16, #mngraph.layout<((64_Time:1))>>
  %sum = arith.addf %x2, %y : tensor<64xf16, #mngraph.layout<((64_Time:1))>>
  %out = mngraph.layout_switch %sum
      : tensor<64xf16, #mngraph.layout<((64_Time:1))>>
     -> tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>>
  return %out : tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>>
}
