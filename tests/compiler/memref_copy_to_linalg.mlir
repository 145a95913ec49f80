// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-memref-copy-to-linalg))' | FileCheck %s

// A strided copy would need the `memrefCopy` runtime function; as
// linalg.copy it lowers to loops.
// CHECK-LABEL: func.func @strided_copy
// CHECK-NOT:     memref.copy
// CHECK:         linalg.copy ins(%{{.+}} : memref<2x3xf32, strided<[8, 1], offset: 5>>) outs(%{{.+}} : memref<2x3xf32>)
func.func @strided_copy(%a: memref<2x3xf32, strided<[8, 1], offset: 5>>, %b: memref<2x3xf32>) {
  memref.copy %a, %b : memref<2x3xf32, strided<[8, 1], offset: 5>> to memref<2x3xf32>
  return
}
