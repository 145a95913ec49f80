// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-form-dispatch-regions))' --split-input-file | FileCheck %s

// A matmul with its bias-add + relu epilogue is one dispatch; the fill and
// the empty tensor are cloned into it.
#map = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @matmul_bias_relu
func.func @matmul_bias_relu(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
// CHECK:      %[[R:.+]] = flow.dispatch.region -> (tensor<4x16xf32>) {
// CHECK-DAG:    tensor.empty() : tensor<4x16xf32>
// CHECK-DAG:    linalg.fill
// CHECK:        %[[MM:.+]] = linalg.matmul
// CHECK:        %[[G:.+]] = linalg.generic {{.*}} ins(%[[MM]], %{{.*}} : tensor<4x16xf32>, tensor<16xf32>)
// CHECK:        flow.return %[[G]] : tensor<4x16xf32>
// CHECK-NEXT: }
// CHECK-NOT:  flow.dispatch.region
// CHECK:      return %[[R]]

// -----

// Two matmuls in a chain are two dispatches: a region takes at most one
// non-elementwise op.
// CHECK-LABEL: func.func @two_matmuls
func.func @two_matmuls(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = linalg.matmul ins(%0, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}
// CHECK:     %[[FIRST:.+]] = flow.dispatch.region
// CHECK:       linalg.matmul
// CHECK:     %[[SECOND:.+]] = flow.dispatch.region
// CHECK:       linalg.matmul ins(%[[FIRST]],
// CHECK:     return %[[SECOND]]

// -----

// An elementwise op whose result is also returned stays its own dispatch.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @shared_producer
func.func @shared_producer(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%0 : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}
// CHECK: %[[NEG:.+]] = flow.dispatch.region
// CHECK:   arith.negf
// CHECK: %[[SQ:.+]] = flow.dispatch.region
// CHECK:   linalg.generic {{.*}} ins(%[[NEG]] :
// CHECK: return %[[NEG]], %[[SQ]]

// -----

// A scalar constant used only inside a generic's body is cloned in too, so
// nothing but tensors crosses the region boundary.
#id1 = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @nested_constant
func.func @nested_constant(%a: tensor<8xf64>) -> tensor<8xf64> {
  %half = arith.constant 0.5 : f64
  %e = tensor.empty() : tensor<8xf64>
  %0 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%a : tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%x: f64, %o: f64):
    %m = arith.mulf %x, %half : f64
    linalg.yield %m : f64
  } -> tensor<8xf64>
  return %0 : tensor<8xf64>
}
// CHECK:      flow.dispatch.region
// CHECK-DAG:    %[[HALF:.+]] = arith.constant 5.000000e-01 : f64
// CHECK:        linalg.generic
// CHECK:          arith.mulf %{{.+}}, %[[HALF]] : f64

// -----

