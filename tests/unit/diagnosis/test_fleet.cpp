// diag nodes (diagnosis/Fleet.h): the fleet's baseline per kind, a node slow over a band of sizes
// falls out, a noisy node's lone outliers do not, a kind's minimum, and a saved baseline judging a
// node later.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "adapters/FleetInputs.h"
#include "core/Error.h"
#include "diagnosis/Fleet.h"

namespace cb {
namespace {

const FleetSeries kSeries{"allreduce", "nccl", "out"};

// 8 sizes from 1 MiB, busbw 100 x (1 + i/10), each node off by `jitter(i)` of its own.
FleetNode node(const std::string& name, const std::string& kind, double (*jitter)(int, int),
               int id) {
  FleetNode n;
  n.name = name;
  n.kind = kind;
  n.source = "test";
  for (int i = 0; i < 8; ++i) {
    n.points.push_back({kSeries, (1ull << 20) << i, 100 * (1 + i / 10.0) * jitter(id, i)});
  }
  return n;
}

// +-0.3% by node and size: a tight fleet (the floor of the spread, 1%, decides).
double tight(int id, int i) { return 1 + 0.003 * std::sin(id * 7.0 + i * 3.0); }

std::vector<FleetNode> fleet() {
  std::vector<FleetNode> out;
  for (int id = 0; id < 10; ++id) {
    out.push_back(node(fmt::format("n{}", id), "8x H100", tight, id));
  }
  return out;
}

TEST(Fleet, ASlowBandFallsOutLoneOutliersDoNot) {
  auto nodes = fleet();
  // n3: 15% slow at 3 consecutive sizes (4, 8, 16 MiB); n5: 12% low at two sizes apart.
  for (int i : {2, 3, 4}) nodes[3].points[i].busbw *= 0.85;
  for (int i : {1, 5}) nodes[5].points[i].busbw *= 0.88;
  const FleetOptions o;
  FleetReport r = judgeFleet(nodes, o);
  ASSERT_EQ(r.outliers(), 1);
  EXPECT_EQ(r.nodes.front().name, "n3");
  EXPECT_EQ(r.nodes.front().evidence.size(), 3u);
  EXPECT_NE(r.nodes.front().why.find("3 consecutive sizes of allreduce nccl out (4 MiB to 16 "
                                     "MiB) below the kind's median: down to 85% of it"),
            std::string::npos)
      << r.nodes.front().why;
  const auto n5 = std::find_if(r.nodes.begin(), r.nodes.end(),
                               [](const NodePlace& n) { return n.name == "n5"; });
  EXPECT_FALSE(n5->fallsOut);
  EXPECT_EQ(n5->out, 2);
  EXPECT_EQ(r.baseline.size(), 8u);
  EXPECT_EQ(r.baseline.front().from, "fleet");
  EXPECT_EQ(r.baseline.front().nodes, 10);
  // --run 1 names every node with a point out.
  FleetOptions one = o;
  one.run = 1;
  EXPECT_EQ(judgeFleet(nodes, one).outliers(), 2);
}

TEST(Fleet, KindsAreJudgedApartAndMinimumsApply) {
  auto nodes = fleet();
  // Two nodes of another kind at half the busbw: a kind of their own, too few for a baseline.
  for (int id : {20, 21}) {
    auto n = node(fmt::format("a{}", id), "8x A100", tight, id);
    for (auto& p : n.points) p.busbw /= 2;
    nodes.push_back(n);
  }
  FleetReport r = judgeFleet(nodes, FleetOptions{});
  EXPECT_EQ(r.outliers(), 0);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.front().find("8x A100: 2 nodes; 8 point(s) have no baseline"),
            std::string::npos)
      << r.notes.front();
  // A100's minimum at 128 MiB (busbw 85 there): both fall below 90; the H100s are untouched.
  KindReferences refs;
  FleetReference min;
  min.series.collective = "allreduce";
  min.bytes = 128ull << 20;
  min.minimum = 90;
  min.source = "--min 8x A100/allreduce@128M=90";
  refs["8x A100"].push_back(min);
  r = judgeFleet(nodes, FleetOptions{}, refs);
  EXPECT_EQ(r.outliers(), 2);
  EXPECT_NE(r.nodes.front().why.find("below the kind's minimum at 1 point(s): allreduce nccl out "
                                     "at 128 MiB: 84.82 GB/s < 90"),
            std::string::npos)
      << r.nodes.front().why;
}

TEST(Fleet, ASavedBaselineJudgesALoneNodeLater) {
  FleetReport r = judgeFleet(fleet(), FleetOptions{});
  const KindReferences refs = referencesFromBaseline(baselineJson(r), "b.json");
  ASSERT_EQ(refs.at("8x H100").size(), 8u);
  auto lone = node("new", "8x H100", tight, 42);
  EXPECT_EQ(judgeFleet({lone}, FleetOptions{}, refs).outliers(), 0);
  for (int i : {5, 6, 7}) lone.points[i].busbw *= 0.8;
  FleetReport later = judgeFleet({lone}, FleetOptions{}, refs);
  EXPECT_EQ(later.outliers(), 1);
  EXPECT_EQ(later.baseline.front().from, "baseline b.json");
  EXPECT_THROW(referencesFromBaseline("{\"rows\": []}", "x.json"), UsageError);
  EXPECT_THROW(referencesFromBaseline(
                   "{\"collbench_fleet_baseline\": 1, \"rows\": [{\"kind\": \"k\"}]}", "x.json"),
               UsageError);
}

// The fleet's medians beside published nodes of its kind (notes, not verdicts): an A100 SXM4 40GB
// fleet at 8 GiB against the two published one-node figures (235.0, 235.3) and the health
// minimum 228 (validated: below both); a fleet slow as a whole is named as such.
TEST(Fleet, TheFleetStandsBesidePublishedNodesOfItsKind) {
  FleetReport r;
  BaselineRow row;
  row.kind = "8x A100-SXM4-40GB";
  row.series = {"allreduce", "nccl", "out"};
  row.bytes = 8ull << 30;
  row.median = 234.0;
  row.nodes = 16;
  row.from = "fleet";
  r.baseline = {row};
  auto lines = publishedComparison(r);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("8x A100-SXM4-40GB allreduce nccl out at 8 GiB: the fleet's median "
                          "234.0 GB/s is 99% of the published 235.0-235.3 (2 one-node figures); "
                          "health minimum 228"),
            std::string::npos)
      << lines[0];
  r.baseline[0].median = 200.0;
  lines = publishedComparison(r);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("below the published health minimum 228"), std::string::npos) << lines[0];
  // No published figure at the size, another kind, or a saved baseline's row: nothing said.
  r.baseline[0].bytes = 3ull << 30;
  EXPECT_TRUE(publishedComparison(r).empty());
  r.baseline[0].bytes = 8ull << 30;
  r.baseline[0].from = "a100.json";
  EXPECT_TRUE(publishedComparison(r).empty());
  r.baseline[0].from = "fleet";
  r.baseline[0].kind = "Intel Xeon, 2 CPUs";
  EXPECT_TRUE(publishedComparison(r).empty());
}

}  // namespace
}  // namespace cb
