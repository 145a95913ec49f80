// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-form-dispatch-regions,strata-fuse-pads-into-consumers{vector-bits=512}))' --split-input-file | FileCheck %s

// A depthwise convolution of a padded argument: its register tiles read
// the argument in place (Codegen/PaddedSources.h), so the pad joins the
// convolution's dispatch, marked to stay whole and never be built; the
// pad's own dispatch (and the copy it padded) goes.
// CHECK-LABEL: func.func @depthwise_reads_its_argument_in_place
// CHECK-SAME:    (%[[X:.+]]: tensor<1x256x7x7xf32>, %[[W:.+]]: tensor<256x3x3xf32>)
// CHECK:         %[[R:.+]] = flow.dispatch.region
// CHECK:           %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:           } {strata.pad_read_in_place}
// CHECK:           linalg.depthwise_conv_2d_nchw_chw {{.*}} ins(%[[P]], %[[W]]
// CHECK-NOT:     flow.dispatch.region
// CHECK:         return %[[R]]
func.func @depthwise_reads_its_argument_in_place(%x: tensor<1x256x7x7xf32>, %w: tensor<256x3x3xf32>) -> tensor<1x256x7x7xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x256x7x7xf32> to tensor<1x256x9x9xf32>
  %e = tensor.empty() : tensor<1x256x7x7xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x256x7x7xf32>) -> tensor<1x256x7x7xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x256x9x9xf32>, tensor<256x3x3xf32>) outs(%f : tensor<1x256x7x7xf32>) -> tensor<1x256x7x7xf32>
  return %r : tensor<1x256x7x7xf32>
}

// -----

// A direct convolution in NCHW reads the padded input as lanes along its
// rows too: every workgroup reads all input channels, in place.
// CHECK-LABEL: func.func @direct_conv_reads_in_place
// CHECK:         flow.dispatch.region
// CHECK:           %[[P:.+]] = tensor.pad
// CHECK:           } {strata.pad_read_in_place}
// CHECK:           linalg.conv_2d_nchw_fchw {{.*}} ins(%[[P]],
// CHECK-NOT:     flow.dispatch.region
func.func @direct_conv_reads_in_place(%x: tensor<1x64x28x28xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<1x64x28x28xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x64x28x28xf32> to tensor<1x64x30x30xf32>
  %e = tensor.empty() : tensor<1x64x28x28xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x28x28xf32>) -> tensor<1x64x28x28xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x64x30x30xf32>, tensor<64x64x3x3xf32>) outs(%f : tensor<1x64x28x28xf32>) -> tensor<1x64x28x28xf32>
  return %r : tensor<1x64x28x28xf32>
}

// -----

// However large the padded input (a 112x112 map's channel padded is
// 51 KiB, more than L1 holds next to the convolution's own data), it is
// never built: the pad joins.
// CHECK-LABEL: func.func @large_planes_read_in_place
// CHECK-SAME:    (%[[X:.+]]: tensor<1x32x112x112xf32>,
// CHECK:         flow.dispatch.region
// CHECK:           %[[P:.+]] = tensor.pad %[[X]]
// CHECK:           linalg.depthwise_conv_2d_nchw_chw {{.*}} ins(%[[P]],
// CHECK-NOT:     flow.dispatch.region
func.func @large_planes_read_in_place(%x: tensor<1x32x112x112xf32>, %w: tensor<32x3x3xf32>) -> tensor<1x32x112x112xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x32x112x112xf32> to tensor<1x32x114x114xf32>
  %e = tensor.empty() : tensor<1x32x112x112xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x112x112xf32>) -> tensor<1x32x112x112xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x32x114x114xf32>, tensor<32x3x3xf32>) outs(%f : tensor<1x32x112x112xf32>) -> tensor<1x32x112x112xf32>
  return %r : tensor<1x32x112x112xf32>
}

// -----

