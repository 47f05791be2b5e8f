// pfvm-concat-in-place marks the inputs of a top-level Concat that their
// Conv may write straight into (onnx.in_place_inputs): each input fills one
// contiguous block of the output (static shapes, every dimension before
// the axis 1) and comes from a Conv used only there, possibly through an
// activation fused into it. test/tools/mncc/concat-in-place.test compares
// pfvm:cpu's outputs with and without.

// RUN: mncc-opt --pfvm-fuse-activations --pfvm-concat-in-place %s | FileCheck %s

// Input 0 is a Conv, 1 a Conv through its fused Relu, 2 a graph input
// (copied).
// CHECK-LABEL: func.func @in_place
// CHECK: "onnx.Concat"{{.*}}onnx.in_place_inputs = array<i64: 0, 1>
func.func @in_place(%x: tensor<1x1x2x2xf32>, %w: tensor<1x1x1x1xf32>) -> tensor<1x3x2x2xf32> {
  %a = "onnx.Conv"(%x, %w) : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32>
  %b = "onnx.Conv"(%x, %w) : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32>
  %r = "onnx.Relu"(%b) : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %c = "onnx.Concat"(%a, %r, %x) {axis = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x3x2x2xf32>
  return %c : tensor<1x3x2x2xf32>
}

// Not marked: an axis after a dimension larger than 1 interleaves, a Conv
// also used elsewhere, a value read twice, and subgraphs.
// CHECK-LABEL: func.func @copied
// CHECK-NOT: onnx.in_place_inputs
func.func @copied(%x: tensor<2x1x2x2xf32>, %w: tensor<1x1x1x1xf32>, %c: tensor<i1>) -> (tensor<2x2x2x2xf32>, tensor<2x1x2x2xf32>, tensor<2x2x2x2xf32>, tensor<2x2x2x2xf32>) {
  %a = "onnx.Conv"(%x, %w) : (tensor<2x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<2x1x2x2xf32>
  %cat = "onnx.Concat"(%a, %x) {axis = 1 : i64} : (tensor<2x1x2x2xf32>, tensor<2x1x2x2xf32>) -> tensor<2x2x2x2xf32>
  %b = "onnx.Conv"(%x, %w) : (tensor<2x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<2x1x2x2xf32>
  %twice = "onnx.Concat"(%b, %b) {axis = 0 : i64} : (tensor<2x1x2x2xf32>, tensor<2x1x2x2xf32>) -> tensor<2x2x2x2xf32>
  %i = "onnx.If"(%c) ({
    %d = "onnx.Conv"(%x, %w) : (tensor<2x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<2x1x2x2xf32>
    %e = "onnx.Concat"(%d, %x) {axis = 0 : i64} : (tensor<2x1x2x2xf32>, tensor<2x1x2x2xf32>) -> tensor<2x2x2x2xf32>
    onnx.Yield %e : tensor<2x2x2x2xf32>
  }, {
    %e = "onnx.Concat"(%x, %x) {axis = 0 : i64} : (tensor<2x1x2x2xf32>, tensor<2x1x2x2xf32>) -> tensor<2x2x2x2xf32>
    onnx.Yield %e : tensor<2x2x2x2xf32>
  }) : (tensor<i1>) -> tensor<2x2x2x2xf32>
  return %cat, %a, %twice, %i : tensor<2x2x2x2xf32>, tensor<2x1x2x2xf32>, tensor<2x2x2x2xf32>, tensor<2x2x2x2xf32>
}
