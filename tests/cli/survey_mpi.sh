#!/usr/bin/env bash
# scripts/survey-mpi-allreduce.sh: one row per Open MPI setting, each with a busbw per size (a
# setting that fails would print "(failed: ...)"), the size header once; bad arguments exit 2.
# Usage: survey_mpi.sh /path/to/collbench
set -uo pipefail
cb=${1:?usage: survey_mpi.sh COLLBENCH}
source "$(dirname "$0")/lib/common.sh"
scratch survey
script=${CB_SOURCE_DIR:?}/scripts/survey-mpi-allreduce.sh

expect 0 env COLLBENCH="$cb" bash "$script" -b 1K -e 4K -f 4
has "$out" "# setting \\ bytes"
rows=$(grep -vc '^#' <<<"$out")
[ "$rows" -eq 18 ] || fail "expected 18 settings (3 transports x (default + algorithms 2-6)), got $rows: $out"
grep -q failed <<<"$out" && fail "a setting failed: $out"
bad=$(grep -v '^#' <<<"$out" | awk 'NF != 3' | head -n 3)
[ -z "$bad" ] || fail "rows without a figure for each of the 2 sizes: $bad"
has "$(grep '^# setting' <<<"$out")" "1024"

expect 2 env COLLBENCH="$cb" bash "$script" --bogus
has "$err" "unknown argument '--bogus'"
expect 2 env COLLBENCH=/nonexistent bash "$script"
has "$err" "not built"

[ "$failures" -eq 0 ] || exit 1
echo "survey_mpi: ok"
