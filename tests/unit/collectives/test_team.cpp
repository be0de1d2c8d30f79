// The run's world knowledge, gathered once: the host/rank map, the team's transport cache (one
// set-up per transport per team, whatever the number of variants, sizes and placements), failed
// set-ups remembered, decorators, and sub-teams with their own communicator and transports.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "bench/Sweep.h"
#include "collectives/Team.h"
#include "collectives/transport/LocalWorld.h"
#include "core/Error.h"
#include "core/HostMap.h"

namespace cb {
namespace {

TEST(HostMap, LocalRanksAndHostsInOrderOfFirstAppearance) {
  HostMap m = HostMap::fromHosts({"b", "a", "b", "c", "a"});
  EXPECT_EQ(m.hosts, (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_EQ(m.hostIndex, (std::vector<int>{0, 1, 0, 2, 1}));
  EXPECT_EQ(m.localRank, (std::vector<int>{0, 0, 1, 0, 1}));
  EXPECT_EQ(m.localSize, (std::vector<int>{2, 2, 2, 1, 2}));
  EXPECT_FALSE(m.oneHost());
  EXPECT_TRUE(m.sameHost(0, 2));
  EXPECT_FALSE(m.sameHost(0, 1));
  EXPECT_EQ(m.hostList(), "b,a,c");
  HostMap sub = m.subset({4, 1, 3});
  EXPECT_EQ(sub.hostOfRank, (std::vector<std::string>{"a", "a", "c"}));
  EXPECT_EQ(sub.localRank, (std::vector<int>{0, 1, 0}));
}

TEST(HostMap, RanksPerHostOnlyForUniformConsecutiveBlocks) {
  EXPECT_EQ(HostMap::fromHosts({"a", "a", "b", "b"}).ranksPerHost(), 2);
  EXPECT_EQ(HostMap::fromHosts({"a", "a", "a"}).ranksPerHost(), 3);       // one host: one node
  EXPECT_EQ(HostMap::fromHosts({"a", "b", "a", "b"}).ranksPerHost(), 4);  // round robin
  EXPECT_EQ(HostMap::fromHosts({"a", "a", "b"}).ranksPerHost(), 3);       // uneven
  EXPECT_EQ(HostMap::fromHosts({"a", "b", "c"}).ranksPerHost(), 1);
}

TEST(HostMap, HostNameIsNeverEmpty) { EXPECT_FALSE(hostName().empty()); }

// The sweep's 3 variants x 5 sizes x 2 placements = 30 prepared points share one transport: the
// team sets "shm" up once (the decorator sees it once), and a second sweep on the same team sets
// up nothing.
TEST(Team, SweepSetsUpEachTransportOncePerTeam) {
  std::atomic<int> decorated{0};
  std::atomic<int> points{0};
  LocalWorld::run(3, [&](Communicator& comm) {
    Team team(comm);
    team.setTransportDecorator([&](const std::string& name, std::unique_ptr<Transport> t) {
      EXPECT_EQ(name, "shm");
      ++decorated;
      return t;
    });
    SweepOptions o;
    o.collectives = {Collective::kAllReduce};
    o.variants = {"ring", "tree", "oneshot"};
    o.variantOptions.schedule.transport = "shm";
    o.minBytes = 8;
    o.maxBytes = 128;  // 8, 16, 32, 64, 128
    o.iterations = 2;
    o.warmup = 1;
    o.timeoutSeconds = 60;
    SweepSink sink;
    sink.onPoint = [&](const ResultRecord& p) {
      EXPECT_TRUE(p.ok()) << p.variant << " " << p.sizeBytes << ": " << p.message;
      EXPECT_EQ(p.wrong, 0) << p.variant << " " << p.sizeBytes;
      ++points;
    };
    runSweep(team, o, sink);
    EXPECT_EQ(team.transportSetups(), 1);
    runSweep(team, o, sink);
    EXPECT_EQ(team.transportSetups(), 1);
  });
  EXPECT_EQ(points.load(), 2 * 3 * 5 * 2);
  EXPECT_EQ(decorated.load(), 3);  // once per rank
}

TEST(Team, TransportIsCachedByNameAndUnknownNamesAreRefusedWithoutASetUp) {
  LocalWorld::run(2, [&](Communicator& comm) {
    Team team(comm);
    Transport& a = team.transport("local");
    EXPECT_EQ(&team.transport("local"), &a);
    EXPECT_EQ(team.transportSetups(), 1);
    EXPECT_THROW(team.transport("carrier-pigeon"), UsageError);
    EXPECT_THROW(team.transport("mpi"), UsageError);  // needs an MPI world
    EXPECT_EQ(team.transportSetups(), 1);
    EXPECT_EQ(team.defaultTransport(), "local");
    team.closeTransports();
    team.transport("local");
    EXPECT_EQ(team.transportSetups(), 2);
  });
}

// A failed set-up is not retried per point: later calls throw the same error at once.
TEST(Team, FailedSetUpIsRememberedWithItsType) {
  LocalWorld::run(2, [&](Communicator& comm) {
    Team team(comm);
    team.setTransportDecorator(
        [](const std::string&, std::unique_ptr<Transport>) -> std::unique_ptr<Transport> {
          throw EnvironmentError("no such device here");
        });
    EXPECT_THROW(team.transport("local"), EnvironmentError);
    EXPECT_THROW(team.transport("local"), EnvironmentError);
    EXPECT_EQ(team.transportSetups(), 1);
  });
}

// Sub-teams: own communicator, host map taken from the parent, own transports; a pair is a
// two-rank team on its members only.
TEST(Team, SplitAndPairMakeTeamsWithTheirOwnTransports) {
  std::mutex m;
  std::vector<int> pairMembers;
  LocalWorld::run(4, [&](Communicator& comm) {
    Team team(comm);
    auto half = team.split(comm.rank() % 2, comm.rank());
    ASSERT_NE(half, nullptr);
    EXPECT_EQ(half->size(), 2);
    EXPECT_EQ(half->rank(), comm.rank() / 2);
    EXPECT_EQ(half->hosts().size(), 2);
    EXPECT_TRUE(half->hosts().oneHost());
    Transport& t = half->transport("local");
    EXPECT_EQ(t.size(), 2);
    // One exchange with the other member of the half: proves the sub-transport connects.
    int mine = comm.rank(), theirs = -1;
    const int peer = 1 - half->rank();
    SendOp s[] = {{peer, &mine, sizeof mine}};
    RecvOp r[] = {{peer, &theirs, sizeof theirs}};
    t.exchange(s, r, Deadline::after(60));
    EXPECT_EQ(theirs, comm.rank() ^ 2);
    EXPECT_EQ(team.transportSetups(), 0);
    auto pair = team.pair(3, 1);
    if (comm.rank() == 1 || comm.rank() == 3) {
      ASSERT_NE(pair, nullptr);
      EXPECT_EQ(pair->size(), 2);
      EXPECT_EQ(pair->rank(), comm.rank() == 3 ? 0 : 1);  // a is the pair's rank 0
      std::lock_guard lk(m);
      pairMembers.push_back(comm.rank());
    } else {
      EXPECT_EQ(pair, nullptr);
    }
    EXPECT_THROW(team.pair(1, 1), UsageError);
  });
  EXPECT_EQ(pairMembers.size(), 2u);
}

}  // namespace
}  // namespace cb
