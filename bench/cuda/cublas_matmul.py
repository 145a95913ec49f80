#!/usr/bin/env python3
"""The peer for the cuda target's matmul: cuBLAS SGEMM (through PyTorch, TF32
off so it computes in float32 like our kernels) on an N x N x N f32 product,
timed with CUDA events after warm-up. Prints TFLOP/s. Runs on the GPU
machine, in the same run as `strata-bench --device=cuda` on
bench/cuda/matmul_4096.mlir."""
import sys

import torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
torch.backends.cuda.matmul.allow_tf32 = False
a = torch.ones((n, n), device="cuda", dtype=torch.float32)
b = torch.ones((n, n), device="cuda", dtype=torch.float32)
for _ in range(3):
    torch.matmul(a, b)
torch.cuda.synchronize()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
reps = 20
start.record()
for _ in range(reps):
    torch.matmul(a, b)
end.record()
torch.cuda.synchronize()
ms = start.elapsed_time(end) / reps
print(f"cublas sgemm {n}x{n}x{n} f32: {ms:.3f} ms, {2 * n**3 / ms / 1e9:.1f} TFLOP/s "
      f"({torch.cuda.get_device_name()})")
