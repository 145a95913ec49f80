// RUN: strata-opt %s --strata-lower-executables="print-lowered-ir=true" | FileCheck %s

// The executable is bufferized (the result becomes the third binding),
// lowered to LLVM with bare pointers and compiled into an ELF library.
#map = affine_map<(d0) -> (d0)>
flow.executable @mul_dispatch_0 entry @mul_dispatch_0 {
  builtin.module {
    func.func @mul_dispatch_0(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
      %0 = tensor.empty() : tensor<4xf32>
      %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%arg0, %arg1 : tensor<4xf32>, tensor<4xf32>) outs(%0 : tensor<4xf32>) {
      ^bb0(%in: f32, %in_0: f32, %out: f32):
        %2 = arith.mulf %in, %in_0 : f32
        linalg.yield %2 : f32
      } -> tensor<4xf32>
      return %1 : tensor<4xf32>
    }
  }
}

// Split over 8 workgroups: each runs the tile its id selects.
#map2d = affine_map<(d0, d1) -> (d0, d1)>
flow.executable @neg_dispatch_0 entry @neg_dispatch_0 attributes {workgroup_count = array<i64: 8, 1, 1>} {
  builtin.module {
    func.func @neg_dispatch_0(%arg0: tensor<512x256xf32>) -> tensor<512x256xf32> {
      %e = tensor.empty() : tensor<512x256xf32>
      %1 = linalg.generic {indexing_maps = [#map2d, #map2d], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<512x256xf32>) outs(%e : tensor<512x256xf32>) {
      ^bb0(%a: f32, %o: f32):
        %2 = arith.negf %a : f32
        linalg.yield %2 : f32
      } -> tensor<512x256xf32>
      return %1 : tensor<512x256xf32>
    }
  }
}
// CHECK:     // -----// executable @mul_dispatch_0 for host //----- //
// Bindings (noalias), then the workgroup id and count; with one workgroup,
// workgroup 0 does the work.
// CHECK:     llvm.func @mul_dispatch_0(%{{.+}}: !llvm.ptr {llvm.noalias}, %{{.+}}: !llvm.ptr {llvm.noalias}, %{{.+}}: !llvm.ptr {llvm.noalias}, %[[ID:.+]]: i64, %{{.+}}: i64)
// CHECK:       llvm.icmp "eq" %[[ID]]
// CHECK:       llvm.fmul
// CHECK:     llvm.func @neg_dispatch_0(%{{.+}}: !llvm.ptr {llvm.noalias}, %{{.+}}: !llvm.ptr {llvm.noalias}, %[[WG:.+]]: i64, %{{.+}}: i64)
// CHECK-NOT:   llvm.icmp "eq" %[[WG]]
// CHECK:       llvm.mul %[[WG]]
// CHECK:     hal.executable.binary @mul_dispatch_0 format("elf-x86_64")
// CHECK-SAME:  export_binding_counts = array<i64: 3>
// CHECK:     hal.executable.binary @neg_dispatch_0 format("elf-x86_64")
// CHECK-NOT: flow.executable
