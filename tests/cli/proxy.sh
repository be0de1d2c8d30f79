#!/usr/bin/env bash
# `collbench proxy`: bad arguments exit 2 with one line and store nothing; DP (all-reduce with and
# without overlap, parameter server, sharded), TP (every form), PP (GPipe, 1F1B, async) and hybrid
# 2x2 layouts run in the local world and under mpirun with every call verified; the pipeline
# bubble per stage is printed next to (p-1)/(m+p-1); the scaling table prints measured and
# PREDICTED rows; the runs are stored, `show` and `gate` work on them, and `report` draws the
# timeline.
# Usage: proxy.sh /path/to/collbench   (CB_MPIRUN from CTest, else mpirun)
set -uo pipefail
cb=${1:?usage: proxy.sh COLLBENCH}
mpirun=${CB_MPIRUN:-mpirun}
source "$(dirname "$0")/lib/common.sh"
scratch proxy

# ---- bad arguments: one line, exit 2, nothing stored ----
bad=$tmp/bad.db
expect 2 "$cb" proxy dp --np 2 --model gpt5 --db "$bad"
one_line_error "unknown model 'gpt5'"
expect 2 "$cb" proxy pp --np 2 -m 0 --db "$bad"
one_line_error "-m 0 must be at least 1"
expect 2 "$cb" proxy hybrid --np 4 --dp 3 --tp 2 --db "$bad"
one_line_error "does not divide the 4 ranks"
expect 2 "$cb" proxy hybrid --np 4 --dp 2 --tp 3 --model gpt2-xl --db "$bad"
one_line_error "does not divide the 4 ranks"
expect 2 "$cb" proxy xp --np 2 --db "$bad"
one_line_error "unknown proxy 'xp'"
expect 2 "$cb" proxy tp --np 3 --model bert-large --db "$bad"
one_line_error "tp 3 does not divide the 16 attention heads"
expect 2 "$cb" proxy pp --np 2 --stage-weights 1,2,3 --db "$bad"
one_line_error "--stage-weights has 3 values for 2 pipeline stages"
expect 2 "$cb" proxy dp --np 2 --dp-kind ps --servers 2 --db "$bad"
one_line_error "--servers 2 must leave at least one worker"
expect 2 "$cb" proxy dp --np 2 --tp 2 --db "$bad"
one_line_error "use \`collbench proxy hybrid\`"
expect 2 "$cb" proxy dp --np 2 --model resnet50 --layers 99 --db "$bad"
one_line_error "--layers 99 is out of range"
expect 2 "$cb" proxy dp --np 2 --layout tp,dp --db "$bad"
one_line_error "--layout 'tp,dp' must name dp, tp and pp"
expect 2 "$cb" proxy dp --np 2 --algo nosuch --layers 1 --db "$bad"
one_line_error "--algo nosuch"
expect 2 "$cb" proxy dp --np 3 --dp-kind ps -m 2 --db "$bad"
one_line_error "the parameter server runs one batch per step"
expect 2 "$cb" proxy dp --np 2 --zero 4 --db "$bad"
one_line_error "--zero 4 is not 0, 1, 2 or 3"
expect 2 "$cb" proxy dp --np 2 --optimizer lamb --db "$bad"
one_line_error "unknown optimizer 'lamb'"
expect 2 "$cb" proxy dp --np 2 --layers 1 --scaling weak --predict-to 1024 --db "$bad"
one_line_error "--predict-to 1024 is more than 64x the largest measured world (2 ranks)"
expect 2 "$cb" proxy dp --np 2 --layers 1 --predict-to 64 --db "$bad"
one_line_error "--predict-to and --extrapolate need --scaling"
expect 2 "$cb" proxy dp --np 2 --layers 1 --scaling weak --predict-ranks-per-node 8 --db "$bad"
one_line_error "predicting across nodes of 8 ranks needs the inter-node link"
expect 2 "$cb" proxy dp --np 2 --layers 1 --scaling weak --inter-node-gbps 25 --inter-node-us 5 \
  --db "$bad"
one_line_error "give --predict-ranks-per-node too"
expect 2 "$cb" proxy dp --np 2 --layers 1 --scaling weak --predict-ranks-per-node 8 \
  --inter-node-gbps 25 --db "$bad"
