// The verifiers the onnx ops' generator hooks declare (OnnxVerifiers.cpp)
// and the marks of the pfvm passes, checked where they stand.

// RUN: mncc-opt %s --split-input-file --verify-diagnostics

func.func @perm_size(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'onnx.Transpose' op perm has 3 entries for an input of rank 2}}
  %y = "onnx.Transpose"(%x) {perm = [1, 0, 2]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

func.func @perm_repeat(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'onnx.Transpose' op perm [1, 1] is not a permutation of the input's 2 dimensions}}
  %y = "onnx.Transpose"(%x) {perm = [1, 1]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

func.func @concat_axis(%x: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'onnx.Concat' op axis -3 is outside [-1, 0] for an input of rank 1}}
  %y = "onnx.Concat"(%x, %x) {axis = -3 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @concat_ranks(%x: tensor<2xf32>, %y: tensor<1x2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Concat' op inputs have ranks 1 and 2; Concat needs one rank}}
  %z = "onnx.Concat"(%x, %y) {axis = 0 : i64} : (tensor<2xf32>, tensor<1x2xf32>) -> tensor<*xf32>
  return %z : tensor<*xf32>
}

// -----

func.func @softmax_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'onnx.Softmax' op axis 2 is outside [-2, 1] for an input of rank 2}}
  %y = "onnx.Softmax"(%x) {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @gather_axis(%x: tensor<2x3xf32>, %i: tensor<2xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{'onnx.Gather' op axis -3 is outside [-2, 1] for an input of rank 2}}
  %y = "onnx.Gather"(%x, %i) {axis = -3 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

func.func @fused_on_relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'onnx.Relu' op 'onnx.fused_activation' belongs on onnx.Conv or onnx.Add, the producers an activation is fused into}}
  %y = "onnx.Relu"(%x) {onnx.fused_activation = "Relu"} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @fused_unknown(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'onnx.Add' op 'onnx.fused_activation' must be "Relu" or "Clip", not "Tanh"}}
  %y = "onnx.Add"(%x, %x) {onnx.fused_activation = "Tanh"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @in_place_not_concat(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'onnx.Add' op 'onnx.in_place_inputs' belongs on onnx.Concat}}
  %y = "onnx.Add"(%x, %x) {onnx.in_place_inputs = array<i64: 0>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @in_place_order(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'onnx.Concat' op 'onnx.in_place_inputs' lists input 0: positions must ascend and be below 2}}
  %y = "onnx.Concat"(%x, %x) {axis = 0 : i64, onnx.in_place_inputs = array<i64: 1, 0>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @in_place_kind(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'onnx.Concat' op 'onnx.in_place_inputs' must be an array<i64> of input positions}}
  %y = "onnx.Concat"(%x, %x) {axis = 0 : i64, onnx.in_place_inputs = [0]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}
