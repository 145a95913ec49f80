// RUN: strata-opt %s --pass-pipeline="builtin.module(func.func(strata-split-accumulator-inits))" --split-input-file | FileCheck %s

// A product accumulated into an argument sums from zero, then adds it.
// CHECK-LABEL: func.func @matmul_into_argument
// CHECK-SAME:      (%[[A:.+]]: tensor<4x3xf32>, %[[B:.+]]: tensor<3x5xf32>, %[[C:.+]]: tensor<4x5xf32>)
// CHECK:         %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[EMPTY:.+]] = tensor.empty() : tensor<4x5xf32>
// CHECK:         %[[FILL:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<4x5xf32>)
// CHECK:         %[[PRODUCT:.+]] = linalg.matmul ins(%[[A]], %[[B]] : {{.+}}) outs(%[[FILL]] : tensor<4x5xf32>)
// CHECK:         %[[SUM:.+]] = linalg.add ins(%[[PRODUCT]], %[[C]] : {{.+}}) outs(%[[EMPTY]] : tensor<4x5xf32>)
// CHECK:         return %[[SUM]]
func.func @matmul_into_argument(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %c: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x3xf32>, tensor<3x5xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// -----

// Integer sums too.
// CHECK-LABEL: func.func @row_sum_into_argument
// CHECK:         %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK:         linalg.fill ins(%[[ZERO]] : i32)
// CHECK:         linalg.generic
// CHECK:         linalg.add
func.func @row_sum_into_argument(%x: tensor<4x8xi32>, %acc: tensor<4xi32>) -> tensor<4xi32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xi32>) outs(%acc : tensor<4xi32>) {
  ^bb0(%v: i32, %out: i32):
    %s = arith.addi %out, %v : i32
    linalg.yield %s : i32
  } -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

// Left alone: a sum into a fill, and a maximum into a value (its start is
// not zero).
// CHECK-LABEL: func.func @filled
// CHECK-NOT:     linalg.add
func.func @filled(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4x3xf32>, tensor<3x5xf32>) outs(%f : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// CHECK-LABEL: func.func @max_into_argument
// CHECK-NOT:     linalg.fill
// CHECK-NOT:     linalg.add
func.func @max_into_argument(%x: tensor<4x8xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%v: f32, %out: f32):
    %s = arith.maximumf %out, %v : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
