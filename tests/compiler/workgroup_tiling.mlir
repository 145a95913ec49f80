// RUN: strata-opt %s --split-input-file --strata-lower-executables --mlir-print-ir-before=convert-linalg-to-loops -o /dev/null 2>&1 | FileCheck %s

// A matmul whose input carries a fused activation, under an elementwise
// root with a bias over the columns. Splitting the columns (the loop the
// kernel vectorizes) into 2-wide tiles would recompute the activation of
// the whole input in every workgroup: the rows are split instead.
#x = affine_map<(i, j, k) -> (i, k)>
#w = affine_map<(i, j, k) -> (k, j)>
#o = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
flow.executable @ffn_dispatch_0 entry @ffn_dispatch_0 attributes {workgroup_count = array<i64: 64, 1, 1>} {
  builtin.module {
    func.func @ffn_dispatch_0(%x: tensor<128x512xf32>, %w: tensor<512x128xf32>, %b: tensor<128xf32>) -> tensor<128x128xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<128x128xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
      %mm = linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<128x512xf32>, tensor<512x128xf32>) outs(%f : tensor<128x128xf32>) {
      ^bb0(%a: f32, %c: f32, %acc: f32):
        %t = math.tanh %a : f32
        %m = arith.mulf %t, %c : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      } -> tensor<128x128xf32>
      %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%mm, %b : tensor<128x128xf32>, tensor<128xf32>) outs(%e : tensor<128x128xf32>) {
      ^bb0(%a: f32, %c: f32, %o: f32):
        %s = arith.addf %a, %c : f32
        linalg.yield %s : f32
      } -> tensor<128x128xf32>
      return %r : tensor<128x128xf32>
    }
  }
}
// CHECK-LABEL: func.func @ffn_dispatch_0
// CHECK:       memref.subview %arg0[%{{.+}}, 0] [2, 512] [1, 1]
// CHECK-NOT:   memref.subview %arg1

// -----

// A dispatch returning its root padded (the next convolution's input),
// split along a padded dimension (the rows): each workgroup fills the
// padding next to its tile (the top rows only if first, the bottom rows
// only if last, the columns beside its rows) and computes its tile into
// the interior of the result, in place.
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
flow.executable @padded_rows_dispatch_0 entry @padded_rows_dispatch_0 attributes {workgroup_count = array<i64: 8, 1, 1>} {
  builtin.module {
    func.func @padded_rows_dispatch_0(%x: tensor<256x64x16xf32>) -> tensor<258x66x16xf32> attributes {flow.lowering_config = #flow.lowering_config<vector_bits = 512, workgroup_tile = [32, 0, 0], kernels = []>} {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<256x64x16xf32>
      %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<256x64x16xf32>) outs(%e : tensor<256x64x16xf32>) {
      ^bb0(%in: f32, %out: f32):
        %m = arith.maximumf %in, %zero : f32
        linalg.yield %m : f32
      } -> tensor<256x64x16xf32>
      %p = tensor.pad %r low[1, 1, 0] high[1, 1, 0] {
      ^bb0(%i: index, %j: index, %k: index):
        tensor.yield %zero : f32
      } : tensor<256x64x16xf32> to tensor<258x66x16xf32>
      return %p : tensor<258x66x16xf32>
    }
  }
}
// CHECK-LABEL: func.func @padded_rows_dispatch_0
// CHECK-SAME:    (%[[X:.+]]: memref<256x64x16xf32> {{.+}}, %[[OUT:.+]]: memref<258x66x16xf32>
// CHECK:         %[[FIRST:.+]] = arith.cmpi eq, %[[ROW:.+]], %{{.+}} : index
// CHECK:         %[[END:.+]] = arith.addi %[[ROW]], %{{.+}} : index
// CHECK:         %[[LAST:.+]] = arith.cmpi eq, %[[END]], %c256
// CHECK:         %[[TOP:.+]] = arith.select %[[FIRST]]
// CHECK:         %[[BOTTOM:.+]] = arith.select %[[LAST]]
// CHECK:         %[[START:.+]] = arith.select %[[FIRST]]
// CHECK:         %[[OWNED:.+]] = memref.subview %[[OUT]][%[[START]], 0, 0] [%{{.+}}, 66, 16]
// CHECK:         memref.subview %[[OWNED]][0, 0, 0] [%[[TOP]], 66, 16]
// CHECK:         vector.transfer_write
// CHECK:         memref.subview %[[OWNED]][%{{.+}}, 0, 0] [%[[BOTTOM]], 66, 16]
// CHECK:         vector.transfer_write
// CHECK:         memref.subview %[[OWNED]][%[[TOP]], 0, 0] [32, 1, 16]
// CHECK:         vector.transfer_write
// CHECK:         memref.subview %[[OWNED]][%[[TOP]], 65, 0] [32, 1, 16]
// CHECK:         vector.transfer_write
// CHECK:         %[[INTERIOR:.+]] = memref.subview %[[OWNED]][%[[TOP]], 1, 0] [32, 64, 16]
// CHECK:         memref.subview %[[INTERIOR]]
// CHECK:         arith.maximumf
// CHECK-NOT:     memref.copy
// CHECK:         return

