#!/usr/bin/env bash
# `collbench history`, `collbench export` and `collbench db` on a database filled by real runs:
# the trend table and its CASE patterns and filters, CSV/JSON exports that parse back with the
# right row counts, db check/prune/vacuum with cascading deletes; one-line errors for bad input.
# Usage: history_export_db.sh /path/to/collbench
set -uo pipefail
cb=${1:?usage: history_export_db.sh COLLBENCH}
source "$(dirname "$0")/lib/common.sh"
scratch history

# Three runs: 2 sizes x 2 variants x 2 placements = 8 results of 5 iterations each.
run=(run allreduce --np 2 -b 1K -e 4K -f 4 -n 5 -w 1 --algo ring,tree --format none --db "$db")
expect 0 "$cb" "${run[@]}" --label nightly
expect 0 "$cb" "${run[@]}" --label nightly
expect 0 "$cb" "${run[@]}" --label 'pr,"quoted"'

# history: one block per case, runs oldest first, a sparkline of 3 bars.
expect 0 "$cb" history allreduce:ring/local:float:sum:1K:out:2 --db "$db"
has "$out" "# allreduce:ring/local:float:sum:1K:out:2   busbw (GB/s)"
has "$out" "3 run(s)"
has "$out" "vs prev"
[ "$(grep -cE '^ +[123] +20[0-9]{2}-' <<<"$out")" -eq 3 ] || fail "history rows: $out"
grep -qE '[▁▂▃▄▅▆▇█]{3}' <<<"$out" || fail "no sparkline: $out"
# Wildcards: every size and placement of ring = 4 cases; --label narrows the runs.
expect 0 "$cb" history allreduce:ring/local --db "$db" --label nightly --metric time
[ "$(grep -c '^# allreduce:ring/local' <<<"$out")" -eq 4 ] || fail "ring cases: $out"
has "$out" "time (us, median)"
hasnt "$out" "quoted"
expect 0 "$cb" history 'allreduce::float:sum:4K:in' --db "$db" --limit 1
[ "$(grep -c '^# allreduce:' <<<"$out")" -eq 2 ] || fail "4K in-place cases: $out"
[ "$(grep -cE '^ +3 +20' <<<"$out")" -eq 2 ] || fail "--limit 1 keeps the newest run: $out"
# A collective or variant the database never stored is refused with what it has (a typo must
# not look like an empty history); a stored one with no match under the filters is not an error.
expect 2 "$cb" history allgather --db "$db"
one_line_error "no collective 'allgather' in the database (it has: allreduce)"
expect 2 "$cb" history nosuchcoll --db "$db"
one_line_error "no collective 'nosuchcoll'"
expect 2 "$cb" history allreduce:ring --db "$db"
one_line_error "no variant 'ring' in the database (it has: "
expect 0 "$cb" history allreduce --db "$db" --label nosuchlabel
has "$out" "no stored results match allreduce"
expect 2 "$cb" history allreduce::::1Q --db "$db"
one_line_error "CASE 'allreduce::::1Q'"
expect 2 "$cb" history allreduce --db "$db" --since yesterday
one_line_error "--since 'yesterday'"
expect 2 "$cb" history allreduce --db "$db" --metric algbw
one_line_error "--metric 'algbw'"

# One rank has no busbw (nccl-tests' factor is 0): history shows its algbw and gate compares it,
# where both printed nothing to compare before (a one-GPU CI runner's only world).
one=(run allreduce --np 1 -b 1K -e 1K -n 5 -w 1 --algo ring --format none --db "$tmp/one.db")
for l in a a b b; do expect 0 "$cb" "${one[@]}" --label $l; done
expect 0 "$cb" history allreduce:ring/local:float:sum:1K:out:1 --db "$tmp/one.db"
has "$out" "algbw (GB/s: one rank has no busbw)"
out=$("$cb" gate --db "$tmp/one.db" --baseline label:a --candidate label:b 2>&1)
[ $? -ne 2 ] || fail "gate on one rank: $out"
has "$out" "2 case(s) of one rank compared by algbw"
hasnt "$out" "no busbw values"

