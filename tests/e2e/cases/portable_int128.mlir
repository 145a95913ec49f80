// 128-bit integers inside a kernel: x86-64 divides and converts at most
// 64 bits, so division, remainder and float conversions call helpers.
func.func @portable_int128(%a: tensor<8xi64>, %b: tensor<8xi64>, %f: tensor<8xf64>)
    -> (tensor<8xi64>, tensor<8xi64>, tensor<8xf16>, tensor<8xf64>, tensor<8xi64>, tensor<8xf32>) {
  %a1 = arith.extsi %a : tensor<8xi64> to tensor<8xi128>
  %b1 = arith.extsi %b : tensor<8xi64> to tensor<8xi128>
  %big = arith.constant dense<100000000000000000000> : tensor<8xi128>
  %p = arith.muli %a1, %big : tensor<8xi128>
  %q = arith.divsi %p, %b1 : tensor<8xi128>
  %q_low = arith.trunci %q : tensor<8xi128> to tensor<8xi64>
  %r = arith.remui %p, %b1 : tensor<8xi128>
  %r_low = arith.trunci %r : tensor<8xi128> to tensor<8xi64>
  %thousand = arith.constant dense<1000> : tensor<8xi128>
  %small = arith.muli %a1, %thousand : tensor<8xi128>
  %small_q = arith.divui %small, %b1 : tensor<8xi128>
  %h = arith.sitofp %small_q : tensor<8xi128> to tensor<8xf16>
  %pf = arith.sitofp %p : tensor<8xi128> to tensor<8xf64>
  %fi = arith.fptosi %f : tensor<8xf64> to tensor<8xi128>
  %fr = arith.remsi %fi, %b1 : tensor<8xi128>
  %fr_low = arith.trunci %fr : tensor<8xi128> to tensor<8xi64>
  %pu = arith.uitofp %q : tensor<8xi128> to tensor<8xf32>
  return %q_low, %r_low, %h, %pf, %fr_low, %pu
      : tensor<8xi64>, tensor<8xi64>, tensor<8xf16>, tensor<8xf64>, tensor<8xi64>, tensor<8xf32>
}
