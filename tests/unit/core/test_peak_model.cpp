// The peak model and the bounds it gives on the recorded machines of tests/data/topologies, with
// every expected bound worked out by hand in the comments.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "bench/Peak.h"
#include "common/RecordedMachines.h"
#include "core/PeakModel.h"
#include "results/import/Import.h"
#include "results/import/ImportPeak.h"
#include "topology/LinkBounds.h"
#include "topology/Placement.h"
#include "topology/Topology.h"

namespace cb {
namespace {

MachineTopology load(const std::string& name) {
  return loadTopologyXml(std::string(CB_SOURCE_DIR) + "/tests/data/topologies/" + name);
}

// One GPU rank per GPU of the machine, in bus order.
std::vector<RankPlacement> gpuRanks(const MachineTopology& t, const std::string& host) {
  std::vector<RankPlacement> out;
  for (size_t i = 0; i < t.gpus.size(); ++i) {
    out.push_back(
        placeThisRank(t, static_cast<int>(i), host, static_cast<int>(i), t.gpus[i].busId));
  }
  return out;
}

constexpr double kGen3Lane = 8.0 * 128 / 130 / 8;  // 0.9846 GB/s per lane per direction

TEST(PeakTable, EveryRowHasASource) {
  for (const auto& row : peakTable()) {
    EXPECT_GT(row.unitGBps, 0) << row.id;
    EXPECT_FALSE(row.source.empty()) << row.id;
    if (row.typical > 0) {
      EXPECT_FALSE(row.typicalSource.empty()) << row.id;
    }
  }
  EXPECT_DOUBLE_EQ(findLinkPeak("nvlink4")->unitGBps, 25);  // 18 links: 450 GB/s per direction
  EXPECT_DOUBLE_EQ(findLinkPeak("ib-hdr")->unitGBps, 25);   // 200 Gb/s
  EXPECT_EQ(findLinkPeak("nvlink9"), nullptr);
}

TEST(LinkBounds, Dgx2PairsAndCollectives) {
  const auto t = load("nvidiaDGX2.xml");
  auto ranks = gpuRanks(t, "dgx2");
  ASSERT_EQ(ranks.size(), 16u);
  // Any two V100s meet through the NVSwitches: each has 6 NVLink2 links of 25 GB/s = 150 GB/s.
  Bound pair = pairLinkBound({t}, ranks, 0, 8);
  EXPECT_DOUBLE_EQ(pair.busbw, 150);
  EXPECT_EQ(pair.limit, "NVLink2 x6");
  for (Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kAllToAll}) {
    Bound b = collectiveLinkBound({t}, ranks, c);
    EXPECT_DOUBLE_EQ(b.busbw, 150) << collectiveName(c);
  }
  // The public usual fraction (370 of 450 GB/s) is NVLink4's; NVLink2 gets the default.
  EXPECT_DOUBLE_EQ(expectedFraction(pair), kDefaultExpectedFraction);
  EXPECT_DOUBLE_EQ(expectedFraction(nvlinkBound("nvlink4", 18, true)), 0.74);

  // One link of GPU5 down: 5 x 25 = 125 GB/s bounds the ring.
  auto degraded = t;
  for (auto& e : degraded.nvlinks) {
    if (e.from == t.gpus[5].busId && e.remoteKind == "nvswitch") {
      e.linksDown = 1;
      break;
    }
  }
  EXPECT_DOUBLE_EQ(collectiveLinkBound({degraded}, ranks, Collective::kAllReduce).busbw, 125);
  EXPECT_DOUBLE_EQ(pairLinkBound({degraded}, ranks, 0, 1).busbw, 150);

