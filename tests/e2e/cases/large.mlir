// Programs big enough to be split over several workgroups, with shapes that
// leave a partial last tile.
func.func @large_elementwise(%a: tensor<301x257xf32>, %b: tensor<301x257xf32>) -> tensor<301x257xf32> {
  %zeros = arith.constant dense<0.0> : tensor<301x257xf32>
  %0 = arith.subf %a, %b : tensor<301x257xf32>
  %1 = arith.mulf %0, %a : tensor<301x257xf32>
  %2 = arith.maximumf %1, %zeros : tensor<301x257xf32>
  return %2 : tensor<301x257xf32>
}

func.func @large_matmul_bias(%x: tensor<97x200xf32>, %w: tensor<200x64xf32>, %b: tensor<64xf32>) -> tensor<97x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<97x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<97x64xf32>) -> tensor<97x64xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<97x200xf32>, tensor<200x64xf32>) outs(%f : tensor<97x64xf32>) -> tensor<97x64xf32>
  %bb = linalg.broadcast ins(%b : tensor<64xf32>) outs(%e : tensor<97x64xf32>) dimensions = [0]
  %r = arith.addf %mm, %bb : tensor<97x64xf32>
  return %r : tensor<97x64xf32>
}

func.func @large_softmax(%x: tensor<130x257xf32>) -> tensor<130x257xf32> {
  %e = tensor.empty() : tensor<130x257xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<130x257xf32>) outs(%e : tensor<130x257xf32>) -> tensor<130x257xf32>
  return %r : tensor<130x257xf32>
}

func.func @large_conv(%x: tensor<1x34x34x8xf32>, %w: tensor<3x3x8x16xf32>) -> tensor<1x32x32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x32x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x32x16xf32>) -> tensor<1x32x32x16xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x34x34x8xf32>, tensor<3x3x8x16xf32>) outs(%f : tensor<1x32x32x16xf32>) -> tensor<1x32x32x16xf32>
  %zeros = arith.constant dense<0.0> : tensor<1x32x32x16xf32>
  %relu = arith.maximumf %r, %zeros : tensor<1x32x32x16xf32>
  return %relu : tensor<1x32x32x16xf32>
}

// NCHW convolutions large enough to be split over workgroups, as im2col +
// matrix product: 3x3 stride 1 with 28x28 outputs (784 pixels, a tile
// count that does not divide into whole rows), and 3x3 stride 2 over 512
// input channels (4608 patch rows).
func.func @large_conv_nchw(%x: tensor<1x64x30x30xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<1x64x28x28xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x28x28xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x28x28xf32>) -> tensor<1x64x28x28xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x64x30x30xf32>, tensor<64x64x3x3xf32>) outs(%f : tensor<1x64x28x28xf32>) -> tensor<1x64x28x28xf32>
  return %r : tensor<1x64x28x28xf32>
}

func.func @large_conv_nchw_strided(%x: tensor<1x512x9x9xf32>, %w: tensor<96x512x3x3xf32>) -> tensor<1x96x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x96x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x96x4x4xf32>) -> tensor<1x96x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %w : tensor<1x512x9x9xf32>, tensor<96x512x3x3xf32>) outs(%f : tensor<1x96x4x4xf32>) -> tensor<1x96x4x4xf32>
  return %r : tensor<1x96x4x4xf32>
}

// A pointwise (1x1) NCHW convolution: a product over the 196 flattened
// pixels.
func.func @large_conv_pointwise(%x: tensor<1x96x14x14xf32>, %w: tensor<144x96x1x1xf32>) -> tensor<1x144x14x14xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x144x14x14xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x144x14x14xf32>) -> tensor<1x144x14x14xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x96x14x14xf32>, tensor<144x96x1x1xf32>) outs(%f : tensor<1x144x14x14xf32>) -> tensor<1x144x14x14xf32>
  return %r : tensor<1x144x14x14xf32>
}
