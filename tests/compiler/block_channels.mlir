// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-block-channels{block=4}))' --split-input-file | FileCheck %s

// A chain of two convolutions with a bias and ReLU between them: both
// convolutions, the bias and the ReLU run blocked (the bias and the
// filters packed at compile time), and only the result is unpacked. The
// filters' tiles are [.., ci, fi]: the output channels, the vector lanes,
// innermost. The first convolution broadcasts its input's elements one at
// a time, so it reads the NCHW input through a reshape into channel blocks,
// [N, C/4, 4, H, W], with no relayout; the second reads the blocked
// [N, C/4, H, W, 4] and, the graph's result being NCHW, writes its output
// channels split the same way, [N, C/4, 4, H, W]: no relayout there either.
// CHECK-DAG:   #[[XN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d8, d2 + d5, d3 + d6)>
// CHECK-DAG:   #[[YN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d7, d2, d3)>
// CHECK-DAG:   #[[X:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d2 + d5, d3 + d6, d8)>
// CHECK-DAG:   #[[W:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d4, d5, d6, d8, d7)>
// CHECK-DAG:   #[[Y:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d7)>
// CHECK-LABEL: func.func @chain
// CHECK-DAG:     %[[W2:.+]] = arith.constant dense<"0x{{.+}}"> : tensor<2x2x1x3x4x4xf32>
// CHECK-DAG:     %[[BIAS:.+]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]]> : tensor<2x4xf32>
// CHECK-DAG:     %[[W1:.+]] = arith.constant dense<5.000000e-01> : tensor<2x2x1x1x4x4xf32>
// CHECK:         %[[EXP:.+]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 4, 10, 10]
// CHECK-NOT:     linalg.transpose ins(%[[EXP]]
// CHECK:         %[[C1:.+]] = linalg.generic {indexing_maps = [#[[XN]], #[[W]], #[[Y]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]} ins(%[[EXP]], %[[W1]] : {{.+}}) {{.+}} attrs = {strata.op_kind = "conv2d"}
// CHECK:         %[[R:.+]] = linalg.generic {{.+}} ins(%[[C1]], %[[BIAS]] : tensor<1x2x10x10x4xf32>, tensor<2x4xf32>)
// CHECK:           arith.maximumf
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[F2:.+]] = linalg.fill {{.+}} -> tensor<1x2x4x10x8xf32>
// CHECK:         %[[C2:.+]] = linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[YN]]]{{.+}} ins(%[[R]], %[[W2]] : {{.+}}) outs(%[[F2]] : tensor<1x2x4x10x8xf32>) attrs = {strata.op_kind = "conv2d"}
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[Y:.+]] = tensor.collapse_shape %[[C2]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x4x10x8xf32> into tensor<1x8x10x8xf32>
// CHECK:         return %[[Y]]
func.func @chain(%x: tensor<1x8x10x10xf32>) -> tensor<1x8x10x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x8x1x1xf32>
  %w2 = arith.constant dense<[[[[0.0, 0.25, 0.5]], [[0.75, 1.0, 1.25]], [[1.5, 1.75, 2.0]], [[2.25, 2.5, 2.75]], [[3.0, 3.25, 3.5]], [[3.75, 4.0, 4.25]], [[4.5, 4.75, 5.0]], [[5.25, 5.5, 5.75]]], [[[6.0, 6.25, 6.5]], [[6.75, 7.0, 7.25]], [[7.5, 7.75, 8.0]], [[8.25, 8.5, 8.75]], [[9.0, 9.25, 9.5]], [[9.75, 10.0, 10.25]], [[10.5, 10.75, 11.0]], [[11.25, 11.5, 11.75]]], [[[12.0, 12.25, 12.5]], [[12.75, 13.0, 13.25]], [[13.5, 13.75, 14.0]], [[14.25, 14.5, 14.75]], [[15.0, 15.25, 15.5]], [[15.75, 16.0, 16.25]], [[16.5, 16.75, 17.0]], [[17.25, 17.5, 17.75]]], [[[18.0, 18.25, 18.5]], [[18.75, 19.0, 19.25]], [[19.5, 19.75, 20.0]], [[20.25, 20.5, 20.75]], [[21.0, 21.25, 21.5]], [[21.75, 22.0, 22.25]], [[22.5, 22.75, 23.0]], [[23.25, 23.5, 23.75]]], [[[24.0, 24.25, 24.5]], [[24.75, 25.0, 25.25]], [[25.5, 25.75, 26.0]], [[26.25, 26.5, 26.75]], [[27.0, 27.25, 27.5]], [[27.75, 28.0, 28.25]], [[28.5, 28.75, 29.0]], [[29.25, 29.5, 29.75]]], [[[30.0, 30.25, 30.5]], [[30.75, 31.0, 31.25]], [[31.5, 31.75, 32.0]], [[32.25, 32.5, 32.75]], [[33.0, 33.25, 33.5]], [[33.75, 34.0, 34.25]], [[34.5, 34.75, 35.0]], [[35.25, 35.5, 35.75]]], [[[36.0, 36.25, 36.5]], [[36.75, 37.0, 37.25]], [[37.5, 37.75, 38.0]], [[38.25, 38.5, 38.75]], [[39.0, 39.25, 39.5]], [[39.75, 40.0, 40.25]], [[40.5, 40.75, 41.0]], [[41.25, 41.5, 41.75]]], [[[42.0, 42.25, 42.5]], [[42.75, 43.0, 43.25]], [[43.5, 43.75, 44.0]], [[44.25, 44.5, 44.75]], [[45.0, 45.25, 45.5]], [[45.75, 46.0, 46.25]], [[46.5, 46.75, 47.0]], [[47.25, 47.5, 47.75]]]]> : tensor<8x8x1x3xf32>
  %bias = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x10x10xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x10x10xf32>) -> tensor<1x8x10x10xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w1 : tensor<1x8x10x10xf32>, tensor<8x8x1x1xf32>) outs(%f : tensor<1x8x10x10xf32>) -> tensor<1x8x10x10xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1, %bias : tensor<1x8x10x10xf32>, tensor<8xf32>) outs(%e : tensor<1x8x10x10xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %m = arith.maximumf %s, %z : f32
    linalg.yield %m : f32
  } -> tensor<1x8x10x10xf32>
  %e2 = tensor.empty() : tensor<1x8x10x8xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<1x8x10x8xf32>) -> tensor<1x8x10x8xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%r, %w2 : tensor<1x8x10x10xf32>, tensor<8x8x1x3xf32>) outs(%f2 : tensor<1x8x10x8xf32>) -> tensor<1x8x10x8xf32>
  return %c2 : tensor<1x8x10x8xf32>
}