  // Without the NVLinks, GPU0 and GPU1 share a PLX switch: PCIe gen3 x16 = 16 x 0.985 GB/s.
  for (auto& r : ranks) r.nvlinkFabric.clear();
  Bound pcie = pairLinkBound({t}, ranks, 0, 1);
  EXPECT_NEAR(pcie.busbw, 16 * kGen3Lane, 1e-9);
  EXPECT_EQ(pcie.limit, "PCIe gen3 x16");
  EXPECT_NEAR(expectedFraction(pcie), 0.69, 1e-9);  // 12 of 15.75 GB/s usual (NVIDIA/nccl#406)
}

TEST(LinkBounds, Dgx2WithAGpuAtX8) {
  const auto t = load("nvidiaDGX2-link-x8.xml");
  auto ranks = gpuRanks(t, "dgx2");
  // Through NVSwitch the PCIe link is not used: still 150 GB/s.
  EXPECT_DOUBLE_EQ(collectiveLinkBound({t}, ranks, Collective::kAllReduce).busbw, 150);
  for (auto& r : ranks) r.nvlinkFabric.clear();
  // GPU2 (0000:39:00.0) trained at x8: 8 x 0.985 = 7.88 GB/s bounds its pairs and the ring.
  ASSERT_EQ(ranks[2].gpuBusId, "0000:39:00.0");
  Bound b = pairLinkBound({t}, ranks, 2, 3);
  EXPECT_NEAR(b.busbw, 8 * kGen3Lane, 1e-9);
  EXPECT_EQ(b.limit, "PCIe gen3 x8");
  EXPECT_NEAR(collectiveLinkBound({t}, ranks, Collective::kAllReduce).busbw, 8 * kGen3Lane, 1e-9);
  EXPECT_NEAR(pairLinkBound({t}, ranks, 0, 1).busbw, 16 * kGen3Lane, 1e-9);
}

// The DGX-2's PCIe tree without its NVLinks (every link gen3 x16, 15.75 GB/s): GPU0 and GPU1
// under switch 0000:32:00.0 behind downstream port 0000:2d:04.0, GPU2 and GPU3 under
// 0000:37:00.0 behind 0000:2d:0c.0, both ports on switch 0000:2c:00.0 below root port
// 0000:2b:00.0; GPU4-7 the same below root port 0000:4e:00.0.
std::vector<RankPlacement> pcieOnly(const MachineTopology& t, std::vector<int> gpus) {
  std::vector<RankPlacement> out;
  for (int g : gpus) {
    RankPlacement p = placeThisRank(t, static_cast<int>(out.size()), "dgx2", g, t.gpus[g].busId);
    p.nvlinkFabric.clear();
    p.nvlinkPeers.clear();
    out.push_back(p);
  }
  return out;
}

TEST(LinkBounds, PcieUplinksSharedByTheRing) {
  auto t = load("nvidiaDGX2.xml");
  const double x16 = 16 * kGen3Lane;
  // Bus order 0,1,2,3: each link above the GPUs carries one hop each way (1->2 up through
  // 2d:04.0, down through 2d:0c.0; 3->0 back): the GPUs' own x16 links bound the ring.
  auto ordered = pcieOnly(t, {0, 1, 2, 3});
  Bound b = collectiveLinkBound({t}, ordered, Collective::kAllReduce);
  EXPECT_NEAR(b.busbw, x16, 1e-9);
  EXPECT_EQ(b.limit, "PCIe gen3 x16");
  // Rank order 0,2,1,3: hops 0->2 and 1->3 both go up through port 2d:04.0 (and 2->1, 3->0 come
  // down it): two hops each way share its x16, 15.75 / 2 = 7.88 GB/s.
  auto interleaved = pcieOnly(t, {0, 2, 1, 3});
  b = collectiveLinkBound({t}, interleaved, Collective::kAllReduce);
  EXPECT_NEAR(b.busbw, x16 / 2, 1e-9);
  EXPECT_NE(b.limit.find("PCIe gen3 x16 link above the GPUs"), std::string::npos) << b.limit;
  EXPECT_NE(b.limit.find("shared, x 0.50"), std::string::npos) << b.limit;
  EXPECT_NE(b.basis.find("2 of the ring's hops cross it one way"), std::string::npos) << b.basis;
  // A pair alone is not shared.
  EXPECT_NEAR(pairLinkBound({t}, interleaved, 0, 1).busbw, x16, 1e-9);
  // Alltoall over GPUs 0-7 (two root ports, 4 GPUs each): under a root port k = 4 of the host's
  // l = 8 ranks send (l-k)/n = 4/8 of S through it each, 2 S in all, while busbw counts 7/8 S:
  // 15.75 x 7 / (4 x 4) = 6.89 GB/s. Under switch 32:00.0, k = 2: 15.75 x 7 / (2 x 6) = 9.19.
  auto eight = pcieOnly(t, {0, 1, 2, 3, 4, 5, 6, 7});
  b = collectiveLinkBound({t}, eight, Collective::kAllToAll);
  EXPECT_NEAR(b.busbw, x16 * 7 / 16, 1e-9);
  EXPECT_NE(b.basis.find("x (n-1)/(k(l-k)) = 0.438"), std::string::npos) << b.basis;
  // The ring in bus order over the eight: one hop each way everywhere, x16.
  EXPECT_NEAR(collectiveLinkBound({t}, eight, Collective::kAllGather).busbw, x16, 1e-9);

  // A switch trained at x8 above GPU0 and GPU1 (the port 2d:04.0 and the switch 32:00.0 both
  // record that link): 8 x 0.985 = 7.88 GB/s bounds the ring in bus order, one hop each way.
  for (auto& node : t.pci) {
    if (node.busId == "0000:2d:04.0" || node.busId == "0000:32:00.0") node.link.gbps = x16 / 2;
  }
  b = collectiveLinkBound({t}, ordered, Collective::kAllReduce);
  EXPECT_NEAR(b.busbw, 8 * kGen3Lane, 1e-9);
  EXPECT_NE(b.limit.find("PCIe gen3 x8 link above the GPUs at 0000:"), std::string::npos)
      << b.limit;
  // Through NVSwitch the PCIe tree carries nothing: still 6 x 25 GB/s.
  EXPECT_DOUBLE_EQ(collectiveLinkBound({t}, gpuRanks(t, "dgx2"), Collective::kAllReduce).busbw,
                   150);
  EXPECT_DOUBLE_EQ(collectiveLinkBound({t}, gpuRanks(t, "dgx2"), Collective::kAllToAll).busbw, 150);
}

TEST(LinkBounds, ConnectXServerAcrossTwoHosts) {
  // Two host ranks per host, both nearest the ConnectX-4 (mlx5_0).
  auto t = cb::testing::twoConnectXHosts();
  const auto& a = t.a;
  const auto& b = t.b;
  const auto& ranks = t.ranks;
  // The export records no port rate: no bound, never a guess.
  Bound none = collectiveLinkBound({a, b}, ranks, Collective::kAllReduce);
  EXPECT_FALSE(none.known());
  EXPECT_EQ(judge({{1 << 30, 10.0}}, none).line,
            "no bound known for this hardware (rate of mlx5_0 on conan unknown)");
  // At 100 Gb/s InfiniBand (EDR): 12.5 GB/s for the host's one NIC, whatever shares it; a pair
  // crossing it gets half when the two ranks of its host share the port.
  t.edr();
  Bound ring = collectiveLinkBound({a, b}, ranks, Collective::kAllReduce);
  EXPECT_DOUBLE_EQ(ring.busbw, 12.5);
  EXPECT_EQ(ring.limit, "InfiniBand EDR");
  EXPECT_DOUBLE_EQ(expectedFraction(ring), 0.86);  // 12 of 12.5 usual (NVIDIA/nccl-tests#119)
  EXPECT_DOUBLE_EQ(pairLinkBound({a, b}, ranks, 1, 2).busbw, 6.25);
  // Alltoall: (n-L)/n = 1/2 of the data crosses; busbw counts 3/4: 12.5 x (3/2)/2 = 9.375.
  EXPECT_DOUBLE_EQ(collectiveLinkBound({a, b}, ranks, Collective::kAllToAll).busbw, 9.375);
}

TEST(LinkBounds, FourNodeServerHostMemory) {
  const auto t = load("96em64t-4n4d3ca2co-pci.xml");
  std::vector<RankPlacement> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back(placeThisRank(t, r, "h", r, ""));
  // 5 GB/s copied per rank: allreduce moves 5(n-1)/n S per rank against 2 x 5 GB/s of memory
  // traffic; busbw counts 2(n-1)/n S: 2/5 x 10 = 4 GB/s. Allgather 2(n-1)/n: 5 GB/s;
  // reduce_scatter 3(n-1)/n: 10/3; reduce has no traffic model.
  EXPECT_DOUBLE_EQ(collectiveLinkBound({t}, ranks, Collective::kAllReduce, 5).busbw, 4);
  EXPECT_DOUBLE_EQ(collectiveLinkBound({t}, ranks, Collective::kAllGather, 5).busbw, 5);
  EXPECT_NEAR(collectiveLinkBound({t}, ranks, Collective::kReduceScatter, 5).busbw, 10.0 / 3,
              1e-12);
  EXPECT_FALSE(collectiveLinkBound({t}, ranks, Collective::kReduce, 5).known());
  EXPECT_FALSE(collectiveLinkBound({t}, ranks, Collective::kAllReduce, 0).known());
  EXPECT_DOUBLE_EQ(pairLinkBound({t}, ranks, 0, 3, 5).busbw, 5);
  EXPECT_EQ(expectedFraction(memoryBound(Collective::kAllReduce, 4, 5)), kDefaultExpectedFraction);
}

// Bounds that bound (docs/PEAK.md): the four-node server records 16 L3s of 16 MiB. Unbound host
// ranks may use all of them: 256 MiB. A 4-rank allreduce holds 2 S per rank, 8 S in all, so
// sizes up to 32 MiB are cache-resident and no memory bound applies; a figure above the bound
// names its reason (the measured bound's 10%, a working set up to 2x the cache) or reads
// "above the bound".
TEST(LinkBounds, FourNodeServerCacheResidentSizes) {
  const auto t = load("96em64t-4n4d3ca2co-pci.xml");
  std::vector<RankPlacement> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.push_back(placeThisRank(t, r, "h", r, ""));
    ranks.back().cpus = parseCpuList("0-95");
  }
  EXPECT_EQ(ranksCacheBytes({t}, ranks), 256ull << 20);
  const Bound b = collectiveLinkBound({t}, ranks, Collective::kAllReduce, 5);  // 4 GB/s busbw
  EXPECT_EQ(b.cacheName, "256 MiB L3");
  EXPECT_TRUE(b.cacheResident(32ull << 20));
  EXPECT_FALSE(b.cacheResident(64ull << 20));
  // A pair (p2p): send and receive buffers on two ranks, 4 S.
  EXPECT_TRUE(pairLinkBound({t}, ranks, 0, 3, 5).cacheResident(64ull << 20));
  EXPECT_FALSE(pairLinkBound({t}, ranks, 0, 3, 5).cacheResident(128ull << 20));

