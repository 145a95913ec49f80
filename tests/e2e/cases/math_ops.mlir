// Math functions computed without libm (polynomial approximations).
func.func @math_f32(%x: tensor<64xf32>, %p: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %exp = math.exp %x : tensor<64xf32>
  %log = math.log %p : tensor<64xf32>
  %tanh = math.tanh %x : tensor<64xf32>
  %erf = math.erf %x : tensor<64xf32>
  %rsqrt = math.rsqrt %p : tensor<64xf32>
  %sin = math.sin %x : tensor<64xf32>
  %cos = math.cos %x : tensor<64xf32>
  %pow = math.powf %p, %x : tensor<64xf32>
  return %exp, %log, %tanh, %erf, %rsqrt, %sin, %cos, %pow : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// Quantized int8: rescale (fixed-point multiply and shift) and a lookup
// table, as TOSA defines them.
func.func @tosa_rescale_table(%x: tensor<16xi8>) -> (tensor<16xi8>, tensor<16xi8>) {
  %multiplier = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %shift = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %ozp = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %r = tosa.rescale %x, %multiplier, %shift, %izp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true}
       : (tensor<16xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<16xi8>
  %table = "tosa.const"() <{values = dense<[
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
    32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
    64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95,
    96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127,
    -128, -127, -126, -125, -124, -123, -122, -121, -120, -119, -118, -117, -116, -115, -114, -113, -112, -111, -110, -109, -108, -107, -106, -105, -104, -103, -102, -101, -100, -99, -98, -97,
    -96, -95, -94, -93, -92, -91, -90, -89, -88, -87, -86, -85, -84, -83, -82, -81, -80, -79, -78, -77, -76, -75, -74, -73, -72, -71, -70, -69, -68, -67, -66, -65,
    -64, -63, -62, -61, -60, -59, -58, -57, -56, -55, -54, -53, -52, -51, -50, -49, -48, -47, -46, -45, -44, -43, -42, -41, -40, -39, -38, -37, -36, -35, -34, -33,
    -32, -31, -30, -29, -28, -27, -26, -25, -24, -23, -22, -21, -20, -19, -18, -17, -16, -15, -14, -13, -12, -11, -10, -9, -8, -7, -6, -5, -4, -3, -2, -1]> : tensor<256xi8>}> : () -> tensor<256xi8>
  %t = tosa.table %x, %table : (tensor<16xi8>, tensor<256xi8>) -> tensor<16xi8>
  return %r, %t : tensor<16xi8>, tensor<16xi8>
}

// f64 transcendental math (computed in f32), float remainder and integer
// powers: all without libm.
func.func @math_misc(%d: tensor<8xf64>, %a: tensor<8xf32>, %b: tensor<8xf32>, %i: tensor<8xi32>) -> (tensor<8xf64>, tensor<8xf32>, tensor<8xi32>) {
  %exp = math.exp %d : tensor<8xf64>
  %rem = arith.remf %a, %b : tensor<8xf32>
  %three = arith.constant dense<3> : tensor<8xi32>
  %pow = math.ipowi %i, %three : tensor<8xi32>
  return %exp, %rem, %pow : tensor<8xf64>, tensor<8xf32>, tensor<8xi32>
}

// A splat constant returned directly (stored expanded in rodata).
func.func @splat_result() -> tensor<4x3xf32> {
  %c = arith.constant dense<2.5> : tensor<4x3xf32>
  return %c : tensor<4x3xf32>
}
