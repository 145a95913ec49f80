// Functions for examples/embed (tests/install/embed_test.py): one over a
// dynamic dim with named arguments and result (embed makes it --dim), one
// over integers, one over f16, bf16 and booleans.
func.func @dynamic_mul(%x: tensor<?x3xf32> {strata.name = "x"}, %y: tensor<?x3xf32> {strata.name = "y"}) -> (tensor<?x3xf32> {strata.name = "product"}) {
  %0 = arith.mulf %x, %y : tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

func.func @add_ints(%a: tensor<5xi32>, %b: tensor<5xi32>) -> tensor<5xi32> {
  %0 = arith.addi %a, %b : tensor<5xi32>
  return %0 : tensor<5xi32>
}

func.func @halves(%a: tensor<4xf16>, %b: tensor<4xbf16>, %m: tensor<4xi1>) -> (tensor<4xf16>, tensor<4xbf16>, tensor<4xi1>) {
  %true = arith.constant dense<true> : tensor<4xi1>
  %twice = arith.addf %a, %a : tensor<4xf16>
  %0 = arith.select %m, %twice, %a : tensor<4xi1>, tensor<4xf16>
  %1 = arith.addf %b, %b : tensor<4xbf16>
  %2 = arith.xori %m, %true : tensor<4xi1>
  return %0, %1, %2 : tensor<4xf16>, tensor<4xbf16>, tensor<4xi1>
}
