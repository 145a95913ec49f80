// RUN: strata-opt %s --strata-outline-dispatch-regions | FileCheck %s

// Each region becomes an executable whose function takes the captured
// tensors (bindings read) and returns the region's results (bindings
// written); the host keeps a flow.dispatch. Both carry the dispatch's name
// (dispatch_names.mlir has the naming).
#map = affine_map<(d0) -> (d0)>
func.func @scale(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> tensor<8xf32> {
  %0 = flow.dispatch.region -> (tensor<8xf32>) {
    %e = tensor.empty() : tensor<8xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%arg0, %arg1 : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %2 = arith.addf %a, %b : f32
      linalg.yield %2 : f32
    } -> tensor<8xf32>
    flow.return %1 : tensor<8xf32>
  }
  return %0 : tensor<8xf32>
}
// CHECK:      flow.executable @scale_dispatch_0 entry @scale_dispatch_0 attributes {strata.dispatch_name = "add", workgroup_count = array<i64: 1, 1, 1>} {
// CHECK-NEXT:   builtin.module {
// CHECK-NEXT:     func.func @scale_dispatch_0(%[[A:.+]]: tensor<8xf32>, %[[B:.+]]: tensor<8xf32>) -> tensor<8xf32>
// CHECK:            linalg.generic {{.*}} ins(%[[A]], %[[B]] :
// CHECK:            return
// CHECK:      func.func @scale(%[[ARG0:.+]]: tensor<8xf32>, %[[ARG1:.+]]: tensor<8xf32>)
// CHECK-NEXT:   %[[R:.+]] = flow.dispatch @scale_dispatch_0::@scale_dispatch_0{{\[}}[1, 1, 1]] (%[[ARG0]], %[[ARG1]]) {strata.dispatch_name = "add"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:   return %[[R]]