// -----

// The packed filter holds w[fo * 4 + fi, co * 4 + ci] at [fo, co, 0, 0, ci, fi].
// CHECK-LABEL: func.func @packed_filter_values
// CHECK:         arith.constant dense<{{\[\[\[\[\[\[}}0.000000e+00, 1.000000e+01, 2.000000e+01, 3.000000e+01], [1.000000e+00, 1.100000e+01, 2.100000e+01, 3.100000e+01], [2.000000e+00, 1.200000e+01, 2.200000e+01, 3.200000e+01], [3.000000e+00, 1.300000e+01, 2.300000e+01, 3.300000e+01]]]]]]> : tensor<1x1x1x1x4x4xf32>
func.func @packed_filter_values(%x: tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  %w = arith.constant dense<[[[[0.0]], [[1.0]], [[2.0]], [[3.0]]], [[[10.0]], [[11.0]], [[12.0]], [[13.0]]], [[[20.0]], [[21.0]], [[22.0]], [[23.0]]], [[[30.0]], [[31.0]], [[32.0]], [[33.0]]]]> : tensor<4x4x1x1xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x5x5xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>) outs(%f : tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %d = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c, %w : tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>) outs(%f : tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  return %d : tensor<1x4x5x5xf32>
}

// -----

// Three input channels do not divide by 4: the input stays NCHW, the
// output channels are blocked (a network's first layer, here followed by
// a 1x1 convolution).
// CHECK-DAG:   #[[X:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d4, d2 * 2 + d5, d3 * 2 + d6)>
// CHECK-DAG:   #[[W:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d4, d5, d6, d7)>
// CHECK-LABEL: func.func @stem_input_unblocked
// CHECK:         %[[WB:.+]] = linalg.transpose ins(%{{.+}} : tensor<1x4x3x3x3xf32>) outs(%{{.+}} : tensor<1x3x3x3x4xf32>) permutation = [0, 2, 3, 4, 1]
// CHECK:         linalg.generic {indexing_maps = [#[[X]], #[[W]], {{.+}}]{{.+}} ins(%arg0, %[[WB]] : tensor<1x3x9x9xf32>, tensor<1x3x3x3x4xf32>) outs(%{{.+}} : tensor<1x1x4x4x4xf32>)
func.func @stem_input_unblocked(%x: tensor<1x3x9x9xf32>, %w: tensor<4x3x3x3xf32>, %w2: tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %d = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c, %w2 : tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %d : tensor<1x4x4x4xf32>
}

