#!/usr/bin/env bash
# `collbench diag`: links in a local world, healthy and with an injected slow link and slow rank
# (named exactly; exit 0 healthy, 1 suspects), stored and drawn as a heat map in the report;
# `diag logs` over real pairwise nccl-tests logs names exactly the four slow node pairs; bad
# arguments get one line and exit 2.
# Usage: diag.sh /path/to/collbench
set -uo pipefail
cb=${1:?usage: diag.sh COLLBENCH}
source "$(dirname "$0")/lib/common.sh"
scratch diag
fast=(--size 64K -W 4 -n 5 --latency-iters 40)
# expect_verdict CODE CMD...: expect, once more when the run said other processes held its CPUs
# (exit 3, "too noisy": the verdict is then rightly none, and the machine's business, not ours).
expect_verdict() {
  local code=$1 rc
  shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ $rc -eq 3 ] && grep -q "other processes used" "$tmp/out"; then
    echo "retry: $(grep -m1 'too noisy' "$tmp/out" | cut -c1-160)"
    expect "$code" "$@"
    return
  fi
  out=$(tr -d '\000' <"$tmp/out")
  err=$(tr -d '\000' <"$tmp/err")
  [ "$rc" -eq "$code" ] || fail "'$*' exited $rc, expected $code; stdout: $out; stderr: $err"
}

# An injected slow link among 6 thread ranks: named, and only it. Six rank threads on a 2-core
# machine sometimes name an endpoint rank on latency beside the link (1 of 11 idle runs,
# 2026-11-26; an open defect of the verdict under oversubscription, issue 26): one more try then,
# and the verdict of the accepted try is the one checked below and drawn in the report.
for try in 1 2; do
  "$cb" diag links --np 6 "${fast[@]}" --inject slow-link=1-4:8 --db "$db" \
    --json "$tmp/links.json" --csv "$tmp/links.csv" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  out=$(cat "$tmp/out")
  links_run=$(sed -n 's/^# stored as run \([0-9]*\) in .*/\1/p' <<<"$out")
  [ "$rc" -eq 1 ] && ! grep '^SUSPECT' <<<"$out" | grep -qv '^SUSPECT link 1-4 ' && break
  echo "diag links try $try: exit $rc, suspects: $(grep '^SUSPECT' <<<"$out" | tr '\n' ';')"
done
[ "$rc" -eq 1 ] || fail "diag links with a slow link exited $rc, expected 1: $out $(cat "$tmp/err")"
has "$out" "# diag links over local: 6 ranks, 15 links in 5 rounds"
has "$out" "# injected: slow-link 1-4 x8"
has "$out" "SUSPECT link 1-4 ("
others=$(grep '^SUSPECT' <<<"$out" | grep -v '^SUSPECT link 1-4 ')
[ -z "$others" ] || fail "suspects other than 1-4: $others"
has "$(cat "$tmp/links.json")" '"healthy": false'
has "$(cat "$tmp/links.json")" '"schedules": 5'
has "$out" "; 5 schedules, each link's median"
has "$out" "(every pair of a round measured for the same "
has "$(cat "$tmp/links.csv")" "metric,a,b,name_a,name_b,class,value,unit,relative"
[ "$(grep -c '^bandwidth,' "$tmp/links.csv")" -eq 15 ] || fail "CSV: expected 15 bandwidth links"

# An injected slow rank: the verdict names the rank, not its links.
expect_verdict 1 "$cb" diag links --np 5 "${fast[@]}" --inject slow-rank=3:1ms --db "$db"
has "$out" "SUSPECT rank 3"
others=$(grep '^SUSPECT' <<<"$out" | grep -v '^SUSPECT rank 3 ')
[ -z "$others" ] || fail "suspects other than rank 3: $others"

# Healthy: one verdict line, exit 0; --quick measures one round of the two halves. Four thread
# ranks on 2 cores fall, in some runs, into a mode where one round's pairs take turns on the CPUs
# (that round 10x slower in every schedule): "too noisy" then, never a suspect (docs/journal/2026-11-27-diag-measurements.md,
# Diagnosis); the healthy verdict must come in one of 5 attempts.
for attempt in 1 2 3 4 5; do
  "$cb" diag links --np 4 "${fast[@]}" --no-db >"$tmp/out" 2>"$tmp/err"
  rc=$?
  out=$(cat "$tmp/out")
  [ "$rc" -eq 0 ] && break
done
# Beside a parallel build the schedules may disagree: then "too noisy to judge" (exit 3) is the
# honest answer (issue 26), never a suspect.
if [ "$rc" -eq 3 ]; then
  has "$out" "too noisy to judge: "
else
  [ "$rc" -eq 0 ] || fail "healthy diag links exited $rc in 5 attempts; last stdout: $out"
  has "$out" "healthy: 6 links of 4 ranks, no suspect link or rank"
fi
# Strangers on the ranks' CPUs: a busy loop per CPU beside them. The figures are then the
# scheduler's time slices, steady enough to pass the repeats' agreement (a false suspect came of
# it); the CPU accounting says so: "too noisy", exit 3, whatever the matrix showed.
busy=()
for _ in $(seq 1 "$(nproc)"); do
  (exec sh -c 'while :; do :; done') &
  busy+=($!)
