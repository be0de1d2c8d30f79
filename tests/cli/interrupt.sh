#!/usr/bin/env bash
# SIGINT/SIGTERM stop a run at the next point: exit 130 (local world), the run is marked
# interrupted, the points measured so far are kept, the database is consistent, and no
# collbench shared-memory segment is left behind. Also under mpirun (which forwards the signal).
set -u
cb=$1
mpirun=${CB_MPIRUN:-mpirun}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
check() {  # check "what" condition...
  local what=$1
  shift
  if "$@"; then passes=$((passes + 1)); echo "ok   $what"; else fails=$((fails + 1)); echo "FAIL $what"; fi
}
shm_before=$(ls /dev/shm | grep -c collbench || true)

for sig in INT TERM; do
  db=$tmp/local-$sig.db
  "$cb" run allreduce --np 2 -b 1M -e 1G -n 30 --db "$db" >"$tmp/out" 2>&1 &
  pid=$!
  # Wait until a few points are stored, then signal.
  for _ in $(seq 100); do
    n=$(sqlite3 "$db" "select count(*) from results" 2>/dev/null || echo 0)
    [ "${n:-0}" -ge 3 ] && break
    sleep 0.2
  done
  kill -$sig $pid
  wait $pid
  rc=$?
  check "local SIG$sig exits 130 (got $rc)" test $rc -eq 130
  check "local SIG$sig run marked interrupted" \
    test "$(sqlite3 "$db" "select status from runs")" = interrupted
  check "local SIG$sig kept its points" test "$(sqlite3 "$db" "select count(*) from results")" -ge 3
  check "local SIG$sig integrity" test "$(sqlite3 "$db" "pragma integrity_check")" = ok
done

db=$tmp/mpi.db
"$mpirun" --allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none -np 2 \
  "$cb" run allreduce -b 1M -e 1G -n 30 --algo mpi,ring --transport shm --db "$db" >"$tmp/out" 2>&1 &
pid=$!
for _ in $(seq 150); do
  n=$(sqlite3 "$db" "select count(*) from results" 2>/dev/null || echo 0)
  [ "${n:-0}" -ge 3 ] && break
  sleep 0.2
done
kill -INT $pid
wait $pid
# When the launcher kills rank 0 outright the run stays "running" until a later open sees its
# process gone and reaps it; give the process a moment to disappear.
for _ in $(seq 25); do
  "$cb" runs --db "$db" >/dev/null 2>&1
  [ "$(sqlite3 "$db" "select status from runs")" != running ] && break
  sleep 0.2
done
check "mpirun SIGINT run marked interrupted ($(sqlite3 "$db" "select status from runs"))" \
  test "$(sqlite3 "$db" "select status from runs")" = interrupted
check "mpirun SIGINT kept its points" test "$(sqlite3 "$db" "select count(*) from results")" -ge 3
shm_after=$(ls /dev/shm | grep -c collbench || true)
check "no collbench segment left in /dev/shm" test "$shm_after" -le "$shm_before"

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
