#!/usr/bin/env bash
# "Is this number normal?" (docs/PEAK.md): `run` prints the bound of each collective from the
# copy bandwidth it measures, % of peak and a verdict per variant, and stores them (JSON, CSV,
# database, show); a run slowed with --inject-delay is low and --expect exits 1 for it; imported
# logs are judged by their device lines or by --topology, and for their kind (the published
# figures of the node type their device lines name); `diag links --link-rate` calls links
# below a stated rate below bound; buffers that fit this host's L3 are cache-resident (no memory
# bound, no peak) and no verdict reads above 110% of its bound without its reason; bad inputs exit
# 2 with one line.
# Whether an unslowed run on a loaded machine is "normal" is timing: not asserted here.
# Usage: peak.sh /path/to/collbench
set -uo pipefail
cb=${1:?usage: peak.sh COLLBENCH}
src=$(cd "$(dirname "$0")/../.." && pwd)
source "$(dirname "$0")/lib/common.sh"
scratch peak

# The host's L3s (topo --json): a memory bound applies only to buffers past them (docs/PEAK.md,
# caches). `big`: the smallest power of two from 16 MiB whose 2-rank allreduce buffers (4 S) pass
# all of them; `one`: the same for one rank (2 S).
read -r l3sum l3min < <("$cb" topo --json | python3 -c 'import json, sys
g = [c["cache_bytes"] for h in json.load(sys.stdin)["hosts"] for c in h["core_groups"] if c["level"] > 0]
print(sum(g), min(g) if g else 0)')
pow2_past() { local s=$((16 << 20)); while [ $(($1 * s)) -le "$l3sum" ]; do s=$((s * 2)); done; echo $s; }
big=$(pow2_past 4)
one=$(pow2_past 2)
# No verdict reads "normal" above 110% of its bound without its reason ("above it: ..."); one the
# model cannot explain reads "above the bound" (a loaded machine's copy probe can set one).
no_bare_excess() {
  grep -F "# verdict" <<<"$1" | python3 -c 'import re, sys
for line in sys.stdin:
    m = re.search(r"(\d+)% of the", line)
    if m and int(m.group(1)) > 110 and "above it:" not in line and "above the bound" not in line:
        sys.exit("above 110% without a reason: " + line)' || fail "a verdict above its bound: $1"
}

run=(run allreduce --np 2 -b "$big" -e "$big" -w 1 -n 3 --algo ring --transport shm --db "$db")
expect 0 "$cb" "${run[@]}" --json "$tmp/r.json" --csv "$tmp/r.csv"
has "$out" "# peak: host memory copy"
has "$out" "# peak: allreduce bound"
has "$out" "# % of peak: allreduce, out, 2 ranks; bound"
has "$out" "# verdict allreduce ring/shm: best"
no_bare_excess "$out"
python3 - "$tmp/r.json" <<'EOF' || fail "JSON points carry no peak"
import json, sys
points = [p for p in json.load(open(sys.argv[1]))["points"] if p["status"] == "ok"]
assert points and all(p["peak_gbps"] > 0 and p["pct_of_peak"] > 0 for p in points), points
assert all(p["peak_limit"] == "host memory" for p in points)
EOF
has "$(head -1 "$tmp/r.csv")" "peak_gbps,pct_of_peak"
expect 0 "$cb" show last --db "$db"
has "$out" "%peak"
has "$out" "# verdict allreduce ring/shm: best"
peak=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from results where peak_gbps > 0 and peak_limit = ?", ("host memory",)).fetchone()[0])' "$db")
[ "$peak" -ge 2 ] || fail "expected stored peaks, got $peak"

# 1 s more per call at `big` (128 MiB on a 480 MiB L3): at most 0.134 GB/s busbw there, low against
# any host whose memory copies 0.34 GB/s or more per rank (this VM with ten compilers beside it
# copied 1.4).
slow=(run allreduce --np 2 -b "$big" -e "$big" -w 1 -n 2 --placement out --algo ring
  --transport shm --db "$db" --inject-delay 1000000)
expect 0 "$cb" "${slow[@]}"
has "$out" "# verdict allreduce ring/shm: best"
has "$out" ": low: "
expect 1 "$cb" "${slow[@]}" --expect
has "$err" "collbench: --expect: allreduce ring/shm is low: "
has "$err" "collbench: --expect: 1 figure(s) below their expected share of the bound"
# The same run judged against a share of 0.0001 of its bound is not low.
expect 0 "$cb" "${slow[@]}" --expect --expect-fraction 0.0001
has "$out" ": normal: "
no_bare_excess "$out"
# One rank: busbw is 0 by definition; its out-of-place algbw is judged against the rank's own
# copy rate, and variants this world cannot run (mpi, nccl) get no verdict.
expect 0 "$cb" run allreduce --np 1 -b "$one" -e "$one" -w 1 -n 3 --algo ring --transport local \
  --json "$tmp/one.json" --no-db
has "$out" "(one rank copying "
no_bare_excess "$out"
has "$out" "GB/s algbw: host memory:"
has "$out" "# % of peak: allreduce, out, 1 ranks; bound"
has "$out" "# verdict allreduce ring/local: best"
has "$out" "GB/s algbw: "
python3 - "$tmp/one.json" <<'EOF' || fail "one-rank JSON points: peak on out-of-place only"
import json, sys
seen = set()
for p in json.load(open(sys.argv[1]))["points"]:
    seen.add(p["placement"])
    judged = p["placement"] == "out"  # in place, one rank moves nothing
    assert (p["peak_gbps"] is not None) == judged == (p["pct_of_peak"] is not None), p
assert seen == {"in", "out"}, seen
EOF
expect 0 "$cb" run allreduce --np 1 -b 16M -e 16M -w 1 -n 2 --no-db
grep -qF "# verdict allreduce mpi" <<<"$out" && fail "a verdict for mpi, which cannot run here"
grep -qF "# verdict allreduce nccl" <<<"$out" && fail "a verdict for nccl, which cannot run here"
# Buffers that fit the L3 of this host (2 ranks at 16 MiB: 64 MiB) are cache-resident: no memory
# bound, no peak, and a verdict that says so; past the L3s they are judged.
expect 0 "$cb" run allreduce --np 2 -b 16M -e "$big" -w 1 -n 3 --algo ring --transport shm \
  --no-db --json "$tmp/c.json"
no_bare_excess "$out"
has "$out" "bound"
hasnt "$out" "bound 0.00 GB/s busbw ()"  # the view's bound comes from a point that has one
if [ "$l3min" -ge $((64 << 20)) ]; then
  has "$out" "# peak: allreduce: sizes up to "
  has "$out" "fit the $((l3sum >> 20)) MiB L3: cache-resident, not judged)"
  python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["points"]:
    if 4 * p["bytes"] <= int(sys.argv[2]):
        assert p["peak_gbps"] is None, p
    if p["bytes"] == int(sys.argv[3]):
        assert p["peak_gbps"] is not None, p' "$tmp/c.json" "$l3min" "$big" ||
    fail "a cache-resident point carries a peak, or $big does not"
elif [ "$l3sum" -lt $((64 << 20)) ]; then
  hasnt "$out" "cache-resident"
fi
# Sizes below 16 MiB are not judged: --expect has nothing low.
expect 0 "$cb" run allreduce --np 2 -b 1K -e 64K -w 1 -n 3 --algo ring --no-db --expect
has "$out" "not judged: no size of 16 MiB or more"
expect 2 "$cb" "${run[@]}" --expect-fraction 3
one_line_error "--expect-fraction 3 is not a share of the bound"

# Imported logs: judged by their own device lines.
idb=$tmp/import.db
samples=$src/tests/data/samples
expect 0 "$cb" import --db "$idb" "$samples/nccltests_9_h100-1node-8gpu-g8-allreduce-nvls.txt"
has "$out" "note: verdict allreduce nccl: best 368.69 GB/s busbw: normal: 82% of the NVLink4 x18"
expect 0 "$cb" import --db "$idb" "$samples/nccltests_6_2080ti-pcie-nop2p-2gpu-g2-allreduce.txt"
has "$out" "low: 25% of the PCIe gen3 x16 (no P2P) bound"
expect 0 "$cb" import --db "$idb" "$samples/nccltests_1_h100-2node-16gpu-mpi-g1-allreduce.txt"
has "$out" "no bound known for this hardware (the log spans several nodes"
# One GPU: its out-of-place algbw against the H100 SXM's memory (3.35 TB/s / 2).
expect 0 "$cb" import --db "$idb" "$samples/nccltests_10_h100-1gpu-g1-allreduce-nccltests2.19.6.txt"
has "$out" "best 1495.00 GB/s algbw: normal: 89% of the HBM3 memory bound (1675.0 GB/s) at 512 MiB"
expect 0 "$cb" show 1 --db "$idb"
has "$out" "%peak"
has "$out" "# verdict allreduce nccl: best 368.69 GB/s busbw: normal"
expect 0 "$cb" report 1 --db "$idb" -o "$tmp/report.html"
grep -qF "bound: NVLink4 x18" "$tmp/report.html" || fail "the HTML report draws no bound line"
# With the machine: the DGX-2 export (NVLink2 x6 through NVSwitch) for the DGX-2 log.
expect 0 "$cb" import --db "$idb" --topology "$src/tests/data/topologies/nvidiaDGX2.xml" \
  "$samples/nccltests_3_dgx2-v100-12gpu-oldformat-allreduce.txt"
has "$out" "normal: 82% of the NVLink2 x6 bound (150.0 GB/s)"
# For its kind (docs/PEAK.md): the published figures of the node type the device lines name.
refdata=$src/tests/data/refdata/logs
expect 0 "$cb" import --db "$idb" "$refdata/superbench-a100-40gb-1node-allreduce.txt"
has "$out" "for its kind: published 8x A100 SXM4 40GB, 1 node allreduce figures at 8 GiB"
kind_id=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select max(id) from runs").fetchone()[0])' "$idb")
expect 0 "$cb" show "$kind_id" --db "$idb"
has "$out" "for its kind: published 8x A100 SXM4 40GB, 1 node allreduce figures at 8 GiB"
expect 0 "$cb" report "$kind_id" --db "$idb" -o "$tmp/kind.html"
grep -qF "for its kind: published 8x A100 SXM4 40GB, 1 node allreduce" "$tmp/kind.html" ||
  fail "the HTML report shows no verdict for its kind"
expect 0 "$cb" import --dry-run "$refdata/aws-p5-2nodes-allreduce.txt"
has "$out" "for its kind: no reference: the GPU model is not known"
# `topo --json` of a machine: this one has no GPU, so an 8-GPU log has no bound on it.
expect 0 "$cb" topo --json --topology "$src/tests/data/topologies/nvidiaDGX2.xml"
printf '%s\n' "$out" >"$tmp/dgx2.json"
expect 0 "$cb" import --dry-run --topology "$tmp/dgx2.json" \
  "$samples/nccltests_3_dgx2-v100-12gpu-oldformat-allreduce.txt"
has "$out" "normal: 82% of the NVLink2 x6 bound (150.0 GB/s)"
expect 0 "$cb" import --dry-run --topology "$tmp/dgx2.json" \
  "$samples/nccltests_1_h100-2node-16gpu-mpi-g1-allreduce.txt"
has "$out" "no bound known for this hardware"
expect 2 "$cb" import --db "$idb" --topology "$tmp/none.xml" \
  "$samples/nccltests_3_dgx2-v100-12gpu-oldformat-allreduce.txt"
one_line_error "--topology $tmp/none.xml: cannot read"
echo "not a topology" >"$tmp/bad.xml"
expect 2 "$cb" import --db "$idb" --topology "$tmp/bad.xml" \
  "$samples/nccltests_3_dgx2-v100-12gpu-oldformat-allreduce.txt"
one_line_error "--topology $tmp/bad.xml"

# p2p: bw and bibw against the pair's bound (bibw: both directions), latency has none; buffers
# that fit the L3 (2 ranks, send and receive: 4 S) are cache-resident and carry none.
pdb=$tmp/p2p.db
expect 0 "$cb" p2p bw --np 2 -b 1M -e 2M -n 3 -w 1 --transport shm --db "$pdb"
has "$out" "# % of peak: bw 0-1 shm: "
if [ "$l3min" -ge $((8 << 20)) ]; then
  has "$out" "at 2 MiB: cache-resident (fits the "
  want="(2, 0)"
else
  has "$out" "of the host memory bound"
  want="(2, 2)"
fi
expect 0 "$cb" p2p latency --np 2 -e 8 -n 3 -w 1 --transport shm --db "$pdb"
[[ "$out" != *"% of peak"* ]] || fail "latency has no bandwidth bound: $out"
peaks=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*), count(peak_gbps) from results r join runs u on u.id = r.run_id where r.collective = ?", (sys.argv[2],)).fetchone())' "$pdb" bw)
[ "$peaks" = "$want" ] || fail "expected $want bw results with a peak, got $peaks"

# diag links against a stated link rate: 1000 Gb/s is beyond any thread pair here (every link
# below bound, exit 1, instead of healthy); 0.001 Gb/s is below all of them (healthy).
diag=(diag links --np 4 --no-db --size 64K -n 2 --latency-iters 10 --schedules 1 --no-confirm)
expect 1 "$cb" "${diag[@]}" --link-rate 1000
has "$out" "below bound: every link (6) under its physical bound"
# (a noisy suspect may still exit 1 here: that is the peers' verdict, not the bound's)
"$cb" "${diag[@]}" --link-rate 0.001 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -le 1 ] || fail "diag links --link-rate 0.001 exited $rc: $(cat "$tmp/err")"
! grep -q "below bound" "$tmp/out" || fail "links above 0.001 Gb/s called below bound"
expect 2 "$cb" "${diag[@]}" --link-rate -1
has "$err" "--link-rate"

[ "$failures" -eq 0 ] || exit 1
echo "peak: all checks passed"
