#!/usr/bin/env bash
# `collbench export results --format ...` for the tools clusters run, on a database filled by real
# runs: Prometheus text (parsed here line by line, and by promtool where installed), one scrape
# over HTTP with curl (--listen), the atomic textfile (-o), JSON lines, the simulator fits
# (sim-fit CSV, ASTRA-sim YAML, SimAI busbw.yaml); one-line errors for bad input.
# Usage: export_tools.sh /path/to/collbench
set -uo pipefail
cb=${1:?usage: export_tools.sh COLLBENCH}
source "$(dirname "$0")/lib/common.sh"
scratch export_tools
server=""  # the scrape server started below; never left behind
trap '{ [ -n "$server" ] && kill "$server"; } 2>/dev/null; rm -rf "$tmp"' EXIT

# The fastest of 20 calls per point: a median of 5 beside a parallel ctest once came out slower at
# 1 KiB than at 1 MiB for allgather, and a fit whose time falls with size is left out (a fresh-clone
# CI run lost the allgather row that way).
expect 0 "$cb" run allreduce,allgather --np 2 -b 1K -e 1M -f 4 -n 20 -w 2 --stat min --algo ring \
  --format none --db "$db" --label bench
expect 0 "$cb" export results --db "$db" --format json
results=$(python3 -c 'import json,sys; print(len(json.load(sys.stdin)))' <<<"$out")
[ "$results" -eq 24 ] || fail "expected 24 results (2 collectives x 6 sizes x 2 placements), got $results"

