// Convolutions that write NCHW from the blocked channel layout: their
// register tiles' accumulators (a column of 16 output channels per output
// pixel) are transposed in registers and stored as rows of pixels.

// A lone 5x5 stride-2 convolution of 3 channels (a stem), blocked: it
// writes its 32 output channels as [N, 2, 16, H, W] itself. Its 21-pixel
// rows leave a partial register tile of rows.
func.func @conv_nchw_odd_rows(%x: tensor<1x3x47x45xf32>, %w: tensor<32x3x5x5xf32>) -> tensor<1x32x22x21xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x22x21xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x22x21xf32>) -> tensor<1x32x22x21xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %w : tensor<1x3x47x45xf32>, tensor<32x3x5x5xf32>) outs(%f : tensor<1x32x22x21xf32>) -> tensor<1x32x22x21xf32>
  return %r : tensor<1x32x22x21xf32>
}

// A blocked 3x3 convolution, x [N, C/16, 16, H, W] and w [F/16, C/16, KH,
// KW, ci, fi], that accumulates into its argument y [N, F/16, 16, OH, OW]:
// its accumulators are read from y (transposed in registers) as well as
// written to it.
func.func @conv_split_accumulate(%x: tensor<1x1x16x8x12xf32>, %w: tensor<2x1x3x3x16x16xf32>, %y: tensor<1x2x16x6x10xf32>) -> tensor<1x2x16x6x10xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d8, d2 + d5, d3 + d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d4, d5, d6, d8, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d7, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]}
       ins(%x, %w : tensor<1x1x16x8x12xf32>, tensor<2x1x3x3x16x16xf32>) outs(%y : tensor<1x2x16x6x10xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x2x16x6x10xf32>
  return %r : tensor<1x2x16x6x10xf32>
}