// -----

// Six output channels do not divide by 4: the convolution is left alone.
// CHECK-LABEL: func.func @channels_not_divisible
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.conv_2d_nchw_fchw
func.func @channels_not_divisible(%x: tensor<1x4x5x5xf32>, %w: tensor<6x4x1x1xf32>) -> tensor<1x6x5x5xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x6x5x5xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x5x5xf32>, tensor<6x4x1x1xf32>) outs(%f : tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
  return %c : tensor<1x6x5x5xf32>
}

// -----

// A max pool between a depthwise convolution and a convolution is blocked
// too, and the pad before it pads the blocked value's pixels.
// CHECK-DAG:   #[[DW_X:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d1 + d4, d2 + d5, d6)>
// CHECK-DAG:   #[[DW_W:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>
// CHECK-DAG:   #[[POOL_X:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5, d6)>
// CHECK-LABEL: func.func @depthwise_then_max_pool
// CHECK:         %[[DW:.+]] = linalg.generic {indexing_maps = [#[[DW_X]], #[[DW_W]], {{.+}}]{{.+}} outs(%{{.+}} : tensor<1x2x4x4x4xf32>) attrs = {strata.op_kind = "depthwise_conv2d"}
// CHECK:         %[[PAD:.+]] = tensor.pad %[[DW]] low[0, 0, 1, 1, 0] high[0, 0, 1, 1, 0]
// CHECK:         %[[POOL:.+]] = linalg.generic {indexing_maps = [#[[POOL_X]], {{.+}}]{{.+}} ins(%[[PAD]], %{{.+}} : tensor<1x2x6x6x4xf32>, tensor<3x3xf32>) outs(%{{.+}} : tensor<1x2x2x2x4xf32>) attrs = {strata.op_kind = "maxpool"}
// CHECK-NOT:     linalg.transpose ins(%[[POOL]]
// CHECK:         linalg.generic {{.+}} ins(%[[POOL]], %{{.+}} attrs = {strata.op_kind = "conv2d"}
func.func @depthwise_then_max_pool(%x: tensor<1x8x6x6xf32>, %w: tensor<8x3x3xf32>, %w2: tensor<8x8x1x1xf32>) -> tensor<1x8x2x2xf32> {
  %z = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %d = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x6x6xf32>, tensor<8x3x3xf32>) outs(%f : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %p = tensor.pad %d low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<1x8x4x4xf32> to tensor<1x8x6x6xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e2 = tensor.empty() : tensor<1x8x2x2xf32>
  %f2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<1x8x2x2xf32>) -> tensor<1x8x2x2xf32>
  %m = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %win : tensor<1x8x6x6xf32>, tensor<3x3xf32>) outs(%f2 : tensor<1x8x2x2xf32>) -> tensor<1x8x2x2xf32>
  %z2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<1x8x2x2xf32>) -> tensor<1x8x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%m, %w2 : tensor<1x8x2x2xf32>, tensor<8x8x1x1xf32>) outs(%z2 : tensor<1x8x2x2xf32>) -> tensor<1x8x2x2xf32>
  return %c : tensor<1x8x2x2xf32>
}

