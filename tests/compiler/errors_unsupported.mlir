// RUN: not strata-compile %s -o %t.smod 2>&1 | FileCheck %s

// A tensor op the host program cannot hold yet is named with its location.
// CHECK: errors_unsupported.mlir:[[@LINE+2]]:8: error: 'tensor.bitcast' op is not supported in the host program yet
func.func @bitcast(%arg0: tensor<4xi32>) -> tensor<4xf32> {
  %0 = tensor.bitcast %arg0 : tensor<4xi32> to tensor<4xf32>
  return %0 : tensor<4xf32>
}
