// Windowed ops reading a pad of their input inside one dispatch: the
// register tiles read the unpadded input with masked loads (lanes outside
// it take the pad value) instead of a padded copy on the stack.

// NCHW 3x3, pad 1, 40 channels (a workgroup's share of them need not
// divide them).
func.func @dw_nchw_7x7(%x: tensor<1x40x7x7xf32>, %w: tensor<40x3x3xf32>) -> tensor<1x40x7x7xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x40x7x7xf32> to tensor<1x40x9x9xf32>
  %e = tensor.empty() : tensor<1x40x7x7xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x40x7x7xf32>) -> tensor<1x40x7x7xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x40x9x9xf32>, tensor<40x3x3xf32>) outs(%f : tensor<1x40x7x7xf32>) -> tensor<1x40x7x7xf32>
  return %r : tensor<1x40x7x7xf32>
}

// 5x5 with different padding on each side.
func.func @dw_nchw_asymmetric(%x: tensor<1x24x10x13xf32>, %w: tensor<24x5x5xf32>) -> tensor<1x24x10x13xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 2] high[0, 0, 3, 2] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x24x10x13xf32> to tensor<1x24x14x17xf32>
  %e = tensor.empty() : tensor<1x24x10x13xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x24x10x13xf32>) -> tensor<1x24x10x13xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x24x14x17xf32>, tensor<24x5x5xf32>) outs(%f : tensor<1x24x10x13xf32>) -> tensor<1x24x10x13xf32>
  return %r : tensor<1x24x10x13xf32>
}

// Dilation 2, pad 2.
func.func @dw_nchw_dilated(%x: tensor<1x16x14x14xf32>, %w: tensor<16x3x3xf32>) -> tensor<1x16x14x14xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x16x14x14xf32> to tensor<1x16x18x18xf32>
  %e = tensor.empty() : tensor<1x16x14x14xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x16x18x18xf32>, tensor<16x3x3xf32>) outs(%f : tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32>
  return %r : tensor<1x16x14x14xf32>
}

// A pad value other than zero reaches the multiply-adds.
func.func @dw_nchw_pad_one(%x: tensor<1x8x6x6xf32>, %w: tensor<8x3x3xf32>) -> tensor<1x8x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %one : f32
  } : tensor<1x8x6x6xf32> to tensor<1x8x8x8xf32>
  %e = tensor.empty() : tensor<1x8x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x8x8x8xf32>, tensor<8x3x3xf32>) outs(%f : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  return %r : tensor<1x8x6x6xf32>
}

// A max pooling padded with -inf.
func.func @max_pool_nchw_padded(%x: tensor<1x8x9x9xf32>) -> tensor<1x8x9x9xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<1x8x9x9xf32> to tensor<1x8x11x11xf32>
  %e = tensor.empty() : tensor<1x8x9x9xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x8x9x9xf32>) -> tensor<1x8x9x9xf32>
  %k = tensor.empty() : tensor<3x3xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %k : tensor<1x8x11x11xf32>, tensor<3x3xf32>) outs(%f : tensor<1x8x9x9xf32>) -> tensor<1x8x9x9xf32>
  return %r : tensor<1x8x9x9xf32>
}

// NHWC: the lanes run along the channels, the padding is on the rows.
func.func @dw_nhwc_padded(%x: tensor<1x9x9x32xf32>, %w: tensor<3x3x32xf32>) -> tensor<1x9x9x32xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x9x9x32xf32> to tensor<1x11x11x32xf32>
  %e = tensor.empty() : tensor<1x9x9x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x9x9x32xf32>) -> tensor<1x9x9x32xf32>
  %r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x11x11x32xf32>, tensor<3x3x32xf32>) outs(%f : tensor<1x9x9x32xf32>) -> tensor<1x9x9x32xf32>
  return %r : tensor<1x9x9x32xf32>
}

// The blocked channel layout [N, C/16, H, W, 16]: each lane is a
// channel, the padding on the pixels.
#in = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2 + d4, d3 + d5, d6)>
#filter = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d6)>
func.func @dw_blocked_padded(%x: tensor<1x3x7x7x16xf32>, %w: tensor<3x3x3x16xf32>) -> tensor<1x3x7x7x16xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1, 0] high[0, 0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %zero : f32
  } : tensor<1x3x7x7x16xf32> to tensor<1x3x9x9x16xf32>
  %e = tensor.empty() : tensor<1x3x7x7x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x7x7x16xf32>) -> tensor<1x3x7x7x16xf32>
  %r = linalg.generic {indexing_maps = [#in, #filter, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
       ins(%p, %w : tensor<1x3x9x9x16xf32>, tensor<3x3x3x16xf32>) outs(%f : tensor<1x3x7x7x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x3x7x7x16xf32>
  return %r : tensor<1x3x7x7x16xf32>
}
