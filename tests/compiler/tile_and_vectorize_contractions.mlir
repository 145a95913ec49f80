// RUN: strata-opt %s --split-input-file --linalg-generalize-named-ops --strata-tile-and-vectorize-contractions="vector-bits=512 lower-vectors=0" | FileCheck %s
// RUN: strata-opt %s --split-input-file --linalg-generalize-named-ops --strata-tile-and-vectorize-contractions="vector-bits=512" | FileCheck %s --check-prefix=LOWERED
// RUN: strata-opt %s --split-input-file --linalg-generalize-named-ops --strata-tile-and-vectorize-contractions="vector-bits=256 lower-vectors=0" | FileCheck %s --check-prefix=AVX2

// Register tiles of 6 rows x 64 lanes (AVX-512); the remainders of a static
// shape are static too and vectorized with their own sizes: 40 lanes as 32
// and 8, the 13th row alone. Each tile's accumulators are read before the
// reduction loop, carried through it, and written after it.
// CHECK-LABEL: func.func @matmul_with_remainders
// CHECK:       scf.for %{{.+}} = %c0 to %c12 step %c6
// CHECK:         memref.subview %arg2[%{{.+}}, 0] [6, 40]
// CHECK:         %[[ACC:.+]] = vector.transfer_read {{.*}} vector<6x32xf32>
// CHECK:         %[[SUM:.+]]:2 = scf.for {{.*}} iter_args(%[[IT:.+]] = %[[ACC]], %{{.+}} = %{{.+}}) -> (vector<6x32xf32>, vector<6x8xf32>)
// CHECK:           vector.contract {{.*}} %[[IT]] : vector<6x1xf32>, vector<1x32xf32> into vector<6x32xf32>
// CHECK:           vector.contract {{.*}} : vector<6x1xf32>, vector<1x8xf32> into vector<6x8xf32>
// CHECK:         vector.transfer_write %[[SUM]]#1
// CHECK:         vector.transfer_write %[[SUM]]#0
// CHECK:       vector.contract {{.*}} : vector<1x1xf32>, vector<1x32xf32> into vector<1x32xf32>
// CHECK:       vector.contract {{.*}} : vector<1x1xf32>, vector<1x8xf32> into vector<1x8xf32>
// CHECK-NOT:   linalg.generic
// LOWERED-LABEL: func.func @matmul_with_remainders
// LOWERED-NOT:   vector.contract
// LOWERED:       vector.fma {{.*}} : vector<32xf32>
// AVX2-LABEL:  func.func @matmul_with_remainders
// AVX2:        vector.contract {{.*}} : vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32>
func.func @matmul_with_remainders(%a: memref<13x64xf32>, %b: memref<64x40xf32>, %c: memref<13x40xf32>) {
  linalg.matmul ins(%a, %b : memref<13x64xf32>, memref<64x40xf32>) outs(%c : memref<13x40xf32>)
  return
}

// -----

// One row: the tile widens to 8 vectors so FMAs have independent
// accumulators.
// CHECK-LABEL: func.func @matrix_vector
// CHECK:       vector.contract {{.*}} : vector<1x1xf32>, vector<1x128xf32> into vector<1x128xf32>
func.func @matrix_vector(%a: memref<1x256xf32>, %b: memref<256x512xf32>, %c: memref<1x512xf32>) {
  linalg.matmul ins(%a, %b : memref<1x256xf32>, memref<256x512xf32>) outs(%c : memref<1x512xf32>)
  return
}

// -----

