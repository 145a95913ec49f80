// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-merge-small-dispatch-regions{vector-bits=512}))' --split-input-file | FileCheck %s

// Three small steps of a recurrence (a matrix-vector product and an
// activation each), with a host reshape of each step's result for a later
// consumer: one region runs all three. The first two states are still
// returned (the reshapes read them); the state only the next step reads
// is not.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @recurrence(%h0: tensor<1x16xf32>, %w: tensor<16x16xf32>) -> (tensor<1x1x16xf32>, tensor<1x1x16xf32>, tensor<1x16xf32>) {
  %s1 = flow.dispatch.region -> (tensor<1x16xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16xf32>) -> tensor<1x16xf32>
    %m = linalg.matmul ins(%h0, %w : tensor<1x16xf32>, tensor<16x16xf32>) outs(%f : tensor<1x16xf32>) -> tensor<1x16xf32>
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<1x16xf32>) outs(%e : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.tanh %in : f32
      linalg.yield %v : f32
    } -> tensor<1x16xf32>
    flow.return %t : tensor<1x16xf32>
  }
  %r1 = tensor.expand_shape %s1 [[0, 1], [2]] output_shape [1, 1, 16] : tensor<1x16xf32> into tensor<1x1x16xf32>
  %s2 = flow.dispatch.region -> (tensor<1x16xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16xf32>) -> tensor<1x16xf32>
    %m = linalg.matmul ins(%s1, %w : tensor<1x16xf32>, tensor<16x16xf32>) outs(%f : tensor<1x16xf32>) -> tensor<1x16xf32>
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<1x16xf32>) outs(%e : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.tanh %in : f32
      linalg.yield %v : f32
    } -> tensor<1x16xf32>
    flow.return %t : tensor<1x16xf32>
  }
  %r2 = tensor.expand_shape %s2 [[0, 1], [2]] output_shape [1, 1, 16] : tensor<1x16xf32> into tensor<1x1x16xf32>
  %s3 = flow.dispatch.region -> (tensor<1x16xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16xf32>) -> tensor<1x16xf32>
    %m = linalg.matmul ins(%s2, %w : tensor<1x16xf32>, tensor<16x16xf32>) outs(%f : tensor<1x16xf32>) -> tensor<1x16xf32>
    flow.return %m : tensor<1x16xf32>
  }
  return %r1, %r2, %s3 : tensor<1x1x16xf32>, tensor<1x1x16xf32>, tensor<1x16xf32>
}
// CHECK-LABEL: func.func @recurrence
// CHECK:         %[[M:.+]]:3 = flow.dispatch.region -> (tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>)
// CHECK:           %[[M1:.+]] = linalg.matmul ins(%{{.+}}, %{{.+}} :
// CHECK:           %[[T1:.+]] = linalg.generic {{.+}} ins(%[[M1]] :
// CHECK:           %[[M2:.+]] = linalg.matmul ins(%[[T1]], %{{.+}} :
// CHECK:           %[[T2:.+]] = linalg.generic {{.+}} ins(%[[M2]] :
// CHECK:           %[[M3:.+]] = linalg.matmul ins(%[[T2]], %{{.+}} :
// CHECK:           flow.return %[[T1]], %[[T2]], %[[M3]]
// CHECK-NOT:     flow.dispatch.region
// CHECK:         %[[R1:.+]] = tensor.expand_shape %[[M]]#0
// CHECK:         %[[R2:.+]] = tensor.expand_shape %[[M]]#1
// CHECK:         return %[[R1]], %[[R2]], %[[M]]#2

// -----

// A step that reads its input through a host reshape of the step before
// takes the reshape into the merged region.
func.func @reshape_between(%x: tensor<1x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x1xf32> {
  %s1 = flow.dispatch.region -> (tensor<1x16xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16xf32>) -> tensor<1x16xf32>
    %m = linalg.matmul ins(%x, %w : tensor<1x16xf32>, tensor<16x16xf32>) outs(%f : tensor<1x16xf32>) -> tensor<1x16xf32>
    flow.return %m : tensor<1x16xf32>
  }
  %c = tensor.collapse_shape %s1 [[0, 1]] : tensor<1x16xf32> into tensor<16xf32>
  %s2 = flow.dispatch.region -> (tensor<16x1xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<16x1xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x1xf32>) -> tensor<16x1xf32>
    %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<16xf32>) outs(%f : tensor<16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.addf %in, %in : f32
      linalg.yield %v : f32
    } -> tensor<16x1xf32>
    flow.return %m : tensor<16x1xf32>
  }
  return %s2 : tensor<16x1xf32>
}
// CHECK-LABEL: func.func @reshape_between
// CHECK:         %[[M:.+]] = flow.dispatch.region -> (tensor<16x1xf32>)
// CHECK:           %[[MM:.+]] = linalg.matmul
// CHECK:           %[[C:.+]] = tensor.collapse_shape %[[MM]]
// CHECK:           linalg.generic {{.+}} ins(%[[C]] :
// CHECK-NOT:     flow.dispatch.region
// CHECK:         return %[[M]]

