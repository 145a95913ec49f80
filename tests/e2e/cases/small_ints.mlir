// Narrow and wide integers: i8 and i16 wrap, i64 keeps its range.
func.func @small_ints(%a: tensor<16xi8>, %b: tensor<16xi8>, %c: tensor<3x5xi16>, %d: tensor<4xi64>) -> (tensor<16xi8>, tensor<3x5xi16>, tensor<4xi64>) {
  %0 = arith.addi %a, %b : tensor<16xi8>
  %1 = arith.muli %c, %c : tensor<3x5xi16>
  %2 = arith.muli %d, %d : tensor<4xi64>
  return %0, %1, %2 : tensor<16xi8>, tensor<3x5xi16>, tensor<4xi64>
}