// An exporter's product with unit dimensions between rows and lanes
// ([128, 1, 768] = [128, 1, 256] x [1, 256, 1, 768]): the register tile
// reads its operands without them.
// CHECK-LABEL: func.func @unit_dimensions
// CHECK:       vector.transfer_read {{.*}} : memref<6x1x64xf32, {{.*}}>, vector<6x64xf32>
// CHECK:       vector.contract {{.*}} : vector<6x1xf32>, vector<1x64xf32> into vector<6x64xf32>
// CHECK:       vector.transfer_write {{.*}} : vector<6x64xf32>, memref<6x1x64xf32
func.func @unit_dimensions(%a: memref<128x1x256xf32>, %b: memref<1x256x1x768xf32>, %c: memref<128x1x768xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d3, d4, d1, d2)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%a, %b : memref<128x1x256xf32>, memref<1x256x1x768xf32>) outs(%c : memref<128x1x768xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Batches are tiled by one; the unit batch dimension stays out of the
// vectors.
// CHECK-LABEL: func.func @batch_matmul
// CHECK:       scf.for %{{.+}} = %c0 to %c3 step %c1
// CHECK:       vector.transfer_read {{.*}} : memref<1x6x64xf32, {{.*}}>, vector<6x64xf32>
// CHECK:       vector.contract {{.*}} into vector<6x64xf32>
func.func @batch_matmul(%a: memref<3x16x8xf32>, %b: memref<3x8x64xf32>, %c: memref<3x16x64xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<3x16x8xf32>, memref<3x8x64xf32>) outs(%c : memref<3x16x64xf32>)
  return
}

// -----

// A workgroup's share of rows has a dynamic size: full register tiles are
// vectorized, and the rows past the last one run one at a time, each a
// vectorized register tile of one row.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK:       vector.contract {{.*}} into vector<6x64xf32>
// CHECK:       scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c6
// CHECK:         scf.for %{{.+}} = %c0 to %{{.+}} step %c1
// CHECK:           vector.contract {{.*}} into vector<1x64xf32>
// CHECK-NOT:   linalg.generic
func.func @dynamic_rows(%a: memref<?x64xf32>, %b: memref<64x64xf32>, %c: memref<?x64xf32>) {
  linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x64xf32>) outs(%c : memref<?x64xf32>)
  return
}

// -----

// Not a plain multiply-add (an activation fused onto an input): left to
// the loop lowering.
// CHECK-LABEL: func.func @fused_activation
// CHECK-NOT:   vector.contract
// CHECK:       math.tanh
func.func @fused_activation(%a: memref<16x16xf32>, %b: memref<16x64xf32>, %c: memref<16x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<16x16xf32>, memref<16x64xf32>) outs(%c : memref<16x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %t = math.tanh %x : f32
    %m = arith.mulf %t, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The vector loop must be the innermost of an input: with B transposed
// (C = A * B^T) there is none, and the op keeps the loop lowering.
// CHECK-LABEL: func.func @transposed_rhs
// CHECK-NOT:   vector.contract
func.func @transposed_rhs(%a: memref<16x32xf32>, %b: memref<64x32xf32>, %c: memref<16x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<16x32xf32>, memref<64x32xf32>) outs(%c : memref<16x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A depthwise convolution is a broadcast kernel: one weight broadcast per
// tap, times a row of input lanes at the tap's offset, accumulated in
// registers over every tap. 28 lanes run as 16 + 12, the 12 in a 16-lane
// vector with the lanes past the row masked off (out-of-bounds
// transfers); short rows go several to a register tile (here 4 rows x 2
// vectors: eight accumulators, disjoint row views). The 9 taps unroll:
// 72 FMAs from the accumulators' reads to their writes, no loop between.
// CHECK-LABEL: func.func @depthwise
// CHECK:       scf.for {{.*}} step %c4
// CHECK-COUNT-4: vector.transfer_read {{.*}} {in_bounds = [true]} : memref<1x1x1x16xf32{{.*}}, vector<16xf32>
// CHECK-COUNT-4: vector.transfer_read %{{.+}}[%c0, %c0, %c0, %c0], %{{.+}} : memref<1x1x1x12xf32{{.*}}, vector<16xf32>
// CHECK-NOT:     scf.for
// CHECK-COUNT-72: vector.fma {{.*}} : vector<16xf32>
// CHECK-NOT:     scf.for
// CHECK:       vector.transfer_write {{.*}} : vector<16xf32>, memref<1x1x1x12xf32
// CHECK-NOT:   linalg.generic
func.func @depthwise(%x: memref<1x4x30x30xf32>, %w: memref<4x3x3xf32>, %o: memref<1x4x28x28xf32>) {
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x4x30x30xf32>, memref<4x3x3xf32>) outs(%o : memref<1x4x28x28xf32>)
  return
}

// -----

// Strided: the input lanes are not contiguous, the op keeps the loop
// lowering.
// CHECK-LABEL: func.func @depthwise_strided
// CHECK-NOT:   vector.fma
func.func @depthwise_strided(%x: memref<1x4x29x29xf32>, %w: memref<4x3x3xf32>, %o: memref<1x4x14x14xf32>) {
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : memref<1x4x29x29xf32>, memref<4x3x3xf32>) outs(%o : memref<1x4x14x14xf32>)
  return
}

