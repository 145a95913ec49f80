// RUN: strata-opt %s --split-input-file --strata-outline-dispatch-regions --strata-configure-executables | FileCheck %s
// RUN: strata-opt %s --split-input-file --strata-outline-dispatch-regions --strata-configure-executables --strata-lower-executables="print-lowered-ir=true" | FileCheck %s --check-prefix=LOWERED

// An executable over dynamic shapes splits its outermost dynamic parallel
// loop into tiles; its lowering config records each loop's extent (the
// push constant holding it) as `workload`, and the dispatch computes its
// grid from it at run time: ceil(rows / tile) workgroups, no more than the
// iterations give 16384 each (1 << 14) nor 64, at least one.
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @rows(%a: tensor<?x256xf32>, %n: index) -> tensor<?x256xf32> {
  %0 = flow.dispatch.region -> (tensor<?x256xf32>) {
    %e = tensor.empty(%n) : tensor<?x256xf32>
    %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<?x256xf32>) outs(%e : tensor<?x256xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.negf %x : f32
      linalg.yield %y : f32
    } -> tensor<?x256xf32>
    flow.return %r : tensor<?x256xf32>
  }
  return %0 : tensor<?x256xf32>
}
// CHECK-LABEL: flow.executable @rows_dispatch_0
// CHECK-SAME:    workgroup_count = array<i64: 1, 1, 1>
// CHECK:         flow.lowering_config = #flow.lowering_config<vector_bits = 512, workgroup_tile = [4, 0], kernels = [], workload = [-1, 256]>
// CHECK-LABEL: func.func @rows(
// CHECK-SAME:    %[[A:[^:]+]]: tensor<?x256xf32>, %[[N:[^:]+]]: index)
// CHECK:         %[[ROWS:.+]] = tensor.dim %[[A]]
// CHECK:         %[[C3:.+]] = arith.constant 3 : index
// CHECK:         %[[BIASED:.+]] = arith.addi %[[ROWS]], %[[C3]]
// CHECK:         %[[C4:.+]] = arith.constant 4 : index
// CHECK:         %[[TILES:.+]] = arith.divui %[[BIASED]], %[[C4]]
// CHECK:         %[[C16K:.+]] = arith.constant 16384 : index
// CHECK:         %[[BYWORK:.+]] = arith.divui %{{.+}}, %[[C16K]]
// CHECK:         %[[MIN1:.+]] = arith.minui %[[TILES]], %[[BYWORK]]
// CHECK:         %[[C64:.+]] = arith.constant 64 : index
// CHECK:         %[[MIN2:.+]] = arith.minui %[[MIN1]], %[[C64]]
// CHECK:         %[[COUNT:.+]] = arith.maxui %[[MIN2]]
// CHECK:         flow.dispatch @rows_dispatch_0::@rows_dispatch_0{{\[}}[1, 1, 1]] (%[[A]]) constants(%[[ROWS]], %[[ROWS]], %[[N]]) dims(%[[ROWS]]) workgroups(%[[COUNT]])

// Each workgroup runs a contiguous range of the tiles.
// LOWERED-LABEL: executable @rows_dispatch_0 for
// LOWERED:         llvm.udiv
// LOWERED:         llvm.intr.umin

// -----