  // 16 and 32 MiB at 2.6x the bound: cache-resident, not judged (the 261% at 16 MiB).
  Verdict v = judge({{16ull << 20, 10.4}, {32ull << 20, 10.4}}, b);
  EXPECT_EQ(v.kind, Verdict::Kind::kNotJudged);
  EXPECT_EQ(v.line,
            "not judged: cache-resident: the buffers of every size from 16 MiB to 32 MiB (256 MiB "
            "at 32 MiB) fit the 256 MiB L3 the ranks share, so no memory bound applies");
  // Past the cache the same figures are judged; 64 MiB's 512 MiB is within 2x the cache.
  v = judge({{32ull << 20, 10.4}, {64ull << 20, 6}}, b);
  EXPECT_EQ(v.kind, Verdict::Kind::kNormal);
  EXPECT_EQ(v.bytes, 64ull << 20);
  EXPECT_NE(v.line.find("150% of the host memory bound (4.00 GB/s) at 64 MiB, above it: part of "
                        "the 512 MiB working set stays in the 256 MiB L3"),
            std::string::npos)
      << v.line;
  EXPECT_NE(v.line.find("(sizes up to 32 MiB fit the 256 MiB L3: cache-resident, not judged)"),
            std::string::npos);
  // Beyond 2x the cache: 105% is the measured bound's slack, 150% is no bound at all.
  v = judge({{128ull << 20, 4.2}}, b);
  EXPECT_EQ(v.kind, Verdict::Kind::kNormal);
  EXPECT_NE(v.line.find("above it: within the 10% a measured copy rate varies by"),
            std::string::npos);
  v = judge({{128ull << 20, 6}}, b);
  EXPECT_EQ(v.kind, Verdict::Kind::kAboveBound);
  EXPECT_EQ(verdictKindName(v.kind), "above-bound");
  EXPECT_EQ(v.line,
            "above the bound: 150% of the host memory bound (4.00 GB/s) at 128 MiB, and the model "
            "knows no reason: the bound or the figure is wrong");
  // The copy probe itself passes the cache: 2 buffers x 4 ranks x 64 MiB = 2 x 256 MiB; on a
  // 480 MiB L3, 2 ranks copy 240 MiB each (64 MiB without a cache known).
  EXPECT_EQ(copyProbeBytes(4, 256ull << 20), 64ull << 20);
  EXPECT_EQ(copyProbeBytes(4, 1ull << 30), 256ull << 20);
  EXPECT_EQ(copyProbeBytes(2, 480ull << 20), 240ull << 20);
  EXPECT_EQ(copyProbeBytes(2, 0), 64ull << 20);
  EXPECT_EQ(copyProbeBytes(8, 0), 64ull << 20);
}

