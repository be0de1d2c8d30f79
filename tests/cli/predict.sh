#!/usr/bin/env bash
# `collbench predict` (docs/PREDICT.md) on the published multi-scale sets of tests/data/scaling:
# fitted on the small scales it predicts the largest, prints the measured figure and the median
# error at >= 1 GiB, writes JSON, stores the prediction; `import` of the measured log at that
# scale then says how it compares; `replay --predict-ranks` predicts a recorded step at 64 ranks,
# `proxy --predict-ranks` a proxy's step;
# bad inputs exit 2 with one line and store nothing.
# Usage: predict.sh /path/to/collbench
set -uo pipefail
cb=${1:?usage: predict.sh COLLBENCH}
source "$(dirname "$0")/lib/common.sh"
scratch predict
d=$src/tests/data/scaling

# CoreWeave GB200 NVL72: one rack (NVLS) and two (NVLSTree, the 2-node tree) predict 20 racks.
cw=(predict allreduce --log "18x4:$d/coreweave-gb200-nvl72-18nodes.txt"
  --log "36x4:$d/coreweave-gb200-nvl72-36nodes.txt" --domain-nodes 18 --nvls --nodes 360)
expect 0 "$cb" "${cw[@]}" --measured "$d/coreweave-gb200-nvl72-360nodes.txt" --json "$tmp/p.json" \
  --db "$db"
has "$out" "# predict allreduce at 360x4 (20 NVLink domains) (1440 ranks, 20 NCCL nodes)"
has "$out" "# fit NVLS: 5 point(s) at 18x4 (1 NVLink domain)"
has "$out" "# fit NVLSTree: 6 point(s) at 36x4 (2 NVLink domains)"
has "$out" "at the fitted points it is the one that ran at 11 of 11"
has "$out" " 8589934592  NVLSTree"
has "$out" "381.48"
has "$out" "# median |error| at >= 1 GiB: 3.0% over 5 size(s)"
has "$out" "# stored as prediction run 1 (1440 ranks, label prediction)"
has "$(cat "$tmp/p.json")" '"median_abs_error_ge_1GiB"'
has "$(cat "$tmp/p.json")" '"algo": "NVLSTree"'
# The fit as the simulators' networks: ASTRA-sim's dimensions (one NVLink domain of 72, the 20
# domains' network) and SimAI's busbw.yaml (TP inside the domain, DP and EP across).
expect 0 "$cb" "${cw[@]}" --no-db --astra-sim "$tmp/astra.yml" --simai-busbw "$tmp/busbw.yaml"
astra=$(cat "$tmp/astra.yml")
has "$astra" "npus_count: [ 72, 20 ]"
has "$astra" "# network: allreduce predict:NVLSTree on 1440 ranks, 6 sizes"
has "$(cat "$tmp/busbw.yaml")" "DP:
allreduce,: 410.175"
expect 2 "$cb" "${cw[@]}" --no-db --astra-sim "$tmp"
one_line_error "--astra-sim"

# The measured log at that scale, imported: its share of the stored prediction (median of the
# measured / predicted busbw of its 6 sizes: 0.87 .. 1.03).
expect 0 "$cb" import "$d/coreweave-gb200-nvl72-360nodes.txt" --collective allreduce \
  --world-size 1440 --db "$db"
has "$out" "allreduce: 96% of predicted for this scale (prediction run 1, median over 6 sizes)"

# The same fit from stored runs: the imported logs, their scale given (a log's host list is cut).
expect 0 "$cb" import "$d/coreweave-gb200-nvl72-18nodes.txt" --collective allreduce \
  --world-size 72 --label cw --db "$db"
expect 0 "$cb" import "$d/coreweave-gb200-nvl72-36nodes.txt" --collective allreduce \
  --world-size 144 --label cw --db "$db"
expect 0 "$cb" predict allreduce --run 18x4:3 --run 36x4:4 --domain-nodes 18 --nvls --nodes 360 \
  --db "$db" --no-db
has "$out" "# fit NVLSTree: 6 point(s) at 36x4 (2 NVLink domains)"
has "$out" " 8589934592  NVLSTree     45414.1"
expect 2 "$cb" predict allreduce --label cw --domain-nodes 18 --nvls --nodes 360 --gpus-per-node 4 \
  --db "$db"
one_line_error "was imported: its log's host list may be cut"

# A stored prediction for 2 ranks (a 2-GPU log) makes `run` at 2 ranks say its share.
expect 0 "$cb" predict allreduce --log "1x2:$src/tests/data/nccltests_6_2080ti-pcie-nop2p-2gpu-g2-allreduce.txt" \
  --nodes 1 --db "$db"
has "$out" "# stored as prediction run 5 (2 ranks, label prediction)"
expect 0 "$cb" run allreduce --np 2 -b 1M -e 1M -w 1 -n 2 --algo ring --transport shm --db "$db"
has "$out" "# allreduce: "
has "$out" "% of predicted for this scale (prediction run 5, median over 1 size)"

# 8x H100 on IB 400G (published tables): 2 nodes run the tree, 4 the ring; 8 nodes are the ring's.
expect 0 "$cb" predict allreduce --log "2x8:$d/gj-aion-h100-ib400-2nodes.txt" \
  --log "4x8:$d/gj-aion-h100-ib400-4nodes.txt" --nvls --nodes 8 \
  --measured "$d/gj-aion-h100-ib400-8nodes.txt" --no-db
