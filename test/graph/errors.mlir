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

// -----

// A malformed layout is reported at its column.
// expected-error @+1 {{invalid layout: unknown axis 'L3B'}}
func.func @bad_axis(%a: tensor<4xf32, #mngraph.layout<((4_L3B:1))>>) {
  return
}

// -----

// expected-error @+1 {{layout ((4_MAB:1)) has 1 dimension groups, but the tensor has rank 2}}
func.func @rank_mismatch(%a: tensor<4x4xf32, #mngraph.layout<((4_MAB:1))>>) {
  return
}

// -----

// expected-error @+1 {{layout ((4_MAB:1), (4_PE:1)) places 4 elements along dimension 1, but the tensor has 8}}
func.func @too_small(%a: tensor<4x8xf32, #mngraph.layout<((4_MAB:1), (4_PE:1))>>) {
  return
}

// -----

// A long word holds 2 f32 words, not 4.
// expected-error @+1 {{layout ((4_W:1)): }}
func.func @w_too_wide(%a: tensor<4xf32, #mngraph.layout<((4_W:1))>>) {
  return
}

// -----

// expected-error @+1 {{PE index reaches 7 but MN-Core 2 has only 4 PE per MAB}}
func.func @too_many_pes(%a: tensor<8xf16, #mngraph.layout<((8_PE:1))>>) {
  return
}