// A sequential computation (loops over scalars in an scf.execute_region
// that yields a tensor) is a dispatch of its own; the splat it starts from
// is cloned in, the tensor it reads is passed in.
// CHECK-LABEL: func.func @sequential_region
func.func @sequential_region(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = scf.execute_region -> tensor<8xf32> no_inline {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %init = arith.constant dense<0.0> : tensor<8xf32>
    %acc0 = arith.constant 0.0 : f32
    %loop:2 = scf.for %i = %c0 to %c8 step %c1 iter_args(%t = %init, %acc = %acc0) -> (tensor<8xf32>, f32) {
      %v = tensor.extract %x[%i] : tensor<8xf32>
      %s = arith.addf %acc, %v : f32
      %u = tensor.insert %s into %t[%i] : tensor<8xf32>
      scf.yield %u, %s : tensor<8xf32>, f32
    }
    scf.yield %loop#0 : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
// CHECK:      %[[R:.+]] = flow.dispatch.region -> (tensor<8xf32>) {
// CHECK:        %[[E:.+]] = scf.execute_region -> tensor<8xf32> no_inline {
// CHECK:          scf.for
// CHECK:            tensor.extract %arg0
// CHECK:        flow.return %[[E]] : tensor<8xf32>
// CHECK:      return %[[R]]

// -----

// Two layers: the first matmul's bias + ReLU, read by the second matmul
// across its columns, is the first dispatch's epilogue, not a producer
// computed inside the second.
#id5 = affine_map<(d0, d1) -> (d0, d1)>
#col5 = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @two_layers
// CHECK:       %[[L1:.+]] = flow.dispatch.region -> (tensor<4x16xf32>) {
// CHECK:         linalg.matmul
// CHECK:         %[[ACT:.+]] = linalg.generic
// CHECK:           arith.maximumf
// CHECK:         flow.return %[[ACT]]
// CHECK:       flow.dispatch.region -> (tensor<4x8xf32>) {
// CHECK-NOT:     arith.maximumf
// CHECK:         linalg.matmul ins(%[[L1]],
func.func @two_layers(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %b: tensor<16xf32>, %w2: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %mm = linalg.matmul ins(%x, %w1 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %act = linalg.generic {indexing_maps = [#id5, #col5, #id5], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %mm2 = linalg.matmul ins(%act, %w2 : tensor<4x16xf32>, tensor<16x8xf32>) outs(%f2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %mm2 : tensor<4x8xf32>
}

// -----

// A transpose of a matmul's result (the layout change out of a blocked
// convolution, say) does not take the matmul into its dispatch: run there,
// the product would need a whole temporary inside the executable.
// CHECK-LABEL: func.func @reduction_not_fused_into_transpose
// CHECK:         %[[MM:.+]] = flow.dispatch.region -> (tensor<16x64xf32>)
// CHECK:           linalg.matmul
// CHECK:         flow.dispatch.region -> (tensor<64x16xf32>)
// CHECK:           linalg.transpose ins(%[[MM]] : tensor<16x64xf32>)
func.func @reduction_not_fused_into_transpose(%a: tensor<16x32xf32>, %b: tensor<32x64xf32>) -> tensor<64x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %e2 = tensor.empty() : tensor<64x16xf32>
  %t = linalg.transpose ins(%m : tensor<16x64xf32>) outs(%e2 : tensor<64x16xf32>) permutation = [1, 0]
  return %t : tensor<64x16xf32>
}

// -----

// A pad of a convolution's epilogue (the next convolution's padded input)
// takes the convolution and its epilogue into its dispatch, which then
// writes the padded tensor directly. A pad of a value with another use
// pads a copy of it in a dispatch of its own.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @pad_of_epilogue(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>) -> (tensor<1x8x18x18xf32>, tensor<1x8x18x18xf32>, tensor<1x8x16x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x14x14xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x14x14xf32>) -> tensor<1x8x14x14xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) outs(%f : tensor<1x8x14x14xf32>) -> tensor<1x8x14x14xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x8x14x14xf32>) outs(%e : tensor<1x8x14x14xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x14x14xf32>
  %p = tensor.pad %r low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x8x14x14xf32> to tensor<1x8x18x18xf32>
  %e2 = tensor.empty() : tensor<1x8x16x16xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x8x16x16xf32>) outs(%e2 : tensor<1x8x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.negf %in : f32
    linalg.yield %m : f32
  } -> tensor<1x8x16x16xf32>
  %q = tensor.pad %n low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x8x16x16xf32> to tensor<1x8x18x18xf32>
  return %p, %q, %n : tensor<1x8x18x18xf32>, tensor<1x8x18x18xf32>, tensor<1x8x16x16xf32>
}
// CHECK-LABEL: func.func @pad_of_epilogue
// CHECK:       %[[PADDED:.+]] = flow.dispatch.region -> (tensor<1x8x18x18xf32>)
// CHECK:         linalg.conv_2d_nchw_fchw
// CHECK:         %[[RELU:.+]] = linalg.generic
// CHECK:         %[[PAD:.+]] = tensor.pad %[[RELU]] low[0, 0, 2, 2]
// CHECK:         flow.return %[[PAD]]
// CHECK:       %[[NEG:.+]] = flow.dispatch.region -> (tensor<1x8x16x16xf32>)
// CHECK:         arith.negf
// CHECK:       %[[PADDED2:.+]] = flow.dispatch.region -> (tensor<1x8x18x18xf32>)
// CHECK:         %[[COPY:.+]] = linalg.generic {{.+}} ins(%[[NEG]] : tensor<1x8x16x16xf32>)
// CHECK-NOT:       arith.negf
// CHECK:         tensor.pad %[[COPY]] low[0, 0, 1, 1]
// CHECK:       return %[[PADDED]], %[[PADDED2]], %[[NEG]]

// -----

// A residual block's output: padded for the next 3x3 convolution and read
// again by a later add. The add reads the padded tensor's interior (a
// slice in its own dispatch), so the producer's dispatch still writes the
// padded tensor directly and no dispatch pads a copy.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @pad_of_value_read_again(%x: tensor<1x8x16x16xf32>, %y: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x16x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x8x16x16xf32>) outs(%e : tensor<1x8x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x16x16xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %y : tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>) outs(%e : tensor<1x8x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.addf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x8x16x16xf32>
  %p = tensor.pad %r low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x8x16x16xf32> to tensor<1x8x18x18xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%p, %w : tensor<1x8x18x18xf32>, tensor<8x8x3x3xf32>) outs(%f : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %t = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %s : tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>) outs(%e : tensor<1x8x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.addf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x8x16x16xf32>
  return %t : tensor<1x8x16x16xf32>
}
// CHECK-LABEL: func.func @pad_of_value_read_again
// CHECK:       %[[PADDED:.+]] = flow.dispatch.region -> (tensor<1x8x18x18xf32>)
// CHECK:         %[[RELU:.+]] = linalg.generic
// CHECK:           arith.maximumf
// CHECK:         %[[PAD:.+]] = tensor.pad %[[RELU]] low[0, 0, 1, 1]
// CHECK:         flow.return %[[PAD]]
// CHECK:       flow.dispatch.region -> (tensor<1x8x16x16xf32>)
// CHECK:         %[[INTERIOR:.+]] = tensor.extract_slice %[[PADDED]][0, 0, 1, 1] [1, 8, 16, 16] [1, 1, 1, 1]
// CHECK:         linalg.generic {{.+}} ins(%[[INTERIOR]], %{{.+}} :
// CHECK:           arith.addf
// CHECK-NOT:     tensor.pad
// CHECK:         linalg.conv_2d_nchw_fchw ins(%[[PADDED]],
// CHECK:       return

// -----

// A concatenation whose operands lie one after the other in memory (one
// image's channels), each produced by a dispatch for it alone, stays in the
// host program, which has the producers write into it. One that would copy
// an operand (an argument here) is a dispatch, and so is one of a batch of
// two, which interleaves its operands' bytes.
#map4 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @concatenations
func.func @concatenations(%a: tensor<1x4x4xf32>, %b: tensor<2x2x4xf32>) -> (tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<2x4x4xf32>) {
  %e = tensor.empty() : tensor<1x4x4xf32>
  %x = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<1x4x4xf32>) outs(%e : tensor<1x4x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<1x4x4xf32>
  %y = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<1x4x4xf32>) outs(%e : tensor<1x4x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %n = arith.mulf %in, %in : f32
    linalg.yield %n : f32
  } -> tensor<1x4x4xf32>
  %z = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<1x4x4xf32>) outs(%e : tensor<1x4x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %n = arith.addf %in, %in : f32
    linalg.yield %n : f32
  } -> tensor<1x4x4xf32>
  %host = tensor.concat dim(1) %x, %y : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x8x4xf32>
  %copying = tensor.concat dim(1) %z, %a : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x8x4xf32>
  %batch = tensor.concat dim(1) %b, %b : (tensor<2x2x4xf32>, tensor<2x2x4xf32>) -> tensor<2x4x4xf32>
  return %host, %copying, %batch : tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<2x4x4xf32>
}
// CHECK:      %[[X:.+]] = flow.dispatch.region -> (tensor<1x4x4xf32>) {
// CHECK:      %[[Y:.+]] = flow.dispatch.region -> (tensor<1x4x4xf32>) {
// CHECK:      %[[HOST:.+]] = tensor.concat dim(1) %[[X]], %[[Y]] :
// CHECK:      %[[COPYING:.+]] = flow.dispatch.region -> (tensor<1x8x4xf32>) {
// CHECK:        tensor.concat dim(1)
// CHECK:      %[[BATCH:.+]] = flow.dispatch.region -> (tensor<2x4x4xf32>) {
// CHECK:        tensor.concat dim(1)
// CHECK:      return %[[HOST]], %[[COPYING]], %[[BATCH]]

