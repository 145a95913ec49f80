// RUN: strata-opt %s --strata-deduplicate-executables | FileCheck %s

// @a and @b differ only in their names: @b goes and its dispatch calls @a.
// @c computes something else (subf) and @d has another workgroup grid: both
// stay.
#map = affine_map<(d0) -> (d0)>
flow.executable @a entry @a attributes {workgroup_count = array<i64: 1, 1, 1>} {
  builtin.module {
    func.func @a(%x: tensor<8xf32>) -> tensor<8xf32> {
      %e = tensor.empty() : tensor<8xf32>
      %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
      ^bb0(%i: f32, %o: f32):
        %s = arith.addf %i, %i : f32
        linalg.yield %s : f32
      } -> tensor<8xf32>
      return %r : tensor<8xf32>
    }
  }
}
flow.executable @b entry @b attributes {workgroup_count = array<i64: 1, 1, 1>} {
  builtin.module {
    func.func @b(%y: tensor<8xf32>) -> tensor<8xf32> {
      %e = tensor.empty() : tensor<8xf32>
      %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%y : tensor<8xf32>) outs(%e : tensor<8xf32>) {
      ^bb0(%i: f32, %o: f32):
        %s = arith.addf %i, %i : f32
        linalg.yield %s : f32
      } -> tensor<8xf32>
      return %r : tensor<8xf32>
    }
  }
}
flow.executable @c entry @c attributes {workgroup_count = array<i64: 1, 1, 1>} {
  builtin.module {
    func.func @c(%x: tensor<8xf32>) -> tensor<8xf32> {
      %e = tensor.empty() : tensor<8xf32>
      %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
      ^bb0(%i: f32, %o: f32):
        %s = arith.subf %i, %i : f32
        linalg.yield %s : f32
      } -> tensor<8xf32>
      return %r : tensor<8xf32>
    }
  }
}
flow.executable @d entry @d attributes {workgroup_count = array<i64: 2, 1, 1>} {
  builtin.module {
    func.func @d(%x: tensor<8xf32>) -> tensor<8xf32> {
      %e = tensor.empty() : tensor<8xf32>
      %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
      ^bb0(%i: f32, %o: f32):
        %s = arith.addf %i, %i : f32
        linalg.yield %s : f32
      } -> tensor<8xf32>
      return %r : tensor<8xf32>
    }
  }
}
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = flow.dispatch @a::@a[[1, 1, 1]] (%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = flow.dispatch @b::@b[[1, 1, 1]] (%0) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = flow.dispatch @c::@c[[1, 1, 1]] (%1) : (tensor<8xf32>) -> tensor<8xf32>
  %3 = flow.dispatch @d::@d[[2, 1, 1]] (%2) : (tensor<8xf32>) -> tensor<8xf32>
  return %3 : tensor<8xf32>
}
// CHECK:     flow.executable @a entry @a
// CHECK-NOT: flow.executable @b
// CHECK:     flow.executable @c entry @c
// CHECK:     flow.executable @d entry @d
// CHECK:     func.func @main(%[[ARG:.+]]: tensor<8xf32>)
// CHECK:       %[[A:.+]] = flow.dispatch @a::@a[{{\[}}1, 1, 1]] (%[[ARG]])
// CHECK:       %[[B:.+]] = flow.dispatch @a::@a[{{\[}}1, 1, 1]] (%[[A]])
// CHECK:       %[[C:.+]] = flow.dispatch @c::@c[{{\[}}1, 1, 1]] (%[[B]])
// CHECK:       flow.dispatch @d::@d[{{\[}}2, 1, 1]] (%[[C]])
