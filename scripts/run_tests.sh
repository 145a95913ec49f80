#!/usr/bin/env bash
# Sets up, builds and runs every test: unit tests, compiler lit tests and
# end-to-end tests (ctest), then the runtime's unit and end-to-end tests
# again under AddressSanitizer + UndefinedBehaviorSanitizer, then the
# multi-threaded HAL tests (local-task worker pool) under ThreadSanitizer,
# then each libFuzzer target for a short fixed time. Between the first two,
# the minimal embedding is built for size and its size reported.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
scripts/setup.sh
echo "== build: $(( $(date +%s) - start )) s"
ctest --test-dir build --output-on-failure -j2
echo "== tests: $(( $(date +%s) - start )) s since start"

# The minimal embedding built for size (STRATA_SIZE_OPTIMIZED): it must run
# a module; its stripped size is reported, not asserted.
scripts/size_report.sh
echo "== size report: $(( $(date +%s) - start )) s since start"

# The runtime (and tools) with ASan+UBSan; the compiler from build/ compiles
# the end-to-end programs.
cmake -S . -B build-asan -G Ninja -DSTRATA_BUILD_COMPILER=OFF \
  -DSTRATA_ENABLE_ASAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSTRATA_COMPILER_BIN_DIR="$PWD/build/bin" >/dev/null
cmake --build build-asan
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j2
echo "== sanitizer tests: $(( $(date +%s) - start )) s since start"

# The concurrency tests under ThreadSanitizer (small): the worker pool and
# queue thread, profiling spans from the queue thread, suspended and async
# invocations and calls, several sessions on several threads, VMVX
# workgroups on pooled contexts from several threads, deadlines and
# cancellation from another thread (VM, devices, sessions).
cmake -S . -B build-tsan -G Ninja -DSTRATA_BUILD_COMPILER=OFF \
  -DSTRATA_ENABLE_TSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSTRATA_COMPILER_BIN_DIR="$PWD/build/bin" >/dev/null
cmake --build build-tsan --target hal_local_task_test hal_executable_test \
  hal_device_test hal_vmvx_loader_test vm_invocation_test session_async_test \
  session_stress_test hal_deadline_test vm_deadline_test session_deadline_test
TSAN_OPTIONS=halt_on_error=1 ctest --test-dir build-tsan --output-on-failure \
  -j2 -R '^(hal_(local_task|executable|device|vmvx_loader|deadline)|vm_(invocation|deadline)|session_(async|stress|deadline))_test'
echo "== thread sanitizer tests: $(( $(date +%s) - start )) s since start"

# libFuzzer targets (ASan+UBSan): each runs for
# STRATA_FUZZ_SECONDS (25 s by default) from the seed corpus; a crash fails
# CI (tests/fuzz/run_fuzzers.sh says how to keep it as a regression input).
cmake -S . -B build-fuzz -G Ninja -DSTRATA_BUILD_COMPILER=OFF \
  -DSTRATA_ENABLE_ASAN=ON -DSTRATA_BUILD_FUZZERS=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz --target module_fuzzer module_bytecode_fuzzer \
  tensor_input_fuzzer elf_loader_fuzzer cuda_executable_fuzzer
tests/fuzz/run_fuzzers.sh build-fuzz "${STRATA_FUZZ_SECONDS:-25}"
# The ONNX importer's targets (byte-level and graph-aware) need a compiler
# build: only the importer library and the targets are built, not the rest
# of the compiler (15 files against the shared libMLIR/libLLVM: 1.5-2.5 min
# without ccache on one core, about a second with it).
cmake -S . -B build-fuzz-onnx -G Ninja -DSTRATA_BUILD_COMPILER=ON \
  -DSTRATA_ENABLE_ASAN=ON -DSTRATA_BUILD_FUZZERS=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz-onnx --target onnx_importer_fuzzer onnx_graph_fuzzer
tests/fuzz/run_fuzzers.sh build-fuzz-onnx "${STRATA_FUZZ_SECONDS:-25}" \
  onnx_importer_fuzzer onnx_graph_fuzzer
echo "== fuzzing: $(( $(date +%s) - start )) s since start"
