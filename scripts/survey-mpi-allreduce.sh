#!/usr/bin/env bash
# MPI's fastest settings for MPI_Allreduce on this machine: runs collbench's `mpi` variant under
# Open MPI transport and coll_tuned algorithm settings, one line of busbw (GB/s) per setting, so
# a hand-written algorithm is compared with MPI at its best, not at its defaults.
#   scripts/survey-mpi-allreduce.sh [-np N] [-b MIN] [-e MAX] [-f FACTOR] [-r REPEATS]
# Uses build/cli/collbench (COLLBENCH overrides). Nothing is stored (--no-db).
set -euo pipefail
np=2 min=32M max=256M factor=2 repeats=1
while [ $# -gt 0 ]; do
  case "$1" in
    -np) np=$2; shift 2 ;;
    -b) min=$2; shift 2 ;;
    -e) max=$2; shift 2 ;;
    -f) factor=$2; shift 2 ;;
    -r) repeats=$2; shift 2 ;;
    *) echo "survey-mpi-allreduce.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${COLLBENCH:-$top/build/cli/collbench}
[ -x "$bin" ] || { echo "survey-mpi-allreduce.sh: $bin not built (bash scripts/build.sh)" >&2; exit 2; }
launch=(mpirun --allow-run-as-root -np "$np")
[ "$np" -le "$(nproc)" ] || launch+=(--oversubscribe)
nocma="--mca btl_vader_single_copy_mechanism none"
ucx="--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any"
alg="--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm"
# name|MCA arguments. coll_tuned allreduce algorithms: 1 basic linear, 2 nonoverlapping
# (reduce + bcast), 3 recursive doubling, 4 ring, 5 segmented ring, 6 rabenseifner.
settings=(
  "default|"
  "vader-nocma|$nocma"
  "ucx|$ucx"
)
for a in 2 3 4 5 6; do
  settings+=("alg$a|$alg $a" "vader-nocma+alg$a|$nocma $alg $a" "ucx+alg$a|$ucx $alg $a")
done
echo "# MPI_Allreduce busbw (GB/s), float sum, out of place, $np ranks, $min..$max x$factor"
header=""
for ((rep = 1; rep <= repeats; rep++)); do
  for s in "${settings[@]}"; do
    name=${s%%|*}
    # shellcheck disable=SC2086  # the MCA arguments are meant to split
    out=$("${launch[@]}" ${s#*|} "$bin" run allreduce -b "$min" -e "$max" -f "$factor" \
      --algo mpi --placement out --no-db 2>&1) || true
    row=$(awk '/^ +[0-9]/{printf "%9s", $8}' <<<"$out")
    if [ -z "$header" ] && [ -n "$row" ]; then
      header=$(awk '/^ +[0-9]/{printf "%9s", $1}' <<<"$out")
      printf '%-20s%s\n' "# setting \\ bytes" "$header"
    fi
    printf '%-20s%s\n' "$name" "${row:-  (failed: $(tail -n 1 <<<"$out"))}"
  done
done