// -----

// Through a chain of reshapes (a unit-dim transpose left as a collapse and
// an expand): the merged region takes the whole chain, in order.
func.func @reshape_chain_between(%x: tensor<1x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x1xf32> {
  %s1 = flow.dispatch.region -> (tensor<1x16xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16xf32>) -> tensor<1x16xf32>
    %m = linalg.matmul ins(%x, %w : tensor<1x16xf32>, tensor<16x16xf32>) outs(%f : tensor<1x16xf32>) -> tensor<1x16xf32>
    flow.return %m : tensor<1x16xf32>
  }
  %c = tensor.collapse_shape %s1 [[0, 1]] : tensor<1x16xf32> into tensor<16xf32>
  %x2 = tensor.expand_shape %c [[0, 1]] output_shape [16, 1] : tensor<16xf32> into tensor<16x1xf32>
  %s2 = flow.dispatch.region -> (tensor<16x1xf32>) {
    %e = tensor.empty() : tensor<16x1xf32>
    %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x2 : tensor<16x1xf32>) outs(%e : tensor<16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.addf %in, %in : f32
      linalg.yield %v : f32
    } -> tensor<16x1xf32>
    flow.return %m : tensor<16x1xf32>
  }
  return %s2 : tensor<16x1xf32>
}
// CHECK-LABEL: func.func @reshape_chain_between
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         %[[M:.+]] = flow.dispatch.region -> (tensor<16x1xf32>)
// CHECK:           %[[MM:.+]] = linalg.matmul
// CHECK:           %[[C:.+]] = tensor.collapse_shape %[[MM]]
// CHECK:           %[[X:.+]] = tensor.expand_shape %[[C]]
// CHECK:           linalg.generic {{.+}} ins(%[[X]] :
// CHECK-NOT:     flow.dispatch.region
// CHECK:         return %[[M]]

// -----

// A region large enough to split over workgroups stays on its own, and so
// does a small one reading a value computed between the two.
func.func @not_merged(%x: tensor<256x256xf32>, %w: tensor<256x256xf32>, %v: tensor<1x256xf32>) -> (tensor<256x256xf32>, tensor<1x256xf32>) {
  %big = flow.dispatch.region -> (tensor<256x256xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<256x256xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
    %m = linalg.matmul ins(%x, %w : tensor<256x256xf32>, tensor<256x256xf32>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
    flow.return %m : tensor<256x256xf32>
  }
  %s1 = flow.dispatch.region -> (tensor<1x256xf32>) {
    %e = tensor.empty() : tensor<1x256xf32>
    %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v : tensor<1x256xf32>) outs(%e : tensor<1x256xf32>) {
    ^bb0(%in: f32, %out: f32):
      %n = arith.negf %in : f32
      linalg.yield %n : f32
    } -> tensor<1x256xf32>
    flow.return %t : tensor<1x256xf32>
  }
  %row = tensor.extract_slice %big[0, 0] [1, 256] [1, 1] : tensor<256x256xf32> to tensor<1x256xf32>
  %s2 = flow.dispatch.region -> (tensor<1x256xf32>) {
    %e = tensor.empty() : tensor<1x256xf32>
    %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s1, %row : tensor<1x256xf32>, tensor<1x256xf32>) outs(%e : tensor<1x256xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %n = arith.addf %a, %b : f32
      linalg.yield %n : f32
    } -> tensor<1x256xf32>
    flow.return %t : tensor<1x256xf32>
  }
  return %big, %s2 : tensor<256x256xf32>, tensor<1x256xf32>
}
// CHECK-LABEL: func.func @not_merged
// CHECK:         flow.dispatch.region -> (tensor<256x256xf32>)
// CHECK:         flow.dispatch.region -> (tensor<1x256xf32>)
// CHECK:           arith.negf
// CHECK:         tensor.extract_slice
// CHECK:         flow.dispatch.region -> (tensor<1x256xf32>)
// CHECK:           arith.addf

// -----

