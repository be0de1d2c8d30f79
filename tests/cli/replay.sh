#!/usr/bin/env bash
# `collbench replay`: bad traces and options exit 2 with one line and store nothing; the dry run's
# totals equal the counts of tests/data/traces/SOURCES.md for every fixture family; the DLRM
# 8-rank job replays verified in the local world (Kineto durations beside) and under mpirun -np 8,
# ResNet DDP and Chakra on 2, the ASTRA-sim microbenchmarks on 4, the send/recv ring on 8; the
# runs are stored and runs/show/compare/gate/export work on them.
# Usage: replay.sh /path/to/collbench   (CB_MPIRUN from CTest, else mpirun)
set -uo pipefail
cb=${1:?usage: replay.sh COLLBENCH}
mpirun=${CB_MPIRUN:-mpirun}
source "$(dirname "$0")/lib/common.sh"
scratch replay
T=$src/tests/data/traces
dlrm=$T/pytorch-et/param-dlrm-8rank/dlrm_eg_{rank}.json.gz
kineto="$T/kineto/param-dlrm-8rank/worker{rank}_step_12.*.pt.trace.json.gz"
resnet=$T/pytorch-et/param-resnet-ddp-2rank/resnet_2gpu_et.json.gz
chakra=$T/chakra-et/chakra-resnet-ddp/chakra.0.et.gz
ring=$T/chakra-et/astra-sim-custom-ring-allreduce-8npus/custom_allreduce.{rank}.et
astra() { echo "$T/chakra-et/astra-sim-microbench-4npus/$1/$1.{rank}.et"; }
# total LINE: the dry run's totals row of an op kind: "op group ops_rank0 bytes_rank0 ..."
total() { grep -qE "^$1 +$2 +$3 +$4 " <<<"$out" || fail "no totals row '$1 $2 $3 $4' in: $out"; }

# ---- bad traces and options: one line, exit 2, nothing stored ----
bad=$tmp/bad.db
expect 2 "$cb" replay "$tmp/nosuch_{rank}.json" --db "$bad"
one_line_error "no file for rank 0"
head -c 20000 "$T/chakra-et/astra-sim-custom-ring-allreduce-8npus/custom_allreduce.2.et" >"$tmp/cut.et"
expect 2 "$cb" replay "$tmp/cut.et" --use-one-trace --np 2 --db "$bad"
one_line_error "truncated protobuf stream"
has "$err" "cut.et, record"
echo '{"schema": "9.9", "nodes": []}' >"$tmp/wrong.json"
expect 2 "$cb" replay "$tmp/wrong.json" --use-one-trace --np 2 --db "$bad"
one_line_error "schema '9.9' is not 1.0.1, 1.0.2 or 1.1.x"
expect 2 "$cb" replay "$dlrm" --np 3 --db "$bad"
one_line_error "8 rank traces for a world of 3 ranks"
expect 2 "$cb" replay "$dlrm" --gaps sometimes --db "$bad"
one_line_error "--gaps 'sometimes'"
expect 2 "$cb" replay "$dlrm" --ops gather --db "$bad"
one_line_error "--ops: unknown op 'gather'"
expect 2 "$cb" replay "$T/chakra-et/astra-sim-microbench-4npus/all_reduce/all_reduce.{rank}.et" \
  --algo nosuch --db "$bad"
one_line_error "--algo nosuch: no allreduce variant"
# GPU variants run on device memory, the DLRM's all_to_allv over NCCL's grouped send/recv; a
# build or machine without a GPU says so in one line.
expect 2 "$cb" replay "$dlrm" --algo nccl --db "$bad"
one_line_error "nccl"
expect 2 "$cb" replay "$resnet" --use-one-trace --scale-size 1e6 --db "$bad"
one_line_error "the trace's largest op needs about"
# Ranks that disagree: rank 1 of a 2-rank set is another job's trace.
cp "$T/chakra-et/astra-sim-microbench-4npus/all_reduce/all_reduce.0.et" "$tmp/mix.0.et"
cp "$T/chakra-et/astra-sim-microbench-4npus/all_gather/all_gather.1.et" "$tmp/mix.1.et"
expect 2 "$cb" replay "$tmp/mix.{rank}.et" --db "$bad"
one_line_error "rank 1's op 0 on the world is allgather"
expect 2 "$mpirun" --allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none \
  -np 3 "$cb" replay "$dlrm" --db "$bad"
[ "$(grep -c '^collbench: ' <<<"$err")" -eq 1 ] || fail "expected one collbench line: $err"
has "$err" "8 rank traces for a world of 3 ranks"
if [ -e "$bad" ]; then
  n=$(sqlite3 "$bad" "SELECT COUNT(*) FROM results" 2>/dev/null || echo 0)
  [ "$n" = 0 ] || fail "bad traces stored $n results"
fi

