// RUN: strata-opt %s --strata-outline-dispatch-regions | FileCheck %s

// Each region becomes an executable whose function takes the captured
// tensors (bindings read) and returns the region's results (bindings
// written); the host keeps a flow.dispatch.
#map = affine_map<(d0) -> (d0)>
#map2d = affine_map<(d0, d1) -> (d0, d1)>
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
// CHECK:      flow.executable @scale_dispatch_0 entry @scale_dispatch_0 attributes {workgroup_count = array<i64: 1, 1, 1>} {
// CHECK-NEXT:   builtin.module {
// CHECK-NEXT:     func.func @scale_dispatch_0(%[[A:.+]]: tensor<8xf32>, %[[B:.+]]: tensor<8xf32>) -> tensor<8xf32>
// CHECK:            linalg.generic {{.*}} ins(%[[A]], %[[B]] :
// CHECK:            return
// CHECK:      func.func @scale(%[[ARG0:.+]]: tensor<8xf32>, %[[ARG1:.+]]: tensor<8xf32>)
// CHECK-NEXT:   %[[R:.+]] = flow.dispatch @scale_dispatch_0::@scale_dispatch_0{{\[}}[1, 1, 1]] (%[[ARG0]], %[[ARG1]]) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:   return %[[R]]

// A dispatch with enough work is split over a workgroup grid along its
// outermost parallel loop; the count divides the loop evenly when it can.
func.func @big(%arg0: tensor<512x256xf32>) -> tensor<512x256xf32> {
  %0 = flow.dispatch.region -> (tensor<512x256xf32>) {
    %e = tensor.empty() : tensor<512x256xf32>
    %1 = linalg.generic {indexing_maps = [#map2d, #map2d], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<512x256xf32>) outs(%e : tensor<512x256xf32>) {
    ^bb0(%a: f32, %o: f32):
      %2 = arith.negf %a : f32
      linalg.yield %2 : f32
    } -> tensor<512x256xf32>
    flow.return %1 : tensor<512x256xf32>
  }
  return %0 : tensor<512x256xf32>
}
// CHECK: flow.executable @big_dispatch_0 entry @big_dispatch_0 attributes {workgroup_count = array<i64: 8, 1, 1>}
// CHECK: flow.dispatch @big_dispatch_0::@big_dispatch_0{{\[}}[8, 1, 1]]

// A contraction splits over whole cache tiles of its register-tiled loops:
// 512 rows make 8 workgroups of 64 rows (512 lanes only 2 of 256).
func.func @matmul_grid(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>, %c: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %0 = flow.dispatch.region -> (tensor<512x512xf32>) {
    %1 = linalg.matmul ins(%a, %b : tensor<512x512xf32>, tensor<512x512xf32>) outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
    flow.return %1 : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}
// CHECK: flow.executable @matmul_grid_dispatch_0 {{.*}}workgroup_count = array<i64: 8, 1, 1>

// Few rows: the columns split instead, 1152 lanes into 5 tiles of 256.
func.func @projection_grid(%a: tensor<197x384xf32>, %b: tensor<384x1152xf32>, %c: tensor<197x1152xf32>) -> tensor<197x1152xf32> {
  %0 = flow.dispatch.region -> (tensor<197x1152xf32>) {
    %1 = linalg.matmul ins(%a, %b : tensor<197x384xf32>, tensor<384x1152xf32>) outs(%c : tensor<197x1152xf32>) -> tensor<197x1152xf32>
    flow.return %1 : tensor<197x1152xf32>
  }
  return %0 : tensor<197x1152xf32>
}
// CHECK: flow.executable @projection_grid_dispatch_0 {{.*}}workgroup_count = array<i64: 5, 1, 1>

// Batches split one per workgroup; too little work stays one workgroup.
func.func @batch_grid(%a: tensor<12x128x64xf32>, %b: tensor<12x64x128xf32>, %c: tensor<12x128x128xf32>) -> tensor<12x128x128xf32> {
  %0 = flow.dispatch.region -> (tensor<12x128x128xf32>) {
    %1 = linalg.batch_matmul ins(%a, %b : tensor<12x128x64xf32>, tensor<12x64x128xf32>) outs(%c : tensor<12x128x128xf32>) -> tensor<12x128x128xf32>
    flow.return %1 : tensor<12x128x128xf32>
  }
  return %0 : tensor<12x128x128xf32>
}
// CHECK: flow.executable @batch_grid_dispatch_0 {{.*}}workgroup_count = array<i64: 12, 1, 1>
func.func @small_grid(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %0 = flow.dispatch.region -> (tensor<32x32xf32>) {
    %1 = linalg.matmul ins(%a, %b : tensor<32x32xf32>, tensor<32x32xf32>) outs(%c : tensor<32x32xf32>) -> tensor<32x32xf32>
    flow.return %1 : tensor<32x32xf32>
  }
  return %0 : tensor<32x32xf32>
}
// CHECK: flow.executable @small_grid_dispatch_0 {{.*}}workgroup_count = array<i64: 1, 1, 1>

// A large pad splits along its unpadded channel dimension (96 channels,
// 48 workgroups of 2); padded dimensions are never split.
func.func @pad_grid(%x: tensor<1x96x112x112xf32>) -> tensor<1x96x114x114xf32> {
  %0 = flow.dispatch.region -> (tensor<1x96x114x114xf32>) {
    %zero = arith.constant 0.0 : f32
    %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %zero : f32
    } : tensor<1x96x112x112xf32> to tensor<1x96x114x114xf32>
    flow.return %p : tensor<1x96x114x114xf32>
  }
  return %0 : tensor<1x96x114x114xf32>
}
// CHECK: flow.executable @pad_grid_dispatch_0 {{.*}}workgroup_count = array<i64: 48, 1, 1>