// A datasheet bound passed: NVLS names its reason for an allreduce on NVLink4 NVSwitch boards
// (about 480 GB/s busbw on 8 H100, over the 450 of the links); an allgather there, and a DGX-2's
// NVLink2 switches (no NVLS), have none.
TEST(Verdict, AboveADatasheetBoundNeedsItsReason) {
  const Bound h100 = deviceLinesBound("NVIDIA H100 80GB HBM3", 8, 1);
  Verdict v = judge({{8ull << 30, 479.5}}, withCollective(h100, Collective::kAllReduce));
  EXPECT_EQ(v.kind, Verdict::Kind::kNormal);
  EXPECT_NE(v.line.find("107% of the NVLink4 x18 bound (450.0 GB/s) at 8 GiB, above it: NVLS "
                        "(NVLink SHARP) reduces in the switch"),
            std::string::npos)
      << v.line;
  EXPECT_EQ(judge({{8ull << 30, 479.5}}, withCollective(h100, Collective::kAllGather)).kind,
            Verdict::Kind::kAboveBound);
  const Bound dgx2 = deviceLinesBound("Tesla V100-SXM3-32GB", 16, 1);
  EXPECT_EQ(judge({{1ull << 30, 160}}, withCollective(dgx2, Collective::kAllReduce)).kind,
            Verdict::Kind::kAboveBound);
  // Below the bound nothing changes.
  EXPECT_EQ(judge({{8ull << 30, 369}}, withCollective(h100, Collective::kAllReduce)).line,
            "normal: 82% of the NVLink4 x18 bound (450.0 GB/s) at 8 GiB; expected >= 74%");
}