// -----

// The sum of two blocked convolutions is blocked (both of its inputs come
// from unpacks) and feeds a third; their shared input is read by both
// through one reshape into channel blocks.
// CHECK-LABEL: func.func @residual_add_of_two_convolutions
// CHECK:         %[[XB:.+]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 4, 4, 4]
// CHECK:         %[[A:.+]] = linalg.generic {{.+}} ins(%[[XB]], %{{.+}} attrs = {strata.op_kind = "conv2d"}
// CHECK:         %[[B:.+]] = linalg.generic {{.+}} ins(%[[XB]], %{{.+}} attrs = {strata.op_kind = "conv2d"}
// CHECK:         %[[S:.+]] = linalg.generic {{.+}} ins(%[[A]], %[[B]] : tensor<1x2x4x4x4xf32>, tensor<1x2x4x4x4xf32>)
// CHECK-NOT:     linalg.transpose ins(%[[S]]
// CHECK:         linalg.generic {{.+}} ins(%[[S]], %{{.+}} attrs = {strata.op_kind = "conv2d"}
func.func @residual_add_of_two_convolutions(%x: tensor<1x8x4x4xf32>, %w1: tensor<8x8x1x1xf32>, %w2: tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %a = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w1 : tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) outs(%f : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %b = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w2 : tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) outs(%f : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a, %b : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) outs(%e : tensor<1x8x4x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.addf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<1x8x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%s, %w1 : tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) outs(%f : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %c : tensor<1x8x4x4xf32>
}

// -----

// A lone 1x1 convolution keeps NCHW: the layout changes on both of its
// sides would cost more than the blocked kernel gains (it needs no patch
// matrix in NCHW either).
// CHECK-LABEL: func.func @lone_pointwise_convolution_keeps_nchw
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.conv_2d_nchw_fchw
func.func @lone_pointwise_convolution_keeps_nchw(%x: tensor<1x8x4x4xf32>, %w: tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) outs(%f : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %c : tensor<1x8x4x4xf32>
}

// -----

// A lone 3x3 convolution is blocked: its blocked kernel gains more than
// the layout changes on its two sides cost. (Its filter is relaid out, once
// when it is a constant; it reads its input and writes its output split
// into channel blocks in place.)
// CHECK-LABEL: func.func @lone_spatial_convolution_blocked
// CHECK:         linalg.transpose ins(%{{.+}} : tensor<2x4x2x4x3x3xf32>)
// CHECK:         %[[C:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<1x2x4x4x4xf32>) attrs = {strata.op_kind = "conv2d"}
// CHECK-NOT:     linalg.transpose
// CHECK:         tensor.collapse_shape %[[C]]
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
func.func @lone_spatial_convolution_blocked(%x: tensor<1x8x6x6xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) outs(%f : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %c : tensor<1x8x4x4xf32>
}

// -----

// A lone depthwise convolution is blocked only with a filter of more taps
// than its NCHW kernel unrolls (64): a 9x9 one pays for the two layout
// changes, a 3x3 one keeps NCHW.
// CHECK-LABEL: func.func @lone_depthwise_by_filter_size
// CHECK:         linalg.depthwise_conv_2d_nchw_chw {{.+}} tensor<8x3x3xf32>
// CHECK:         linalg.transpose
// CHECK:         linalg.generic {{.+}} attrs = {strata.op_kind = "depthwise_conv2d"}
// CHECK:         linalg.transpose
// CHECK-NOT:     linalg.depthwise_conv_2d_nchw_chw
func.func @lone_depthwise_by_filter_size(%x3: tensor<1x8x6x6xf32>, %w3: tensor<8x3x3xf32>, %x5: tensor<1x8x12x12xf32>, %w5: tensor<8x9x9xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %d3 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x3, %w3 : tensor<1x8x6x6xf32>, tensor<8x3x3xf32>) outs(%f : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %d5 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x5, %w5 : tensor<1x8x12x12xf32>, tensor<8x9x9xf32>) outs(%f : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %d3, %d5 : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
}