// The blocked layout's depthwise convolution splits its workgroups along
// output columns, a padded dimension: each workgroup reads its window of
// the padded input (columns and their halo), in place as well.
// CHECK-LABEL: func.func @blocked_depthwise_split_along_padding
// CHECK-SAME:    (%[[X:.+]]: tensor<1x2x112x112x16xf32>,
// CHECK:         flow.dispatch.region
// CHECK:           %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1, 1, 0] high[0, 0, 1, 1, 0]
// CHECK:           } {strata.pad_read_in_place}
// CHECK:           linalg.generic {{.*}} ins(%[[P]],
// CHECK-NOT:     flow.dispatch.region
func.func @blocked_depthwise_split_along_padding(%x: tensor<1x2x112x112x16xf32>, %w: tensor<2x3x3x16xf32>) -> tensor<1x2x112x112x16xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1, 0] high[0, 0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %zero : f32
  } : tensor<1x2x112x112x16xf32> to tensor<1x2x114x114x16xf32>
  %e = tensor.empty() : tensor<1x2x112x112x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x112x112x16xf32>) -> tensor<1x2x112x112x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2 + d4, d3 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d6)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
       ins(%p, %w : tensor<1x2x114x114x16xf32>, tensor<2x3x3x16xf32>) outs(%f : tensor<1x2x112x112x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x112x112x16xf32>
  return %r : tensor<1x2x112x112x16xf32>
}

// -----

// A convolution in the blocked layout broadcasts the input's elements
// (its lanes are output channels), one per row of its register tiles:
// they read them in place too, checked once per tile, the multiply-adds of
// an element in the padding masked off (Codegen/PaddedSources.h), so the
// pad joins.
// CHECK-LABEL: func.func @blocked_conv_reads_in_place
// CHECK-SAME:    (%[[X:.+]]: tensor<1x4x28x28x16xf32>,
// CHECK:         %[[R:.+]] = flow.dispatch.region
// CHECK:           %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1, 1, 0] high[0, 0, 1, 1, 0]
// CHECK:           } {strata.pad_read_in_place}
// CHECK:           linalg.generic {{.*}} ins(%[[P]],
// CHECK-NOT:     flow.dispatch.region
// CHECK:         return %[[R]]
func.func @blocked_conv_reads_in_place(%x: tensor<1x4x28x28x16xf32>, %w: tensor<4x4x3x3x16x16xf32>) -> tensor<1x4x28x28x16xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1, 0] high[0, 0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %zero : f32
  } : tensor<1x4x28x28x16xf32> to tensor<1x4x30x30x16xf32>
  %e = tensor.empty() : tensor<1x4x28x28x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x28x28x16xf32>) -> tensor<1x4x28x28x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d2 + d5, d3 + d6, d8)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d4, d5, d6, d8, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d7)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]}
       ins(%p, %w : tensor<1x4x30x30x16xf32>, tensor<4x4x3x3x16x16xf32>) outs(%f : tensor<1x4x28x28x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x28x28x16xf32>
  return %r : tensor<1x4x28x28x16xf32>
}

// -----

// The same under a ReLU epilogue, the dispatch's root: the convolution
// below it reads the padded input, in place.
// CHECK-LABEL: func.func @blocked_conv_relu_reads_in_place
// CHECK:         flow.dispatch.region
// CHECK:           %[[P:.+]] = tensor.pad
// CHECK:           } {strata.pad_read_in_place}
// CHECK:           %[[C:.+]] = linalg.generic {{.*}} ins(%[[P]],
// CHECK:           linalg.generic {{.*}} ins(%[[C]] :
// CHECK-NOT:     flow.dispatch.region
func.func @blocked_conv_relu_reads_in_place(%x: tensor<1x4x28x28x16xf32>, %w: tensor<4x4x3x3x16x16xf32>) -> tensor<1x4x28x28x16xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1, 0] high[0, 0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %zero : f32
  } : tensor<1x4x28x28x16xf32> to tensor<1x4x30x30x16xf32>
  %e = tensor.empty() : tensor<1x4x28x28x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x28x28x16xf32>) -> tensor<1x4x28x28x16xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d2 + d5, d3 + d6, d8)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d4, d5, d6, d8, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d7)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]}
       ins(%p, %w : tensor<1x4x30x30x16xf32>, tensor<4x4x3x3x16x16xf32>) outs(%f : tensor<1x4x28x28x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x28x28x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
       ins(%c : tensor<1x4x28x28x16xf32>) outs(%e : tensor<1x4x28x28x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x28x28x16xf32>
  return %r : tensor<1x4x28x28x16xf32>
}

// -----

// A stem convolution reads an NCHW input of 3 channels one element per row
// along its pixels: a border tile would check each element at every tap,
// which costs more than the pad's own dispatch, so that stays.
// CHECK-LABEL: func.func @stem_keeps_its_pad_dispatch
// CHECK:         %[[P:.+]] = flow.dispatch.region
// CHECK:           tensor.pad
// CHECK-NOT:       strata.pad_read_in_place
// CHECK:         flow.dispatch.region
// CHECK-NOT:       tensor.pad
// CHECK:           linalg.generic {{.*}} ins(%[[P]],
func.func @stem_keeps_its_pad_dispatch(%x: tensor<1x3x64x64xf32>, %w: tensor<4x3x7x7x16xf32>) -> tensor<1x4x32x32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 3, 3] high[0, 0, 3, 3] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x3x64x64xf32> to tensor<1x3x70x70xf32>
  %e = tensor.empty() : tensor<1x4x32x32x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x32x32x16xf32>) -> tensor<1x4x32x32x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d4, d2 * 2 + d5, d3 * 2 + d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d4, d5, d6, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d7)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]}
       ins(%p, %w : tensor<1x3x70x70xf32>, tensor<4x3x7x7x16xf32>) outs(%f : tensor<1x4x32x32x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x32x32x16xf32>
  return %r : tensor<1x4x32x32x16xf32>
}

