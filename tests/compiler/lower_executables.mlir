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
// CHECK:     // -----// executable @mul_dispatch_0 for host //----- //
// CHECK:     llvm.func @mul_dispatch_0(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr)
// CHECK:       llvm.fmul
// CHECK:     hal.executable.binary @mul_dispatch_0 format("elf-x86_64")
// CHECK-SAME:  export_binding_counts = array<i64: 3>
// CHECK-NOT: flow.executable