// -----

// A softmax's exp, read by the row sum and by the division: fused into the
// division's region, its tiles would compute it once for each. It stays a
// dispatch of its own (with the maximum it reads); the sum and the division
// share one.
#row = affine_map<(d0, d1) -> (d0, d1)>
#per_row = affine_map<(d0, d1) -> (d0)>
func.func @softmax_exp_twice(%x: tensor<64x100xf32>, %max: tensor<64xf32>) -> tensor<64x100xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x100xf32>
  %exp = linalg.generic {indexing_maps = [#row, #per_row, #row], iterator_types = ["parallel", "parallel"]} ins(%x, %max : tensor<64x100xf32>, tensor<64xf32>) outs(%e : tensor<64x100xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<64x100xf32>
  %se = tensor.empty() : tensor<64xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%se : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#row, #per_row], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<64x100xf32>) outs(%sf : tensor<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %div = linalg.generic {indexing_maps = [#row, #per_row, #row], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<64x100xf32>, tensor<64xf32>) outs(%e : tensor<64x100xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %q = arith.divf %v, %s : f32
    linalg.yield %q : f32
  } -> tensor<64x100xf32>
  return %div : tensor<64x100xf32>
}
// CHECK-LABEL: func.func @softmax_exp_twice
// CHECK:         %[[EXP:.+]] = flow.dispatch.region
// CHECK:           math.exp
// CHECK:         flow.dispatch.region
// CHECK-NOT:       math.exp
// CHECK:           arith.addf
// CHECK:           arith.divf

