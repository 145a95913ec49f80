// RUN: strata-opt %s --split-input-file --strata-outline-conditionals --verify-diagnostics

// Only tensors cross into a branch's function: a scalar argument read in a
// branch has no producer to recompute there.
func.func @scalar_argument(%c: i1, %n: index, %x: tensor<?xf32>) -> tensor<?xf32> {
  %r = scf.if %c -> tensor<?xf32> {
    // expected-error @+1 {{a run-time conditional's branch uses a 'index' computed outside it that cannot be recomputed inside it}}
    %e = tensor.empty(%n) : tensor<?xf32>
    %f = linalg.negf ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) -> tensor<?xf32>
    scf.yield %f : tensor<?xf32>
  } else {
    scf.yield %x : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}

// -----

// Only tensors flow out of one.
func.func @scalar_result(%c: i1, %x: tensor<?xf32>) -> index {
  %r = scf.if %c -> index {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %x, %c0 : tensor<?xf32>
    // expected-error @+1 {{yields a 'index' from a run-time conditional; only tensors can be its results}}
    scf.yield %n : index
  } else {
    %c1 = arith.constant 1 : index
    scf.yield %c1 : index
  }
  return %r : index
}
