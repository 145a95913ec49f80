// An op that accumulates into a function argument (outs = %b) must not
// write the caller's tensor: the later use of %b still sees its values.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @accumulate_into_argument(%a: tensor<64x32xf32>, %b: tensor<64x32xf32>)
    -> (tensor<64x32xf32>, tensor<64x32xf32>) {
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x32xf32>) outs(%b : tensor<64x32xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  %t = arith.mulf %b, %b : tensor<64x32xf32>
  return %r, %t : tensor<64x32xf32>, tensor<64x32xf32>
}
