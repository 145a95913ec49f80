// RUN: strata-opt %s --strata-convert-host-to-vm="module-name=example" | FileCheck %s

// hal ops become calls of `hal` imports with the runtime's calling
// conventions; the executable becomes rodata plus a global set in __init.
hal.executable.binary @exe format("elf-x86_64") {data = dense<[127, 69, 76, 70]> : vector<4xi8>, export_binding_counts = array<i64: 2>}
func.func @run(%arg0: !hal.buffer_view) -> !hal.buffer_view attributes {strata.abi.arguments = [tensor<4xf32>], strata.abi.results = [tensor<4xf32>]} {
  %c0 = arith.constant 0 : i32
  %c4 = arith.constant 4 : i64
  %et = arith.constant 553648160 : i32
  %enc = arith.constant 1 : i32
  %dev = hal.devices.get %c0 : (i32) -> !hal.device
  hal.buffer_view.assert %arg0 message("argument 0 of @run") element_type(%et) encoding(%enc) shape([%c4])
  %buf = hal.buffer_view.buffer %arg0 : (!hal.buffer_view) -> !hal.buffer
  %exe = hal.executable.lookup @exe : !hal.executable
  %view = hal.buffer_view.create %buf, %c4, %c4, %et, %enc, %c4, %c4 : (!hal.buffer, i64, i64, i32, i32, i64, i64) -> !hal.buffer_view
  return %view : !hal.buffer_view
}
// CHECK:      vm.module @example {
// CHECK-DAG:    vm.import @hal.devices.get : (i32) -> !vm.ref<!hal.device> cconv "0i_r"
// CHECK-DAG:    vm.import @hal.buffer_view.assert : {{.*}} cconv "0rriiCID_v"
// CHECK-DAG:    vm.import @hal.buffer_view.create : {{.*}} cconv "0rIIiiCID_r"
// CHECK-DAG:    vm.import @hal.executable.create : {{.*}} cconv "0rIrrr_r"
// CHECK-DAG:    vm.dependency "hal" version 2
// CHECK-DAG:    vm.rodata @exe_format "elf-x86_64"
// CHECK-DAG:    vm.rodata @exe_data dense<[127, 69, 76, 70]> : vector<4xi8> {alignment = 64 : i64}
// CHECK-DAG:    vm.global.ref @exe : !vm.ref<!hal.executable>
// CHECK:        vm.func @run(%[[ARG:.+]]: !vm.ref<!hal.buffer_view>) -> !vm.ref<!hal.buffer_view> attributes {exported, strata.abi.arguments = [tensor<4xf32>]
// CHECK:          %[[MSG:.+]] = vm.const.ref.rodata @message : !vm.ref<!vm.buffer>
// CHECK:          call @hal.buffer_view.assert(%[[ARG]], %[[MSG]], %{{.+}}, %{{.+}}, %{{.+}}) {segment_sizes = array<i32: 1>}
// CHECK:          vm.global.load.ref @exe : !vm.ref<!hal.executable>
// CHECK:          %[[VIEW:.+]] = call @hal.buffer_view.create({{.*}}) {segment_sizes = array<i32: 2>}
// CHECK:          return %[[VIEW]]
// CHECK:        vm.func @__init() attributes {exported}
// CHECK:          %[[EXE:.+]] = call @hal.executable.create
// CHECK:          vm.global.store.ref %[[EXE]], @exe