// A reduction over the only dynamic loop leaves nothing to split.
#map0 = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
func.func @columns(%a: tensor<?x2xf32>) -> tensor<2xf32> {
  %0 = flow.dispatch.region -> (tensor<2xf32>) {
    %e = tensor.empty() : tensor<2xf32>
    %zero = arith.constant 0.0 : f32
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
    %r = linalg.generic {indexing_maps = [#map0, #map1], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<?x2xf32>) outs(%f : tensor<2xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.addf %x, %o : f32
      linalg.yield %y : f32
    } -> tensor<2xf32>
    flow.return %r : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}
// CHECK-LABEL: flow.executable @columns_dispatch_0
// CHECK:         flow.lowering_config = #flow.lowering_config<vector_bits = 512, kernels = [{{.*}}]>
// CHECK-LABEL: func.func @columns(
// CHECK:         flow.dispatch @columns_dispatch_0::@columns_dispatch_0{{\[}}[1, 1, 1]] (%{{.+}}) constants(%{{.+}}) {strata.dispatch_name

// -----

// The static loops of one image make enough work for several workgroups
// (64 x 32 x 32 pixels): the split runs along the outermost static parallel
// loop, in four tiles, so a batch of one still spreads over the cores.
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @images(%a: tensor<?x64x32x32xf32>, %n: index) -> tensor<?x64x32x32xf32> {
  %0 = flow.dispatch.region -> (tensor<?x64x32x32xf32>) {
    %e = tensor.empty(%n) : tensor<?x64x32x32xf32>
    %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a : tensor<?x64x32x32xf32>) outs(%e : tensor<?x64x32x32xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.negf %x : f32
      linalg.yield %y : f32
    } -> tensor<?x64x32x32xf32>
    flow.return %r : tensor<?x64x32x32xf32>
  }
  return %0 : tensor<?x64x32x32xf32>
}
// CHECK-LABEL: flow.executable @images_dispatch_0
// CHECK:         flow.lowering_config = #flow.lowering_config<vector_bits = 512, workgroup_tile = [0, 16, 0, 0], kernels = [], workload = [-1, 64, 32, 32]>

// -----

// A blocked direct convolution over a dynamic batch (resnet18's last
// layer: 2x2 pixels, 32 blocks of 16 output channels) splits its static
// loops as it would at a batch of one: here its output-channel blocks, in
// whole register tiles of 4, so that a batch of one still spreads over
// the cores (one workgroup did it all: 0.55 ms at 2 threads where the
// pinned module took 0.25).
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d2 + d5, d3 + d6, d8)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d4, d5, d6, d8, d7)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d7)>
func.func @blocked_conv(%x: tensor<?x32x4x4x16xf32>, %w: tensor<32x32x3x3x16x16xf32>, %n: index) -> tensor<?x32x2x2x16xf32> {
  %0 = flow.dispatch.region -> (tensor<?x32x2x2x16xf32>) {
    %e = tensor.empty(%n) : tensor<?x32x2x2x16xf32>
    %zero = arith.constant 0.0 : f32
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x32x2x2x16xf32>) -> tensor<?x32x2x2x16xf32>
    %c = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]} ins(%x, %w : tensor<?x32x4x4x16xf32>, tensor<32x32x3x3x16x16xf32>) outs(%f : tensor<?x32x2x2x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<?x32x2x2x16xf32>
    flow.return %c : tensor<?x32x2x2x16xf32>
  }
  return %0 : tensor<?x32x2x2x16xf32>
}
// CHECK-LABEL: flow.executable @blocked_conv_dispatch_0
// CHECK:         flow.lowering_config = #flow.lowering_config<vector_bits = 512, workgroup_tile = [0, 4, 0, 0, 0, 0, 0, 0, 0], kernels = [#flow.kernel_config<strategy = "broadcast"{{.*}}>], workload = [-1, 32, 2, 2, 32, 3, 3, 16, 16]>
// CHECK-LABEL: func.func @blocked_conv(
// CHECK:         flow.dispatch @blocked_conv_dispatch_0::@blocked_conv_dispatch_0{{\[}}[1, 1, 1]] (%{{.+}}, %{{.+}}) constants({{.+}}) dims({{.+}}) workgroups(%{{.+}})

// -----