// -----

// An elementwise op of a padded argument, split by channels: no kernel
// reads in place, but each workgroup's slice of the padded input is small
// (16 channels of 9x9, 5 KiB), so each workgroup pads its own slice in the
// consumer's dispatch.
// CHECK-LABEL: func.func @elementwise_pads_its_slices
// CHECK-SAME:    (%[[X:.+]]: tensor<1x64x7x7xf32>)
// CHECK:         flow.dispatch.region
// CHECK:           %[[P:.+]] = tensor.pad %[[X]]
// CHECK-NOT:       strata.pad_read_in_place
// CHECK:           linalg.generic {{.*}} ins(%[[P]] :
// CHECK-NOT:     flow.dispatch.region
func.func @elementwise_pads_its_slices(%x: tensor<1x64x7x7xf32>) -> tensor<1x64x9x9xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x64x7x7xf32> to tensor<1x64x9x9xf32>
  %e = tensor.empty() : tensor<1x64x9x9xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p : tensor<1x64x9x9xf32>) outs(%e : tensor<1x64x9x9xf32>) {
  ^bb0(%in: f32, %out: f32):
    %neg = arith.negf %in : f32
    linalg.yield %neg : f32
  } -> tensor<1x64x9x9xf32>
  return %n : tensor<1x64x9x9xf32>
}

// -----

// The padded value is also read elsewhere: the pad (of a copy) still
// joins its consumer; the other reader is untouched.
// CHECK-LABEL: func.func @pooled_value_with_another_use
// CHECK-SAME:    (%[[X:.+]]: tensor<1x64x7x7xf32>)
// CHECK:         flow.dispatch.region
// CHECK:           tensor.pad %[[X]]
// CHECK:           linalg.pooling_nchw_max
func.func @pooled_value_with_another_use(%x: tensor<1x64x7x7xf32>) -> (tensor<1x64x7x7xf32>, tensor<1x64x7x7xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %ninf : f32
  } : tensor<1x64x7x7xf32> to tensor<1x64x9x9xf32>
  %e = tensor.empty() : tensor<1x64x7x7xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32>
  %k = tensor.empty() : tensor<3x3xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %k : tensor<1x64x9x9xf32>, tensor<3x3xf32>) outs(%f : tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x64x7x7xf32>) outs(%e : tensor<1x64x7x7xf32>) {
  ^bb0(%in: f32, %out: f32):
    %neg = arith.negf %in : f32
    linalg.yield %neg : f32
  } -> tensor<1x64x7x7xf32>
  return %r, %n : tensor<1x64x7x7xf32>, tensor<1x64x7x7xf32>
}

// -----

