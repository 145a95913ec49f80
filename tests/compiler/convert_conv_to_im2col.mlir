// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-convert-conv-to-im2col))' --split-input-file | FileCheck %s

// A 3x3 NCHW convolution becomes a gather of the 3x3 patches of every
// output pixel ([N, C, 3, 3, Oh, Ow]: every index a sum of loops, no
// division), viewed as [N, C*9, Oh*Ow], and a product with the filter viewed as [F, C*9] whose
// lanes run over all pixels of a channel, into the convolution's
// accumulator viewed as [N, F, Oh*Ow].
// CHECK-DAG:   #[[GATHER:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 + d5)>
// CHECK-DAG:   #[[W_MAP:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG:   #[[X_MAP:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG:   #[[O_MAP:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @conv3x3
// CHECK-DAG:   %[[COL:.+]] = linalg.generic {indexing_maps = [#[[GATHER]], {{.+}} ins(%arg0 : tensor<1x8x34x34xf32>) outs(%{{.+}} : tensor<1x8x3x3x32x32xf32>)
// CHECK-DAG:   %[[FLAT:.+]] = tensor.collapse_shape %[[COL]] {{\[}}[0], [1, 2, 3], [4, 5]] : tensor<1x8x3x3x32x32xf32> into tensor<1x72x1024xf32>
// CHECK-DAG:   %[[W:.+]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : tensor<16x8x3x3xf32> into tensor<16x72xf32>
// CHECK-DAG:   %[[ACC:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<1x16x1024xf32>)
// CHECK:       %[[MM:.+]] = linalg.generic {indexing_maps = [#[[W_MAP]], #[[X_MAP]], #[[O_MAP]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[W]], %[[FLAT]] : tensor<16x72xf32>, tensor<1x72x1024xf32>) outs(%[[ACC]] : tensor<1x16x1024xf32>)
// CHECK:       %[[OUT:.+]] = tensor.expand_shape %[[MM]] {{\[}}[0], [1], [2, 3]] output_shape [1, 16, 32, 32]
// CHECK:       return %[[OUT]]
func.func @conv3x3(%x: tensor<1x8x34x34xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<1x16x32x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x32x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x32x32xf32>) -> tensor<1x16x32x32xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x34x34xf32>, tensor<16x8x3x3xf32>) outs(%f : tensor<1x16x32x32xf32>) -> tensor<1x16x32x32xf32>
  return %r : tensor<1x16x32x32xf32>
}

// -----

// The bias and activation after the product run on the flattened pixels
// too: the expand_shape moves below them, so they can join the product's
// dispatch as its epilogue. A residual operand is viewed flattened.
#nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>
// CHECK-LABEL: func.func @conv_bias_residual_relu
// CHECK:       %[[MM:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<1x16x64xf32>) attrs = {strata.op_kind = "conv2d"}
// CHECK:       %[[RES:.+]] = tensor.collapse_shape %arg3 {{\[}}[0], [1], [2, 3]] : tensor<1x16x8x8xf32> into tensor<1x16x64xf32>
// CHECK:       %[[EPI:.+]] = linalg.generic {{.+}} ins(%[[MM]], %arg2, %[[RES]] : tensor<1x16x64xf32>, tensor<16xf32>, tensor<1x16x64xf32>)
// CHECK:       %[[OUT:.+]] = tensor.expand_shape %[[EPI]] {{\[}}[0], [1], [2, 3]] output_shape [1, 16, 8, 8]
// CHECK:       return %[[OUT]]
func.func @conv_bias_residual_relu(%x: tensor<1x8x10x10xf32>, %w: tensor<16x8x3x3xf32>, %b: tensor<16xf32>, %r: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x10x10xf32>, tensor<16x8x3x3xf32>) outs(%f : tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %y = linalg.generic {indexing_maps = [#nchw, #chan, #nchw, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %b, %r : tensor<1x16x8x8xf32>, tensor<16xf32>, tensor<1x16x8x8xf32>) outs(%e : tensor<1x16x8x8xf32>) {
  ^bb0(%in: f32, %bias: f32, %res: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %t = arith.addf %s, %res : f32
    %m = arith.maximumf %t, %z : f32
    linalg.yield %m : f32
  } -> tensor<1x16x8x8xf32>
  return %y : tensor<1x16x8x8xf32>
}

// -----

// A 1x1 convolution with unit strides needs no patch matrix: the input is
// multiplied directly.
// CHECK-LABEL: func.func @conv1x1
// CHECK-DAG:   %[[W:.+]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : tensor<16x8x1x1xf32> into tensor<16x8xf32>
// CHECK-DAG:   %[[X:.+]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<1x8x40x40xf32> into tensor<1x8x1600xf32>
// CHECK:       %[[MM:.+]] = linalg.generic {{.+}} ins(%[[W]], %[[X]] : tensor<16x8xf32>, tensor<1x8x1600xf32>) outs(%{{.+}} : tensor<1x16x1600xf32>)
// CHECK-NOT:   linalg.conv_2d_nchw_fchw
func.func @conv1x1(%x: tensor<1x8x40x40xf32>, %w: tensor<16x8x1x1xf32>) -> tensor<1x16x40x40xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x40x40xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x40x40xf32>) -> tensor<1x16x40x40xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x40x40xf32>, tensor<16x8x1x1xf32>) outs(%f : tensor<1x16x40x40xf32>) -> tensor<1x16x40x40xf32>
  return %r : tensor<1x16x40x40xf32>
}

