// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-vectorize-short-rows))' --split-input-file | FileCheck %s

// Rows of 16 channels (a blocked layout's): one loop per outer dimension
// and the row as one vector; the bias is read along the same lanes.
// CHECK-DAG:   #[[BIAS:.+]] = affine_map<(d0, d1) -> (0, d0, d1)>
// CHECK-LABEL: func.func @bias_relu_on_blocks
// CHECK:         scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step
// CHECK:           scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step
// CHECK-DAG:         %[[X:.+]] = vector.transfer_read %{{.+}} : memref<1x1x16xf32, {{.+}}>, vector<1x1x16xf32>
// CHECK-DAG:         %[[B:.+]] = vector.transfer_read %{{.+}} {permutation_map = #[[BIAS]]} : memref<1x16xf32, {{.+}}>, vector<1x1x16xf32>
// CHECK:             %[[S:.+]] = arith.addf %[[X]], %[[B]] : vector<1x1x16xf32>
// CHECK:             %[[M:.+]] = arith.maximumf %[[S]], %{{.+}} : vector<1x1x16xf32>
// CHECK:             vector.transfer_write %[[M]], %{{.+}} : vector<1x1x16xf32>, memref<1x1x16xf32
// CHECK-NOT:     linalg.generic
func.func @bias_relu_on_blocks(%x: memref<2x3x16xf32>, %b: memref<3x16xf32>, %y: memref<2x3x16xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %b : memref<2x3x16xf32>, memref<3x16xf32>) outs(%y : memref<2x3x16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %m = arith.maximumf %s, %z : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Long rows are LLVM's to vectorize.
// CHECK-LABEL: func.func @long_rows_left_alone
// CHECK-NOT:     vector.transfer_read
// CHECK:         linalg.generic
func.func @long_rows_left_alone(%x: memref<2x1024xf32>, %y: memref<2x1024xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<2x1024xf32>) outs(%y : memref<2x1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A transpose out of a blocked layout (16 channels innermost in, 32
// pixels innermost out): blocks of 16 channels x 16 pixels, read with the
// permutation and written as 16 rows of 16 pixels.
// CHECK-DAG:   #[[PERM:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d2, d3)>
// CHECK-LABEL: func.func @unpack_transpose
// CHECK:         scf.for %{{.+}} = %{{.+}} to %c32 step %c16
// CHECK:           %[[BLOCK:.+]] = vector.transfer_read %{{.+}} {permutation_map = #[[PERM]]} : memref<1x1x1x16x16xf32, {{.+}}>, vector<1x1x16x1x16xf32>
// CHECK:           vector.transfer_write %[[BLOCK]], %{{.+}} : vector<1x1x16x1x16xf32>, memref<1x1x16x1x16xf32
func.func @unpack_transpose(%x: memref<1x2x8x32x16xf32>, %y: memref<1x2x16x8x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4, d2)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x2x8x32x16xf32>) outs(%y : memref<1x2x16x8x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// Rows of 56 pixels (a 56x56 map) are cut into whole 8-wide vectors, not
// 14-wide ones that would legalize into partial vectors.
// CHECK-LABEL: func.func @unpack_transpose_rows_of_56
// CHECK:         scf.for %{{.+}} = %{{.+}} to %c56 step %c8
// CHECK:           vector.transfer_read {{.+}} : memref<1x1x1x8x16xf32, {{.+}}>, vector<1x1x16x1x8xf32>
func.func @unpack_transpose_rows_of_56(%x: memref<1x2x8x56x16xf32>, %y: memref<1x2x16x8x56xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4, d2)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x2x8x56x16xf32>) outs(%y : memref<1x2x16x8x56xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