// -----

// A grouped convolution between two convolutions (2 groups of 8 channels,
// imported as [N, G, C/G, H, W] reshapes around conv_2d_ngchw_gfchw): each
// group runs as a blocked convolution on channel blocks of the ungrouped
// tensor, the reshapes move to the blocked values, and the layout changes
// only at the chain's ends.
func.func @grouped_between_convolutions(%x: tensor<1x8x10x10xf32>, %w0: tensor<16x8x1x1xf32>, %w1: tensor<2x8x8x3x3xf32>, %w2: tensor<8x16x1x1xf32>) -> tensor<1x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x16x10x10xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x16x10x10xf32>) -> tensor<1x16x10x10xf32>
  %c0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w0 : tensor<1x8x10x10xf32>, tensor<16x8x1x1xf32>) outs(%f0 : tensor<1x16x10x10xf32>) -> tensor<1x16x10x10xf32>
  %g = tensor.expand_shape %c0 [[0], [1, 2], [3], [4]] output_shape [1, 2, 8, 10, 10] : tensor<1x16x10x10xf32> into tensor<1x2x8x10x10xf32>
  %e1 = tensor.empty() : tensor<1x2x8x8x8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x2x8x8x8xf32>) -> tensor<1x2x8x8x8xf32>
  %c1 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%g, %w1 : tensor<1x2x8x10x10xf32>, tensor<2x8x8x3x3xf32>) outs(%f1 : tensor<1x2x8x8x8xf32>) -> tensor<1x2x8x8x8xf32>
  %u = tensor.collapse_shape %c1 [[0], [1, 2], [3], [4]] : tensor<1x2x8x8x8xf32> into tensor<1x16x8x8xf32>
  %e2 = tensor.empty() : tensor<1x8x8x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%u, %w2 : tensor<1x16x8x8xf32>, tensor<8x16x1x1xf32>) outs(%f2 : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %c2 : tensor<1x8x8x8xf32>
}
// CHECK-LABEL: func.func @grouped_between_convolutions
// CHECK:         %[[C0:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<1x4x10x10x4xf32>)
// CHECK:         %[[G:.+]] = tensor.expand_shape %[[C0]] {{\[}}[0], [1, 2], [3], [4], [5]] output_shape [1, 2, 2, 10, 10, 4]
// CHECK:         %[[C1:.+]] = linalg.generic {{.+}} ins(%[[G]], %{{.+}} : tensor<1x2x2x10x10x4xf32>, tensor<2x2x2x3x3x4x4xf32>)
// CHECK:         %[[U:.+]] = tensor.collapse_shape %[[C1]] {{\[}}[0], [1, 2], [3], [4], [5]] : tensor<1x2x2x8x8x4xf32> into tensor<1x4x8x8x4xf32>
// CHECK:         %[[C2:.+]] = linalg.generic {{.+}} ins(%[[U]], %{{.+}} : tensor<1x4x8x8x4xf32>, {{.+}} outs(%{{.+}} : tensor<1x2x4x8x8xf32>)
// CHECK:         tensor.collapse_shape %[[C2]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x4x8x8xf32> into tensor<1x8x8x8xf32>

// -----

