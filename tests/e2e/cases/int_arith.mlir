// Integer elementwise: (a + b) * a - b on i32, wrapping like numpy.
func.func @int_arith(%a: tensor<2x3xi32>, %b: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %0 = arith.addi %a, %b : tensor<2x3xi32>
  %1 = arith.muli %0, %a : tensor<2x3xi32>
  %2 = arith.subi %1, %b : tensor<2x3xi32>
  return %2 : tensor<2x3xi32>
}
