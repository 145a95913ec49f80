// A program already lowered to one vm.module (hand-written, or a
// --dump-after=vm dump edited) is serialized as it is: how the hostile
// corpus builds module files the compiler would never emit.
// RUN: strata-compile %s -o %t.smod
// RUN: strata-dump %t.smod | FileCheck %s
// RUN: strata-compile %s --dump-after=vm | FileCheck %s --check-prefix=DUMP

// CHECK: module "spin"
// CHECK: exports: 1
// CHECK: spin
// DUMP: vm.module @spin
module {
  vm.module @spin {
    vm.func @spin(%arg0: i32) -> i32 attributes {exported} {
      %c1 = vm.const.i32 1
      br ^bb1(%arg0 : i32)
    ^bb1(%0: i32):
      %1 = vm.add.i32 %0, %c1
      br ^bb1(%1 : i32)
    }
  }
}