one_line_error "give both --inter-node-gbps and --inter-node-us"
expect 2 "$cb" proxy dp --np 2 --layers 1 --predict-ranks-per-node 8 --db "$bad"
one_line_error "--predict-ranks-per-node needs --scaling"
if [ -e "$bad" ]; then
  n=$(sqlite3 "$bad" "SELECT COUNT(*) FROM runs WHERE status = 'ok'" 2>/dev/null || echo 0)
  [ "$n" = 0 ] || fail "bad arguments stored $n runs"
fi

# ---- DP: overlap, no overlap, parameter server, sharded ----
dp=(proxy dp --np 2 --model bert-large --layers 2 --seq 128 --batch 2 --tflops 20 --steps 8
  -w 1 --db "$db")
expect 0 "$cb" "${dp[@]}" --label dp
has "$out" "# DP: DDP buckets in reverse layer order, first 1 MiB then 25 MiB (cap)"
has "$out" "SLICE: 2 of the model's 24 blocks"
grep -qE "^ +dp +allreduce +[0-9]+ +[0-9]+ +2 " <<<"$out" || fail "no dp allreduce calls: $out"
has "$out" "# verification: 0 wrong element(s)"
has "$out" "exposed"
# Each call against its group's bound: two thread ranks on one host share its memory (the copy
# rate measured after the steps); the step's calls at their bounds beside the calls as measured.
has "$out" "# peak: host memory copy "
grep -qE "^ +dp +allreduce +[0-9]+ +[0-9]+ +2 +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+%$" \
  <<<"$out" || fail "no peak and %peak on the dp calls: $out"
grep -qE "^# calls at their bounds: [0-9.]+ ms per step; as measured, call by call: [0-9.]+ ms \([0-9]+% of the bounds' rate\)$" \
  <<<"$out" || fail "no step total at the bounds: $out"
expect 0 "$cb" "${dp[@]}" --label dp
expect 0 "$cb" "${dp[@]}" --no-overlap --label dp-nooverlap
has "$out" "after the whole backward (--no-overlap)"
# The placement flags of run and p2p: bound rank threads, and the preflight as a stop.
expect 0 "$cb" proxy dp --np 2 --model bert-large --layers 1 --seq 64 --steps 2 -w 1 --bind auto \
  --strict --no-db
has "$out" "# verification: 0 wrong element(s)"
expect 2 "$cb" proxy dp --np 2 --layers 1 --bind socket --db "$bad"
expect 0 "$cb" proxy dp --np 3 --model resnet50 --dp-kind ps --tflops 50 --steps 3 -w 1 --db "$db"
has "$out" "parameter server, 1 server rank(s) and 2 workers"
has "$out" "ps            push"
has "$out" "# calls at their bounds: not known (a call's group has no bound here)"
has "$out" "# verification: 0 wrong element(s)"
expect 0 "$cb" proxy dp --np 2 --model gpt2-xl --layers 2 --seq 64 --dp-kind sharded --steps 3 \
  -w 1 --db "$db"
has "$out" "sharded  reduce_scatter"
has "$out" "sharded       allgather"
has "$out" "# verification: 0 wrong element(s)"

# ---- a whole (small) model: units, gradient accumulation, ZeRO, the optimizer step ----
expect 0 "$cb" proxy hybrid --np 4 --dp 2 --pp 2 --model custom --blocks 2 --hidden 64 --heads 4 \
  --seq 16 --vocab 1000 -m 2 --optimizer adam --zero 2 --steps 2 -w 1 --no-db
has "$out" "compute(ms)"
has "$out" "algbw(GB/s)"
has "$out" "tied embedding: the last stage holds a copy"
grep -qE "^ +emb +allreduce +256000 +256000 +2 +1 " <<<"$out" || fail "no tied-embedding all-reduce: $out"
grep -qE "^ +dp +reduce_scatter " <<<"$out" || fail "no ZeRO-2 reduce-scatter: $out"
grep -qE "^ +dp +allgather " <<<"$out" || fail "no ZeRO-2 parameter all-gather: $out"
has "$out" "# verification: 0 wrong element(s)"
expect 0 "$cb" proxy dp --np 2 --model resnet50 -m 3 --steps 2 -w 1 --tflops 1000 --no-db
has "$out" "gradient accumulation: 3 micro-batches per step"
# DDP's buffer broadcast before each of the 3 forwards (batch-norm statistics), as the real trace
has "$out" "buffers (53120 floats, 53 int64) broadcast before each forward"
grep -qE "^ +dp +broadcast +212480 +212480 +2 +3 " <<<"$out" || fail "no buffer broadcast: $out"
# ResNet has no tokens: "-", not samples/s again.
grep -qE "^ +2 .* -$" <<<"$out" || fail "tokens/s should be '-' for resnet50: $out"

