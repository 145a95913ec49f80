// a * b + c: LLVM fuses it into one rounding on CPUs with FMA, so the
// result shows which CPU variant of a module was loaded
// (cpu_variants_test.py).
func.func @probe(%a: tensor<16xf32>, %b: tensor<16xf32>, %c: tensor<16xf32>) -> tensor<16xf32> {
  %p = arith.mulf %a, %b : tensor<16xf32>
  %s = arith.addf %p, %c : tensor<16xf32>
  return %s : tensor<16xf32>
}
