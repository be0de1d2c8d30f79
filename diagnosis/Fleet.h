// The slow node among many (`collbench fleet`): every node's figures against the nodes of its
// kind. Pure statistics over figures already measured (stored runs, imported per-node logs), so
// the command, the tests and a saved baseline judge alike.
//
// Per node kind and series (collective, variant, placement) and size: the baseline is the median
// of the nodes' busbw and its robust spread s = 1.4826 MAD of log(busbw) (ratios spread
// multiplicatively), floored at `spreadFloor`. A node's point is out when
//   z = log(value / median) / s <= -k   and   value / median <= 1 - gap
// (a robust outlier and a practical gap, as diag's links), and a node falls out when `run`
// consecutive sizes of one series are out (3): a node slow where bandwidth matters is slow over a
// band of sizes, while a healthy but noisy node's outliers come one or two at a time (with 2, a
// node 8x noisier than the log it was built from fell out in 3 of 20 synthetic draws; with 3,
// none: tests/cli/fleet.sh). A figure below a given
// minimum for its kind makes the node fall out at once. With a reference (a saved baseline, and
// later the reference table of published figures), its median and spread stand where the fleet
// has fewer than `minNodes` nodes of the kind at that point.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cb {

struct FleetSeries {
  std::string collective, variant, placement;
  auto operator<=>(const FleetSeries&) const = default;
  std::string text() const;  // "allreduce nccl out"
};

struct FleetPoint {
  FleetSeries series;
  uint64_t bytes = 0;
  double busbw = 0;  // GB/s
};

struct FleetNode {
  std::string name;    // the host
  std::string kind;    // node type: "8x A100-SXM4-40GB"; "" unknown (judged as one kind)
  std::string source;  // where its figures come from: "run 12", a log file
  std::vector<FleetPoint> points;
};

// A reference figure for a node kind at one point: a saved baseline's median and spread, a
// health check's minimum, or (the seam for the reference table) a published figure.
struct FleetReference {
  FleetSeries series;
  uint64_t bytes = 0;
  double median = 0;   // GB/s, 0: none
  double spread = 0;   // sigma of log(busbw), 0: none
  int nodes = 0;       // how many nodes the median came from (0: not a fleet's)
  double minimum = 0;  // GB/s below which a node of the kind is unhealthy, 0: none
  std::string source;
};
// By node kind ("" applies to every kind).
using KindReferences = std::map<std::string, std::vector<FleetReference>>;

struct FleetOptions {
  double k = 3.5;                  // robust z beyond which a point is out
  double gap = 0.05;               // and at least this far below the median
  int run = 3;                     // consecutive sizes out that make a node fall out
  double spreadFloor = 0.01;       // the smallest spread of log(busbw) believed
  int minNodes = 5;                // nodes of a kind at a point for the fleet's own baseline
  uint64_t minBytes = 1ull << 20;  // smaller sizes are latency and not compared
};

struct BaselineRow {
  std::string kind;
  FleetSeries series;
  uint64_t bytes = 0;
  double median = 0, spread = 0;
  int nodes = 0;
  std::string from;  // "fleet", or the reference's source
};

struct NodeEvidence {
  FleetSeries series;
  uint64_t bytes = 0;
  double value = 0, median = 0, ratio = 0, z = 0;
  double minimum = 0;  // > 0: the minimum this point fell below
};

struct NodePlace {
  std::string name, kind, source;
  double medianRatio = 1;  // median over its points of value / baseline median
  double worstZ = 0;       // the lowest z of its points
  int points = 0, out = 0;
  bool fallsOut = false;
  std::string why;                     // one line: "3 consecutive sizes of allreduce nccl out ..."
  std::vector<NodeEvidence> evidence;  // the points that made it fall out
};

struct FleetReport {
  std::vector<BaselineRow> baseline;  // by kind, series, size
  std::vector<NodePlace> nodes;       // outliers first, then by median ratio, lowest first
  std::vector<std::string> notes;     // kinds too small for a fleet baseline, ...
  int outliers() const;
};

// `references`: optional reference figures per kind (see FleetReference).
FleetReport judgeFleet(const std::vector<FleetNode>& nodes, const FleetOptions& options,
                       const KindReferences& references = {});

std::string fleetText(const FleetReport& r);
std::string fleetJson(const FleetReport& r, const FleetOptions& options);
// One self-contained HTML page (`diag nodes --html`): one row per node, the outliers first and
// marked, with their evidence; then the baseline per kind.
std::string fleetHtml(const FleetReport& r);
// The baseline as a saved file (`fleet --save-baseline`) and back as references (every row's
// median and spread; `fleet --baseline`). Throws UsageError naming `name` on a file that is not
// one.
std::string baselineJson(const FleetReport& r);
KindReferences referencesFromBaseline(const std::string& json, const std::string& name);

}  // namespace cb
