#!/usr/bin/env bash
# ASan + UBSan: builds the unit tests and the collbench binary with
# -fsanitize=address,undefined (no recovery: the first finding fails), then runs the CTest labels
# `unit` (every unit test) and `sanitize` (short CLI runs: the bad-input battery and a small
# sweep of every collective in the local world). Host code only (the CUDA path is not built here).
# CI budget: on an idle 2-core machine the build dominates; pass -R REGEX to run a subset.
# Usage: scripts/sanitize.sh [extra ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
dir=build-sanitize
mkdir -p "$dir"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLLBENCH_WITH_CUDA=OFF \
  -DCOLLBENCH_BUILD_MICRO=OFF -DCOLLBENCH_SANITIZE=address,undefined >"$dir/configure.log" 2>&1 ||
  { cat "$dir/configure.log"; exit 2; }
cmake --build "$dir" -j "$(nproc)" --target collbench cb_unit_tests
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# detect_leaks: the unit tests and the CLI must not leak either. UBSan prints the stack.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$dir" -L 'unit|sanitize' --output-on-failure -j 2 --timeout 900 "$@"