// A fire module: two convolutions of one input concatenated along channels,
// then a max pool and another convolution. The concatenation joins the
// channel blocks ([1, 1, 4, 4, 4] twice into [1, 2, 4, 4, 4]); nothing
// between the convolutions changes layout, and the pool runs blocked.
// CHECK-LABEL: func.func @concat_of_convolutions
// CHECK:         %[[A:.+]] = linalg.generic {{.+}} attrs = {strata.op_kind = "conv2d"}
// CHECK:         %[[B:.+]] = linalg.generic {{.+}} attrs = {strata.op_kind = "conv2d"}
// CHECK:         %[[J:.+]] = tensor.concat dim(1) %[[A]], %[[B]] : (tensor<1x1x4x4x4xf32>, tensor<1x1x4x4x4xf32>) -> tensor<1x2x4x4x4xf32>
// CHECK-NOT:     linalg.transpose ins(%[[J]]
// CHECK:         %[[P:.+]] = linalg.generic {{.+}} ins(%[[J]], %{{.+}} attrs = {strata.op_kind = "maxpool"}
// CHECK:         linalg.generic {{.+}} ins(%[[P]], %{{.+}} attrs = {strata.op_kind = "conv2d"}
func.func @concat_of_convolutions(%x: tensor<1x4x4x4xf32>, %w1: tensor<4x4x1x1xf32>, %w2: tensor<4x4x3x3xf32>, %w3: tensor<8x8x1x1xf32>) -> tensor<1x8x3x3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %a = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w1 : tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %z : f32
  } : tensor<1x4x4x4xf32> to tensor<1x4x6x6xf32>
  %b = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xp, %w2 : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %j = tensor.concat dim(1) %a, %b : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x8x4x4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %pe = tensor.empty() : tensor<1x8x3x3xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  %window = tensor.empty() : tensor<2x2xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%j, %window : tensor<1x8x4x4xf32>, tensor<2x2xf32>) outs(%pf : tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  %cf = linalg.fill ins(%z : f32) outs(%pe : tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w3 : tensor<1x8x3x3xf32>, tensor<8x8x1x1xf32>) outs(%cf : tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  return %c : tensor<1x8x3x3xf32>
}

// -----

// A concatenation whose operands' channels are not whole blocks stays
// NCHW: its blocked operand leaves the blocked layout first (the
// convolution writes NCHW itself).
// CHECK-LABEL: func.func @concat_not_whole_blocks
// CHECK:         %[[A:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<1x1x4x4x4xf32>) attrs = {strata.op_kind = "conv2d"}
// CHECK:         %[[U:.+]] = tensor.collapse_shape %[[A]]
// CHECK:         tensor.concat dim(1) {{.+}} : (tensor<1x4x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x6x4x4xf32>
func.func @concat_not_whole_blocks(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x3x3xf32>, %y: tensor<1x2x4x4xf32>) -> tensor<1x6x4x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %z : f32
  } : tensor<1x4x4x4xf32> to tensor<1x4x6x6xf32>
  %a = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xp, %w : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %j = tensor.concat dim(1) %a, %y : (tensor<1x4x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x6x4x4xf32>
  return %j : tensor<1x6x4x4xf32>
}

// -----

// A lone 3x3 convolution of a padded NCHW argument: blocked, it reads the
// argument through a reshape into channel blocks, padded there (the pad
// joins its dispatch later and is read in place), with no relayout of its
// input; it writes its result split into channel blocks too.
// CHECK-DAG:   #[[XN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d8, d2 + d5, d3 + d6)>
// CHECK-LABEL: func.func @lone_conv_reads_its_argument_unpacked
// CHECK:         %[[EXP:.+]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 4, 8, 8]
// CHECK:         %[[P:.+]] = tensor.pad %[[EXP]] low[0, 0, 0, 1, 1] high[0, 0, 0, 1, 1]
// CHECK:         %[[C:.+]] = linalg.generic {indexing_maps = [#[[XN]], {{.+}}]{{.+}} ins(%[[P]], %{{.+}} : tensor<1x2x4x10x10xf32>, tensor<2x2x3x3x4x4xf32>) {{.+}} attrs = {strata.op_kind = "conv2d"}
// CHECK:         tensor.collapse_shape %[[C]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x4x8x8xf32> into tensor<1x8x8x8xf32>
func.func @lone_conv_reads_its_argument_unpacked(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %z : f32
  } : tensor<1x8x8x8xf32> to tensor<1x8x10x10xf32>
  %e = tensor.empty() : tensor<1x8x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x8x10x10xf32>, tensor<8x8x3x3xf32>) outs(%f : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %c : tensor<1x8x8x8xf32>
}

