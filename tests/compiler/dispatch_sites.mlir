// RUN: strata-opt %s --strata-convert-to-host-program | FileCheck %s

// Every dispatch is a call site numbered from 1 in program order: the
// number travels in the upper half of the dispatch flags and the module
// lists each site's name, executable and FLOP count, also when two sites
// share one executable. A dispatch without a name is named after its
// executable.
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = flow.dispatch @main_dispatch_0::@main_dispatch_0[[1, 1, 1]] (%arg0) {strata.dispatch_flops = 8 : i64, strata.dispatch_name = "matmul:first"} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = flow.dispatch @main_dispatch_0::@main_dispatch_0[[1, 1, 1]] (%0) {strata.dispatch_flops = 8 : i64, strata.dispatch_name = "matmul:second"} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = flow.dispatch @main_dispatch_2::@main_dispatch_2[[1, 1, 1]] (%1) : (tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}
// CHECK:       module attributes {strata.dispatch_sites = [
// CHECK-SAME:    {executable = "main_dispatch_0", flops = 8 : i64, name = "matmul:first"},
// CHECK-SAME:    {executable = "main_dispatch_0", flops = 8 : i64, name = "matmul:second"},
// CHECK-SAME:    {executable = "main_dispatch_2", name = "main_dispatch_2"}]}
// CHECK-LABEL: func.func @main
// CHECK:         %[[SITE1:.+]] = arith.constant 4294967296 : i64
// CHECK:         hal.command_buffer.dispatch {{.*}} flags(%[[SITE1]])
// CHECK:         %[[SITE2:.+]] = arith.constant 8589934592 : i64
// CHECK:         hal.command_buffer.dispatch {{.*}} flags(%[[SITE2]])
// CHECK:         %[[SITE3:.+]] = arith.constant 12884901888 : i64
// CHECK:         hal.command_buffer.dispatch {{.*}} flags(%[[SITE3]])
