#!/usr/bin/env bash
# The one-GPU acceptance of collbench's GPU path (docs/GPU.md, "First contact on one GPU"):
#
#   bash scripts/gpu-check.sh [--out DIR] [--nccl-tests SRC] [--collbench PATH] [--unit-tests PATH]
#
# Runs each step under its own `timeout`, all of them within 8 minutes (a step gets what is left
# of the budget when that is less than its own limit), and writes to DIR (default
# gpu-check-<date>): per step NN-name.log (command lines and output) and NN-name.json (status,
# reason, seconds, exit code), the runs' own --json files, and summary.txt / summary.json. Each
# step ends ok, failed (with the reason) or unsupported (with the reason: no driver, no device);
# the summary adds the figures to look at: the device-to-device copy rate (the peak any
# collective can approach on one GPU), NCCL's out-of-place algbw at 256 MiB and 1 GiB, and the
# small-message floor. With --nccl-tests SRC (an nccl-tests checkout, never part of this
# repository) it builds all_reduce_perf/all_gather_perf with nvcc against this node's NCCL and
# prints their columns beside collbench's nccl-tests mode, with the ratio per size.
#
# Binaries: --collbench/--unit-tests, else the bundle's launchers next to this script
# (scripts/gpu-bundle.sh copies it there), else build/ of the source tree. Exit status: 0 when
# no step failed, 1 when one did, 2 for bad arguments.
set -uo pipefail

