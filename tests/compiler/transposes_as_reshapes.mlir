// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-transposes-as-reshapes))' --split-input-file | FileCheck %s

// A pooled blocked value moved to NCHW order over a dynamic batch: only
// unit dims move past the 16 channels, so it is a collapse and an expand.
// CHECK-LABEL: func.func @pooled_blocked_to_nchw
// CHECK-SAME:    %[[X:.+]]: tensor<?x1x1x1x16xf32>
// CHECK:         %[[C:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1, 2, 3, 4]] : tensor<?x1x1x1x16xf32> into tensor<?x16xf32>
// CHECK:         %[[E:.+]] = tensor.expand_shape %[[C]] {{\[}}[0], [1, 2, 3, 4]] output_shape [%{{.+}}, 1, 16, 1, 1] : tensor<?x16xf32> into tensor<?x1x16x1x1xf32>
// CHECK-NOT:     linalg.transpose
// CHECK:         return %[[E]]
func.func @pooled_blocked_to_nchw(%x: tensor<?x1x1x1x16xf32>) -> tensor<?x1x16x1x1xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x1x1x1x16xf32>
  %e = tensor.empty(%n) : tensor<?x1x16x1x1xf32>
  %t = linalg.transpose ins(%x : tensor<?x1x1x1x16xf32>) outs(%e : tensor<?x1x16x1x1xf32>) permutation = [0, 1, 4, 2, 3]
  return %t : tensor<?x1x16x1x1xf32>
}

// -----

// A unit dim moved behind a dynamic one, which keeps its order with the
// static 4.
// CHECK-LABEL: func.func @unit_dim_behind_dynamic
// CHECK:         tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2]] : tensor<?x1x4xf32> into tensor<?x4xf32>
// CHECK:         tensor.expand_shape %{{.+}} {{\[}}[0, 1], [2]] output_shape [1, %{{.+}}, 4] : tensor<?x4xf32> into tensor<1x?x4xf32>
// CHECK-NOT:     linalg.transpose
func.func @unit_dim_behind_dynamic(%x: tensor<?x1x4xf32>, %n: index) -> tensor<1x?x4xf32> {
  %e = tensor.empty(%n) : tensor<1x?x4xf32>
  %t = linalg.transpose ins(%x : tensor<?x1x4xf32>) outs(%e : tensor<1x?x4xf32>) permutation = [1, 0, 2]
  return %t : tensor<1x?x4xf32>
}

// -----

// Two dims not of size 1 swap: a real transpose, kept; so is one that
// swaps a dynamic dim with a static one.
// CHECK-LABEL: func.func @real_transposes_kept
// CHECK-COUNT-2: linalg.transpose
// CHECK-NOT:     tensor.expand_shape
func.func @real_transposes_kept(%x: tensor<2x1x3xf32>, %y: tensor<?x1x3xf32>, %n: index) -> (tensor<3x1x2xf32>, tensor<3x1x?xf32>) {
  %e = tensor.empty() : tensor<3x1x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x1x3xf32>) outs(%e : tensor<3x1x2xf32>) permutation = [2, 1, 0]
  %e2 = tensor.empty(%n) : tensor<3x1x?xf32>
  %t2 = linalg.transpose ins(%y : tensor<?x1x3xf32>) outs(%e2 : tensor<3x1x?xf32>) permutation = [2, 1, 0]
  return %t, %t2 : tensor<3x1x2xf32>, tensor<3x1x?xf32>
}

// -----

// Every dim of size 1: a rank-0 collapse and an expand back, which fold
// away.
// CHECK-LABEL: func.func @all_unit_dims
// CHECK-SAME:    %[[X:.+]]: tensor<1x1xi8>
// CHECK-NEXT:    return %[[X]]
func.func @all_unit_dims(%x: tensor<1x1xi8>) -> tensor<1x1xi8> {
  %e = tensor.empty() : tensor<1x1xi8>
  %t = linalg.transpose ins(%x : tensor<1x1xi8>) outs(%e : tensor<1x1xi8>) permutation = [1, 0]
  return %t : tensor<1x1xi8>
}
