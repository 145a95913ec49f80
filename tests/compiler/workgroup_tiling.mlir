// RUN: strata-opt %s --strata-lower-executables --mlir-print-ir-before=convert-linalg-to-loops -o /dev/null 2>&1 | FileCheck %s

// A matmul whose input carries a fused activation, under an elementwise
// root with a bias over the columns. Splitting the columns (the loop the
// kernel vectorizes) into 2-wide tiles would recompute the activation of
// the whole input in every workgroup: the rows are split instead.
#x = affine_map<(i, j, k) -> (i, k)>
#w = affine_map<(i, j, k) -> (k, j)>
#o = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
flow.executable @ffn_dispatch_0 entry @ffn_dispatch_0 attributes {workgroup_count = array<i64: 64, 1, 1>} {
  builtin.module {
    func.func @ffn_dispatch_0(%x: tensor<128x512xf32>, %w: tensor<512x128xf32>, %b: tensor<128xf32>) -> tensor<128x128xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<128x128xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
      %mm = linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<128x512xf32>, tensor<512x128xf32>) outs(%f : tensor<128x128xf32>) {
      ^bb0(%a: f32, %c: f32, %acc: f32):
        %t = math.tanh %a : f32
        %m = arith.mulf %t, %c : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      } -> tensor<128x128xf32>
      %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%mm, %b : tensor<128x128xf32>, tensor<128xf32>) outs(%e : tensor<128x128xf32>) {
      ^bb0(%a: f32, %c: f32, %o: f32):
        %s = arith.addf %a, %c : f32
        linalg.yield %s : f32
      } -> tensor<128x128xf32>
      return %r : tensor<128x128xf32>
    }
  }
}
// CHECK-LABEL: func.func @ffn_dispatch_0
// CHECK:       memref.subview %arg0[%{{.+}}, 0] [2, 512] [1, 1]
// CHECK-NOT:   memref.subview %arg1
