#!/usr/bin/env bash
# `collbench import` on every real log in tests/data/samples (and the JSON report of the unit
# tests): all runs land in the database and `collbench runs` lists them; parse errors exit 2 with
# one line naming FILE:LINE and leave the database untouched; --dry-run writes nothing.
# Usage: import.sh /path/to/collbench   (CB_SOURCE_DIR comes from CTest)
set -uo pipefail
cb=${1:?usage: import.sh COLLBENCH}
here=$(cd "$(dirname "$0")" && pwd)
samples=${CB_SOURCE_DIR:-$here/../..}/tests/data/samples
source_dir=${CB_SOURCE_DIR:-$here/../..}
source "$(dirname "$0")/lib/common.sh"
scratch import
count_runs() {
  "$cb" runs --db "$db" | grep -cE '^ *[0-9]+ '
}

# Logs that name their collective (nccl-tests newest format, OSU, IMB) in one call.
named=("$samples"/nccltests_4_*.txt "$samples"/nccltests_5_*.txt "$samples"/nccltests_8_*.txt
  "$samples"/nccltests_9_*.txt "$samples"/osu_*.txt "$samples"/imb_*.txt)
expect 0 "$cb" import --db "$db" --label samples "${named[@]}"
imported=$(grep -c '^imported run ' <<<"$out")
# nccl-tests 4 and 5 hold two tests each: 4 nccl-tests files give 6 runs; 8 OSU; 4 IMB.
[ "$imported" -eq 18 ] || fail "imported $imported runs, expected 18: $out"
has "$out" "nccl-tests alltoall, 20 points, world size 16 on 2 hosts, ok"
has "$out" "osu allreduce, 1 point, world size 16, ok"
has "$out" "imb allreduce, 2 points, world size 144, ok"
[ -z "$err" ] || fail "stderr not empty: $err"

# Old nccl-tests tables do not name the collective: inferred from the table, and said so.
old1=$(echo "$samples"/nccltests_1_*.txt)
expect 0 "$cb" import --db "$db" --label samples "$old1" "$samples"/nccltests_3_*.txt \
  "$samples"/nccltests_6_*.txt "$samples"/nccltests_2_*.txt
has "$out" "nccl-tests allreduce, 56 points, world size 2 on 1 host, ok"
has "$out" "nccl-tests allgather, 62 points, world size 12 on 1 host, failed"
has "$out" "note: collective allreduce inferred: from the table: redop sum, root -1"
has "$out" "note: collective allgather inferred: from the table: no redop column, size = count x elsize x 12"
[ -z "$err" ] || fail "stderr not empty: $err"
# --collective still overrides, and must be a collective.
expect 2 "$cb" import --db "$db" --dry-run --collective bogus "$old1"
has "$err" "--collective 'bogus' is not one of allreduce"
# The hand-written nccl-tests -J report of the unit tests.
expect 0 "$cb" import --db "$db" --label samples "$source_dir/tests/unit/data/nccltests_allreduce_v2.json"
has "$out" "nccl-tests-json allreduce, 6 points, world size 2 on 2 hosts, ok"

# Every sample is a run: 18 + 4 + 1 = 23.
expect 0 "$cb" runs --db "$db" --label samples
listed=$(grep -cE '^ *[0-9]+ ' <<<"$out")
[ "$listed" -eq 23 ] || fail "runs lists $listed runs, expected 23: $out"
has "$out" "allgather"
has "$out" "reduce_scatter"
has "$out" "failed"
# The stored points add up (the store's own count, not the import's message).
points=$(sqlite3 "$db" "SELECT COUNT(*) FROM results" 2>/dev/null)
[ "$points" = "612" ] || fail "the database holds '$points' results, expected 612"
# Stored values equal the log's: every row of nccl-tests 1 and 9, both placements.
python3 - "$db" "$old1" "$(echo "$samples"/nccltests_9_*.txt)" <<'EOF' || fail "stored values differ from the logs"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for path in sys.argv[2:]:
    run = db.execute("SELECT id FROM runs WHERE command_line = ?", ("import " + path,)).fetchone()[0]
    rows = [l.split() for l in open(path) if l.strip() and not l.lstrip().startswith("#")]
    assert rows, path
    for t in rows:
        for place, off in (("out", 5), ("in", 9)):
            got = db.execute("SELECT time_us, algbw, busbw, wrong FROM results WHERE run_id = ? AND "
                             "size_bytes = ? AND placement = ?", (run, int(t[0]), place)).fetchone()
            want = (float(t[off]), float(t[off + 1]), float(t[off + 2]), int(t[off + 3]))
            assert got == want, (path, t[0], place, got, want)
EOF

