// RUN: strata-compile %s --dump-after=input | FileCheck %s

// Elementwise arith on tensors and CHECK become linalg on tensors.
// CHECK-LABEL: func.func @simple_mul
// CHECK:       %[[E:.+]] = tensor.empty() : tensor<4xf32>
// CHECK:       linalg.generic
// CHECK-SAME:    ins(%arg0, %arg1 : tensor<4xf32>, tensor<4xf32>) outs(%[[E]] : tensor<4xf32>)
// CHECK:         arith.mulf
// CHECK-NOT:   arith.mulf {{.*}} : tensor
func.func @simple_mul(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %arg0, %arg1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Chains of elementwise ops fuse into one generic.
// CHECK-LABEL: func.func @tosa_add_abs
// CHECK:         linalg.generic
// CHECK:           arith.addf
// CHECK:           math.absf
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     tosa.
func.func @tosa_add_abs(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tosa.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = tosa.abs %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// Private functions are inlined into their callers and dropped.
// CHECK-LABEL: func.func @calls_helper
// CHECK-NOT:     call
// CHECK:         arith.negf
// CHECK-NOT:   func.func private @helper
func.func private @helper(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.negf %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @calls_helper(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @helper(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