# export: CSV and JSON of runs, results and samples parse back with the expected counts.
expect 0 "$cb" export runs --db "$db"
python3 - "$tmp/out" <<'EOF' || fail "runs CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 3, rows
assert rows[2]["label"] == 'pr,"quoted"', rows[2]["label"]
assert rows[0]["status"] == "ok" and rows[0]["world_size"] == "2"
EOF
expect 0 "$cb" export results --db "$db" --run 2 --format json -o "$tmp/results.json"
python3 - "$tmp/results.json" <<'EOF' || fail "results JSON"
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 8, len(rows)
assert all(r["run_id"] == 2 for r in rows)
assert all(isinstance(r["busbw"], float) and r["iterations"] == 5 for r in rows)
EOF
expect 0 "$cb" export samples --db "$db" --run last -o "$tmp/samples.csv"
python3 - "$tmp/samples.csv" <<'EOF' || fail "samples CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 8 * 5, len(rows)  # combined times only
assert all(r["rank"] == "" and float(r["time_us"]) > 0 for r in rows)
EOF
expect 0 "$cb" export samples --db "$db" --run 1 --per-rank
[ "$(grep -c . <<<"$out")" -eq $((1 + 8 * 5 * 3)) ] || fail "per-rank CSV rows: $(grep -c . <<<"$out")"
expect 0 "$cb" export samples --db "$db" --run 1 --per-rank --format json
python3 -c 'import json,sys; r=json.load(sys.stdin); assert len(r)==8 and len(r[0]["rank_samples_us"])==2' <<<"$out" ||
  fail "per-rank JSON"
expect 2 "$cb" export everything --db "$db"
one_line_error "export 'everything'"
expect 2 "$cb" export runs --db "$db" --run 42
one_line_error "no run 42"
expect 2 "$cb" export runs --db "$db" --format xml
one_line_error "--format 'xml'"

# db check: ok, counts.
expect 0 "$cb" db check --db "$db"
# A database this collbench created has its newest schema.
grep -qE "^# schema version: ([0-9]+) \(this collbench: \1\)$" <<<"$out" ||
  fail "not the newest schema: $out"
has "$out" "# runs          : 3 (ok 3)"
has "$out" "# results       : 24"
has "$out" "# samples       : 24 (per rank: 48)"
has "$out" "integrity: ok"
# prune: dry run changes nothing; keep-last 1 deletes 2 runs with all their rows.
expect 0 "$cb" db prune --db "$db" --keep-last 1 --dry-run
has "$out" "would delete 2 run(s) (16 results with their samples): 2, 1"
expect 0 "$cb" db check --db "$db"
has "$out" "# runs          : 3 (ok 3)"
expect 0 "$cb" db prune --db "$db" --keep-last 1
has "$out" "deleted 2 run(s)"
expect 0 "$cb" db check --db "$db"
has "$out" "# runs          : 1 (ok 1)"
has "$out" "# results       : 8"
has "$out" "# samples       : 8 (per rank: 16)"
has "$out" "integrity: ok"
expect 0 "$cb" db prune --db "$db" --before 2000-01-01
has "$out" "nothing to prune"
expect 0 "$cb" db vacuum --db "$db"
has "$out" "vacuumed '$db'"
expect 0 "$cb" runs --db "$db"
has "$out" "quoted"
expect 2 "$cb" db prune --db "$db"
one_line_error "--keep-last N or --before DATE"
expect 2 "$cb" db prune --db "$db" --before soon
one_line_error "--before 'soon'"
expect 2 "$cb" db check --db "$tmp/missing.db"
one_line_error "no database at"
expect 2 "$cb" db --db "$db"
# A damaged file: check reports it (open's quick check or the full check), never exit 0.
cp "$db" "$tmp/bad.db"
pages=$(($(stat -c %s "$tmp/bad.db") / 4096))
for ((p = 1; p < pages; p++)); do
  printf 'garbage garbage garbage' | dd of="$tmp/bad.db" bs=1 seek=$((p * 4096 + 8)) conv=notrunc 2>/dev/null
done
"$cb" db check --db "$tmp/bad.db" >"$tmp/out" 2>&1
rc=$?
[ "$rc" -ne 0 ] || fail "db check of a damaged file exited 0: $(cat "$tmp/out")"

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "history/export/db: all checks passed"
