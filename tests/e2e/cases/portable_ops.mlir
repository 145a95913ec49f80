// Operations x86 has no instruction for at some CPU level, so that LLVM
// calls Strata's helpers there (runtime/src/strata/hal/local/
// executable_symbols.def): f64 -> f16 and f64/f32 -> bf16 conversions,
// f16 <-> f32 without F16C, f16 min/max, rounding without SSE4.1, fma
// without FMA, and remainders. run_e2e_cpu_levels.py runs it at every
// --cpu level.
func.func @portable_conversions(%d: tensor<64xf64>, %f: tensor<64xf32>, %h: tensor<64xf16>, %k: tensor<64xf16>)
    -> (tensor<64xf16>, tensor<64xf32>, tensor<64xf32>, tensor<64xf16>, tensor<64xf32>, tensor<64xf16>, tensor<64xf16>) {
  %d_half = arith.truncf %d : tensor<64xf64> to tensor<64xf16>
  %d_bf16 = arith.truncf %d : tensor<64xf64> to tensor<64xbf16>
  %d_bf16_f32 = arith.extf %d_bf16 : tensor<64xbf16> to tensor<64xf32>
  %f_bf16 = arith.truncf %f : tensor<64xf32> to tensor<64xbf16>
  %f_bf16_f32 = arith.extf %f_bf16 : tensor<64xbf16> to tensor<64xf32>
  %f_half = arith.truncf %f : tensor<64xf32> to tensor<64xf16>
  %h_f32 = arith.extf %h : tensor<64xf16> to tensor<64xf32>
  %min = arith.minnumf %h, %k : tensor<64xf16>
  %max = arith.maxnumf %h, %k : tensor<64xf16>
  return %d_half, %d_bf16_f32, %f_bf16_f32, %f_half, %h_f32, %min, %max
      : tensor<64xf16>, tensor<64xf32>, tensor<64xf32>, tensor<64xf16>, tensor<64xf32>, tensor<64xf16>, tensor<64xf16>
}

func.func @portable_rounding(%f: tensor<64xf32>, %d: tensor<64xf64>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>,
        tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>) {
  %f0 = math.floor %f : tensor<64xf32>
  %f1 = math.ceil %f : tensor<64xf32>
  %f2 = math.round %f : tensor<64xf32>
  %f3 = math.roundeven %f : tensor<64xf32>
  %f4 = math.trunc %f : tensor<64xf32>
  %d0 = math.floor %d : tensor<64xf64>
  %d1 = math.ceil %d : tensor<64xf64>
  %d2 = math.round %d : tensor<64xf64>
  %d3 = math.roundeven %d : tensor<64xf64>
  %d4 = math.trunc %d : tensor<64xf64>
  return %f0, %f1, %f2, %f3, %f4, %d0, %d1, %d2, %d3, %d4
      : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>,
        tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>
}

func.func @portable_fma_rem(%a: tensor<64xf32>, %b: tensor<64xf32>, %c: tensor<64xf32>,
                            %x: tensor<64xf64>, %y: tensor<64xf64>, %z: tensor<64xf64>,
                            %h: tensor<64xf16>, %k: tensor<64xf16>)
    -> (tensor<64xf32>, tensor<64xf64>, tensor<64xf32>, tensor<64xf64>, tensor<64xf16>) {
  %fma32 = math.fma %a, %b, %c : tensor<64xf32>
  %fma64 = math.fma %x, %y, %z : tensor<64xf64>
  %rem32 = arith.remf %a, %b : tensor<64xf32>
  %rem64 = arith.remf %x, %y : tensor<64xf64>
  %rem16 = arith.remf %h, %k : tensor<64xf16>
  return %fma32, %fma64, %rem32, %rem64, %rem16
      : tensor<64xf32>, tensor<64xf64>, tensor<64xf32>, tensor<64xf64>, tensor<64xf16>
}

