// RUN: strata-opt %s --split-input-file --strata-convert-to-host-program | FileCheck %s

// A concatenation of whole byte ranges is a storage of the slab: each
// operand's dispatch writes its part in place (the first at the
// concatenation's offset, the second 64 bytes on) and nothing is copied.
func.func @in_place(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = flow.dispatch @d::@d[[1, 1, 1]] (%arg0) : (tensor<1x4xf32>) -> tensor<1x16xf32>
  %1 = flow.dispatch @d::@d[[1, 1, 1]] (%arg0) : (tensor<1x4xf32>) -> tensor<1x6xf32>
  %2 = tensor.concat dim(1) %0, %1 : (tensor<1x16xf32>, tensor<1x6xf32>) -> tensor<1x22xf32>
  %3 = flow.dispatch @d::@d[[1, 1, 1]] (%2) : (tensor<1x22xf32>) -> tensor<1x4xf32>
  return %3 : tensor<1x4xf32>
}
// CHECK-LABEL: func.func @in_place
// CHECK-SAME:    strata.transient_bytes = 128
// CHECK:         %[[SLAB:.+]] = hal.allocator.allocate %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c128_i64
// CHECK:         hal.command_buffer.dispatch {{.*}} bindings(%{{.+}}, %[[SLAB]]) offsets(%{{.+}}, %c0_i64{{.*}}) lengths(%{{.+}}, %c64_i64{{.*}})
// CHECK:         hal.command_buffer.dispatch {{.*}} bindings(%{{.+}}, %[[SLAB]]) offsets(%{{.+}}, %c64_i64{{.*}}) lengths(%{{.+}}, %c24_i64{{.*}})
// CHECK-NOT:     hal.command_buffer.copy_buffer
// CHECK:         hal.command_buffer.dispatch {{.*}} bindings(%[[SLAB]], %{{.+}}) offsets(%c0_i64{{.*}}, %{{.+}}) lengths(%c88_i64{{.*}}, %{{.+}})

// -----

// What cannot be written in place is copied in: an argument, a value used
// elsewhere too, and an operand whose offset (8 bytes) is not aligned.
func.func @copied(%arg0: tensor<1x2xf32>) -> (tensor<1x4xf32>, tensor<1x16xf32>) {
  %0 = flow.dispatch @d::@d[[1, 1, 1]] (%arg0) : (tensor<1x2xf32>) -> tensor<1x16xf32>
  %1 = flow.dispatch @d::@d[[1, 1, 1]] (%arg0) : (tensor<1x2xf32>) -> tensor<1x6xf32>
  %2 = tensor.concat dim(1) %arg0, %1, %0 : (tensor<1x2xf32>, tensor<1x6xf32>, tensor<1x16xf32>) -> tensor<1x24xf32>
  %3 = flow.dispatch @d::@d[[1, 1, 1]] (%2) : (tensor<1x24xf32>) -> tensor<1x4xf32>
  return %3, %0 : tensor<1x4xf32>, tensor<1x16xf32>
}
// CHECK-LABEL: func.func @copied
// CHECK:         %[[ARG:.+]] = hal.buffer_view.buffer %arg0
// CHECK:         %[[SLAB:.+]] = hal.allocator.allocate %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c192_i64
// CHECK:         %[[OUT0:.+]] = hal.allocator.allocate
// CHECK:         hal.command_buffer.dispatch {{.*}} bindings(%[[ARG]], %[[OUT0]]) offsets
// CHECK:         hal.command_buffer.dispatch {{.*}} bindings(%[[ARG]], %[[SLAB]]) offsets(%{{.+}}, %c0_i64{{.*}}) lengths(%{{.+}}, %c24_i64{{.*}})
// CHECK:         hal.command_buffer.copy_buffer %{{.+}}, %[[ARG]], %c0_i64{{.*}}, %[[SLAB]], %c64_i64{{.*}}, %c8_i64
// CHECK:         hal.command_buffer.copy_buffer %{{.+}}, %[[SLAB]], %c0_i64{{.*}}, %[[SLAB]], %c72_i64{{.*}}, %c24_i64
// CHECK:         hal.command_buffer.copy_buffer %{{.+}}, %[[OUT0]], %c0_i64{{.*}}, %[[SLAB]], %c96_i64{{.*}}, %c64_i64
// CHECK:         hal.command_buffer.dispatch {{.*}} bindings(%[[SLAB]], %{{.+}}) offsets(%c64_i64{{.*}}, %{{.+}}) lengths(%c96_i64

