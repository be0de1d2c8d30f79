#!/usr/bin/env bash
# ASan + UBSan: builds with -fsanitize=address,undefined (no recovery: the first finding fails;
# LeakSanitizer on), then runs the CTest labels `unit` (every unit test) and `sanitize` (short CLI
# runs: the bad-input battery and a small sweep of every collective in the local world). With
# --all, every test but the opt-in netns ones: the unit tests, every CLI test (the import fuzzer,
# the signal trials, the hung-rank and fault tests among them), the MPI tests under mpirun and the
# Slurm cluster (35 min on an idle 2-core machine, the build 25 of them). Host code only (the CUDA
# path is not built here). Pass -R REGEX to run a subset.
# Usage: scripts/sanitize.sh [--all] [extra ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
labels=(-L 'unit|sanitize')
targets=(--target collbench cb_unit_tests)
if [ "${1:-}" = --all ]; then
  shift
  labels=(-LE netns)
  targets=()
fi
bash scripts/install-deps.sh
dir=build-sanitize
mkdir -p "$dir"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLLBENCH_WITH_CUDA=OFF \
  -DCOLLBENCH_BUILD_MICRO=OFF -DCOLLBENCH_SANITIZE=address,undefined >"$dir/configure.log" 2>&1 ||
  { cat "$dir/configure.log"; exit 2; }
cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# detect_leaks: the unit tests and the CLI must not leak either; what Open MPI itself never frees
# is suppressed (tests/sanitize/lsan.supp), which needs whole stacks (fast_unwind_on_malloc=0).
# intercept_tls_get_addr=0: GCC 12's LeakSanitizer crashes in its own leak check at exit now and
# then ("Tracer caught signal 11", "LeakSanitizer has encountered a fatal error": the intermittent
# abort at exit) while walking the dynamic TLS of the local world's exited rank threads; 2 of 15
# `run allreduce --np 3` exits with it, 0 of 45 without that tracking. UBSan prints the stack.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:fast_unwind_on_malloc=0:intercept_tls_get_addr=0
export LSAN_OPTIONS=suppressions=$PWD/tests/sanitize/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The import fuzzer's memory bounds, with ASan's shadow memory and quarantine on top.
export CB_IMPORT_MAX_RSS_KIB=1048576 CB_IMPORT_LINE_MAX_RSS_KIB=524288
ctest --test-dir "$dir" "${labels[@]}" --output-on-failure -j 2 --timeout 1500 "$@"