// -----

// NHWC depthwise: the weights run along the same channel lanes as the
// input, so both are read as lanes; four output pixels of two vectors per
// register tile, the 9 taps unrolled (36 FMAs, each tap's weights read
// once for the four pixels).
// CHECK-LABEL: func.func @depthwise_nhwc
// CHECK:       scf.for {{.*}} step %c4
// CHECK-NOT:     scf.for
// CHECK-COUNT-4: vector.transfer_read {{.*}} memref<1x1x1x32xf32, strided<[2048, 256, 32, 1]{{.*}} vector<32xf32>
// CHECK:         %[[X:.+]] = vector.transfer_read {{.*}} vector<32xf32>
// CHECK:         %[[W:.+]] = vector.transfer_read {{.*}} vector<32xf32>
// CHECK:         vector.fma %[[X]], %[[W]], %{{.+}} : vector<32xf32>
// CHECK-COUNT-35: vector.fma
// CHECK-NOT:     vector.fma
func.func @depthwise_nhwc(%x: memref<1x10x10x32xf32>, %w: memref<3x3x32xf32>, %o: memref<1x8x8x32xf32>) {
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x10x10x32xf32>, memref<3x3x32xf32>) outs(%o : memref<1x8x8x32xf32>)
  return
}

// -----

// A recorded lowering config is honoured, whatever the pass's own vector
// width: register tiles of 2 rows x 16 lanes, on 256-bit vectors.
// CHECK-LABEL: func.func @honours_lowering_config
// CHECK:       vector.contract {{.*}} : vector<2x1xf32>, vector<1x16xf32> into vector<2x16xf32>
// CHECK-NOT:   vector<8x1xf32>
// AVX2-LABEL:  func.func @honours_lowering_config
// AVX2:        vector.contract {{.*}} : vector<2x1xf32>, vector<1x16xf32> into vector<2x16xf32>
func.func @honours_lowering_config(%a: memref<16x64xf32>, %b: memref<64x64xf32>, %c: memref<16x64xf32>) attributes {flow.lowering_config = #flow.lowering_config<vector_bits = 256, kernels = [#flow.kernel_config<strategy = "contraction", cache_tiles = [16, 64, 64], cache_order = [0, 1, 2], register_tiles = [2, 16, 1], roles = [0, 1, 2]>]>} {
  linalg.matmul ins(%a, %b : memref<16x64xf32>, memref<64x64xf32>) outs(%c : memref<16x64xf32>)
  return
}

// -----

