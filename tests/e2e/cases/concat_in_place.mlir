// Channel concatenations of one image are the host program's: the
// dispatches that produce their operands write into them in place, and
// what cannot be (an argument, a value used twice, an unaligned offset) is
// copied in.

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#sum = affine_map<(d0, d1, d2) -> (d0, d2)>

// x = 2a, y = b + 1 and c (an argument): a concatenation that would copy
// c is a dispatch. x3 = a * a and z = 3b in place inside an inner
// concatenation, itself in place inside an outer one with w = b * b; each
// read by a reduction over its channels. A returned concatenation is the
// caller's buffer: its operands are copied there.
func.func @concat_in_place(%a: tensor<1x16x4xf32>, %b: tensor<1x8x4xf32>, %c: tensor<1x3x4xf32>)
    -> (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x24x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %three = arith.constant 3.0 : f32
  %ea = tensor.empty() : tensor<1x16x4xf32>
  %eb = tensor.empty() : tensor<1x8x4xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<1x16x4xf32>) outs(%ea : tensor<1x16x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %d = arith.addf %in, %in : f32
    linalg.yield %d : f32
  } -> tensor<1x16x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : tensor<1x8x4xf32>) outs(%eb : tensor<1x8x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %d = arith.addf %in, %one : f32
    linalg.yield %d : f32
  } -> tensor<1x8x4xf32>
  %cat = tensor.concat dim(1) %x, %y, %c : (tensor<1x16x4xf32>, tensor<1x8x4xf32>, tensor<1x3x4xf32>) -> tensor<1x27x4xf32>
  %es = tensor.empty() : tensor<1x4xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<1x4xf32>) -> tensor<1x4xf32>
  %s1 = linalg.generic {indexing_maps = [#id, #sum], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%cat : tensor<1x27x4xf32>) outs(%fs : tensor<1x4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %d = arith.addf %acc, %in : f32
    linalg.yield %d : f32
  } -> tensor<1x4xf32>
  %x3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<1x16x4xf32>) outs(%ea : tensor<1x16x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %d = arith.mulf %in, %in : f32
    linalg.yield %d : f32
  } -> tensor<1x16x4xf32>
  %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : tensor<1x8x4xf32>) outs(%eb : tensor<1x8x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %d = arith.mulf %in, %three : f32
    linalg.yield %d : f32
  } -> tensor<1x8x4xf32>
  %inner = tensor.concat dim(1) %x3, %z : (tensor<1x16x4xf32>, tensor<1x8x4xf32>) -> tensor<1x24x4xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : tensor<1x8x4xf32>) outs(%eb : tensor<1x8x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %d = arith.mulf %in, %in : f32
    linalg.yield %d : f32
  } -> tensor<1x8x4xf32>
  %outer = tensor.concat dim(1) %inner, %w : (tensor<1x24x4xf32>, tensor<1x8x4xf32>) -> tensor<1x32x4xf32>
  %s2 = linalg.generic {indexing_maps = [#id, #sum], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%outer : tensor<1x32x4xf32>) outs(%fs : tensor<1x4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.mulf %in, %in : f32
    %d = arith.addf %acc, %m : f32
    linalg.yield %d : f32
  } -> tensor<1x4xf32>
  %x4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<1x16x4xf32>) outs(%ea : tensor<1x16x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %d = arith.subf %in, %one : f32
    linalg.yield %d : f32
  } -> tensor<1x16x4xf32>
  %y2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : tensor<1x8x4xf32>) outs(%eb : tensor<1x8x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %d = arith.subf %in, %three : f32
    linalg.yield %d : f32
  } -> tensor<1x8x4xf32>
  %returned = tensor.concat dim(1) %x4, %y2 : (tensor<1x16x4xf32>, tensor<1x8x4xf32>) -> tensor<1x24x4xf32>
  return %s1, %s2, %returned : tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x24x4xf32>
}

// A concatenation of two images' values interleaves their bytes: it is a
// dispatch.
func.func @concat_batch(%a: tensor<2x3x4xf32>, %b: tensor<2x5x4xf32>) -> tensor<2x8x4xf32> {
  %r = tensor.concat dim(1) %a, %b : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
  return %r : tensor<2x8x4xf32>
}
