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

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "gpu_check: all checks passed"