// A zero fill right before a product whose reduction (64) fits one cache
// tile: the accumulators start as zero instead of being read, and the fill
// pass over the output is gone. The remainder row (1 of 13) is a static
// tile too and starts from zero as well.
// (After --linalg-generalize-named-ops a fill is a linalg.generic.)
// CHECK-LABEL: func.func @fill_folded_into_accumulators
// CHECK-NOT:   linalg.generic
// CHECK:       %[[ZERO6:.+]] = arith.constant dense<0.000000e+00> : vector<6x32xf32>
// CHECK-NEXT:  scf.for {{.*}} iter_args(%{{.+}} = %[[ZERO6]]) -> (vector<6x32xf32>)
// CHECK:       %[[ZERO1:.+]] = arith.constant dense<0.000000e+00> : vector<32xf32>
// CHECK-NEXT:  scf.for {{.*}} iter_args(%{{.+}} = %[[ZERO1]]) -> (vector<32xf32>)
// CHECK-NOT:   linalg.generic
// CHECK:       return
func.func @fill_folded_into_accumulators(%a: memref<13x64xf32>, %b: memref<64x32xf32>, %c: memref<13x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<13x32xf32>)
  linalg.matmul ins(%a, %b : memref<13x64xf32>, memref<64x32xf32>) outs(%c : memref<13x32xf32>)
  return
}

// -----

// Dynamic rows: the remainder tile fills its own output tile before its
// reduction loop, then runs a vectorized row at a time; the full tiles
// start from the fill value (here 1.0).
// CHECK-LABEL: func.func @fill_folded_dynamic
// CHECK-NOT:   linalg.generic
// CHECK:       %[[ONES:.+]] = arith.constant dense<1.000000e+00> : vector<6x32xf32>
// CHECK:       scf.for {{.*}} iter_args(%{{.+}} = %[[ONES]]) -> (vector<6x32xf32>)
// The remainder rows, one at a time, each carrying its accumulator across
// the whole reduction (the row loop outside the reduction loop):
// CHECK:       linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : memref<?x32xf32
// CHECK-NEXT:  scf.for %{{.+}} = %c0 to %{{.+}} step %c1
// CHECK:         %[[ACC:.+]] = vector.transfer_read {{.*}} vector<32xf32>
// CHECK-NEXT:    scf.for %{{.+}} = %c0 to %c64 step %c1 iter_args(%{{.+}} = %[[ACC]]) -> (vector<32xf32>)
// CHECK:           vector.contract {{.*}} into vector<1x32xf32>
// CHECK:         vector.transfer_write
// CHECK-NOT:   linalg.generic
func.func @fill_folded_dynamic(%a: memref<?x64xf32>, %b: memref<64x32xf32>, %c: memref<?x32xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%c : memref<?x32xf32>)
  linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x32xf32>) outs(%c : memref<?x32xf32>)
  return
}

// -----

// A reduction split over cache tiles (1024 > 256) accumulates into the
// output several times: the fill stays.
// CHECK-LABEL: func.func @fill_kept_for_split_reduction
// CHECK:       linalg.generic {{.*}} ins(%{{.+}} : f32) outs(%arg2 : memref<16x32xf32>)
// CHECK:       vector.transfer_read {{.*}} : memref<6x32xf32
func.func @fill_kept_for_split_reduction(%a: memref<16x1024xf32>, %b: memref<1024x32xf32>, %c: memref<16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<16x32xf32>)
  linalg.matmul ins(%a, %b : memref<16x1024xf32>, memref<1024x32xf32>) outs(%c : memref<16x32xf32>)
  return
}

// -----

