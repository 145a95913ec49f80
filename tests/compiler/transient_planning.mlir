// RUN: strata-opt %s --split-input-file --strata-convert-to-host-program --cse | FileCheck %s

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

// -----

// Intermediates of dynamic size are planned like static ones in a slab of
// their own, in units of the product of their dynamic dims (here the row
// count): t1 (16 bytes a row) at 0, t2 (32) at 64 while t1 is still read,
// t3 back at 0, t1 being dead; one allocation of rows x 128 bytes per
// call, each offset rows x its unit offset. The result escapes: its own
// buffer.
func.func @dynamic_chain(%arg0: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %arg0, %c0 : tensor<?x4xf32>
  %t1 = flow.dispatch @d::@d[[1, 1, 1]] (%arg0) constants(%n) dims(%n) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %t2 = flow.dispatch @d::@d[[1, 1, 1]] (%t1) constants(%n) dims(%n) : (tensor<?x4xf32>) -> tensor<?x8xf32>
  %t3 = flow.dispatch @d::@d[[1, 1, 1]] (%t2) constants(%n) dims(%n) : (tensor<?x8xf32>) -> tensor<?x4xf32>
  %r = flow.dispatch @d::@d[[1, 1, 1]] (%t3) constants(%n) dims(%n) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
// CHECK-LABEL: func.func @dynamic_chain
// CHECK-SAME:    strata.transient_bytes = 0 : i64
// CHECK:         %[[ROWS:.+]] = hal.buffer_view.dim
// CHECK:         %[[C128:.+]] = arith.constant 128 : i64
// CHECK:         %[[BYTES:.+]] = arith.muli %[[ROWS]], %[[C128]] : i64
// CHECK:         %[[SLAB:.+]] = hal.allocator.allocate %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[BYTES]]
// CHECK:         hal.command_buffer.dispatch {{.*}} bindings(%{{.+}}, %[[SLAB]]) offsets(%[[C0:.+]], %[[C0]])
// CHECK:         %[[C64:.+]] = arith.constant 64 : i64
// CHECK:         %[[T2:.+]] = arith.muli %[[ROWS]], %[[C64]] : i64
// CHECK:         hal.command_buffer.dispatch {{.*}} bindings(%[[SLAB]], %[[SLAB]]) offsets(%[[C0]], %[[T2]])
// CHECK:         hal.command_buffer.dispatch {{.*}} bindings(%[[SLAB]], %[[SLAB]]) offsets(%[[T2]], %[[C0]])
// CHECK-NOT:     hal.allocator.allocate {{.*}}%[[BYTES]]
// CHECK:         %[[OUT:.+]] = hal.allocator.allocate
// CHECK:         hal.command_buffer.dispatch {{.*}} bindings(%[[SLAB]], %[[OUT]]) offsets(%[[C0]], %[[C0]])
