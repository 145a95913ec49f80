// RUN: strata-opt %s --strata-convert-to-host-program --cse | FileCheck %s

// Intermediates share one slab per call; t3 reuses t1's bytes because t1
// is dead once t2 is computed. Only the result gets its own buffer.
func.func @chain(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %t1 = flow.dispatch @d::@d[[1, 1, 1]] (%arg0) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %t2 = flow.dispatch @d::@d[[1, 1, 1]] (%t1) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %t3 = flow.dispatch @d::@d[[1, 1, 1]] (%t2) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = flow.dispatch @d::@d[[1, 1, 1]] (%t3) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
// CHECK-LABEL: func.func @chain
// CHECK-SAME:    strata.transient_bytes = 128 : i64
// CHECK:         %[[C128:.+]] = arith.constant 128 : i64
// CHECK:         %[[SLAB:.+]] = hal.allocator.allocate %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[C128]]
// CHECK:         %[[C0:.+]] = arith.constant 0 : i64
// CHECK:         %[[C64:.+]] = arith.constant 64 : i64
// CHECK:         hal.command_buffer.dispatch {{.*}} bindings(%[[IN:.+]], %[[SLAB]]) offsets(%[[C0]], %[[C0]])
// CHECK:         hal.command_buffer.dispatch {{.*}} bindings(%[[SLAB]], %[[SLAB]]) offsets(%[[C0]], %[[C64]])
// CHECK:         hal.command_buffer.dispatch {{.*}} bindings(%[[SLAB]], %[[SLAB]]) offsets(%[[C64]], %[[C0]])
// CHECK:         %[[OUT:.+]] = hal.allocator.allocate
// CHECK:         hal.command_buffer.dispatch {{.*}} bindings(%[[SLAB]], %[[OUT]]) offsets(%[[C0]], %[[C0]])
// CHECK:         hal.buffer_view.create %[[OUT]], %[[C0]]
