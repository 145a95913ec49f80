// f64 on a 3-D shape: max(a, b) * 0.5 - a.
func.func @f64_max_scale(%a: tensor<2x3x4xf64>, %b: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
  %half = arith.constant dense<0.5> : tensor<2x3x4xf64>
  %0 = arith.maximumf %a, %b : tensor<2x3x4xf64>
  %1 = arith.mulf %0, %half : tensor<2x3x4xf64>
  %2 = arith.subf %1, %a : tensor<2x3x4xf64>
  return %2 : tensor<2x3x4xf64>
}
