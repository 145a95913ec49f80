// RUN: strata-opt %s --strata-vmvx-convert-kernel-to-vm --cse --split-input-file --verify-diagnostics | FileCheck %s

// A dispatch entry point: bindings become vm.buffer refs followed by the six
// workgroup values (id x/y/z, count x/y/z); loads and stores address bytes.
// CHECK-LABEL: vm.module @kernel
// CHECK: vm.func @scale(%[[IN:.+]]: !vm.ref<!vm.buffer>, %[[OUT:.+]]: !vm.ref<!vm.buffer>, %[[ID:.+]]: i64, %{{.+}}: i64, %{{.+}}: i64, %[[COUNT:.+]]: i64, %{{.+}}: i64, %{{.+}}: i64) attributes {exported}
// CHECK-DAG: %[[FOUR:.+]] = vm.const.i64 4
// CHECK: %[[OFFSET:.+]] = vm.mul.i64 %[[ID]], %[[FOUR]]
// CHECK: %[[X:.+]] = vm.buffer.load.f32 %[[IN]][%[[OFFSET]]]
// CHECK: %[[E:.+]] = vm.math.f32 "exp" %[[X]]
// CHECK: %[[Y:.+]] = vm.mul.f32 %[[E]], %{{.+}}
// CHECK: vm.buffer.store.f32 %[[Y]], %[[OUT]][%[[OFFSET]]]
// CHECK: return
module {
  func.func @scale(%in: memref<8xf32>, %out: memref<8xf32>, %id: index, %count: index) {
    %two = arith.constant 2.0 : f32
    %x = memref.load %in[%id] : memref<8xf32>
    %e = math.exp %x : f32
    %y = arith.mulf %e, %two : f32
    memref.store %y, %out[%id] : memref<8xf32>
    return
  }
}

// -----

// Narrow integers live zero-extended in i32 registers; signed ops
// sign-extend them first (shl + shr.s) and mask the result back.
// CHECK-LABEL: vm.func @narrow
// CHECK: %[[V:.+]] = vm.buffer.load.i8.u
// CHECK: vm.shl.i32 %[[V]]
// CHECK: vm.shr.i32.s
// CHECK: vm.div.i32.s
// CHECK: vm.and.i32
// CHECK: vm.buffer.store.i8
module {
  func.func @narrow(%in: memref<4xi8>, %out: memref<4xi8>, %id: index, %count: index) {
    %three = arith.constant 3 : i8
    %x = memref.load %in[%id] : memref<4xi8>
    %q = arith.divsi %x, %three : i8
    memref.store %q, %out[%id] : memref<4xi8>
    return
  }
}

// -----

// Unordered float comparisons are negated ordered ones.
// CHECK-LABEL: vm.func @unordered
// CHECK: %[[LE:.+]] = vm.cmp.le.f32 %{{.+}}, %{{.+}}
// CHECK: vm.xor.i32 %[[LE]]
module {
  func.func @unordered(%in: memref<2xf32>, %out: memref<2xi8>, %id: index, %count: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %a = memref.load %in[%c0] : memref<2xf32>
    %b = memref.load %in[%c1] : memref<2xf32>
    %lt = arith.cmpf ult, %a, %b : f32
    %byte = arith.extui %lt : i1 to i8
    memref.store %byte, %out[%id] : memref<2xi8>
    return
  }
}

// -----

// f16 lives as its bits in i32 registers and computes in f32.
// CHECK-LABEL: vm.func @half
// CHECK: %[[BITS:.+]] = vm.buffer.load.i16.u
// CHECK: %[[X:.+]] = vm.ext.f16.f32 %[[BITS]]
// CHECK: %[[Y:.+]] = vm.add.f32 %[[X]], %[[X]]
// CHECK: %[[OUT:.+]] = vm.trunc.f32.f16 %[[Y]]
// CHECK: vm.buffer.store.i16 %[[OUT]]
module {
  func.func @half(%in: memref<2xf16>, %out: memref<2xf16>, %id: index, %count: index) {
    %x = memref.load %in[%id] : memref<2xf16>
    %y = arith.addf %x, %x : f16
    memref.store %y, %out[%id] : memref<2xf16>
    return
  }
}

// -----

module {
  func.func @fp8(%in: memref<2xf8E4M3FN>, %out: memref<2xf8E4M3FN>, %id: index, %count: index) {
    // expected-error @+1 {{loads 'f8E4M3FN', which the vmvx target does not support yet}}
    %x = memref.load %in[%id] : memref<2xf8E4M3FN>
    memref.store %x, %out[%id] : memref<2xf8E4M3FN>
    return
  }
}