# ---- TP: every form ----
for kind in megatron column row sequence; do
  expect 0 "$cb" proxy tp --np 2 --model llama2-7b --layers 1 --seq 64 --tp-kind "$kind" \
    --steps 3 -w 1 --no-db
  has "$out" "# TP: $kind per block"
  has "$out" "# verification: 0 wrong element(s)"
done

# ---- PP: the bubble per stage printed next to (p-1)/(m+p-1) (= 33.3% for p 3, m 4) ----
# (Its value is timing: the schedules are checked step by step and the simulated bubble against
# the formula in tests/unit/proxies/test_proxy_plan.cpp; the measured figures are in the notes.)
pp=(proxy pp --np 3 --model gpt2-xl --layers 6 --seq 64 --tflops 2 -m 4 -w 1 --no-db)
for sched in gpipe 1f1b; do
  expect 0 "$cb" "${pp[@]}" --schedule "$sched" --steps 3
  has "$out" "(p-1)/(m+p-1) = 33.3%"
  has "$out" "# verification: 0 wrong element(s)"
  line=$(grep "schedule bubble per stage" <<<"$out")
  for s in 0 1 2; do
    b=$(sed -n "s/.* s$s \([0-9.]*\)%.*/\1/p" <<<"$line")
    awk -v b="$b" 'BEGIN { exit !(b != "" && b >= 0 && b < 100) }' ||
      fail "$sched: no bubble for stage $s: $line"
  done
done
expect 0 "$cb" "${pp[@]}" --schedule async --steps 4
has "$out" "(4 steps back to back, no flush)"
has "$out" "# verification: 0 wrong element(s)"

# ---- hybrid 2 x 2 ----
expect 0 "$cb" proxy hybrid --np 4 --dp 2 --tp 2 --model bert-large --layers 2 --seq 64 \
  --steps 3 -w 1 --no-db
has "$out" "# layout dp 2 x tp 2 x pp 1 on 4 ranks (innermost first: tp,pp,dp)"
grep -qE "^ +tp +allreduce +[0-9]+ +[0-9]+ +2 " <<<"$out" || fail "no tp allreduce calls: $out"
grep -qE "^ +dp +allreduce +[0-9]+ +[0-9]+ +2 " <<<"$out" || fail "no dp allreduce calls: $out"
has "$out" "# verification: 0 wrong element(s)"
expect 0 "$cb" proxy hybrid --np 4 --dp 2 --pp 2 --model gpt2-xl --layers 4 --seq 64 -m 2 \
  --steps 3 -w 1 --no-db
has "$out" "# layout dp 2 x tp 1 x pp 2 on 4 ranks"
grep -qE "^ +pp +send +[0-9]+ +[0-9]+ +2 +2 " <<<"$out" || fail "no pp send messages: $out"
has "$out" "# verification: 0 wrong element(s)"

# ---- scaling: measured 1, 2, 4 and predicted 8 .. 256 (64 x the 4 measured ranks) ----
expect 0 "$cb" proxy dp --np 4 --model bert-large --layers 2 --seq 128 --tflops 20 --steps 3 \
  -w 1 --scaling weak --db "$db" --label scaling
has "$out" "# weak scaling (batch per rank fixed)"
num='[0-9.e+-]+'
for n in 1 2 4; do grep -qE "^ +$n +[0-9.]+ +- +${num}x +${num}%  measured" <<<"$out" ||
  fail "no measured scaling row for $n: $out"; done
# Predicted rows carry the band of the fit's residuals.
for n in 8 256; do
  grep -qE "^ +$n +[0-9.]+ +[0-9.]+ \.\. [0-9.]+ +${num}x +${num}%  PREDICTED" <<<"$out" ||
    fail "no predicted scaling row for $n: $out"
done
grep -qE "^ +512 " <<<"$out" && fail "predicted past 64 x the measured world: $out"
has "$out" "# PREDICTED rows: cost model alpha"
# Across nodes of 8 with the network given: rows past 8 ranks name their nodes.
expect 0 "$cb" proxy dp --np 2 --model resnet50 --steps 2 -w 1 --scaling weak \
  --predict-to 64 --predict-ranks-per-node 8 --inter-node-gbps 25 --inter-node-us 5 --no-db