done
trap 'kill "${busy[@]}" 2>/dev/null; rm -rf "$tmp"' EXIT
expect 3 "$cb" diag links --np 4 "${fast[@]}" --no-db --json "$tmp/busy.json"
has "$out" "too noisy to judge: while the links were measured ("
has "$out" "CPUs that host "
hasnt "$out" "SUSPECT"
has "$(cat "$tmp/busy.json")" '"contended": true'
has "$(cat "$tmp/busy.json")" '"too_noisy": true'
# diag ranks alike: a straggler timed under a stranger's load is none. Its 60 calls of 256 KiB
# take 16 ms when the loops leave the CPUs alone, too short to be disturbed, and then rightly say
# healthy: one of 6 attempts must meet the loops (1-2 s then). 3 attempts missed them all in a
# fresh-clone CI run on 2026-12-08.
for attempt in 1 2 3 4 5 6; do
  "$cb" diag ranks --np 4 --size 256K -n 30 --no-db --json "$tmp/busy_ranks.json" >"$tmp/out" \
    2>"$tmp/err"
  rc=$?
  out=$(cat "$tmp/out")
  [ "$rc" -eq 3 ] && break
done
[ "$rc" -eq 3 ] || fail "diag ranks beside busy loops exited $rc in 6 attempts: $out"
has "$out" "too noisy to judge: while the calls ran ("
hasnt "$out" "SUSPECT"
has "$(cat "$tmp/busy_ranks.json")" '"too_noisy": true'
kill "${busy[@]}" 2>/dev/null
wait "${busy[@]}" 2>/dev/null

expect 0 "$cb" diag links --np 6 --quick "${fast[@]}" --no-db
has "$out" "3 links in 1 round of the two halves at once (--quick)"

# Stored: the HTML report draws the matrix with the suspect marked.
expect 0 "$cb" report "${links_run:-1}" --db "$db" -o "$tmp/r.html"
html=$(cat "$tmp/r.html")
has "$html" '<svg class="heatmap"'
has "$html" 'class="cell suspect"'
has "$html" "suspect link 1-4"

# diag ranks: a rank that waits before each exchange arrives late, and only it is named.
expect_verdict 1 "$cb" diag ranks --np 5 -n 20 --size 256K --inject slow-rank=2:1ms --no-db
has "$out" "SUSPECT rank 2 (arrives late)"
others=$(grep '^SUSPECT' <<<"$out" | grep -v '^SUSPECT rank 2 ')
[ -z "$others" ] || fail "ranks: suspects other than rank 2: $others"

# diag bisect: a slow rank among 8.
expect_verdict 1 "$cb" diag bisect --np 8 --coll-size 256K --size 64K -W 4 --latency-iters 40 \
  --inject slow-rank=6:500us --no-db
# Bisection names it in 3 rounds; when a round's repeats disagree (a loaded machine) the pair
# matrix decides, and must name the same rank.
has "$out" "SUSPECT rank 6 ("
others=$(grep '^SUSPECT' <<<"$out" | grep -v '^SUSPECT rank 6 ')
[ -z "$others" ] || fail "bisect: suspects other than rank 6: $others"
if grep -q "^SUSPECT rank 6 (bisect)" <<<"$out"; then
  [ "$(grep -c '^# round' <<<"$out")" -eq 3 ] || fail "bisect: expected 3 rounds: $out"
fi

# diag logs: 28 real node-pair logs of 8 H100 nodes; alltoall names exactly 4 slow pairs.
logs=("$src"/tests/data/diag/cluster00-g1/*.log)
[ "${#logs[@]}" -eq 28 ] || fail "expected 28 fixture logs, found ${#logs[@]}"
expect 1 "$cb" diag logs "${logs[@]}" --db "$db" --json "$tmp/logs.json"
has "$out" "# diag logs: 28 log(s), 8 hosts"
for pair in cnode2-001-cnode2-004 cnode2-002-cnode2-003 cnode2-002-cnode2-006 \
  cnode2-004-cnode2-006; do
  has "$out" "SUSPECT link $pair (alltoall busbw)"
done
n=$(grep -c '^SUSPECT link .* (alltoall busbw)' <<<"$out")
[ "$n" -eq 4 ] || fail "expected 4 alltoall suspects, got $n: $out"
grep -q '^SUSPECT host' <<<"$out" && fail "no host is slow in these logs: $out"
has "$out" "# stored as run"
expect 0 "$cb" diag logs "$src"/tests/data/diag/cluster00-g1/nccl_N2_G1_cnode2-00[5-8]_cnode2-00[5-8].log --no-db
has "$out" "healthy: no suspect link or host"

# Bad arguments: one line, exit 2, nothing measured.
for args in "links --np 2" "links --np 4 --inject slow-link=1-9:2" "links --np 4 --inject slow-link=1-1:2" \
  "links --np 4 --inject slow-rank=1:soon" "links --np 4 --gap 120%" "links --np 4 --k -1" \
  "links --np 4 --quick --sequential" "links --np 4 --size 0" "links --np 4 --transport carrier-pigeon" \
  "logs $tmp/none.log" "logs" "links --np 4 --json /nonexistent/dir/x.json" "bisect-everything" "ranks --np 2" \
  "bisect --np 3" "ranks --np 4 -n 1" "bisect --np 4 --repeats 0" "links --np 4 --schedules 0"; do
  # shellcheck disable=SC2086
  expect 2 "$cb" diag $args --no-db
  one_line "$err"
done
expect 2 "$cb" diag logs "$src"/tests/data/diag/README.md
one_line "$err"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "diag: all checks passed"
