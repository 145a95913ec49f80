// RUN: strata-opt %s --strata-convert-to-host-program --verify-diagnostics > /dev/null

// A concatenation that interleaves its operands' bytes (a batch of two)
// cannot be a buffer of the host program: dispatch formation makes it a
// dispatch, and one left over is an error.
func.func @interleaved(%arg0: tensor<2x16xf32>) -> tensor<2x4xf32> {
  %0 = flow.dispatch @d::@d[[1, 1, 1]] (%arg0) : (tensor<2x16xf32>) -> tensor<2x16xf32>
  // expected-error @+1 {{concatenates along a dimension with non-unit dimensions before it; only a dispatch can}}
  %1 = tensor.concat dim(1) %0, %0 : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x32xf32>
  %2 = flow.dispatch @d::@d[[1, 1, 1]] (%1) : (tensor<2x32xf32>) -> tensor<2x4xf32>
  return %2 : tensor<2x4xf32>
}
