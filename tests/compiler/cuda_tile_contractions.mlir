// RUN: strata-opt %s --pass-pipeline="builtin.module(func.func(strata-cuda-tile-contractions,cse))" --split-input-file | FileCheck %s

// A workgroup's 64 rows of relu(A * B + bias) after a zero fill: 384 columns
// make 3 blocks of 128 per workgroup. The fill starts the 32 accumulators,
// each step stages 16 of the reduction in the two shared slices between
// barriers and reads them as 4-wide vectors; the tile then goes out through
// shared memory, neighbouring threads storing neighbouring columns, the bias
// and ReLU applied on the way.
// CHECK-LABEL: func.func @matmul_bias_relu
// CHECK-SAME:      attributes {strata.cuda.blocks_per_workgroup = 3 : i64}
// CHECK-DAG:     %[[A_SHARED:.+]] = memref.alloca() {alignment = 16 : i64} : memref<16x68xf32>
// CHECK-DAG:     %[[B_SHARED:.+]] = memref.alloca() {alignment = 16 : i64} : memref<16x132xf32>
// CHECK-DAG:     %[[C_SHARED:.+]] = memref.alloca() {alignment = 16 : i64} : memref<64x132xf32>
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         nvvm.read.ptx.sreg.tid.x
// CHECK:         %[[CTA:.+]] = nvvm.read.ptx.sreg.ctaid.x
// CHECK:         %[[CTA_INDEX:.+]] = arith.index_castui %[[CTA]]
// CHECK:         %[[PART:.+]] = arith.remui %[[CTA_INDEX]], %c3
// CHECK:         scf.for %[[M0:.+]] = %{{.+}} to %{{.+}} step %c64 {
// CHECK:           %[[N_START:.+]] = arith.muli %[[PART]], %c128
// CHECK:           scf.for %[[N0:.+]] = %[[N_START]] to %{{.+}} step %c384
// CHECK:             %[[ACC:.+]]:44 = scf.for %[[K0:.+]] = %{{.+}} to %{{.+}} step %c16 iter_args(%{{.+}} = %[[ZERO]], %{{.+}} = %[[ZERO]],
// CHECK-COUNT-4:       memref.store %{{.+}}, %[[A_SHARED]]
// CHECK-COUNT-8:       memref.store %{{.+}}, %[[B_SHARED]]
// CHECK:               nvvm.barrier0
// CHECK:               scf.for
// CHECK:                 vector.load %[[A_SHARED]][%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<16x68xf32>, vector<4xf32>
// CHECK-COUNT-2:         vector.load %[[B_SHARED]]
// CHECK-COUNT-32:        llvm.intr.fma
// CHECK:               nvvm.barrier0
// CHECK:             %[[FIRST:.+]] = vector.from_elements %[[ACC]]#0, %[[ACC]]#1, %[[ACC]]#2, %[[ACC]]#3
// CHECK:             vector.store %[[FIRST]], %[[C_SHARED]]{{.+}} {alignment = 16 : i64}
// CHECK-COUNT-7:     vector.store %{{.+}}, %[[C_SHARED]]
// CHECK:             nvvm.barrier0
// CHECK:             scf.if
// CHECK:               %[[VALUE:.+]] = memref.load %[[C_SHARED]]
// CHECK:               %[[BIAS:.+]] = memref.load %arg0
// CHECK:               %[[SUM:.+]] = arith.addf %[[VALUE]], %[[BIAS]]
// CHECK:               %[[RELU:.+]] = arith.maximumf %[[SUM]], %[[ZERO]]
// CHECK:               memref.store %[[RELU]], %[[C:.+]][
// CHECK-COUNT-31:    scf.if
// CHECK:             nvvm.barrier0
// CHECK:         } {strata.cuda.block_cooperative}
// CHECK-NOT:     linalg.generic
// CHECK:         return
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#n = affine_map<(m, n) -> (n)>
func.func @matmul_bias_relu(%bias: memref<384xf32>, %a: memref<512x256xf32>,
                            %b: memref<256x384xf32>, %c: memref<512x384xf32>,
                            %id: index, %count: index) {
  %zero = arith.constant 0.0 : f32
  %c64 = arith.constant 64 : index
  %row = arith.muli %id, %c64 : index
  %a_rows = memref.subview %a[%row, 0] [64, 256] [1, 1] : memref<512x256xf32> to memref<64x256xf32, strided<[256, 1], offset: ?>>
  %c_rows = memref.subview %c[%row, 0] [64, 384] [1, 1] : memref<512x384xf32> to memref<64x384xf32, strided<[384, 1], offset: ?>>
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%c_rows : memref<64x384xf32, strided<[384, 1], offset: ?>>) {
  ^bb0(%out: f32):
    linalg.yield %zero : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a_rows, %b : memref<64x256xf32, strided<[256, 1], offset: ?>>, memref<256x384xf32>)
      outs(%c_rows : memref<64x384xf32, strided<[384, 1], offset: ?>>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #n, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c_rows, %bias : memref<64x384xf32, strided<[384, 1], offset: ?>>, memref<384xf32>)
      outs(%c_rows : memref<64x384xf32, strided<[384, 1], offset: ?>>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A batch of A * B^T on f16 inputs with a dynamic column count: one block
// per workgroup walks every column tile, the batch loop is the outermost,
// inputs are extended to f32 as they are staged (the reduction is the
// innermost dimension of both, so neighbouring threads read along it), and
// with no fill the accumulators start from C.
// CHECK-LABEL: func.func @batch_matmul_transposed_f16
// CHECK-NOT:     strata.cuda.blocks_per_workgroup
// CHECK-NOT:     nvvm.read.ptx.sreg.ctaid.x
// CHECK:         %[[N:.+]] = memref.dim %arg1, %c1
// CHECK:         scf.for %[[BATCH:.+]] = %c0 to %c2 step %c1
// CHECK:           scf.for %{{.+}} = %c0 to %c64 step %c64
// CHECK:             scf.for %{{.+}} = %c0 to %[[N]] step %c128
// CHECK:               %[[C0:.+]] = memref.load %arg2[%[[BATCH]], %{{.+}}, %{{.+}}]
// CHECK:               scf.for %{{.+}} iter_args(%{{.+}} = %[[C0]],
// CHECK:                 arith.remui %{{.+}}, %c16
// CHECK:                 arith.divui %{{.+}}, %c16
// CHECK:                 %[[X:.+]] = memref.load %arg0[%[[BATCH]], %{{.+}}, %{{.+}}] : memref<2x64x32xf16>
// CHECK:                 %[[X32:.+]] = arith.extf %[[X]] : f16 to f32
// CHECK:                 arith.select %{{.+}}, %[[X32]], %{{.+}} : f32
// CHECK:         } {strata.cuda.block_cooperative}
// CHECK-NOT:     linalg.generic
#bmk = affine_map<(b, m, n, k) -> (b, m, k)>
#bnk = affine_map<(b, m, n, k) -> (b, n, k)>
#bmn = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @batch_matmul_transposed_f16(%a: memref<2x64x32xf16>, %b: memref<2x?x32xf16>,
                                       %c: memref<2x64x?xf32>) {
  linalg.generic {indexing_maps = [#bmk, #bnk, #bmn], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x64x32xf16>, memref<2x?x32xf16>) outs(%c : memref<2x64x?xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xf = arith.extf %x : f16 to f32
    %yf = arith.extf %y : f16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A convolution as a product ([F, C*Kh*Kw] x [N, C*Kh*Kw, Oh*Ow]): the image
// loop of one iteration is absent from the filter, a batch of one.
// CHECK-LABEL: func.func @convolution_product
// CHECK-SAME:      attributes {strata.cuda.blocks_per_workgroup = 25 : i64}
// CHECK:         scf.for %[[IMAGE:.+]] = %c0 to %c1 step %c1
// CHECK:         } {strata.cuda.block_cooperative}
// CHECK-NOT:     linalg.generic
func.func @convolution_product(%filter: memref<64x576xf32>, %patches: memref<1x576x3136xf32>,
                               %out: memref<1x64x3136xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(n, f, p) -> (n, f, p)>], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%out : memref<1x64x3136xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  linalg.generic {indexing_maps = [affine_map<(n, f, p, k) -> (f, k)>, affine_map<(n, f, p, k) -> (n, k, p)>, affine_map<(n, f, p, k) -> (n, f, p)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%filter, %patches : memref<64x576xf32>, memref<1x576x3136xf32>) outs(%out : memref<1x64x3136xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A dispatch of one workgroup runs its work under a guard on the workgroup
// id (uniform over the block): the kernel is written inside it.
// CHECK-LABEL: func.func @one_workgroup
// CHECK:         scf.if
// CHECK:           scf.for
// CHECK:           } {strata.cuda.block_cooperative}
// CHECK-NOT:     linalg.generic
func.func @one_workgroup(%a: memref<32x64xf32>, %b: memref<64x512xf32>, %c: memref<32x512xf32>, %id: index, %count: index) {
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %id, %c0 : index
  scf.if %first {
    %zero = arith.constant 0.0 : f32
    linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
        outs(%c : memref<32x512xf32>) {
    ^bb0(%out: f32):
      linalg.yield %zero : f32
    }
    linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : memref<32x64xf32>, memref<64x512xf32>) outs(%c : memref<32x512xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
  }
  return
}

// -----

// One row (a Linear layer at batch 1): each warp sums an eighth of the
// reduction for 32 columns (its lane's column clamped at the edge), the
// parts meet in shared memory, and the block adds them to the fill value,
// applies the bias and stores; 100 columns are 4 blocks of 32.
// CHECK-LABEL: func.func @one_row
// CHECK-SAME:      attributes {strata.cuda.blocks_per_workgroup = 4 : i64}
// CHECK:         %[[PARTIALS:.+]] = memref.alloca() {alignment = 16 : i64} : memref<8x15x32xf32>
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         scf.for %[[N0:.+]] = %{{.+}} to %c100 step %c128 {
// CHECK:           %[[PART:.+]] = arith.ceildivui %c64, %c8
// CHECK:           %[[SUM:.+]] = scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %c1 iter_args(%[[ACC:.+]] = %[[ZERO]]) -> (f32) {
// CHECK:             %[[B:.+]] = memref.load %arg2[%[[K]], %{{.+}}]
// CHECK:             %[[A:.+]] = memref.load %arg1[%c0, %[[K]]]
// CHECK:             llvm.intr.fma(%[[A]], %[[B]], %[[ACC]])
// CHECK:           memref.store %[[SUM]], %[[PARTIALS]]
// CHECK:           nvvm.barrier0
// CHECK:           scf.if
// CHECK-COUNT-8:     arith.addf
// CHECK:             memref.load %arg0
// CHECK:             arith.addf
// CHECK:             memref.store
// CHECK:           nvvm.barrier0
// CHECK:         } {strata.cuda.block_cooperative}
// CHECK-NOT:     linalg.generic
func.func @one_row(%bias: memref<100xf32>, %a: memref<1x64xf32>, %b: memref<64x100xf32>, %c: memref<1x100xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      outs(%c : memref<1x100xf32>) {
  ^bb0(%out: f32):
    linalg.yield %zero : f32
  }
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<1x64xf32>, memref<64x100xf32>) outs(%c : memref<1x100xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<1x100xf32>, memref<100xf32>) outs(%c : memref<1x100xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Left to the per-element lowering: an integer product, a body that is not
// a multiply-add, a consumer that reads other elements of C, and a
// temporary the kernel writes.
// CHECK-LABEL: func.func @integer_product
// CHECK:         linalg.generic
// CHECK-NOT:     strata.cuda.block_cooperative
#mk2 = affine_map<(m, n, k) -> (m, k)>
#kn2 = affine_map<(m, n, k) -> (k, n)>
#mn2 = affine_map<(m, n, k) -> (m, n)>
func.func @integer_product(%a: memref<64x64xi32>, %b: memref<64x64xi32>, %c: memref<64x64xi32>) {
  linalg.generic {indexing_maps = [#mk2, #kn2, #mn2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x64xi32>, memref<64x64xi32>) outs(%c : memref<64x64xi32>) {
  ^bb0(%x: i32, %y: i32, %acc: i32):
    %p = arith.muli %x, %y : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// CHECK-LABEL: func.func @max_plus
// CHECK:         linalg.generic
// CHECK-NOT:     strata.cuda.block_cooperative
func.func @max_plus(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [#mk2, #kn2, #mn2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.addf %x, %y : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @transposing_consumer
// CHECK:         linalg.generic
// CHECK:         linalg.generic
// CHECK-NOT:     strata.cuda.block_cooperative
func.func @transposing_consumer(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [#mk2, #kn2, #mn2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(m, n) -> (n, m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x64xf32>) outs(%c : memref<64x64xf32>) {
  ^bb0(%x: f32, %out: f32):
    %s = arith.addf %x, %out : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @temporary
// CHECK:         memref.alloca() : memref<64x64xf32>
// CHECK:         linalg.generic
// CHECK-NOT:     strata.cuda.block_cooperative
func.func @temporary(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  %tmp = memref.alloca() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#mk2, #kn2, #mn2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%tmp : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  memref.copy %tmp, %c : memref<64x64xf32> to memref<64x64xf32>
  return
}
