// RUN: strata-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(resolve-ranked-shaped-type-result-dims,cse))' | FileCheck %s

// A dim of a dispatch's result is the dim the dispatch was given (its
// `dims`), through reshapes too, so that sizes derived from one value are
// that value: the host plans the transients of one scale in one slab.
// CHECK-LABEL: func.func @dims_of_results
// CHECK-SAME:    (%[[ARG:.+]]: tensor<?x4xf32>)
// CHECK:         %[[N:.+]] = tensor.dim %[[ARG]]
// CHECK:         %[[T1:.+]] = flow.dispatch @d::@d{{.*}} dims(%[[N]])
// CHECK-NOT:     tensor.dim
// CHECK:         flow.dispatch @d::@d{{.*}} (%[[T1]]) constants(%[[N]]) dims(%[[N]])
// CHECK:         %[[M:.+]] = affine.apply #{{.+}}()[%[[N]]]
// CHECK:         flow.dispatch @d::@d{{.*}} constants(%[[M]])
func.func @dims_of_results(%arg0: tensor<?x4xf32>) -> (tensor<?x8xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %arg0, %c0 : tensor<?x4xf32>
  %t1 = flow.dispatch @d::@d[[1, 1, 1]] (%arg0) constants(%n) dims(%n) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %c0_0 = arith.constant 0 : index
  %m = tensor.dim %t1, %c0_0 : tensor<?x4xf32>
  %t2 = flow.dispatch @d::@d[[1, 1, 1]] (%t1) constants(%m) dims(%m) : (tensor<?x4xf32>) -> tensor<?x8xf32>
  %flat = tensor.collapse_shape %t1 [[0, 1]] : tensor<?x4xf32> into tensor<?xf32>
  %c0_1 = arith.constant 0 : index
  %k = tensor.dim %flat, %c0_1 : tensor<?xf32>
  %t3 = flow.dispatch @d::@d[[1, 1, 1]] (%flat) constants(%k) dims(%k) : (tensor<?xf32>) -> tensor<?xf32>
  return %t2, %t3 : tensor<?x8xf32>, tensor<?xf32>
}
