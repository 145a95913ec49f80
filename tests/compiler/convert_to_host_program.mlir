// RUN: strata-opt %s --strata-convert-to-host-program | FileCheck %s

// Arguments are asserted and unwrapped, results allocated, the dispatch
// recorded, submitted and awaited, and results wrapped into buffer views.
func.func @add(%arg0: tensor<2x3xi32>, %arg1: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %0 = flow.dispatch @add_dispatch_0::@add_dispatch_0[[1, 1, 1]] (%arg0, %arg1) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}
// CHECK-LABEL: func.func @add
// CHECK-SAME:    (%[[A:.+]]: !hal.buffer_view, %[[B:.+]]: !hal.buffer_view) -> !hal.buffer_view
// CHECK-SAME:    strata.abi.arguments = [tensor<2x3xi32>, tensor<2x3xi32>], strata.abi.results = [tensor<2x3xi32>]
// CHECK:         %[[DEV:.+]] = hal.devices.get
// CHECK:         %[[ALLOC:.+]] = hal.device.allocator %[[DEV]]
// CHECK:         hal.buffer_view.assert %[[A]] message("argument 0 of @add") element_type(%{{.+}}) encoding(%{{.+}}) shape([%{{.+}}, %{{.+}}])
// CHECK:         %[[BA:.+]] = hal.buffer_view.buffer %[[A]]
// CHECK:         hal.buffer_view.assert %[[B]] message("argument 1 of @add")
// CHECK:         %[[BB:.+]] = hal.buffer_view.buffer %[[B]]
// CHECK:         %[[CMD:.+]] = hal.command_buffer.create %[[DEV]]
// CHECK:         %[[SIZE:.+]] = arith.constant 24 : i64
// CHECK:         %[[OUT:.+]] = hal.allocator.allocate %[[ALLOC]], %{{.+}}, %{{.+}}, %{{.+}}, %[[SIZE]]
// CHECK:         %[[EXE:.+]] = hal.executable.lookup @add_dispatch_0
// CHECK:         hal.command_buffer.dispatch %[[CMD]], %[[EXE]][%{{.+}}] workgroups({{.*}}) flags({{.*}}) bindings(%[[BA]], %[[BB]], %[[OUT]])
// CHECK:         hal.command_buffer.finalize %[[CMD]]
// CHECK:         %[[FENCE:.+]] = hal.fence.create %[[DEV]]
// CHECK:         hal.device.queue.execute %[[DEV]], %{{.+}}, %{{.+}}, %[[FENCE]], %[[CMD]]
// CHECK:         hal.fence.await %{{.+}}, %[[FENCE]]
// CHECK:         %[[VIEW:.+]] = hal.buffer_view.create %[[OUT]]
// CHECK:         return %[[VIEW]] : !hal.buffer_view
