// Two outputs whose names differ only in characters a file name cannot
// hold: both would be written to out/a_b.{npy,pb}.
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = {ai.onnx = 17 : i64}} {
  func.func @g(%x: tensor<2xf32> {onnx.name = "X"}) -> (tensor<2xf32> {onnx.name = "a/b"}, tensor<2xf32> {onnx.name = "a:b"}) {
    %0 = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    %1 = "onnx.Neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    return %0, %1 : tensor<2xf32>, tensor<2xf32>
  }
}
