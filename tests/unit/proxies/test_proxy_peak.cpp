// A proxy step's calls against their groups' bounds (training_proxies/ProxyPeak.h), on recorded
// machines of tests/data/topologies, every bound and time worked out by hand in the comments.
#include <gtest/gtest.h>

#include "common/RecordedMachines.h"
#include "topology/LinkBounds.h"
#include "topology/Placement.h"
#include "topology/Topology.h"
#include "training_proxies/ProxyPeak.h"

namespace cb::proxy {
namespace {

ProxyOptions hybrid(int dp, int tp, int pp) {
  ProxyOptions o;
  o.mode = ProxyMode::kHybrid;
  o.dp = dp;
  o.tp = tp;
  o.pp = pp;
  return o;  // layout tp, pp, dp: tp varies fastest
}

CallStat call(std::string group, std::string coll, uint64_t bytes, int nranks, int perStep,
              double seconds) {
  return {.group = std::move(group),
          .coll = std::move(coll),
          .bytes = bytes,
          .nranks = nranks,
          .callsPerStep = perStep,
          .seconds = seconds};
}

// dp 2 x tp 2 x pp 2 on 8 ranks, tp fastest: rank = tp + 2 pp + 4 dp. Rank 0's groups: tp {0,1},
// pp {0,2}, dp and ZeRO's sharded {0,4}, the first and last stage {0,2}, model parallel (its DP
// replica, by pp x tp + tp) {0,1,2,3}, the world; a parameter server has no member list.
TEST(ProxyPeak, GroupsOfRankZero) {
  const ProxyOptions o = hybrid(2, 2, 2);
  EXPECT_EQ(groupOfRankZero(o, 8, "tp"), (std::vector<int>{0, 1}));
  EXPECT_EQ(groupOfRankZero(o, 8, "pp"), (std::vector<int>{0, 2}));
  EXPECT_EQ(groupOfRankZero(o, 8, "dp"), (std::vector<int>{0, 4}));
  EXPECT_EQ(groupOfRankZero(o, 8, "sharded"), (std::vector<int>{0, 4}));
  EXPECT_EQ(groupOfRankZero(o, 8, "emb"), (std::vector<int>{0, 2}));
  EXPECT_EQ(groupOfRankZero(o, 8, "mp"), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(groupOfRankZero(o, 8, "world"), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(groupOfRankZero(o, 8, "ps").empty());
  // Another order: dp fastest (rank = dp + 2 tp + 4 pp): tp {0,2}, dp {0,1}, pp {0,4}.
  ProxyOptions d = o;
  d.layoutOrder = {"dp", "tp", "pp"};
  EXPECT_EQ(groupOfRankZero(d, 8, "tp"), (std::vector<int>{0, 2}));
  EXPECT_EQ(groupOfRankZero(d, 8, "dp"), (std::vector<int>{0, 1}));
  EXPECT_EQ(groupOfRankZero(d, 8, "pp"), (std::vector<int>{0, 4}));
}

// tp 2 inside each of two hosts, dp 2 across them, on the ConnectX-4 server with an EDR port:
//   tp allreduce of S = 8 MiB, host ranks of one host copying 5 GB/s each: allreduce moves
//     5(n-1)/n S = 2.5 S per rank against 2 x 5 GB/s of memory, busbw counts 2(n-1)/n = 1:
//     bound 1 x 10 / 2.5 = 4 GB/s; at it, 8 MiB x 1 / 4 GB/s = 2097.152 us;
//   dp allreduce of 16 MiB between ranks 0 and 2 on two hosts: one rank of the group per host on
//     its EDR NIC, 12.5 GB/s; 16 MiB x 1 / 12.5 GB/s = 1342.177 us, twice per step.
TEST(ProxyPeak, HybridOnTwoHosts) {
  auto t = cb::testing::twoConnectXHosts();
  t.edr();
  const auto& a = t.a;
  const auto& b = t.b;
  const auto& ranks = t.ranks;
  ProxyRun run;
  run.n = 4;
  run.calls = {call("tp", "allreduce", 8u << 20, 2, 1, 4000e-6),
               call("dp", "allreduce", 16u << 20, 2, 2, 2000e-6)};
  setCallPeaks(hybrid(2, 2, 1), {a, b}, ranks, 5, run);
  EXPECT_DOUBLE_EQ(run.calls[0].peak, 4);
  EXPECT_EQ(run.calls[0].peakLimit, "host memory");
  EXPECT_DOUBLE_EQ(run.calls[1].peak, 12.5);
  EXPECT_EQ(run.calls[1].peakLimit, "InfiniBand EDR");
  EXPECT_NEAR(run.commAtPeak * 1e6, 2097.152 + 2 * 1342.17728, 1e-6);
  EXPECT_NEAR(measuredCallSeconds(run) * 1e6, 4000 + 2 * 2000, 1e-9);

  // A group with no bound (the copy rate not measured) leaves the step's total unknown.
  setCallPeaks(hybrid(2, 2, 1), {a, b}, ranks, 0, run);
  EXPECT_EQ(run.calls[0].peak, 0);
  EXPECT_DOUBLE_EQ(run.calls[1].peak, 12.5);
  EXPECT_EQ(run.commAtPeak, -1);
}

// Two pipeline stages on GPUs 0 and 1 of the DGX-2: they meet through the NVSwitches, 6 NVLink2
// links x 25 GB/s = 150 GB/s; a 3 MB activation message at it takes 20 us, 8 messages a step.
TEST(ProxyPeak, PipelineMessagesOnADgx2) {
  const auto t = cb::testing::loadRecorded("nvidiaDGX2.xml");
  std::vector<RankPlacement> ranks;
  for (int i = 0; i < 2; ++i) ranks.push_back(placeThisRank(t, i, "dgx2", i, t.gpus[i].busId));
  ProxyOptions o;
  o.mode = ProxyMode::kPp;
  ProxyRun run;
  run.n = 2;
  run.calls = {call("pp", "send", 3000000, 2, 4, 30e-6), call("pp", "recv", 3000000, 2, 4, 30e-6)};
  setCallPeaks(o, {t}, ranks, 0, run);
  EXPECT_DOUBLE_EQ(run.calls[0].peak, 150);
  EXPECT_EQ(run.calls[0].peakLimit, "NVLink2 x6");
  EXPECT_NEAR(run.commAtPeak * 1e6, 8 * 20.0, 1e-9);
}

}  // namespace
}  // namespace cb::proxy
