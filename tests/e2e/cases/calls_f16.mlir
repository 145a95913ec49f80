// Several public functions calling a private helper and each other, and f16
// storage (math computed in f32).
func.func private @scale(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = arith.constant dense<0.5> : tensor<8xf32>
  %0 = arith.mulf %x, %c : tensor<8xf32>
  return %0 : tensor<8xf32>
}

func.func @twice_scaled(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = func.call @scale(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = func.call @scale(%0) : (tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

func.func @calls_public(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = func.call @twice_scaled(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = arith.addf %0, %x : tensor<8xf32>
  return %1 : tensor<8xf32>
}

func.func @f16_ops(%a: tensor<8xf16>, %b: tensor<8xf16>) -> (tensor<8xf16>, tensor<8xf32>) {
  %0 = arith.mulf %a, %b : tensor<8xf16>
  %1 = math.exp %0 : tensor<8xf16>
  %2 = arith.extf %1 : tensor<8xf16> to tensor<8xf32>
  return %1, %2 : tensor<8xf16>, tensor<8xf32>
}
