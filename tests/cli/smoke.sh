#!/usr/bin/env bash
# A short run of every collective and data type class in the local world, verified, stored and
# read back: the CLI run of the sanitizer build (scripts/sanitize.sh), cheap enough for every CI.
# Also checks the end of a run: the progress line never reaches a file, the tables are complete.
# $1 = the collbench binary.
set -u
cb=$1
source "$(dirname "$0")/lib/common.sh"
scratch smoke
expect 0 "$cb" run all --np 3 -b 0 -e 4K -f 8 -n 2 -w 1 -d int32,float,half -o sum,max \
  --reference --db "$db" --json "$tmp/r.json" --csv "$tmp/r.csv"
has "$out" "# stored as run 1"
grep -q $'\r' "$tmp/out" && fail "carriage return (a progress line) in redirected output"
expect 0 "$cb" run allreduce --np 2 -b 0 -e 0 -n 2 -w 1 --no-db
expect 0 "$cb" p2p latency --np 2 -e 64 -n 5 -w 1 --db "$db"
expect 0 "$cb" show last --db "$db" --samples
# A second run of the same cases, so compare has two different runs (a run against itself is refused).
expect 0 "$cb" run all --np 3 -b 0 -e 4K -f 8 -n 2 -w 1 -d int32,float,half -o sum,max --db "$db"
has "$out" "# stored as run 3"
expect 0 "$cb" compare 1 3 --db "$db"
expect 2 "$cb" compare 1 1 --db "$db"
expect 0 "$cb" export samples --db "$db" --per-rank --format json -o "$tmp/s.json"
expect 0 "$cb" report 1 2 --db "$db" -o "$tmp/r.html"
expect 0 "$cb" db check --db "$db"
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
