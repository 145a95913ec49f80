// RUN: strata-opt %s --split-input-file --strata-outline-dispatch-regions | FileCheck %s

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
