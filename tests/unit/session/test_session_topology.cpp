// The run's topology in the session (session/RunSession.h): every run gathers it once, puts the
// link class of every rank pair into the team's host map (sub-teams carry their part, so engines
// that take a Team ask for linkClass(a, b)), adds the run-wide parts to the fingerprint and
// stores it with the run; --bind places the local world's rank threads.
#include <gtest/gtest.h>
#include <sched.h>

#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/TempDir.h"
#include "core/HostMap.h"
#include "core/LinkClass.h"
#include "results/Store.h"
#include "session/RunSession.h"
#include "session/World.h"

namespace cb {
namespace {

TEST(HostMapLinks, WithoutATopologyTheHostsDecide) {
  HostMap m = HostMap::fromHosts({"a", "a", "b"});
  EXPECT_EQ(m.linkClass(1, 1), LinkClass::kSelf);
  EXPECT_EQ(m.linkClass(0, 1), LinkClass::kCrossNuma);  // one host, placement unknown
  EXPECT_EQ(m.linkClass(1, 2), LinkClass::kNetwork);
}

TEST(HostMapLinks, SubsetKeepsThePairsOfItsRanks) {
  HostMap m = HostMap::fromHosts({"a", "a", "a", "b"});
  using L = LinkClass;
  m.links = {L::kSelf,    L::kNvlink,    L::kNuma,      L::kNetwork,  //
             L::kNvlink,  L::kSelf,      L::kCrossNuma, L::kNetwork,  //
             L::kNuma,    L::kCrossNuma, L::kSelf,      L::kNetwork,  //
             L::kNetwork, L::kNetwork,   L::kNetwork,   L::kSelf};
  EXPECT_EQ(m.linkClass(0, 1), L::kNvlink);
  EXPECT_EQ(m.linkClass(2, 1), L::kCrossNuma);
  HostMap sub = m.subset({2, 0, 3});
  ASSERT_EQ(sub.links.size(), 9u);
  EXPECT_EQ(sub.linkClass(0, 1), L::kNuma);     // parent 2 - 0
  EXPECT_EQ(sub.linkClass(1, 2), L::kNetwork);  // parent 0 - 3
  EXPECT_EQ(sub.linkClass(2, 2), L::kSelf);
  EXPECT_EQ(linkClassCounts(m.links), "1 nvlink, 1 numa, 1 cross-numa, 3 network");
}

TEST(SessionTopology, GatheredOnceAndReachableFromTheTeam) {
  TempDir dir;
  SessionOptions o;
  o.dbPath = dir.file("cb.db");
  o.world.np = 3;
  std::mutex m;
  std::string environment, topology;
  int64_t runId = 0;
  int code = runMeasuringCommand(o, [&](RunSession& s) {
    const RunTopology& t = s.topology();
    EXPECT_EQ(t.placements.size(), 3u);
    EXPECT_EQ(t.hosts.size(), 1u);
    EXPECT_EQ(t.links, s.team().hosts().links);
    for (int a = 0; a < 3; ++a) {
      EXPECT_EQ(s.linkClass(a, a), LinkClass::kSelf);
      for (int b = 0; b < 3; ++b) {
        EXPECT_EQ(s.linkClass(a, b), s.linkClass(b, a));
        // Threads of one process on one host: never across the network.
        if (a != b) {
          EXPECT_NE(s.linkClass(a, b), LinkClass::kNetwork);
        }
      }
    }
    // A sub-team made after the session carries its part of the matrix.
    auto pair = s.team().pair(2, 0);
    if (pair) {
      EXPECT_EQ(pair->hosts().linkClass(0, 1), s.linkClass(2, 0));
    }
    s.beginRun();
    if (s.root()) {
      std::lock_guard lk(m);
      environment = s.record().environmentJson;
      runId = s.runId();
    }
    return RunOutcome{};
  });
  EXPECT_EQ(code, 0);
  auto fp = nlohmann::json::parse(environment)["comparable"];
  for (const char* key : {"compiler", "build_type", "gpu_model", "gpu_count", "driver",
                          "ranks_per_host", "topology"}) {
    EXPECT_TRUE(fp.contains(key)) << key;
  }
  EXPECT_EQ(fp["ranks_per_host"], "3");
  topology = Store::open(o.dbPath, false).runTopology(runId);
  auto stored = nlohmann::json::parse(topology);
  EXPECT_EQ(stored["placements"].size(), 3u);
  EXPECT_EQ(stored["link_classes"].size(), 3u);
}

TEST(SessionTopology, BindPlacesEveryRankThreadOnItsCore) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  WorldOptions o;
  o.np = 2;
  o.bind = BindPolicy::kCore;
  std::mutex m;
  std::vector<int> counts;
  runInWorld(o, [&](Communicator&) {
    cpu_set_t mine;
    ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof mine, &mine), 0);
    std::lock_guard lk(m);
    counts.push_back(CPU_COUNT(&mine));
  });
  ASSERT_EQ(counts.size(), 2u);
  const int pusPerCore = liveTopology().pus / std::max(1, liveTopology().cores);
  for (int c : counts) EXPECT_LE(c, pusPerCore);
  // The calling thread is not bound (only the rank threads are).
  cpu_set_t after;
  ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

}  // namespace
}  // namespace cb
