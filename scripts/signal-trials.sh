#!/usr/bin/env bash
# Signal trials: SIGINT or SIGTERM to a running measuring command, in the local world (to
# collbench) and under mpirun (to mpirun), over run, p2p, proxy dp/pp/hybrid, diag links/ranks and
# replay. Each trial records the exit code, the stop latency (signal to exit), crash text in the
# output, the run's status in the database the moment the process is gone (no later open reaps
# it), and collbench entries left in /dev/shm. Not run in CI as a whole (tests/cli/interrupt.sh
# runs 10 trials through it).
#
#   scripts/signal-trials.sh [-n TRIALS] [--only local|mpi] [--ranks N] [--out DIR]
#                            [--mpirun PATH] COLLBENCH
#
# --ranks N runs every case on N ranks instead of its own count (a replay then replays N of the
# trace's ranks).
#
# Trials go round the command list (local and mpirun cases interleaved), alternating SIGINT and
# SIGTERM; the signal comes 0.5-2 s after the run is begun in the database. Prints one line per
# trial and the counts; writes DIR/trials.tsv and each trial's output. Exit 0 when every trial
# stopped cleanly: exit 128 + the signal, 130 or 143 (local; mpirun: non-zero), no crash text,
# the run `interrupted`,
# nothing left in /dev/shm, no trial still running 30 s after its signal.
set -u
trials=100 only="" out="" ranksOverride="" mpirun=${CB_MPIRUN:-mpirun}
while [ $# -gt 1 ]; do
  case $1 in
    -n) trials=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --ranks) ranksOverride=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --mpirun) mpirun=$2; shift 2 ;;
    *) echo "signal-trials: unknown option $1" >&2; exit 2 ;;
  esac
done
cb=${1:?usage: signal-trials.sh [-n TRIALS] [--only local|mpi] [--out DIR] COLLBENCH}
src=$(cd "$(dirname "$0")/.." && pwd)
dlrm=$src/tests/data/traces/pytorch-et/param-dlrm-8rank/dlrm_eg_{rank}.json.gz
[ -n "$out" ] || out=$(mktemp -d)
mkdir -p "$out"
launch=("$mpirun" --allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none)

# name|world|ranks|arguments (each runs for minutes unless stopped; run's 256 MiB leaves 4 ranks
# room on a 24 GiB host, where 1 GiB was refused by the memory check)
cases=(
  "run|local|2|run allreduce -b 1M -e 256M -n 30"
  "run|mpi|2|run allreduce -b 1M -e 256M -n 30 --algo mpi,ring --transport shm"
  "p2p|local|2|p2p bw -b 1 -e 256M -n 100"
  "p2p|mpi|2|p2p bw -b 1 -e 256M -n 100 --transport shm,mpi-native"
  "proxy-dp|local|2|proxy dp --model resnet50 --steps 100000"
  "proxy-dp|mpi|2|proxy dp --model resnet50 --steps 100000"
  "proxy-pp|local|2|proxy pp --model gpt2-xl --layers 4 --steps 100000"
  "proxy-pp|mpi|2|proxy pp --model gpt2-xl --layers 4 --steps 100000"
  "proxy-hybrid|local|4|proxy hybrid --dp 2 --pp 2 --model gpt2-xl --layers 4 --steps 100000"
  "proxy-hybrid|mpi|4|proxy hybrid --dp 2 --pp 2 --model gpt2-xl --layers 4 --steps 100000"
  "diag-links|local|3|diag links --schedules 99 -n 10000"
  "diag-links|mpi|3|diag links --schedules 99 -n 10000"
  "diag-ranks|local|3|diag ranks -n 100000 --size 1M"
  "diag-ranks|mpi|3|diag ranks -n 100000 --size 1M"
  "replay|local|2|replay $dlrm --ranks 2 -n 100000"
  "replay|mpi|2|replay $dlrm --ranks 2 -n 100000"
)
crash='Segmentation|segfault|corrupted|double free|free\(\)|core dumped|Process received signal|Abort|exited on signal|internal error|terminate called|Backtrace'
shmCount() { ls /dev/shm 2>/dev/null | grep -c collbench || true; }
# Open MPI's own segments (informative: other jobs on the host make them too).
vaderCount() { ls /dev/shm 2>/dev/null | grep -c vader_segment || true; }
now() { date +%s.%N; }

