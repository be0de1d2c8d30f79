#!/usr/bin/env bash
# `collbench runs` and `collbench show` on a database filled by real `collbench run`s: tables,
# filters, samples, a run killed with SIGKILL shown as interrupted, and the one-line errors
# (missing run, missing database, a file that is not a database, a bad date).
# Usage: runs_show.sh /path/to/collbench
set -uo pipefail
cb=${1:?usage: runs_show.sh COLLBENCH}
source "$(dirname "$0")/lib/common.sh"
scratch runs_show
bg=  # a run killed below; never left behind
trap '{ [ -n "$bg" ] && kill -9 "$bg" && wait "$bg"; } 2>/dev/null; rm -rf "$tmp"' EXIT

small=(--np 2 -b 8 -e 64 -n 3 -w 1 --format none --db "$db")
expect 0 "$cb" run allreduce "${small[@]}" --label first
expect 0 "$cb" run allgather "${small[@]}" --label second

expect 0 "$cb" runs --db "$db"
has "$out" "started (UTC)"
has "$out" "#wrong"
lines=$(grep -cE '^ *[0-9]+ ' <<<"$out")
[ "$lines" -eq 2 ] || fail "runs listed $lines runs, expected 2: $out"
# Newest first: run 2 (allgather) above run 1 (allreduce); both ok, local world of 2, checked.
first_line=$(grep -E '^ *[0-9]+ ' <<<"$out" | head -1)
has "$first_line" "second"
has "$first_line" "allgather"
has "$first_line" "local x2"
grep -qE '^ *1 .* ok +first +local x2 .*allreduce +[0-9]+ +0$' <<<"$out" ||
  fail "run 1 line not as expected: $out"

expect 0 "$cb" runs --db "$db" --label first
has "$out" "allreduce"
hasnt "$out" "allgather"
expect 0 "$cb" runs --db "$db" --limit 1
has "$out" "second"
hasnt "$out" "first"
expect 0 "$cb" runs --db "$db" --label nothing
has "$out" "no runs match in '$db'"
expect 0 "$cb" runs --db "$db" --since 2000-01-01 --until 2999-12-31
[ "$(grep -cE '^ *[0-9]+ ' <<<"$out")" -eq 2 ] || fail "date range lost runs: $out"
expect 0 "$cb" runs --db "$db" --until 2000-01-01
has "$out" "no runs match"

expect 0 "$cb" show 1 --db "$db"
has "$out" "# run 1"
has "$out" "# status      : ok"
has "$out" "# label       : first"
has "$out" "# world       : local, 2 ranks"
has "$out" "# allreduce  float  sum"
has "$out" "time(us)"
# A measured row: size, count, a hand-written variant, placement, then numbers.
grep -qE '^ +8 +2 +ring/local +out +[0-9]+\.[0-9]{2} ' <<<"$out" ||
  fail "no measured ring/local row for 8 bytes: $out"
hasnt "$out" "rank 0:"
expect 0 "$cb" show last --db "$db" --samples
has "$out" "# run 2"
has "$out" "# allgather"
has "$out" "rank 0:"
has "$out" "rank 1:"

expect 2 "$cb" show 99 --db "$db"
[ "$err" = "collbench: no run 99 in '$db'" ] || fail "show 99: $err"
expect 2 "$cb" show abc --db "$db"
has "$err" "is not a run id"
expect 2 "$cb" runs --db "$tmp/missing.db"
[ "$err" = "collbench: no database at '$tmp/missing.db'" ] || fail "missing db: $err"
[ ! -e "$tmp/missing.db" ] || fail "runs created a database"
echo "not a database at all, just text" >"$tmp/text.db"
expect 2 "$cb" runs --db "$tmp/text.db"
[ "$err" = "collbench: '$tmp/text.db' is not a collbench database (file is not SQLite)" ] ||
  fail "text file: $err"
expect 2 "$cb" runs --db "$db" --since yesterday
has "$err" "--since 'yesterday'"

# A run killed with SIGKILL while measuring stays "running" while its process lives, then
# `runs` reaps it as interrupted and `show` still has what it measured before the kill.
"$cb" run allreduce --np 2 -b 8 -e 256M -n 50 -w 1 --format none --db "$db" --label killed \
  >/dev/null 2>&1 &
bg=$!
for _ in $(seq 600); do
  expect 0 "$cb" runs --db "$db" --label killed
  grep -qE 'running +killed' <<<"$out" && break
  sleep 0.1
done
has "$out" "running"
# Let it store a few points before the kill.
for _ in $(seq 600); do
  expect 0 "$cb" show 3 --db "$db"
  [ "$(grep -cE '^ +[0-9]+ +[0-9]+ ' <<<"$out")" -ge 4 ] && break
  sleep 0.1
done
{
  kill -9 "$bg"
  wait "$bg"
} 2>/dev/null  # without bash's "Killed" job report
bg=
expect 0 "$cb" runs --db "$db" --label killed
grep -qE '^ *3 .* interrupted +killed ' <<<"$out" || fail "killed run not interrupted: $out"
expect 0 "$cb" show 3 --db "$db"
has "$out" "# status      : interrupted"
has "$out" "# finished    : "
[ "$(grep -cE '^ +[0-9]+ +[0-9]+ ' <<<"$out")" -ge 4 ] || fail "killed run lost its points: $out"

if [ "$failures" -ne 0 ]; then
  echo "runs_show: $failures failure(s)"
  exit 1
fi
echo "runs_show: ok"