// -----

// A dynamic batch: blocking splits only the channels, so the chain runs
// blocked as a static one does, the batch an outer dimension of every
// layout, sized from the argument's.
// CHECK-LABEL: func.func @dynamic_batch_chain
// CHECK:         %[[EXP:.+]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2], [3], [4]] output_shape [%{{.+}}, 2, 4, 10, 10] : tensor<?x8x10x10xf32> into tensor<?x2x4x10x10xf32>
// CHECK:         %[[C1:.+]] = linalg.generic {{.+}} ins(%[[EXP]], %{{.+}} : tensor<?x2x4x10x10xf32>, tensor<2x2x1x1x4x4xf32>) outs(%{{.+}} : tensor<?x2x10x10x4xf32>) attrs = {strata.op_kind = "conv2d"}
// CHECK:         %[[R:.+]] = linalg.generic {{.+}} ins(%[[C1]] : tensor<?x2x10x10x4xf32>)
// CHECK:           arith.maximumf
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[C2:.+]] = linalg.generic {{.+}} ins(%[[R]], %{{.+}} : tensor<?x2x10x10x4xf32>, tensor<2x2x3x3x4x4xf32>) outs(%{{.+}} : tensor<?x2x4x8x8xf32>) attrs = {strata.op_kind = "conv2d"}
// CHECK:         %[[Y:.+]] = tensor.collapse_shape %[[C2]] {{\[}}[0], [1, 2], [3], [4]] : tensor<?x2x4x8x8xf32> into tensor<?x8x8x8xf32>
// CHECK:         return %[[Y]]
func.func @dynamic_batch_chain(%x: tensor<?x8x10x10xf32>) -> tensor<?x8x8x8xf32> {
  %c0 = arith.constant 0 : index
  %w1 = arith.constant dense<0.5> : tensor<8x8x1x1xf32>
  %w2 = arith.constant dense<0.25> : tensor<8x8x3x3xf32>
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8x10x10xf32>
  %e = tensor.empty(%n) : tensor<?x8x10x10xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x8x10x10xf32>) -> tensor<?x8x10x10xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w1 : tensor<?x8x10x10xf32>, tensor<8x8x1x1xf32>) outs(%f : tensor<?x8x10x10xf32>) -> tensor<?x8x10x10xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1 : tensor<?x8x10x10xf32>) outs(%e : tensor<?x8x10x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %z : f32
    linalg.yield %m : f32
  } -> tensor<?x8x10x10xf32>
  %e2 = tensor.empty(%n) : tensor<?x8x8x8xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<?x8x8x8xf32>) -> tensor<?x8x8x8xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%r, %w2 : tensor<?x8x10x10xf32>, tensor<8x8x3x3xf32>) outs(%f2 : tensor<?x8x8x8xf32>) -> tensor<?x8x8x8xf32>
  return %c2 : tensor<?x8x8x8xf32>
}

// -----

