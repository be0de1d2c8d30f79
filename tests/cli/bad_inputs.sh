#!/usr/bin/env bash
# The bad-input battery: every subcommand, each case with its expected exit code and the text its
# one stderr line must contain. A bad input never reaches the measurement: measuring commands
# print nothing on stdout (not even the run header), no run is added to the database, nothing is
# left in /dev/shm, and every case ends within 60 s (no wait without a deadline).
# $1 = the collbench binary.
set -u
cb=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
db=$tmp/x.db
shm_prefix="collbench-$(id -u)-"
shm_before=$(ls /dev/shm 2>/dev/null | grep -c "^$shm_prefix" || true)

# bad CODE TEXT ARGS...: exit CODE, exactly one stderr line containing TEXT (case-insensitive);
# commands that measure (run, p2p) print nothing on stdout.
bad() {
  local code=$1 text=$2
  shift 2
  timeout 60 "$cb" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$? lines why=""
  lines=$(wc -l <"$tmp/err")
  [ $rc -eq "$code" ] || why="exit $rc, expected $code"
  [ "$lines" -eq 1 ] || why="$why; $lines stderr lines"
  grep -qi -- "$text" "$tmp/err" || why="$why; no '$text'"
  if [[ $1 == run || $1 == p2p ]] && [ -s "$tmp/out" ]; then why="$why; printed on stdout"; fi
  if [ -n "$why" ]; then
    echo "FAIL $*: $why"
    sed 's/^/    /' "$tmp/err" | head -3
    head -3 "$tmp/out" | sed 's/^/    out: /'
    fails=$((fails + 1))
  else
    echo "ok   $*: $(head -1 "$tmp/err")"
    passes=$((passes + 1))
  fi
}

# One real run so the reading commands have something to read.
"$cb" run allreduce --np 2 -b 64 -e 64 -n 2 -w 1 --algo ring --db "$db" --label base >/dev/null ||
  { echo "FAIL: the seed run failed"; exit 1; }
runs_before=$(sqlite3 "$db" "select count(*) from runs")

r=(run --np 2 --db "$db" -n 2 -w 1)
# --- run: sizes
bad 2 "negative" "${r[@]}" -b -5
bad 2 "unknown unit" "${r[@]}" -b 12X
bad 2 "size" "${r[@]}" -e ""
bad 2 "whole number" "${r[@]}" -b 1.3
bad 2 "larger than" "${r[@]}" -b 1M -e 1K
bad 2 "can't be split" "${r[@]}" allgather -b 12 -e 12
bad 2 "available" "${r[@]}" allreduce -b 1T -e 1T
bad 2 "available" "${r[@]}" allreduce -e 64G
bad 2 "available" run allgather -b 8G -e 8G --np 8 --db "$db"
bad 2 "-f" "${r[@]}" -f nan
bad 2 "-f 1 would never grow" "${r[@]}" -b 8 -e 1K -f 1
bad 2 "-f 0.5" "${r[@]}" -f 0.5
bad 2 "-i 0" "${r[@]}" -i 0
bad 2 "negative" "${r[@]}" -i -4
# --- run: iterations, deadlines, statistics
bad 2 "iterations" run --np 2 --db "$db" -n 0
bad 2 "-w" run --np 2 --db "$db" -w -1
bad 2 "-N" "${r[@]}" -N 0
bad 2 "-T nan" "${r[@]}" -T nan
bad 2 "-T 0" "${r[@]}" -T 0
bad 2 "-T -1" "${r[@]}" -T -1
bad 2 "-T inf" "${r[@]}" -T inf
bad 2 "-a" "${r[@]}" -a 9
bad 2 "unknown statistic" "${r[@]}" --stat p50x
bad 2 "" "${r[@]}" --time-budget fast
# --- run: what to run
bad 2 "unknown collective" "${r[@]}" allscatter
bad 2 "unknown data type" "${r[@]}" -d float7
bad 2 "unknown reduction op" "${r[@]}" -o xor
bad 2 "makes no sense" "${r[@]}" allreduce -o band -d float
bad 2 "unknown algorithm" "${r[@]}" allreduce --algo nosuch
bad 2 "out of range" "${r[@]}" broadcast -r 7
bad 2 "unknown transport" "${r[@]}" allreduce --algo ring --transport carrier-pigeon
bad 2 "--zero-copy" "${r[@]}" allreduce --zero-copy sometimes
bad 2 "can't run here" "${r[@]}" allreduce --algo mpi
bad 2 "--placement" "${r[@]}" --placement sideways
bad 2 "--ranks-per-node -3" "${r[@]}" --ranks-per-node -3
bad 2 "--inject-delay" "${r[@]}" --inject-delay soon
bad 2 "negative" "${r[@]}" --inject-delay -5
bad 2 "--inject-delay" "${r[@]}" --inject-delay nan
bad 2 "--inject-delay" "${r[@]}" --inject-delay inf
bad 2 "--time-budget" "${r[@]}" --time-budget 99999999999999999999999999999999999999h
bad 2 "matches no variant" "${r[@]}" allreduce --inject-delay 5:nosuch
bad 2 "matches no variant" "${r[@]}" allreduce --inject-delay 5:ring/shm
bad 2 "matches no variant" "${r[@]}" allreduce --algo ring --inject-delay 5:tree
# --- run: world
bad 2 "--np -3" run allreduce --np -3 --db "$db"
bad 2 "--np -1" run allreduce --np -1 --db "$db"
bad 2 "--np 0" run --np 0 --db "$db"
bad 2 "out of range" run --np 5000 --db "$db"
# --- run: output and storage
bad 2 "--format" "${r[@]}" --format xml
bad 2 "side-by-side metric" "${r[@]}" --side-metric foo
bad 2 "--json" "${r[@]}" --json /nonexistent-dir/x.json
bad 2 "directory" "${r[@]}" --json "$tmp"
bad 2 "--csv" "${r[@]}" --csv /sys/collbench.csv
bad 2 "--db is empty" run --np 2 --db ''
bad 2 "control character" "${r[@]}" --label $'two\nlines'
bad 2 "UTF-8" "${r[@]}" --label $'bad\xff\xfebytes'
bad 2 "cannot create" run --np 2 -e 64 --db /etc/hostname/x.db
echo "this is not a database" >"$tmp/text.db"
bad 2 "not a collbench database" run --np 2 -e 64 --db "$tmp/text.db"
sqlite3 "$tmp/foreign.db" "create table t(x); insert into t values (1);"
bad 2 "not a collbench database" run --np 2 -e 64 --db "$tmp/foreign.db"
bad 2 "" "${r[@]}" --frobnicate
bad 2 "" run --np 2 --db "$db" -n
bad 2 "" run --np 2 --db "$db" -n many

