#!/usr/bin/env bash
# Builds the runtime for size (STRATA_SIZE_OPTIMIZED, no compiler, no
# tests), runs the embeddings on a module as a smoke test and reports their
# stripped sizes. Sizes are reported, never asserted.
#
#   scripts/size_report.sh [--full] [MODULE.smod FUNCTION]
#
# Configurations: the minimal one (default, in build-size/: the local-sync
# driver and the embedded ELF loader only, no profiling, no f64 math in the
# VM) and --full (every part, as the default build has them, in
# build-size-full/). Embeddings: strata-minimal-run (VM, hal module, one
# local device, embedded ELF loader; no session or driver registry), static
# (glibc and libstdc++ inside) and against the shared C/C++ libraries (the
# runtime's own code); strata-embed-example (examples/embed/embed.c: the C
# API over a session, against the shared C/C++ libraries).
# Without a module, examples/simple_mul.mlir is compiled with build/bin.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-size
parts=(-DSTRATA_HAL_DRIVER_LOCAL_TASK=OFF -DSTRATA_HAL_DRIVER_CUDA=OFF
       -DSTRATA_HAL_LOADER_SYSTEM_LIBRARY=OFF -DSTRATA_HAL_LOADER_VMVX=OFF
       -DSTRATA_ENABLE_PROFILING=OFF -DSTRATA_VM_F64_MATH=OFF)
if [[ "${1:-}" == "--full" ]]; then
  dir=build-size-full
  parts=(-DSTRATA_HAL_DRIVER_LOCAL_TASK=ON -DSTRATA_HAL_DRIVER_CUDA=ON
         -DSTRATA_HAL_LOADER_SYSTEM_LIBRARY=ON -DSTRATA_HAL_LOADER_VMVX=ON
         -DSTRATA_ENABLE_PROFILING=ON -DSTRATA_VM_F64_MATH=ON)
  shift
fi
cmake -S . -B "$dir" -G Ninja -DSTRATA_BUILD_COMPILER=OFF \
  -DSTRATA_BUILD_TESTS=OFF -DSTRATA_BUILD_PYTHON=OFF \
  -DSTRATA_SIZE_OPTIMIZED=ON -DSTRATA_ENABLE_ASSERTIONS=OFF \
  -DCMAKE_BUILD_TYPE=MinSizeRel "${parts[@]}" >/dev/null
cmake --build "$dir" --target strata-minimal-run strata-minimal-run-shared \
  strata-embed-example
module=${1:-}
function=${2:-simple_mul}
if [[ -z "$module" ]]; then
  module=$dir/simple_mul.smod
  build/bin/strata-compile examples/simple_mul.mlir -o "$module"
fi
for binary in strata-minimal-run strata-minimal-run-shared strata-embed-example; do
  strip -o "$dir/$binary.stripped" "$dir/bin/$binary"
  # A broken embedding fails CI; its size is only reported.
  if [[ $binary == strata-embed-example ]]; then
    "$dir/$binary.stripped" --function="$function" "$module" >/dev/null
  else
    "$dir/$binary.stripped" "$module" "$function" >/dev/null
  fi
  bytes=$(stat -c %s "$dir/$binary.stripped")
  echo "== size ($dir): $binary stripped $bytes bytes ($(( (bytes + 1023) / 1024 )) KiB)"
done
if [[ $dir == build-size ]]; then
  # What the minimal configuration leaves out is refused by name.
  out=$("$dir/strata-embed-example.stripped" --device='local-sync?loader=vmvx' \
        "$module" 2>&1 || true)
  if [[ $out != *"loader 'vmvx' is not in this build"*"STRATA_HAL_LOADER_VMVX=OFF"* ]]; then
    echo "error: the minimal runtime accepted or misreported loader=vmvx: $out" >&2
    exit 1
  fi
  out=$("$dir/strata-embed-example.stripped" --device=local-task "$module" 2>&1 || true)
  if [[ $out != *"no HAL driver named 'local-task'"* ]]; then
    echo "error: the minimal runtime accepted or misreported local-task: $out" >&2
    exit 1
  fi
fi
