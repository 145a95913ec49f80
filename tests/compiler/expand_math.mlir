// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-expand-math))' | FileCheck %s

// Transcendental functions become polynomials (no libm call is left);
// f16 math is computed in f32.
// CHECK-LABEL: func.func @f32_math
// CHECK-NOT:     math.exp
// CHECK-NOT:     math.tanh
// CHECK-NOT:     math.erf
// CHECK:         arith.mulf
// CHECK:         return
func.func @f32_math(%x: f32) -> (f32, f32, f32) {
  %0 = math.exp %x : f32
  %1 = math.tanh %x : f32
  %2 = math.erf %x : f32
  return %0, %1, %2 : f32, f32, f32
}

// CHECK-LABEL: func.func @f16_math
// CHECK:         arith.extf %{{.+}} : f16 to f32
// CHECK-NOT:     math.exp
// CHECK:         arith.truncf %{{.+}} : f32 to f16
func.func @f16_math(%x: f16) -> f16 {
  %0 = math.exp %x : f16
  return %0 : f16
}