TEST(CopyByNuma, TheSlowestRankOfEachNodeWhenRanksSpanNodes) {
  std::vector<RankPlacement> ranks(4);
  for (int r = 0; r < 4; ++r) {
    ranks[r].rank = r;
    ranks[r].numaNode = r / 2;
  }
  EXPECT_EQ(copyByNumaLine({4.7, 4.6, 3.1, 3.2}, ranks),
            "# peak: host memory copy per NUMA node: node 0 4.60 GB/s (2 ranks), node 1 3.10 "
            "GB/s (2 ranks)\n");
  ranks[3].numaNode = 2;
  EXPECT_EQ(copyByNumaLine({4.7, 4.6, 3.1, 3.2}, ranks),
            "# peak: host memory copy per NUMA node: node 0 4.60 GB/s (2 ranks), node 1 3.10 "
            "GB/s (1 rank), node 2 3.20 GB/s (1 rank)\n");
  // One node, or a rank whose node is not known: no line (the run's one figure says it all).
  for (auto& p : ranks) p.numaNode = 0;
  EXPECT_EQ(copyByNumaLine({4.7, 4.6, 3.1, 3.2}, ranks), "");
  ranks[1].numaNode = -1;
  ranks[2].numaNode = 1;
  EXPECT_EQ(copyByNumaLine({4.7, 4.6, 3.1, 3.2}, ranks), "");
  EXPECT_EQ(copyByNumaLine({4.7}, ranks), "");
}

