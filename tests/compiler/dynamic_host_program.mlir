// RUN: strata-opt %s --split-input-file --strata-convert-to-host-program --canonicalize --cse | FileCheck %s

// A dynamic dim is read from the first argument that has it; the second
// argument, tied to it, is checked against it. The result is allocated
// from its dims (rows x 4 x 4 bytes), the dispatch gets each dim as two
// 32-bit push constants (low word first), and the result's view has the
// dims the caller sees.
func.func @add(%a: tensor<?x4xf32>, %b: tensor<?x4xf32> {strata.dim_ties = [array<i64: 0, 0>, unit]}) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %a, %c0 : tensor<?x4xf32>
  %0 = flow.dispatch @add_dispatch_0::@add_dispatch_0[[1, 1, 1]] (%a, %b) constants(%rows, %rows, %rows) dims(%rows) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = tensor.collapse_shape %0 [[0, 1]] : tensor<?x4xf32> into tensor<?xf32>
  return %1 : tensor<?xf32>
}
// CHECK-LABEL: func.func @add
// CHECK-SAME:    (%[[A:.+]]: !hal.buffer_view, %[[B:.+]]: !hal.buffer_view) -> !hal.buffer_view
// CHECK-SAME:    strata.abi.arguments = [tensor<?x4xf32>, tensor<?x4xf32>], strata.abi.results = [tensor<?xf32>]
// CHECK-DAG:     %[[C4:.+]] = arith.constant 4 : i64
// CHECK-DAG:     %[[C16:.+]] = arith.constant 16 : i64
// CHECK:         %[[ROWS:.+]] = hal.buffer_view.dim %[[A]], %{{.+}} : (!hal.buffer_view, i32) -> i64
// CHECK:         hal.buffer_view.assert %[[A]] message("argument 0 of @add") {{.*}} shape([%[[ROWS]], %[[C4]]])
// CHECK:         hal.buffer_view.assert %[[B]] message("argument 1 of @add") {{.*}} shape([%[[ROWS]], %[[C4]]])
// CHECK:         %[[BYTES:.+]] = arith.muli %[[ROWS]], %[[C16]] : i64
// CHECK:         %[[HIGH:.+]] = arith.shrui %[[ROWS]], %{{.+}} : i64
// CHECK:         %[[LO:.+]] = arith.trunci %[[ROWS]] : i64 to i32
// CHECK:         %[[HI:.+]] = arith.trunci %[[HIGH]] : i64 to i32
// CHECK:         %[[RESULT:.+]] = hal.allocator.allocate {{.*}}, %[[BYTES]] :
// CHECK:         hal.command_buffer.dispatch {{.*}} constants(%[[LO]], %[[HI]], %[[LO]], %[[HI]], %[[LO]], %[[HI]]) bindings({{.*}}, %[[RESULT]]) offsets({{.*}}) lengths(%[[BYTES]], %[[BYTES]], %[[BYTES]])
// CHECK:         %[[FLAT:.+]] = arith.muli %[[ROWS]], %[[C4]] : i64
// CHECK:         hal.buffer_view.create %[[RESULT]], %{{.+}}, %[[BYTES]], %{{.+}}, %{{.+}}, %[[FLAT]] :

// -----

// Shape arithmetic on index values becomes the same arithmetic on i64.
func.func @half(%a: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %a, %c0 : tensor<?xf32>
  %h = arith.divui %n, %c2 : index
  %0 = flow.dispatch @half_dispatch_0::@half_dispatch_0[[1, 1, 1]] (%a) constants(%n, %h) dims(%h) : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
// CHECK-LABEL: func.func @half
// CHECK:         %[[N:.+]] = hal.buffer_view.dim
// CHECK:         %[[H:.+]] = arith.divui %[[N]], %{{.+}} : i64
// CHECK-DAG:     %[[N32:.+]] = arith.trunci %[[N]] : i64 to i32
// CHECK-DAG:     %[[H32:.+]] = arith.trunci %[[H]] : i64 to i32
// CHECK:         hal.command_buffer.dispatch {{.*}} constants(%[[N32]], %{{.+}}, %[[H32]], %{{.+}})

// -----

// An expansion's computed sizes must split the source's dim exactly: the
// host checks their product at run time (cf.assert, a failed call).
func.func @pairs(%a: tensor<?xf32>) -> tensor<?x2xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %a, %c0 : tensor<?xf32>
  %h = arith.divui %n, %c2 : index
  %0 = flow.dispatch @pairs_dispatch_0::@pairs_dispatch_0[[1, 1, 1]] (%a) constants(%n, %n) dims(%n) : (tensor<?xf32>) -> tensor<?xf32>
  %1 = tensor.expand_shape %0 [[0, 1]] output_shape [%h, 2] : tensor<?xf32> into tensor<?x2xf32>
  return %1 : tensor<?x2xf32>
}
// CHECK-LABEL: func.func @pairs
// CHECK:         %[[N:.+]] = hal.buffer_view.dim
// CHECK:         %[[H:.+]] = arith.divui %[[N]], %{{.+}} : i64
// CHECK:         %[[PRODUCT:.+]] = arith.muli %[[H]], %{{.+}} : i64
// CHECK:         %[[FITS:.+]] = arith.cmpi eq, %[[PRODUCT]], %[[N]] : i64
// CHECK:         cf.assert %[[FITS]], "the sizes a reshape computes at {{.*}}dynamic_host_program.mlir:{{[0-9]+}}:{{[0-9]+}} do not multiply to dim 0 of its tensor<?xf32> operand"
// CHECK:         hal.buffer_view.create {{.*}}, %[[H]], %{{.+}} :

