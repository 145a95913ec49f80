// A two-result op whose results are the same value, used separately (once
// crashed the out-param rewrite; found by the ONNX LSTM lowering).
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @duplicate_results(%x: tensor<2x4xf32>, %len: tensor<2xi32>) -> (tensor<2x2x4xf32>) {
  %e = tensor.empty() : tensor<2x4xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %c0 = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %r:2 = linalg.generic {indexing_maps = [#id, #row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %len : tensor<2x4xf32>, tensor<2xi32>) outs(%e, %e2 : tensor<2x4xf32>, tensor<2x4xf32>) {
  ^bb0(%in: f32, %l: i32, %o0: f32, %o1: f32):
    %t = math.tanh %in : f32
    %v = arith.cmpi slt, %c0, %l : i32
    %s = arith.select %v, %t, %zero : f32
    %s2 = arith.select %v, %t, %zero : f32
    linalg.yield %s, %s2 : f32, f32
  } -> (tensor<2x4xf32>, tensor<2x4xf32>)
  %y0 = tensor.empty() : tensor<2x2x4xf32>
  %y1 = tensor.insert_slice %r#1 into %y0[0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x4xf32> into tensor<2x2x4xf32>
  %n = tensor.empty() : tensor<2x4xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r#0 : tensor<2x4xf32>) outs(%n : tensor<2x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  } -> tensor<2x4xf32>
  %y2 = tensor.insert_slice %h into %y1[1, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x4xf32> into tensor<2x2x4xf32>
  return %y2 : tensor<2x2x4xf32>
}