TEST(OneRank, JudgedByAlgbwAgainstTheMemory) {
  // busbw is 0 for a one-rank allreduce (2(n-1)/n); out of place it copies S, in place nothing.
  EXPECT_EQ(judgedFigure(1, false, 1495, 0), 1495);
  EXPECT_FALSE(judgedFigure(1, true, 1e6, 0).has_value());
  EXPECT_EQ(judgedFigure(2, true, 10, 10), 10);
  EXPECT_EQ(judgedFigure(8, false, 100, 175), 175);
  // A GPU's datasheet memory bandwidth, read + write: a copy moves each byte twice.
  Bound h100 = deviceLinesBound("NVIDIA H100 80GB HBM3", 1, 1);
  EXPECT_DOUBLE_EQ(h100.busbw, 3350.0 / 2);  // H100 SXM: 3.35 TB/s
  EXPECT_TRUE(h100.onAlgbw);
  EXPECT_EQ(h100.limit, "HBM3 memory");
  EXPECT_DOUBLE_EQ(gpuOneRankBound("NVIDIA H200").busbw, 2400);       // 4.8 TB/s
  EXPECT_DOUBLE_EQ(gpuOneRankBound("NVIDIA H100 PCIe").busbw, 1000);  // 2 TB/s
  EXPECT_DOUBLE_EQ(gpuOneRankBound("NVIDIA A100-SXM4-80GB").busbw, 2039.0 / 2);
  EXPECT_DOUBLE_EQ(gpuOneRankBound("NVIDIA A100-SXM4-40GB").busbw, 1555.0 / 2);
  for (const auto* model : {"NVIDIA H200", "NVIDIA H100 NVL", "Tesla V100-SXM2-32GB",
                            "NVIDIA GeForce RTX 2080 Ti", "Tesla T4", "NVIDIA L40S"}) {
    ASSERT_TRUE(gpuMemory(model).has_value()) << model;
    EXPECT_FALSE(gpuMemory(model)->source.empty()) << model;
  }
  Bound unknownGpu = gpuOneRankBound("Tesla V100-SXM3-32GB-H");
  EXPECT_FALSE(unknownGpu.known());
  EXPECT_EQ(judge({{1 << 30, 800}}, unknownGpu).line,
            "no bound known for this hardware (memory bandwidth of 'Tesla V100-SXM3-32GB-H' is "
            "not in the peak model)");
  Verdict v = judge({{512ull << 20, 1495.0}, {32ull << 20, 1286.8}}, h100);
  EXPECT_EQ(verdictText(v),
            "best 1495.00 GB/s algbw: normal: 89% of the HBM3 memory bound (1675.0 GB/s) at "
            "512 MiB; expected >= 50%");
  // One host rank: the copy rate it measured bounds algbw.
  const auto t = load("96em64t-4n4d3ca2co-pci.xml");
  std::vector<RankPlacement> one{placeThisRank(t, 0, "h", 0, "")};
  Bound host = collectiveLinkBound({t}, one, Collective::kAllReduce, 7.5);
  EXPECT_DOUBLE_EQ(host.busbw, 7.5);
  EXPECT_TRUE(host.onAlgbw);
  EXPECT_EQ(host.limit, "host memory");
  EXPECT_FALSE(collectiveLinkBound({t}, one, Collective::kAllReduce, 0).known());
}

TEST(DeviceLines, SampleMachines) {
  // 8 x H100 SXM on one node: NVLink4 x18 through NVSwitch, 450 GB/s.
  Bound h100 = deviceLinesBound("NVIDIA H100 80GB HBM3", 8, 1);
  EXPECT_DOUBLE_EQ(h100.busbw, 450);
  EXPECT_EQ(h100.limit, "NVLink4 x18");
  Verdict v = judge({{8ull << 30, 369.02}, {1 << 20, 60}}, h100);
  EXPECT_EQ(v.kind, Verdict::Kind::kNormal);
  EXPECT_EQ(v.line, "normal: 82% of the NVLink4 x18 bound (450.0 GB/s) at 8 GiB; expected >= 74%");
  EXPECT_EQ(judge({{1ull << 30, 184.5}}, h100).kind, Verdict::Kind::kLow);
  // 2 x RTX 2080 Ti: PCIe gen3 x16, no P2P on GeForce: through host memory, usually 6 of 15.75.
  Bound ti = deviceLinesBound("NVIDIA GeForce RTX 2080 Ti", 2, 1);
  EXPECT_NEAR(ti.busbw, 16 * kGen3Lane, 1e-9);
  EXPECT_EQ(ti.limit, "PCIe gen3 x16 (no P2P)");
  EXPECT_DOUBLE_EQ(expectedFraction(ti), 0.34);
  EXPECT_EQ(judge({{1 << 30, 4.0}}, ti).kind, Verdict::Kind::kLow);
  // The DGX-2's V100-SXM3: NVLink2 x6 through NVSwitch.
  EXPECT_DOUBLE_EQ(deviceLinesBound("Tesla V100-SXM3-32GB", 12, 1).busbw, 150);
  // Two nodes: the log does not name the NICs.
  EXPECT_FALSE(deviceLinesBound("NVIDIA H100 80GB HBM3", 16, 2).known());
  EXPECT_FALSE(deviceLinesBound("Some Future GPU", 8, 1).known());
}

TEST(Verdict, SmallSizesAndOverride) {
  Bound b = nvlinkBound("nvlink4", 18, true);
  EXPECT_EQ(judge({{1 << 20, 100}}, b).kind, Verdict::Kind::kNotJudged);
  EXPECT_EQ(judge({{1 << 30, 340}}, b, 0.9).kind, Verdict::Kind::kLow);
  EXPECT_EQ(percentOfPeak(225, 450), "50%");
  EXPECT_EQ(percentOfPeak(225, 0), "");
}

