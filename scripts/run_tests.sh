#!/usr/bin/env bash
# Sets up, builds and runs every test: unit tests, compiler lit tests and
# end-to-end tests (ctest), then the same suites under ASan+UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
scripts/setup.sh
echo "build: $(( $(date +%s) - start )) s"
ctest --test-dir build --output-on-failure -j2
echo "tests: $(( $(date +%s) - start )) s since start"
