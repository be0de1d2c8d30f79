#!/usr/bin/env bash
# SIGINT/SIGTERM stop a run at the next point: exit 128 + the signal, 130 and 143 as shells and
# Slurm read them (local world), the run is marked
# interrupted, the points measured so far are kept, the database is consistent, and no
# collbench shared-memory segment is left behind. Also under mpirun (which forwards the signal),
# for `run` and `p2p` alike: both share the run session's lifecycle.
set -u
cb=$1
mpirun=${CB_MPIRUN:-mpirun}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/lib/checks.sh"
shm_before=$(ls /dev/shm | grep -c collbench || true)
# The exit code of a process that a signal interrupted: 128 + its number.
codeOf() { case $1 in INT) echo 130 ;; TERM) echo 143 ;; esac; }
# interrupted WHAT RC DB SIG: the command exited 128 + SIG, its run is marked interrupted, its
# points kept.
interrupted() {
  check "$1 exits $(codeOf "$4") (got $2)" test "$2" -eq "$(codeOf "$4")"
  check "$1 run marked interrupted" test "$(sqlite3 "$3" "select status from runs")" = interrupted
  check "$1 kept its points" test "$(sqlite3 "$3" "select count(*) from results")" -ge 3
}

for sig in INT TERM; do
  db=$tmp/local-$sig.db
  "$cb" run allreduce --np 2 -b 1M -e 1G -n 30 --db "$db" >"$tmp/out" 2>&1 &
  pid=$!
  wait_stored "$db" 3  # a few points stored, then the signal
  kill -$sig $pid
  wait $pid
  interrupted "local SIG$sig" $? "$db" $sig
  check "local SIG$sig integrity" test "$(sqlite3 "$db" "pragma integrity_check")" = ok
done

# The local world's p2p, like its run above.
db=$tmp/local-p2p.db
"$cb" p2p bw --np 2 --transport local -b 1 -e 256M -n 100 --db "$db" >"$tmp/out" 2>&1 &
pid=$!
wait_stored "$db" 3
kill -TERM $pid
wait $pid
interrupted "local p2p SIGTERM" $? "$db" TERM

# Proxy steps and diagnosis rounds in the local world with the default transport have no safe
# point of their own between calls: the rank threads block in the local world's waits, which must
# look at the signal flag (they slept to the deadline and the run ended `ok` 20-40 s later).
# Each command below runs for minutes unless stopped; the signal comes once its run is begun.
localStop() {  # localStop NAME SIGNAL collbench-args...
  local name=$1 sig=$2
  shift 2
  local db=$tmp/stop-$name.db
  "$cb" "$@" --db "$db" >"$tmp/out" 2>&1 &
  local pid=$!
  wait_stored "$db" 1 runs
  sleep 1
  kill -$sig $pid
  # A stopped command exits at once; one that ignores the signal runs on: end it after 30 s.
  local waited=0
  while kill -0 $pid 2>/dev/null && [ $waited -lt 150 ]; do
    sleep 0.2
    waited=$((waited + 1))
  done
  if kill -0 $pid 2>/dev/null; then
    kill -KILL $pid
    check "local $name SIG$sig stops (still running 30 s after the signal)" false
  fi
  wait $pid
  local rc=$?
  check "local $name SIG$sig exits $(codeOf $sig) (got $rc)" test $rc -eq "$(codeOf $sig)"
  check "local $name SIG$sig run marked interrupted" \
    test "$(sqlite3 "$db" "select status from runs")" = interrupted
}
localStop proxy-dp INT proxy dp --np 2 --model resnet50 --steps 100000
localStop proxy-pp TERM proxy pp --np 2 --model gpt2-xl --layers 4 --steps 100000
localStop diag-links INT diag links --np 4 --schedules 99 -n 1000

# Under mpirun: the launcher sends SIGTERM to every rank a second after its own signal and kills
# them a second later. The ranks stop at an agreed point (or give up a long wait), so the run is
# `interrupted` the moment mpirun returns, and no rank crashes in MPI_Finalize.
mpiCase() {  # mpiCase NAME SIGNAL collbench-args...
  local name=$1 sig=$2
  shift 2
  local db=$tmp/mpi-$name-$sig.db
  "$mpirun" --allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none -np 2 \
    "$cb" "$@" --db "$db" >"$tmp/out" 2>&1 &
  local pid=$!
  wait_stored "$db" 3
  kill -$sig $pid
  wait $pid
  local status
  status=$(sqlite3 "$db" "select status from runs")
  check "mpirun $name SIG$sig run marked interrupted when mpirun returns ($status)" \
    test "$status" = interrupted
  check "mpirun $name SIG$sig no crash text" \
    test "$(grep -cE 'Segmentation|corrupted|Process received signal|exited on signal' "$tmp/out")" -eq 0
  check "mpirun $name SIG$sig kept its points" \
    test "$(sqlite3 "$db" "select count(*) from results")" -ge 3
}
mpiCase run INT run allreduce -b 1M -e 1G -n 30 --algo mpi,ring --transport shm
mpiCase run TERM run allreduce -b 1M -e 1G -n 30 --algo mpi,ring --transport shm
mpiCase p2p TERM p2p bw -b 1 -e 256M -n 100 --transport shm,mpi-native
# 10 trials of scripts/signal-trials.sh (which runs 100 by hand): run, p2p, proxy dp, pp and
# hybrid, each in the local world and under mpirun, with SIGINT: exit 130 (SIGTERM 143; mpirun:
# non-zero), no
# crash text, the run interrupted when the process is gone, /dev/shm clean.
if bash "${CB_SOURCE_DIR:-$(dirname "$0")/../..}/scripts/signal-trials.sh" -n 10 --out "$tmp/trials" \
  --mpirun "$mpirun" "$cb" >"$tmp/trials.log" 2>&1; then
  check "10 signal trials: $(tail -1 "$tmp/trials.log")" true
else
  cat "$tmp/trials.log"
  check "10 signal trials: $(tail -1 "$tmp/trials.log")" false
fi

shm_after=$(ls /dev/shm | grep -c collbench || true)
check "no collbench segment left in /dev/shm" test "$shm_after" -le "$shm_before"

checks_done
