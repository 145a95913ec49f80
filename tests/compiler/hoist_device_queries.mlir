// RUN: strata-opt %s --split-input-file --strata-hoist-device-queries | FileCheck %s

// The device is looked up once, at the start of the existing __init; the
// function loads it from a global. Its allocator is still asked for at
// each call (a device's allocator may be replaced after loading).
vm.module @m {
  vm.import @hal.devices.get : (i32) -> !vm.ref<!hal.device> cconv "0i_r"
  vm.import @hal.device.allocator : (!vm.ref<!hal.device>) -> !vm.ref<!hal.allocator> cconv "0r_r"
  vm.import @hal.fence.create : (!vm.ref<!hal.device>, i32) -> !vm.ref<!hal.fence> cconv "0ri_r"
  vm.func @run() -> (!vm.ref<!hal.allocator>, !vm.ref<!hal.fence>) attributes {exported} {
    %c0 = vm.const.i32 0
    %device = vm.call @hal.devices.get(%c0) : (i32) -> !vm.ref<!hal.device>
    %allocator = vm.call @hal.device.allocator(%device) : (!vm.ref<!hal.device>) -> !vm.ref<!hal.allocator>
    %fence = vm.call @hal.fence.create(%device, %c0) : (!vm.ref<!hal.device>, i32) -> !vm.ref<!hal.fence>
    vm.return %allocator, %fence : !vm.ref<!hal.allocator>, !vm.ref<!hal.fence>
  }
  vm.func @__init() attributes {exported} {
    %c7 = vm.const.i32 7
    vm.return
  }
}
// CHECK-LABEL: vm.module @m
// CHECK:         vm.global.ref @__device_0 : !vm.ref<!hal.device>
// CHECK:         vm.func @run()
// CHECK-NOT:       @hal.devices.get
// CHECK:           %[[DEVICE:.+]] = vm.global.load.ref @__device_0 : !vm.ref<!hal.device>
// CHECK:           %[[ALLOCATOR:.+]] = call @hal.device.allocator(%[[DEVICE]])
// CHECK:           %[[FENCE:.+]] = call @hal.fence.create(%[[DEVICE]]
// CHECK:           return %[[ALLOCATOR]], %[[FENCE]]
// CHECK:         vm.func @__init()
// CHECK-NEXT:      %[[ZERO:.+]] = vm.const.i32 0
// CHECK-NEXT:      %[[D:.+]] = call @hal.devices.get(%[[ZERO]])
// CHECK-NEXT:      vm.global.store.ref %[[D]], @__device_0
// CHECK-NEXT:      vm.const.i32 7

// -----

// Without an __init one is created; a device ordinal computed at run time
// stays a call.
vm.module @n {
  vm.import @hal.devices.get : (i32) -> !vm.ref<!hal.device> cconv "0i_r"
  vm.func @pick(%ordinal: i32) -> (!vm.ref<!hal.device>, !vm.ref<!hal.device>) attributes {exported} {
    %c1 = vm.const.i32 1
    %fixed = vm.call @hal.devices.get(%c1) : (i32) -> !vm.ref<!hal.device>
    %chosen = vm.call @hal.devices.get(%ordinal) : (i32) -> !vm.ref<!hal.device>
    vm.return %fixed, %chosen : !vm.ref<!hal.device>, !vm.ref<!hal.device>
  }
}
// CHECK-LABEL: vm.module @n
// CHECK:         vm.global.ref @__device_1 : !vm.ref<!hal.device>
// CHECK:         vm.func @pick(%[[ORDINAL:.+]]: i32)
// CHECK:           vm.global.load.ref @__device_1
// CHECK:           call @hal.devices.get(%[[ORDINAL]])
// CHECK:         vm.func @__init() attributes {exported}
// CHECK-NEXT:      %[[ONE:.+]] = vm.const.i32 1
// CHECK-NEXT:      %[[D:.+]] = call @hal.devices.get(%[[ONE]])
// CHECK-NEXT:      vm.global.store.ref %[[D]], @__device_1
// CHECK-NEXT:      return