// A product that would split over workgroups but does little work on
// little data (a recurrence's input projection: 32x64x512, reading 136
// KiB) joins the one-workgroup region after it that reads its result; the
// merged region runs as one workgroup, and says so.
func.func @small_split_joins_serial_reader(%x: tensor<32x64xf32>, %w: tensor<64x512xf32>) -> tensor<1x512xf32> {
  %proj = flow.dispatch.region -> (tensor<32x512xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<32x512xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x512xf32>) -> tensor<32x512xf32>
    %m = linalg.matmul ins(%x, %w : tensor<32x64xf32>, tensor<64x512xf32>) outs(%f : tensor<32x512xf32>) -> tensor<32x512xf32>
    flow.return %m : tensor<32x512xf32>
  }
  %step = flow.dispatch.region -> (tensor<1x512xf32>) {
    %row = tensor.extract_slice %proj[0, 0] [1, 512] [1, 1] : tensor<32x512xf32> to tensor<1x512xf32>
    %e = tensor.empty() : tensor<1x512xf32>
    %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%row : tensor<1x512xf32>) outs(%e : tensor<1x512xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.tanh %in : f32
      linalg.yield %v : f32
    } -> tensor<1x512xf32>
    flow.return %t : tensor<1x512xf32>
  }
  return %step : tensor<1x512xf32>
}
// CHECK-LABEL: func.func @small_split_joins_serial_reader
// CHECK:         %[[M:.+]] = flow.dispatch.region -> (tensor<1x512xf32>)
// CHECK:           linalg.matmul
// CHECK:           math.tanh
// CHECK:         } {strata.single_workgroup}
// CHECK-NOT:     flow.dispatch.region
// CHECK:         return %[[M]]

// -----

// A product streaming a matrix larger than a core's share of L2 (784x512,
// 1.6 MB) keeps its split: each core streams half of it from its own
// cache. The one-workgroup region after it stays on its own.
func.func @large_input_split_kept(%x: tensor<1x784xf32>, %w: tensor<784x512xf32>) -> tensor<1x512xf32> {
  %fc = flow.dispatch.region -> (tensor<1x512xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x512xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x512xf32>) -> tensor<1x512xf32>
    %m = linalg.matmul ins(%x, %w : tensor<1x784xf32>, tensor<784x512xf32>) outs(%f : tensor<1x512xf32>) -> tensor<1x512xf32>
    flow.return %m : tensor<1x512xf32>
  }
  %act = flow.dispatch.region -> (tensor<1x512xf32>) {
    %e = tensor.empty() : tensor<1x512xf32>
    %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%fc : tensor<1x512xf32>) outs(%e : tensor<1x512xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.tanh %in : f32
      linalg.yield %v : f32
    } -> tensor<1x512xf32>
    flow.return %t : tensor<1x512xf32>
  }
  return %act : tensor<1x512xf32>
}
// CHECK-LABEL: func.func @large_input_split_kept
// CHECK:         %[[FC:.+]] = flow.dispatch.region -> (tensor<1x512xf32>)
// CHECK:           linalg.matmul
// CHECK-NOT:       math.tanh
// CHECK:         flow.return
// CHECK-NEXT:    }
// CHECK-NOT:     strata.single_workgroup
// CHECK:         flow.dispatch.region -> (tensor<1x512xf32>)
// CHECK:           math.tanh

// -----

// A large value the next region reads through a reshape stays a result
// (merged, it would be a stack temporary past the limit): the second slice
// keeps its own region (torch.roll's two slices of a window-reversed map).
#id = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
func.func @large_value_through_reshape(%x: tensor<2x2x7x2x7x192xf32>) -> (tensor<2x3x14x192xf32>, tensor<2x11x14x192xf32>) {
  %t = flow.dispatch.region -> (tensor<2x2x7x2x7x192xf32>) {
    %e = tensor.empty() : tensor<2x2x7x2x7x192xf32>
    %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<2x2x7x2x7x192xf32>) outs(%e : tensor<2x2x7x2x7x192xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.negf %in : f32
      linalg.yield %v : f32
    } -> tensor<2x2x7x2x7x192xf32>
    flow.return %g : tensor<2x2x7x2x7x192xf32>
  }
  %c = tensor.collapse_shape %t [[0], [1, 2], [3, 4], [5]] : tensor<2x2x7x2x7x192xf32> into tensor<2x14x14x192xf32>
  %a = flow.dispatch.region -> (tensor<2x3x14x192xf32>) {
    %s = tensor.extract_slice %c[0, 11, 0, 0] [2, 3, 14, 192] [1, 1, 1, 1] : tensor<2x14x14x192xf32> to tensor<2x3x14x192xf32>
    flow.return %s : tensor<2x3x14x192xf32>
  }
  %b = flow.dispatch.region -> (tensor<2x11x14x192xf32>) {
    %s = tensor.extract_slice %c[0, 0, 0, 0] [2, 11, 14, 192] [1, 1, 1, 1] : tensor<2x14x14x192xf32> to tensor<2x11x14x192xf32>
    flow.return %s : tensor<2x11x14x192xf32>
  }
  return %a, %b : tensor<2x3x14x192xf32>, tensor<2x11x14x192xf32>
}
// CHECK-LABEL: func.func @large_value_through_reshape
// CHECK:         %[[M:.+]]:2 = flow.dispatch.region -> (tensor<2x2x7x2x7x192xf32>, tensor<2x3x14x192xf32>)
// CHECK:         %[[C:.+]] = tensor.collapse_shape %[[M]]#0
// CHECK:         flow.dispatch.region -> (tensor<2x11x14x192xf32>)
// CHECK-NEXT:      tensor.extract_slice %[[C]][0, 0, 0, 0] [2, 11, 14, 192]
