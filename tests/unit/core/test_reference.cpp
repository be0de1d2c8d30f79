// Issue 46 items 1 and 2: the reference table built into collbench (core/reference/
// reference-nodes.csv, one row per published figure with its source) loads whole; device names
// map onto its GPU keys; a figure is judged "for its kind" against the published measurements of
// its node type at the nearest size and algorithm class, low only below every one of them and
// below the health minimum; no reference is said, never made up.
#include <gtest/gtest.h>

#include <set>

#include "core/Error.h"
#include "core/Reference.h"

namespace cb {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

NodeKind node(std::string gpu, int perNode, int nodes) {
  NodeKind k;
  k.gpu = std::move(gpu);
  k.gpusPerNode = perNode;
  k.nodes = nodes;
  return k;
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(ReferenceTable, EveryPublishedFigureIsARowWithItsSource) {
  const auto& t = referenceTable();
  // refdata's reference-nodes.csv holds 227 figures; 21 of them are pass marks, not measurements.
  EXPECT_EQ(t.size(), 227u);
  size_t minimums = 0;
  std::set<int> lines;
  for (const auto& r : t) {
    EXPECT_FALSE(r.source.empty()) << r.line;
    EXPECT_GT(r.busbw, 0) << r.line;
    lines.insert(r.line);
    if (r.kind == "minimum" || r.kind == "minimum-unvalidated") {
      ++minimums;
      EXPECT_TRUE(has(r.notes, "THRESHOLD")) << r.line;
    }
  }
  EXPECT_EQ(minimums, 21u);
  EXPECT_EQ(lines.size(), t.size());  // one line per figure
}

TEST(ReferenceTable, MalformedRowsNameTheirLine) {
  const std::string header =
      "gpu,gpus_per_node,nodes,fabric,collective,size_bytes,busbw_gbs,algo_class,kind,"
      "nccl_version,node_type,network,algo,source,notes\n";
  auto error = [&](const std::string& rows) {
    try {
      parseReferenceCsv(header + rows);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_TRUE(parseReferenceCsv(header + "H100,8,1,nvswitch,allreduce,1024,1.5,,measurement,,"
                                         "\"a, b\",x,,src,\"say \"\"hi\"\"\"\n")
                  .front()
                  .notes == "say \"hi\"");
  EXPECT_TRUE(has(error("H100,8,1,nvswitch,allreduce,2G-4G,480,,measurement,,,,,src,\n"),
                  "line 2: size_bytes"));
  EXPECT_TRUE(
      has(error("H100,8,1,nvswitch,allreduce,,480,nvls,guess,,,,,src,\n"), "line 2: kind 'guess'"));
  EXPECT_TRUE(has(error("H100,8,1,nvswitch,allreduce,,480,,measurement,,,,,,\n"), "source"));
  EXPECT_TRUE(has(error("H100,8\n"), "line 2: 2 fields"));
}

TEST(ReferenceTable, DeviceNamesMapOntoTheTableKeys) {
  EXPECT_EQ(referenceGpu("NVIDIA H100 80GB HBM3"), "H100");
  EXPECT_EQ(referenceGpu("NVIDIA H100 NVL"), "H100 NVL");
  EXPECT_EQ(referenceGpu("A100-SXM4-40GB"), "A100 SXM4 40GB");
  EXPECT_EQ(referenceGpu("NVIDIA A100-SXM4-80GB"), "A100 SXM4 80GB");
  EXPECT_EQ(referenceGpu("NVIDIA GB200"), "GB200");
  EXPECT_EQ(referenceGpu("NVIDIA B200"), "B200");
  EXPECT_EQ(referenceGpu("AMD Instinct MI300X"), "MI300X");
  EXPECT_EQ(referenceGpu("NVIDIA Graphics Device"), "");
  EXPECT_EQ(referenceGpu(""), "");
  EXPECT_EQ(referenceGpu("NVIDIA GeForce RTX 2080 Ti"), "NVIDIA GeForce RTX 2080 Ti");
  EXPECT_EQ(algoClassOf("nccl:nvls"), "nvls");
  EXPECT_EQ(algoClassOf("nccl:Ring"), "ring");
  EXPECT_EQ(algoClassOf("nccl"), "");
  EXPECT_EQ(algoClassOf("ring"), "");  // collbench's own ring is not NCCL's
}

// 8x H200 on one node, allreduce at 16 GiB: published NVLS 480.0 and 482.26, Ring 367.2 and
// 367.61 (rows of the table), Azure's health minimum 431.
TEST(ReferenceVerdict, RingFigureIsNormalForRingAndNamesTheMinimum) {
  const NodeKind h200 = node("H200", 8, 1);
  auto v = judgeForKind(h200, "allreduce", "", {{16 * kGiB, 369.0}});
  EXPECT_EQ(v.kind, KindVerdict::Kind::kNormal) << v.line;
  EXPECT_TRUE(has(v.line, "published 8x H200, 1 node allreduce figures at 16 GiB: 367.2-482.3"))
      << v.line;
  EXPECT_TRUE(has(v.line, "Ring 367.2-367.6, NVLS 480.0-482.3")) << v.line;
  EXPECT_TRUE(has(v.line, "a Ring-class figure")) << v.line;
  EXPECT_TRUE(has(v.line, "is normal for Ring")) << v.line;
  EXPECT_TRUE(has(v.line, "below the health minimum 431.0")) << v.line;

  // Told it ran NVLS, the same figure is below every NVLS figure and the minimum: low, naming
  // the lowest published figure's source.
  auto nvls = judgeForKind(h200, "allreduce", "nvls", {{16 * kGiB, 369.0}});
  EXPECT_EQ(nvls.kind, KindVerdict::Kind::kLow) << nvls.line;
  EXPECT_TRUE(has(nvls.line, "low for NVLS: below every published figure (lowest 480.0, http"))
      << nvls.line;

  auto fast = judgeForKind(h200, "allreduce", "nvls", {{16 * kGiB, 481.0}});
  EXPECT_EQ(fast.kind, KindVerdict::Kind::kNormal) << fast.line;
  EXPECT_TRUE(has(fast.line, "within the published range")) << fast.line;
}

TEST(ReferenceVerdict, BelowEveryFigureAndTheMinimumIsLow) {
  auto v = judgeForKind(node("H200", 8, 1), "allreduce", "", {{16 * kGiB, 300.0}});
  EXPECT_EQ(v.kind, KindVerdict::Kind::kLow) << v.line;
  EXPECT_TRUE(has(v.line, "lowest 367.2")) << v.line;
  EXPECT_TRUE(has(v.line, "below the health minimum 431.0")) << v.line;
  // The nearest published size is taken: 5 GiB sits nearest 4 GiB.
  auto near = judgeForKind(node("H200", 8, 1), "allreduce", "", {{5 * kGiB, 300.0}});
  EXPECT_TRUE(has(near.line, "figures at 4 GiB")) << near.line;
}

TEST(ReferenceVerdict, NoReferenceIsSaidNeverMadeUp) {
  auto unknownGpu = judgeForKind(node("", 8, 1), "allreduce", "", {{kGiB, 100.0}});
  EXPECT_EQ(unknownGpu.kind, KindVerdict::Kind::kNoReference);
  EXPECT_TRUE(has(unknownGpu.line, "no reference: the GPU model is not known"));
  auto other = judgeForKind(node("RTX 2080 Ti", 2, 1), "allreduce", "", {{kGiB, 10.0}});
  EXPECT_TRUE(has(other.line, "the table has no 2x RTX 2080 Ti node")) << other.line;
  auto nodes = judgeForKind(node("GB200", 4, 0), "allreduce", "", {{kGiB, 300.0}});
  EXPECT_TRUE(has(nodes.line, "node count of this 4x GB200 run is not known")) << nodes.line;
  auto coll = judgeForKind(node("MI300X", 8, 1), "broadcast", "", {{kGiB, 100.0}});
  EXPECT_TRUE(has(coll.line, "no published broadcast figure for 8x MI300X, 1 node")) << coll.line;
  // Far from every published size: not compared.
  auto small = judgeForKind(node("MI300X", 8, 1), "allreduce", "", {{32u << 20, 50.0}});
  EXPECT_EQ(small.kind, KindVerdict::Kind::kNoReference) << small.line;
  // Below 16 MiB nothing is judged, as for the physical bound.
  auto tiny = judgeForKind(node("MI300X", 8, 1), "allreduce", "", {{1u << 20, 5.0}});
  EXPECT_EQ(tiny.kind, KindVerdict::Kind::kNotJudged);
}

TEST(ReferenceVerdict, MultiNodeRunTakesTheNearestPublishedNodeCount) {
  // 8x H100 at 3 nodes: none published; 4 nodes is nearer than 2 (log2(4/3) < log2(3/2)).
  auto v = judgeForKind(node("H100", 8, 3), "allreduce", "", {{8 * kGiB, 330.0}});
  EXPECT_TRUE(has(v.line, "8x H100, 4 nodes allreduce (none published at 3 nodes)")) << v.line;
}

}  // namespace
}  // namespace cb
