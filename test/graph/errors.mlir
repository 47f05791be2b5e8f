// RUN: mncc-opt %s --split-input-file --verify-diagnostics

func.func @shape_changes(%a: tensor<64xf16>) -> tensor<32xf16> {
  // expected-error @+1 {{requires the same shape for all operands and results}}
  %b = mngraph.layout_switch %a : tensor<64xf16> -> tensor<32xf16>
  return %b : tensor<32xf16>
}

// -----

func.func @dtype_changes(%a: tensor<64xf16>) -> tensor<64xf32> {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %b = mngraph.layout_switch %a : tensor<64xf16> -> tensor<64xf32>
  return %b : tensor<64xf32>
}

// -----

func.func @foreign_encoding(%a: tensor<4xf32, "rows">) -> tensor<4xf32> {
  // expected-error @+1 {{'mngraph.layout_switch' op input encoding must be a #mngraph.layout, got "rows"}}
  %b = mngraph.layout_switch %a : tensor<4xf32, "rows"> -> tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

// expected-error @+1 {{empty layout}}
func.func @empty_layout(%a: tensor<4xf32, #mngraph.layout< >>) {
  return
}

// -----

// expected-error @+1 {{unknown mngraph attribute 'tiling<4>'}}
func.func @unknown_attribute(%a: tensor<4xf32, #mngraph.tiling<4>>) {
  return
}
