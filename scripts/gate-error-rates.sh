#!/usr/bin/env bash
# Measures the gate's error rates the way users run it (issue 26; not run in CI: it takes
# minutes and its figures depend on the machine): default flags, 3 runs per side, the baseline's
# runs first, then the candidate's, all in one database, as a CI job's history accumulates.
# Same-build gates count false alarms; gates whose candidate is 30% slower at every size
# (--inject-delay 30%) count detections. The two kinds alternate (two same-build gates, one
# slowed), so each meets the history of those before it. Every gate is also decided without the
# history (--lookback 0) on the same runs, for comparison.
#
# usage: scripts/gate-error-rates.sh COLLBENCH OUTDIR [SAME_GATES [SLOW_GATES]]
# GATE_RUN_FLAGS replaces the runs' world and variant (default "--np 2 --algo ring"; on one GPU,
# "--np 1 --algo nccl"). INTERLEAVE=1 takes each gate's runs as b c b c b c instead of b b b c c c
# (the remedy the gate names for a machine state that lasts through one side's runs).
# writes OUTDIR/gates.db (the runs) and OUTDIR/gates.tsv (one line per gate), prints the totals.
# REGATE=1 measures nothing: it decides again every gate of OUTDIR/gates.tsv from the runs in
# OUTDIR/gates.db (a gate reads only runs started before its own, so its history is as it was).
set -euo pipefail

cb=${1:?usage: gate-error-rates.sh COLLBENCH OUTDIR [SAME_GATES [SLOW_GATES]]}
out=${2:?usage: gate-error-rates.sh COLLBENCH OUTDIR [SAME_GATES [SLOW_GATES]]}
same=${3:-20}
slow=${4:-10}
mkdir -p "$out"
db="$out/gates.db"
tsv="$out/gates.tsv"

measure() { # LABEL [EXTRA...]
  local label=$1
  shift
  # shellcheck disable=SC2086 # GATE_RUN_FLAGS is a list of flags
  "$cb" run allreduce ${GATE_RUN_FLAGS:---np 2 --algo ring} -b 256K -e 1M -f 2 -n 30 --db "$db" \
    --label "$label" "$@" >/dev/null
}

gate() { # BASE CAND [EXTRA...]: prints the exit code, then the summary line
  local rc=0 text
  text=$("$cb" gate --db "$db" --baseline "label:$1" --candidate "label:$2" "${@:3}" 2>&1) || rc=$?
  printf '%s\n%s\n' "$rc" "$(grep -m1 '^gate:' <<<"$text" || true)"
}

decide() { # GATE KIND LOAD TSV: gate I with and without history, one line into TSV
  local with without
  mapfile -t with < <(gate "b$1" "c$1")
  mapfile -t without < <(gate "b$1" "c$1" --lookback 0)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${with[0]}" "${without[0]}" "${with[1]:-}" >>"$4"
  printf 'gate %d (%s, load %s): exit %s (without history: %s) %s\n' "$1" "$2" "$3" "${with[0]}" \
    "${without[0]}" "${with[1]:-}"
}

summarize() {
  # exit 0 pass, 1 regression, 3 inconclusive
  awk -F'\t' 'NR > 1 {
      n[$2]++; r[$2] += ($4 == 1); p[$2] += ($4 == 0); u[$2] += ($4 == 3)
      r0[$2] += ($5 == 1); p0[$2] += ($5 == 0); u0[$2] += ($5 == 3)
    }
    END {
      for (k in n) printf "%s gates: %d: regression %d, pass %d, inconclusive %d | without history: regression %d, pass %d, inconclusive %d\n",
        k == "same" ? "same-build" : "30%-slower", n[k], r[k], p[k], u[k], r0[k], p0[k], u0[k]
    }' "$1"
}

if [ "${REGATE:-0}" = 1 ]; then
  again="$out/regate.tsv"
  head -n1 "$tsv" >"$again"
  while IFS=$'\t' read -r i kind load _; do
    decide "$i" "$kind" "$load" "$again"
  done < <(tail -n +2 "$tsv")
  summarize "$again"
  exit 0
fi

rm -f "$db" "$db-wal" "$db-shm"
printf 'gate\tkind\tload1\texit\texit_lookback0\tsummary\n' >"$tsv"
i=0
done_same=0
done_slow=0
while [ "$done_same" -lt "$same" ] || [ "$done_slow" -lt "$slow" ]; do
  i=$((i + 1))
  if [ "$done_slow" -lt "$slow" ] && { [ $((i % 3)) -eq 0 ] || [ "$done_same" -ge "$same" ]; }; then
    kind=slow
    done_slow=$((done_slow + 1))
  else
    kind=same
    done_same=$((done_same + 1))
  fi
  slower=()
  [ "$kind" = slow ] && slower=(--inject-delay 30%)
  if [ "${INTERLEAVE:-0}" = 1 ]; then
    for r in 1 2 3; do
      measure "b$i"
      measure "c$i" "${slower[@]}"
    done
  else
    for r in 1 2 3; do measure "b$i"; done
    for r in 1 2 3; do measure "c$i" "${slower[@]}"; done
  fi
  load=$(cut -d' ' -f1 /proc/loadavg)
  decide "$i" "$kind" "$load" "$tsv"
done

summarize "$tsv"
