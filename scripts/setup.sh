#!/usr/bin/env bash
# Installs every Debian package Strata needs (idempotent; run as root on a
# fresh Debian 12) and builds everything into build/.
#   scripts/setup.sh            install + build
#   scripts/setup.sh --no-build install only
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  # build
  cmake ninja-build ccache git
  # compiler: MLIR/LLVM 22, lld for linking executables, clang for the build
  # and the executable helpers (llvm-22: llvm-ar, llvm-objcopy, llvm-nm)
  libmlir-22-dev mlir-22-tools llvm-22 llvm-22-dev llvm-22-tools lld-22 clang-22
  # module schema
  flatbuffers-compiler libflatbuffers-dev
  # the tools' JSON output (strata-bench --json; header-only)
  nlohmann-json3-dev
  # tests (pkgconf: tests/install builds examples/embed with pkg-config too)
  libgtest-dev libgmock-dev python3-numpy pkgconf
  # the Python package (python/: pybind11 extension) and its tests
  pybind11-dev python3-dev python3-pytest
  # the model corpus: torchvision architectures exported by the tests
  python3-torch python3-torchvision
  # sanitizer runtimes for clang (ASan/UBSan/TSan builds)
  libclang-rt-22-dev
  # ONNX importer (libonnx + protobuf) and its conformance suite
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata python3-onnx
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing packages and not root; run as root or install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[ "${1:-}" = "--no-build" ] && exit 0

cmake -S . -B build -G Ninja ${STRATA_CMAKE_ARGS:-} >/dev/null
cmake --build build