usage() {
  echo "usage: gpu-check.sh [--out DIR] [--nccl-tests SRC] [--collbench PATH] [--unit-tests PATH]" >&2
  exit 2
}
out="gpu-check-$(date +%Y%m%d-%H%M%S)"
nccl_tests=""
collbench=""
unit_tests=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) [[ $# -ge 2 ]] || usage; out=$2; shift 2 ;;
    --nccl-tests) [[ $# -ge 2 ]] || usage; nccl_tests=$2; shift 2 ;;
    --collbench) [[ $# -ge 2 ]] || usage; collbench=$2; shift 2 ;;
    --unit-tests) [[ $# -ge 2 ]] || usage; unit_tests=$2; shift 2 ;;
    -h | --help) usage ;;
    *) echo "gpu-check: unknown argument '$1'" >&2; usage ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
if [[ -z $collbench ]]; then
  if [[ -x $here/collbench && -f $here/env.sh ]]; then collbench=$here/collbench; else collbench=$here/../build/cli/collbench; fi
fi
if [[ -z $unit_tests ]]; then
  if [[ -x $here/cb_unit_tests && -f $here/env.sh ]]; then unit_tests=$here/cb_unit_tests; else unit_tests=$here/../build/tests/cb_unit_tests; fi
fi
[[ -x $collbench ]] || { echo "gpu-check: no collbench at $collbench (--collbench PATH)" >&2; exit 2; }
if [[ -n $nccl_tests && ! -f $nccl_tests/src/all_reduce.cu ]]; then
  echo "gpu-check: $nccl_tests is not an nccl-tests source tree (no src/all_reduce.cu)" >&2
  exit 2
fi
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
# The bundle's launchers find NCCL; the same directory serves nccl-tests.
[[ -f $here/env.sh ]] && (source "$here/env.sh" >/dev/null 2>&1) && nccl_dir=$(source "$here/env.sh" && echo "$COLLBENCH_NCCL_DIR") || nccl_dir=""

budget=480
start=$SECONDS
n=0
declare -a rows=()
failed_any=0

json_str() {  # a JSON string literal
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\t'/ }
  s=${s//$'\r'/ }
  s=${s//$'\n'/ }
  printf '"%s"' "$s"
}

# The one line that says why a command did not run: collbench's own error line, else the last
# non-empty line of its output.
reason_of() {
  local log=$1 line
  line=$(grep -E "^collbench: |no usable CUDA device|no CUDA devices|not found|error" "$log" | tail -1)
  [[ -n $line ]] || line=$(grep -v '^\s*$' "$log" | tail -1)
  echo "${line:0:300}"
}

# finish NAME STATUS REASON SECONDS RC: records a step.
finish() {
  local name=$1 status=$2 reason=$3 secs=$4 rc=$5
  printf '{"step": %s, "status": %s, "reason": %s, "seconds": %s, "exit_code": %s}\n' \
    "$(json_str "$name")" "$(json_str "$status")" "$(json_str "$reason")" "$secs" "$rc" \
    >"$out/$(printf '%02d' "$n")-$name.json"
  rows+=("$name|$status|$reason|$secs")
  [[ $status == failed ]] && failed_any=1
  printf '%-22s %-12s %5ss  %s\n' "$name" "$status" "$secs" "$reason"
}

# step NAME LIMIT CMD...: runs CMD under `timeout` (within what is left of the budget), output to
# the step's log; sets $log, $rc and $secs for the caller to judge.
step() {
  local name=$1 limit=$2
  shift 2
  n=$((n + 1))
  log="$out/$(printf '%02d' "$n")-$name.log"
  local left=$((budget - (SECONDS - start)))
  if ((left < 5)); then
    rc=124
    secs=0
    echo "# skipped: the 8-minute budget is spent" >"$log"
    return
  fi
  ((limit > left)) && limit=$left
  {
    echo "# $(date -u +%FT%TZ) timeout ${limit}s"
    printf '$'
    printf ' %q' "$@"
    echo
  } >"$log"
  local t0=$SECONDS
  timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1
  rc=$?
  secs=$((SECONDS - t0))
  ((rc == 124 || rc == 137)) && echo "# killed: still running after ${limit}s" >>"$log"
}

# A collbench measuring step: ok on exit 0 with no failed point, unsupported when it refused for
# want of a device/driver (exit 2 with that line, or every point unsupported), failed otherwise.
judge_run() {
  local name=$1 json=$2
  if ((rc == 124 || rc == 137)); then
    finish "$name" failed "hung: killed after ${secs}s" "$secs" "$rc"
  elif ((rc == 0)); then
    local bad
    bad=$(grep -cE '"status": *"failed"' "$json" 2>/dev/null)
    if [[ ${bad:-0} != 0 ]]; then
      finish "$name" failed "$bad point(s) failed (see $(basename "$json"))" "$secs" "$rc"
    elif [[ -f $json ]] && ! grep -qE '"status": *"ok"' "$json"; then
      # The device variants' reason, not a host variant's ("needs an MPI world").
      local msgs
      msgs=$(grep -oE '"message": *"[^"]*"' "$json" | cut -d'"' -f4)
      finish "$name" unsupported "every point unsupported: $( (grep -m1 -E 'CUDA|GPU' <<<"$msgs" || head -1 <<<"$msgs") | head -1)" "$secs" "$rc"
    else
      finish "$name" ok "" "$secs" "$rc"
    fi
  elif grep -qE "no usable CUDA device|no CUDA devices|CUDA driver|libnccl.so.2 not found" "$log"; then
    finish "$name" unsupported "$(reason_of "$log")" "$secs" "$rc"
  else
    finish "$name" failed "exit $rc: $(reason_of "$log")" "$secs" "$rc"
  fi
}

run_step() {  # run_step NAME LIMIT ARGS... (collbench run ARGS --json NN-name.run.json --no-db)
  local name=$1 limit=$2
  shift 2
  local json
  json="$out/$(printf '%02d' $((n + 1)))-$name.run.json"
  step "$name" "$limit" "$collbench" run "$@" --np "$ngpu" --no-db --json "$json"
  judge_run "$name" "$json"
}

# One local-world rank per GPU (a world larger than the GPUs is refused; see docs/GPU.md).
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
((ngpu > 0)) || ngpu=1
echo "# gpu-check: $collbench -> $out ($ngpu rank(s))"

# 1. The node: GPU, driver, the NCCL the launchers found.
step environment 30 env COLLBENCH_NCCL_DIR="$nccl_dir" bash -c 'nvidia-smi --query-gpu=index,name,driver_version,memory.total,pci.bus_id --format=csv && nvidia-smi topo -m; s=$?; echo "NCCL: ${COLLBENCH_NCCL_DIR:-the loader path}"; exit $s'
if ! command -v nvidia-smi >/dev/null 2>&1; then
  finish environment unsupported "nvidia-smi not found: no NVIDIA driver on this machine" "$secs" "$rc"
elif ((rc != 0)); then
  finish environment unsupported "nvidia-smi: $(reason_of "$log")" "$secs" "$rc"
else
  finish environment ok "$(grep -m1 -E '^[0-9]+,' "$log" | cut -d, -f2-3 | sed 's/^ //')" "$secs" "$rc"
fi

# 2. Which variants can run: nccl must be usable, and with --transport cuda the device twins of
# the hand-written algorithms.
for t in "" cuda; do
  name=list${t:+-$t}
  step "$name" 60 "$collbench" list --np "$ngpu" ${t:+--transport $t}
  if ((rc != 0)); then
    finish "$name" failed "exit $rc: $(reason_of "$log")" "$secs" "$rc"
  else
    pattern='^  nccl '
    [[ -n $t ]] && pattern='^  ring '
    state=$(grep -m1 -E "$pattern" "$log" | awk '{print $3}')
    if [[ $state == usable ]]; then
      finish "$name" ok "" "$secs" "$rc"
    else
      why=$(grep -A3 -E "$pattern" "$log" | grep -m1 "why not here" | sed 's/.*why not here: //')
      finish "$name" unsupported "${why:-not usable}" "$secs" "$rc"
    fi
  fi
done

# 3. The topology (NVML through dlopen): the GPU must appear.
step topo 60 "$collbench" topo
if ((rc != 0)); then finish topo failed "exit $rc: $(reason_of "$log")" "$secs" "$rc"; else finish topo ok "" "$secs" "$rc"; fi
step topo-json 60 "$collbench" topo --json
if ((rc != 0)); then
  finish topo-json failed "exit $rc: $(reason_of "$log")" "$secs" "$rc"
elif command -v python3 >/dev/null && ! sed '1,2d' "$log" | python3 -c 'import json,sys; json.load(sys.stdin)' 2>/dev/null; then
  finish topo-json failed "output is not JSON" "$secs" "$rc"
else
  finish topo-json ok "" "$secs" "$rc"
fi

# 4. The device unit tests: must pass, not skip.
if [[ -x $unit_tests ]]; then
  step unit-gpu 120 "$unit_tests" --gtest_filter='GpuDevice.*' --gtest_output="json:$out/$(printf '%02d' $((n + 1)))-unit-gpu.gtest.json"
  passed=$(grep -cE '^\[       OK \] .* \([0-9]+ ms\)' "$log")
  skipped=$(grep -cE '^\[  SKIPPED \] .* \([0-9]+ ms\)' "$log")
  if ((rc == 124 || rc == 137)); then
    finish unit-gpu failed "hung: killed after ${secs}s" "$secs" "$rc"
  elif ((rc != 0)); then
    finish unit-gpu failed "$(grep -cE '^\[  FAILED  \] .* \([0-9]+ ms\)' "$log") failed: $(grep -m1 '^\[  FAILED  \]' "$log")" "$secs" "$rc"
  elif ((skipped > 0)); then
    why=$(grep -m1 -E 'no usable CUDA|no CUDA devices' "$log")
    finish unit-gpu unsupported "$skipped skipped, $passed passed: ${why:-see the log}" "$secs" "$rc"
  else
    finish unit-gpu ok "$passed passed" "$secs" "$rc"
  fi
else
  n=$((n + 1))
  finish unit-gpu failed "no unit-test binary at $unit_tests (--unit-tests PATH)" 0 0
fi

# 5. The device-to-device copy rate: on one rank the ring schedule on the CUDA executor is one
# cudaMemcpyAsync of the buffer, so its out-of-place algbw at 1 GiB is the copy rate.
run_step d2d-copy 60 allreduce --algo ring --transport cuda -b 1G -e 1G -n 20 -w 5 -c 0 --placement out
# 6. NCCL in nccl-tests' format, checked once per size.
run_step nccl-nccltests 150 allreduce,allgather,reduce_scatter --algo nccl -b 8 -e 1G -f 4 --format nccl-tests -c 1
# 7. collbench's per-call timing over several types and ops, avg included.
run_step nccl-percall 90 allreduce --algo nccl -b 8 -e 64M -f 16 -d float,half,bfloat16,int32,double -o sum,avg,max,prod -c 1
# 8. Graphs and buffer registration.
run_step nccl-graph 60 allreduce --algo nccl -b 8 -e 1G -f 4 -G 10 --format nccl-tests -c 1
run_step nccl-register 60 allreduce --algo nccl -b 8 -e 1G -f 4 -R 1 --format nccl-tests -c 1
run_step nccl-windows 60 allreduce --algo nccl -b 8 -e 1G -f 4 -R 2 --format nccl-tests -c 1
# 9. The CUDA executor over every hand-written algorithm.
run_step cuda-executor 120 allreduce,allgather,reduce_scatter,broadcast,reduce,alltoall --algo all --transport cuda -b 8 -e 16M -f 16 -c 1

# 10. The watchdog: 200000 back-to-back 1 GiB calls (over a minute of work) under -T 10 must end
# in about 10 s with one line and a non-zero exit: the enqueue blocks once the launch queue is
# full, and the watchdog aborts the communicator (ncclCommAbort) to end it. A hang is a failure.
step watchdog 90 "$collbench" run allreduce --algo nccl -b 1G -e 1G --timing nccl-tests -w 0 -n 200000 -c 0 -T 10 --placement out --np "$ngpu" --no-db
if ((rc == 124 || rc == 137)); then
  finish watchdog failed "hung: killed after ${secs}s" "$secs" "$rc"
elif grep -qE "no usable CUDA device|no CUDA devices" "$log"; then
  finish watchdog unsupported "$(reason_of "$log")" "$secs" "$rc"
elif ((rc != 0)) && grep -qE "did not complete (within 10 s|before the deadline)" "$log"; then
  lines=$(grep -cE "^collbench: |did not complete" "$log")
  finish watchdog ok "exit $rc after ${secs}s: $(grep -m1 -E 'did not complete' "$log" | cut -c1-160) ($lines line(s))" "$secs" "$rc"
else
  finish watchdog failed "exit $rc without the deadline line: $(reason_of "$log")" "$secs" "$rc"
fi

# 11. nccl-tests beside collbench on the same GPU.
nt_dir=""
if [[ -n $nccl_tests ]]; then
  # NCCL's header and library: the bundle's NCCL (the wheel has include/ beside lib/), else
  # next to CUDA. nccl-tests links -lnccl, which the wheel names libnccl.so.2 only.
  nccl_home="$out/nccl-home"
  mkdir -p "$nccl_home/lib" "$nccl_home/include"
  for inc in "${nccl_dir:+$nccl_dir/../include}" /usr/local/cuda/include /usr/include; do
    [[ -n $inc && -f $inc/nccl.h ]] && { ln -sf "$(cd "$inc" && pwd)/nccl.h" "$nccl_home/include/nccl.h"; break; }
  done
  for lib in "$nccl_dir" /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/lib/x86_64-linux-gnu; do
    [[ -n $lib && -e $lib/libnccl.so.2 ]] && { ln -sf "$(cd "$lib" && pwd)/libnccl.so.2" "$nccl_home/lib/libnccl.so"; ln -sf "$(cd "$lib" && pwd)/libnccl.so.2" "$nccl_home/lib/libnccl.so.2"; break; }
  done
  step nccl-tests-build 180 make -C "$nccl_tests/src" -j 16 BUILDDIR="$out/nccl-tests-build" \
    NCCL_HOME="$nccl_home" CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}" \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
    "$out/nccl-tests-build/all_reduce_perf" "$out/nccl-tests-build/all_gather_perf"
  if [[ ! -f $nccl_home/include/nccl.h ]]; then
    finish nccl-tests-build failed "nccl.h not found (the wheel's include/ or /usr/local/cuda/include)" "$secs" "$rc"
  elif ((rc != 0)); then
    finish nccl-tests-build failed "exit $rc: $(reason_of "$log")" "$secs" "$rc"
  else
    finish nccl-tests-build ok "" "$secs" "$rc"
    nt_dir="$out/nccl-tests-build"
    # Three interleaved rounds of nccl-tests and collbench's nccl-tests mode, the same warm-up and
    # iterations (-w 5 -n 20): the summary compares medians per size, not one run of each.
    for round in 1 2 3; do
      for c in all_reduce all_gather; do
        step "nccl-tests-$c-$round" 60 env LD_LIBRARY_PATH="$nccl_home/lib:${LD_LIBRARY_PATH:-}" "$nt_dir/${c}_perf" -b 8 -e 1G -f 4 -g 1 -w 5 -n 20
        if ((rc == 0)); then
          finish "nccl-tests-$c-$round" ok "" "$secs" "$rc"
        elif grep -qE "driver version is insufficient|no CUDA-capable device" "$log"; then
          finish "nccl-tests-$c-$round" unsupported "$(grep -m1 -oE "CUDA failure.*" "$log")" "$secs" "$rc"
        else
          finish "nccl-tests-$c-$round" failed "exit $rc: $(reason_of "$log")" "$secs" "$rc"
        fi
      done
      run_step "cb-nccltests-$round" 60 allreduce,allgather --algo nccl -b 8 -e 1G -f 4 --format nccl-tests -w 5 -n 20 -c 1
    done
  fi
fi

# Summary: the steps, then the figures (python3 reads the runs' JSON and the nccl-tests tables).
{
  echo "# gpu-check summary ($(date -u +%FT%TZ), $(hostname), $((SECONDS - start)) s)"
  printf '%-22s %-12s %6s  %s\n' step status seconds reason
  for r in "${rows[@]}"; do
    IFS='|' read -r s st why secs <<<"$r"
    printf '%-22s %-12s %6s  %s\n' "$s" "$st" "$secs" "$why"
  done
} >"$out/summary.txt"
if command -v python3 >/dev/null 2>&1; then
  python3 - "$out" >>"$out/summary.txt" 2>&1 <<'PY'
import glob, json, os, re, sys
out = sys.argv[1]
def points(pattern):
    files = sorted(glob.glob(os.path.join(out, pattern)))
    if not files:
        return []
    try:
        return json.load(open(files[0])).get("points", [])
    except (OSError, ValueError):
        return []
def ok(p, coll, placement="out"):
    return p.get("status") == "ok" and p.get("collective") == coll and p.get("placement") == placement
print("\n# figures")
# The CUDA runtime and the NCCL library actually loaded, from the run header.
for log in sorted(glob.glob(os.path.join(out, "*-nccl-nccltests.log"))):
    versions = [l.strip() for l in open(log, errors="replace") if l.startswith("# cuda")]
    print("loaded: %s" % (versions[0].lstrip("# ") if versions else "n/a (no run header)"))
copy = [p for p in points("*-d2d-copy.run.json") if p.get("status") == "ok"]
print("device-to-device copy (1 GiB, GB/s of data moved): %s" %
      ("%.1f" % copy[0]["algbw_gbps"] if copy else "n/a (step not ok)"))
nccl = points("*-nccl-nccltests.run.json")
for size in (128 << 20, 512 << 20):
    row = [p for p in nccl if ok(p, "allreduce") and p["bytes"] == size]
    print("NCCL allreduce out-of-place algbw at %4d MiB: %s" %
          (size >> 20, "%.1f GB/s" % row[0]["algbw_gbps"] if row else "n/a"))
small = sorted((p for p in nccl if ok(p, "allreduce")), key=lambda p: p["bytes"])
print("small-message floor (allreduce, smallest size): %s" %
      ("%.2f us at %d B" % (small[0]["time_us"], small[0]["bytes"]) if small else "n/a"))
# nccl-tests beside collbench's nccl-tests mode. One GPU: busbw is 0 by definition, and algbw
# rounds to 0.00 at small sizes, so the ratio is nccl-tests' time over collbench's (= collbench's
# algbw or busbw over nccl-tests'; above 1: collbench faster).
def table(log):
    rows = {}
    try:
        for line in open(log):
            f = line.split()
            if len(f) >= 8 and re.fullmatch(r"\d+", f[0]) and not line.startswith("#"):
                rows[int(f[0])] = (float(f[5]), float(f[6]), float(f[7]))
    except (OSError, ValueError):
        pass
    return rows
def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2
cb_runs = [json.load(open(f)).get("points", [])
           for f in sorted(glob.glob(os.path.join(out, "*-cb-nccltests-*.run.json")))]
for coll, name in (("allreduce", "all_reduce"), ("allgather", "all_gather")):
    logs = sorted(glob.glob(os.path.join(out, "*-nccl-tests-%s-*.log" % name)))
    if not logs:
        continue
    theirs_runs = [table(l) for l in logs]
    ours_runs = [{p["bytes"]: p for p in run if ok(p, coll)} for run in cb_runs]
    print("\n# %s: nccl-tests %s_perf -g 1 beside collbench --format nccl-tests (out-of-place), "
          "medians of %d and %d interleaved runs" % (coll, name, len(theirs_runs), len(ours_runs)))
    print("%12s  %10s %9s  %10s %9s  %7s" % ("size(B)", "nt time", "nt algbw", "cb time",
                                            "cb algbw", "nt/cb t"))
    sizes = set()
    for r in theirs_runs + ours_runs:
        sizes |= set(r)
    for size in sorted(sizes):
        t = [r[size] for r in theirs_runs if size in r]
        o = [r[size] for r in ours_runs if size in r]
        tt = median([x[0] for x in t]) if t else None
        ta = median([x[1] for x in t]) if t else None
        ot = median([x["time_us"] for x in o]) if o else None
        oa = median([x["algbw_gbps"] for x in o]) if o else None
        ratio = "%.3f" % (tt / ot) if tt and ot else "-"
        print("%12d  %10s %9s  %10s %9s  %7s" % (
            size, "%.2f" % tt if tt is not None else "-", "%.2f" % ta if ta is not None else "-",
            "%.2f" % ot if ot is not None else "-", "%.2f" % oa if oa is not None else "-", ratio))
PY
fi
{
  echo "{\"steps\": ["
  sep=""
  for f in "$out"/[0-9][0-9]-*.json; do
    [[ $f == *.run.json || $f == *.gtest.json ]] && continue
    printf '%s%s' "$sep" "$(cat "$f")"
    sep=","
  done
  echo "], \"failed\": $failed_any}"
} >"$out/summary.json"
echo
cat "$out/summary.txt"
exit "$failed_any"
