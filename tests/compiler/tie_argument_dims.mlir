// RUN: strata-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(strata-tie-argument-dims))" | FileCheck %s

// An elementwise op equates its operands' dims: the second argument's rows
// must be the first's. A matmul with a static 8x16 weight fixes the
// reduction dim of a dynamic input to 8; a free dim is read (unit).
func.func @ties(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %x: tensor<?x?xf32>,
                %w: tensor<8x16xf32>) -> (tensor<?x?xf32>, tensor<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %a, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %sum = linalg.add ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %rows = tensor.dim %x, %c0 : tensor<?x?xf32>
  %e2 = tensor.empty(%rows) : tensor<?x16xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<?x?xf32>, tensor<8x16xf32>) outs(%e2 : tensor<?x16xf32>) -> tensor<?x16xf32>
  return %sum, %mm : tensor<?x?xf32>, tensor<?x16xf32>
}
// CHECK-LABEL: func.func @ties
// CHECK-SAME:    %{{[^:]+}}: tensor<?x?xf32>,
// CHECK-SAME:    %{{[^:]+}}: tensor<?x?xf32> {strata.dim_ties = [array<i64: 0, 0>, array<i64: 0, 1>]},
// CHECK-SAME:    %{{[^:]+}}: tensor<?x?xf32> {strata.dim_ties = [unit, 8]},
// CHECK-SAME:    %{{[^:]+}}: tensor<8x16xf32>)

// -----

// A broadcast ties nothing; static programs get no attribute.
func.func @free(%a: tensor<?xf32>, %b: tensor<4xf32>) -> tensor<4x?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<4x?xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<?xf32>, tensor<4xf32>) outs(%e : tensor<4x?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x?xf32>
  return %r : tensor<4x?xf32>
}
// CHECK-LABEL: func.func @free
// CHECK-NOT:     strata.dim_ties
// CHECK-SAME:    {
