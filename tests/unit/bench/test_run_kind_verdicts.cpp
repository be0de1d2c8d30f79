// Issue 46 item 2 for `run`: a GPU variant's verdict carries "for its kind" from the run's node
// type (its topology's GPU models, GPU ranks per host, hosts), a figure below every published one
// of the kind and its health minimum is a low that --expect reports, and host variants get no
// verdict for a kind (the table holds GPU nodes only).
#include <gtest/gtest.h>

#include "adapters/RunPeaks.h"
#include "topology/NodeKind.h"

namespace cb {
namespace {

ResultRecord point(const std::string& variant, uint64_t bytes, double busbw) {
  ResultRecord r;
  r.collective = "allreduce";
  r.variant = variant;
  r.sizeBytes = bytes;
  r.nranks = 8;
  r.placement = "out";
  r.iterations = 20;
  r.algbw = busbw / 1.75;
  r.busbw = busbw;
  r.wrong = 0;
  return r;
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(RunKindVerdicts, GpuVariantIsJudgedForItsKindAndLowCountsForExpect) {
  RunPeaks peaks;
  peaks.deviceRanks = true;
  peaks.kind.gpu = "H200";
  peaks.kind.gpusPerNode = 8;
  peaks.kind.nodes = 1;
  const uint64_t size = 16ull << 30;
  auto v =
      runVerdicts({point("nccl:ring", size, 368.0), point("nccl:nvls", size, 300.0)}, peaks, 0);
  EXPECT_TRUE(has(v.text,
                  "# verdict allreduce nccl:ring: no bound known for this hardware (no topology); "
                  "for its kind: published 8x H200, 1 node allreduce figures at 16 GiB"))
      << v.text;
  EXPECT_TRUE(has(v.text, "is normal for Ring")) << v.text;
  ASSERT_EQ(v.low.size(), 1u) << v.text;
  EXPECT_TRUE(has(v.low[0], "allreduce nccl:nvls is low for its kind")) << v.low[0];
  EXPECT_TRUE(has(v.detailJson, "\"kind_verdict\":\"low\"")) << v.detailJson;
}

TEST(RunKindVerdicts, HostVariantsHaveNoKind) {
  RunPeaks peaks;
  auto v = runVerdicts({point("ring/shm", 64u << 20, 3.0)}, peaks, 0);
  EXPECT_FALSE(has(v.text, "for its kind")) << v.text;
}

TEST(RunKindVerdicts, NodeKindFromTheRunTopology) {
  RunTopology t;
  for (const std::string host : {"a", "b"}) {
    MachineTopology m;
    m.host = host;
    for (int g = 0; g < 8; ++g) {
      Gpu gpu;
      gpu.model = "NVIDIA H100 80GB HBM3";
      gpu.busId = "0000:0" + std::to_string(g) + ":00.0";
      m.gpus.push_back(gpu);
    }
    t.hosts.push_back(m);
    for (int r = 0; r < 8; ++r) {
      RankPlacement p;
      p.rank = static_cast<int>(t.placements.size());
      p.host = host;
      p.gpuBusId = m.gpus[r].busId;
      t.placements.push_back(p);
    }
  }
  EXPECT_EQ(runNodeKind(t).label(), "8x H100, 2 nodes");
  t.hosts[1].gpus[0].model = "NVIDIA A100-SXM4-80GB";  // mixed models: no one kind
  EXPECT_FALSE(runNodeKind(t).known());
  for (auto& p : t.placements) p.gpuBusId.clear();  // host ranks
  EXPECT_FALSE(runNodeKind(t).known());
}

}  // namespace
}  // namespace cb
