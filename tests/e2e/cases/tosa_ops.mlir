// TOSA (v1.0 form) programs, lowered by upstream tosa-to-linalg.
func.func @tosa_conv2d(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x8x8x4xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}
       : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8x4xf32>
  %1 = tosa.clamp %0 {min_val = 0.0 : f32, max_val = 6.0 : f32} : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  return %1 : tensor<1x8x8x4xf32>
}

func.func @tosa_depthwise(%x: tensor<1x6x6x4xf32>, %w: tensor<3x3x4x1xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.depthwise_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}
       : (tensor<1x6x6x4xf32>, tensor<3x3x4x1xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

func.func @tosa_matmul(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<2x3x4xf32>, tensor<2x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

func.func @tosa_transpose_reduce(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<2x1x4xf32>, tensor<2x3x1xf32>) {
  %t = tosa.transpose %x {perms = array<i32: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %s = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  %m = tosa.reduce_max %x {axis = 2 : i32} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  return %t, %s, %m : tensor<4x2x3xf32>, tensor<2x1x4xf32>, tensor<2x3x1xf32>
}

func.func @tosa_argmax(%x: tensor<3x7xf32>) -> tensor<3xi32> {
  %0 = tosa.argmax %x {axis = 1 : i32} : (tensor<3x7xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

func.func @tosa_elementwise(%a: tensor<2x4xf32>, %b: tensor<1x4xf32>) -> tensor<2x4xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.mul %a, %b, %shift : (tensor<2x4xf32>, tensor<1x4xf32>, tensor<1xi8>) -> tensor<2x4xf32>
  %1 = tosa.sub %0, %a : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = tosa.exp %1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = tosa.sigmoid %2 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %4 = tosa.tanh %3 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %5 = tosa.reciprocal %4 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %5 : tensor<2x4xf32>
}

func.func @tosa_shape_ops(%x: tensor<2x6xf32>, %y: tensor<2x2xf32>) -> (tensor<3x4xf32>, tensor<2x3xf32>, tensor<2x8xf32>, tensor<4x8xf32>) {
  %shape = tosa.const_shape {values = dense<[3, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %r = tosa.reshape %x, %shape : (tensor<2x6xf32>, !tosa.shape<2>) -> tensor<3x4xf32>
  %start = tosa.const_shape {values = dense<[0, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %size = tosa.const_shape {values = dense<[2, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %s = tosa.slice %x, %start, %size : (tensor<2x6xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<2x3xf32>
  %c = tosa.concat %x, %y {axis = 1 : i32} : (tensor<2x6xf32>, tensor<2x2xf32>) -> tensor<2x8xf32>
  %pads = tosa.const_shape {values = dense<[1, 1, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %pv = "tosa.const"() <{values = dense<-1.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %p = tosa.pad %c, %pads, %pv : (tensor<2x8xf32>, !tosa.shape<4>, tensor<1xf32>) -> tensor<4x8xf32>
  return %r, %s, %c, %p : tensor<3x4xf32>, tensor<2x3xf32>, tensor<2x8xf32>, tensor<4x8xf32>
}

func.func @tosa_cast_gather(%x: tensor<1x5x3xf32>, %idx: tensor<1x4xi32>) -> (tensor<1x5x3xi32>, tensor<1x4x3xf32>) {
  %c = tosa.cast %x : (tensor<1x5x3xf32>) -> tensor<1x5x3xi32>
  %g = tosa.gather %x, %idx : (tensor<1x5x3xf32>, tensor<1x4xi32>) -> tensor<1x4x3xf32>
  return %c, %g : tensor<1x5x3xi32>, tensor<1x4x3xf32>
}
