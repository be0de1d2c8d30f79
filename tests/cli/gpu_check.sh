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
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["failed"] == 0 and len(j["steps"]) == 14, j' \
  "$tmp/check/summary.json" || fail "summary.json"
ls "$tmp/check"/08-nccl-nccltests.log "$tmp/check"/08-nccl-nccltests.json >/dev/null || fail "step files"

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