// -----

// A strided 1x1 convolution gathers every other pixel into its patch
// matrix.
// CHECK-LABEL: func.func @conv1x1_strided
// CHECK:       linalg.generic {{.+}} ins(%arg0 : tensor<1x8x10x10xf32>) outs(%{{.+}} : tensor<1x8x1x1x5x5xf32>)
// CHECK:       linalg.generic {{.+}} outs(%{{.+}} : tensor<1x16x25xf32>)
// CHECK-NOT:   linalg.conv_2d_nchw_fchw
func.func @conv1x1_strided(%x: tensor<1x8x10x10xf32>, %w: tensor<16x8x1x1xf32>) -> tensor<1x16x5x5xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x5x5xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x8x10x10xf32>, tensor<16x8x1x1xf32>) outs(%f : tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32>
  return %r : tensor<1x16x5x5xf32>
}

// -----

// A grouped convolution with stride 2 (two groups of 8 channels, too few to
// block): the patches of each group, [N, G, C, Kh, Kw, Oh, Ow], and one
// product per group over the collapsed [G, F, C*Kh*Kw] filter; the ReLU
// after it joins the product on the collapsed [N, G, F, Oh*Ow] output.
// CHECK-DAG:   #[[GATHER:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d5 * 2 + d3, d6 * 2 + d4)>
// CHECK-DAG:   #[[W:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d4)>
// CHECK-DAG:   #[[X:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-DAG:   #[[O:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @grouped_strided
// CHECK:       %[[P:.+]] = linalg.generic {indexing_maps = [#[[GATHER]], {{.+}}]{{.*}} outs(%{{.+}} : tensor<1x2x8x3x3x4x4xf32>) attrs = {strata.op_kind = "im2col"}
// CHECK:       %[[PM:.+]] = tensor.collapse_shape %[[P]] {{\[}}[0], [1], [2, 3, 4], [5, 6]] : tensor<1x2x8x3x3x4x4xf32> into tensor<1x2x72x16xf32>
// CHECK:       %[[WM:.+]] = tensor.collapse_shape %arg1 {{\[}}[0], [1], [2, 3, 4]] : tensor<2x8x8x3x3xf32> into tensor<2x8x72xf32>
// CHECK:       %[[PROD:.+]] = linalg.generic {indexing_maps = [#[[W]], #[[X]], #[[O]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[WM]], %[[PM]] : tensor<2x8x72xf32>, tensor<1x2x72x16xf32>)
// CHECK-SAME:  attrs = {strata.op_kind = "conv2d"}
// CHECK:       %[[RELU:.+]] = linalg.generic {{.+}} ins(%[[PROD]] : tensor<1x2x8x16xf32>)
// CHECK:       tensor.expand_shape %[[RELU]] {{\[}}[0], [1], [2], [3, 4]]
func.func @grouped_strided(%x: tensor<1x2x8x9x9xf32>, %w: tensor<2x8x8x3x3xf32>) -> tensor<1x2x8x4x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x8x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x2x8x4x4xf32>) -> tensor<1x2x8x4x4xf32>
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x2x8x9x9xf32>, tensor<2x8x8x3x3xf32>) outs(%f : tensor<1x2x8x4x4xf32>) -> tensor<1x2x8x4x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x2x8x4x4xf32>) outs(%e : tensor<1x2x8x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<1x2x8x4x4xf32>
  return %r : tensor<1x2x8x4x4xf32>
}