// -----

// A padded copy of short rows (a 7x7 map padded to 9x9), split along the
// channels: the columns beside each row are not filled on their own (two
// elements a row apart, which LLVM turns into scatters); each padded row
// is filled whole, one short vector, before the copy writes its interior.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
flow.executable @short_rows_dispatch_0 entry @short_rows_dispatch_0 attributes {workgroup_count = array<i64: 2, 1, 1>} {
  builtin.module {
    func.func @short_rows_dispatch_0(%x: tensor<1x64x7x7xf32>) -> tensor<1x64x9x9xf32> attributes {flow.lowering_config = #flow.lowering_config<vector_bits = 512, workgroup_tile = [0, 32, 0, 0], kernels = []>} {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<1x64x7x7xf32>
      %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x64x7x7xf32>) outs(%e : tensor<1x64x7x7xf32>) {
      ^bb0(%in: f32, %out: f32):
        linalg.yield %in : f32
      } -> tensor<1x64x7x7xf32>
      %p = tensor.pad %r low[0, 0, 1, 1] high[0, 0, 1, 1] {
      ^bb0(%i: index, %j: index, %k: index, %l: index):
        tensor.yield %zero : f32
      } : tensor<1x64x7x7xf32> to tensor<1x64x9x9xf32>
      return %p : tensor<1x64x9x9xf32>
    }
  }
}
// CHECK-LABEL: func.func @short_rows_dispatch_0
// CHECK-SAME:    (%[[X:.+]]: memref<1x64x7x7xf32> {{.+}}, %[[OUT:.+]]: memref<1x64x9x9xf32>
// CHECK:         %[[OWNED:.+]] = memref.subview %[[OUT]][0, %{{.+}}, 0, 0] [1, 32, 9, 9]
// CHECK:         memref.subview %[[OWNED]][0, 0, 0, 0] [1, 32, 1, 9]
// CHECK:         vector.transfer_write {{.+}} : vector<1x1x1x9xf32>
// CHECK:         memref.subview %[[OWNED]][0, 0, 8, 0] [1, 32, 1, 9]
// CHECK:         vector.transfer_write {{.+}} : vector<1x1x1x9xf32>
// CHECK:         memref.subview %[[OWNED]][0, 0, 1, 0] [1, 32, 7, 9]
// CHECK:         vector.transfer_write {{.+}} : vector<1x1x1x9xf32>
// CHECK-NOT:     [1, 32, 7, 1]
// CHECK:         %[[INTERIOR:.+]] = memref.subview %[[OWNED]][0, 0, 1, 1] [1, 32, 7, 7]
// CHECK:         vector.transfer_read {{.+}} : memref<1x1x1x7xf32, {{.+}}>, vector<1x1x1x7xf32>
// CHECK:         vector.transfer_write {{.+}} : vector<1x1x1x7xf32>
// CHECK:         return

// -----

