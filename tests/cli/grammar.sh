#!/usr/bin/env bash
# Issue 50: one grammar for what users type. Every duration flag takes the same units (a bare
# number in the flag's own unit as before), a mistyped command is named with the nearest ones, a
# sweep with --time-budget states its expected time before it starts when that is over a minute,
# and the progress line (on a terminal) says how long is left. The refusals are in the bad-input
# battery (tests/cli/lib/bad_input_battery.py); this checks what is accepted and printed.
set -u
cb=$1
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/checks.sh"
scratch grammar
tiny=(run allreduce --np 2 -b 64 -e 64 -n 2 -w 1 --algo ring --no-db --format none)

for t in 10 10s 10000ms 0.5min; do
  expect 0 "$cb" "${tiny[@]}" -T "$t"
  check "-T $t is accepted" test -z "$err"
done
expect 0 "$cb" p2p latency --np 2 -b 8 -e 8 -n 2 -w 0 --transport local --no-db -T 2min
check "p2p -T 2min is accepted ($err)" test -z "$err"
for d in 50 50us 0.05ms; do
  expect 0 "$cb" "${tiny[@]}" --inject-delay "$d:ring"
  check "--inject-delay $d (microseconds when bare) is accepted ($err)" test -z "$err"
done
expect 0 "$cb" "${tiny[@]}" --time-budget 50us
check "--time-budget 50us is accepted ($err)" test -z "$err"
expect 0 "$cb" run --help
check "the help names the duration form" grep -q "DURATION" <<<"$out"

expect 2 "$cb" bogus
check "unknown command named with the nearest ($err)" \
  grep -q "^collbench: unknown command 'bogus' (nearest: " <<<"$err"
expect 2 "$cb" reprot
check "the nearest of 'reprot' are report and replay ($err)" grep -q "nearest: re" <<<"$err"
check "... one line" test "$(grep -c . <<<"$err")" -eq 1

# 8 sizes x 2 placements x 5 s = 80 s: stated before the first point, then stopped.
"$cb" run allreduce --np 2 -b 8 -e 1K --algo ring --time-budget 5s --no-db >"$tmp/out" 2>&1 &
pid=$!
for _ in $(seq 150); do
  grep -q "^# time" "$tmp/out" && break
  sleep 0.2
done
kill -INT $pid
wait $pid
check "SIGINT ends it with 130" test $? -eq 130
check "the expected time is stated ($(grep "^# time" "$tmp/out"))" \
  grep -q "^# time  : about 1m20s expected (16 points x --time-budget 5 s)" "$tmp/out"
expect 0 "$cb" run allreduce --np 2 -b 64 -e 64 --algo ring --no-db --time-budget 1ms
check "a short sweep states no expected time" test -z "$(grep "^# time" <<<"$out")"

# The progress line is drawn on a terminal only: under script(1), which gives the run one.
if command -v script >/dev/null 2>&1; then
  script -qec "$cb run allreduce --np 2 -b 64 -e 1K -n 200 -w 1 --algo ring --no-db" \
    "$tmp/tty.log" >/dev/null 2>&1
  check "the progress line shows the time left" grep -qE "elapsed, (about [0-9hms ]+|\?) left" \
    "$tmp/tty.log"
else
  echo "skip: no script(1) to give a run a terminal"
fi
checks_done
