// RUN: mncc-opt %s | FileCheck %s
// RUN: mncc-opt %s | mncc-opt | FileCheck %s

// Layouts print in canonical form, and the MLSDK examples verify on the
// tensors they were written for.

// CHECK-LABEL: func.func @canonical
// CHECK-SAME: tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>>
func.func @canonical(%a: tensor<64xf16, #mngraph.layout<(  (16_MAB:1,4_PE:1) )>>) {
  return
}

// CHECK-LABEL: func.func @mlsdk_gather_table
// CHECK-SAME: #mngraph.layout<((75_Time:4, 8_L2B:1, 16_MAB:1, 4:1, 4:4), (4_Time:1, 24:16, 4_W:1, 4_PE:1); B@[L1B])>
func.func @mlsdk_gather_table(%a: tensor<151936x1536xf16, #mngraph.layout<((75_Time:4, 8_L2B:1, 16_MAB:1, 4:1, 4:4), (4_Time:1, 24:16, 4_W:1, 4_PE:1); B@[L1B])>>) {
  return
}

// CHECK-LABEL: func.func @mlsdk_gemm_c
// CHECK-SAME: #mngraph.layout<((), (8:96, 8_L1B:1, 2_Time:25, 2:48, 16:1), (25_Time:1, 3:16, 8_L2B:1, 16_MAB:1, 4_W:1, 4_PE:1))>
func.func @mlsdk_gemm_c(%a: tensor<1x4096x38400xf16, #mngraph.layout<((), (8:96, 8_L1B:1, 2_Time:25, 2:48, 16:1), (25_Time:1, 3:16, 8_L2B:1, 16_MAB:1, 4_W:1, 4_PE:1))>>) {
  return
}
