// RUN: strata-compile %s --dump-after=vm | FileCheck %s
// RUN: strata-compile %s -o %t.smod

// A program that is already a vm.module (hand-written VM code, like the
// runtime's hostile-module tests) is serialized as written: no phase
// replaces it, and constants of equal type are not merged.
// CHECK-LABEL: vm.module @hand_written
// CHECK: vm.import @hal.devices.get
// CHECK: vm.func @main() -> i64
// CHECK-DAG: vm.const.i32 3
// CHECK-DAG: vm.const.i32 7
// CHECK-DAG: vm.const.i64 4611686018427387904
// CHECK: return
module {
  vm.module @hand_written {
    vm.import @hal.devices.get : (i32) -> !vm.ref<!hal.device> cconv "0i_r"
    vm.dependency "hal" version 1
    vm.func @main() -> i64 attributes {exported} {
      %c3 = vm.const.i32 3
      %c7 = vm.const.i32 7
      %sum = vm.add.i32 %c3, %c7
      %huge = vm.const.i64 4611686018427387904
      %d = vm.call @hal.devices.get(%sum) : (i32) -> !vm.ref<!hal.device>
      vm.return %huge : i64
    }
  }
}
