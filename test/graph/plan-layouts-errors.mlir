// The device needs static shapes.

// RUN: not mncc-opt --mncc-plan-layouts %s 2>&1 | FileCheck %s

// CHECK: error: input 'x' has a dynamic shape [?,4]; the device needs static shapes: give --input-shape x:D0,D1,...
func.func @dynamic(%x: tensor<?x4xf32> {onnx.name = "x"}) -> tensor<?x4xf32> {
  %r = "onnx.Relu"(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
