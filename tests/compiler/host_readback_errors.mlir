// RUN: strata-opt %s --split-input-file --strata-convert-to-host-program --verify-diagnostics > /dev/null

// The host computes only with integers: a float element it would read
// back is an error naming the type.
func.func @float_element(%a: tensor<f32>) -> tensor<f32> {
  %0 = flow.dispatch @d::@d[[1, 1, 1]] (%a) : (tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{reads a 'f32' element on the host; only i1, i32 and i64 values can be read there so far}}
  %1 = tensor.extract %0[] : tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Nor with 8-bit integers (uint8 sizes would need zero extension first).
func.func @byte_element(%a: tensor<3xi8>) -> tensor<3xi8> {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{reads a 'i8' element on the host; only i1, i32 and i64 values can be read there so far}}
  %1 = tensor.extract %a[%c1] : tensor<3xi8>
  return %a : tensor<3xi8>
}
