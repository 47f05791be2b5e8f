func.func @g(%a: tensor<64xf16>) -> index {
  %n = mnccx.device_bytes %a : tensor<64xf16>
  return %n : index
}
