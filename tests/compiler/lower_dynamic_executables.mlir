// RUN: strata-opt %s --strata-lower-executables="print-lowered-ir=true print-library-ir=true" | FileCheck %s

// An executable over dynamic shapes: its result becomes an output binding
// written in place, its dynamic buffers are bare pointers viewed with the
// dims of its index arguments (push constants), and its library entry
// reads each index as two 32-bit words, failing the dispatch when fewer
// words are given or a binding is shorter than its dims say.
flow.executable @neg entry @neg {
  builtin.module {
    func.func @neg(%a: tensor<?x4xf32>, %rows_a: index, %rows_r: index) -> tensor<?x4xf32> {
      %e = tensor.empty(%rows_r) : tensor<?x4xf32>
      %r = linalg.negf ins(%a : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
      return %r : tensor<?x4xf32>
    }
  }
}
// CHECK-LABEL: // -----// executable @neg
// CHECK:         llvm.func @neg(%{{[^:]+}}: !llvm.ptr {llvm.noalias}, %{{[^:]+}}: !llvm.ptr {llvm.noalias}, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64)
// CHECK-LABEL: ; executable @neg
// CHECK:         define internal i32 @neg_dispatch(ptr %0, ptr %1, ptr %2)
// CHECK:         %[[WORDS:.+]] = load i32, ptr
// CHECK:         icmp ult i32 %[[WORDS]], 4
// CHECK:         ret i32 1
// CHECK:         shl i64 %{{.+}}, 32
// CHECK:         call { i64, i1 } @llvm.umul.with.overflow.i64(i64 4,
// CHECK:         icmp ugt i64
// CHECK:         ret i32 1
// CHECK:         call void @neg(
// CHECK:         ret i32 0
// CHECK:       hal.executable.binary @neg format("elf-x86_64")
