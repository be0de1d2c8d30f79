#!/usr/bin/env bash
# scripts/gpu-check.sh on a machine without a GPU: every step must end with a status and, unless
# ok, a reason (no driver, no usable device); the script must finish (each step has its own
# timeout, and the whole run a budget), write its logs, per-step JSON and summary, and exit 0
# (nothing failed). On a GPU node the same script is the acceptance check of docs/GPU.md.
# Usage: gpu_check.sh /path/to/collbench   (CB_SOURCE_DIR comes from CTest)
set -uo pipefail
cb=${1:?usage: gpu_check.sh COLLBENCH}
source "$(dirname "$0")/lib/gpu.sh"
gpu_test gpu_check
if [ "$(grep -m1 -E '^  nccl ' <<<"$listed" | awk '{print $3}')" = usable ]; then
  echo "gpu_check: skipped (a GPU is present: run scripts/gpu-check.sh itself)"
  exit 0
fi

expect 2 bash "$src/scripts/gpu-check.sh" --bogus
has "$err" "unknown argument '--bogus'"
expect 2 bash "$src/scripts/gpu-check.sh" --nccl-tests "$tmp" --collbench "$cb"
has "$err" "is not an nccl-tests source tree"
expect 2 bash "$src/scripts/gpu-check.sh" --only some --collbench "$cb"
has "$err" "--only 'some' is not one-gpu or multi-rank"

# The outer timeout only turns a hang into a failure here; the script's own budget is 8 minutes.
expect 0 timeout 590 bash "$src/scripts/gpu-check.sh" --out "$tmp/check" --collbench "$cb" \
  --unit-tests "$build/tests/cb_unit_tests"
summary=$(cat "$tmp/check/summary.txt")
for step in environment list list-cuda topo topo-json unit-gpu d2d-copy nccl-nccltests \
  nccl-percall nccl-graph nccl-register nccl-windows cuda-executor watchdog; do
  line=$(grep -E "^$step " <<<"$summary")
  [ -n "$line" ] || fail "no summary line for $step"
  status=$(awk '{print $2}' <<<"$line")
  case "$status" in
    ok) ;;
    unsupported) [ "$(awk '{print NF}' <<<"$line")" -gt 3 ] || fail "$step: unsupported without a reason" ;;
    *) fail "$step: $line" ;;
  esac
done
has "$summary" "environment            unsupported"
has "$(grep -E '^nccl-nccltests ' <<<"$summary")" "no usable CUDA device"
has "$(grep -E '^unit-gpu ' <<<"$summary")" "skipped"
has "$(grep -E '^watchdog ' <<<"$summary")" "no usable CUDA device"
has "$summary" "NCCL allreduce out-of-place algbw at  128 MiB: n/a"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["failed"] == 0 and len(j["steps"]) == 14 + 20, j' \
  "$tmp/check/summary.json" || fail "summary.json"
ls "$tmp/check"/08-nccl-nccltests.log "$tmp/check"/08-nccl-nccltests.json >/dev/null || fail "step files"

# The multi-rank stage (MPI processes under scripts/gpu-mpirun.sh, each its own NCCL_HOSTID): here
# every step runs and ends unsupported, with the no-device line where collbench reaches the GPU
# path and, where it refuses first (a feature not there yet), what it said, so the next GPU shows
# it. A flag collbench does not know would be a failure of this script: no step may show one.
mr_steps=(mr-colls-2 mr-colls-4 mr-choice-4 mr-graph-2 mr-register-2 mr-windows-2 mr-cuda-executor-4
  mr-watchdog-2 mr-diag-links-4 mr-diag-ranks-4 mr-proxy-dp-4 mr-proxy-tp-4 mr-proxy-pp-4
  mr-replay-dlrm-4 mr-gate-run-a mr-gate-run-b mr-gate mr-report mr-shared-gpu-2 mr-nccl-tests-build)