// --- imported logs (tests/data/samples) ---------------------------------------------------------

ImportedRun importSample(const std::string& name, size_t index = 0) {
  std::ifstream in(std::string(CB_SOURCE_DIR) + "/tests/data/samples/" + name);
  std::stringstream text;
  text << in.rdbuf();
  ImportOptions o;
  o.path = name;
  auto runs = parseImport(text.str(), ImportFormat::kAuto, o);
  return runs.at(index);
}

// The verdict note of a run judged by its own device lines.
// A verdict note without its "; for its kind: ..." part: these tests assert the physical bound
// (the part for its kind: test_reference.cpp, test_import_published.cpp).
std::string physicalPart(const std::string& note) {
  return note.substr(0, note.find("; for its kind: "));
}

std::string judgedByDeviceLines(ImportedRun& run) {
  auto m = logMachine(run);
  EXPECT_TRUE(m.has_value());
  judgeImportedRun(
      run,
      [&](const std::string&) {
        return deviceLinesBound(m->gpuModel, m->ranks, static_cast<int>(m->hosts.size()));
      },
      "device lines");
  return physicalPart(run.notes.back());
}

TEST(ImportedVerdicts, H100EightGpuAllreduceIsNormal) {
  auto run = importSample("nccltests_9_h100-1node-8gpu-g8-allreduce-nvls.txt");
  EXPECT_EQ(judgedByDeviceLines(run),
            "verdict allreduce nccl: best 368.69 GB/s busbw: normal: 82% of the NVLink4 x18 bound "
            "(450.0 GB/s) at 8 GiB; expected >= 74%");
  EXPECT_DOUBLE_EQ(run.results.back().peakGBps.value_or(0), 450);
  EXPECT_EQ(run.results.back().peakLimit, "NVLink4 x18");
  EXPECT_NE(run.run.environmentJson.find("\"verdict\":\"normal\""), std::string::npos);
}

TEST(ImportedVerdicts, OneH100AgainstItsMemory) {
  // This project's own one-GPU run: out of place 1495.0 GB/s algbw at 512 MiB against the H100
  // SXM's 3.35 TB/s / 2; the in-place rows (1e+06 GB/s: nothing moves) are not judged.
  auto run = importSample("nccltests_10_h100-1gpu-g1-allreduce-nccltests2.19.6.txt");
  EXPECT_EQ(judgedByDeviceLines(run),
            "verdict allreduce nccl: best 1495.00 GB/s algbw: normal: 89% of the HBM3 memory "
            "bound (1675.0 GB/s) at 512 MiB; expected >= 50%");
  for (const auto& r : run.results) {
    EXPECT_EQ(r.peakGBps.has_value(), r.placement == "out") << r.sizeBytes << " " << r.placement;
  }
}

TEST(ImportedVerdicts, RtxPcieWithoutP2pIsLow) {
  // 4.00 GB/s through host memory on PCIe gen3 x16: 25%, under the usual 6 of 15.75 GB/s.
  auto run = importSample("nccltests_6_2080ti-pcie-nop2p-2gpu-g2-allreduce.txt");
  EXPECT_EQ(judgedByDeviceLines(run),
            "verdict allreduce nccl: best 4.00 GB/s busbw: low: 25% of the PCIe gen3 x16 (no P2P) "
            "bound (15.8 GB/s) at 32 MiB; expected >= 34%");
}

TEST(ImportedVerdicts, Dgx2TwelveV100) {
  auto run = importSample("nccltests_3_dgx2-v100-12gpu-oldformat-allreduce.txt");
  EXPECT_EQ(judgedByDeviceLines(run),
            "verdict allreduce nccl: best 123.57 GB/s busbw: normal: 82% of the NVLink2 x6 bound "
            "(150.0 GB/s) at 8 GiB; expected >= 50%");
}

TEST(ImportedVerdicts, TwoNodeLogsNeedTheirMachine) {
  auto run = importSample("nccltests_4_h100-2node-slowpair-alltoall-sendrecv.txt");
  EXPECT_EQ(judgedByDeviceLines(run),
            "verdict alltoall nccl: no bound known for this hardware (the log spans several nodes "
            "and does not name their NICs (give --topology))");
  EXPECT_FALSE(run.results.front().peakGBps.has_value());
}

