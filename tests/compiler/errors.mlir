// RUN: not strata-compile %s --target=vmvx -o %t.smod 2>&1 | FileCheck %s
// RUN: not strata-compile %s --target=cuda -o %t.smod 2>&1 | FileCheck %s --check-prefix=CUDA
// RUN: not strata-compile %s --dump-after=nonsense 2>&1 | FileCheck %s --check-prefix=PHASE

// PHASE: unknown phase 'nonsense' for --dump-after (phases: input dispatch-regions executables host target vm)

// Dynamic shapes run on the cpu target (tests/e2e); the others refuse them
// by name.
func.func @dynamic(%arg0: tensor<?xf32>) -> tensor<?xf32> {
  // CHECK: errors.mlir:[[@LINE+2]]:8: error: 'flow.executable' op has dynamic shapes; the vmvx target compiles static shapes only so far (--target=cpu runs them, or pin the shapes: --input-shape / --dim)
  // CUDA: errors.mlir:[[@LINE+1]]:8: error: 'flow.executable' op has dynamic shapes; the cuda target compiles static shapes only so far
  %0 = arith.negf %arg0 : tensor<?xf32>
  return %0 : tensor<?xf32>
}
