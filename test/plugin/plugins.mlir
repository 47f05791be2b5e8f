// Builds the example plugins out of tree against an installed mncc, as a
// user would, then loads them into mncc-opt.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %cmake --install %mncc_obj_root --prefix %t/prefix > %t/install.log
// RUN: %cmake_configure -S %mncc_src_root/examples/plugins -B %t/build \
// RUN:   -DMNCC_DIR=%t/prefix/lib/cmake/mncc > %t/configure.log
// RUN: %cmake --build %t/build > %t/build.log
// RUN: mncc-opt %s \
// RUN:   --load-dialect-plugin=%t/build/lib/MNCCExampleDialectPlugin.so \
// RUN:   --load-pass-plugin=%t/build/lib/MNCCExamplePassPlugin.so \
// RUN:   --pass-pipeline="builtin.module(mnccx-count-layout-switches)" \
// RUN:   | FileCheck %s
// RUN: not mncc-opt %S/Inputs/unplaced.mlir \
// RUN:   --load-dialect-plugin=%t/build/lib/MNCCExampleDialectPlugin.so 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNPLACED

// CHECK: module attributes {mnccx.layout_switches = 2 : i64}
// CHECK: mnccx.device_bytes %{{.*}} : tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>>
// UNPLACED: error: 'mnccx.device_bytes' op needs a tensor placed with a #mngraph.layout

func.func @f(%a: tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>>) -> index {
  %b = mngraph.layout_switch %a
      : tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>>
     -> tensor<64xf16, #mngraph.layout<((4_PE:1, 16_MAB:1))>>
  %c = mngraph.layout_switch %b
      : tensor<64xf16, #mngraph.layout<((4_PE:1, 16_MAB:1))>>
     -> tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>>
  %n = mnccx.device_bytes %c : tensor<64xf16, #mngraph.layout<((16_MAB:1, 4_PE:1))>>
  return %n : index
}
