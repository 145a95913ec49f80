// RUN: strata-opt %s --split-input-file --strata-epilogues-in-place | FileCheck %s

// A bias + ReLU epilogue overwrites the convolution result it reads: its
// init becomes that value, so both share one buffer.
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch = affine_map<(n, c, h, w) -> (c)>
// CHECK-LABEL: func.func @bias_relu
// CHECK:       %[[CONV:.+]] = linalg.depthwise_conv_2d_nchw_chw
// CHECK:       linalg.generic {{.*}} ins(%[[CONV]], %{{.+}} : tensor<1x8x16x16xf32>, tensor<8xf32>) outs(%[[CONV]] : tensor<1x8x16x16xf32>)
func.func @bias_relu(%x: tensor<1x8x18x18xf32>, %w: tensor<8x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x18x18xf32>, tensor<8x3x3xf32>) outs(%f : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %e2 = tensor.empty() : tensor<1x8x16x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %b : tensor<1x8x16x16xf32>, tensor<8xf32>) outs(%e2 : tensor<1x8x16x16xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x16x16xf32>
  return %r : tensor<1x8x16x16xf32>
}

// -----

// Not when the value is used again (overwriting it would force a copy), nor
// when it is read transposed, nor when the epilogue reads its own init.
#id2 = affine_map<(i, j) -> (i, j)>
#tr = affine_map<(i, j) -> (j, i)>
// CHECK-LABEL: func.func @kept
// CHECK:       %[[E:.+]] = tensor.empty() : tensor<8x8xf32>
// CHECK-COUNT-3: outs(%[[E]] : tensor<8x8xf32>)
func.func @kept(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %p = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%a : tensor<8x8xf32>) -> tensor<8x8xf32>
  %e = tensor.empty() : tensor<8x8xf32>
  %twice = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %in : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  %q = linalg.matmul ins(%b, %a : tensor<8x8xf32>, tensor<8x8xf32>) outs(%b : tensor<8x8xf32>) -> tensor<8x8xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]} ins(%q : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x8xf32>
  %r = linalg.matmul ins(%a, %a : tensor<8x8xf32>, tensor<8x8xf32>) outs(%b : tensor<8x8xf32>) -> tensor<8x8xf32>
  %acc = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  return %twice, %t, %acc, %p : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// Two inputs could be overwritten (both produced here for this op alone):
// the first is taken and the rewrite stops there.
// CHECK-LABEL: func.func @two_candidates
// CHECK:       %[[A:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<16xf32>)
// CHECK:       %[[B:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<16xf32>)
// CHECK:       linalg.generic {{.+}} ins(%[[A]], %[[B]] : tensor<16xf32>, tensor<16xf32>) outs(%[[A]] : tensor<16xf32>)
#id1 = affine_map<(d0) -> (d0)>
func.func @two_candidates(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %a = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]} ins(%a, %b : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %r = arith.addf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %s : tensor<16xf32>
}