# Prometheus text format: every line a HELP/TYPE comment or `name{labels} value`, each metric's
# HELP and TYPE before its samples, no series twice.
check_prometheus() {
  python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
assert text.endswith("\n"), "no final line feed"
name = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
value = r'"(?:[^"\\\n]|\\[\\"n])*"'
sample = re.compile(rf"^({name})\{{((?:[a-zA-Z_][a-zA-Z0-9_]*={value},)*[a-zA-Z_][a-zA-Z0-9_]*={value})\}} (\S+)$")
typed, seen = {}, set()
samples = 0
for line in text.splitlines():
    if line.startswith("# HELP "):
        continue
    if line.startswith("# TYPE "):
        _, _, metric, kind = line.split(" ")
        assert kind == "gauge" and metric not in typed, line
        typed[metric] = True
        continue
    m = sample.match(line)
    assert m, f"not a sample line: {line}"
    assert m.group(1) in typed, f"sample before its TYPE: {line}"
    float(m.group(3).replace("Inf", "inf"))
    assert (m.group(1), m.group(2)) not in seen, f"series twice: {line}"
    seen.add((m.group(1), m.group(2)))
    samples += 1
for metric in ("collbench_bus_bandwidth_gbs", "collbench_alg_bandwidth_gbs",
               "collbench_collective_exec_time_microseconds"):
    assert metric in typed, metric
print(samples)
PY
}
expect 0 "$cb" export results --db "$db" --format prometheus
echo "$out" >"$tmp/metrics.txt"
samples=$(check_prometheus "$tmp/metrics.txt") || fail "prometheus text does not parse: $samples"
# 24 results: busbw, algbw, 5 time statistics and #wrong (run verifies by default) each.
[ "${samples:-0}" -eq $((24 * 8)) ] || fail "expected 192 samples, got $samples"
has "$out" 'collective="AllReduce",message_size="1-2MB",algo_proto="unknown"'
has "$out" 'variant="ring/local",coll="allreduce",dtype="float",op="sum"'
has "$out" 'stat="p99"'
if command -v promtool >/dev/null; then
  # promtool's only complaint may be Inspector's own unit choice (microseconds, as
  # nccl_collective_exec_time_microseconds); a parse error fails.
  promtool check metrics <"$tmp/metrics.txt" >"$tmp/promtool.out" 2>&1
  rc=$?
  grep -v 'collbench_collective_exec_time_microseconds use base unit "seconds" instead of "microseconds"' \
    "$tmp/promtool.out" | grep -q . && fail "promtool check metrics: $(cat "$tmp/promtool.out")"
  [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || fail "promtool check metrics exited $rc"
else
  echo "note: promtool not installed; the format was checked by the parser above only"
fi

# The textfile for node_exporter: written beside and renamed, so nothing half-written remains.
mkdir "$tmp/textfile"
expect 0 "$cb" export results --db "$db" --format prometheus --label bench -o "$tmp/textfile/collbench.prom"
cmp -s "$tmp/textfile/collbench.prom" "$tmp/metrics.txt" || fail "textfile differs from stdout"
[ "$(ls "$tmp/textfile")" = collbench.prom ] || fail "left in the textfile folder: $(ls "$tmp/textfile")"

# One scrape over HTTP: a wrong path gets 404 and the server waits on; /metrics ends it.
if command -v curl >/dev/null; then
  "$cb" export results --db "$db" --format prometheus --listen 0 --listen-timeout 60 \
    >"$tmp/listen.out" 2>"$tmp/listen.err" &
  server=$!
  port=""
  for _ in $(seq 200); do
    port=$(grep -o 'http://127.0.0.1:[0-9]*' "$tmp/listen.err" | cut -d: -f3)
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || fail "--listen printed no port: $(cat "$tmp/listen.err")"
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$port/")
  [ "$code" = 404 ] || fail "GET / answered $code, expected 404"
  curl -sS -D "$tmp/headers" --max-time 10 "http://127.0.0.1:$port/metrics" >"$tmp/scraped.txt" ||
    fail "curl /metrics failed"
  grep -qi '^content-type: text/plain; version=0.0.4' "$tmp/headers" || fail "headers: $(cat "$tmp/headers")"
  cmp -s "$tmp/scraped.txt" "$tmp/metrics.txt" || fail "the scrape differs from the export"
  wait "$server"
  rc=$?
  server=""
  [ "$rc" -eq 0 ] || fail "--listen exited $rc after the scrape: $(cat "$tmp/listen.err")"
else
  fail "curl is needed for the scrape test (scripts/install-deps.sh)"
fi
expect 2 "$cb" export results --db "$db" --format prometheus --listen 0 --listen-timeout 0.5
has "$err" "no scrape of /metrics within 0.5 s"

# JSON lines: one result per line, the same objects as the JSON array.
expect 0 "$cb" export results --db "$db" --format jsonl
[ "$(wc -l <<<"$out")" -eq 24 ] || fail "jsonl: expected 24 lines"
python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert all(r["run_id"] == 1 and r["busbw"] > 0 for r in rows), rows[0]
' <(echo "$out") || fail "jsonl lines do not parse"

# Simulator fits: per collective, from the run's sizes, with the fit error.
expect 0 "$cb" export results --db "$db" --format sim-fit
has "$out" "link_class,collective,variant,nranks,nodes,points,min_bytes,max_bytes,alpha_us,busbw_gbps,rms_rel_error,max_rel_error"
# The allreduce fit (what the network files use) must be there: the fit is over the lower envelope
# of the times, so a loaded machine's slow small sizes no longer drop it (a CI run lost it so).
grep -q '^core-group,allreduce,ring/local,2,1,6,1024,1048576,' <<<"$out" || fail "sim-fit rows: $out"
expect 0 "$cb" export results --db "$db" --format astra-sim
for key in "topology: [ Ring ]" "npus_count: [ 2 ]" "bandwidth: [ " "latency: [ " "fit error rms"; do
  has "$out" "$key"
done
expect 0 "$cb" export results --db "$db" --format simai-busbw
has "$out" "TP:"
grep -qE '^allreduce,: [0-9.]+$' <<<"$out" || fail "simai busbw has no TP allreduce: $out"
has "$out" "DP:
allreduce,: null"

# Bad input: one line, exit 2, nothing written.
expect 2 "$cb" export results --db "$db" --format nccl-tuner
one_line_error "no result of a forced NCCL algorithm and protocol"
expect 2 "$cb" export results --db "$db" --format yaml
one_line_error "--format 'yaml' is not one of"
expect 2 "$cb" export runs --db "$db" --format prometheus
one_line_error "--format prometheus exports results"
expect 2 "$cb" export results --db "$db" --format csv --listen 9
one_line_error "--listen serves the prometheus format only"
expect 2 "$cb" export results --db "$db" --format prometheus --listen 70000
one_line_error "not a port"
expect 2 "$cb" export results --db "$db" --run 1 --label bench
one_line_error "--run names one run"
expect 2 "$cb" export results --db "$db" --format prometheus -o "$tmp/nodir/x.prom"
one_line_error "cannot write"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "export tools: ok"
