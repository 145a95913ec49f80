// Programs over dynamically shaped tensors: compiled once, each run at two
// sizes (e2e_cases.py). Dims reach the executables as push constants; the
// host program allocates results from the caller's dims.

// Rows of any count through a dense layer, ReLU and a row softmax.
func.func @dynamic_mlp(%x: tensor<?x8xf32>, %w: tensor<8x16xf32>,
                       %b: tensor<16xf32>) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %x, %c0 : tensor<?x8xf32>
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %empty = tensor.empty(%rows) : tensor<?x16xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x16xf32>) -> tensor<?x16xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<?x8xf32>, tensor<8x16xf32>)
                      outs(%filled : tensor<?x16xf32>) -> tensor<?x16xf32>
  %act = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<?x16xf32>, tensor<16xf32>) outs(%empty : tensor<?x16xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x16xf32>
  %out = linalg.softmax dimension(1) ins(%act : tensor<?x16xf32>)
                                     outs(%empty : tensor<?x16xf32>) -> tensor<?x16xf32>
  return %out : tensor<?x16xf32>
}

// Both dims dynamic: elementwise, a transpose and a column sum of the
// flattened rows seen as [rows * cols / 2, 2].
func.func @dynamic_2d(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %rows = tensor.dim %a, %c0 : tensor<?x?xf32>
  %cols = tensor.dim %a, %c1 : tensor<?x?xf32>
  %empty = tensor.empty(%rows, %cols) : tensor<?x?xf32>
  %fma = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%empty : tensor<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %m, %x : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  %tempty = tensor.empty(%cols, %rows) : tensor<?x?xf32>
  %t = linalg.transpose ins(%fma : tensor<?x?xf32>) outs(%tempty : tensor<?x?xf32>)
         permutation = [1, 0]
  %flat = tensor.collapse_shape %fma [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %n = arith.muli %rows, %cols : index
  %half = arith.divui %n, %c2 : index
  %pairs = tensor.expand_shape %flat [[0, 1]] output_shape [%half, 2]
      : tensor<?xf32> into tensor<?x2xf32>
  %sempty = tensor.empty() : tensor<2xf32>
  %sfill = linalg.fill ins(%zero : f32) outs(%sempty : tensor<2xf32>) -> tensor<2xf32>
  %sum = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
      iterator_types = ["reduction", "parallel"]}
      ins(%pairs : tensor<?x2xf32>) outs(%sfill : tensor<2xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  return %fma, %t, %sum : tensor<?x?xf32>, tensor<?x?xf32>, tensor<2xf32>
}

// A product whose static columns split into workgroups of whole register
// tiles (the last one partial), whatever the rows.
func.func @dynamic_matmul(%x: tensor<?x64xf32>, %w: tensor<64x300xf32>) -> tensor<?x300xf32> {
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %x, %c0 : tensor<?x64xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty(%rows) : tensor<?x300xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x300xf32>) -> tensor<?x300xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x300xf32>)
                      outs(%filled : tensor<?x300xf32>) -> tensor<?x300xf32>
  return %mm : tensor<?x300xf32>
}

// Tensor ops over dynamic rows: a concatenation (copies into its result),
// a pad of the columns and a slice of them.
func.func @dynamic_tensor_ops(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>)
    -> (tensor<?x4xf32>, tensor<?x6xf32>, tensor<?x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %x, %c0 : tensor<?x4xf32>
  %cat = tensor.concat dim(0) %x, %y : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %padded = tensor.pad %x low[0, 1] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<?x4xf32> to tensor<?x6xf32>
  %slice = tensor.extract_slice %x[0, 1] [%rows, 2] [1, 1] : tensor<?x4xf32> to tensor<?x2xf32>
  return %cat, %padded, %slice : tensor<?x4xf32>, tensor<?x6xf32>, tensor<?x2xf32>
}
