// RUN: strata-opt %s --strata-clone-executables-per-target=targets=cpu,cuda | FileCheck %s

// Each executable is marked for the first target and cloned for the
// second, right after it, as a variant of the original; the dispatch still
// names the original.
// CHECK:      flow.executable @mul_dispatch_0 entry @mul_dispatch_0 attributes {strata.target = "cpu", workgroup_count = array<i64: 1, 1, 1>}
// CHECK:      flow.executable @mul_dispatch_0__cuda entry @mul_dispatch_0 attributes {strata.target = "cuda", strata.variant_of = @mul_dispatch_0, workgroup_count = array<i64: 1, 1, 1>}
// CHECK:      func.func @mul
// CHECK:        flow.dispatch @mul_dispatch_0::@mul_dispatch_0
flow.executable @mul_dispatch_0 entry @mul_dispatch_0 attributes {workgroup_count = array<i64: 1, 1, 1>} {
  builtin.module {
    func.func @mul_dispatch_0(%arg0: tensor<4xf32>) -> tensor<4xf32> {
      %0 = arith.mulf %arg0, %arg0 : tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
}
func.func @mul(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = flow.dispatch @mul_dispatch_0::@mul_dispatch_0[[1, 1, 1]] (%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
