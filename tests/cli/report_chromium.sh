#!/usr/bin/env bash
# `collbench report` end to end in a real browser: every log in tests/data/samples imported,
# two real local runs (labelled with markup, to prove escaping in the browser), one report with
# every run, a comparison and a history; headless Chromium must load it without a single console
# message (the page logs nothing; errors, CSP violations and failed loads all show up there), its
# script must have run (body data-report="ready") and every chart must have drawn content.
# Finally a screenshot. Needs Debian's chromium (scripts/install-deps.sh installs it).
# Usage: report_chromium.sh /path/to/collbench   (CB_SOURCE_DIR comes from CTest)
# With CB_REPORT_OUT=DIR the page, DOM dump and screenshot are copied there to look at.
set -uo pipefail
cb=${1:?usage: report_chromium.sh COLLBENCH}
here=$(cd "$(dirname "$0")" && pwd)
samples=${CB_SOURCE_DIR:-$here/../..}/tests/data/samples
browser=${CHROMIUM:-chromium}
if ! command -v "$browser" >/dev/null 2>&1; then
  echo "FAIL: '$browser' not found: this test needs headless Chromium (Debian package chromium;" \
    "scripts/install-deps.sh installs it)"
  exit 1
fi
tmp=$(mktemp -d /tmp/cb_report.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
db=$tmp/cb.db
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# run CMD...: must exit 0; stdout in $out.
run() {
  out=$("$@" 2>"$tmp/err")
  local rc=$?
  [ "$rc" -eq 0 ] || fail "'$*' exited $rc: $(cat "$tmp/err")"
}

# Every sample log: the ones naming their collective and world size in one call, old nccl-tests
# tables with --collective, OSU collectives with the world size their file names state.
run "$cb" import --db "$db" --label samples "$samples"/nccltests_4_*.txt \
  "$samples"/nccltests_5_*.txt "$samples"/nccltests_8_*.txt "$samples"/nccltests_9_*.txt \
  "$samples"/nccltests_10_*.txt \
  "$samples"/osu_3_*.txt "$samples"/osu_4_*.txt "$samples"/osu_8_*.txt "$samples"/osu_9_*.txt \
  "$samples"/imb_*.txt
run "$cb" import --db "$db" --label samples --collective allreduce "$samples"/nccltests_1_*.txt \
  "$samples"/nccltests_3_*.txt "$samples"/nccltests_6_*.txt
run "$cb" import --db "$db" --label samples --collective allgather "$samples"/nccltests_2_*.txt
run "$cb" import --db "$db" --label samples --world-size 64 "$samples"/osu_1_*.txt \
  "$samples"/osu_2_*.txt
run "$cb" import --db "$db" --label samples --world-size 128 "$samples"/osu_6_*.txt
run "$cb" import --db "$db" --label samples --world-size 144 "$samples"/osu_7_*.txt
imported_files=$(ls "$samples"/*.txt | grep -cvE 'SOURCES|SCHEMA')
listed_files=$(sqlite3 "$db" "SELECT COUNT(DISTINCT command_line) FROM runs" 2>/dev/null)
[ "$listed_files" = "$imported_files" ] ||
  fail "$listed_files sample files in the database, expected $imported_files"

# Two real runs with a label full of markup.
label='<script>alert(1)</script> & "nightly"'
for i in 1 2; do
  run "$cb" run --np 2 -b 8 -e 1M -f 4 --db "$db" --label "$label"
  real[$i]=$(sed -n 's/^# stored as run \([0-9]*\) in .*/\1/p' <<<"$out")
  [ -n "${real[$i]}" ] || fail "no run id in the output of run $i"
done
ids=$(sqlite3 "$db" "SELECT id FROM runs ORDER BY id" | tr '\n' ' ')
nruns=$(wc -w <<<"$ids")
# 21 sample files hold 23 runs (nccl-tests 4 and 5 two tests each), plus the two real runs.
[ "$nruns" -eq 25 ] || fail "$nruns runs in the database, expected 25"

html=$tmp/r.html
# shellcheck disable=SC2086
run "$cb" report $ids --db "$db" -o "$html" --compare "${real[1]}" "${real[2]}" \
  --history-label "$label"
grep -qF "wrote $html ($nruns runs, a comparison, history of 2 runs)" <<<"$out" ||
  fail "unexpected report output: $out"
charts=$(grep -c '<svg class="chart"' "$html")
[ "$charts" -ge 60 ] || fail "only $charts charts in the page"
grep -qE '<(script|link|img|iframe)[^>]* src=|<link ' "$html" && fail "the page references a file"
grep -qF "$label" "$html" && fail "the label appears unescaped in the page"

# Usage errors: one line, exit 2, no file written.
bad=$tmp/bad.html
for args in "" "999 -o $bad" "abc -o $bad" "1 --history-size 1M -o $bad" \
  "--compare ${real[1]} -o $bad" "1 -o $tmp/no/such/dir/r.html"; do
  # shellcheck disable=SC2086
  "$cb" report $args --db "$db" >/dev/null 2>"$tmp/err"
  rc=$?
  [ "$rc" -eq 2 ] || fail "'report $args' exited $rc, expected 2"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "'report $args' stderr: $(cat "$tmp/err")"
done
[ ! -e "$bad" ] || fail "a failed report wrote a file"

chrome_flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --user-data-dir="$tmp/profile")
timeout 180 "$browser" "${chrome_flags[@]}" --enable-logging=stderr --v=0 --dump-dom \
  "file://$html" >"$tmp/dom.html" 2>"$tmp/chrome.err"
rc=$?
[ "$rc" -eq 0 ] || fail "chromium --dump-dom exited $rc: $(tail -n 5 "$tmp/chrome.err")"
# Console messages from the page ("CONSOLE" lines): uncaught errors, CSP violations, failed loads.
if grep -q ':CONSOLE' "$tmp/chrome.err"; then
  fail "console messages while loading the page: $(grep ':CONSOLE' "$tmp/chrome.err" | head -n 5)"
fi
body=$(grep -o '<body[^>]*>' "$tmp/dom.html")
grep -qF 'data-report="ready"' <<<"$body" || fail "the page's script did not finish: $body"
grep -qF "data-charts=\"$charts\"" <<<"$body" || fail "expected $charts charts: $body"
grep -qF "data-charts-drawn=\"$charts\"" <<<"$body" || fail "not every chart was drawn: $body"
grep -q 'data-report-errors' <<<"$body" && fail "script errors: $body"
paths=$(grep -o '<path class="line" d="M[0-9]' "$tmp/dom.html" | wc -l)
[ "$paths" -ge "$charts" ] || fail "$paths line paths for $charts charts"
# Sections and escaped user text made it into the rendered document.
for part in 'id="compare"' 'id="history"' "id=\"run-${real[2]}\"" 'busbw over runs' \
  'allreduce · float · sum · out-of-place · 2 ranks' 'sendrecv · double · sum' \
  '&lt;script&gt;alert(1)&lt;/script&gt; &amp; "nightly"'; do
  grep -qF -- "$part" "$tmp/dom.html" || fail "the rendered page lacks '$part'"
done
grep -qF '<script>alert(1)' "$tmp/dom.html" && fail "the label became markup in the browser"

timeout 180 "$browser" "${chrome_flags[@]}" --hide-scrollbars --window-size=1400,2000 \
  --screenshot="$tmp/r.png" "file://$html" >/dev/null 2>"$tmp/shot.err"
rc=$?
[ "$rc" -eq 0 ] || fail "chromium --screenshot exited $rc: $(tail -n 5 "$tmp/shot.err")"
png_bytes=$(stat -c %s "$tmp/r.png" 2>/dev/null || echo 0)
[ "$png_bytes" -gt 20000 ] || fail "screenshot is $png_bytes bytes"
[ "$(head -c 8 "$tmp/r.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
  fail "the screenshot is not a PNG"

if [ -n "${CB_REPORT_OUT:-}" ]; then
  mkdir -p "$CB_REPORT_OUT" && cp "$html" "$tmp/dom.html" "$tmp/r.png" "$CB_REPORT_OUT"/
fi
if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "report_chromium: $nruns runs, $charts charts, $paths lines drawn, screenshot $png_bytes bytes"
