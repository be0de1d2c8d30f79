#!/usr/bin/env bash
# --timing: each mode runs and says so in the header; --format nccl-tests implies nccl-tests'
# loop and -a 1; bad modes and GPU-only requests without a GPU get one line and exit 2.
# Usage: timing_modes.sh /path/to/collbench
set -uo pipefail
cb=${1:?usage: timing_modes.sh COLLBENCH}
source "$(dirname "$0")/lib/common.sh"
scratch timing
mpirun=${CB_MPIRUN:-mpirun}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

run=(run allreduce --no-db -b 8 -e 64 -n 5 -w 1)
local=("${run[@]}" --np 2 --algo ring,recdoubling)
for mode in per-call nccl-tests osu imb; do
  expect 0 "$cb" "${local[@]}" --timing "$mode" --json "$tmp/$mode.json"
  has "$out" "# timing $mode:"
  grep -q '"status": *"ok"' "$tmp/$mode.json" || fail "$mode: no point measured"
  ! grep -q '"status": *"\(failed\|unsupported\)"' "$tmp/$mode.json" ||
    fail "$mode: a point is not ok: $(grep -m1 -A1 '"message"' "$tmp/$mode.json")"
done
has "$(grep '^# sizes' <<<"$("$cb" "${local[@]}" --timing osu)")" "mean over iterations of the avg"
expect 0 "$cb" "${local[@]}" --format nccl-tests
has "$out" "# timing nccl-tests:"
has "$out" "(-a 1)"
expect 0 "$cb" "${local[@]}"
has "$out" "median over iterations of the max over ranks (-a 3)"

# OSU's mode on MPI_Allreduce, as docs/MEASUREMENT.md compares it with osu_allreduce.
expect 0 "$mpirun" --allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none \
  -np 2 "$cb" "${run[@]}" --algo mpi --timing osu --placement out
has "$out" "# timing osu:"

expect 2 "$cb" "${local[@]}" --timing osu7
has "$err" "--timing 'osu7' is not one of per-call, nccl-tests, osu, imb"
expect 2 "$cb" "${local[@]}" --timing osu --time-budget 10ms
has "$err" "--time-budget needs --timing per-call"

# Without a GPU, the GPU requests are refused with the device's reason (exit 2, one line).
if "$cb" list --np 2 | grep -q "no usable CUDA device"; then
  expect 2 "$cb" "${run[@]}" --np 2 --algo ring --transport cuda
  has "$err" "ring can't run here: no usable CUDA device"
  expect 0 "$cb" list --np 2 --transport cuda
  has "$out" "no usable CUDA device"
  expect 2 env NCCL_DEBUG=WARN "$cb" "${run[@]}" --np 2 --algo nccl --nccl-choice
  has "$err" "--nccl-choice sets NCCL_DEBUG"
fi

[ "$failures" -eq 0 ] || exit 1
echo "timing_modes: ok"
