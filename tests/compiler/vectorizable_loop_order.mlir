// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-vectorizable-loop-order))' | FileCheck %s

// A generalized matmul (i, j, k) becomes (i, k, j): j, contiguous in B and
// C, is innermost and the reduction is not.
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
// CHECK-DAG: #[[A:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[B:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @matmul
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "reduction", "parallel"]}
func.func @matmul(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// A row sum has no parallel loop contiguous in its input: unchanged.
#in = affine_map<(i, k) -> (i, k)>
#out = affine_map<(i, k) -> (i)>
// CHECK-LABEL: func.func @row_sum
// CHECK: iterator_types = ["parallel", "reduction"]
func.func @row_sum(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  return
}

// A 3x3 stride-2 max pool (oh, ow, kh, kw) becomes (oh, kh, kw, ow): the
// output row is innermost, read from the input every other element, and
// the window loops are not.
#pin = affine_map<(oh, ow, kh, kw) -> (oh * 2 + kh, ow * 2 + kw)>
#pwin = affine_map<(oh, ow, kh, kw) -> (kh, kw)>
#pout = affine_map<(oh, ow, kh, kw) -> (oh, ow)>
// CHECK-LABEL: func.func @strided_max_pool
// CHECK: iterator_types = ["parallel", "reduction", "reduction", "parallel"]
func.func @strided_max_pool(%x: memref<17x17xf32>, %window: memref<3x3xf32>, %y: memref<8x8xf32>) {
  linalg.generic {indexing_maps = [#pin, #pwin, #pout], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %window : memref<17x17xf32>, memref<3x3xf32>) outs(%y : memref<8x8xf32>) {
  ^bb0(%v: f32, %w: f32, %acc: f32):
    %m = arith.maximumf %acc, %v : f32
    linalg.yield %m : f32
  }
  return
}

// A strided multiply-add (a depthwise convolution's row, stride 2) keeps
// its order: strided loads on its short rows were slower.
#dx = affine_map<(ow, kw) -> (ow * 2 + kw)>
#dw = affine_map<(ow, kw) -> (kw)>
#dy = affine_map<(ow, kw) -> (ow)>
// CHECK-LABEL: func.func @strided_multiply_add
// CHECK: iterator_types = ["parallel", "reduction"]
func.func @strided_multiply_add(%x: memref<17xf32>, %w: memref<3xf32>, %y: memref<8xf32>) {
  linalg.generic {indexing_maps = [#dx, #dw, #dy], iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : memref<17xf32>, memref<3xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%v: f32, %k: f32, %acc: f32):
    %m = arith.mulf %v, %k : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// A row sum of exp(x - max) reads the row's maximum, which the row loop
// walks contiguously, but which does not change along the reduction:
// moving the reduction out would only walk x across its rows. Unchanged.
#row = affine_map<(i, k) -> (i, k)>
#per_row = affine_map<(i, k) -> (i)>
// CHECK-LABEL: func.func @row_sum_of_shifted
// CHECK: iterator_types = ["parallel", "reduction"]
func.func @row_sum_of_shifted(%x: memref<16x1000xf32>, %max: memref<16xf32>, %sum: memref<16xf32>) {
  linalg.generic {indexing_maps = [#row, #per_row, #per_row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %max : memref<16x1000xf32>, memref<16xf32>) outs(%sum : memref<16xf32>) {
  ^bb0(%v: f32, %m: f32, %acc: f32):
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  }
  return
}
