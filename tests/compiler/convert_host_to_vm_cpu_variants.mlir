// RUN: strata-opt %s --split-input-file --verify-diagnostics --strata-convert-host-to-vm="module-name=example" | FileCheck %s

// An executable compiled for two CPUs: `__init` asks, without failing,
// whether the CPU has the richer variant's features and loads it if so;
// else it requires the other variant's features (failing with the names of
// the missing ones) and loads that one.
hal.executable.binary @exe format("elf-x86_64") {data = dense<[1]> : vector<1xi8>, export_binding_counts = array<i64: 1>, required_cpu_features = ["sse4.1"]}
hal.executable.binary @exe__x86_64_v3 format("elf-x86_64") {data = dense<[3]> : vector<1xi8>, export_binding_counts = array<i64: 1>, required_cpu_features = ["avx2", "fma", "sse4.1"], variant_of = @exe}
func.func @run() -> !hal.executable {
  %exe = hal.executable.lookup @exe : !hal.executable
  return %exe : !hal.executable
}
// CHECK:      vm.module @example {
// CHECK-DAG:    vm.rodata @exe_data dense<1> : vector<1xi8>
// CHECK-DAG:    vm.rodata @exe__x86_64_v3_data dense<3> : vector<1xi8>
// CHECK-DAG:    vm.global.ref @exe : !vm.ref<!hal.executable>
// CHECK-NOT:    vm.global.ref @exe__x86_64_v3
// CHECK:        vm.func @__init() attributes {exported}
// CHECK:          vm.const.ref.rodata @__cpu_features_present_category
// CHECK:          %[[KEY:.+]] = vm.const.ref.rodata @__cpu_features :
// CHECK:          %{{.+}}:2 = call @hal.device.query.i64(%{{.+}}, %{{.+}}, %[[KEY]])
// CHECK:          cond_br %{{.+}}, ^[[LOAD_RICH:bb[0-9]+]], ^[[NEXT:bb[0-9]+]]
// CHECK:        ^[[LOAD_RICH]]:
// CHECK:          vm.const.ref.rodata @exe__x86_64_v3_data
// CHECK:          %[[RICH_EXE:.+]] = call @hal.executable.create
// CHECK:          vm.global.store.ref %[[RICH_EXE]], @exe
// CHECK:          br ^[[LOADED:bb[0-9]+]]
// CHECK:        ^[[NEXT]]:
// CHECK:          vm.const.ref.rodata @__cpu_features_category
// CHECK:          vm.const.ref.rodata @__cpu_features_1 :
// CHECK:          call @hal.device.query.i64
// CHECK:          vm.const.ref.rodata @exe_data
// CHECK:          call @hal.executable.create
// CHECK:          br ^[[LOADED]]
// CHECK:        ^[[LOADED]]:
// CHECK-DAG:    vm.rodata @__cpu_features_present_category "hal.cpu.features.present"
// CHECK-DAG:    vm.rodata @__cpu_features "avx2,fma,sse4.1"
// CHECK-DAG:    vm.rodata @__cpu_features_1 "sse4.1"

// -----

hal.executable.binary @exe format("elf-x86_64") {data = dense<[1]> : vector<1xi8>, export_binding_counts = array<i64: 1>}
// expected-error @+1 {{is a variant of @missing, which is not an earlier executable binary}}
hal.executable.binary @exe__v2 format("elf-x86_64") {data = dense<[3]> : vector<1xi8>, export_binding_counts = array<i64: 1>, variant_of = @missing}