printf 'trial\tcase\tworld\tsignal\trc\tstop_s\tcrash\tstatus\tshm_left\tstderr_lines\n' >"$out/trials.tsv"
n=0 good=0 vaderLeft=0 crashes=0 notInterrupted=0 badRc=0 hung=0 shmLeft=0 over1=0 over3=0 notBegun=0
i=0
while [ $n -lt "$trials" ]; do
  IFS='|' read -r name world ranks args <<<"${cases[$((i % ${#cases[@]}))]}"
  sig=$([ $(((i / ${#cases[@]}) % 2)) -eq 0 ] && echo INT || echo TERM)
  i=$((i + 1))
  [ -n "$only" ] && [ "$world" != "$only" ] && continue
  if [ -n "$ranksOverride" ]; then
    args=${args//--ranks $ranks/--ranks $ranksOverride}
    ranks=$ranksOverride
  fi
  n=$((n + 1))
  db=$out/t$n.db log=$out/t$n.log
  shmBefore=$(shmCount) vaderBefore=$(vaderCount)
  # shellcheck disable=SC2086 # args is a word list
  if [ "$world" = local ]; then
    "$cb" $args --np "$ranks" --db "$db" >"$log" 2>&1 &
  else
    "${launch[@]}" -np "$ranks" "$cb" $args --db "$db" >"$log" 2>&1 &
  fi
  pid=$!
  begun=0
  for _ in $(seq 300); do
    [ "$(sqlite3 "$db" "select count(*) from runs" 2>/dev/null || echo 0)" -ge 1 ] && begun=1 && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.2
  done
  [ $begun -eq 1 ] || notBegun=$((notBegun + 1))
  sleep "$(awk -v s="$RANDOM" 'BEGIN { printf "%.2f", 0.5 + 1.5 * s / 32767 }')"
  t0=$(now)
  kill -$sig $pid
  ( sleep 30; kill -KILL $pid 2>/dev/null ) &
  guard=$!
  wait $pid
  rc=$?
  t1=$(now)
  kill $guard 2>/dev/null
  wait $guard 2>/dev/null
  stop=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  status=$(sqlite3 "$db" "select status from runs" 2>/dev/null)
  status=${status:-none}
  c=$(grep -cE "$crash" "$log")
  # A launcher can't be waited on past its ranks: give ranks it killed a moment to be gone.
  sleep 0.3
  left=$(($(shmCount) - shmBefore))
  [ $left -lt 0 ] && left=0
  vader=$(($(vaderCount) - vaderBefore))
  [ $vader -gt 0 ] && vaderLeft=$((vaderLeft + 1))
  lines=$(grep -c "^collbench: " "$log")
  ok=1
  if [ "$rc" -eq 137 ]; then hung=$((hung + 1)); ok=0; fi
  want=$([ "$sig" = INT ] && echo 130 || echo 143)
  if [ "$world" = local ] && [ "$rc" -ne "$want" ]; then badRc=$((badRc + 1)); ok=0; fi
  if [ "$world" = mpi ] && [ "$rc" -eq 0 ]; then badRc=$((badRc + 1)); ok=0; fi
  [ "$c" -gt 0 ] && { crashes=$((crashes + 1)); ok=0; }
  [ "$status" != interrupted ] && { notInterrupted=$((notInterrupted + 1)); ok=0; }
  [ $left -gt 0 ] && { shmLeft=$((shmLeft + 1)); ok=0; }
  awk -v s="$stop" 'BEGIN { exit !(s > 1) }' && over1=$((over1 + 1))
  awk -v s="$stop" 'BEGIN { exit !(s > 3) }' && over3=$((over3 + 1))
  good=$((good + ok))
  printf '%d\t%s\t%s\t%s\t%d\t%s\t%d\t%s\t%d\t%d\n' $n "$name" "$world" "$sig" "$rc" "$stop" "$c" \
    "$status" $left "$lines" | tee -a "$out/trials.tsv"
done
echo "trials $n: clean $good; crash text $crashes; not interrupted $notInterrupted;" \
  "wrong exit $badRc; killed after 30 s $hung; /dev/shm left $shmLeft; stop > 1 s $over1;" \
  "stop > 3 s $over3; run not begun before the signal $notBegun; Open MPI segments left" \
  "(informative) $vaderLeft (details: $out/trials.tsv)"
[ $good -eq $n ]
