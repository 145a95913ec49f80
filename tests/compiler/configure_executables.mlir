// RUN: strata-opt %s --strata-outline-dispatch-regions --strata-configure-executables | FileCheck %s
// RUN: strata-opt %s --strata-outline-dispatch-regions "--strata-configure-executables=vector-bits=256" | FileCheck %s --check-prefix=AVX2
// RUN: strata-opt %s --strata-outline-dispatch-regions "--strata-configure-executables=workgroup-grid=gpu" | FileCheck %s --check-prefix=GPU

// Each executable gets its workgroup grid and its kernels' tiles once,
// recorded as #flow.lowering_config on its entry function; the dispatches
// of the executable get the same grid.
#map2d = affine_map<(d0, d1) -> (d0, d1)>

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
// CHECK: flow.executable @big_dispatch_0 {{.*}}workgroup_count = array<i64: 8, 1, 1>
// CHECK:   func.func @big_dispatch_0({{.*}} attributes {flow.lowering_config = #flow.lowering_config<vector_bits = 512, workgroup_tile = [64, 0], kernels = []>}
// CHECK: flow.dispatch @big_dispatch_0::@big_dispatch_0{{\[}}[8, 1, 1]]
// GPU thread blocks take narrower tiles, from less work each.
// GPU: flow.executable @big_dispatch_0 {{.*}}workgroup_count = array<i64: 32, 1, 1>
// GPU:   func.func @big_dispatch_0({{.*}}workgroup_tile = [16, 0]

