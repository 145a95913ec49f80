// RUN: not strata-compile %s -o %t.smod 2>&1 | FileCheck %s
// RUN: not strata-compile %s --dump-after=nonsense 2>&1 | FileCheck %s --check-prefix=PHASE

// PHASE: unknown phase 'nonsense' for --dump-after (phases: input dispatch-regions executables host target vm)

// CHECK: errors.mlir:[[@LINE+1]]:1: error: 'func.func' op argument 0 has dynamic shape 'tensor<?xf32>'; dynamic shapes are not supported yet
func.func @dynamic(%arg0: tensor<?xf32>) -> tensor<?xf32> {
  %0 = arith.negf %arg0 : tensor<?xf32>
  return %0 : tensor<?xf32>
}