// A blocked convolution reading an NCHW argument through a reshape into
// channel blocks ([N, C/16, 16, H, W]: BlockChannels' unpacked input)
// loops over the channels within a block innermost, as over a blocked
// input: it reads the padded argument in place.
// CHECK-LABEL: func.func @unpacked_conv_input_read_in_place
// CHECK:         flow.dispatch.region
// CHECK:           %[[P:.+]] = tensor.pad
// CHECK:           } {strata.pad_read_in_place}
// CHECK:           linalg.generic {{.*}} ins(%[[P]],
// CHECK-NOT:     flow.dispatch.region
func.func @unpacked_conv_input_read_in_place(%x: tensor<1x2x16x28x28xf32>, %w: tensor<2x2x3x3x16x16xf32>) -> tensor<1x2x28x28x16xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 0, 1, 1] high[0, 0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %zero : f32
  } : tensor<1x2x16x28x28xf32> to tensor<1x2x16x30x30xf32>
  %e = tensor.empty() : tensor<1x2x28x28x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x28x28x16xf32>) -> tensor<1x2x28x28x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d8, d2 + d5, d3 + d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d4, d5, d6, d8, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d7)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]}
       ins(%p, %w : tensor<1x2x16x30x30xf32>, tensor<2x2x3x3x16x16xf32>) outs(%f : tensor<1x2x28x28x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %m = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x28x28x16xf32>
  return %r : tensor<1x2x28x28x16xf32>
}

// -----

// Over a dynamic batch (not padded), a blocked direct convolution, which
// broadcasts its input's elements, reads its padded argument in place as
// over a static one.
#bx = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d2 + d5, d3 + d6, d8)>
#bw = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d4, d5, d6, d8, d7)>
#by = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d7)>
// CHECK-LABEL: func.func @dynamic_batch_blocked_conv_reads_in_place
// CHECK:         flow.dispatch.region
// CHECK:           %[[P:.+]] = tensor.pad
// CHECK:           } {strata.pad_read_in_place} : tensor<?x4x16x16x16xf32> to tensor<?x4x18x18x16xf32>
// CHECK:           linalg.generic {{.*}} ins(%[[P]],
// CHECK-NOT:     flow.dispatch.region
func.func @dynamic_batch_blocked_conv_reads_in_place(%x: tensor<?x4x16x16x16xf32>, %w: tensor<4x4x3x3x16x16xf32>) -> tensor<?x4x16x16x16xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4x16x16x16xf32>
  %p = tensor.pad %x low[0, 0, 1, 1, 0] high[0, 0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %zero : f32
  } : tensor<?x4x16x16x16xf32> to tensor<?x4x18x18x16xf32>
  %e = tensor.empty(%n) : tensor<?x4x16x16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4x16x16x16xf32>) -> tensor<?x4x16x16x16xf32>
  %r = linalg.generic {indexing_maps = [#bx, #bw, #by], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]} ins(%p, %w : tensor<?x4x18x18x16xf32>, tensor<4x4x3x3x16x16xf32>) outs(%f : tensor<?x4x16x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x4x16x16x16xf32>
  return %r : tensor<?x4x16x16x16xf32>
}

// -----

// Lanes read through the padded rows of a map over a dynamic batch (an
// NCHW depthwise convolution's) are read in place too: the rows, and so
// the masks, are static (mobilenet_v3_small over a dynamic batch: 12 pad
// dispatches -> 2).
// CHECK-LABEL: func.func @dynamic_batch_lanes_along_padded_rows
// CHECK:         flow.dispatch.region
// CHECK:           %[[P:.+]] = tensor.pad
// CHECK:           pad_read_in_place
// CHECK:           linalg.depthwise_conv_2d_nchw_chw {{.*}} ins(%[[P]],
// CHECK-NOT:     flow.dispatch.region
func.func @dynamic_batch_lanes_along_padded_rows(%x: tensor<?x32x56x56xf32>, %w: tensor<32x3x3xf32>) -> tensor<?x32x56x56xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x32x56x56xf32>
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<?x32x56x56xf32> to tensor<?x32x58x58xf32>
  %e = tensor.empty(%n) : tensor<?x32x56x56xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x32x56x56xf32>) -> tensor<?x32x56x56xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<?x32x58x58xf32>, tensor<32x3x3xf32>) outs(%f : tensor<?x32x56x56xf32>) -> tensor<?x32x56x56xf32>
  return %r : tensor<?x32x56x56xf32>
}