// Dispatch formation decided one workgroup (strata.single_workgroup, a
// small split region merged into the one-workgroup region reading it):
// outlining keeps the mark on the entry function, and the same work as
// @big runs as one workgroup.
func.func @single_workgroup(%arg0: tensor<512x256xf32>) -> tensor<512x256xf32> {
  %0 = flow.dispatch.region -> (tensor<512x256xf32>) {
    %e = tensor.empty() : tensor<512x256xf32>
    %1 = linalg.generic {indexing_maps = [#map2d, #map2d], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<512x256xf32>) outs(%e : tensor<512x256xf32>) {
    ^bb0(%a: f32, %o: f32):
      %2 = arith.negf %a : f32
      linalg.yield %2 : f32
    } -> tensor<512x256xf32>
    flow.return %1 : tensor<512x256xf32>
  } {strata.single_workgroup}
  return %0 : tensor<512x256xf32>
}
// CHECK: flow.executable @single_workgroup_dispatch_0 {{.*}}workgroup_count = array<i64: 1, 1, 1>
// CHECK:   func.func @single_workgroup_dispatch_0({{.*}} attributes {flow.lowering_config = #flow.lowering_config<vector_bits = 512, kernels = []>, strata.single_workgroup}
// CHECK: flow.dispatch @single_workgroup_dispatch_0::@single_workgroup_dispatch_0{{\[}}[1, 1, 1]]
// GPU: flow.executable @single_workgroup_dispatch_0 {{.*}}workgroup_count = array<i64: 1, 1, 1>

// A contraction splits over whole cache tiles of its register-tiled loops:
// 512 rows are 8 cache tiles of 60 (6-row register tiles) and 32 rows over,
// which balances worse than 4 workgroups of 128 lanes.
func.func @matmul_grid(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>, %c: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %0 = flow.dispatch.region -> (tensor<512x512xf32>) {
    %1 = linalg.matmul ins(%a, %b : tensor<512x512xf32>, tensor<512x512xf32>) outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
    flow.return %1 : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}
// CHECK: flow.executable @matmul_grid_dispatch_0 {{.*}}workgroup_count = array<i64: 4, 1, 1>
// On a GPU the cuda target's thread-block kernel takes 64 rows per
// workgroup and spreads the columns over the workgroup's blocks.
// GPU: flow.executable @matmul_grid_dispatch_0 {{.*}}workgroup_count = array<i64: 8, 1, 1>
// GPU:   func.func @matmul_grid_dispatch_0({{.*}}workgroup_tile = [64, 0, 0]
// CHECK-SAME: {
// CHECK:   workgroup_tile = [0, 128, 0], kernels = [#flow.kernel_config<strategy = "contraction", cache_tiles = [60, 128, 256], cache_order = [0, 1, 2], register_tiles = [6, 64, 1], roles = [0, 1, 2]>]
// CHECK: flow.dispatch @matmul_grid_dispatch_0::@matmul_grid_dispatch_0{{\[}}[4, 1, 1]]
// AVX2: vector_bits = 256, workgroup_tile = [64, 0, 0], kernels = [#flow.kernel_config<strategy = "contraction", cache_tiles = [64, 256, 256], cache_order = [0, 1, 2], register_tiles = [4, 16, 1], roles = [0, 1, 2]>]

// Few rows: the columns split instead, 1152 lanes into 6 tiles of 192
// (5 of 256 would leave one of two workers a third of its time idle).
func.func @projection_grid(%a: tensor<197x384xf32>, %b: tensor<384x1152xf32>, %c: tensor<197x1152xf32>) -> tensor<197x1152xf32> {
  %0 = flow.dispatch.region -> (tensor<197x1152xf32>) {
    %1 = linalg.matmul ins(%a, %b : tensor<197x384xf32>, tensor<384x1152xf32>) outs(%c : tensor<197x1152xf32>) -> tensor<197x1152xf32>
    flow.return %1 : tensor<197x1152xf32>
  }
  return %0 : tensor<197x1152xf32>
}
// CHECK: flow.executable @projection_grid_dispatch_0 {{.*}}workgroup_count = array<i64: 6, 1, 1>
// CHECK: workgroup_tile = [0, 192, 0]

// A 1x1 convolution on a 14x14 map (96 x 196 outputs): 196 pixels would
// split 128 + 68, so the 96 rows split evenly instead, 4 x 24.
func.func @balanced_grid(%w: tensor<96x576xf32>, %x: tensor<1x576x196xf32>, %o: tensor<1x96x196xf32>) -> tensor<1x96x196xf32> {
  %0 = flow.dispatch.region -> (tensor<1x96x196xf32>) {
    %1 = linalg.generic {indexing_maps = [affine_map<(n, f, p, c) -> (f, c)>, affine_map<(n, f, p, c) -> (n, c, p)>, affine_map<(n, f, p, c) -> (n, f, p)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%w, %x : tensor<96x576xf32>, tensor<1x576x196xf32>) outs(%o : tensor<1x96x196xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %m, %acc : f32
      linalg.yield %s : f32
    } -> tensor<1x96x196xf32>
    flow.return %1 : tensor<1x96x196xf32>
  }
  return %0 : tensor<1x96x196xf32>
}
// CHECK: flow.executable @balanced_grid_dispatch_0 {{.*}}workgroup_count = array<i64: 4, 1, 1>
// For GPU blocks, 96 output channels are two row tiles of the thread-block
// kernel; the image loop of one iteration is no batch worth splitting.
// GPU: flow.executable @balanced_grid_dispatch_0 {{.*}}workgroup_count = array<i64: 2, 1, 1>
// GPU:   func.func @balanced_grid_dispatch_0({{.*}}workgroup_tile = [0, 64, 0, 0]
// CHECK: workgroup_tile = [0, 24, 0, 0]

// A blocked 1x1 convolution with two blocks of output channels on a 28x28
// map: a register tile takes 7 pixels of a row (a tile of 8 would leave 4
// pixels over, a dynamic row count that no register tile takes) times both
// blocks, so the blocks do not split; the map's rows do, one per workgroup.
func.func @blocked_conv_row_grid(%x: tensor<1x12x28x28x16xf32>, %w: tensor<2x12x1x1x16x16xf32>, %o: tensor<1x2x28x28x16xf32>) -> tensor<1x2x28x28x16xf32> {
  %0 = flow.dispatch.region -> (tensor<1x2x28x28x16xf32>) {
    %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d2 + d5, d3 + d6, d8)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d4, d5, d6, d8, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d7)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]} ins(%x, %w : tensor<1x12x28x28x16xf32>, tensor<2x12x1x1x16x16xf32>) outs(%o : tensor<1x2x28x28x16xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<1x2x28x28x16xf32>
    flow.return %1 : tensor<1x2x28x28x16xf32>
  }
  return %0 : tensor<1x2x28x28x16xf32>
}
// CHECK: flow.executable @blocked_conv_row_grid_dispatch_0 {{.*}}workgroup_count = array<i64: 28, 1, 1>
// CHECK: workgroup_tile = [0, 0, 1, 0, 0, 0, 0, 0, 0], kernels = [#flow.kernel_config<strategy = "broadcast", cache_tiles = [1, 2, 1, 0, 0, 0, 0, 16, 0], {{.*}} register_tiles = [0, 2, 0, 7, 1, 1, 1, 16, 1], roles = [3, 7, 4]>]

