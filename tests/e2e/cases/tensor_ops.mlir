// Tensor ops inside and outside dispatches, and constants.
func.func @slice_and_insert(%x: tensor<6x8xf32>, %y: tensor<2x3xf32>) -> (tensor<3x4xf32>, tensor<6x8xf32>) {
  %s = tensor.extract_slice %x[1, 2] [3, 4] [1, 1] : tensor<6x8xf32> to tensor<3x4xf32>
  %d = arith.addf %s, %s : tensor<3x4xf32>
  %i = tensor.insert_slice %y into %x[4, 5] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<6x8xf32>
  return %d, %i : tensor<3x4xf32>, tensor<6x8xf32>
}

func.func @strided_slice(%x: tensor<8x8xi32>) -> tensor<4x2xi32> {
  %s = tensor.extract_slice %x[0, 1] [4, 2] [2, 3] : tensor<8x8xi32> to tensor<4x2xi32>
  return %s : tensor<4x2xi32>
}

func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  return %c : tensor<2x8xf32>
}

func.func @pad(%x: tensor<2x3xf32>) -> tensor<4x6xf32> {
  %v = arith.constant 7.5 : f32
  %p = tensor.pad %x low[1, 2] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %v : f32
  } : tensor<2x3xf32> to tensor<4x6xf32>
  return %p : tensor<4x6xf32>
}

func.func @reshapes(%x: tensor<2x3x4xf32>) -> (tensor<6x4xf32>, tensor<2x12xf32>, tensor<24xf32>) {
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %n = arith.negf %c : tensor<6x4xf32>
  %e = tensor.expand_shape %n [[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
  %r = tensor.collapse_shape %e [[0], [1, 2]] : tensor<2x3x4xf32> into tensor<2x12xf32>
  %shape = arith.constant dense<[24]> : tensor<1xi64>
  %flat = tensor.reshape %x(%shape) : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<24xf32>
  return %c, %r, %flat : tensor<6x4xf32>, tensor<2x12xf32>, tensor<24xf32>
}

func.func @constant_weights(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %w = arith.constant dense<[[1.0, -1.0], [0.5, 2.0], [-3.0, 0.25]]> : tensor<3x2xf32>
  %b = arith.constant dense<[10.0, -20.0]> : tensor<2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<2x3xf32>, tensor<3x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  %bb = linalg.broadcast ins(%b : tensor<2xf32>) outs(%e : tensor<2x2xf32>) dimensions = [0]
  %r = arith.addf %mm, %bb : tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

func.func @returns_constant() -> tensor<3xi32> {
  %c = arith.constant dense<[4, 5, 6]> : tensor<3xi32>
  return %c : tensor<3xi32>
}

func.func @extract_and_splat(%x: tensor<4xf32>) -> tensor<2x2xf32> {
  %i = arith.constant 2 : index
  %v = tensor.extract %x[%i] : tensor<4xf32>
  %s = tensor.splat %v : tensor<2x2xf32>
  return %s : tensor<2x2xf32>
}

func.func @from_elements(%x: tensor<3xf32>) -> tensor<2xf32> {
  %i0 = arith.constant 0 : index
  %i2 = arith.constant 2 : index
  %a = tensor.extract %x[%i0] : tensor<3xf32>
  %b = tensor.extract %x[%i2] : tensor<3xf32>
  %c = arith.mulf %a, %b : f32
  %t = tensor.from_elements %c, %a : tensor<2xf32>
  return %t : tensor<2xf32>
}
