// RUN: strata-opt %s --strata-cuda-distribute-to-threads --split-input-file --verify-diagnostics | FileCheck %s

// Each outermost parallel loop runs over the block's threads: thread t takes
// iterations t, t + blockDim, ... of the flattened 4x8 space (the inner
// dimension fastest), and a barrier ends the phase. The write outside any
// loop runs on thread 0; the workgroup temporary moves to shared memory.
// CHECK: memref.global "private" @__workgroup_temporary : memref<4x8xf32, 3> = uninitialized {alignment = 16 : i64}
// CHECK-LABEL: func.func @kernel
// CHECK-DAG:     %[[TID:.+]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-DAG:     %[[NTID:.+]] = nvvm.read.ptx.sreg.ntid.x : i32
// CHECK-DAG:     %[[T:.+]] = arith.index_castui %[[TID]] : i32 to index
// CHECK-DAG:     %[[N:.+]] = arith.index_castui %[[NTID]] : i32 to index
// CHECK:         %[[SHARED:.+]] = memref.get_global @__workgroup_temporary : memref<4x8xf32, 3>
// CHECK:         %[[TMP:.+]] = memref.memory_space_cast %[[SHARED]] : memref<4x8xf32, 3> to memref<4x8xf32>
// CHECK:         scf.for %[[L:.+]] = %[[T]] to %{{.+}} step %[[N]] {
// CHECK:           %[[J:.+]] = arith.remui %[[L]], %{{.+}} : index
// CHECK:           %[[I:.+]] = arith.divui %[[L]], %{{.+}} : index
// CHECK:           memref.load %arg0[%{{.+}}, %{{.+}}]
// CHECK:           memref.store %{{.+}}, %[[TMP]][%{{.+}}, %{{.+}}]
// CHECK:         }
// CHECK-NEXT:    nvvm.barrier0
// CHECK:         scf.for %{{.+}} = %[[T]] to %{{.+}} step %[[N]] {
// CHECK:           memref.load %[[TMP]]
// CHECK:           memref.store %{{.+}}, %arg1
// CHECK:         }
// CHECK-NEXT:    nvvm.barrier0
// CHECK:         %[[FIRST:.+]] = arith.cmpi eq, %[[T]], %{{.+}} : index
// CHECK:         scf.if %[[FIRST]] {
// CHECK-NEXT:      memref.store %{{.+}}, %arg1[%{{.+}}, %{{.+}}]
// CHECK-NEXT:    }
// CHECK-NEXT:    nvvm.barrier0
// CHECK-NEXT:    return
func.func @kernel(%in: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %tmp = memref.alloca() : memref<4x8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %in[%i, %j] : memref<4x8xf32>
    %d = arith.addf %v, %v : f32
    memref.store %d, %tmp[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %tmp[%i, %j] : memref<4x8xf32>
    memref.store %v, %out[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  memref.store %zero, %out[%c0, %c0] : memref<4x8xf32>
  return
}

// -----

// Uniform loops around parallel work run on every thread; the parallel
// loops inside are distributed, with a barrier after each.
// CHECK-LABEL: func.func @sequential_steps
// CHECK:         scf.for %{{.+}} = %c0 to %c3 step %c1 {
// CHECK:           scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK:           nvvm.barrier0
// CHECK:         }
func.func @sequential_steps(%buf: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c16 = arith.constant 16 : index
  scf.for %step = %c0 to %c3 step %c1 {
    scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
      %v = memref.load %buf[%i] : memref<16xf32>
      %d = arith.addf %v, %v : f32
      memref.store %d, %buf[%i] : memref<16xf32>
      scf.reduce
    }
  }
  return
}

// -----

func.func @reduces_into_results(%buf: memref<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{reduces into results; the cuda target distributes only loops without results}}
  %sum = scf.parallel (%i) = (%c0) to (%c16) step (%c1) init (%zero) -> f32 {
    %v = memref.load %buf[%i] : memref<16xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  return %sum : f32
}

// -----

func.func @too_much_shared_memory(%buf: memref<16xf32>) {
  // expected-error @+1 {{needs 65536 bytes of workgroup temporaries in all; a thread block of the cuda target has 49152 bytes of shared memory}}
  %tmp = memref.alloca() : memref<16384xf32>
  return
}

// -----

// Code written for the whole block (a tiled contraction) runs on every
// thread as it is, its barriers inside, and a barrier ends it.
// CHECK-LABEL: func.func @block_cooperative
// CHECK:         scf.for
// CHECK:           nvvm.barrier0
// CHECK:           memref.store %{{.+}}, %arg0
// CHECK:         }
// CHECK-NOT:     strata.cuda.block_cooperative
// CHECK-NEXT:    nvvm.barrier0
// CHECK-NEXT:    return
func.func @block_cooperative(%out: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %t = arith.index_castui %tid : i32 to index
  scf.for %i = %c0 to %c4 step %c1 {
    nvvm.barrier0
    memref.store %one, %out[%t] : memref<256xf32>
  } {strata.cuda.block_cooperative}
  return
}

// -----

// Uniform control flow around such code runs on every thread too.
// CHECK-LABEL: func.func @block_cooperative_under_guard
// CHECK:         scf.if %arg1 {
// CHECK-NEXT:      scf.for
// CHECK:           }
// CHECK-NEXT:      nvvm.barrier0
// CHECK-NEXT:    }
func.func @block_cooperative_under_guard(%out: memref<256xf32>, %first: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %t = arith.index_castui %tid : i32 to index
  scf.if %first {
    scf.for %i = %c0 to %c4 step %c1 {
      nvvm.barrier0
      memref.store %one, %out[%t] : memref<256xf32>
    } {strata.cuda.block_cooperative}
  }
  return
}