# The row for 8 is one node: its library choice (ring, tree, or ring+tree when the calls' sizes
# pick differently: it follows the measured fit) and no node count.
grep -qE "^ +8 .*PREDICTED: (ring|tree|ring\+tree)$" <<<"$out" || fail "no one-node row for 8: $out"
grep -qE "^ +64 .*PREDICTED: (ring|tree|ring\+tree), 8 nodes of 8$" <<<"$out" ||
  fail "no 8-node row for 64: $out"

# ---- stored: runs, show, gate, report ----
expect 0 "$cb" runs --db "$db"
has "$out" "proxy-dp"
expect 0 "$cb" show 1 --db "$db"
has "$out" "proxy-dp"
# Two runs of the same step: the gate tests the proxy case and gives a verdict (pass, or
# inconclusive with one run a side; which one depends on the machine's noise).
"$cb" gate --db "$db" --baseline 1 --candidate 2 --all >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -le 1 ] || [ "$rc" -eq 3 ] || fail "gate on two proxy runs exited $rc: $(cat "$tmp/err")"
grep -qF "proxy-dp" "$tmp/out" || fail "the gate did not test the proxy case: $(cat "$tmp/out")"
grep -qE "^gate: " "$tmp/out" || fail "the gate gave no verdict: $(cat "$tmp/out")"
scaling_run=$(sqlite3 "$db" "SELECT id FROM runs WHERE label = 'scaling'")
html=$tmp/r.html
expect 0 "$cb" report 1 "$scaling_run" --db "$db" -o "$html"
grep -qF 'class="chart timeline"' "$html" || fail "no timeline chart in the report"
grep -qF 'Scaling efficiency (weak)' "$html" || fail "no scaling chart in the report"
grep -qF '<b>predicted</b>' "$html" || fail "predicted rows are not labelled in the report"
grep -qF 'dp bucket 0' "$html" || fail "the timeline lacks the DP buckets"

# The page in headless Chromium: no console message, every chart (timeline included) drawn.
browser=${CHROMIUM:-chromium}
if command -v "$browser" >/dev/null 2>&1; then
  timeout 180 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/profile" --enable-logging=stderr --v=0 --dump-dom "file://$html" \
    >"$tmp/dom.html" 2>"$tmp/chrome.err" || fail "chromium --dump-dom failed"
  grep -q ':CONSOLE' "$tmp/chrome.err" && fail "console messages: $(grep ':CONSOLE' "$tmp/chrome.err")"
  charts=$(grep -c '<svg class="chart' "$html")
  body=$(grep -o '<body[^>]*>' "$tmp/dom.html")
  grep -qF 'data-report="ready"' <<<"$body" || fail "the page's script did not finish: $body"
  grep -qF "data-charts=\"$charts\"" <<<"$body" || fail "expected $charts charts: $body"
  grep -qF "data-charts-drawn=\"$charts\"" <<<"$body" || fail "not every chart drawn: $body"
else
  echo "note: no chromium, the proxy report was checked as text only"
fi

# ---- MPI world: pipeline on 3 processes, hybrid on 4 ----
if command -v "$mpirun" >/dev/null 2>&1; then
  mpi=("$mpirun" --allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none)
  expect 0 "${mpi[@]}" -np 3 "$cb" proxy pp --model gpt2-xl --layers 3 --seq 64 --tflops 2 -m 2 \
    --steps 3 -w 1 --no-db
  has "$out" "# world : mpi (3 ranks"
  has "$out" "# verification: 0 wrong element(s)"
  expect 0 "${mpi[@]}" -np 4 "$cb" proxy hybrid --dp 2 --tp 2 --model bert-large --layers 1 \
    --seq 64 --steps 2 -w 1 --no-db
  has "$out" "collectives mpi"
  has "$out" "# verification: 0 wrong element(s)"
  expect 2 "${mpi[@]}" -np 2 "$cb" proxy hybrid --dp 3 --tp 2 --no-db
  [ "$(grep -c '^collbench: ' <<<"$err")" -eq 1 ] || fail "expected one collbench line: $err"
  has "$err" "does not divide the 2 ranks"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "proxy: all checks passed"