// A blocked 3x3 convolution, 64 -> 64 channels on a 56x56 map: its four
// output-channel blocks would split in two whole register tiles (two
// blocks each), its 56 pixels of a row in 7 tiles of 8 (one worker of two
// idle an eighth of the time). Its input elements are broadcast to every
// output channel, so re-reading two rows around each tile of output rows
// costs little, and the filter every workgroup reads whole is 147 KiB:
// the output rows split.
func.func @blocked_conv3x3_row_grid(%x: tensor<1x4x58x58x16xf32>, %w: tensor<4x4x3x3x16x16xf32>, %o: tensor<1x4x56x56x16xf32>) -> tensor<1x4x56x56x16xf32> {
  %0 = flow.dispatch.region -> (tensor<1x4x56x56x16xf32>) {
    %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d2 + d5, d3 + d6, d8)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d4, d5, d6, d8, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d7)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]} ins(%x, %w : tensor<1x4x58x58x16xf32>, tensor<4x4x3x3x16x16xf32>) outs(%o : tensor<1x4x56x56x16xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<1x4x56x56x16xf32>
    flow.return %1 : tensor<1x4x56x56x16xf32>
  }
  return %0 : tensor<1x4x56x56x16xf32>
}
// CHECK: flow.executable @blocked_conv3x3_row_grid_dispatch_0 {{.*}}workgroup_count = array<i64: 56, 1, 1>
// CHECK: workgroup_tile = [0, 0, 1, 0, 0, 0, 0, 0, 0]

// The same with 256 channels on a 14x14 map: a 2.3 MiB filter, which every
// workgroup of a row split would stream whole: the output-channel blocks
// split instead.
func.func @blocked_conv3x3_wide_filter_grid(%x: tensor<1x16x16x16x16xf32>, %w: tensor<16x16x3x3x16x16xf32>, %o: tensor<1x16x14x14x16xf32>) -> tensor<1x16x14x14x16xf32> {
  %0 = flow.dispatch.region -> (tensor<1x16x14x14x16xf32>) {
    %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d2 + d5, d3 + d6, d8)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d4, d5, d6, d8, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d7)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]} ins(%x, %w : tensor<1x16x16x16x16xf32>, tensor<16x16x3x3x16x16xf32>) outs(%o : tensor<1x16x14x14x16xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<1x16x14x14x16xf32>
    flow.return %1 : tensor<1x16x14x14x16xf32>
  }
  return %0 : tensor<1x16x14x14x16xf32>
}
// CHECK: flow.executable @blocked_conv3x3_wide_filter_grid_dispatch_0 {{.*}}workgroup_count = array<i64: 8, 1, 1>
// CHECK: workgroup_tile = [0, 2, 0, 0, 0, 0, 0, 0, 0]

