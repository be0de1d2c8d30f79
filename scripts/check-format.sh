#!/usr/bin/env bash
# Fails when any C++/CUDA source differs from .clang-format. Usage: check-format.sh [clang-format]
set -euo pipefail
cf=${1:-clang-format}
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.h' '*.cpp' '*.cu' '*.cuh' 2>/dev/null || true)
if [ ${#files[@]} -eq 0 ]; then
  mapfile -t files < <(find core collectives bench topology results session cli tests training_proxies \
    -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh')
fi
"$cf" --dry-run --Werror "${files[@]}"
echo "format: ${#files[@]} files ok"
