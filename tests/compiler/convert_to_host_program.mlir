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

// Unsigned boundary values (strata.unsigned, set by the ONNX importer for
// uint8..uint64) keep their type for callers: the reflected ABI types and
// the element types the arguments are asserted against (0x12000008, UINT_8)
// and the results are created with; other integers stay signed (0x11000008).
func.func @unsigned(%arg0: tensor<4xi8> {strata.unsigned}, %arg1: tensor<4xi8>) -> (tensor<4xi8> {strata.unsigned}) {
  %0 = flow.dispatch @add_dispatch_0::@add_dispatch_0[[1, 1, 1]] (%arg0, %arg1) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}
// CHECK-LABEL: func.func @unsigned
// CHECK-SAME:    strata.abi.arguments = [tensor<4xui8>, tensor<4xi8>], strata.abi.results = [tensor<4xui8>]
// CHECK:         %[[U8:.+]] = arith.constant 301989896 : i32
// CHECK:         hal.buffer_view.assert %{{.+}} message("argument 0 of @unsigned") element_type(%[[U8]])
// CHECK:         %[[I8:.+]] = arith.constant 285212680 : i32
// CHECK:         hal.buffer_view.assert %{{.+}} message("argument 1 of @unsigned") element_type(%[[I8]])
// CHECK:         hal.buffer_view.create %{{.+}}, %{{.+}}, %{{.+}}, %[[U8]]