// Batches split one per workgroup; too little work stays one workgroup.
func.func @batch_grid(%a: tensor<12x128x64xf32>, %b: tensor<12x64x128xf32>, %c: tensor<12x128x128xf32>) -> tensor<12x128x128xf32> {
  %0 = flow.dispatch.region -> (tensor<12x128x128xf32>) {
    %1 = linalg.batch_matmul ins(%a, %b : tensor<12x128x64xf32>, tensor<12x64x128xf32>) outs(%c : tensor<12x128x128xf32>) -> tensor<12x128x128xf32>
    flow.return %1 : tensor<12x128x128xf32>
  }
  return %0 : tensor<12x128x128xf32>
}
// CHECK: flow.executable @batch_grid_dispatch_0 {{.*}}workgroup_count = array<i64: 12, 1, 1>
// CHECK: workgroup_tile = [1, 0, 0, 0], kernels = [#flow.kernel_config<strategy = "contraction", cache_tiles = [1, 60, 128, 64], cache_order = [0, 1, 2, 3], register_tiles = [0, 6, 64, 1], roles = [1, 2, 3]>]
func.func @small_grid(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %0 = flow.dispatch.region -> (tensor<32x32xf32>) {
    %1 = linalg.matmul ins(%a, %b : tensor<32x32xf32>, tensor<32x32xf32>) outs(%c : tensor<32x32xf32>) -> tensor<32x32xf32>
    flow.return %1 : tensor<32x32xf32>
  }
  return %0 : tensor<32x32xf32>
}
// CHECK: flow.executable @small_grid_dispatch_0 {{.*}}workgroup_count = array<i64: 1, 1, 1>
// CHECK: #flow.lowering_config<vector_bits = 512, kernels = [#flow.kernel_config<strategy = "contraction", cache_tiles = [32, 32, 32]

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
// CHECK: workgroup_tile = [0, 2, 0, 0], kernels = []

// An NHWC pad's only unpadded dimension is its innermost: workgroups take
// whole cache lines of it (2 x 16 channels), never a few channels of every
// pixel.
func.func @pad_grid_innermost(%x: tensor<1x112x112x32xf32>) -> tensor<1x114x114x32xf32> {
  %0 = flow.dispatch.region -> (tensor<1x114x114x32xf32>) {
    %zero = arith.constant 0.0 : f32
    %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %zero : f32
    } : tensor<1x112x112x32xf32> to tensor<1x114x114x32xf32>
    flow.return %p : tensor<1x114x114x32xf32>
  }
  return %0 : tensor<1x114x114x32xf32>
}
// CHECK: flow.executable @pad_grid_innermost_dispatch_0 {{.*}}workgroup_count = array<i64: 2, 1, 1>
// CHECK: workgroup_tile = [0, 0, 0, 16], kernels = []

// A depthwise convolution is a broadcast kernel: lanes along the output
// columns (loop 2 of the generalized op: n, oh, ow, c, kh, kw), two output
// rows of 64 lanes per register tile (eight accumulators), accumulated
// over both filter taps at the register level. Workgroups split the
// channels (one each: a broadcast kernel splits from less work than a
// matrix product), not the rows the input reads through its window.
func.func @depthwise(%x: tensor<1x32x114x114xf32>, %w: tensor<32x3x3xf32>, %o: tensor<1x32x112x112xf32>) -> tensor<1x32x112x112xf32> {
  %0 = flow.dispatch.region -> (tensor<1x32x112x112xf32>) {
    %1 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x32x114x114xf32>, tensor<32x3x3xf32>) outs(%o : tensor<1x32x112x112xf32>) -> tensor<1x32x112x112xf32>
    flow.return %1 : tensor<1x32x112x112xf32>
  }
  return %0 : tensor<1x32x112x112xf32>
}
// CHECK: flow.executable @depthwise_dispatch_0
// CHECK-SAME: workgroup_count = array<i64: 32, 1, 1>
// CHECK: workgroup_tile = [0, 0, 0, 1, 0, 0], kernels = [#flow.kernel_config<strategy = "broadcast", cache_tiles = [1, 0, 112, 1, 0, 0], cache_order = [0, 1, 3, 2, 4, 5], register_tiles = [0, 2, 64, 0, 1, 1], roles = [1, 2, 4]>]