// A pad fused into its consumer (FusePadsIntoConsumers), split along the
// channel blocks it does not pad: the convolution's register tiles read
// the workgroup's 5 blocks of the unpadded input directly, each pixel's
// vector masked off (the pad value) where its row or column falls in the
// padding (PaddedSources.h); no padded temporary is left. A tile holds a
// whole row of 7 pixels and its 9 taps unroll: the columns' masks are
// constants, the row's one check per tap row.
#in = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2 + d4, d3 + d5, d6)>
#filter = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d6)>
flow.executable @padded_input_dispatch_0 entry @padded_input_dispatch_0 attributes {workgroup_count = array<i64: 12, 1, 1>} {
  builtin.module {
    func.func @padded_input_dispatch_0(%x: tensor<1x60x7x7x16xf32>, %w: tensor<60x3x3x16xf32>) -> tensor<1x60x7x7x16xf32> attributes {flow.lowering_config = #flow.lowering_config<vector_bits = 512, workgroup_tile = [0, 5, 0, 0, 0, 0, 0], kernels = [#flow.kernel_config<strategy = "broadcast", cache_tiles = [1, 1, 1, 0, 0, 0, 16], cache_order = [0, 1, 2, 3, 6, 4, 5], register_tiles = [0, 0, 0, 4, 1, 1, 16], roles = [3, 6, 4]>]>} {
      %zero = arith.constant 0.0 : f32
      %p = tensor.pad %x low[0, 0, 1, 1, 0] high[0, 0, 1, 1, 0] {
      ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
        tensor.yield %zero : f32
      } : tensor<1x60x7x7x16xf32> to tensor<1x60x9x9x16xf32>
      %e = tensor.empty() : tensor<1x60x7x7x16xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x60x7x7x16xf32>) -> tensor<1x60x7x7x16xf32>
      %r = linalg.generic {indexing_maps = [#in, #filter, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%p, %w : tensor<1x60x9x9x16xf32>, tensor<60x3x3x16xf32>) outs(%f : tensor<1x60x7x7x16xf32>) {
      ^bb0(%a: f32, %b: f32, %acc: f32):
        %m = arith.mulf %a, %b : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      } -> tensor<1x60x7x7x16xf32>
      return %r : tensor<1x60x7x7x16xf32>
    }
  }
}
// CHECK-LABEL: func.func @padded_input_dispatch_0
// CHECK-NOT:     memref.alloca
// CHECK:         %[[SOURCE:.+]] = memref.subview %arg0[0, %{{.+}}, 0, 0, 0] [1, 5, 7, 7, 16]
// CHECK-NOT:     memref.alloca
// CHECK:         scf.for
// CHECK:           scf.for %{{.+}} = %c0 to %c7 step %c1
// CHECK:             arith.cmpi sge
// CHECK:             arith.cmpi sle
// CHECK-NOT:         scf.for
// CHECK:             %[[LANES:.+]] = vector.maskedload %[[SOURCE]][%{{.+}}], %{{.+}}, %{{.+}} : memref<1x5x7x7x16xf32, {{.+}}>, vector<16xi1>, vector<16xf32>
// CHECK:             vector.fma %[[LANES]]
// CHECK-COUNT-62:    vector.fma
// CHECK-NOT:         scf.for
// CHECK-NOT:     memref.alloca
// CHECK:         return

// -----

// A pad to be read in place (FusePadsIntoConsumers marks it), split along
// the output columns it pads: it stays whole, outside the workgroup split,
// and the register tiles of each workgroup read their window of it from
// the unpadded argument. Each tile checks its whole 3x3 window once (an
// unsigned compare per extreme position) and runs one of two unrolled
// versions of its taps: plain loads, or masked loads where a column or a
// row falls in the padding. A workgroup's first and last tiles of a row
// are iterations of their own, around the loop over those between. The
// padded tensor (1.7 MB, past a workgroup's stack) is never built.
#in = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2 + d4, d3 + d5, d6)>
#filter = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d6)>
flow.executable @split_along_padding_dispatch_0 entry @split_along_padding_dispatch_0 attributes {workgroup_count = array<i64: 4, 1, 1>} {
  builtin.module {
    func.func @split_along_padding_dispatch_0(%x: tensor<1x2x112x112x16xf32>, %w: tensor<2x3x3x16xf32>) -> tensor<1x2x112x112x16xf32> attributes {flow.lowering_config = #flow.lowering_config<vector_bits = 512, workgroup_tile = [0, 0, 0, 28, 0, 0, 0], kernels = [#flow.kernel_config<strategy = "broadcast", cache_tiles = [1, 1, 1, 0, 0, 0, 16], cache_order = [0, 1, 2, 3, 6, 4, 5], register_tiles = [0, 0, 0, 4, 1, 1, 16], roles = [3, 6, 4]>]>} {
      %zero = arith.constant 0.0 : f32
      %p = tensor.pad %x low[0, 0, 1, 1, 0] high[0, 0, 1, 1, 0] {
      ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
        tensor.yield %zero : f32
      } {strata.pad_read_in_place} : tensor<1x2x112x112x16xf32> to tensor<1x2x114x114x16xf32>
      %e = tensor.empty() : tensor<1x2x112x112x16xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x112x112x16xf32>) -> tensor<1x2x112x112x16xf32>
      %r = linalg.generic {indexing_maps = [#in, #filter, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%p, %w : tensor<1x2x114x114x16xf32>, tensor<2x3x3x16xf32>) outs(%f : tensor<1x2x112x112x16xf32>) {
      ^bb0(%a: f32, %b: f32, %acc: f32):
        %m = arith.mulf %a, %b : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      } -> tensor<1x2x112x112x16xf32>
      return %r : tensor<1x2x112x112x16xf32>
    }
  }
}
// CHECK-LABEL: func.func @split_along_padding_dispatch_0
// CHECK-NOT:     memref.alloca
// CHECK:         scf.for
// CHECK:           scf.for %{{.+}} = %c0 to %c112 step %c1 {
// CHECK:             arith.cmpi ult, %{{.+}}, %c112
// CHECK:             %[[FIRST:.+]]:4 = scf.if %{{.+}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK-COUNT-4:       vector.load %arg0[{{.+}}] : memref<1x2x112x112x16xf32>, vector<16xf32>
// CHECK-NOT:           vector.maskedload
// CHECK-NOT:           scf.for
// CHECK:             } else {
// CHECK-NOT:           scf.for
// CHECK:               %[[INSIDE:.+]] = vector.broadcast %{{.+}} : i1 to vector<16xi1>
// CHECK:               vector.maskedload %arg0[%{{.+}}], %[[INSIDE]], %{{.+}} : memref<1x2x112x112x16xf32>, vector<16xi1>, vector<16xf32>
// CHECK:             vector.transfer_write %[[FIRST]]#3
// CHECK:             scf.for %{{.+}} = %c4 to %c24 step %c4 {
// CHECK:               %[[MIDDLE:.+]]:4 = scf.if %{{.+}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK-NOT:             vector.maskedload
// CHECK-NOT:             scf.for
// CHECK:               } else {
// CHECK-NOT:             scf.for
// CHECK:                 vector.maskedload
// CHECK:               vector.transfer_write %[[MIDDLE]]#3
// CHECK:             %[[LAST:.+]]:4 = scf.if %{{.+}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK:             vector.transfer_write %[[LAST]]#3
// CHECK-NOT:     memref.alloca
// CHECK:         return

