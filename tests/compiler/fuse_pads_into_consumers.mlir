// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-form-dispatch-regions,strata-fuse-pads-into-consumers{vector-bits=512}))' --split-input-file | FileCheck %s

// A depthwise convolution of a padded argument, split by channels: each
// workgroup pads its own 8 channels (2.6 KiB) in the convolution's
// dispatch; the pad's own dispatch (and the copy it padded) goes.
// CHECK-LABEL: func.func @depthwise_pads_its_slices
// CHECK-SAME:    (%[[X:.+]]: tensor<1x256x7x7xf32>, %[[W:.+]]: tensor<256x3x3xf32>)
// CHECK:         %[[R:.+]] = flow.dispatch.region
// CHECK:           %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:           linalg.depthwise_conv_2d_nchw_chw {{.*}} ins(%[[P]], %[[W]]
// CHECK-NOT:     flow.dispatch.region
// CHECK:         return %[[R]]
func.func @depthwise_pads_its_slices(%x: tensor<1x256x7x7xf32>, %w: tensor<256x3x3xf32>) -> tensor<1x256x7x7xf32> {
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

// Every workgroup of a convolution reads all input channels: each would
// pad the whole input, so the pad stays a dispatch of its own.
// CHECK-LABEL: func.func @conv_reads_every_channel
// CHECK:         %[[P:.+]] = flow.dispatch.region
// CHECK:           tensor.pad
// CHECK:         flow.dispatch.region
// CHECK-NOT:       tensor.pad
// CHECK:           linalg.conv_2d_nchw_fchw {{.*}} ins(%[[P]],
func.func @conv_reads_every_channel(%x: tensor<1x64x28x28xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<1x64x28x28xf32> {
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

// One workgroup's channel of a 112x112 map padded is 51 KiB, more than L1
// holds next to the convolution's own data; but the depthwise
// convolution's register tiles read the pad's source in place, as lanes
// masked in the padding (Codegen/PaddedSources.h), so the padded slice is
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

// A channel of a 256x256 map padded is 260 KiB: were the temporary built
// after all, it would be too large for a workgroup's stack. The pad stays
// apart.
// CHECK-LABEL: func.func @huge_planes_stay_apart
// CHECK:         flow.dispatch.region
// CHECK:           tensor.pad
// CHECK:         flow.dispatch.region
// CHECK-NOT:       tensor.pad
// CHECK:           linalg.depthwise_conv_2d_nchw_chw
func.func @huge_planes_stay_apart(%x: tensor<1x8x256x256xf32>, %w: tensor<8x3x3xf32>) -> tensor<1x8x256x256xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x8x256x256xf32> to tensor<1x8x258x258xf32>
  %e = tensor.empty() : tensor<1x8x256x256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x256x256xf32>) -> tensor<1x8x256x256xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x8x258x258xf32>, tensor<8x3x3xf32>) outs(%f : tensor<1x8x256x256xf32>) -> tensor<1x8x256x256xf32>
  return %r : tensor<1x8x256x256xf32>
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
