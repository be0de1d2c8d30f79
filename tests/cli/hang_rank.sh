#!/usr/bin/env bash
# A hang names its rank. Under mpirun -np 3, rank 1 is stopped (SIGSTOP) in the middle of a sweep;
# when -T passes, a survivor prints one line naming rank 1, its host and pid and the call it was
# last in ("rank 1 (HOST, pid N) is stopped in allreduce 16 MiB ring/shm, iteration 7 of 301;
# ranks 0 and 2 waited 3 s in shm exchange"), read from the rank board (core/RankBoard.h), for a
# hand-written variant (the survivors time out in their own waits) and for the MPI library's
# blocking call (the board's watchdog ends it). A rank killed outright is named as dead. The local
# world's equivalent: a rank stalled by --inject is named when -T passes. /dev/shm stays clean.
# $1 = the collbench binary.
set -u
cb=$1
mpirun=${CB_MPIRUN:-mpirun}
launch=("$mpirun" --allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cb-hang.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/lib/checks.sh"
shm_before=$(ls /dev/shm | grep -c collbench || true)
T=3

# rankPid LAUNCHER_PID RANK: the pid of that rank among the launcher's children.
rankPid() {
  local p
  for p in $(pgrep -P "$1"); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2"; then
      echo "$p"
      return
    fi
  done
}

# stopCase NAME SIGNAL collbench-args...: rank 1 gets SIGNAL once result rows stream.
stopCase() {
  local name=$1 sig=$2
  shift 2
  local log=$tmp/$name.log
  "${launch[@]}" -np 3 "$cb" "$@" --no-db -T $T >"$log" 2>&1 &
  local pid=$!
  for _ in $(seq 600); do
    grep -qE '^ +[0-9]+ ' "$log" && break
    sleep 0.2
  done
  local victim
  victim=$(rankPid $pid 1)
  if [ -z "$victim" ]; then
    check "$name: rank 1 found among mpirun's children" false
    kill -KILL $pid
    wait $pid
    return
  fi
  local t0=$SECONDS
  kill -"$sig" "$victim"
  (
    sleep $((T + 60))
    touch "$tmp/$name.hung"
    kill -KILL $pid 2>/dev/null
  ) &
  local guard=$!
  wait $pid
  local rc=$?
  local took=$((SECONDS - t0))
  kill $guard 2>/dev/null
  kill -KILL "$victim" 2>/dev/null
  wait $guard 2>/dev/null
  echo "     $name: exit $rc after ${took} s (-T $T): $(grep -E 'rank 1 \(' "$log" | head -1)"
  check "$name: the job ends by itself (exit $rc)" test "$rc" -ne 0 -a ! -e "$tmp/$name.hung"
  if [ "$sig" = STOP ]; then
    check "$name: one line names rank 1, its pid and the call it is stopped in" \
      grep -qE "rank 1 \([^,]+, pid $victim\) is stopped in allreduce [0-9]+ [KMG]?i?B" "$log"
    check "$name: the line names the survivors' wait" grep -qE "ranks 0 and 2 waited|rank [02] waited" "$log"
  else
    check "$name: a line names rank 1 as dead, or mpirun names it" \
      grep -qE "rank 1 \([^,]+, pid $victim\) died in|process rank 1" "$log"
  fi
}
stopCase ring-stop STOP run allreduce --algo ring --transport shm -b 256K -e 64M -n 300 -w 1 -c 0
stopCase mpi-stop STOP run allreduce --algo mpi -b 256K -e 64M -n 300 -w 1 -c 0
stopCase ring-kill KILL run allreduce --algo ring --transport shm -b 256K -e 64M -n 300 -w 1 -c 0

# The local world: a rank held back by --inject past -T is named, the run ends at -T.
t0=$SECONDS
"$cb" diag ranks --np 3 --size 256K --inject slow-rank=1:9s -T $T --no-db >"$tmp/local.log" 2>&1
rc=$?
echo "     local: exit $rc after $((SECONDS - t0)) s (-T $T): $(grep collbench: "$tmp/local.log")"
check "local: exit 2 (got $rc)" test $rc -eq 2
check "local: the line names rank 1" grep -qE "rank 1, stalled by --inject slow-rank=1:9s" "$tmp/local.log"
check "local: one line" test "$(grep -c '^collbench: ' "$tmp/local.log")" -eq 1

shm_after=$(ls /dev/shm | grep -c collbench || true)
check "no collbench entry left in /dev/shm" test "$shm_after" -le "$shm_before"
checks_done
