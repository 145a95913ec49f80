#!/usr/bin/env bash
# Builds the runtime for size (STRATA_SIZE_OPTIMIZED, no compiler, no
# tests) in build-size/, runs strata-minimal-run on a module as a smoke
# test, and reports the stripped sizes of the minimal embedding: static
# (glibc and libstdc++ inside) and against the shared C/C++ libraries (the
# runtime's own code). Sizes are reported, never asserted.
#
#   scripts/size_report.sh [MODULE.smod FUNCTION]
# Without a module, examples/simple_mul.mlir is compiled with build/bin.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-size -G Ninja -DSTRATA_BUILD_COMPILER=OFF \
  -DSTRATA_BUILD_TESTS=OFF -DSTRATA_SIZE_OPTIMIZED=ON \
  -DSTRATA_ENABLE_ASSERTIONS=OFF -DCMAKE_BUILD_TYPE=MinSizeRel >/dev/null
cmake --build build-size --target strata-minimal-run strata-minimal-run-shared
module=${1:-}
function=${2:-simple_mul}
if [[ -z "$module" ]]; then
  module=build-size/simple_mul.smod
  build/bin/strata-compile examples/simple_mul.mlir -o "$module"
fi
for binary in strata-minimal-run strata-minimal-run-shared; do
  strip -o "build-size/$binary.stripped" "build-size/bin/$binary"
  # A broken embedding fails CI; its size is only reported.
  "build-size/$binary.stripped" "$module" "$function" >/dev/null
  bytes=$(stat -c %s "build-size/$binary.stripped")
  echo "== size: $binary stripped $bytes bytes ($(( (bytes + 1023) / 1024 )) KiB)"
done
