// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-cuda-expand-float-remainder))' --split-input-file --verify-diagnostics | FileCheck %s

// A scalar remainder becomes exact long division: the largest |y| * 2^k
// not above half the remainder, then subtractions while halving it. NaN
// operands, a zero divisor and an infinite dividend give NaN and run the
// loops on harmless values (0 rem 1).
// CHECK-LABEL: func.func @remainder
// CHECK-SAME:    (%[[X:.+]]: f64, %[[Y:.+]]: f64)
// CHECK-DAG:     %[[AX:.+]] = math.absf %[[X]] : f64
// CHECK-DAG:     %[[AY:.+]] = math.absf %[[Y]] : f64
// CHECK:         arith.ori
// CHECK:         %[[INVALID:.+]] = arith.ori
// CHECK:         %[[START:.+]] = arith.select %[[INVALID]], %{{.+}}, %[[AX]] : f64
// CHECK:         %[[DIVISOR:.+]] = arith.select %[[INVALID]], %{{.+}}, %[[AY]] : f64
// CHECK:         %[[TOP:.+]] = scf.while (%[[T:.+]] = %[[DIVISOR]]) : (f64) -> f64 {
// CHECK:           arith.cmpf ole, %[[T]]
// CHECK:         } do {
// CHECK:           arith.mulf
// CHECK:         }
// CHECK:         %[[REM:.+]]:2 = scf.while (%[[R:.+]] = %[[START]], %[[S:.+]] = %[[TOP]])
// CHECK:           arith.cmpf oge, %[[R]], %[[DIVISOR]] : f64
// CHECK:         } do {
// CHECK:           arith.subf
// CHECK:         }
// CHECK:         %[[SIGNED:.+]] = math.copysign %[[REM]]#0, %[[X]] : f64
// CHECK:         %[[RESULT:.+]] = arith.select %[[INVALID]], %{{.+}}, %[[SIGNED]] : f64
// CHECK:         return %[[RESULT]]
func.func @remainder(%x: f64, %y: f64) -> f64 {
  %r = arith.remf %x, %y : f64
  return %r : f64
}

// -----

func.func @vector_remainder(%x: vector<4xf32>, %y: vector<4xf32>) -> vector<4xf32> {
  // expected-error @+1 {{on vectors is not supported by the cuda target}}
  %r = arith.remf %x, %y : vector<4xf32>
  return %r : vector<4xf32>
}
