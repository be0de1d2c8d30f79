#!/usr/bin/env bash
# The GPU acceptance of collbench's GPU path (docs/GPU.md, "First contact on one GPU"):
#
#   bash scripts/gpu-check.sh [--out DIR] [--only one-gpu|multi-rank] [--nccl-tests SRC]
#                             [--collbench PATH] [--unit-tests PATH] [--mpirun PATH]
#
# Runs each step under its own `timeout`, all of them within 8 minutes (a step gets what is left
# of the budget when that is less than its own limit), and writes to DIR (default
# gpu-check-<date>): per step NN-name.log (command lines and output) and NN-name.json (status,
# reason, seconds, exit code), the runs' own --json files, and summary.txt / summary.json. Each
# step ends ok, failed (with the reason) or unsupported (with the reason: no driver, no device);
# the summary adds the figures to look at: the device-to-device copy rate (the peak any
# collective can approach on one GPU), NCCL's out-of-place algbw at 256 MiB and 1 GiB, and the
# small-message floor. With --nccl-tests SRC (an nccl-tests checkout, never part of this
# repository; the bundle's nccl-tests/ when it carries one) it builds all_reduce_perf/
# all_gather_perf with nvcc against this node's NCCL and prints their columns beside collbench's
# nccl-tests mode, with the ratio per size.
#
# Two stages; --only runs one of them (after the environment step), so that a short GPU loan
# spends its minutes where nothing has run yet:
#   one-gpu      one local-world rank per GPU (steps 2-11 below);
#   multi-rank   2 and 4 MPI processes on the GPU under the MPI launcher (--mpirun; the bundle's
#                mpirun, else scripts/gpu-mpirun.sh), each its own NCCL host (NCCL_HOSTID), so
#                NCCL runs its real kernels, proxy threads and socket transport between them:
#                the seven collectives, NCCL's algorithm/protocol per column, -G/-R, the CUDA
#                executor between ranks, the watchdog with a stopped peer, diag, proxies, the
#                DLRM replay, gate and report, and nccl-tests built with MPI=1 beside collbench's
#                nccl-tests mode (busbw ratio per size). Steps named mr-*.
#
# Binaries: --collbench/--unit-tests, else the bundle's launchers next to this script
# (scripts/gpu-bundle.sh copies it there), else build/ of the source tree. Exit status: 0 when
# no step failed, 1 when one did, 2 for bad arguments.
set -uo pipefail