// -----

// A direct convolution in the blocked layout reads its padded input in
// place as well, one element per row of its register tiles (7 pixels x 2
// blocks of output channels), each tile's window checked once: inside it,
// plain loads from the unpadded argument; where it meets the padding,
// loads at positions clamped into the argument, and the multiply-adds of
// the elements outside masked off (a select of the accumulator, which
// becomes a masked FMA). No padded copy is built.
#in = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d4, d2 + d5, d3 + d6, d8)>
#filter = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d4, d5, d6, d8, d7)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d7)>
flow.executable @direct_conv_in_place_dispatch_0 entry @direct_conv_in_place_dispatch_0 attributes {workgroup_count = array<i64: 28, 1, 1>} {
  builtin.module {
    func.func @direct_conv_in_place_dispatch_0(%x: tensor<1x2x28x28x16xf32>, %w: tensor<2x2x3x3x16x16xf32>) -> tensor<1x2x28x28x16xf32> attributes {flow.lowering_config = #flow.lowering_config<vector_bits = 512, workgroup_tile = [0, 0, 1, 0, 0, 0, 0, 0, 0], kernels = [#flow.kernel_config<strategy = "broadcast", cache_tiles = [1, 2, 1, 0, 0, 0, 0, 16, 0], cache_order = [0, 1, 2, 3, 7, 4, 5, 6, 8], register_tiles = [0, 2, 0, 7, 1, 1, 1, 16, 1], roles = [3, 7, 4]>]>} {
      %zero = arith.constant 0.0 : f32
      %p = tensor.pad %x low[0, 0, 1, 1, 0] high[0, 0, 1, 1, 0] {
      ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
        tensor.yield %zero : f32
      } {strata.pad_read_in_place} : tensor<1x2x28x28x16xf32> to tensor<1x2x30x30x16xf32>
      %e = tensor.empty() : tensor<1x2x28x28x16xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x28x28x16xf32>) -> tensor<1x2x28x28x16xf32>
      %r = linalg.generic {indexing_maps = [#in, #filter, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "reduction"]} ins(%p, %w : tensor<1x2x30x30x16xf32>, tensor<2x2x3x3x16x16xf32>) outs(%f : tensor<1x2x28x28x16xf32>) {
      ^bb0(%a: f32, %b: f32, %acc: f32):
        %m = arith.mulf %a, %b : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
      } -> tensor<1x2x28x28x16xf32>
      return %r : tensor<1x2x28x28x16xf32>
    }
  }
}
// CHECK-LABEL: func.func @direct_conv_in_place_dispatch_0
// CHECK-NOT:     memref.alloca
// CHECK:         scf.if
// CHECK:           memref.load %arg0[%c0, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<1x2x28x28x16xf32>
// CHECK-NOT:       arith.select
// CHECK:         } else {
// CHECK:           arith.maxsi
// CHECK:           arith.minsi
// CHECK:           memref.load %arg0[%c0, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<1x2x28x28x16xf32>
// CHECK:           arith.cmpi ult, %{{.+}}, %c28
// CHECK:           %[[SUM:.+]] = vector.fma
// CHECK:           arith.select %{{.+}}, %[[SUM]], %{{.+}} : vector<16xi1>, vector<16xf32>
// CHECK-NOT:     memref.alloca
// CHECK:         return