// A dynamic batch padded and split into groups of 2 channels (resnext's
// 4 per group: not whole blocks) after a blocked 3x3 convolution: the
// grouped convolution stays NCHW, and the unpack stops above the pad
// (upstream's push-down through a pad or reshape of a dynamic shape
// crashes in MLIR 22), where the convolution writes it split itself.
// CHECK-LABEL: func.func @dynamic_batch_unpack_stops_at_pad
// CHECK:         %[[C0:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<?x2x4x10x10xf32>) attrs = {strata.op_kind = "conv2d"}
// CHECK:         %[[U:.+]] = tensor.collapse_shape %[[C0]] {{.+}} into tensor<?x8x10x10xf32>
// CHECK:         %[[P:.+]] = tensor.pad %[[U]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:         %[[G:.+]] = tensor.expand_shape %[[P]] {{.+}} into tensor<?x4x2x12x12xf32>
// CHECK:         linalg.conv_2d_ngchw_gfchw {{.+}} ins(%[[G]], %{{.+}} : tensor<?x4x2x12x12xf32>, tensor<4x2x2x3x3xf32>)
func.func @dynamic_batch_unpack_stops_at_pad(%x: tensor<?x8x12x12xf32>) -> tensor<?x4x2x10x10xf32> {
  %c0 = arith.constant 0 : index
  %w0 = arith.constant dense<0.5> : tensor<8x8x3x3xf32>
  %w1 = arith.constant dense<0.25> : tensor<4x2x2x3x3xf32>
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8x12x12xf32>
  %e0 = tensor.empty(%n) : tensor<?x8x10x10xf32>
  %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<?x8x10x10xf32>) -> tensor<?x8x10x10xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w0 : tensor<?x8x12x12xf32>, tensor<8x8x3x3xf32>) outs(%f0 : tensor<?x8x10x10xf32>) -> tensor<?x8x10x10xf32>
  %p = tensor.pad %c low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %z : f32
  } : tensor<?x8x10x10xf32> to tensor<?x8x12x12xf32>
  %g = tensor.expand_shape %p [[0], [1, 2], [3], [4]] output_shape [%n, 4, 2, 12, 12] : tensor<?x8x12x12xf32> into tensor<?x4x2x12x12xf32>
  %e1 = tensor.empty(%n) : tensor<?x4x2x10x10xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<?x4x2x10x10xf32>) -> tensor<?x4x2x10x10xf32>
  %c1 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%g, %w1 : tensor<?x4x2x12x12xf32>, tensor<4x2x2x3x3xf32>) outs(%f1 : tensor<?x4x2x10x10xf32>) -> tensor<?x4x2x10x10xf32>
  return %c1 : tensor<?x4x2x10x10xf32>
}

// -----

// A global average pool's view of a blocked map over a dynamic batch (the
// channels split into [C, 1, 1], the batch left whole): the unpack moves
// through the reshape and the reduction, which run blocked, and only the
// pooled [N, C, 1, 1] values are unblocked.
// CHECK-LABEL: func.func @dynamic_batch_unpack_through_pool_view
// CHECK:         %[[C:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<?x2x8x8x4xf32>) attrs = {strata.op_kind = "conv2d"}
// CHECK:         %[[V:.+]] = tensor.expand_shape %[[C]] {{.+}} into tensor<?x2x1x1x8x8x4xf32>
// CHECK:         %[[S:.+]] = linalg.generic {{.+}} ins(%[[V]] : tensor<?x2x1x1x8x8x4xf32>) outs(%{{.+}} : tensor<?x2x1x1x4xf32>)
// CHECK:         linalg.transpose ins(%[[S]] : tensor<?x2x1x1x4xf32>)
// CHECK-NOT:     linalg.transpose
// CHECK:         return
func.func @dynamic_batch_unpack_through_pool_view(%x: tensor<?x8x10x10xf32>) -> tensor<?x8x1x1xf32> {
  %c0 = arith.constant 0 : index
  %w = arith.constant dense<0.5> : tensor<8x8x3x3xf32>
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8x10x10xf32>
  %e = tensor.empty(%n) : tensor<?x8x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x8x8x8xf32>) -> tensor<?x8x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<?x8x10x10xf32>, tensor<8x8x3x3xf32>) outs(%f : tensor<?x8x8x8xf32>) -> tensor<?x8x8x8xf32>
  %v = tensor.expand_shape %c [[0], [1, 2, 3], [4], [5]] output_shape [%n, 8, 1, 1, 8, 8] : tensor<?x8x8x8xf32> into tensor<?x8x1x1x8x8xf32>
  %e2 = tensor.empty(%n) : tensor<?x8x1x1xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<?x8x1x1xf32>) -> tensor<?x8x1x1xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%v : tensor<?x8x1x1x8x8xf32>) outs(%f2 : tensor<?x8x1x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<?x8x1x1xf32>
  return %s : tensor<?x8x1x1xf32>
}
