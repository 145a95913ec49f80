#!/usr/bin/env bash
# The GPU half of the cuda target's checks, as run on a lent GPU machine
# (the `device` tool) over a bundle made here:
#   tests/cuda/cuda_bundle.py make --bin build/bin --source-dir . \
#       --models ../shared/models --out .cuda-bundle/modules \
#       --multi-target 'simple_mul|matmul_bias_relu|softmax' \
#       --bench-program bench_matmul_4096=bench/cuda/matmul_4096.mlir
#   cp build/bin/strata-run build/bin/strata-bench .cuda-bundle/bin/
# then, there: bash tests/cuda/device_check.sh .cuda-bundle
# Writes its log to $OUT/device_check.log when $OUT is set.
set -uo pipefail
bundle=${1:-.cuda-bundle}
log=${OUT:-/tmp}/device_check.log
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
    --format=csv,noheader
  "$bundle/bin/strata-run" --list-devices
  [ -x "$bundle/bin/hal_cuda_device_test" ] && "$bundle/bin/hal_cuda_device_test"
  PYTHONUNBUFFERED=1 python3 tests/cuda/cuda_bundle.py run \
    --bin "$bundle/bin" --bundle "$bundle/modules" --bench
  echo "== matmul 4096^3 f32: strata cuda target, then cuBLAS"
  if [ -f "$bundle/modules/bench_matmul_4096/module.smod" ]; then
    "$bundle/bin/strata-bench" \
      --module="$bundle/modules/bench_matmul_4096/module.smod" \
      --function=main --device=cuda --warmup=2 --iterations=5 \
      --input=4096x4096xf32=1 --input=4096x4096xf32=1
  fi
  python3 bench/cuda/cublas_matmul.py 4096
} 2>&1 | tee "$log"