// The same convolution under its ReLU epilogue (the root): the grid splits
// the root's loop over the same output channel blocks, and the count
// computed at run time weighs each root iteration by the convolution's
// reduction under it (work_per_iteration = 32 * 3 * 3 * 16 multiply-adds
// per output element), not by the root's few extents alone (which left a
// batch of one in a single workgroup).
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d2 + d5, d3 + d6, d8)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d4, d5, d6, d8, d7)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d7)>
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
func.func @blocked_conv_relu(%x: tensor<?x32x4x4x16xf32>, %w: tensor<32x32x3x3x16x16xf32>, %n: index) -> tensor<?x32x2x2x16xf32> {
  %0 = flow.dispatch.region -> (tensor<?x32x2x2x16xf32>) {
    %e = tensor.empty(%n) : tensor<?x32x2x2x16xf32>
    %zero = arith.constant 0.0 : f32
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x32x2x2x16xf32>) -> tensor<?x32x2x2x16xf32>
    %c = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]} ins(%x, %w : tensor<?x32x4x4x16xf32>, tensor<32x32x3x3x16x16xf32>) outs(%f : tensor<?x32x2x2x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<?x32x2x2x16xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<?x32x2x2x16xf32>) outs(%e : tensor<?x32x2x2x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.maximumf %a, %zero : f32
      linalg.yield %m : f32
    } -> tensor<?x32x2x2x16xf32>
    flow.return %r : tensor<?x32x2x2x16xf32>
  }
  return %0 : tensor<?x32x2x2x16xf32>
}
// CHECK-LABEL: flow.executable @blocked_conv_relu_dispatch_0
// CHECK:         flow.lowering_config = #flow.lowering_config<vector_bits = 512, workgroup_tile = [0, 4, 0, 0, 0], kernels = [#flow.kernel_config<strategy = "broadcast"{{.*}}>], workload = [{{-[0-9]+}}, 32, 2, 2, 16], work_per_iteration = 4608>
// CHECK-LABEL: func.func @blocked_conv_relu(
// CHECK:         %[[C4608:.+]] = arith.constant 4608 : index
// CHECK-NEXT:    %[[WORK:.+]] = arith.muli %{{.+}}, %[[C4608]]
// CHECK:         %[[C16K:.+]] = arith.constant 16384 : index
// CHECK-NEXT:    arith.divui %[[WORK]], %[[C16K]]
// CHECK:         flow.dispatch @blocked_conv_relu_dispatch_0::@blocked_conv_relu_dispatch_0{{\[}}[1, 1, 1]] (%{{.+}}, %{{.+}}) constants({{.+}}) dims({{.+}}) workgroups(%{{.+}})

// -----

// A 1x1 convolution's product with its ReLU, whose output is the collapse
// of an empty [N, F, H, W] tensor (im2col flattens the epilogue's output
// like the product's): the batch is read through the collapse, which
// leaves it whole, so the dispatch still gets its workload and splits the
// output channels (it ran in one workgroup).
#w = affine_map<(n, f, p, c) -> (f, c)>
#x = affine_map<(n, f, p, c) -> (n, c, p)>
#y = affine_map<(n, f, p, c) -> (n, f, p)>
#id = affine_map<(n, f, p) -> (n, f, p)>
func.func @collapsed_epilogue_output(%w: tensor<440x440xf32>, %x: tensor<?x440x4xf32>, %n: index) -> tensor<?x440x4xf32> {
  %0 = flow.dispatch.region -> (tensor<?x440x4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e4 = tensor.empty(%n) : tensor<?x440x2x2xf32>
    %out = tensor.collapse_shape %e4 [[0], [1], [2, 3]] : tensor<?x440x2x2xf32> into tensor<?x440x4xf32>
    %e = tensor.empty(%n) : tensor<?x440x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x440x4xf32>) -> tensor<?x440x4xf32>
    %c = linalg.generic {indexing_maps = [#w, #x, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%w, %x : tensor<440x440xf32>, tensor<?x440x4xf32>) outs(%f : tensor<?x440x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %m, %o : f32
      linalg.yield %s : f32
    } -> tensor<?x440x4xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c : tensor<?x440x4xf32>) outs(%out : tensor<?x440x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.maximumf %a, %zero : f32
      linalg.yield %m : f32
    } -> tensor<?x440x4xf32>
    flow.return %r : tensor<?x440x4xf32>
  }
  return %0 : tensor<?x440x4xf32>
}
// CHECK-LABEL: flow.executable @collapsed_epilogue_output_dispatch_0
// CHECK:         flow.lowering_config = #flow.lowering_config<vector_bits = 512, workgroup_tile = [0, {{[1-9][0-9]*}}, 0], kernels = [#flow.kernel_config<strategy = "contraction"{{.*}}>], workload = [{{-[0-9]+}}, 440, 4], work_per_iteration = 440>