has "$out" " 8589934592      Ring"
has "$out" "# median |error| at >= 1 GiB: 2.7% over 4 size(s)"
hasnt "$out" "stored as prediction"

# The shared 8-rank DLRM trace predicted at 64 ranks: its allreduce and alltoall(v) at 64 ranks
# from H100 fits (IB 400G tables; a 2-node nccl-tests alltoall log), compute as recorded.
t=$src/tests/data/traces
dlrm=(replay "$t/pytorch-et/param-dlrm-8rank/dlrm_eg_{rank}.json.gz"
  --kineto "$t/kineto/param-dlrm-8rank/worker{rank}_step_12.*.pt.trace.json.gz" --predict-ranks 64)
fit=(--fit "allreduce=2x8:$d/gj-aion-h100-ib400-2nodes.txt" --fit "allreduce=4x8:$d/gj-aion-h100-ib400-4nodes.txt"
  --fit "alltoall=2x8:$src/tests/data/nccltests_5_h100-2node-normalpair-alltoall-sendrecv.txt" --nvls)
expect 0 "$cb" "${dlrm[@]}" "${fit[@]}"
has "$out" "# replay predicted at 64 ranks (8 nodes of 8) from the trace's 8"
has "$out" "# fit alltoall: P2P (10 points"
has "$out" "allreduce          8->64      3      2485252         1799.0"
has "$out" "alltoallv          8->64      4        64256         2967.0"
has "$out" "# step at 64 ranks: 9549.3 us (rank 5): compute 6822.0 us as recorded, communication 2727.3 us = 28.6% of the step"
expect 2 "$cb" "${dlrm[@]}" --fit "allreduce=2x8:$d/gj-aion-h100-ib400-2nodes.txt" \
  --fit "allreduce=4x8:$d/gj-aion-h100-ib400-4nodes.txt" --nvls
one_line_error "the step has alltoall calls"
expect 2 "$cb" "${dlrm[@]}" --fit "bcast=2x8:$d/gj-aion-h100-ib400-2nodes.txt"
one_line_error "is not COLL=NODESxGPUS:FILE"
expect 2 "$cb" "${dlrm[@]}"
one_line_error "give --fit"

# A proxy step at 64 ranks: DP's gradient buckets at 64 ranks from the H100 allreduce fit, the
# compute as the proxy measured it here (timing: only its presence is checked).
h100=(--fit "allreduce=2x8:$d/gj-aion-h100-ib400-2nodes.txt" --fit "allreduce=4x8:$d/gj-aion-h100-ib400-4nodes.txt" --nvls)
proxy=(proxy dp --np 2 --model bert-large --layers 2 --steps 2 -w 1 --no-db --predict-ranks 64)
expect 0 "$cb" "${proxy[@]}" "${h100[@]}"
has "$out" "# predicted at 64 ranks: dp allreduce on 64 ranks, 16781312 B x 1: 435.6 us"
has "$out" "# predicted step at 64 ranks: "
has "$out" "% of the step (no overlap assumed)"
# Without a fit, or a fit that cannot reach 64 ranks, nothing is measured.
expect 2 "$cb" "${proxy[@]}"
one_line_error "give --fit"
hasnt "$out" "# verification"
expect 2 "$cb" "${proxy[@]}" --fit "allreduce=1x2:$src/tests/data/nccltests_6_2080ti-pcie-nop2p-2gpu-g2-allreduce.txt"
one_line_error "--net-busbw"

# Bad inputs: one line, exit 2, nothing stored (the database keeps its 6 runs).
one=(--log "18x4:$d/coreweave-gb200-nvl72-18nodes.txt" --db "$db")
expect 2 "$cb" predict allreduce "${one[@]}"
one_line_error "no target"
expect 2 "$cb" predict allreduce --log "18y4:$d/coreweave-gb200-nvl72-18nodes.txt" --nodes 2 \
  --db "$db"
one_line_error "is not NODESxGPUS"
expect 2 "$cb" predict broadcast "${one[@]}" --nodes 36
one_line_error "collective 'broadcast' is not one of"
expect 2 "$cb" predict allreduce "${one[@]}" --nodes 36 --json "$tmp"
one_line_error "--json"
# One rack gives no network term for four.
expect 2 "$cb" predict allreduce "${one[@]}" --nvls --nodes 72 --domain-nodes 18
one_line_error "--net-busbw"
# A log that states 16 ranks is not one node of 8.
expect 2 "$cb" predict allreduce --log "1x8:$src/tests/data/nccltests_1_h100-2node-16gpu-mpi-g1-allreduce.txt" \
  --nodes 4 --db "$db"
one_line_error "16"
expect 2 "$cb" predict allreduce --log "4x8:$tmp/missing.txt" --nodes 8 --db "$db"
one_line_error "cannot read"
expect 0 "$cb" runs --db "$db"
[ "$(grep -c '^ *[0-9]' <<<"$out")" -eq 6 ] || fail "expected 6 stored runs, got: $out"

[ "$failures" -eq 0 ] && echo "predict: ok"
exit $((failures > 0))