# ---- dry runs: totals per op kind and group equal SOURCES.md ----
expect 0 "$cb" replay "$dlrm" --dry-run
total alltoallv world 4 64256
total alltoall world 1 192
total allreduce world 3 2485252
has "$out" "in 96 224 288 1664 592 96 192 240 out 96 96 96 96 96 96 96 96"
expect 0 "$cb" replay "$resnet" --use-one-trace --dry-run
total allreduce world 15 306684384
total broadcast world 6 638712
has "$out" "replayed on 2 ranks"
expect 0 "$cb" replay "$chakra" --use-one-trace --np 2 --dry-run
total allreduce world 5 102228128
total broadcast world 2 212904
for k in all_gather all_reduce all_to_all reduce_scatter; do
  expect 0 "$cb" replay "$(astra $k)" --dry-run
  total "$(tr -d _ <<<"$k" | sed 's/reducescatter/reduce_scatter/')" world 1 1048576
done
expect 0 "$cb" replay "$ring" --dry-run
total send world 14 1835008
total recv world 14 1835008
expect 0 "$cb" replay "$dlrm" --ranks 4 --dry-run
has "$out" "--ranks 4: the traces of ranks 0..3 of 8"

# ---- replays, every op verified ----
expect 0 "$cb" replay "$dlrm" --kineto "$kineto" -n 2 -w 1 --db "$db" --label dlrm
has "$out" "# verified once: 0 wrong element(s)"
grep -qE "^alltoallv +world +int32 +13568 +8 +1 .* pairwise/" <<<"$out" ||
  fail "no all_to_allv row with its variant: $out"
grep -qE "^allreduce +world +float +1576964 .* [0-9.]+ +[0-9.]+  ring/" <<<"$out" ||
  fail "no recorded vs replayed allreduce row: $out"
has "$out" "recorded on rank 0:"
expect 0 "$cb" replay "$dlrm" -n 2 -w 1 --db "$db" --label dlrm
expect 0 "$mpirun" --allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none \
  -np 8 "$cb" replay "$dlrm" -n 2 -w 1 --db "$db" --label dlrm-mpi
has "$out" "# verified once: 0 wrong element(s)"
grep -qE "^allreduce +world +float +1576964 .* mpi$" <<<"$out" || fail "no mpi allreduce: $out"
expect 0 "$cb" replay "$resnet" --use-one-trace -n 1 -w 0 --no-db
has "$out" "# verified once: 0 wrong element(s)"
expect 0 "$cb" replay "$chakra" --use-one-trace --np 2 -n 2 -w 0 --gaps scale=0.01 --no-db
has "$out" "# verified once: 0 wrong element(s)"
grep -qE "^allreduce +world +float +31502336 .* [0-9.]+ +[0-9.]+  ring/" <<<"$out" ||
  fail "no recorded vs replayed Chakra row: $out"
for k in all_gather all_reduce all_to_all reduce_scatter; do
  expect 0 "$cb" replay "$(astra $k)" -n 2 --no-db
  has "$out" "# verified once: 0 wrong element(s)"
done
expect 0 "$cb" replay "$ring" -n 2 --gaps recorded --no-db
has "$out" "# verified once: 0 wrong element(s)"
grep -qE "^send +world +float +131072 +2 +112 " <<<"$out" || fail "no send row: $out"
expect 0 "$cb" replay "$dlrm" --ranks 4 -n 2 --no-db
has "$out" "# verified once: 0 wrong element(s)"
has "$out" "# --ranks 4: the traces of ranks 0..3 of 8"

# ---- stored like runs ----
expect 0 "$cb" runs --db "$db"
has "$out" "dlrm"
expect 0 "$cb" show 1 --db "$db"
has "$out" "replay-alltoallv"
has "$out" "replay-total"
expect 0 "$cb" compare 1 2 --db "$db"
expect 0 "$cb" history --db "$db" replay-allreduce:ring/local
has "$out" "1576964"
"$cb" gate --db "$db" --baseline 1 --candidate 2 >"$tmp/out" 2>"$tmp/err"
rc=$?
{ [ "$rc" -le 1 ] || [ "$rc" -eq 3 ]; } || fail "gate on two replay runs exited $rc: $(cat "$tmp/err")"
expect 0 "$cb" export results --db "$db" --format csv --output "$tmp/x.csv" --run 1
grep -q "replay-allreduce" "$tmp/x.csv" || fail "export has no replay rows"
detail=$(sqlite3 "$db" "SELECT json FROM run_details WHERE run_id = 1 AND kind = 'replay'" 2>&1)
has "$detail" '"hash":"fnv1a64:'
has "$detail" '"recorded_us"'
# The report draws the replay: its table and one timeline lane per rank, an op per rectangle.
expect 0 "$cb" report 1 --db "$db" -o "$tmp/r.html"
grep -qF 'class="figure replay"' "$tmp/r.html" || fail "no replay section in the report"
grep -qF 'One replay per rank' "$tmp/r.html" || fail "no replay timeline in the report"
grep -qF '<title>rank 7: alltoallv' "$tmp/r.html" || fail "the timeline lacks rank 7's all_to_allv"

[ "$failures" -eq 0 ] && echo "replay: all checks passed"
exit $((failures > 0))
