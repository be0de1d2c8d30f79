#!/usr/bin/env bash
# Installs what is missing, configures and builds collbench into build/ (Release).
# Extra CMake arguments pass through, e.g. scripts/build.sh -DCOLLBENCH_WITH_CUDA=OFF
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
mkdir -p build
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >build/configure.log 2>&1 || {
  cat build/configure.log; exit 2; }
grep -E "backends|host:|gpu:" build/configure.log || true
cmake --build build -j "$jobs"