# `show --format nccl-tests` re-prints an imported nccl-tests run in nccl-tests' own table: the
# header lines and every row character for character for a log of the nccl-tests version whose
# layout collbench prints (2022+); the same fields for a newer log (wider #wrong column).
table() { sed -n '/out-of-place/,/^# Out of bounds/p' | grep -v '^# Out of bounds'; }
for log in "$old1" "$(echo "$samples"/nccltests_9_*.txt)"; do
  run=$(sqlite3 "$db" "SELECT id FROM runs WHERE command_line = 'import $log'")
  expect 0 "$cb" show "$run" --db "$db" --format nccl-tests
  want=$(table <"$log")
  got=$(table <<<"$out")
  if [ "$log" = "$old1" ]; then
    [ -n "$want" ] && [ "$got" = "$want" ] ||
      fail "show --format nccl-tests of $log differs: $(diff <(echo "$want") <(echo "$got") | head -5)"
    continue
  fi
  # Newer nccl-tests print every time with 2 decimals; collbench's 2022 layout drops decimals
  # as times grow: the times agree to the digits printed, every other field exactly.
  python3 - <(grep -v '^#' <<<"$want") <(grep -v '^#' <<<"$got") <<'EOF' || fail "show --format nccl-tests of $log: values differ"
import sys
want = [l.split() for l in open(sys.argv[1]) if l.strip()]
got = [l.split() for l in open(sys.argv[2]) if l.strip()]
assert len(want) == len(got) > 0, (len(want), len(got))
for w, g in zip(want, got):
    for i, (a, b) in enumerate(zip(w, g)):
        if i in (5, 9):
            digits = len(b.split(".")[1]) if "." in b else 0
            assert abs(float(a) - float(b)) <= 0.5 * 10 ** -digits + 1e-9, (w, g)
        else:
            assert a == b, (w, g)
