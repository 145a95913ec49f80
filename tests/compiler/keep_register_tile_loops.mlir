// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-keep-register-tile-loops))' --split-input-file | FileCheck %s

// A register tile's reduction loop: its accumulators are vector iter_args.
// CHECK-DAG:   #[[NO_UNROLL:.+]] = #llvm.loop_annotation<unroll = #{{.+}}>
// CHECK-DAG:   #{{.+}} = #llvm.loop_unroll<disable = true>
// CHECK-LABEL: func.func @accumulators_in_registers
// CHECK:         scf.for
// CHECK:         } {loop_annotation = #[[NO_UNROLL]]}
func.func @accumulators_in_registers(%a: memref<64x16xf32>, %b: memref<64x16xf32>) -> vector<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %init = vector.broadcast %zero : f32 to vector<16xf32>
  %sum = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %init) -> (vector<16xf32>) {
    %x = vector.transfer_read %a[%k, %c0], %zero {in_bounds = [true]} : memref<64x16xf32>, vector<16xf32>
    %w = vector.transfer_read %b[%k, %c0], %zero {in_bounds = [true]} : memref<64x16xf32>, vector<16xf32>
    %next = vector.fma %x, %w, %acc : vector<16xf32>
    scf.yield %next : vector<16xf32>
  }
  return %sum : vector<16xf32>
}

// -----

// FMAs whose accumulator stays in memory: the loop runs the tile all the
// same. The loop around it, with no vectors of its own, is LLVM's to
// unroll.
// CHECK-LABEL: func.func @fmas_in_the_body
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             vector.fma
// CHECK:           } {loop_annotation = #{{.+}}}
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @fmas_in_the_body(%a: memref<8x64x16xf32>, %c: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %k = %c0 to %c64 step %c1 {
      %x = vector.transfer_read %a[%i, %k, %c0], %zero {in_bounds = [true]} : memref<8x64x16xf32>, vector<16xf32>
      %acc = vector.transfer_read %c[%i, %c0], %zero {in_bounds = [true]} : memref<8x16xf32>, vector<16xf32>
      %next = vector.fma %x, %x, %acc : vector<16xf32>
      vector.transfer_write %next, %c[%i, %c0] {in_bounds = [true]} : vector<16xf32>, memref<8x16xf32>
    }
  }
  return
}

// -----

// Scalar loops (an elementwise op LLVM vectorizes itself) are left alone.
// CHECK-LABEL: func.func @scalar_loop
// CHECK-NOT:     loop_annotation
func.func @scalar_loop(%a: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c64 step %c1 {
    %x = memref.load %a[%i] : memref<64xf32>
    %y = arith.addf %x, %one : f32
    memref.store %y, %a[%i] : memref<64xf32>
  }
  return
}
