// RUN: strata-opt %s --verify-diagnostics

// A dispatch states every dynamic dim of its results: the host allocates
// them before it runs.
func.func @missing_dims(%a: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  // expected-error @+1 {{'flow.dispatch' op has 0 result dims for 1 dynamic dims of its results}}
  %0 = flow.dispatch @e::@e[[1, 1, 1]] (%a) constants(%n) : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
