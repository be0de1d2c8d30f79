// What real nodes of a kind measure: the published figures of core/reference/reference-nodes.csv
// (one row per figure, each with its source; docs/PEAK.md, "For its kind"), built into the
// binary, and the verdict "for its kind" that sets a figure beside them. Plain data and pure
// functions, in core beside the peak model, so import, show, run and report judge alike.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cb {

// One published figure: a row of the table.
struct ReferenceFigure {
  int line = 0;            // its line in the CSV
  std::string gpu;         // the table's GPU key: "H100", "A100 SXM4 40GB", "GB200", "MI300X"
  int gpusPerNode = 0;     //
  std::string nodes;       // "1", "2", ... ; ">=2" (any multi-node run); "" (not stated)
  std::string fabric;      // nvswitch, nvlink, xgmi, pcie, nvl72, network, ...
  std::string collective;  // collbench's name: allreduce, allgather, alltoall, reduce_scatter
  uint64_t sizeBytes = 0;  // 0: no size (a minimum on the run's best figure, a guidance)
  double busbw = 0;        // GB/s
  std::string algoClass;   // nvls, ring, tree; "" when the source does not state it
  // measurement; minimum (a health check's or validator's pass mark, not a measurement);
  // minimum-unvalidated (a pass mark above every published measurement: shown, never decides);
  // expected (a figure a source states approximately or as guidance, not measured).
  std::string kind;
  std::string ncclVersion, nodeType, network, algo, source, notes;  // as published

  bool measured() const { return kind == "measurement"; }
  bool minimum() const { return kind == "minimum"; }
  int nodeCount() const;  // nodes as a number; 0 when ">=2" or not stated
};

// The table built into collbench (core/reference/reference-nodes.csv).
const std::vector<ReferenceFigure>& referenceTable();
// Parses the table's CSV (RFC 4180 quoting); UsageError naming the line on a malformed row.
std::vector<ReferenceFigure> parseReferenceCsv(std::string_view text);

// A node type: GPU model (the table's key), GPUs per node, and how many such nodes a run spans.
struct NodeKind {
  std::string gpu;      // "" when unknown
  int gpusPerNode = 0;  // 0: unknown
  int nodes = 0;        // 0: unknown
  std::string how;      // where it was learnt: "device lines", "topology"
  bool known() const { return !gpu.empty() && gpusPerNode > 0; }
  // "8x H100, 1 node" / "4x GB200, 18 nodes" / "8x H100, node count unknown".
  std::string label() const;
};

// The table's GPU key of a device name as NVML, hwloc or a log's device line gives it
// ("NVIDIA H100 80GB HBM3" -> "H100", "A100-SXM4-40GB" -> "A100 SXM4 40GB", "AMD Instinct
// MI300X" -> "MI300X"); a model the table does not hold keeps its name ("NVIDIA GeForce RTX
// 2080 Ti"); "" when the name says no model ("NVIDIA Graphics Device", "").
std::string referenceGpu(std::string_view deviceName);

// The algorithm class a variant states: "nccl:nvls" -> nvls, "nccl:ring" -> ring,
// "nccl:tree"/"nccl:nvlstree"/"nccl:collnet..." -> tree; "" when the variant does not say.
std::string algoClassOf(std::string_view variant);

struct KindVerdict {
  enum class Kind { kNormal, kLow, kNoReference, kNotJudged };
  Kind kind = Kind::kNotJudged;
  std::string line;  // "published 8x H100, 1 node allreduce figures at 16 GiB: ... normal for Ring"
  std::vector<int> figureLines;  // the CSV lines of the figures it compared with
};
std::string_view kindVerdictName(KindVerdict::Kind k);  // normal, low, no-reference, not-judged

// The best busbw of `points` (bytes, busbw) at kJudgeMinBytes and up, the figure the physical
// verdict takes, of `collective` on a node of `kind`, with `algoClass` when the run knows what
// NCCL ran (""), against the published measurements of that kind at the nearest published size
// (at most 4x away). A health minimum stated at a size is set against the run's figure at that
// size; one without a size against the best.
KindVerdict judgeForKind(const NodeKind& kind, std::string_view collective,
                         std::string_view algoClass,
                         const std::vector<std::pair<uint64_t, double>>& points);

}  // namespace cb