// -----

// A returned concatenation is the caller's buffer: its operands are copied
// there, not planned inside it.
func.func @returned(%arg0: tensor<1x2xf32>) -> tensor<2x16xf32> {
  %0 = flow.dispatch @d::@d[[1, 1, 1]] (%arg0) : (tensor<1x2xf32>) -> tensor<1x16xf32>
  %1 = flow.dispatch @d::@d[[1, 1, 1]] (%arg0) : (tensor<1x2xf32>) -> tensor<1x16xf32>
  %2 = tensor.concat dim(0) %0, %1 : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<2x16xf32>
  return %2 : tensor<2x16xf32>
}
// CHECK-LABEL: func.func @returned
// CHECK:         hal.command_buffer.dispatch
// CHECK:         hal.command_buffer.dispatch
// CHECK:         %[[OUT:.+]] = hal.allocator.allocate %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c128_i64
// CHECK:         hal.command_buffer.copy_buffer %{{.+}}, %{{.+}}, %{{.+}}, %[[OUT]], %c0_i64{{.*}}, %c64_i64
// CHECK:         hal.command_buffer.copy_buffer %{{.+}}, %{{.+}}, %{{.+}}, %[[OUT]], %c64_i64{{.*}}, %c64_i64
// CHECK:         hal.buffer_view.create %[[OUT]]

// -----

// A concatenation inside another: both in place, the inner one's operands
// at its offset in the outer.
func.func @nested(%arg0: tensor<1x2xf32>) -> tensor<1x4xf32> {
  %0 = flow.dispatch @d::@d[[1, 1, 1]] (%arg0) : (tensor<1x2xf32>) -> tensor<1x16xf32>
  %1 = flow.dispatch @d::@d[[1, 1, 1]] (%arg0) : (tensor<1x2xf32>) -> tensor<1x16xf32>
  %2 = flow.dispatch @d::@d[[1, 1, 1]] (%arg0) : (tensor<1x2xf32>) -> tensor<1x16xf32>
  %3 = tensor.concat dim(1) %1, %2 : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x32xf32>
  %4 = tensor.concat dim(1) %0, %3 : (tensor<1x16xf32>, tensor<1x32xf32>) -> tensor<1x48xf32>
  %5 = flow.dispatch @d::@d[[1, 1, 1]] (%4) : (tensor<1x48xf32>) -> tensor<1x4xf32>
  return %5 : tensor<1x4xf32>
}
// CHECK-LABEL: func.func @nested
// CHECK-SAME:    strata.transient_bytes = 192
// CHECK:         hal.command_buffer.dispatch {{.*}} offsets(%{{.+}}, %c0_i64{{.*}}) lengths(%{{.+}}, %c64_i64
// CHECK:         hal.command_buffer.dispatch {{.*}} offsets(%{{.+}}, %c64_i64{{.*}}) lengths(%{{.+}}, %c64_i64
// CHECK:         hal.command_buffer.dispatch {{.*}} offsets(%{{.+}}, %c128_i64{{.*}}) lengths(%{{.+}}, %c64_i64
// CHECK-NOT:     hal.command_buffer.copy_buffer
// CHECK:         hal.command_buffer.dispatch {{.*}} offsets(%c0_i64{{.*}}, %{{.+}}) lengths(%c192_i64
