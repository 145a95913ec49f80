// A dense layer: relu(x @ w + b), one dispatch.
func.func @matmul_bias_relu(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %bb = linalg.broadcast ins(%b : tensor<16xf32>) outs(%e : tensor<4x16xf32>) dimensions = [0]
  %add = arith.addf %mm, %bb : tensor<4x16xf32>
  %zeros = arith.constant dense<0.0> : tensor<4x16xf32>
  %relu = arith.maximumf %add, %zeros : tensor<4x16xf32>
  return %relu : tensor<4x16xf32>
}
