// RUN: strata-opt %s --strata-vmvx-lower-contractions --split-input-file | FileCheck %s

// A row-major f32 matmul on buffers becomes one microkernel call with the
// operands' strided metadata: lhs (off, stride_m, stride_k), rhs (off,
// stride_k, stride_n), out (off, stride_m, stride_n), then M, N, K.
// CHECK-LABEL: module
// CHECK: func.func private @vmvx.matmul.f32(memref<f32>, index, index, index, memref<f32>, index, index, index, memref<f32>, index, index, index, index, index, index)
// CHECK-LABEL: func.func @matmul
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK: %[[A:.+]], %[[AOFF:.+]], %{{.+}}:2, %[[ASTR:.+]]:2 = memref.extract_strided_metadata %arg0
// CHECK: %[[B:.+]], %[[BOFF:.+]], %{{.+}}:2, %[[BSTR:.+]]:2 = memref.extract_strided_metadata %arg1
// CHECK: %[[C:.+]], %[[COFF:.+]], %{{.+}}:2, %[[CSTR:.+]]:2 = memref.extract_strided_metadata %arg2
// CHECK: call @vmvx.matmul.f32(%[[A]], %[[AOFF]], %[[ASTR]]#0, %[[ASTR]]#1, %[[B]], %[[BOFF]], %[[BSTR]]#0, %[[BSTR]]#1, %[[C]], %[[COFF]], %[[CSTR]]#0, %[[CSTR]]#1, %[[C2]], %[[C4]], %[[C3]])
// CHECK-NOT: linalg.generic
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
func.func @matmul(%a: memref<2x3xf32>, %b: memref<3x4xf32>, %c: memref<2x4xf32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x3xf32>, memref<3x4xf32>) outs(%c : memref<2x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A batch dimension becomes a loop that moves every operand's offset.
// CHECK-LABEL: func.func @batch_matmul
// CHECK: scf.for %[[B:.+]] =
// CHECK:   arith.muli %[[B]]
// CHECK:   call @vmvx.matmul.f32
#lhs = affine_map<(b, m, n, k) -> (b, m, k)>
#rhs = affine_map<(b, m, n, k) -> (b, k, n)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @batch_matmul(%a: memref<2x2x3xf32>, %b: memref<2x3x4xf32>, %c: memref<2x2x4xf32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x2x3xf32>, memref<2x3x4xf32>) outs(%c : memref<2x2x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Integer contractions and other bodies stay loops.
// CHECK-LABEL: func.func @int_matmul
// CHECK: linalg.generic
// CHECK-NOT: vmvx.matmul
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
func.func @int_matmul(%a: memref<2x3xi32>, %b: memref<3x4xi32>, %c: memref<2x4xi32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x3xi32>, memref<3x4xi32>) outs(%c : memref<2x4xi32>) {
  ^bb0(%x: i32, %y: i32, %acc: i32):
    %p = arith.muli %x, %y : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}
