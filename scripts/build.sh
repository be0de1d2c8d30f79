#!/usr/bin/env bash
# Installs what is missing, configures and builds collbench into build/ (Release).
# Extra CMake arguments pass through, e.g. scripts/build.sh -DCOLLBENCH_WITH_CUDA=OFF
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
mkdir -p build
# ccache, when installed, makes a rebuild in a fresh clone cheap (paths relative to the tree).
launcher=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
    -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@" >build/configure.log 2>&1 || {
  cat build/configure.log; exit 2; }
grep -E "backends|host:|gpu:" build/configure.log || true
cmake --build build -j "$jobs"
