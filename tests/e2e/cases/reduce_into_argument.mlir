// A reduction that accumulates into an argument with something other than
// a sum (here the maximum of each row and the argument's element): the
// argument is copied per workgroup tile, never written, and every
// workgroup's rows survive the others'.
func.func @max_into_argument(%x: tensor<512x256xf32>, %acc: tensor<512xf32>) -> tensor<512xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<512x256xf32>) outs(%acc : tensor<512xf32>) {
  ^bb0(%v: f32, %out: f32):
    %m = arith.maximumf %out, %v : f32
    linalg.yield %m : f32
  } -> tensor<512xf32>
  return %r : tensor<512xf32>
}
