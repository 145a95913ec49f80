// RUN: strata-opt %s --split-input-file --strata-outline-dispatch-regions --verify-diagnostics | FileCheck %s

// A region over dynamic shapes: the executable takes, after its tensors,
// the dynamic dims of each argument, of each result, then the index values
// it captured; tensor.dim of an argument reads its index argument. The
// host's flow.dispatch passes them as constants and states the result's
// dims, reified from the op computing it and hoisted out of the region.
func.func @rows(%a: tensor<?x4xf32>, %b: tensor<4x?xf32>, %n: index) -> tensor<?x?xf32> {
  %0 = flow.dispatch.region -> (tensor<?x?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %m = tensor.dim %a, %c0 : tensor<?x4xf32>
    %k = tensor.dim %b, %c1 : tensor<4x?xf32>
    %cols = arith.addi %k, %n : index
    %e = tensor.empty(%m, %cols) : tensor<?x?xf32>
    %zero = arith.constant 0.0 : f32
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
    flow.return %f : tensor<?x?xf32>
  }
  return %0 : tensor<?x?xf32>
}
// CHECK-LABEL: flow.executable @rows_dispatch_0
// CHECK:         func.func @rows_dispatch_0(%{{[^:]+}}: tensor<?x4xf32>, %{{[^:]+}}: tensor<4x?xf32>,
// CHECK-SAME:        %[[AROWS:[^:]+]]: index, %[[BCOLS:[^:]+]]: index, %{{[^:]+}}: index, %{{[^:]+}}: index, %[[N:[^:]+]]: index)
// CHECK-NOT:       tensor.dim
// CHECK:           %[[COLS:.+]] = arith.addi %[[BCOLS]], %[[N]]
// CHECK:           tensor.empty(%[[AROWS]], %[[COLS]])
// CHECK-LABEL: func.func @rows(
// CHECK-SAME:    %[[A:[^:]+]]: tensor<?x4xf32>, %[[B:[^:]+]]: tensor<4x?xf32>, %[[HN:[^:]+]]: index)
// CHECK-DAG:     %[[HM:.+]] = tensor.dim %[[A]], %c0
// CHECK-DAG:     %[[HK:.+]] = tensor.dim %[[B]], %c1
// CHECK:         %[[HCOLS:.+]] = arith.addi %[[HK]], %[[HN]]
// CHECK:         flow.dispatch @rows_dispatch_0::@rows_dispatch_0{{\[}}[1, 1, 1]] (%[[A]], %[[B]])
// CHECK-SAME:        constants(%[[HM]], %[[HK]], %[[HM]], %[[HCOLS]], %[[HN]]) dims(%[[HM]], %[[HCOLS]])
// CHECK-SAME:        : (tensor<?x4xf32>, tensor<4x?xf32>) -> tensor<?x?xf32>

// -----

// Static regions are unchanged: no constants, no dims.
func.func @static(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = flow.dispatch.region -> (tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.negf ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    flow.return %r : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
// CHECK-LABEL: func.func @static
// CHECK:         flow.dispatch @static_dispatch_0::@static_dispatch_0{{\[}}[1, 1, 1]] (%{{.+}}) {strata.dispatch_name = "neg"} : (tensor<4xf32>) -> tensor<4xf32>

// -----

// A sequential region's result is the tensor its loops update element by
// element, which no op reifies: its dims are those of the empty tensor the
// update chain starts from (through the region's yield, the loops' initial
// values and the inserts' destinations).
func.func @sequential(%x: tensor<?xf32>, %n: index) -> tensor<?x4xf32> {
  %0 = flow.dispatch.region -> (tensor<?x4xf32>) {
    %r = scf.execute_region -> tensor<?x4xf32> no_inline {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %rows = arith.muli %n, %c4 : index
      %e = tensor.empty(%rows) : tensor<?x4xf32>
      %loop = scf.for %i = %c0 to %rows step %c1 iter_args(%t = %e) -> tensor<?x4xf32> {
        %inner = scf.for %j = %c0 to %c4 step %c1 iter_args(%u = %t) -> tensor<?x4xf32> {
          %v = tensor.extract %x[%i] : tensor<?xf32>
          %w = tensor.insert %v into %u[%i, %j] : tensor<?x4xf32>
          scf.yield %w : tensor<?x4xf32>
        }
        scf.yield %inner : tensor<?x4xf32>
      }
      scf.yield %loop : tensor<?x4xf32>
    }
    flow.return %r : tensor<?x4xf32>
  }
  return %0 : tensor<?x4xf32>
}
// CHECK-LABEL: func.func @sequential(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<?xf32>, %[[N:[^:]+]]: index)
// CHECK:         %[[ROWS:.+]] = arith.muli %[[N]], %c4
// CHECK:         flow.dispatch @sequential_dispatch_0::@sequential_dispatch_0{{\[}}[1, 1, 1]] (%[[X]])
// CHECK-SAME:        dims(%[[ROWS]])

// -----

// A loop that replaces its tensor rather than updating it says nothing of
// the result's size: refused.
func.func @replaced(%x: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  // expected-error @below {{cannot compute dim 0 of result 0}}
  %0 = flow.dispatch.region -> (tensor<?xf32>) {
    %r = scf.execute_region -> tensor<?xf32> no_inline {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %loop = scf.for %i = %c0 to %n step %c1 iter_args(%t = %x) -> tensor<?xf32> {
        %m = arith.addi %i, %c1 : index
        %s = tensor.extract_slice %x[0] [%m] [1] : tensor<?xf32> to tensor<?xf32>
        scf.yield %s : tensor<?xf32>
      }
      scf.yield %loop : tensor<?xf32>
    }
    flow.return %r : tensor<?xf32>
  }
  return %0 : tensor<?xf32>
}