# --- p2p
p=(p2p --np 2 --db "$db")
bad 2 "" "${p[@]}"
bad 2 "latency" "${p[@]}" lat
bad 2 "-n 0" "${p[@]}" latency -n 0
bad 2 "-n -2" "${p[@]}" latency -n -2
bad 2 "-W 0" "${p[@]}" bw -W 0
bad 2 "-T nan" "${p[@]}" latency -T nan
bad 2 "-f" "${p[@]}" latency -f nan
bad 2 "larger than" "${p[@]}" latency -b 1M -e 1K
bad 2 "exclude" "${p[@]}" latency --pair 0,1 --all-pairs
bad 2 "pair" "${p[@]}" latency --pair 0,0
bad 2 "pair" "${p[@]}" latency --pair 0,5
bad 2 "transport" "${p[@]}" latency --transport pigeon
bad 2 "--matrix-size" "${p[@]}" bw --all-pairs --matrix-size 3
bad 2 "--np -3" p2p latency --np -3 --no-db
bad 2 "--db is empty" p2p latency --np 2 --db ''
bad 2 "control character" "${p[@]}" latency --label $'a\tb'

# --- list
bad 2 "unknown transport" list --np 2 --transport bogus
bad 2 "--ranks-per-node -3" list --np 2 --ranks-per-node -3
bad 2 "--np -1" list --np -1

# --- runs, show, compare, gate, history, export, report, db
bad 2 "--until" runs --db "$db" --until 2026-13-45
bad 2 "--since" runs --db "$db" --since 2026-02-30
bad 2 "--since" runs --db "$db" --since 2026-01-01T25:00
bad 2 "--since" runs --db "$db" --since yesterday
bad 2 "" runs --db "$db" --limit -1
bad 2 "" runs --db "$tmp/none.db"
bad 2 "no run" show 999 --db "$db"
bad 2 "" show abc --db "$db"
bad 2 "" show --db "$db"
bad 2 "" compare 1 --db "$db"
bad 2 "no run" compare 1 999 --db "$db"
bad 2 "" gate --db "$db" --candidate last
bad 2 "--format" gate --db "$db" --baseline 1 --candidate 1 --format yaml
bad 2 "" history --db "$db"
bad 2 "--since" history allreduce --db "$db" --since 2026-00-10
bad 2 "--metric" history allreduce --db "$db" --metric speed
bad 2 "" export --db "$db"
bad 2 "" export tables --db "$db"
bad 2 "--format" export results --db "$db" --format xml
bad 2 "no run" export results --db "$db" --run 999
bad 2 "" report --db "$db"
bad 2 "no run" report 999 --db "$db" -o "$tmp/r.html"
bad 2 "" db --db "$db"
bad 2 "" db check --db "$tmp/none.db"
bad 2 "--keep-last" db prune --db "$db" --keep-last -5
bad 2 "--before" db prune --db "$db" --before 2026-99-99
bad 2 "not a collbench database" db check --db "$tmp/text.db"
bad 2 "" nosuchcommand

# --- import (the file is checked before anything is written)
bad 2 "" import --db "$db"
bad 2 "" import "$tmp/missing.log" --db "$db"

# Nothing above added a run, or left a collbench segment in /dev/shm.
runs_after=$(sqlite3 "$db" "select count(*) from runs")
if [ "$runs_after" != "$runs_before" ]; then
  echo "FAIL: bad invocations added $((runs_after - runs_before)) run(s) to the database"
  fails=$((fails + 1))
fi
for f in "$tmp/text.db" "$tmp/foreign.db"; do
  [ -n "$(sqlite3 "$f" "select name from sqlite_master where name='runs'" 2>/dev/null)" ] &&
    { echo "FAIL: $f was turned into a collbench database"; fails=$((fails + 1)); }
done
shm_after=$(ls /dev/shm 2>/dev/null | grep -c "^$shm_prefix" || true)
if [ "$shm_after" -gt "$shm_before" ]; then
  echo "FAIL: $((shm_after - shm_before)) collbench segment(s) left in /dev/shm"
  fails=$((fails + 1))
fi
echo "$passes passed, $fails failed"
[ $passes -ge 60 ] || { echo "FAIL: the battery must have at least 60 cases"; exit 1; }
[ $fails -eq 0 ]
