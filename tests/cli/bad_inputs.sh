#!/usr/bin/env bash
# The bad-input battery: every subcommand, cases generated from tables of options and the values
# that mean nothing for them (tests/cli/lib/bad_input_battery.py says how). Each case must exit 2
# with exactly one "collbench: ..." line on stderr and nothing on stdout, leave the database
# byte-identical and nothing in /dev/shm, and end within 60 s (no wait without a deadline).
# $1 = the collbench binary. CB_BATTERY_ONLY=TEXT runs only the cases whose command line has TEXT.
set -u
cb=$1
here=$(cd "$(dirname "$0")" && pwd)
src=${CB_SOURCE_DIR:-$here/../..}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cb_bad.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# One real run so the reading commands (show 1, compare 1 1, report 1...) have something to read.
"$cb" run allreduce --np 2 -b 64 -e 64 -n 2 -w 1 --algo ring --db "$tmp/x.db" --label base \
  >/dev/null || { echo "FAIL: the seed run failed"; exit 1; }
python3 "$here/lib/bad_input_battery.py" "$cb" "$src" "$tmp"
