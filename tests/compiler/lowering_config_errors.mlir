// RUN: strata-opt %s --split-input-file --verify-diagnostics --linalg-generalize-named-ops --strata-tile-and-vectorize-contractions

// Codegen fails rather than choosing again when the recorded kernels do not
// match the executable's multiply-add ops.
// expected-error @+1 {{has 1 multiply-add kernels but its lowering config lists 0}}
func.func @missing_kernel(%a: memref<16x64xf32>, %b: memref<64x64xf32>, %c: memref<16x64xf32>) attributes {flow.lowering_config = #flow.lowering_config<vector_bits = 512, kernels = []>} {
  linalg.matmul ins(%a, %b : memref<16x64xf32>, memref<64x64xf32>) outs(%c : memref<16x64xf32>)
  return
}

// -----

func.func @wrong_loop_count(%a: memref<16x64xf32>, %b: memref<64x64xf32>, %c: memref<16x64xf32>) attributes {flow.lowering_config = #flow.lowering_config<vector_bits = 512, kernels = [#flow.kernel_config<strategy = "contraction", cache_tiles = [16, 64], cache_order = [0, 1], register_tiles = [2, 16], roles = [0, 1, 1]>]>} {
  // expected-error @+1 {{has 3 loops but its kernel config tiles 2}}
  linalg.matmul ins(%a, %b : memref<16x64xf32>, memref<64x64xf32>) outs(%c : memref<16x64xf32>)
  return
}

// -----

// expected-error @+2 {{unknown kernel strategy 'packed'}}
// expected-error @+1 {{failed to parse Flow_LoweringConfigAttr parameter 'kernels'}}
func.func @bad_strategy() attributes {flow.lowering_config = #flow.lowering_config<vector_bits = 512, kernels = [#flow.kernel_config<strategy = "packed", cache_tiles = [1], cache_order = [0], register_tiles = [1], roles = [0, 0, 0]>]>} {
  return
}

// -----

// expected-error @+2 {{cache_order must list each of the 3 loops once}}
// expected-error @+1 {{failed to parse Flow_LoweringConfigAttr parameter 'kernels'}}
func.func @bad_order() attributes {flow.lowering_config = #flow.lowering_config<vector_bits = 512, kernels = [#flow.kernel_config<strategy = "contraction", cache_tiles = [1, 1, 1], cache_order = [0, 0, 1], register_tiles = [1, 1, 1], roles = [0, 1, 2]>]>} {
  return
}

// -----

// expected-error @+1 {{vector_bits must be 128, 256 or 512, not 384}}
func.func @bad_width() attributes {flow.lowering_config = #flow.lowering_config<vector_bits = 384, kernels = []>} {
  return
}

// -----

// expected-error @+1 {{workgroup_tile must split exactly one loop}}
func.func @two_split_loops() attributes {flow.lowering_config = #flow.lowering_config<vector_bits = 512, workgroup_tile = [8, 8], kernels = []>} {
  return
}

// -----

// expected-error @+1 {{'flow.lowering_config' must be a #flow.lowering_config on a function}}
func.func @not_a_config() attributes {flow.lowering_config = 3 : i64} {
  return
}

// -----

// A padded input too large for a workgroup's stack was to be read in place
// from its source by the kernels' register tiles; an op that reads the
// padded buffer itself (here an elementwise copy of its window, no kernel
// at all) would need it built: codegen refuses rather than build it.
func.func @unbuilt_padded_source_read(%x: memref<1x4x256x256x16xf32>, %y: memref<1x4x256x256x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloca() {strata.unbuilt_padded_source} : memref<1x4x258x258x16xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<1x4x258x258x16xf32>)
  %interior = memref.subview %p[0, 0, 1, 1, 0] [1, 4, 256, 256, 16] [1, 1, 1, 1, 1] : memref<1x4x258x258x16xf32> to memref<1x4x256x256x16xf32, strided<[4260096, 1065024, 4128, 16, 1], offset: 4144>>
  memref.copy %x, %interior : memref<1x4x256x256x16xf32> to memref<1x4x256x256x16xf32, strided<[4260096, 1065024, 4128, 16, 1], offset: 4144>>
  %window = memref.subview %p[0, 0, 0, 0, 0] [1, 4, 256, 256, 16] [1, 1, 1, 1, 1] : memref<1x4x258x258x16xf32> to memref<1x4x256x256x16xf32, strided<[4260096, 1065024, 4128, 16, 1]>>
  // expected-error @+1 {{reads a padded input of 17040384 bytes that was to be read in place from its source, and building it would not fit a workgroup's stack}}
  linalg.copy ins(%window : memref<1x4x256x256x16xf32, strided<[4260096, 1065024, 4128, 16, 1]>>) outs(%y : memref<1x4x256x256x16xf32>)
  return
}

// -----

// expected-error @+1 {{work_per_iteration must be at least 1, not 0}}
func.func @no_work_per_iteration() attributes {flow.lowering_config = #flow.lowering_config<vector_bits = 512, workgroup_tile = [4, 0], kernels = [], workload = [-1, 256], work_per_iteration = 0>} {
  return
}
