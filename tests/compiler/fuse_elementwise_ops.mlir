// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-fuse-elementwise-ops))' --split-input-file | FileCheck %s

// An activation (erf) on a matmul's input stays its own op: fused, it would
// run once per output column inside the reduction.
#id = affine_map<(i, k) -> (i, k)>
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
// CHECK-LABEL: func.func @activation_then_matmul
// CHECK:       %[[ACT:.+]] = linalg.generic
// CHECK:         math.erf
// CHECK:       linalg.generic {{.+}} ins(%[[ACT]], %arg1 : tensor<8x16xf32>, tensor<16x4xf32>)
// CHECK-NOT:     math.erf
func.func @activation_then_matmul(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %acc: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %act = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.erf %v : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%act, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%acc : tensor<8x4xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %m = arith.mulf %p, %q : f32
    %t = arith.addf %s, %m : f32
    linalg.yield %t : f32
  } -> tensor<8x4xf32>
  return %mm : tensor<8x4xf32>
}

// -----

// Read once per element (elementwise consumer, or a row reduction), the
// same math fuses.
#id2 = affine_map<(i, k) -> (i, k)>
#row = affine_map<(i, k) -> (i)>
// CHECK-LABEL: func.func @exp_then_row_sum
// CHECK:       linalg.generic
// CHECK-SAME:    iterator_types = ["parallel", "reduction"]
// CHECK:         math.exp
// CHECK-NOT:   linalg.generic
func.func @exp_then_row_sum(%x: tensor<8x16xf32>, %acc: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %ex = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%ex : tensor<8x16xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%p: f32, %s: f32):
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %sum : tensor<8xf32>
}

// -----

// Cheap math (bias and ReLU) on a matmul's input stays out too: fused, it
// would run once per multiply-add and the matmul would no longer be the
// plain multiply-add its vector kernel needs.
#id3 = affine_map<(i, k) -> (i, k)>
#col3 = affine_map<(i, k) -> (k)>
#a3 = affine_map<(i, j, k) -> (i, k)>
#b3 = affine_map<(i, j, k) -> (k, j)>
#c3 = affine_map<(i, j, k) -> (i, j)>
// CHECK-LABEL: func.func @bias_relu_then_matmul
// CHECK:       %[[ACT:.+]] = linalg.generic
// CHECK:         arith.maximumf
// CHECK:       linalg.generic {{.+}} ins(%[[ACT]], %arg2 : tensor<8x16xf32>, tensor<16x4xf32>)
// CHECK-NOT:     arith.maximumf
func.func @bias_relu_then_matmul(%x: tensor<8x16xf32>, %bias: tensor<16xf32>, %w: tensor<16x4xf32>, %acc: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %act = linalg.generic {indexing_maps = [#id3, #col3, #id3], iterator_types = ["parallel", "parallel"]} ins(%x, %bias : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %mm = linalg.generic {indexing_maps = [#a3, #b3, #c3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%act, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%acc : tensor<8x4xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %m = arith.mulf %p, %q : f32
    %t = arith.addf %s, %m : f32
    linalg.yield %t : f32
  } -> tensor<8x4xf32>
  return %mm : tensor<8x4xf32>
}

// -----

// A broadcast (nothing computed) still fuses into the matmul.
#row4 = affine_map<(i, k) -> (k)>
#id4 = affine_map<(i, k) -> (i, k)>
#a4 = affine_map<(i, j, k) -> (i, k)>
#b4 = affine_map<(i, j, k) -> (k, j)>
#c4 = affine_map<(i, j, k) -> (i, j)>
// CHECK-LABEL: func.func @broadcast_then_matmul
// CHECK:       linalg.generic
// CHECK-SAME:    iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-NOT:   linalg.generic
func.func @broadcast_then_matmul(%v: tensor<16xf32>, %w: tensor<16x4xf32>, %acc: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %bc = linalg.generic {indexing_maps = [#row4, #id4], iterator_types = ["parallel", "parallel"]} ins(%v : tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<8x16xf32>
  %mm = linalg.generic {indexing_maps = [#a4, #b4, #c4], iterator_types = ["parallel", "parallel", "reduction"]} ins(%bc, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%acc : tensor<8x4xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %m = arith.mulf %p, %q : f32
    %t = arith.addf %s, %m : f32
    linalg.yield %t : f32
  } -> tensor<8x4xf32>
  return %mm : tensor<8x4xf32>
}

// -----

// A Linear on an NHWC map: the matmul of [H*W, K] rows keeps its form
// (the reshapes around it stay reshapes) rather than becoming a product
// over [1, H, W] rows, which its kernel does not tile as a matmul; the
// bias add after it reads the expanded map.
// CHECK-LABEL: func.func @matmul_between_reshapes_keeps_its_form
// CHECK:         %[[ROWS:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0, 1, 2], [3]] : tensor<1x4x4x8xf32> into tensor<16x8xf32>
// CHECK:         %[[MM:.+]] = linalg.matmul ins(%[[ROWS]], %{{.+}} : tensor<16x8xf32>, tensor<8x16xf32>)
// CHECK:         tensor.expand_shape %[[MM]]
func.func @matmul_between_reshapes_keeps_its_form(%x: tensor<1x4x4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<1x4x4x16xf32> {
  %z = arith.constant 0.0 : f32
  %rows = tensor.collapse_shape %x [[0, 1, 2], [3]] : tensor<1x4x4x8xf32> into tensor<16x8xf32>
  %e = tensor.empty() : tensor<16x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %mm = linalg.matmul ins(%rows, %w : tensor<16x8xf32>, tensor<8x16xf32>) outs(%f : tensor<16x16xf32>) -> tensor<16x16xf32>
  %map = tensor.expand_shape %mm [[0, 1, 2], [3]] output_shape [1, 4, 4, 16] : tensor<16x16xf32> into tensor<1x4x4x16xf32>
  %e4 = tensor.empty() : tensor<1x4x4x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%map, %b : tensor<1x4x4x16xf32>, tensor<16xf32>) outs(%e4 : tensor<1x4x4x16xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<1x4x4x16xf32>
  return %r : tensor<1x4x4x16xf32>
}

// -----

// Slices of a fill (zero initial states built as ConstantOfShape -> Slice)
// are fills of the slices' sizes, however many read the fill: no filled
// temporary of the whole.
// CHECK-LABEL: func.func @slices_of_fill
// CHECK-SAME:    %[[N:[^:]+]]: index
// CHECK-NOT:     tensor.extract_slice
// CHECK:         %[[E0:.+]] = tensor.empty(%[[N]]) : tensor<2x?x8xf32>
// CHECK:         linalg.fill ins(%{{.+}} : f32) outs(%[[E0]] : tensor<2x?x8xf32>)
// CHECK:         %[[E1:.+]] = tensor.empty(%[[N]]) : tensor<?x8xf32>
// CHECK:         linalg.fill ins(%{{.+}} : f32) outs(%[[E1]] : tensor<?x8xf32>)
func.func @slices_of_fill(%n: index) -> (tensor<2x?x8xf32>, tensor<?x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<4x?x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x?x8xf32>) -> tensor<4x?x8xf32>
  %a = tensor.extract_slice %f[0, 0, 0] [2, %n, 8] [1, 1, 1] : tensor<4x?x8xf32> to tensor<2x?x8xf32>
  %b = tensor.extract_slice %f[3, 0, 0] [1, %n, 8] [1, 1, 1] : tensor<4x?x8xf32> to tensor<?x8xf32>
  return %a, %b : tensor<2x?x8xf32>, tensor<?x8xf32>
}
