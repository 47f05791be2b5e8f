// A graph with an op of another dialect: the exporter refuses it.
module {
  func.func @g(%arg0: tensor<2xf32> {onnx.name = "x"}) -> (tensor<2xf32> {onnx.name = "y"}) {
    %0 = arith.addf %arg0, %arg0 : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