// -----

// Over a dynamic row count, a product and its elementwise epilogue are one
// dispatch as they are over static shapes: the epilogue reads the product
// element for element, so it overwrites it in the output binding and no
// temporary spans the rows.
#map = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @dynamic_matmul_bias_relu
func.func @dynamic_matmul_bias_relu(%x: tensor<?x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x16xf32>) -> tensor<?x16xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<?x8xf32>, tensor<8x16xf32>) outs(%f : tensor<?x16xf32>) -> tensor<?x16xf32>
  %r = linalg.generic {indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<?x16xf32>, tensor<16xf32>) outs(%e : tensor<?x16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<?x16xf32>
  return %r : tensor<?x16xf32>
}
// CHECK:      %[[R:.+]] = flow.dispatch.region -> (tensor<?x16xf32>) {
// CHECK:        %[[MM:.+]] = linalg.matmul
// CHECK:        %[[G:.+]] = linalg.generic {{.*}} ins(%[[MM]], %{{.*}} : tensor<?x16xf32>, tensor<16xf32>)
// CHECK:        flow.return %[[G]] : tensor<?x16xf32>
// CHECK-NEXT: }
// CHECK-NOT:  flow.dispatch.region
// CHECK:      return %[[R]]

// -----

// Over a dynamic batch, a per-channel result read broadcast over the
// pixels (a squeeze-excitation's scale) would have to be whole in a
// temporary of the batch's size inside the executable: the reduction with
// the sigmoid that overwrites it in place is one dispatch, the broadcast
// product another.
#nc = affine_map<(n, c, p) -> (n, c)>
#ncp = affine_map<(n, c, p) -> (n, c, p)>
#sum = affine_map<(n, c, p) -> (n, c)>
#id2 = affine_map<(n, c) -> (n, c)>
// CHECK-LABEL: func.func @dynamic_broadcast_scale
func.func @dynamic_broadcast_scale(%x: tensor<?x16x64xf32>) -> tensor<?x16x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x16x64xf32>
  %e2 = tensor.empty(%n) : tensor<?x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x16xf32>) -> tensor<?x16xf32>
  %s = linalg.generic {indexing_maps = [#ncp, #sum], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<?x16x64xf32>) outs(%f2 : tensor<?x16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<?x16xf32>
  %g = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<?x16xf32>) outs(%e2 : tensor<?x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %neg = arith.negf %a : f32
    %ex = math.exp %neg : f32
    %d = arith.addf %ex, %one : f32
    %sig = arith.divf %one, %d : f32
    linalg.yield %sig : f32
  } -> tensor<?x16xf32>
  %e3 = tensor.empty(%n) : tensor<?x16x64xf32>
  %r = linalg.generic {indexing_maps = [#nc, #ncp, #ncp], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%g, %x : tensor<?x16xf32>, tensor<?x16x64xf32>) outs(%e3 : tensor<?x16x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<?x16x64xf32>
  return %r : tensor<?x16x64xf32>
}
// CHECK:      flow.dispatch.region -> (tensor<?x16xf32>) {
// CHECK:        linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:        math.exp
// CHECK:        flow.return
// CHECK-NEXT: }
// CHECK:      flow.dispatch.region -> (tensor<?x16x64xf32>) {
// CHECK-NOT:    math.exp
// CHECK:        arith.mulf
// CHECK:        flow.return
// CHECK-NEXT: }

// -----

// Over a dynamic batch, cheap elementwise producers read through a
// transposed or broadcast view join their reader: the executable's
// elementwise fusion folds them into one loop nest (a hard-sigmoid scale
// moved out of a blocked layout, broadcast over the pixels, the product
// moved back), so no temporary spans the batch. A scale read by two ops
// would be computed once into a temporary: it stays a dispatch of its own.
#cn = affine_map<(n, c, p) -> (c, n)>
#ncp = affine_map<(n, c, p) -> (n, c, p)>
#id2 = affine_map<(c, n) -> (c, n)>
// CHECK-LABEL: func.func @dynamic_transposed_broadcast_scale
func.func @dynamic_transposed_broadcast_scale(%s: tensor<?x16xf32>, %x: tensor<?x16x64xf32>, %s2: tensor<16x?xf32>) -> (tensor<?x64x16xf32>, tensor<?x16x64xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %n = tensor.dim %s, %c0 : tensor<?x16xf32>
  %e1 = tensor.empty(%n) : tensor<16x?xf32>
  %t = linalg.transpose ins(%s : tensor<?x16xf32>) outs(%e1 : tensor<16x?xf32>) permutation = [1, 0]
  %hs = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<16x?xf32>) outs(%e1 : tensor<16x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %half : f32
    %p = arith.addf %m, %half : f32
    %lo = arith.maximumf %p, %zero : f32
    %hi = arith.minimumf %lo, %one : f32
    linalg.yield %hi : f32
  } -> tensor<16x?xf32>
  %e3 = tensor.empty(%n) : tensor<?x16x64xf32>
  %m = linalg.generic {indexing_maps = [#cn, #ncp, #ncp], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%hs, %x : tensor<16x?xf32>, tensor<?x16x64xf32>) outs(%e3 : tensor<?x16x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<?x16x64xf32>
  %e4 = tensor.empty(%n) : tensor<?x64x16xf32>
  %r = linalg.transpose ins(%m : tensor<?x16x64xf32>) outs(%e4 : tensor<?x64x16xf32>) permutation = [0, 2, 1]
  // A scale read twice by the product below.
  %hs2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s2 : tensor<16x?xf32>) outs(%e1 : tensor<16x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m2 = arith.mulf %a, %a : f32
    linalg.yield %m2 : f32
  } -> tensor<16x?xf32>
  %m2 = linalg.generic {indexing_maps = [#cn, #cn, #ncp, #ncp], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%hs2, %hs2, %x : tensor<16x?xf32>, tensor<16x?xf32>, tensor<?x16x64xf32>) outs(%e3 : tensor<?x16x64xf32>) {
  ^bb0(%a: f32, %a2: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.addf %p, %a2 : f32
    linalg.yield %q : f32
  } -> tensor<?x16x64xf32>
  return %r, %m2 : tensor<?x64x16xf32>, tensor<?x16x64xf32>
}
// CHECK:      %[[R:.+]] = flow.dispatch.region -> (tensor<?x64x16xf32>) {
// CHECK:        linalg.transpose {{.*}} permutation = [1, 0]
// CHECK:        arith.minimumf
// CHECK:        arith.mulf
// CHECK:        linalg.transpose {{.*}} permutation = [0, 2, 1]
// CHECK:        flow.return
// CHECK-NEXT: }
// CHECK:      %[[S:.+]] = flow.dispatch.region -> (tensor<16x?xf32>) {
// CHECK:        arith.mulf
// CHECK:        flow.return
// CHECK-NEXT: }
// CHECK:      flow.dispatch.region -> (tensor<?x16x64xf32>) {
// CHECK:        linalg.generic {{.*}} ins(%[[S]], %[[S]], %{{.*}} :

// -----

// A size computed from data (a range's length) stays on the host, which
// reads it back: the range's region captures it as an index. The scalar
// its body reads is cloned in as usual.
#map0 = affine_map<() -> ()>
#map1 = affine_map<(d0) -> (d0)>
func.func @size_from_data(%limit: tensor<f32>) -> tensor<?xf32> {
  %l = tensor.extract %limit[] : tensor<f32>
  %e0 = tensor.empty() : tensor<i64>
  %length = linalg.generic {indexing_maps = [#map0], iterator_types = []} outs(%e0 : tensor<i64>) {
  ^bb0(%out: i64):
    %n = arith.fptosi %l : f32 to i64
    linalg.yield %n : i64
  } -> tensor<i64>
  %bits = tensor.extract %length[] : tensor<i64>
  %size = arith.index_cast %bits : i64 to index
  %e1 = tensor.empty(%size) : tensor<?xf32>
  %range = linalg.generic {indexing_maps = [#map1], iterator_types = ["parallel"]} outs(%e1 : tensor<?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %v = arith.addf %f, %l : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  return %range : tensor<?xf32>
}
// CHECK-LABEL: func.func @size_from_data
// CHECK:         %[[LENGTH:.+]] = flow.dispatch.region -> (tensor<i64>)
// CHECK:           tensor.extract %{{.+}}[] : tensor<f32>
// CHECK:         %[[BITS:.+]] = tensor.extract %[[LENGTH]][] : tensor<i64>
// CHECK:         %[[SIZE:.+]] = arith.index_cast %[[BITS]] : i64 to index
// CHECK:         flow.dispatch.region -> (tensor<?xf32>)
// CHECK-DAG:       tensor.extract %{{.+}}[] : tensor<f32>
// CHECK-DAG:       tensor.empty(%[[SIZE]]) : tensor<?xf32>
// CHECK:           linalg.generic

// -----

// A slice whose bounds are read from a tensor: its size stays on the host
// (which reads the bounds back to size the result); the offset is read
// again inside the region.
func.func @slice_size_from_data(%x: tensor<9x8xf32>, %bounds: tensor<2xi64>) -> tensor<9x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = tensor.extract %bounds[%c0] : tensor<2xi64>
  %start = arith.index_cast %s : i64 to index
  %e = tensor.extract %bounds[%c1] : tensor<2xi64>
  %end = arith.index_cast %e : i64 to index
  %size = arith.subi %end, %start : index
  %slice = tensor.extract_slice %x[0, %start] [9, %size] [1, 1] : tensor<9x8xf32> to tensor<9x?xf32>
  return %slice : tensor<9x?xf32>
}
// CHECK-LABEL: func.func @slice_size_from_data
// CHECK:         %[[SIZE:.+]] = arith.subi
// CHECK:         flow.dispatch.region -> (tensor<9x?xf32>)
// CHECK:           %[[START:.+]] = arith.index_cast
// CHECK:           tensor.extract_slice %{{.+}}[0, %[[START]]] [9, %[[SIZE]]] [1, 1]
