// Matrix products whose sizes are no multiple of any tile (the cuda
// target's 64 x 128 x 16 block tiles, the CPU's register tiles), in the
// forms models export: with a bias and ReLU, batched against a transposed
// operand, on f16 inputs accumulated in f32, and accumulating into an
// argument.
func.func @matmul_ragged(%x: tensor<200x77xf32>, %w: tensor<77x300xf32>, %b: tensor<300xf32>) -> tensor<200x300xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<200x300xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<200x300xf32>) -> tensor<200x300xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<200x77xf32>, tensor<77x300xf32>) outs(%f : tensor<200x300xf32>) -> tensor<200x300xf32>
  %bb = linalg.broadcast ins(%b : tensor<300xf32>) outs(%e : tensor<200x300xf32>) dimensions = [0]
  %add = arith.addf %mm, %bb : tensor<200x300xf32>
  %zeros = arith.constant dense<0.0> : tensor<200x300xf32>
  %relu = arith.maximumf %add, %zeros : tensor<200x300xf32>
  return %relu : tensor<200x300xf32>
}

func.func @batch_matmul_transposed(%a: tensor<3x70x40xf32>, %b: tensor<3x90x40xf32>) -> tensor<3x70x90xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x70x90xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x70x90xf32>) -> tensor<3x70x90xf32>
  %r = linalg.batch_matmul indexing_maps = [
         affine_map<(b, m, n, k) -> (b, m, k)>,
         affine_map<(b, m, n, k) -> (b, n, k)>,
         affine_map<(b, m, n, k) -> (b, m, n)>]
       ins(%a, %b : tensor<3x70x40xf32>, tensor<3x90x40xf32>) outs(%f : tensor<3x70x90xf32>) -> tensor<3x70x90xf32>
  return %r : tensor<3x70x90xf32>
}

func.func @matmul_f16_inputs(%a: tensor<130x66xf16>, %b: tensor<66x129xf16>) -> tensor<130x129xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<130x129xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<130x129xf32>) -> tensor<130x129xf32>
  %r = linalg.matmul ins(%a, %b : tensor<130x66xf16>, tensor<66x129xf16>) outs(%f : tensor<130x129xf32>) -> tensor<130x129xf32>
  return %r : tensor<130x129xf32>
}

func.func @matmul_accumulate(%a: tensor<96x33xf32>, %b: tensor<33x150xf32>, %c: tensor<96x150xf32>) -> tensor<96x150xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<96x33xf32>, tensor<33x150xf32>) outs(%c : tensor<96x150xf32>) -> tensor<96x150xf32>
  return %r : tensor<96x150xf32>
}