// -----

// The same over a dynamic batch: the patches and the product take the batch
// from the convolution's result, and the expansion back keeps it.
// CHECK-LABEL: func.func @dynamic_batch_grouped_strided
// CHECK:       %[[P:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<?x2x8x3x3x4x4xf32>) attrs = {strata.op_kind = "im2col"}
// CHECK:       %[[PM:.+]] = tensor.collapse_shape %[[P]] {{\[}}[0], [1], [2, 3, 4], [5, 6]] : tensor<?x2x8x3x3x4x4xf32> into tensor<?x2x72x16xf32>
// CHECK:       %[[PROD:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %[[PM]] : tensor<2x8x72xf32>, tensor<?x2x72x16xf32>)
// CHECK-SAME:  attrs = {strata.op_kind = "conv2d"}
// CHECK:       tensor.expand_shape %[[PROD]] {{\[}}[0], [1], [2], [3, 4]] output_shape [%{{.+}}, 2, 8, 4, 4]
func.func @dynamic_batch_grouped_strided(%x: tensor<?x2x8x9x9xf32>, %w: tensor<2x8x8x3x3xf32>) -> tensor<?x2x8x4x4xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x2x8x9x9xf32>
  %e = tensor.empty(%n) : tensor<?x2x8x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x2x8x4x4xf32>) -> tensor<?x2x8x4x4xf32>
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<?x2x8x9x9xf32>, tensor<2x8x8x3x3xf32>) outs(%f : tensor<?x2x8x4x4xf32>) -> tensor<?x2x8x4x4xf32>
  return %c : tensor<?x2x8x4x4xf32>
}

// -----

// A grouped convolution with unit strides and dilations keeps its own
// kernel (its lanes run along output rows): not rewritten.
// CHECK-LABEL: func.func @grouped_unit_stride
// CHECK:       linalg.conv_2d_ngchw_gfchw
// CHECK-NOT:   im2col
func.func @grouped_unit_stride(%x: tensor<1x2x8x6x6xf32>, %w: tensor<2x8x8x3x3xf32>, %o: tensor<1x2x8x4x4xf32>) -> tensor<1x2x8x4x4xf32> {
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x8x6x6xf32>, tensor<2x8x8x3x3xf32>) outs(%o : tensor<1x2x8x4x4xf32>) -> tensor<1x2x8x4x4xf32>
  return %c : tensor<1x2x8x4x4xf32>
}

// -----

// A Linear on an NHWC map: the matmul over [H*W, K] rows is expanded back
// to the map's shape before its bias and GELU-like activation; those move
// above the expansion, onto the [H*W, N] product, so that they become its
// epilogue.
// CHECK-LABEL: func.func @matmul_epilogue_below_expansion
// CHECK:       %[[MM:.+]] = linalg.matmul
// CHECK:       %[[ACT:.+]] = linalg.generic {{.+}} ins(%[[MM]], %{{.+}} : tensor<16x32xf32>, tensor<32xf32>) outs(%{{.+}} : tensor<16x32xf32>)
// CHECK:       tensor.expand_shape %[[ACT]] {{\[}}[0, 1, 2], [3]] output_shape [1, 4, 4, 32]
func.func @matmul_epilogue_below_expansion(%x: tensor<16x8xf32>, %w: tensor<8x32xf32>, %b: tensor<32xf32>) -> tensor<1x4x4x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<16x8xf32>, tensor<8x32xf32>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  %map = tensor.expand_shape %mm [[0, 1, 2], [3]] output_shape [1, 4, 4, 32] : tensor<16x32xf32> into tensor<1x4x4x32xf32>
  %e4 = tensor.empty() : tensor<1x4x4x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%map, %b : tensor<1x4x4x32xf32>, tensor<32xf32>) outs(%e4 : tensor<1x4x4x32xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    %t = math.erf %s : f32
    %u = arith.mulf %s, %t : f32
    linalg.yield %u : f32
  } -> tensor<1x4x4x32xf32>
  return %r : tensor<1x4x4x32xf32>
}

