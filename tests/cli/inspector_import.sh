#!/usr/bin/env bash
# NCCL Inspector records imported as a run (tests/data/inspector: fixtures written from the
# plugin's documented format, see SOURCE.md) beside a benchmark of the same two hosts (the
# nccl-tests log they stand beside): import, show, compare, report; bad records refused with
# FILE:LINE and nothing stored.
# Usage: inspector_import.sh /path/to/collbench
set -uo pipefail
cb=${1:?usage: inspector_import.sh COLLBENCH}
source "$(dirname "$0")/lib/common.sh"
scratch inspector
data=$src/tests/data

expect 0 "$cb" import "$data/nccltests_1_h100-2node-16gpu-mpi-g1-allreduce.txt" --db "$db" --label bench
expect 0 "$cb" import "$data/inspector/inspector_2node_16rank_allreduce.jsonl" --db "$db" \
  --label production --dtype float --op sum
has "$out" "nccl-inspector allgather,allreduce, 3 points, world size 16 on 2 hosts"
expect 0 "$cb" export results --db "$db" --run 2 --format json
python3 - <(echo "$out") <<'PY' || fail "imported results: $out"
import json, sys
rows = {(r["collective"], r["size_bytes"]): r for r in json.load(open(sys.argv[1]))}
assert set(rows) == {("allreduce", 64 << 20), ("allreduce", 128 << 20), ("allgather", 64 << 20)}, rows.keys()
ar = rows[("allreduce", 64 << 20)]
# 12 calls (6 per rank, two ranks): median of 2052..2090 us is 2068.
assert ar["iterations"] == 12 and ar["median_us"] == 2068, ar
assert ar["variant"] == "nccl" and ar["dtype"] == "float" and ar["op"] == "sum" and ar["nranks"] == 16, ar
assert ar["count"] == (64 << 20) // 4, ar
assert abs(ar["busbw"] - 67108864 / 2068e-6 / 1e9 * 1.875) < 1e-6, ar
ag = rows[("allgather", 64 << 20)]  # 4 MiB per rank x 16 ranks
assert ag["op"] == "none" and ag["iterations"] == 6 and ag["count"] == (4 << 20) // 4, ag
PY
expect 0 "$cb" export runs --db "$db" --run 2 --format json
has "$out" '"source": "nccl-inspector"'
has "$out" '"hosts": "ztan-mig-235z,ztan-mig-gq73"'
has "$out" "2 p2p record(s) left out"
has "$out" "kernel_gpu"

# Production beside the benchmark: the 64 MiB allreduce ran at 61% of its busbw.
expect 0 "$cb" compare 1 2 --db "$db"
has "$out" "allreduce"
grep -E '64M' <<<"$out" | grep -qE -- '-3[89]\.[0-9]%|-39%' ||
  fail "compare shows no -39% at 64M (61% of the benchmark): $out"
expect 0 "$cb" report 1 2 --compare 1 2 -o "$tmp/report.html" --db "$db"
grep -q "nccl-inspector" "$tmp/report.html" || fail "the report does not show the imported run"

# The README's pretty-printed example record imports too (ReduceScatter, 2 GiB per rank).
expect 0 "$cb" import "$data/inspector/inspector_readme_example.json" --db "$db" --dry-run
has "$out" "nccl-inspector reduce_scatter"

# Bad records: FILE:LINE, one line, exit 2, nothing stored.
runs_before=$("$cb" runs --db "$db" | grep -c '^ *[0-9]')
printf '%s\n' "$(head -n 1 "$data/inspector/inspector_2node_16rank_allreduce.jsonl")" \
  '{"header": {"n_ranks": 2}, "coll_perf": {"coll": "AllReduce", "coll_msg_size_bytes": -5, "coll_exec_time_us": 3}}' \
  >"$tmp/bad.jsonl"
expect 2 "$cb" import "$tmp/bad.jsonl" --db "$db" --format nccl-inspector
has "$err" "bad.jsonl:2:"
head -c 300 "$data/inspector/inspector_2node_16rank_allreduce.jsonl" >"$tmp/truncated.jsonl"
expect 2 "$cb" import "$tmp/truncated.jsonl" --db "$db" --format nccl-inspector
has "$err" "truncated.jsonl:1: an NCCL Inspector record is not closed"
expect 2 "$cb" import "$data/nccltests_1_h100-2node-16gpu-mpi-g1-allreduce.txt" --db "$db" --dtype float
has "$err" "--dtype/--op are for logs that do not state them"
expect 2 "$cb" import "$data/inspector/inspector_readme_example.json" --db "$db" --dtype floaty
has "$err" "--dtype 'floaty'"
[ "$("$cb" runs --db "$db" | grep -c '^ *[0-9]')" -eq "$runs_before" ] || fail "a bad import stored a run"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "inspector import: ok"
