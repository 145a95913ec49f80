// RUN: strata-opt %s --strata-convert-to-host-program | FileCheck %s

// A reshape is the same buffer seen with another shape (no copy); a tensor
// constant becomes a constant buffer over rodata; a returned constant is
// copied, since results are the caller's to write.
func.func @f(%arg0: tensor<2x3xf32>) -> (tensor<6xf32>, tensor<2xi32>, tensor<3x2xf32>) {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %c = arith.constant dense<[7, 8]> : tensor<2xi32>
  %0 = tensor.collapse_shape %arg0 [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %1 = flow.dispatch @f_dispatch_0::@f_dispatch_0[[1, 1, 1]] (%arg0, %w) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %0, %c, %1 : tensor<6xf32>, tensor<2xi32>, tensor<3x2xf32>
}
// CHECK-LABEL: func.func @f
// CHECK:         %[[ARG:.+]] = hal.buffer_view.buffer %arg0
// CHECK:         %[[W:.+]] = hal.constant_buffer dense<{{.*}}> : tensor<3x2xf32> : !hal.buffer
// CHECK:         %[[C:.+]] = hal.constant_buffer dense<[7, 8]> : tensor<2xi32> : !hal.buffer
// CHECK:         hal.command_buffer.dispatch {{.*}} bindings(%[[ARG]], %[[W]], %[[OUT:.+]]) offsets
// CHECK:         %[[COPY:.+]] = hal.allocator.allocate
// CHECK:         hal.command_buffer.copy_buffer %{{.+}}, %[[C]], %{{.+}}, %[[COPY]]
// CHECK:         %[[V0:.+]] = hal.buffer_view.create %[[ARG]], {{.*}} : (!hal.buffer, i64, i64, i32, i32, i64) -> !hal.buffer_view
// CHECK:         %[[V1:.+]] = hal.buffer_view.create %[[COPY]]
// CHECK:         %[[V2:.+]] = hal.buffer_view.create %[[OUT]]
// CHECK:         return %[[V0]], %[[V1]], %[[V2]]

// A splat past 4 KiB is not stored whole: a 4 KiB block of it comes from
// rodata and copies double what the buffer holds until it is full (4096,
// 4096, then the last 3808 bytes of 12000), a barrier between copies. The
// result is that buffer itself.
func.func @big_splat() -> tensor<3000xf32> {
  %c = arith.constant dense<2.5> : tensor<3000xf32>
  return %c : tensor<3000xf32>
}
// CHECK-LABEL: func.func @big_splat
// CHECK:         %[[BLOCK:.+]] = hal.constant_buffer dense<2.500000e+00> : tensor<1024xf32>
// CHECK:         %[[BUF:.+]] = hal.allocator.allocate %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c12000_i64 :
// CHECK:         hal.command_buffer.copy_buffer %{{.+}}, %[[BLOCK]], %{{.+}}, %[[BUF]], %{{.+}}, %c4096_i64 :
// CHECK:         hal.command_buffer.execution_barrier
// CHECK:         hal.command_buffer.copy_buffer %{{.+}}, %[[BUF]], %{{.+}}, %[[BUF]], %c4096_i64{{.*}}, %c4096_i64{{.*}} :
// CHECK:         hal.command_buffer.execution_barrier
// CHECK:         hal.command_buffer.copy_buffer %{{.+}}, %[[BUF]], %{{.+}}, %[[BUF]], %{{.+}}, %{{.+}} :
// CHECK-NOT:     hal.command_buffer.copy_buffer
// CHECK:         hal.buffer_view.create %[[BUF]]
