// RUN: strata-opt %s --split-input-file --strata-outline-conditionals | FileCheck %s

// Each branch becomes a private function of the tensors it reads from
// above; a dim it reads is recomputed inside it from its tensor.
func.func @main(%c: i1, %x: tensor<?x4xf32>, %w: tensor<4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %r = scf.if %c -> tensor<?x4xf32> {
    %e = tensor.empty(%n) : tensor<?x4xf32>
    %m = linalg.mul ins(%x, %x : tensor<?x4xf32>, tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
    scf.yield %m : tensor<?x4xf32>
  } else {
    %e = tensor.empty() : tensor<2x4xf32>
    %b = linalg.broadcast ins(%w : tensor<4xf32>) outs(%e : tensor<2x4xf32>) dimensions = [0]
    %d = tensor.cast %b : tensor<2x4xf32> to tensor<?x4xf32>
    scf.yield %d : tensor<?x4xf32>
  }
  return %r : tensor<?x4xf32>
}
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[C:.+]]: i1, %[[X:.+]]: tensor<?x4xf32>, %[[W:.+]]: tensor<4xf32>)
// CHECK:         %[[R:.+]] = scf.if %[[C]] -> (tensor<?x4xf32>) {
// CHECK-NEXT:      %[[T:.+]] = func.call @main_then(%[[X]]) : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT:      scf.yield %[[T]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[E:.+]] = func.call @main_else(%[[W]]) : (tensor<4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT:      scf.yield %[[E]]
// CHECK:         return %[[R]]
// CHECK:       func.func private @main_else(%[[EW:.+]]: tensor<4xf32>) -> tensor<?x4xf32>
// CHECK:         linalg.broadcast ins(%[[EW]]
// CHECK:         return
// CHECK:       func.func private @main_then(%[[TX:.+]]: tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK:         %[[ZERO:.+]] = arith.constant 0 : index
// CHECK:         %[[N:.+]] = tensor.dim %[[TX]], %[[ZERO]]
// CHECK:         tensor.empty(%[[N]])
// CHECK:         linalg.mul ins(%[[TX]], %[[TX]]
// CHECK:         return

// -----

// Inner conditionals first: the outer branch's function holds the inner
// conditional and its calls. A branch that only picks a value defined above
// stays as it is.
func.func @nested(%c1: tensor<i1>, %c2: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %b1 = tensor.extract %c1[] : tensor<i1>
  %b2 = tensor.extract %c2[] : tensor<i1>
  %r = scf.if %b1 -> tensor<4xf32> {
    %u = scf.if %b2 -> tensor<4xf32> {
      %e = tensor.empty() : tensor<4xf32>
      %n = linalg.negf ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
      scf.yield %n : tensor<4xf32>
    } else {
      scf.yield %x : tensor<4xf32>
    }
    scf.yield %u : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @nested(
// CHECK-SAME:    %[[C1:.+]]: tensor<i1>, %[[C2:.+]]: tensor<i1>, %[[X:.+]]: tensor<4xf32>)
// CHECK:         %[[B1:.+]] = tensor.extract %[[C1]][]
// CHECK:         scf.if %[[B1]]
// CHECK-NEXT:      func.call @nested_then_0(%[[C2]], %[[X]])
// CHECK:         } else {
// CHECK-NEXT:      scf.yield %[[X]]
// CHECK:       func.func private @nested_then_0(%[[IC:.+]]: tensor<i1>, %[[IX:.+]]: tensor<4xf32>)
// CHECK:         %[[IB:.+]] = tensor.extract %[[IC]][]
// CHECK:         scf.if %[[IB]]
// CHECK-NEXT:      func.call @nested_then(%[[IX]])
// CHECK:         } else {
// CHECK-NEXT:      scf.yield %[[IX]]
// CHECK:       func.func private @nested_then(
// CHECK:         linalg.negf

// -----

// A branch that yields a constant defined above gets its own copy of it
// (a function returning a constant), not a view of the module's read-only
// data; one that yields an argument only picks it.
func.func @yields_constant(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %w = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b = tensor.extract %c[] : tensor<i1>
  %r = scf.if %b -> tensor<4xf32> {
    scf.yield %w : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @yields_constant(
// CHECK-SAME:    %{{.+}}: tensor<i1>, %[[X:.+]]: tensor<4xf32>)
// CHECK:         scf.if
// CHECK-NEXT:      %[[W:.+]] = func.call @yields_constant_then() : () -> tensor<4xf32>
// CHECK-NEXT:      scf.yield %[[W]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %[[X]]
// CHECK:       func.func private @yields_constant_then() -> tensor<4xf32>
// CHECK-NEXT:    %[[C:.+]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>
// CHECK-NEXT:    return %[[C]]
