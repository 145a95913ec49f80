// simple_mul with source names on its arguments and result (as the ONNX
// importer gives a graph's inputs and outputs), for the C API's
// reflection: c_api_test reads them back. More functions for the
// session's function list.
func.func @named_mul(%a: tensor<2x3xf32> {strata.name = "lhs"}, %b: tensor<2x3xf32> {strata.name = "rhs"}) -> (tensor<2x3xf32> {strata.name = "product"}) {
  %0 = arith.mulf %a, %b : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

func.func @named_add(%a: tensor<3xi32> {strata.name = "x"}, %b: tensor<3xi32> {strata.name = "y"}) -> (tensor<3xi32> {strata.name = "sum"}) {
  %0 = arith.addi %a, %b : tensor<3xi32>
  return %0 : tensor<3xi32>
}

// For strata_buffer_view_exclusive_host_data (c_api_test's RunInPlace): a
// result returned twice, and a result that is the input itself.
func.func @named_twice(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = arith.mulf %a, %b : tensor<2x3xf32>
  return %0, %0 : tensor<2x3xf32>, tensor<2x3xf32>
}

func.func @named_same(%a: tensor<3xi32>) -> tensor<3xi32> {
  return %a : tensor<3xi32>
}
