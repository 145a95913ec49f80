#!/usr/bin/env bash
# The main job on the default example: compile examples/simple_mul.mlir into
# a module file and run it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
mkdir -p build/examples
build/bin/strata-compile examples/simple_mul.mlir -o build/examples/simple_mul.smod
build/bin/strata-run --module=build/examples/simple_mul.smod \
  --function=simple_mul --input="4xf32=1 2 3 4" --input="4xf32=5 6 7 8"
