// RUN: strata-opt %s --split-input-file --strata-outline-dispatch-regions --strata-deduplicate-executables | FileCheck %s

// Each dispatch is named after the model ops it holds: the root's kind,
// then the fused ops' kinds, then ':' and the root's node (the first NameLoc
// of its location). Ops from the root's own node (the bias of a Gemm) are
// part of the root. Contractions count 2 FLOP per multiply-add. The names
// sit on every dispatch, so the two Gemms still differ after deduplication
// merged their executables.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>, %w2: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = flow.dispatch.region -> (tensor<4x16xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
    %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32> loc("/fc1/Gemm"("model.onnx":0:0))
    %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%m, %b : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32 loc("/fc1/Gemm"("model.onnx":0:0))
      %t = arith.maximumf %s, %zero : f32 loc("/relu1/Relu"("model.onnx":0:0))
      linalg.yield %t : f32
    } -> tensor<4x16xf32> loc(fused["/relu1/Relu"("model.onnx":0:0), "/fc1/Gemm"("model.onnx":0:0)])
    flow.return %r : tensor<4x16xf32>
  }
  %1 = flow.dispatch.region -> (tensor<4x16xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
    %m = linalg.matmul ins(%x, %w2 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32> loc(callsite("/fc2/Gemm"("model.onnx":0:0) at "caller.mlir":3:4))
    %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%m, %b : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32 loc("/fc2/Gemm"("model.onnx":0:0))
      %t = arith.maximumf %s, %zero : f32 loc("/relu2/Relu"("model.onnx":0:0))
      linalg.yield %t : f32
    } -> tensor<4x16xf32>
    flow.return %r : tensor<4x16xf32>
  }
  return %0, %1 : tensor<4x16xf32>, tensor<4x16xf32>
}
// CHECK-LABEL: flow.executable @main_dispatch_0
// CHECK-SAME:    strata.dispatch_flops = 1024 : i64, strata.dispatch_name = "matmul_relu:/fc1/Gemm"
// CHECK-NOT:   flow.executable @main_dispatch_1
// CHECK:       func.func @main(
// CHECK:         flow.dispatch @main_dispatch_0::@main_dispatch_0{{.*}} {strata.dispatch_flops = 1024 : i64, strata.dispatch_name = "matmul_relu:/fc1/Gemm"}
// CHECK:         flow.dispatch @main_dispatch_0::@main_dispatch_0{{.*}} {strata.dispatch_flops = 1024 : i64, strata.dispatch_name = "matmul_relu:/fc2/Gemm"}

// -----

// Without names, the kinds alone; several scalar ops a model writes as one
// op are named as it: sigmoid is 1 / (1 + exp(-x)), clip a min of a max.
// Only contractions get a FLOP count.
#map = affine_map<(d0) -> (d0)>
func.func @unnamed(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = flow.dispatch.region -> (tensor<8xf32>) {
    %one = arith.constant 1.0 : f32
    %e = tensor.empty() : tensor<8xf32>
    %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%x, %y : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      %n = arith.negf %m : f32
      %p = math.exp %n : f32
      %d = arith.addf %one, %p : f32
      %s = arith.divf %one, %d : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    flow.return %r : tensor<8xf32>
  }
  %1 = flow.dispatch.region -> (tensor<8xf32>) {
    %lo = arith.constant 0.0 : f32
    %hi = arith.constant 6.0 : f32
    %e = tensor.empty() : tensor<8xf32>
    %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %c = arith.maximumf %a, %lo : f32
      %d = arith.minimumf %c, %hi : f32
      %t = math.tanh %d : f32
      linalg.yield %t : f32
    } -> tensor<8xf32>
    flow.return %r : tensor<8xf32>
  }
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}
// CHECK-LABEL: flow.executable @unnamed_dispatch_0
// CHECK-NOT:     strata.dispatch_flops
// CHECK-SAME:    strata.dispatch_name = "mul_sigmoid"
// CHECK-LABEL: flow.executable @unnamed_dispatch_1
// CHECK-NOT:     strata.dispatch_flops
// CHECK-SAME:    strata.dispatch_name = "clip_tanh"

// -----

