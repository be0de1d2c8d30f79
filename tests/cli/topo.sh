#!/usr/bin/env bash
# `collbench topo`: the live machine, recorded hwloc exports (tree, nvidia-smi-style matrix,
# JSON), the preflight on healthy and degraded exports (--check, --strict, several hosts), a
# fake sysfs tree, bad inputs; `run` records the topology and `show` prints it; --bind, --strict;
# p2p names its pairs' link class; gate names a fingerprint difference.
# Usage: topo.sh /path/to/collbench   (CB_SOURCE_DIR comes from CTest)
set -uo pipefail
cb=${1:?usage: topo.sh COLLBENCH}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib/common.sh"
scratch topo
topos=$src/tests/data/topologies

# The live machine: a tree and a matrix (or the line saying there is no device).
expect 0 "$cb" topo --no-nvml
has "$out" "Machine $(hostname)"
has "$out" "NUMANode 0"

# The DGX-2: 16 GPUs fully linked through NVSwitches, as nvidia-smi topo -m prints it.
expect 0 "$cb" topo --topology "$topos/nvidiaDGX2.xml"
has "$out" "GPU15 0000:e7:00.0 Tesla V100-SXM3-32GB-H, 15.8 GB/s, NVLink x6 to NVSwitches"
has "$out" "GPU0   X     NV6   NV6"
has "$out" "NV#  = Connection traversing a bonded set of # NVLinks"
expect 0 "$cb" topo --topology "$topos/nvidiaDGX2.xml" --json
has "$out" '"nvswitches": ['
python3 -c 'import json,sys; j=json.load(sys.stdin); assert len(j["hosts"][0]["gpus"])==16' \
  <<<"$out" || fail "topo --json is not the DGX-2's 16 GPUs"

# The ConnectX server (hwloc 1 export): the HCA with its port, and the NIC legend.
expect 0 "$cb" topo --topology "$topos/32em64t-2n8c2t-pci-normalio-v1.xml"
has "$out" "NIC0 mlx5_0 0000:04:00.0 (ib0), port 1 ACTIVE"
has "$out" "NIC0: mlx5_0"

# Preflight: a healthy export has no finding; a lowered link and a lost GPU are named.
expect 0 "$cb" topo --check --strict --topology "$topos/nvidiaDGX2.xml"
has "$out" "# preflight: 0 findings"
expect 1 "$cb" topo --check --strict --topology "$topos/nvidiaDGX2-link-x8.xml"
has "$out" "GPU2 0000:39:00.0 (Tesla V100-SXM3-32GB-H): PCIe link: expected 15.8 GB/s like its 15 peers, seen 7.9 GB/s"
expect 0 "$cb" topo --check --topology "$topos/nvidiaDGX2-link-x8.xml"
expect 1 "$cb" topo --check --strict --topology "$topos/nvidiaDGX2.xml" \
  --topology "$topos/nvidiaDGX2-gpu3-missing.xml"
has "$out" "nvidiaDGX2-gpu3-missing: host: GPU count: expected 16, seen 15"
has "$out" "nvidiaDGX2-gpu3-missing: PCIe switch 0000:37:00.0: GPUs below it: expected 2 like its peers, seen 1"
expect 1 "$cb" topo --check --strict --json --topology "$topos/nvidiaDGX2-link-x8.xml"
has "$out" '"device": "GPU2 0000:39:00.0 (Tesla V100-SXM3-32GB-H)"'

# A copied sysfs tree: ports and rates of RDMA NICs, a port down.
expect 0 "$cb" topo --no-nvml --check --sys-root "$src/tests/data/sysfs-gpu-server"
has "$out" "mlx5_1 port 1: port state: expected ACTIVE, seen DOWN"

# Bad inputs: one line, exit 2.
expect 2 "$cb" topo --topology "$tmp/none.xml"
expect 2 "$cb" topo --strict
echo "not xml" >"$tmp/bad.xml"
expect 2 "$cb" topo --topology "$tmp/bad.xml"
has "$err" "not a valid hwloc XML export"
[ "$(wc -l <<<"$err")" -eq 1 ] || fail "more than one error line: $err"
expect 2 "$cb" run allreduce --np 2 -b 8 -e 8 --no-db --bind socket

# run: bound rank threads, the topology in the header and in the database, shown by show.
db=$tmp/cb.db
expect 0 "$cb" run allreduce --np 2 -b 8 -e 64 -n 5 -w 1 --bind core --db "$db"
has "$out" "# topology $(hostname):"
has "$out" "# links : rank pairs by link class:"
expect 0 "$cb" show last --db "$db"
has "$out" "# topology"
has "$out" "rank 0"
# Two runs of this machine still compare (the fingerprint holds nothing that changes per run).
expect 0 "$cb" run allreduce --np 2 -b 8 -e 64 -n 5 -w 1 --bind core --db "$db"
expect 0 "$cb" compare 1 2 --db "$db"
hasnt "$out" "fingerprints differ"
expect 0 "$cb" run allreduce --np 2 -b 8 -e 64 -n 5 -w 1 --bind numa --strict --no-db
# p2p names the link class of every pair it measures (from the run's topology).
expect 0 "$cb" p2p latency --np 2 -b 8 -e 8 -n 5 -w 1 --bind core --no-db
has "$out" "pair 0 -> 1 (link "
# Runs that differ in ranks per host are refused by gate, naming the difference.
expect 0 "$cb" run allreduce --np 3 -b 8 -e 64 -n 5 -w 1 --db "$db"
"$cb" gate --db "$db" --baseline 1 --candidate 3 >"$tmp/gate.out" 2>&1
has "$(cat "$tmp/gate.out")" "ranks_per_host: 2 vs 3"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "topo: all checks passed"
