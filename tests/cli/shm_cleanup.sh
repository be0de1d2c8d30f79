#!/usr/bin/env bash
# The shm transport leaves nothing in /dev/shm: after a normal run, after an error exit (a rank
# stopped long enough for its peer to hit the -T deadline), after SIGINT and SIGTERM sent to
# mpirun in the middle of a run, and after SIGKILL of every rank. $1 = the collbench binary.
#
# Other processes on the machine may create collbench segments of their own at the same time; a
# segment lives in /dev/shm only for the instant of its set-up, so an entry counts as left behind
# only if it is new and still there a moment later.
set -u
bin=${1:?usage: shm_cleanup.sh path/to/collbench}
mpirun=${CB_MPIRUN:-mpirun}
launch=("$mpirun" --allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none
  -np 2)
sweep=(run allreduce --algo ring --transport shm --no-db -w 2)
prefix="collbench-$(id -u)-"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
passed=0

listing() { ls /dev/shm 2>/dev/null | grep "^$prefix" | sort; }

fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
}

# check NAME BEFORE_FILE: fails if entries absent from BEFORE_FILE are still there after a pause.
check() {
  local name=$1 before=$2 new
  new=$(comm -13 "$before" <(listing))
  if [[ -n $new ]]; then
    sleep 2
    new=$(comm -12 <(echo "$new") <(listing))
  fi
  if [[ -n $new ]]; then
    fail "$name: left in /dev/shm: $new"
  else
    echo "ok   $name"
    passed=$((passed + 1))
  fi
}

# Waits until the run logging to $1 has printed its first result row (the transport is set up
# and timed iterations are running), for at most 120 s.
waitForRows() {
  local i
  for ((i = 0; i < 1200; ++i)); do
    grep -qE '^ +[0-9]+ +[0-9]+ +float' "$1" && return 0
    sleep 0.1
  done
  return 1
}

# Starts a long run in the background; sets `pid` (mpirun) and `ranks` (its collbench children).
startLong() {
  : >"$log"
  "${launch[@]}" "$bin" "${sweep[@]}" -n 2000 -b 1M -e 64M "$@" >"$log" 2>&1 &
  pid=$!
  waitForRows "$log" || fail "$log: no result row within 120 s"
  ranks=($(pgrep -P "$pid" -x collbench))
}

# Waits for mpirun `pid` to end (KILL after 60 s); sets `rc`.
finish() {
  local i
  for ((i = 0; i < 600; ++i)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid"
  rc=$?
}

# 1. Normal exit.
listing >"$work/before"
log=$work/normal.log
"${launch[@]}" "$bin" "${sweep[@]}" -n 5 -b 1M -e 4M >"$log" 2>&1 || {
  fail "normal run exited non-zero"
  tail -20 "$log"
}
grep -q "ring/shm" "$log" || fail "normal run did not use the shm transport: $(tail -5 "$log")"
check "normal exit" "$work/before"

# 2. Error exit: rank 1 stopped for longer than -T, so rank 0's exchange throws TimeoutError.
listing >"$work/before"
log=$work/error.log
startLong -T 2
if [[ ${#ranks[@]} -eq 2 ]]; then
  kill -STOP "${ranks[1]}"
  sleep 5
  kill -CONT "${ranks[1]}"
else
  fail "error exit: expected 2 ranks under mpirun $pid, found ${ranks[*]:-none}"
fi
finish
[[ $rc -ne 0 ]] || fail "the run with a stopped rank exited 0"
grep -q "did not complete within" "$log" || fail "error exit: no deadline error: $(tail -5 "$log")"
check "error exit (deadline, exit $rc)" "$work/before"

# 3. and 4. A signal to mpirun in the middle of the run (mpirun passes it on and ends the ranks).
for sig in INT TERM; do
  listing >"$work/before"
  log=$work/$sig.log
  startLong
  kill -"$sig" "$pid"
  finish
  [[ $rc -ne 0 ]] || fail "the SIG$sig run exited 0"
  check "SIG$sig to mpirun (exit $rc)" "$work/before"
done

# 5. SIGKILL of every rank after set-up: no code of ours runs, the early unlink is all there is.
listing >"$work/before"
log=$work/kill.log
startLong
[[ ${#ranks[@]} -eq 2 ]] && kill -KILL "${ranks[@]}" 2>/dev/null || fail "SIGKILL: no ranks"
finish
check "SIGKILL of both ranks (exit $rc)" "$work/before"

echo "$passed passed, $failures failed"
[[ $failures -eq 0 ]]