// Reductions are named after their combiner, convolutions and pooling after
// their family; a convolution counts its multiply-adds, a pooling nothing,
// and dynamic loop bounds leave the count out.
func.func @families(%x: tensor<1x3x8x8xf32>, %f: tensor<4x3x3x3xf32>, %k: tensor<2x2xf32>, %a: tensor<?x8xf32>, %b: tensor<8x4xf32>, %acc: tensor<?x4xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x3x4x4xf32>, tensor<1x3xf32>, tensor<?x4xf32>) {
  %0 = flow.dispatch.region -> (tensor<1x4x6x6xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x4x6x6xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    %c = linalg.conv_2d_nchw_fchw ins(%x, %f : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%z : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("conv"("m.onnx":0:0))
    flow.return %c : tensor<1x4x6x6xf32>
  }
  %1 = flow.dispatch.region -> (tensor<1x3x4x4xf32>) {
    %lowest = arith.constant -3.4e38 : f32
    %e = tensor.empty() : tensor<1x3x4x4xf32>
    %z = linalg.fill ins(%lowest : f32) outs(%e : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
    %p = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %k : tensor<1x3x8x8xf32>, tensor<2x2xf32>) outs(%z : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> loc("pool")
    flow.return %p : tensor<1x3x4x4xf32>
  }
  %2 = flow.dispatch.region -> (tensor<1x3xf32>) {
    %lowest = arith.constant -3.4e38 : f32
    %e = tensor.empty() : tensor<1x3xf32>
    %z = linalg.fill ins(%lowest : f32) outs(%e : tensor<1x3xf32>) -> tensor<1x3xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<1x3x8x8xf32>) outs(%z : tensor<1x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.maximumf %in, %out : f32
      linalg.yield %m : f32
    } -> tensor<1x3xf32> loc("max")
    flow.return %r : tensor<1x3xf32>
  }
  %3 = flow.dispatch.region -> (tensor<?x4xf32>) {
    %m = linalg.matmul ins(%a, %b : tensor<?x8xf32>, tensor<8x4xf32>) outs(%acc : tensor<?x4xf32>) -> tensor<?x4xf32> loc("dynamic")
    flow.return %m : tensor<?x4xf32>
  }
  return %0, %1, %2, %3 : tensor<1x4x6x6xf32>, tensor<1x3x4x4xf32>, tensor<1x3xf32>, tensor<?x4xf32>
}
// 2 * (1 * 4 * 6 * 6) outputs * (3 * 3 * 3) taps = 7776.
// CHECK-LABEL: flow.executable @families_dispatch_0
// CHECK-SAME:    strata.dispatch_flops = 7776 : i64, strata.dispatch_name = "conv2d:conv"
// CHECK-LABEL: flow.executable @families_dispatch_1
// CHECK-NOT:     strata.dispatch_flops
// CHECK-SAME:    strata.dispatch_name = "maxpool:pool"
// CHECK-LABEL: flow.executable @families_dispatch_2
// CHECK-NOT:     strata.dispatch_flops
// CHECK-SAME:    strata.dispatch_name = "reduce_max:max"
// CHECK-LABEL: flow.executable @families_dispatch_3
// CHECK-NOT:     strata.dispatch_flops
// CHECK-SAME:    strata.dispatch_name = "matmul:dynamic"

// -----

// A pad that joined the depthwise convolution reading it comes first in the
// region, but the dispatch is the convolution's: named after it, with its
// FLOP count (2 * 4 * 4 * 4 outputs * 9 taps = 1152).
func.func @pad_joined(%x: tensor<1x4x4x4xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %0 = flow.dispatch.region -> (tensor<1x4x4x4xf32>) {
    %zero = arith.constant 0.0 : f32
    %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %zero : f32
    } : tensor<1x4x4x4xf32> to tensor<1x4x6x6xf32> loc("/dw/Pad")
    %e = tensor.empty() : tensor<1x4x4x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
    %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x4x6x6xf32>, tensor<4x3x3xf32>) outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> loc("/dw/Conv")
    flow.return %c : tensor<1x4x4x4xf32>
  }
  return %0 : tensor<1x4x4x4xf32>
}
// CHECK-LABEL: flow.executable @pad_joined_dispatch_0
// CHECK-SAME:    strata.dispatch_flops = 1152 : i64, strata.dispatch_name = "depthwise_conv2d:/dw/Conv"