EOF
done
# Unknown values are NULL, never 0 or -1, and read back as unknown: the OSU allreduce log gives
# only the average latency (no world size, datatype, iterations or other statistic); nccl-tests
# 4 does not check in place ("N/A") and its collectives have no root (-1 in the log).
sentinels=$(sqlite3 "$db" "SELECT count(*) FROM results WHERE root < 0 OR wrong < 0 OR nranks <= 0
  OR dtype = '' OR op = '' OR (status = 'ok' AND time_us = 0) OR (count = 0 AND size_bytes > 0)")
[ "$sentinels" = 0 ] || fail "$sentinels imported results still hold a sentinel"
osu1=$(echo "$samples"/osu_1_*.txt)
run=$(sqlite3 "$db" "SELECT id FROM runs WHERE command_line = 'import $osu1'")
got=$(sqlite3 "$db" "SELECT quote(dtype), quote(count), quote(nranks), quote(iterations), time_us,
  quote(median_us), quote(busbw), quote(wrong) FROM results WHERE run_id = $run AND size_bytes = 4")
[ "$got" = "NULL|NULL|NULL|NULL|5.47|NULL|NULL|NULL" ] || fail "OSU 4 B stored as '$got'"
expect 0 "$cb" show "$run" --db "$db"
has "$out" "allreduce  dtype?  sum"
grep -qE '^ +4 +- +mpi +out +5\.47 +0\.00 +- +- +- +-' <<<"$out" || fail "show: unknowns not '-': $out"
expect 0 "$cb" export results --db "$db" --run "$run" --format json
python3 -c '
import json, sys
r = json.load(sys.stdin)[0]
assert r["size_bytes"] == 4 and r["time_us"] == 5.47, r
for k in ("dtype", "count", "nranks", "iterations", "median_us", "cv", "busbw", "wrong", "root"):
    assert r[k] is None, (k, r)
' <<<"$out" || fail "export json: unknowns are not null"
expect 0 "$cb" export results --db "$db" --run "$run" --format csv
python3 -c '
import csv, sys
r = next(csv.DictReader(sys.stdin))
assert r["time_us"] == "5.47", r
for k in ("dtype", "count", "nranks", "iterations", "median_us", "cv", "busbw", "wrong", "root"):
    assert r[k] == "", (k, r)
' <<<"$out" || fail "export csv: unknowns are not empty fields"
nccl4=$(echo "$samples"/nccltests_4_*.txt)
run=$(sqlite3 "$db" "SELECT max(id) FROM runs WHERE command_line = 'import $nccl4'")
got=$(sqlite3 "$db" "SELECT quote(root), quote(wrong) FROM results WHERE run_id = $run AND
  size_bytes = 67108864 ORDER BY placement DESC")
[ "$got" = $'NULL|0\nNULL|NULL' ] || fail "nccl-tests 4 root/#wrong stored as '$got'"
expect 0 "$cb" show "$run" --db "$db" --format nccl-tests
grep -qE '^ +67108864 +8388608 +double +sum +-1 .* 0 +[0-9.]+ +[0-9.]+ +[0-9.]+ +N/A$' <<<"$out" ||
  fail "show --format nccl-tests: no '-1' root or 'N/A' #wrong: $out"
# Both tests of that log (alltoall, sendrecv: no op, in-place columns collbench's own sweep
# never measures) come back row for row.
for t in alltoall sendrecv; do
  run=$(sqlite3 "$db" "SELECT max(r.id) FROM runs r JOIN results x ON x.run_id = r.id
    WHERE r.command_line = 'import $nccl4' AND x.collective = '$t'")
  expect 0 "$cb" show "$run" --db "$db" --format nccl-tests
  want=$(sed -n "/starting: ${t}_perf/,/concluded: ${t}_perf/p" "$nccl4" | grep -v '^#' | grep .)
  got=$(grep -v '^#' <<<"$out" | grep .)
  [ -n "$want" ] && [ "$got" = "$want" ] ||
    fail "show --format nccl-tests of the $t test of $nccl4 differs: $(diff <(echo "$want") <(echo "$got") | head -5)"
done

expect 2 "$cb" show 1 --db "$db" --format osu
has "$err" "--format 'osu' is not one of collbench, nccl-tests"

# A bare table (rows only), and lines under an MPI launcher's prefix: imported without flags.
grep -v '^#' "$samples"/nccltests_9_*.txt | grep -v '^$' >"$tmp/bare.txt"
expect 0 "$cb" import --db "$tmp/other.db" "$tmp/bare.txt"
has "$out" "nccl-tests allreduce, 62 points, world size 8, interrupted"
has "$out" "note: world size 8 inferred: from the busbw/algbw ratio of allreduce"
sed 's/^/[1,0]<stdout>:/' "$samples"/nccltests_9_*.txt >"$tmp/prefixed.txt"
expect 0 "$cb" import --db "$tmp/other.db" "$tmp/prefixed.txt"
has "$out" "nccl-tests allreduce, 62 points, world size 8 on 1 host, ok"
# Not text at all: refused at once (never read to the end).
expect 2 "$cb" import --db "$tmp/other.db" /dev/zero
has "$err" "/dev/zero: NUL bytes: not a text log"

# A garbage line: exit 2, one line on stderr naming file:line, nothing written.
before=$(count_runs)
garbage=$tmp/garbage.log
{ head -n 25 "$samples"/nccltests_9_*.txt; echo "this is not a result row"; tail -n +26 "$samples"/nccltests_9_*.txt; } >"$garbage"
expect 2 "$cb" import --db "$db" "$garbage"
[ "$(wc -l <<<"$err")" -eq 1 ] || fail "expected one stderr line, got: $err"
has "$err" "collbench: import: $garbage:26: cannot parse 'this is not a result row'"
[ -z "$out" ] || fail "stdout not empty after a parse error: $out"
[ "$(count_runs)" -eq "$before" ] || fail "a failed import changed the database"
# In a batch the bad file is reported and skipped; the others import; the exit code says so.
expect 2 "$cb" import --db "$tmp/batch.db" "$samples"/osu_3_*.txt "$garbage"
has "$err" "collbench: import: $garbage:26: cannot parse 'this is not a result row'"
has "$err" "collbench: import: 1 of 2 file(s) failed (see above); the others were imported"
has "$out" "imported run 1: osu latency"

# A file in no known format, a missing file, a bad --format.
printf 'hello\nworld\n' >"$tmp/notes.txt"
expect 2 "$cb" import --db "$db" "$tmp/notes.txt"
has "$err" "$tmp/notes.txt: cannot tell the format"
expect 2 "$cb" import --db "$db" "$tmp/missing.txt"
has "$err" "$tmp/missing.txt: cannot read"
expect 2 "$cb" import --db "$db" --format csv "$samples"/osu_3_*.txt
has "$err" "unknown import format 'csv'"
# --format forces a parser: an OSU log is not nccl-tests output.
expect 2 "$cb" import --db "$db" --format nccl-tests "$samples"/osu_3_*.txt
has "$err" "osu_3_latency-v5.6.2-2proc-openmpi4-ucx.txt:3: cannot parse '0"
[ "$(count_runs)" -eq "$before" ] || fail "failed imports changed the database"

# --dry-run parses and reports, writes nothing.
expect 0 "$cb" import --db "$db" --dry-run --world-size 64 "$samples"/osu_1_*.txt
has "$out" "would import: osu allreduce, 19 points, world size 64, ok"
has "$out" "note: op 'sum'"
[ "$(count_runs)" -eq "$before" ] || fail "--dry-run changed the database"
expect 0 "$cb" import --db "$tmp/fresh.db" --dry-run "$samples"/osu_1_*.txt
[ ! -e "$tmp/fresh.db" ] || fail "--dry-run created a database"

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "import: all checks passed"
