func.func @unsupported(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  %k = onnx.Initializer "k" dense<2> : tensor<1xi64>
  %v, %i = "onnx.TopK"(%x, %k) : (tensor<4x8xf32>, tensor<1xi64>) -> (tensor<4x2xf32>, tensor<4x2xi64>) loc("topk")
  return %v : tensor<4x2xf32>
}
