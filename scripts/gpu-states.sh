#!/usr/bin/env bash
# What one GPU's two states follow (docs/journal/2026-11-27-gpu-h200-third-loan.md): on one H200, NCCL calls of
# 256 KiB-1 MiB came in two states, an in-place call (a no-op on one rank) at 1.28 or 1.82 us and
# the out-of-place ones at 7.1 or 8.8 us, switching between runs and within them, not with
# --bind. This runs ROUNDS rounds of `run allreduce --np 1 --algo nccl -b 256K -e 1M -f 2 -n 30`
# (the gate protocol's command), each round under three placements in turn:
#   auto     the default (--bind auto: one rank on core 0)
#   last     under `taskset -c LAST`, the last CPU this process may use
#   warm     --bind auto with -w 20000 (a warm-up long enough to raise the clocks, ~0.2 s a point)
# while nvidia-smi logs the SM and memory clocks, the P-state and the power every 100 ms. It writes
# OUT/runs.tsv (round, variant, start and end in epoch seconds, the in-place and out-of-place
# medians per size in us), OUT/clocks.csv and OUT/states.db, and prints per variant the in-place
# 256 KiB medians in run order: two clusters there are the two states, and clocks.csv says what
# the GPU's clocks were meanwhile.
#
#   bash scripts/gpu-states.sh [--rounds N] [--out DIR] [--collbench PATH]
#
# Binaries: --collbench, else the bundle's launcher next to this script, else build/. Exit 0
# when every run finished, 1 when one failed, 2 for bad arguments or no GPU (one line).
set -uo pipefail

usage() {
  echo "usage: gpu-states.sh [--rounds N] [--out DIR] [--collbench PATH]" >&2
  exit 2
}
rounds=8
out="gpu-states-$(date +%Y%m%d-%H%M%S)"
collbench=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) [[ $# -ge 2 ]] || usage; rounds=$2; shift 2 ;;
    --out) [[ $# -ge 2 ]] || usage; out=$2; shift 2 ;;
    --collbench) [[ $# -ge 2 ]] || usage; collbench=$2; shift 2 ;;
    -h | --help) usage ;;
    *) echo "gpu-states: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "gpu-states: --rounds '$rounds' is not a positive integer" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
if [[ -z $collbench ]]; then
  if [[ -x $here/collbench && -f $here/env.sh ]]; then collbench=$here/collbench; else collbench=$here/../build/cli/collbench; fi
fi
[[ -x $collbench ]] || { echo "gpu-states: no collbench at $collbench (--collbench PATH)" >&2; exit 2; }
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-states: no NVIDIA GPU here (nvidia-smi is missing or lists no device): run it on a GPU node" >&2
  exit 2
fi
mkdir -p "$out" || exit 2
db="$out/states.db"
rm -f "$db" "$db-wal" "$db-shm"
last=$(taskset -pc $$ 2>/dev/null | awk -F: '{print $2}' | tr ',' '\n' | tail -1 | awk -F- '{print $NF}' | tr -d ' ')
[[ -n $last ]] || last=$(($(nproc) - 1))

nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,pstate,power.draw --format=csv,noheader \
  -lms 100 >"$out/clocks.csv" 2>/dev/null &
smi=$!
trap 'kill "$smi" 2>/dev/null' EXIT

printf 'round\tvariant\tstart\tend\trun_id\tstatus\n' >"$out/runs.tsv"
newest() { python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select coalesce(max(id), 0) from runs").fetchone()[0])' "$db" 2>/dev/null || echo 0; }
failed=0
before=0
cmd=(run allreduce --np 1 --algo nccl -b 256K -e 1M -f 2 -n 30 --db "$db" --format none)
for ((r = 1; r <= rounds; r++)); do
  for v in auto last warm; do
    case $v in
      auto) pre=(); extra=(--bind auto) ;;
      last) pre=(taskset -c "$last"); extra=() ;;
      warm) pre=(); extra=(--bind auto -w 20000) ;;
    esac
    t0=$(date +%s.%N)
    rc=0
    timeout 120 "${pre[@]}" "$collbench" "${cmd[@]}" --label "$v" "${extra[@]}" >"$out/last.log" 2>&1 || rc=$?
    t1=$(date +%s.%N)
    ((rc == 0)) || { failed=1; echo "round $r $v: exit $rc: $(tail -1 "$out/last.log")"; }
    id=$(newest)
    [[ $id != "$before" ]] || id="-"  # the run stored nothing
    [[ $id == - ]] || before=$id
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$v" "$t0" "$t1" "$id" "$rc" >>"$out/runs.tsv"
  done
done
kill "$smi" 2>/dev/null

python3 - "$db" "$out/runs.tsv" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = c.execute(
    "select r.id, r.label, s.placement, s.size_bytes, s.median_us from runs r "
    "join results s on s.run_id = r.id order by r.id, s.placement, s.size_bytes").fetchall()
runs = {}
for rid, label, placement, size, med in rows:
    runs.setdefault(rid, {"label": label})[(placement, size)] = med
# runs.tsv gets each run's figures beside its id.
lines = open(sys.argv[2]).read().splitlines()
out = [lines[0] + "\tin_256K\tin_512K\tin_1M\tout_256K\tout_512K\tout_1M"]
for line in lines[1:]:
    rid = line.split("\t")[4]
    fig = runs.get(int(rid), {}) if rid.isdigit() else {}
    vals = [fig.get((p, s)) for p in ("in", "out") for s in (262144, 524288, 1048576)]
    out.append(line + "".join("\t%.2f" % v if v else "\t-" for v in vals))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
ids = sorted(runs)
by = {}
for rid in ids:
    by.setdefault(runs[rid]["label"], []).append(runs[rid].get(("in", 262144)))
for label in ("auto", "last", "warm"):
    xs = [x for x in by.get(label, []) if x]
    print("%-5s in-place 256K median per run (us): %s" % (label, " ".join("%.2f" % x for x in xs)))
PY
echo "gpu-states: $out/runs.tsv, $out/clocks.csv, $db"
exit $failed