// -----

// A convolution over a dynamic batch and image: the patches are sized from
// the output's dims, and the product's result is expanded back with them.
// CHECK-LABEL: func.func @dynamic_image
// CHECK-SAME:    %[[X:[^:]+]]: tensor<?x3x?x?xf32>
// CHECK:         %[[N:.+]] = tensor.dim %[[OUT:.+]], %c0
// CHECK:         %[[OH:.+]] = tensor.dim %[[OUT]], %c2
// CHECK:         %[[OW:.+]] = tensor.dim %[[OUT]], %c3
// CHECK:         %[[E:.+]] = tensor.empty(%[[N]], %[[OH]], %[[OW]]) : tensor<?x3x3x3x?x?xf32>
// CHECK:         linalg.generic {{.+}} ins(%[[X]] : tensor<?x3x?x?xf32>) outs(%[[E]] : tensor<?x3x3x3x?x?xf32>)
// CHECK:         tensor.collapse_shape {{.+}} into tensor<?x27x?xf32>
// CHECK:         %[[P:.+]] = linalg.generic
// CHECK:         tensor.expand_shape %[[P]] {{\[}}[0], [1], [2, 3]] output_shape [%{{.+}}, 8, %{{.+}}, %{{.+}}] : tensor<?x8x?xf32> into tensor<?x8x?x?xf32>
func.func @dynamic_image(%x: tensor<?x3x?x?xf32>, %w: tensor<8x3x3x3xf32>, %init: tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) outs(%init : tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  return %r : tensor<?x8x?x?xf32>
}

// -----

// Over a dynamic batch, which the flattening leaves alone, the bias and
// activation move above the expansion as over static shapes (and join the
// product's dispatch); only a dynamic dim among those flattened together
// keeps the expansion in place (@dynamic_image).
#nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>
// CHECK-LABEL: func.func @dynamic_batch_conv1x1_bias_relu
// CHECK:       %[[MM:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<?x16x64xf32>) attrs = {strata.op_kind = "conv2d"}
// CHECK:       %[[EPI:.+]] = linalg.generic {{.+}} ins(%[[MM]], %arg2 : tensor<?x16x64xf32>, tensor<16xf32>)
// CHECK:       %[[OUT:.+]] = tensor.expand_shape %[[EPI]] {{\[}}[0], [1], [2, 3]] output_shape [%{{.+}}, 16, 8, 8]
// CHECK:       return %[[OUT]]
func.func @dynamic_batch_conv1x1_bias_relu(%x: tensor<?x8x8x8xf32>, %w: tensor<16x8x1x1xf32>, %b: tensor<16xf32>) -> tensor<?x16x8x8xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8x8x8xf32>
  %e = tensor.empty(%n) : tensor<?x16x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x16x8x8xf32>) -> tensor<?x16x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<?x8x8x8xf32>, tensor<16x8x1x1xf32>) outs(%f : tensor<?x16x8x8xf32>) -> tensor<?x16x8x8xf32>
  %y = linalg.generic {indexing_maps = [#nchw, #chan, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %b : tensor<?x16x8x8xf32>, tensor<16xf32>) outs(%e : tensor<?x16x8x8xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %m = arith.maximumf %s, %z : f32
    linalg.yield %m : f32
  } -> tensor<?x16x8x8xf32>
  return %y : tensor<?x16x8x8xf32>
}
