// A comparison producing booleans (numpy bool at the boundary) and a select.
func.func @compare_i1(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xi1>, tensor<8xf32>) {
  %0 = arith.cmpf ogt, %a, %b : tensor<8xf32>
  %1 = arith.select %0, %a, %b : tensor<8xi1>, tensor<8xf32>
  return %0, %1 : tensor<8xi1>, tensor<8xf32>
}