usage() {
  echo "usage: gpu-check.sh [--out DIR] [--only one-gpu|multi-rank] [--nccl-tests SRC] [--collbench PATH] [--unit-tests PATH] [--mpirun PATH]" >&2
  exit 2
}
out="gpu-check-$(date +%Y%m%d-%H%M%S)"
nccl_tests=""
collbench=""
unit_tests=""
only=""
launcher=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) [[ $# -ge 2 ]] || usage; out=$2; shift 2 ;;
    --nccl-tests) [[ $# -ge 2 ]] || usage; nccl_tests=$2; shift 2 ;;
    --collbench) [[ $# -ge 2 ]] || usage; collbench=$2; shift 2 ;;
    --unit-tests) [[ $# -ge 2 ]] || usage; unit_tests=$2; shift 2 ;;
    --only) [[ $# -ge 2 ]] || usage; only=$2; shift 2 ;;
    --mpirun) [[ $# -ge 2 ]] || usage; launcher=$2; shift 2 ;;
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
case $only in
  "" | one-gpu | multi-rank) ;;
  *) echo "gpu-check: --only '$only' is not one-gpu or multi-rank" >&2; exit 2 ;;
esac
if [[ -z $launcher ]]; then
  if [[ -x $here/mpirun && -f $here/env.sh ]]; then launcher=$here/mpirun; else launcher=$here/gpu-mpirun.sh; fi
fi
# MPI_HOME for nccl-tests' MPI=1 build: the bundle's mpi/ (its mpi.h without the C++ bindings,
# whose library nccl-tests does not link).
mpi_home=$here/mpi
# The DLRM trace for the multi-rank replay: the bundle's traces/, else tests/data.
dlrm_dir=$here/traces/param-dlrm-8rank
[[ -d $dlrm_dir ]] || dlrm_dir=$here/../tests/data/traces/pytorch-et/param-dlrm-8rank
# The bundle's nccl-tests source, when it carries one and none was named.
[[ -z $nccl_tests && -f $here/nccl-tests/src/all_reduce.cu ]] && nccl_tests=$here/nccl-tests
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
  # The no-device line first: under MPI the other ranks' lines only follow from it.
  line=$(grep -m1 -E "no usable CUDA device|no CUDA devices" "$log")
  [[ -n $line ]] || line=$(grep -E "^collbench: |not found|error" "$log" | tail -1)
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
# Whether this machine has a GPU at all, and why not: the multi-rank stage's reason when it has
# none.
has_gpu=0
gpu_reason=${rows[-1]#*|unsupported|}
gpu_reason=${gpu_reason%|*}
[[ ${rows[-1]} == *"|ok|"* ]] && has_gpu=1

# NCCL's header and library for nccl-tests' make (NCCL_HOME): the bundle's NCCL (the wheel has
# include/ beside lib/), else next to CUDA. nccl-tests links -lnccl, which the wheel names
# libnccl.so.2 only.
nccl_home="$out/nccl-home"
nccl_home_setup() {
  local inc lib
  mkdir -p "$nccl_home/lib" "$nccl_home/include"
  for inc in "${nccl_dir:+$nccl_dir/../include}" /usr/local/cuda/include /usr/include; do
    [[ -n $inc && -f $inc/nccl.h ]] && { ln -sf "$(cd "$inc" && pwd)/nccl.h" "$nccl_home/include/nccl.h"; break; }
  done
  for lib in "$nccl_dir" /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/lib/x86_64-linux-gnu; do
    [[ -n $lib && -e $lib/libnccl.so.2 ]] && { ln -sf "$(cd "$lib" && pwd)/libnccl.so.2" "$nccl_home/lib/libnccl.so"; ln -sf "$(cd "$lib" && pwd)/libnccl.so.2" "$nccl_home/lib/libnccl.so.2"; break; }
  done
  return 0
}

# An nccl-tests run: ok on exit 0, unsupported when CUDA found no device, failed otherwise.
judge_nccl_tests() {
  local name=$1
  if ((rc == 0)); then
    finish "$name" ok "" "$secs" "$rc"
  elif grep -qE "driver version is insufficient|no CUDA-capable device" "$log"; then
    finish "$name" unsupported "$(grep -m1 -oE "CUDA failure.*" "$log")" "$secs" "$rc"
  elif ((rc == 124 || rc == 137)); then
    finish "$name" failed "hung: killed after ${secs}s" "$secs" "$rc"
  else
    finish "$name" failed "exit $rc: $(reason_of "$log")" "$secs" "$rc"
  fi
}

# The one-GPU stage: one local-world rank per GPU.
one_gpu_stage() {
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
    nccl_home_setup
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
          judge_nccl_tests "nccl-tests-$c-$round"
        done
        run_step "cb-nccltests-$round" 60 allreduce,allgather --algo nccl -b 8 -e 1G -f 4 --format nccl-tests -w 5 -n 20 -c 1
      done
    fi
  fi
}

# The multi-rank stage (issue 45): 2 and 4 MPI processes on this node's GPU, each its own NCCL host
# (NCCL_HOSTID, set by the launcher), so NCCL runs its real kernels, channels, proxy threads and
# socket transport between them. Without a GPU every step still runs, to record what collbench
# says, and ends unsupported with that reason.
# mr_step NAME LIMIT NP ARGS...: collbench ARGS on NP ranks under the launcher, as a step.
mr_step() {
  local name=$1 limit=$2 np=$3
  shift 3
  step "$name" "$limit" "$launcher" -np "$np" --oversubscribe -- "$collbench" "$@"
}

# judge_mr NAME JSON: judge_run, except that on a machine without a GPU collbench's refusal (its
# own "collbench: " line) is unsupported with that line, so the next GPU shows what is still
# missing. Anything else that did not run (the launcher, this script) stays a failure.
judge_mr() {
  local name=$1 json=$2
  if ((rc != 0 && rc != 124 && rc != 137)) && ((has_gpu == 0)) && grep -q '^collbench: ' "$log" &&
    ! grep -qE "no usable CUDA device|no CUDA devices|CUDA driver|libnccl.so.2 not found" "$log"; then
    finish "$name" unsupported "no GPU here ($gpu_reason); $(reason_of "$log")" "$secs" "$rc"
  else
    judge_run "$name" "$json"
  fi
}

mr_run() {  # mr_run NAME LIMIT NP ARGS... (collbench run ARGS --json NN-name.run.json --no-db)
  local name=$1 limit=$2 np=$3
  shift 3
  local json
  json="$out/$(printf '%02d' $((n + 1)))-$name.run.json"
  mr_step "$name" "$limit" "$np" run "$@" --no-db --json "$json"
  judge_mr "$name" "$json"
}

# The pid of rank R of the job whose hosts are named BASE (the launcher's NCCL_HOSTID), if any.
rank_pid() {
  local base=$1 r=$2 f
  for f in /proc/[0-9]*/environ; do
    if tr '\0' '\n' <"$f" 2>/dev/null | grep -qx "NCCL_HOSTID=$base-rank$r"; then
      f=${f%/environ}
      [[ $(cat "$f/comm" 2>/dev/null) == collbench ]] && { echo "${f#/proc/}"; return; }
    fi
  done
  return 0
}

multi_rank_stage() {
  if [[ ! -x $launcher ]]; then
    n=$((n + 1))
    finish mr-launcher failed "no MPI launcher at $launcher (--mpirun PATH)" 0 0
    return
  fi
  # All seven collectives, 8 B to 64 MiB, every point checked, on 2 and 4 processes.
  local np colls=allreduce,allgather,reduce_scatter,broadcast,reduce,alltoall,sendrecv
  for np in 2 4; do
    mr_run "mr-colls-$np" 120 "$np" "$colls" --algo nccl -b 8 -e 64M -f 4 -n 10 -w 2 -c 1
  done
  # What NCCL ran per column (algorithm x protocol), from NCCL's own tuning log.
  mr_run mr-choice-4 120 4 allreduce --algo nccl --nccl-algo Ring,Tree --nccl-proto LL,LL128,Simple \
    --nccl-choice -b 8 -e 64M -f 8 -n 5 -w 1 -c 1
  # Graphs of real NCCL kernels, buffer registration and symmetric windows between processes.
  mr_run mr-graph-2 60 2 allreduce --algo nccl -b 8 -e 64M -f 8 -G 3 --format nccl-tests -c 1
  mr_run mr-register-2 60 2 allreduce --algo nccl -b 8 -e 64M -f 8 -R 1 --format nccl-tests -c 1
  mr_run mr-windows-2 60 2 allreduce --algo nccl -b 8 -e 64M -f 8 -R 2 --format nccl-tests -c 1
  # The CUDA executor's send/recv rounds between ranks (the peer branch one rank never runs). Only
  # the device twins (ALGO/cuda) count: --algo all also runs the MPI library's own collectives,
  # which pass without a GPU.
  local json tally
  json="$out/$(printf '%02d' $((n + 1)))-mr-cuda-executor-4.run.json"
  mr_step mr-cuda-executor-4 120 4 run allreduce,allgather,reduce_scatter,broadcast,reduce,alltoall \
    --algo all --transport cuda -b 8 -e 16M -f 16 -c 1 --no-db --json "$json"
  tally=$(python3 -c 'import json, sys
pts = [p for p in json.load(open(sys.argv[1])).get("points", []) if p.get("variant", "").endswith("/cuda")]
st = [p["status"] for p in pts]
msg = next((p.get("message", "") for p in pts if p["status"] != "ok"), "")
print(st.count("ok"), st.count("failed"), len(st), msg[:200], sep="|")' "$json" 2>/dev/null)
  local t_ok t_failed t_all t_msg
  IFS='|' read -r t_ok t_failed t_all t_msg <<<"$tally"
  if ((rc != 0)) || [[ -z $tally ]]; then
    judge_mr mr-cuda-executor-4 "$json"
  elif ((t_failed > 0)); then
    finish mr-cuda-executor-4 failed "$t_failed of $t_all device points failed (see $(basename "$json"))" "$secs" "$rc"
  elif ((t_ok == 0)); then
    finish mr-cuda-executor-4 unsupported "every device point unsupported: $t_msg" "$secs" "$rc"
  else
    finish mr-cuda-executor-4 ok "$t_ok of $t_all device points ok" "$secs" "$rc"
  fi

  # The watchdog with a peer that stops: rank 1 gets SIGSTOP while 64 MiB calls run under -T 8.
  # Each call is waited for alone (per-call timing), so only the stopped peer can make a wait
  # outlast the deadline (a batch of calls waited for once would outlast it by itself). Expected:
  # one line naming rank 1, exit 2, no crash, no hang.
  local base="gpucheck-$$-watchdog" pid="" waited=0 rc_file limit=60
  n=$((n + 1))
  log="$out/$(printf '%02d' "$n")-mr-watchdog-2.log"
  rc_file="$out/.mr-watchdog.rc"
  local cmd=("$launcher" -np 2 --oversubscribe -- "$collbench" run allreduce --algo nccl -b 64M -e 64M
    -w 0 -n 100000 -c 0 -T 8 --placement out --no-db)
  local left=$((budget - (SECONDS - start)))
  ((limit > left)) && limit=$left
  {
    echo "# $(date -u +%FT%TZ) timeout ${limit}s; SIGSTOP to rank 1 once its calls run"
    printf '$ COLLBENCH_HOSTID_BASE=%s' "$base"
    printf ' %q' "${cmd[@]}"
    echo
  } >"$log"
  local t0=$SECONDS
  (
    if ((limit < 5)); then
      echo "# skipped: the 8-minute budget is spent" >>"$log"
      echo 124 >"$rc_file"
      exit
    fi
    COLLBENCH_HOSTID_BASE=$base timeout --kill-after=10 "$limit" "${cmd[@]}" >>"$log" 2>&1
    echo $? >"$rc_file"
  ) &
  local job=$!
  # Rank 1's calls run once NCCL has started its threads (named "NCCL ..."; stdout is buffered, so
  # the output cannot tell): then 3 s more, and SIGSTOP. A job that has ended by then is judged on
  # its own output.
  local nccl_up=0
  while kill -0 "$job" 2>/dev/null && ((waited < 60)); do
    [[ -n $pid ]] || pid=$(rank_pid "$base" 1)
    if [[ -n $pid ]] && cat /proc/"$pid"/task/*/comm 2>/dev/null | grep -q '^NCCL'; then
      nccl_up=1
      break
    fi
    sleep 0.5
    waited=$((waited + 1))
  done
  if [[ -n $pid ]] && kill -0 "$job" 2>/dev/null; then
    sleep 3
    kill -STOP "$pid" 2>/dev/null &&
      echo "# $(date -u +%FT%TZ) SIGSTOP to rank 1 (pid $pid; NCCL threads seen: $nccl_up)" >>"$log"
  fi
  wait "$job"
  rc=$(cat "$rc_file" 2>/dev/null || echo 1)
  rm -f "$rc_file"
  secs=$((SECONDS - t0))
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
    kill -CONT "$pid" 2>/dev/null
    kill -KILL "$pid" 2>/dev/null
    echo "# rank 1 (pid $pid) was still there after the job: killed" >>"$log"
  fi
  local line
  line=$(grep -m1 -E "did not complete|^collbench: " "$log" | cut -c1-200)
  if ((rc == 124 || rc == 137)); then
    finish mr-watchdog-2 failed "hung: killed after ${secs}s" "$secs" "$rc"
  elif grep -qE "no usable CUDA device|no CUDA devices" "$log"; then
    finish mr-watchdog-2 unsupported "$(reason_of "$log")" "$secs" "$rc"
  elif ((has_gpu == 0)); then
    finish mr-watchdog-2 unsupported "no GPU here ($gpu_reason); $(reason_of "$log")" "$secs" "$rc"
  elif [[ -z $pid ]]; then
    finish mr-watchdog-2 failed "exit $rc before rank 1 could be stopped: $(reason_of "$log")" "$secs" "$rc"
  elif grep -qE "Segmentation fault|core dumped|Aborted|signal 6|signal 11" "$log"; then
    finish mr-watchdog-2 failed "crashed: $(grep -m1 -E 'Segmentation fault|core dumped|Aborted|signal 6|signal 11' "$log")" "$secs" "$rc"
  elif ((rc == 2)) && grep -qE "rank 1\b" <<<"$line"; then
    finish mr-watchdog-2 ok "exit 2 after ${secs}s: $line" "$secs" "$rc"
  else
    finish mr-watchdog-2 failed "exit $rc, the stopped rank 1 not named: ${line:-$(reason_of "$log")}" "$secs" "$rc"
  fi

  # Diagnosis over NCCL, rank 1 slowed: the slow rank must be named.
  local d
  for d in links ranks; do
    mr_step "mr-diag-$d-4" 90 4 diag "$d" --transport nccl --inject slow-rank=1:500us --no-db
    if ((rc == 0)) && grep -qiE "rank 1\b.*(slow|suspect)|(slow|suspect).*rank 1\b" "$log"; then
      finish "mr-diag-$d-4" ok "$(grep -m1 -iE 'rank 1\b.*(slow|suspect)|(slow|suspect).*rank 1\b' "$log" | cut -c1-160)" "$secs" "$rc"
    elif ((rc == 0)); then
      finish "mr-diag-$d-4" failed "the slowed rank 1 is not named (see the log)" "$secs" "$rc"
    else
      judge_mr "mr-diag-$d-4" /nonexistent
    fi
  done

  # Training proxies and the DLRM trace over NCCL, all ops (all_to_allv, send/recv included).
  local p
  for p in dp tp pp; do
    mr_step "mr-proxy-$p-4" 90 4 proxy "$p" --algo nccl --steps 2 -w 1 -c 1 --no-db
    judge_mr "mr-proxy-$p-4" /nonexistent
  done
  if [[ -f $dlrm_dir/dlrm_eg_0.json.gz ]]; then
    mr_step mr-replay-dlrm-4 90 4 replay "$dlrm_dir/dlrm_eg_{rank}.json.gz" --ranks 4 --algo nccl \
      -n 2 -w 1 -c 1 --no-db
    judge_mr mr-replay-dlrm-4 /nonexistent
  else
    n=$((n + 1))
    finish mr-replay-dlrm-4 failed "no DLRM trace at $dlrm_dir (the bundle's traces/, or tests/data)" 0 0
  fi

  # gate between two multi-rank NCCL runs, then the database as an HTML report.
  local db="$out/multi-rank.db" side ok_runs=0
  rm -f "$db" "$db-wal" "$db-shm"
  for side in a b; do
    mr_step "mr-gate-run-$side" 60 2 run allreduce --algo nccl -b 1M -e 64M -f 4 -n 20 --db "$db" \
      --label "mr-gate-$side"
    judge_mr "mr-gate-run-$side" /nonexistent
    [[ ${rows[-1]} == *"|ok|"* ]] && ok_runs=$((ok_runs + 1))
  done
  if ((ok_runs == 2)); then
    step mr-gate 60 "$collbench" gate --baseline label:mr-gate-a --candidate label:mr-gate-b --db "$db"
    case $rc in
      0 | 1 | 3) finish mr-gate ok "exit $rc: $(grep -m1 -iE 'pass|regression|inconclusive' "$log" | cut -c1-160)" "$secs" "$rc" ;;
      *) finish mr-gate failed "exit $rc: $(reason_of "$log")" "$secs" "$rc" ;;
    esac
    step mr-report 60 "$collbench" report last -o "$out/multi-rank-report.html" --db "$db"
    if ((rc == 0)) && [[ -s $out/multi-rank-report.html ]]; then
      finish mr-report ok "$(basename "$out")/multi-rank-report.html" "$secs" "$rc"
    else
      finish mr-report failed "exit $rc: $(reason_of "$log")" "$secs" "$rc"
    fi
  else
    for side in gate report; do
      n=$((n + 1))
      finish "mr-$side" unsupported "needs the two stored runs (mr-gate-run-a and -b), which did not run" 0 0
    done
  fi

  # NCCL_MULTI_RANK_GPU_ENABLE (NCCL 2.30+): two ranks sharing the GPU as ranks of one host.
  local version
  version=$(grep -h -m1 -oE 'nccl : [0-9]+\.[0-9]+' "$out"/*-mr-colls-2.log 2>/dev/null | awk '{print $3}')
  if [[ -n $version ]] && [[ $(printf '%s\n2.30\n' "$version" | sort -t. -k1,1n -k2,2n | head -1) != 2.30 ]]; then
    n=$((n + 1))
    finish mr-shared-gpu-2 unsupported "NCCL $version has no NCCL_MULTI_RANK_GPU_ENABLE (2.30 adds it)" 0 0
  else
    json="$out/$(printf '%02d' $((n + 1)))-mr-shared-gpu-2.run.json"
    step mr-shared-gpu-2 60 env NCCL_MULTI_RANK_GPU_ENABLE=1 "$launcher" --hosts shared -np 2 \
      --oversubscribe -- "$collbench" run allreduce --algo nccl -b 8 -e 64M -f 8 -c 1 --no-db --json "$json"
    judge_mr mr-shared-gpu-2 "$json"
  fi

  # nccl-tests built with MPI against the same NCCL and MPI, under the same launcher and host
  # scheme, beside collbench's nccl-tests mode: three interleaved rounds, medians per size.
  if [[ -z $nccl_tests ]]; then
    n=$((n + 1))
    finish mr-nccl-tests-build unsupported "no nccl-tests source (--nccl-tests SRC, or the bundle's nccl-tests/)" 0 0
    return
  fi
  if [[ ! -f $mpi_home/include/mpi.h ]]; then
    n=$((n + 1))
    finish mr-nccl-tests-build unsupported "nccl-tests with MPI builds against the bundle's mpi/ (run from a bundle: scripts/gpu-bundle.sh)" 0 0
    return
  fi
  nccl_home_setup
  local bdir="$out/nccl-tests-mpi-build"
  # The linker looks for libmpi's own libraries (libopen-rte, ...) on LD_LIBRARY_PATH: in the
  # bundle they sit in lib/, beside the file libmpi.so points to.
  local mpi_libs
  mpi_libs=$(dirname "$(readlink -f "$mpi_home/lib/libmpi.so")")
  step mr-nccl-tests-build 180 env LD_LIBRARY_PATH="$mpi_libs:$nccl_home/lib:${LD_LIBRARY_PATH:-}" \
    make -C "$nccl_tests/src" -j 16 BUILDDIR="$bdir" MPI=1 MPI_HOME="$mpi_home" \
    NAME_SUFFIX=_mpi NCCL_HOME="$nccl_home" CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}" \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" "$bdir/all_reduce_perf_mpi" "$bdir/all_gather_perf_mpi"
  if [[ ! -f $nccl_home/include/nccl.h ]]; then
    finish mr-nccl-tests-build failed "nccl.h not found (the wheel's include/ or /usr/local/cuda/include)" "$secs" "$rc"
    return
  elif ((rc != 0)); then
    finish mr-nccl-tests-build failed "exit $rc: $(reason_of "$log")" "$secs" "$rc"
    return
  fi
  finish mr-nccl-tests-build ok "" "$secs" "$rc"
  local round c
  for round in 1 2 3; do
    for c in all_reduce all_gather; do
      # Every process on device 0 (nccl-tests would give the second process of a host device 1).
      step "mr-nccl-tests-$c-$round" 60 env NCCL_TESTS_DEVICE=0 LD_LIBRARY_PATH="$nccl_home/lib:${LD_LIBRARY_PATH:-}" \
        "$launcher" -np 2 --oversubscribe -- "$bdir/${c}_perf_mpi" -b 8 -e 64M -f 4 -g 1 -w 5 -n 20
      judge_nccl_tests "mr-nccl-tests-$c-$round"
    done
    mr_run "mr-cb-nccltests-$round" 60 2 allreduce,allgather --algo nccl -b 8 -e 64M -f 4 \
      --format nccl-tests -w 5 -n 20 -c 1
  done
}

[[ $only == multi-rank ]] || one_gpu_stage
[[ $only == one-gpu ]] || multi_rank_stage

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
def one_gpu(files):  # the one-GPU stage's files, not the multi-rank stage's (mr-*)
    return [f for f in files if not re.match(r"\d+-mr-", os.path.basename(f))]
def side_by_side(title, nt_logs, cb_files, coll, bus):
    """nccl-tests' tables beside collbench's points, medians per size. bus: busbw and collbench's
    busbw over nccl-tests'; else algbw and nccl-tests' time over collbench's (one GPU: no busbw)."""
    theirs_runs = [r for r in (table(l) for l in nt_logs) if r]
    if not theirs_runs:
        return
    ours_runs = [{p["bytes"]: p for p in json.load(open(f)).get("points", []) if ok(p, coll)}
                 for f in cb_files]
    print("\n# %s, medians of %d and %d interleaved runs" % (title, len(theirs_runs), len(ours_runs)))
    bw = "busbw" if bus else "algbw"
    print("%12s  %10s %9s  %10s %9s  %9s" % ("size(B)", "nt time", "nt " + bw, "cb time",
                                            "cb " + bw, "cb/nt bus" if bus else "nt/cb t"))
    sizes = set()
    for r in theirs_runs + ours_runs:
        sizes |= set(r)
    for size in sorted(sizes):
        t = [r[size] for r in theirs_runs if size in r]
        o = [r[size] for r in ours_runs if size in r]
        tt = median([x[0] for x in t]) if t else None
        tb = median([x[2 if bus else 1] for x in t]) if t else None
        ot = median([x["time_us"] for x in o]) if o else None
        ob = median([x[bw + "_gbps"] for x in o]) if o else None
        if bus:
            ratio = "%.3f" % (ob / tb) if ob and tb else "-"
        else:
            ratio = "%.3f" % (tt / ot) if tt and ot else "-"
        print("%12d  %10s %9s  %10s %9s  %9s" % (
            size, "%.2f" % tt if tt is not None else "-", "%.2f" % tb if tb is not None else "-",
            "%.2f" % ot if ot is not None else "-", "%.2f" % ob if ob is not None else "-", ratio))
def files(pattern):
    return sorted(glob.glob(os.path.join(out, pattern)))
for coll, name in (("allreduce", "all_reduce"), ("allgather", "all_gather")):
    side_by_side("%s: nccl-tests %s_perf -g 1 beside collbench --format nccl-tests (out-of-place)"
                 % (coll, name), one_gpu(files("*-nccl-tests-%s-*.log" % name)),
                 one_gpu(files("*-cb-nccltests-*.run.json")), coll, False)
# The multi-rank stage: what NCCL ran per column, then nccl-tests (MPI=1, 2 processes under the
# same launcher) beside collbench's nccl-tests mode. With 2 ranks busbw is defined: the ratio is
# collbench's busbw over nccl-tests' (above 1: collbench faster).
choice = [p for p in points("*-mr-choice-4.run.json") if p.get("status") == "ok"]
if choice:
    print("\n# multi-rank, 4 processes: what NCCL ran per column (--nccl-choice)")
    for p in sorted(choice, key=lambda p: (p["variant"], p["bytes"])):
        print("%-24s %12d  %s" % (p["variant"], p["bytes"], p.get("message", "")[:100]))
for coll, name in (("allreduce", "all_reduce"), ("allgather", "all_gather")):
    side_by_side("multi-rank %s, 2 processes: nccl-tests %s_perf_mpi beside collbench --format "
                 "nccl-tests (out-of-place)" % (coll, name), files("*-mr-nccl-tests-%s-*.log" % name),
                 files("*-mr-cb-nccltests-*.run.json"), coll, True)
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