// A direct convolution in the blocked channel layout: the output channels
// (16) are the lanes, one register tile holds 7 pixels of a 14-pixel row
// (7 divides 14) times both blocks of output channels: 14 accumulators,
// carried in registers across every reduction loop. Each step broadcasts
// one input element per pixel and reads one weight vector per block, and
// every broadcast feeds both blocks' FMAs. (Its filter, 18 KiB, stays in
// L1 across the rows.)
// CHECK-LABEL: func.func @blocked_direct_conv
// CHECK-NOT:   memref.prefetch
// CHECK:       scf.for {{.*}} step %c7
// CHECK-COUNT-14: vector.transfer_read {{.*}} vector<16xf32>
// CHECK:       scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:               %[[X0:.+]] = vector.broadcast %{{.+}} : f32 to vector<16xf32>
// CHECK:               %[[W0:.+]] = vector.transfer_read
// CHECK:               vector.fma %[[X0]], %[[W0]]
// CHECK:               %[[W1:.+]] = vector.transfer_read
// CHECK:               vector.fma %[[X0]], %[[W1]]
// CHECK:               %[[X1:.+]] = vector.broadcast %{{.+}} : f32 to vector<16xf32>
// CHECK-NEXT:          vector.fma %[[X1]], %[[W0]]
// CHECK-NEXT:          vector.fma %[[X1]], %[[W1]]
// CHECK-COUNT-5:       vector.broadcast %{{.+}} : f32 to vector<16xf32>
// CHECK-NOT:           vector.transfer_read
// CHECK:             scf.yield
// CHECK-COUNT-14: vector.transfer_write
func.func @blocked_direct_conv(%x: memref<1x1x16x16x16xf32>, %w: memref<2x1x3x3x16x16xf32>, %y: memref<1x2x14x14x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d2 + d5, d3 + d6, d8)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d4, d5, d6, d8, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d7)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]} ins(%x, %w : memref<1x1x16x16x16xf32>, memref<2x1x3x3x16x16xf32>) outs(%y : memref<1x2x14x14x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The same convolution writing its output channels outside its pixels,
// [N, F/16, 16, OH, OW] (BlockChannels' split NCHW): the lanes still run
// along the output channels, the rows along the output's innermost pixels.
// Each row's accumulator is a column of the output: after the taps, each
// block's 7 rows (padded to 8 with zeros) are transposed in registers,
// three rounds of interleaving shuffles, and every output channel's 7
// pixels are stored as one masked row.
// CHECK-LABEL: func.func @blocked_direct_conv_split_output
// CHECK:       scf.for {{.*}} step %c7
// CHECK:       scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-NOT:   vector.transfer_write
// CHECK-COUNT-12: vector.shuffle {{.*}} [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23] : vector<16xf32>, vector<16xf32>
// CHECK:       %[[MASK:.+]] = vector.constant_mask [7] : vector<8xi1>
// CHECK:       %[[ROWS:.+]] = vector.extract_strided_slice %{{.+}} {offsets = [0], sizes = [8], strides = [1]} : vector<16xf32> to vector<8xf32>
// CHECK:       vector.transfer_write %[[ROWS]], %{{.+}}[%{{.+}}], %[[MASK]] {in_bounds = [true]} : vector<8xf32>, memref<1x2x16x1x7xf32
// CHECK-COUNT-15: vector.transfer_write {{.+}} : vector<8xf32>, memref<1x2x16x1x7xf32
// CHECK-COUNT-12: vector.shuffle {{.*}} [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23] : vector<16xf32>, vector<16xf32>
// CHECK-COUNT-16: vector.transfer_write {{.+}} : vector<8xf32>, memref<1x2x16x1x7xf32
// CHECK-NOT:   vector.transfer_write
// LOWERED-LABEL: func.func @blocked_direct_conv_split_output
// LOWERED-NOT:   permutation_map
// LOWERED-COUNT-32: vector.transfer_write {{.+}} : vector<8xf32>, memref<1x2x16x1x7xf32
// LOWERED-NOT:   permutation_map
// LOWERED:       return
func.func @blocked_direct_conv_split_output(%x: memref<1x1x16x16x16xf32>, %w: memref<2x1x3x3x16x16xf32>, %y: memref<1x2x16x14x14xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<1x2x16x14x14xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d2 + d5, d3 + d6, d8)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d4, d5, d6, d8, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d7, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]} ins(%x, %w : memref<1x1x16x16x16xf32>, memref<2x1x3x3x16x16xf32>) outs(%y : memref<1x2x16x14x14xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Accumulating into a split output (no fill), the register tile also reads
// its accumulators as columns: one row of 8 pixels per output channel,
// neighbouring channels' rows concatenated, then three rounds of
// deinterleaving shuffles give each pixel's 16 channels.
// CHECK-LABEL: func.func @split_output_accumulates
// CHECK-COUNT-16: vector.transfer_read {{.+}} : memref<1x1x16x1x8xf32, {{.+}}>, vector<8xf32>
// CHECK-COUNT-8: vector.shuffle {{.+}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xf32>, vector<8xf32>
// CHECK-COUNT-2: vector.shuffle {{.+}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] : vector<16xf32>, vector<16xf32>
// CHECK:       scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-NOT:   vector.transfer_read {{.+}} : memref<1x1x16x1x1xf32
// CHECK-COUNT-16: vector.transfer_write {{.+}} : vector<8xf32>, memref<1x1x16x1x8xf32
func.func @split_output_accumulates(%x: memref<1x1x16x16x16xf32>, %w: memref<1x1x3x3x16x16xf32>, %y: memref<1x1x16x14x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d2 + d5, d3 + d6, d8)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d4, d5, d6, d8, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d7, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]} ins(%x, %w : memref<1x1x16x16x16xf32>, memref<1x1x3x3x16x16xf32>) outs(%y : memref<1x1x16x14x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The same with 8 input-channel blocks: the filter of both output blocks
// (144 KiB, over 196 pixels) would come from memory, all of it for the
// first row, so the input-channel blocks are cache tiles of one (18 KiB
// of filter), looped outside the rows. Each step prefetches its filter vectors of the next chunk (the
// last chunk prefetches itself); the fill is not folded into the
// accumulators, which go through memory once per chunk.
// CHECK-LABEL: func.func @blocked_direct_conv_filter_chunks
// CHECK:       linalg.generic {{.*}} outs(%arg2 : memref<1x2x14x14x16xf32>)
// CHECK:       scf.for %[[CHUNK:.+]] = %c0 to %c8 step %c1
// CHECK:         %[[NEXT:.+]] = affine.min #{{.+}}(%[[CHUNK]])
// CHECK:         scf.for {{.*}} = %c0 to %c14 step %c1
// CHECK:           scf.for {{.*}} = %c0 to %c14 step %c7
// CHECK-COUNT-14:    vector.transfer_read {{.*}} vector<16xf32>
// CHECK:             scf.for
// CHECK:               scf.for
// CHECK:                 scf.for
// CHECK:                   memref.prefetch %arg1[%c0, %[[NEXT]], {{.*}}], read, locality<2>, data
// CHECK:                   vector.transfer_read
// CHECK:                   memref.prefetch %arg1[%c1, %[[NEXT]], {{.*}}], read, locality<2>, data
// CHECK:                   vector.transfer_read
// CHECK-NOT:               memref.prefetch
// CHECK:                 scf.yield
// CHECK-COUNT-14:    vector.transfer_write
func.func @blocked_direct_conv_filter_chunks(%x: memref<1x8x16x16x16xf32>, %w: memref<2x8x3x3x16x16xf32>, %y: memref<1x2x14x14x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<1x2x14x14x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d2 + d5, d3 + d6, d8)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d4, d5, d6, d8, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d7)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]} ins(%x, %w : memref<1x8x16x16x16xf32>, memref<2x8x3x3x16x16xf32>) outs(%y : memref<1x2x14x14x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A blocked 1x1 convolution: its reduction over 2 input-channel blocks of
// 16 is only 32 steps, but each row broadcasts its own input element at
// every step, so no two steps share a load: its reduction loops stay
// loops (unrolled, such 64-step nests ran 64 -> 94 us in mobilenet_v2),
// carrying the 14 accumulators.
// CHECK-LABEL: func.func @blocked_pointwise_conv
// CHECK:       scf.for {{.*}} step %c7
// CHECK:         scf.for %{{.+}} = %c0 to %c2 step %c1 iter_args
// CHECK:           scf.for %{{.+}} = %c0 to %c16 step %c1 iter_args
func.func @blocked_pointwise_conv(%x: memref<1x2x14x14x16xf32>, %w: memref<2x2x1x1x16x16xf32>, %y: memref<1x2x14x14x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d2 + d5, d3 + d6, d8)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d4, d5, d6, d8, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d7)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]} ins(%x, %w : memref<1x2x14x14x16xf32>, memref<2x2x1x1x16x16xf32>) outs(%y : memref<1x2x14x14x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A max pool in the blocked layout: the channels are the lanes, four
// output pixels per register tile, the running maximum in registers across
// the window's 9 steps, unrolled (the window operand only gives its shape
// and is never read).
// CHECK-LABEL: func.func @blocked_max_pool
// CHECK:       scf.for
// CHECK-NOT:     scf.for
// CHECK-COUNT-36: arith.maximumf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK-NOT:   memref.load
// CHECK-COUNT-4: vector.transfer_write
func.func @blocked_max_pool(%x: memref<1x1x9x9x16xf32>, %win: memref<3x3xf32>, %y: memref<1x1x4x4x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d6)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%x, %win : memref<1x1x9x9x16xf32>, memref<3x3xf32>) outs(%y : memref<1x1x4x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.maximumf %c, %a : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A flattened [1, C, 1, 1] input (a classifier after global pooling): the
// reduction runs over C, not over the unit loops beside it, so the
// accumulators stay in registers across all 64 steps.
// CHECK-LABEL: func.func @reduction_beside_unit_loops
// CHECK:       scf.for %{{.+}} = %c0 to %c256 step %c128
// CHECK:         %[[ACC:.+]] = vector.transfer_read {{.*}} vector<128xf32>
// CHECK:         scf.for %{{.+}} = %c0 to %c64 step %c1 iter_args(%{{.+}} = %[[ACC]]) -> (vector<128xf32>)
func.func @reduction_beside_unit_loops(%x: memref<1x64x1x1xf32>, %w: memref<64x1x1x256xf32>, %y: memref<1x256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d2, d3, d4, d1)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : memref<1x64x1x1xf32>, memref<64x1x1x256xf32>) outs(%y : memref<1x256xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A broadcast kernel accumulates its whole reduction (every reduction loop)
// in registers: the zero fill before it folds into its accumulators too.
// With one block of output channels (nothing to share a broadcast with), a
// register tile takes a whole row of 14 pixels.
// CHECK-LABEL: func.func @fill_folded_into_broadcast_rows
// CHECK-NOT:   linalg.generic
// CHECK:       scf.for {{.*}} to %c4 step %c1
// CHECK-NOT:   scf.for
// CHECK-COUNT-14: arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-NEXT:  scf.for
// CHECK-NOT:   linalg.generic
// CHECK:       return
func.func @fill_folded_into_broadcast_rows(%x: memref<1x1x6x16x16xf32>, %w: memref<1x1x3x3x16x16xf32>, %y: memref<1x1x4x14x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<1x1x4x14x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d2 + d5, d3 + d6, d8)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d4, d5, d6, d8, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d7)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]} ins(%x, %w : memref<1x1x6x16x16xf32>, memref<1x1x3x3x16x16xf32>) outs(%y : memref<1x1x4x14x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An epilogue overwriting the output in place runs on each cache tile (one
// output row of 14 pixels here) right after that tile's register tiles,
// while it is in L1, instead of as a pass over the whole output.
// CHECK-LABEL: func.func @epilogue_per_cache_tile
// CHECK:       scf.for %[[ROW:.+]] = %c0 to %c4 step %c1
// CHECK:         %[[TILE:.+]] = memref.subview %arg3[0, 0, %[[ROW]], 0, 0] [1, 1, 1, 14, 16]
// CHECK:         scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[TILE]], %{{.+}} : memref<1x1x1x14x16xf32, {{.*}}>, memref<1x16xf32{{.*}}>) outs(%[[TILE]] :
// CHECK:           arith.maximumf
// CHECK:         }
// CHECK-NEXT:  }
// CHECK-NEXT:  return
func.func @epilogue_per_cache_tile(%x: memref<1x1x6x16x16xf32>, %w: memref<1x1x3x3x16x16xf32>, %bias: memref<1x16xf32>, %y: memref<1x1x4x14x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d2 + d5, d3 + d6, d8)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d4, d5, d6, d8, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d7)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]} ins(%x, %w : memref<1x1x6x16x16xf32>, memref<1x1x3x3x16x16xf32>) outs(%y : memref<1x1x4x14x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%y, %bias : memref<1x1x4x14x16xf32>, memref<1x16xf32>) outs(%y : memref<1x1x4x14x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// An NHWC convolution: 64 output channels (4 vectors) are the lanes, and
// 4 output pixels of a row each broadcast their own input element against
// the shared weight vectors: 16 accumulators, across all taps and channels.
// CHECK-LABEL: func.func @direct_conv_nhwc
// CHECK:       scf.for {{.*}} step %c4
// CHECK:         scf.for {{.*}} -> (vector<64xf32>, vector<64xf32>, vector<64xf32>, vector<64xf32>)
// CHECK-COUNT-4:   vector.broadcast %{{.+}} : f32 to vector<64xf32>
func.func @direct_conv_nhwc(%x: memref<1x10x10x8xf32>, %w: memref<3x3x8x64xf32>, %y: memref<1x8x8x64xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x10x10x8xf32>, memref<3x3x8x64xf32>) outs(%y : memref<1x8x8x64xf32>)
  return
}