// -----

// index_cast between index (i64 on the host) and other integer widths.
func.func @casts(%a: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xf32>
  %n32 = arith.index_cast %n : index to i32
  %one = arith.constant 1 : i32
  %m32 = arith.addi %n32, %one : i32
  %m = arith.index_cast %m32 : i32 to index
  %0 = flow.dispatch @casts_dispatch_0::@casts_dispatch_0[[1, 1, 1]] (%a) constants(%n, %m) dims(%m) : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
// CHECK-LABEL: func.func @casts
// CHECK:         %[[N:.+]] = hal.buffer_view.dim
// CHECK:         %[[N32:.+]] = arith.trunci %[[N]] : i64 to i32
// CHECK:         %[[M32:.+]] = arith.addi %[[N32]], %{{.+}} : i32
// CHECK:         %[[M:.+]] = arith.extsi %[[M32]] : i32 to i64
// CHECK:         hal.buffer_view.create {{.*}}, %[[M]] :

// -----

// A size computed from data: the host submits what it recorded so far,
// waits for it, reads the element back (hal.buffer.load), and sizes the
// next dispatch's result with it in a new command buffer. The transient
// slab is host-visible since the host reads from it.
func.func @length_from_data(%a: tensor<f32>) -> tensor<?xf32> {
  %length = flow.dispatch @length_dispatch_0::@length_dispatch_0[[1, 1, 1]] (%a) : (tensor<f32>) -> tensor<i64>
  %bits = tensor.extract %length[] : tensor<i64>
  %n = arith.index_cast %bits : i64 to index
  %0 = flow.dispatch @range_dispatch_1::@range_dispatch_1[[1, 1, 1]] () constants(%n, %n) dims(%n) : () -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
// CHECK-LABEL: func.func @length_from_data
// CHECK-DAG:     %[[VISIBLE:.+]] = arith.constant 3 : i32
// CHECK:         %[[SLAB:.+]] = hal.allocator.allocate %{{[^,]+}}, %{{[^,]+}}, %[[VISIBLE]],
// CHECK:         %[[FIRST:.+]] = hal.command_buffer.create
// CHECK:         hal.command_buffer.dispatch %[[FIRST]], {{.*}} bindings(%{{.+}}, %[[SLAB]])
// CHECK:         hal.command_buffer.finalize %[[FIRST]]
// CHECK:         %[[FENCE:.+]] = hal.fence.create
// CHECK:         hal.device.queue.execute {{.*}}, %[[FENCE]], %[[FIRST]]
// CHECK:         hal.fence.await {{.*}}, %[[FENCE]]
// CHECK:         %[[N:.+]] = hal.buffer.load %[[SLAB]], %{{.+}}, %{{.+}} : (!hal.buffer, i64, i32) -> i64
// CHECK:         %[[SECOND:.+]] = hal.command_buffer.create
// CHECK:         %[[BYTES:.+]] = arith.muli %[[N]], %{{.+}} : i64
// CHECK:         %[[RESULT:.+]] = hal.allocator.allocate {{.*}}, %[[BYTES]] :
// CHECK:         hal.command_buffer.dispatch %[[SECOND]], {{.*}} bindings(%[[RESULT]])
// CHECK:         hal.command_buffer.finalize %[[SECOND]]
// CHECK:         hal.buffer_view.create %[[RESULT]], {{.*}}, %[[N]] :

// -----

// A cast to the static size a program declares over a dim computed at run
// time is a view, checked by the host.
func.func @declared_length(%a: tensor<f32>) -> tensor<10xf32> {
  %length = flow.dispatch @length_dispatch_0::@length_dispatch_0[[1, 1, 1]] (%a) : (tensor<f32>) -> tensor<i32>
  %bits = tensor.extract %length[] : tensor<i32>
  %n = arith.index_cast %bits : i32 to index
  %0 = flow.dispatch @range_dispatch_1::@range_dispatch_1[[1, 1, 1]] () constants(%n, %n) dims(%n) : () -> tensor<?xf32>
  %1 = tensor.cast %0 : tensor<?xf32> to tensor<10xf32>
  return %1 : tensor<10xf32>
}
// CHECK-LABEL: func.func @declared_length
// CHECK:         %[[BITS:.+]] = hal.buffer.load %{{.+}}, %{{.+}}, %[[C4:.+]] : (!hal.buffer, i64, i32) -> i64
// CHECK:         %[[N32:.+]] = arith.trunci %[[BITS]] : i64 to i32
// CHECK:         %[[N:.+]] = arith.extsi %[[N32]] : i32 to i64
// CHECK:         %[[RESULT:.+]] = hal.allocator.allocate
// CHECK:         %[[TEN:.+]] = arith.cmpi eq, %[[N]], %{{.+}} : i64
// CHECK:         cf.assert %[[TEN]], "dim 0 of a tensor<?xf32> computed at run time is not the 10 the program declares"
// CHECK:         hal.buffer_view.create %[[RESULT]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} :
