// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-decompose-aggregate-ops))' | FileCheck %s

// linalg.softmax becomes max-reduce, exp, sum-reduce and divide.
// CHECK-LABEL: func.func @softmax
// CHECK-NOT:     linalg.softmax
// CHECK:         linalg.generic {{.*}}["parallel", "reduction"]
// CHECK:           arith.maxnumf
// CHECK:         linalg.generic
// CHECK:           math.exp
// CHECK:         linalg.generic {{.*}}["parallel", "reduction"]
// CHECK:           arith.addf
// CHECK:         linalg.generic
// CHECK:           arith.divf
func.func @softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %e = tensor.empty() : tensor<2x8xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}
