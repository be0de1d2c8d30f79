#!/usr/bin/env bash
# Every bad input gets one clear line on stderr, exit code 2, and leaves no run in the database.
set -u
cb=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
db=$tmp/x.db

expect_usage() {  # expect_usage "description" "expected text" args...
  local what=$1 text=$2
  shift 2
  "$cb" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$? lines
  lines=$(wc -l <"$tmp/err")
  if [ $rc -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qi -- "$text" "$tmp/err"; then
    echo "FAIL $what: rc=$rc, $lines stderr line(s), expected '$text':"
    sed 's/^/    /' "$tmp/err" | head -5
    fails=$((fails + 1))
  else
    echo "ok   $what: $(cat "$tmp/err")"
    passes=$((passes + 1))
  fi
}

run=(run --np 2 --db "$db" -n 2 -w 1)
expect_usage "negative size" "negative" "${run[@]}" -b -5
expect_usage "malformed size" "unknown unit" "${run[@]}" -b 12X
expect_usage "empty size" "size" "${run[@]}" -e ""
expect_usage "fractional bytes" "whole number" "${run[@]}" -b 1.3
expect_usage "min > max" "larger than" "${run[@]}" -b 1M -e 1K
expect_usage "unknown collective" "unknown collective" "${run[@]}" allscatter
expect_usage "unknown dtype" "unknown data type" "${run[@]}" -d float7
expect_usage "unknown op" "unknown reduction op" "${run[@]}" -o xor
expect_usage "op for dtype" "makes no sense" "${run[@]}" allreduce -o band -d float
expect_usage "unknown algorithm" "unknown algorithm" "${run[@]}" allreduce --algo nosuch
expect_usage "count can't split" "can't be split" "${run[@]}" allgather -b 12 -e 12
expect_usage "np zero" "out of range" run --np 0 --db "$db"
expect_usage "np too large" "out of range" run --np 5000 --db "$db"
expect_usage "root out of range" "out of range" "${run[@]}" broadcast -r 7
expect_usage "bad -a" "-a" "${run[@]}" -a 9
expect_usage "bad statistic" "unknown statistic" "${run[@]}" --stat p50x
expect_usage "unknown transport" "unknown transport" "${run[@]}" allreduce --algo ring --transport carrier-pigeon
expect_usage "bad --zero-copy" "--zero-copy" "${run[@]}" allreduce --zero-copy sometimes
expect_usage "variant that can't run here" "can't run here" "${run[@]}" allreduce --algo mpi
if "$cb" list --np 2 | grep -q "^  nccl"; then
  # GPU path built: asking for it on a machine without a usable device names the cause.
  if "$cb" list --np 2 | grep "^  nccl" | grep -q "no usable device"; then
    expect_usage "GPU variant without a device" "no usable CUDA device" "${run[@]}" --algo nccl
  fi
fi
expect_usage "unknown flag" "" "${run[@]}" --frobnicate
expect_usage "unwritable db" "cannot create" run --np 2 -e 64 --db /etc/hostname/x.db
echo "this is not a database" >"$tmp/text.db"
expect_usage "not a database" "not a collbench database" run --np 2 -e 64 --db "$tmp/text.db"
sqlite3 "$tmp/foreign.db" "create table t(x); insert into t values (1);"
expect_usage "foreign sqlite" "not a collbench database" run --np 2 -e 64 --db "$tmp/foreign.db"

# None of the above left a run behind.
if [ -f "$db" ]; then
  n=$(sqlite3 "$db" "select count(*) from runs")
  if [ "$n" != 0 ]; then
    echo "FAIL: $n run(s) written by bad invocations"
    fails=$((fails + 1))
  fi
fi
echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
