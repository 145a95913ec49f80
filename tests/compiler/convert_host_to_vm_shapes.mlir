// RUN: strata-opt %s --split-input-file --strata-convert-host-to-vm="module-name=shapes" --verify-diagnostics | FileCheck %s

// Run-time shapes: a view's dim is an import call; integer arithmetic on
// i64, i32 and i1 becomes VM ops of those register banks (i1 in i32).
func.func @shape(%arg0: !hal.buffer_view) -> !hal.buffer_view attributes {strata.abi.arguments = [tensor<?xf32>], strata.abi.results = [tensor<?xf32>]} {
  %c0 = arith.constant 0 : i32
  %c2 = arith.constant 2 : i64
  %c4 = arith.constant 4 : i64
  %true = arith.constant true
  %et = arith.constant 553648160 : i32
  %enc = arith.constant 1 : i32
  %n = hal.buffer_view.dim %arg0, %c0 : (!hal.buffer_view, i32) -> i64
  %half = arith.divui %n, %c2 : i64
  %bytes = arith.muli %half, %c4 : i64
  %rest = arith.subi %n, %half : i64
  %more = arith.cmpi sgt, %rest, %half : i64
  %both = arith.andi %more, %true : i1
  %pick = arith.select %both, %rest, %half : i64
  %narrow = arith.trunci %pick : i64 to i32
  %wide = arith.extui %narrow : i32 to i64
  %buf = hal.buffer_view.buffer %arg0 : (!hal.buffer_view) -> !hal.buffer
  %view = hal.buffer_view.create %buf, %c2, %bytes, %et, %enc, %wide : (!hal.buffer, i64, i64, i32, i32, i64) -> !hal.buffer_view
  return %view : !hal.buffer_view
}
// CHECK-DAG:    vm.import @hal.buffer_view.dim : (!vm.ref<!hal.buffer_view>, i32) -> i64 cconv "0ri_I"
// CHECK:        vm.func @shape(%[[ARG:.+]]: !vm.ref<!hal.buffer_view>)
// CHECK-DAG:      %[[C0:.+]] = vm.const.i32 0
// CHECK-DAG:      %[[C2:.+]] = vm.const.i64 2
// CHECK-DAG:      %[[C4:.+]] = vm.const.i64 4
// CHECK-DAG:      %[[TRUE:.+]] = vm.const.i32 1
// CHECK:          %[[N:.+]] = call @hal.buffer_view.dim(%[[ARG]], %[[C0]])
// CHECK:          %[[HALF:.+]] = vm.div.i64.u %[[N]], %[[C2]]
// CHECK:          %[[BYTES:.+]] = vm.mul.i64 %[[HALF]], %[[C4]]
// CHECK:          %[[REST:.+]] = vm.sub.i64 %[[N]], %[[HALF]]
// CHECK:          %[[MORE:.+]] = vm.cmp.lt.i64.s %[[HALF]], %[[REST]]
// CHECK:          %[[BOTH:.+]] = vm.and.i32 %[[MORE]], %[[TRUE]]
// CHECK:          %[[PICK:.+]] = vm.select.i64 %[[BOTH]], %[[REST]], %[[HALF]]
// CHECK:          %[[NARROW:.+]] = vm.trunc.i64.i32 %[[PICK]]
// CHECK:          %[[WIDE:.+]] = vm.ext.i32.i64.u %[[NARROW]]
// CHECK:          call @hal.buffer_view.create({{.*}}, %[[BYTES]], {{.*}}, %[[WIDE]])

// -----

// A run-time check: the call goes on where it holds and fails with its
// message (INVALID_ARGUMENT, 3) where it does not.
func.func @check(%arg0: !hal.buffer_view) attributes {strata.abi.arguments = [tensor<?xf32>], strata.abi.results = []} {
  %c0 = arith.constant 0 : i32
  %c2 = arith.constant 2 : i64
  %n = hal.buffer_view.dim %arg0, %c0 : (!hal.buffer_view, i32) -> i64
  %odd = arith.remui %n, %c2 : i64
  %even = arith.cmpi ne, %odd, %c2 : i64
  cf.assert %even, "the count must be even"
  return
}
// CHECK-LABEL:  vm.func @check
// CHECK:          %[[EVEN:.+]] = vm.cmp.ne.i64
// CHECK:          cond_br %[[EVEN]], ^[[NEXT:[a-z0-9]+]], ^[[FAIL:[a-z0-9]+]]
// CHECK:        ^[[FAIL]]:
// CHECK:          %[[CODE:.+]] = vm.const.i32 3
// CHECK:          fail %[[CODE]], "the count must be even"
// CHECK:        ^[[NEXT]]:
// CHECK:          return

// -----

func.func @floats(%a: f32) -> f32 attributes {strata.abi.arguments = [], strata.abi.results = []} {
  // expected-error @+1 {{'arith.addf' op computes on 'f32' in the host program; only i1, i32 and i64 arithmetic is supported there}}
  %b = arith.addf %a, %a : f32
  return %b : f32
}
