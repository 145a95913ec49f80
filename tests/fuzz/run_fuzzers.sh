#!/usr/bin/env bash
# Runs every libFuzzer target of a -DSTRATA_BUILD_FUZZERS=ON build for a
# fixed time each, starting from the seed corpus (tests/fuzz/corpus/<target>)
# and the inputs earlier runs kept (BUILD/fuzz/work/<target>).
#   tests/fuzz/run_fuzzers.sh BUILD_DIR [SECONDS_PER_TARGET] [TARGET...]
# Prints the executions each target survived and adds them to
# BUILD/fuzz/executions.log (one line per run: target, executions, seconds).
# A crash leaves its input in BUILD/fuzz/artifacts/ and fails the script; to
# keep it as a regression test, minimise it
#   BUILD/fuzz/<target> -minimize_crash=1 -runs=10000 <crash file>
# fix the bug and copy the minimised input to tests/fuzz/regressions/<target>/
# (CTest's fuzz_corpus_<target> replays that directory in every build).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "${1:?usage: run_fuzzers.sh BUILD_DIR [SECONDS] [TARGET...]}" && pwd)"
seconds="${2:-25}"
shift $(($# >= 2 ? 2 : $#))
targets=("$@")
[ ${#targets[@]} -gt 0 ] ||
  targets=(module_fuzzer module_bytecode_fuzzer tensor_input_fuzzer
    elf_loader_fuzzer cuda_executable_fuzzer)

mkdir -p "$build/fuzz/artifacts"
status=0
for target in "${targets[@]}"; do
  binary="$build/fuzz/$target"
  if [ ! -x "$binary" ]; then
    echo "run_fuzzers: $binary is missing (configure with -DSTRATA_BUILD_FUZZERS=ON)" >&2
    exit 1
  fi
  work="$build/fuzz/work/$target"
  mkdir -p "$work"
  log="$build/fuzz/$target.log"
  # -rss_limit_mb: a leak or a runaway allocation fails instead of swapping;
  # -timeout: a hang is a failure (every target bounds its own work).
  asan_options="${ASAN_OPTIONS:-detect_leaks=1}"
  # libonnx and protobuf are not instrumented: their std::vector
  # annotations would not match the importer's (false container overflows).
  case "$target" in onnx_*)
    asan_options="$asan_options:detect_container_overflow=0" ;;
  esac
  # The structure-aware mutators grow their inputs (instructions, nodes,
  # wrappers): room beyond the largest seed, which libFuzzer's default is.
  extra=()
  case "$target" in module_bytecode_fuzzer | onnx_graph_fuzzer)
    extra=(-max_len=65536) ;;
  esac
  set +e
  ASAN_OPTIONS="$asan_options" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}" \
    "$binary" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 \
    -print_final_stats=1 -artifact_prefix="$build/fuzz/artifacts/$target-" \
    "${extra[@]}" "$work" "$here/corpus/$target" >"$log" 2>&1
  code=$?
  set -e
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  echo "$target: ${runs:-?} executions in ${seconds} s, exit code $code"
  echo "$target ${runs:-0} $seconds $(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    >>"$build/fuzz/executions.log"
  if [ "$code" -ne 0 ]; then
    status=1
    echo "run_fuzzers: $target failed; the end of its log ($log):" >&2
    grep -v -E '^#[0-9]+\s+(NEW|REDUCE|pulse)|NEW_FUNC' "$log" | tail -40 >&2
  fi
done
# Totals over every run recorded in this build directory.
awk '{ runs[$1] += $2; secs[$1] += $3 }
     END { for (t in runs) printf "total %s: %d executions in %d s\n", t, runs[t], secs[t] }' \
  "$build/fuzz/executions.log" | sort
exit $status