// An H100 node built as the DGX H100 is (its datasheet: 8 GPUs on NVSwitch, 18 NVLink4 links
// each, 8 single-port ConnectX-7 at 400 Gb/s for compute), one NIC under each GPU's PCIe switch.
// The sample cluster's own NICs are not published: this is the machine a user would pass with
// `import --topology`.
MachineTopology dgxH100() {
  MachineTopology t;
  t.host = "dgx-h100";
  t.nvswitches = {"0000:f0:00.0"};
  for (int i = 0; i < 8; ++i) {
    PciNode sw;
    sw.kind = PciNode::Kind::kBridge;
    sw.busId = fmt::format("0000:{:02x}:00.0", 0x10 * (i + 1));
    sw.vendorDevice = "1000:c030";
    sw.role = "switch";
    sw.numaNode = i / 4;
    const int swIndex = static_cast<int>(t.pci.size());
    t.pci.push_back(sw);
    PciNode gpu;
    gpu.busId = fmt::format("0000:{:02x}:00.0", 0x10 * (i + 1) + 1);
    gpu.role = "gpu";
    gpu.parent = swIndex;
    gpu.numaNode = i / 4;
    gpu.link.gbps = 63.0;
    t.pci.push_back(gpu);
    t.gpus.push_back({fmt::format("GPU{}", i), gpu.busId, "NVIDIA H100 80GB HBM3", "",
                      static_cast<int>(t.pci.size()) - 1});
    PciNode nic;
    nic.busId = fmt::format("0000:{:02x}:00.0", 0x10 * (i + 1) + 2);
    nic.role = "nic";
    nic.parent = swIndex;
    nic.numaNode = i / 4;
    t.pci.push_back(nic);
    Nic n;
    n.name = fmt::format("mlx5_{}", i);
    n.kind = "rdma";
    n.busId = nic.busId;
    n.ports = {{1, "ACTIVE", 400, "InfiniBand"}};
    n.pci = static_cast<int>(t.pci.size()) - 1;
    t.nics.push_back(n);
    t.nvlinks.push_back({gpu.busId, t.nvswitches[0], "nvswitch", 18, 4, 0});
  }
  return t;
}

std::string judgedOn(ImportedRun& run, const MachineTopology& machine) {
  auto m = logMachine(run);
  std::vector<MachineTopology> hosts;
  for (const auto& h : m->hosts) {
    hosts.push_back(machine);
    hosts.back().host = h;
  }
  auto placements = placeGpuRanks(machine, m->rankHosts, m->localRanks);
  judgeImportedRun(
      run,
      [&](const std::string& c) {
        return collectiveLinkBound(hosts, placements, parseCollective(c));
      },
      "topology");
  std::string out;
  for (const auto& n : run.notes) {
    if (n.rfind("verdict ", 0) == 0) out += physicalPart(n) + "\n";
  }
  return out;
}

TEST(ImportedVerdicts, SlowPairFlaggedOnItsMachine) {
  const auto machine = dgxH100();
  // 16 ranks on 2 hosts of 8 NICs of 50 GB/s: alltoall sends 8/16 of its data off the host and
  // counts 15/16 in busbw: 400 / 8 x 15/8 = 93.75 GB/s. sendrecv: the crossing pair's NIC, 50.
  auto slow = importSample("nccltests_4_h100-2node-slowpair-alltoall-sendrecv.txt", 0);
  EXPECT_EQ(judgedOn(slow, machine),
            "verdict alltoall nccl: best 16.13 GB/s busbw: low: 17% of the 8 x InfiniBand NDR "
            "bound (93.8 GB/s) at 512 MiB; expected >= 50%\n");
  auto normal = importSample("nccltests_5_h100-2node-normalpair-alltoall-sendrecv.txt", 0);
  EXPECT_EQ(judgedOn(normal, machine),
            "verdict alltoall nccl: best 75.34 GB/s busbw: normal: 80% of the 8 x InfiniBand NDR "
            "bound (93.8 GB/s) at 16 GiB; expected >= 50%\n");
  auto sendrecv = importSample("nccltests_5_h100-2node-normalpair-alltoall-sendrecv.txt", 1);
  EXPECT_EQ(judgedOn(sendrecv, machine),
            "verdict sendrecv nccl: best 29.06 GB/s busbw: normal: 58% of the InfiniBand NDR "
            "bound (50.0 GB/s) at 2 GiB; expected >= 50%\n");
}

}  // namespace
}  // namespace cb