for step in "${mr_steps[@]}"; do
  line=$(grep -E "^$step " <<<"$summary")
  [ -n "$line" ] || { fail "no summary line for $step"; continue; }
  [ "$(awk '{print $2}' <<<"$line")" = unsupported ] || fail "$step: $line"
  case $step in
    mr-gate | mr-report) has "$line" "needs the two stored runs" ;;
    mr-nccl-tests-build) has "$line" "no nccl-tests source" ;;
    *) grep -qE "no usable CUDA device|no GPU here \(nvidia-smi[^)]*\); collbench: " <<<"$line" ||
      fail "$step: neither the no-device line nor collbench's refusal: $line" ;;
  esac
  ! grep -qiE "not expected|is required|run with --help|unknown option|command not found|No such file" <<<"$line" ||
    fail "$step: the script called collbench wrongly: $line"
done
for step in mr-colls-2 mr-colls-4 mr-choice-4 mr-graph-2 mr-register-2 mr-windows-2 mr-cuda-executor-4 mr-watchdog-2; do
  has "$(grep -E "^$step " <<<"$summary")" "no usable CUDA device"
done
# The steps ran under MPI with a distinct NCCL_HOSTID per process (the launcher's command line).
grep -qF -- "gpu-mpirun.sh -np 4 --oversubscribe -- $cb run " "$tmp/check"/*-mr-colls-4.log ||
  fail "mr-colls-4 did not run under the launcher"

# --only multi-rank: the environment and that stage alone (a stand-in collbench that refuses as
# collbench does without a device keeps this quick; the stage's own logic is what is checked).
mkdir -p "$tmp/fake"
cat >"$tmp/fake/cb-nodevice" <<'FAKE'
#!/bin/bash
echo "collbench: nccl can't run here: no usable CUDA device: stand-in" >&2
exit 2
FAKE
chmod +x "$tmp/fake/cb-nodevice"
expect 0 timeout 300 bash "$src/scripts/gpu-check.sh" --only multi-rank --out "$tmp/only" --collbench "$tmp/fake/cb-nodevice"
only=$(tail -n +3 "$tmp/only/summary.txt" | sed '/^$/,$d' | awk '{print $1}' | tr '\n' ' ')
[ "$only" = "environment ${mr_steps[*]} " ] || fail "--only multi-rank ran: $only"

# scripts/gpu-states.sh (the next GPU loan's check of docs/GPU.md's two states): without a GPU one
# line and exit 2; its bookkeeping here, with a stand-in nvidia-smi and the ring variant for NCCL.
expect 2 bash "$src/scripts/gpu-states.sh" --collbench "$cb"
one_line "$err"
has "$err" "gpu-states: no NVIDIA GPU here"
expect 2 bash "$src/scripts/gpu-states.sh" --rounds 0
has "$err" "--rounds '0' is not a positive integer"
mkdir -p "$tmp/fake"
cat >"$tmp/fake/nvidia-smi" <<'SMI'
#!/bin/bash
[ "$1" = -L ] && { echo "GPU 0: stand-in"; exit 0; }
while true; do echo "2026/11/27 00:00:00.000, 1980 MHz, 3201 MHz, P0, 100.00 W"; sleep 0.1; done
SMI
cat >"$tmp/fake/collbench" <<WRAP
#!/bin/bash
args=("\$@")
# NCCL's variant becomes ring; the warm variant's 20000 warm-ups (for a GPU's clocks) become 5.
for i in "\${!args[@]}"; do
  [ "\${args[\$i]}" = nccl ] && args[\$i]=ring
  [ "\${args[\$i]}" = 20000 ] && args[\$i]=5
done
exec "$cb" "\${args[@]}"
WRAP
chmod +x "$tmp/fake/nvidia-smi" "$tmp/fake/collbench"
expect 0 env PATH="$tmp/fake:$PATH" bash "$src/scripts/gpu-states.sh" --rounds 2 --out "$tmp/states" \
  --collbench "$tmp/fake/collbench"
rows=$(tail -n +2 "$tmp/states/runs.tsv" | awk -F'\t' '$5 ~ /^[0-9]+$/ && $6 == 0 && NF == 12 && $7 > 0' | wc -l)
[ "$rows" -eq 6 ] || fail "gpu-states: 6 runs with their ids and figures expected: $(cat "$tmp/states/runs.tsv")"
for v in auto last warm; do has "$out" "$v "; done
has "$out" "in-place 256K median per run (us): "
grep -q "1980 MHz" "$tmp/states/clocks.csv" || fail "gpu-states: no clocks logged"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "gpu_check: all checks passed"
