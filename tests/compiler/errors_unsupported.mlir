// RUN: not strata-compile %s -o %t.smod 2>&1 | FileCheck %s

// A tensor op the host program cannot hold yet is named with its location.
// CHECK: errors_unsupported.mlir:[[@LINE+2]]:8: error: 'tensor.collapse_shape' op is not supported in the host program yet
func.func @collapse(%arg0: tensor<2x2xf32>) -> tensor<4xf32> {
  %0 = tensor.collapse_shape %arg0 [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  return %0 : tensor<4xf32>
}
