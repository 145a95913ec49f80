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

// Integers wider than 64 bits reach f16 through f32 (exact: see
// ExpandMath.cpp); 64-bit ones and other float types are left to LLVM.
// CHECK-LABEL: func.func @wide_int_to_half
// CHECK:         %[[S:.+]] = arith.sitofp %{{.+}} : i128 to f32
// CHECK:         arith.truncf %[[S]] : f32 to f16
// CHECK:         %[[U:.+]] = arith.uitofp %{{.+}} : i128 to f32
// CHECK:         arith.truncf %[[U]] : f32 to f16
// CHECK:         arith.sitofp %{{.+}} : i64 to f16
// CHECK:         arith.sitofp %{{.+}} : i128 to f64
func.func @wide_int_to_half(%w: i128, %n: i64) -> (f16, f16, f16, f64) {
  %0 = arith.sitofp %w : i128 to f16
  %1 = arith.uitofp %w : i128 to f16
  %2 = arith.sitofp %n : i64 to f16
  %3 = arith.sitofp %w : i128 to f64
  return %0, %1, %2, %3 : f16, f16, f16, f64
}

// arith.remf stays: LLVM calls the exact fmod helper for it.
// CHECK-LABEL: func.func @remainder
// CHECK:         arith.remf
func.func @remainder(%a: f32, %b: f32) -> f32 {
  %0 = arith.remf %a, %b : f32
  return %0 : f32
}
