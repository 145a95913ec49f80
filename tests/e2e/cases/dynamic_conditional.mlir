// A run-time conditional on tensors (e2e_cases.py runs it both ways): only
// the branch the condition picks runs, the two give different row counts,
// and the op after it works on the rows it gets.
func.func @dynamic_conditional(%c: tensor<i1>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %taken = tensor.extract %c[] : tensor<i1>
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %x, %c0 : tensor<?x4xf32>
  %r = scf.if %taken -> tensor<?x4xf32> {
    %e = tensor.empty(%rows) : tensor<?x4xf32>
    %sq = linalg.mul ins(%x, %x : tensor<?x4xf32>, tensor<?x4xf32>)
                     outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
    scf.yield %sq : tensor<?x4xf32>
  } else {
    %first = tensor.extract_slice %x[0, 0] [1, 4] [1, 1] : tensor<?x4xf32> to tensor<1x4xf32>
    %e = tensor.empty() : tensor<1x4xf32>
    %neg = linalg.negf ins(%first : tensor<1x4xf32>) outs(%e : tensor<1x4xf32>) -> tensor<1x4xf32>
    %any = tensor.cast %neg : tensor<1x4xf32> to tensor<?x4xf32>
    scf.yield %any : tensor<?x4xf32>
  }
  %n = tensor.dim %r, %c0 : tensor<?x4xf32>
  %e2 = tensor.empty(%n) : tensor<?x4xf32>
  %twice = linalg.add ins(%r, %r : tensor<?x4xf32>, tensor<?x4xf32>)
                      outs(%e2 : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %twice : tensor<?x4xf32>
}