// -----

// 197 rows: the cache tiles of 60 rows are peeled too, so the last one
// (17 rows: 2 register tiles of 6 and 5 rows) is a static tile: every
// register tile is vectorized (a dynamic 5-row remainder stayed scalar
// loops: 80 instead of 110 GFLOP/s).
// CHECK-LABEL: func.func @rows_not_dividing_the_cache_tile
// CHECK-NOT:   affine.min
// CHECK:       scf.for %{{.+}} = %c0 to %c180 step %c60
// CHECK:         -> (vector<6x64xf32>)
// CHECK:       scf.for %{{.+}} = %c0 to %c12 step %c6
// CHECK:         -> (vector<6x64xf32>)
// CHECK:       -> (vector<5x64xf32>)
// CHECK-NOT:   linalg.generic
func.func @rows_not_dividing_the_cache_tile(%a: memref<197x64xf32>, %b: memref<64x64xf32>, %c: memref<197x64xf32>) {
  linalg.matmul ins(%a, %b : memref<197x64xf32>, memref<64x64xf32>) outs(%c : memref<197x64xf32>)
  return
}

// -----

// A reduction of one input along lanes (a global average pool's sum over
// the pixels of a blocked map): a broadcast kernel whose register tile
// holds one vector of lanes per channel block, carried in registers over
// the 7x7 pixels, each step one load and one vector add per block. The
// taps are unrolled up to 25 steps: a row's 7 pixels, in a loop over the
// 7 rows that carries the accumulators.
// CHECK-LABEL: func.func @lane_wise_sum
// CHECK-COUNT-2: vector.transfer_read {{.*}} vector<16xf32>
// CHECK:       scf.for %{{.+}} = %c0 to %c7 step %c1 iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (vector<16xf32>, vector<16xf32>)
// CHECK-NOT:   scf.for
// CHECK:       %[[X0:.+]] = vector.transfer_read {{.*}} vector<16xf32>
// CHECK-NEXT:  arith.addf %[[X0]], %{{.+}} : vector<16xf32>
// CHECK:       %[[X1:.+]] = vector.transfer_read {{.*}} vector<16xf32>
// CHECK-NEXT:  arith.addf %[[X1]], %{{.+}} : vector<16xf32>
// CHECK-COUNT-12: arith.addf
// CHECK-NOT:   arith.addf
// CHECK:       scf.yield
// CHECK-NOT:   scf.for
// CHECK:       vector.transfer_write
// CHECK:       vector.transfer_write
// CHECK-NOT:   linalg.generic
func.func @lane_wise_sum(%x: memref<1x2x7x7x16xf32>, %y: memref<1x2x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%x : memref<1x2x7x7x16xf32>) outs(%y : memref<1x2x16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}