// A blocked depthwise convolution, 9 blocks of 16 channels, stride 2 to a
// 28x28 map: register tiles of 7 pixels, whose 4 tiles a row would split
// evenly. But the input's pixels are its lanes read through the window:
// each strip would re-read its neighbours' columns, a few pixels from
// each of many rows. Workgroups take channel blocks whole (9).
func.func @blocked_depthwise_grid(%x: tensor<1x9x58x58x16xf32>, %w: tensor<9x3x3x16xf32>, %o: tensor<1x9x28x28x16xf32>) -> tensor<1x9x28x28x16xf32> {
  %0 = flow.dispatch.region -> (tensor<1x9x28x28x16xf32>) {
    %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d6)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%x, %w : tensor<1x9x58x58x16xf32>, tensor<9x3x3x16xf32>) outs(%o : tensor<1x9x28x28x16xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %c, %m : f32
      linalg.yield %s : f32
    } -> tensor<1x9x28x28x16xf32>
    flow.return %1 : tensor<1x9x28x28x16xf32>
  }
  return %0 : tensor<1x9x28x28x16xf32>
}
// CHECK: flow.executable @blocked_depthwise_grid_dispatch_0 {{.*}}workgroup_count = array<i64: 9, 1, 1>
// CHECK: workgroup_tile = [0, 1, 0, 0, 0, 0, 0], kernels = [#flow.kernel_config<strategy = "broadcast", {{.*}}register_tiles = [0, 0, 0, 7, 1, 1, 16]

// An elementwise op whose outermost loop is short: a CPU splits it there
// (ties go to the outermost loop), GPU blocks split the loop that makes
// the most of them (32 tiles of 8 rows, a count dividing 256, not 3
// planes).
func.func @short_outer_loop(%x: tensor<3x256x256xf32>) -> tensor<3x256x256xf32> {
  %0 = flow.dispatch.region -> (tensor<3x256x256xf32>) {
    %e = tensor.empty() : tensor<3x256x256xf32>
    %1 = linalg.generic {indexing_maps = [affine_map<(c, h, w) -> (c, h, w)>, affine_map<(c, h, w) -> (c, h, w)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<3x256x256xf32>) outs(%e : tensor<3x256x256xf32>) {
    ^bb0(%a: f32, %o: f32):
      %n = arith.negf %a : f32
      linalg.yield %n : f32
    } -> tensor<3x256x256xf32>
    flow.return %1 : tensor<3x256x256xf32>
  }
  return %0 : tensor<3x256x256xf32>
}
// CHECK: flow.executable @short_outer_loop_dispatch_0 {{.*}}workgroup_count = array<i64: 3, 1, 1>
// GPU: flow.executable @short_outer_loop_dispatch_0 {{.*}}workgroup_count = array<i64: 32, 1, 1>
// GPU:   func.func @short_outer_loop_dispatch_0({{.*}}workgroup_tile = [0, 8, 0]

// GPU blocks of a larger product: 32 row tiles of 64, each workgroup's 16
// column tiles as 16 blocks.
func.func @big_matmul_grid(%a: tensor<2048x256xf32>, %b: tensor<256x2048xf32>, %c: tensor<2048x2048xf32>) -> tensor<2048x2048xf32> {
  %0 = flow.dispatch.region -> (tensor<2048x2048xf32>) {
    %1 = linalg.matmul ins(%a, %b : tensor<2048x256xf32>, tensor<256x2048xf32>) outs(%c : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
    flow.return %1 : tensor<2048x2048xf32>
  }
  return %0 : tensor<2048x2048xf32>
}
// GPU: flow.executable @big_matmul_grid_dispatch_0 {{.*}}workgroup_count = array<i64: 32, 1, 1>
// GPU:   func.func @big_matmul_grid_dispatch_0({{.*}}workgroup_tile = [64, 0, 0]
