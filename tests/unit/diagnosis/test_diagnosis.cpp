// Diagnosis: the circle method for every n from 2 to 17, the suspect rule (links, ranks, hosts,
// noise), fault-injection specs, links from imported pairwise logs, and `diag links` end to end in
// a local world with an injected slow link and slow rank.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "collectives/Team.h"
#include "collectives/transport/InjectTransport.h"
#include "collectives/transport/LocalWorld.h"
#include "collectives/transport/Transports.h"
#include "core/Error.h"
#include "diagnosis/DiagLinks.h"
#include "diagnosis/DiagReport.h"
#include "diagnosis/Diagnosis.h"
#include "results/import/Import.h"

namespace cb {
namespace {

TEST(CircleRounds, EveryPairOnceNoRankTwiceInARound) {
  for (int n = 2; n <= 17; ++n) {
    auto rounds = circleRounds(n);
    EXPECT_EQ(static_cast<int>(rounds.size()), n % 2 == 0 ? n - 1 : n) << "n=" << n;
    std::set<std::pair<int, int>> seen;
    for (const auto& round : rounds) {
      std::set<int> busy;
      EXPECT_EQ(static_cast<int>(round.size()), n / 2) << "n=" << n;
      for (const LinkPair& p : round) {
        EXPECT_LT(p.a, p.b);
        EXPECT_GE(p.a, 0);
        EXPECT_LT(p.b, n);
        EXPECT_TRUE(busy.insert(p.a).second) << "rank " << p.a << " twice in a round, n=" << n;
        EXPECT_TRUE(busy.insert(p.b).second) << "rank " << p.b << " twice in a round, n=" << n;
        EXPECT_TRUE(seen.insert({p.a, p.b}).second) << "pair twice, n=" << n;
      }
    }
    EXPECT_EQ(static_cast<int>(seen.size()), n * (n - 1) / 2) << "n=" << n;
  }
  EXPECT_TRUE(circleRounds(1).empty());
  EXPECT_TRUE(circleRounds(0).empty());
}

// The repeats of `diag links`: each schedule a tournament of its own, and (8 ranks and more) two
// links share a round in most of the 5 schedules for at most 1% of the pairs of links (a slow
// link's round-mates then reach their median over the repeats in its company almost never).
TEST(CircleRounds, RelabelledSchedulesChangeRoundMates) {
  constexpr size_t kSchedules = 5;
  for (int n = 2; n <= 17; ++n) {
    const auto rounds = circleRounds(n);
    const auto all = relabelledSchedules(rounds, n, kSchedules);
    ASSERT_EQ(all.size(), kSchedules * rounds.size()) << "n=" << n;
    std::map<std::pair<int, int>, int> together;  // two link ids -> schedules sharing a round
    for (size_t rep = 0; rep < kSchedules; ++rep) {
      std::set<std::pair<int, int>> seen;
      for (size_t r = 0; r < rounds.size(); ++r) {
        const auto& round = all[rep * rounds.size() + r];
        std::set<int> busy;
        for (const LinkPair& p : round) {
          EXPECT_LT(p.a, p.b);
          EXPECT_TRUE(busy.insert(p.a).second && busy.insert(p.b).second) << "n=" << n;
          EXPECT_TRUE(seen.insert({p.a, p.b}).second) << "pair twice, n=" << n;
        }
        for (size_t i = 0; i < round.size(); ++i) {
          for (size_t j = i + 1; j < round.size(); ++j) {
            ++together[std::minmax(round[i].a * n + round[i].b, round[j].a * n + round[j].b)];
          }
        }
      }
      EXPECT_EQ(static_cast<int>(seen.size()), n * (n - 1) / 2) << "n=" << n;
    }
    const int links = n * (n - 1) / 2;
    int most = 0;
    for (const auto& [pair, times] : together) most += 2 * times > static_cast<int>(kSchedules);
    // Below 8 ranks a round has too few links to change company (of 4 ranks, 0-1 always meets 2-3).
    if (n >= 8) EXPECT_LE(100 * most, links * (links - 1) / 2) << "n=" << n;
  }
  EXPECT_EQ(relabelledSchedules(circleRounds(1), 1, 3).size(), 0u);
}

TEST(CircleRounds, HalvesRoundIsDisjoint) {
  auto r = halvesRound(8);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0], (LinkPair{0, 4}));
  EXPECT_EQ(r[3], (LinkPair{3, 7}));
  EXPECT_EQ(halvesRound(5).size(), 2u);
}

LinkGraph ranks(int n) {
  LinkGraph g;
  for (int i = 0; i < n; ++i) g.endpointNames.push_back(std::to_string(i));
  return g;
}

// Every link of n ranks at `base` with multiplicative noise of `noise` (uniform +-), then the
// links in `slow` scaled by their factor.
std::vector<LinkValue> matrix(int n, double base, double noise, unsigned seed,
                              const std::vector<std::pair<LinkPair, double>>& slow = {}) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-noise, noise);
  std::vector<LinkValue> v;
  for (const auto& round : circleRounds(n)) {
    for (const LinkPair& p : round) {
      double x = base * (1 + u(rng));
      for (const auto& [sp, f] : slow) {
        if (sp == p) x *= f;
      }
      v.push_back({p, "", x});
    }
  }
  return v;
}

TEST(JudgeLinks, HealthyNoisyMatricesHaveNoSuspect) {
  // 3% uniform noise (at most ~6% below the median) is within the 7% gap: no seed, no size
  // gives a false suspect.
  for (int n : {3, 4, 5, 8, 16}) {
    for (unsigned seed = 0; seed < 50; ++seed) {
      LinkVerdict v = judgeLinks(matrix(n, 10, 0.03, seed), ranks(n), Better::kHigher);
      EXPECT_TRUE(v.healthy()) << "n=" << n << " seed=" << seed;
    }
  }
}

TEST(JudgeLinks, NamesTheSlowLinkOnly) {
  for (int n : {3, 4, 6, 8, 17}) {
    LinkVerdict v = judgeLinks(matrix(n, 10, 0.03, 1, {{{1, 2}, 0.5}}), ranks(n), Better::kHigher);
    ASSERT_EQ(v.suspects.size(), 1u) << "n=" << n;
    EXPECT_EQ(v.links[v.suspects[0]].pair, (LinkPair{1, 2}));
    EXPECT_TRUE(v.endpoints.empty()) << "n=" << n;
  }
}

TEST(JudgeLinks, LatencyLowerIsBetter) {
  auto m = matrix(8, 5, 0.03, 2, {{{0, 7}, 2.0}});  // twice the latency
  LinkVerdict v = judgeLinks(m, ranks(8), Better::kLower);
  ASSERT_EQ(v.suspects.size(), 1u);
  EXPECT_EQ(v.links[v.suspects[0]].pair, (LinkPair{0, 7}));
  EXPECT_NEAR(v.links[v.suspects[0]].relative, 0.5, 0.05);
}

TEST(JudgeLinks, SmallGapIsNotSuspectEvenWhenTight) {
  // A link 4% below a perfectly tight class is beyond any MAD bound but within the gap.
  LinkVerdict v = judgeLinks(matrix(8, 10, 0.0, 0, {{{2, 3}, 0.96}}), ranks(8), Better::kHigher);
  EXPECT_TRUE(v.healthy());
  LinkVerdict w = judgeLinks(matrix(8, 10, 0.0, 0, {{{2, 3}, 0.90}}), ranks(8), Better::kHigher);
  EXPECT_EQ(w.suspects.size(), 1u);
}

TEST(JudgeLinks, NamesTheSlowRankNotItsLinks) {
  for (int n : {4, 5, 8, 12}) {
    std::vector<std::pair<LinkPair, double>> slow;
    for (int r = 0; r < n; ++r) {
      if (r != 2) slow.push_back({{std::min(r, 2), std::max(r, 2)}, 0.4});
    }
    LinkVerdict v = judgeLinks(matrix(n, 10, 0.03, 3, slow), ranks(n), Better::kHigher);
    ASSERT_EQ(v.endpoints.size(), 1u) << "n=" << n;
    EXPECT_EQ(v.endpoints[0].name, "2");
    EXPECT_EQ(v.endpoints[0].slowLinks, n - 1);
    EXPECT_TRUE(v.suspects.empty()) << "n=" << n << ": links of a named rank are not listed";
  }
}

TEST(JudgeLinks, NamesTheSlowHostBeforeItsRanks) {
  // 5 hosts x 2 ranks; host h3's network links are slow, its own link is fine.
  const int n = 10;
  LinkGraph g = ranks(n);
  for (int r = 0; r < n; ++r) g.hostOf.push_back(fmt::format("h{}", r / 2));
  std::vector<LinkValue> v;
  for (const auto& round : circleRounds(n)) {
    for (const LinkPair& p : round) {
      bool same = p.a / 2 == p.b / 2;
      bool slow = !same && (p.a / 2 == 3 || p.b / 2 == 3);
      v.push_back({p, same ? "same-host" : "network", (same ? 40.0 : 10.0) * (slow ? 0.5 : 1)});
    }
  }
  LinkVerdict verdict = judgeLinks(v, g, Better::kHigher);
  ASSERT_EQ(verdict.endpoints.size(), 1u);
  EXPECT_EQ(verdict.endpoints[0].kind, "host");
  EXPECT_EQ(verdict.endpoints[0].name, "h3");
  EXPECT_TRUE(verdict.suspects.empty());
}

TEST(JudgeLinks, ClassesAreJudgedApart) {
  // Same-host links are 4x the network's: neither class is suspect of the other.
  std::vector<LinkValue> v;
  for (const auto& round : circleRounds(8)) {
    for (const LinkPair& p : round) {
      bool same = p.a / 4 == p.b / 4;
      v.push_back({p, same ? "same-host" : "network", same ? 40.0 : 10.0});
    }
  }
  EXPECT_TRUE(judgeLinks(v, ranks(8), Better::kHigher).healthy());
  // With one class for all, half the links would look slow; the rank rule keeps it from naming
  // a rank (every rank has the same mix), and the link rule needs the median: the network links
  // are the majority (16 of 28), so it is the same-host ones that are not suspect.
  for (auto& l : v) l.linkClass = "";
  EXPECT_TRUE(judgeLinks(v, ranks(8), Better::kHigher).suspects.empty());
}

TEST(JudgeLinks, TooSmallClassesAreNoted) {
  std::vector<LinkValue> v{{{0, 1}, "", 5}, {{0, 2}, "", 5}};
  LinkVerdict verdict = judgeLinks(v, ranks(3), Better::kHigher);
  EXPECT_TRUE(verdict.suspects.empty());
  EXPECT_FALSE(verdict.notes.empty());
}

TEST(Inject, ParsesAndRefuses) {
  InjectSpec s = parseInject("slow-link=3-1:4");
  EXPECT_EQ(s.kind, InjectSpec::Kind::kSlowLink);
  EXPECT_EQ(s.a, 1);
  EXPECT_EQ(s.b, 3);
  EXPECT_DOUBLE_EQ(s.factor, 4);
  InjectSpec r = parseInject("slow-rank=2:200us");
  EXPECT_EQ(r.kind, InjectSpec::Kind::kSlowRank);
  EXPECT_EQ(r.rank, 2);
  EXPECT_NEAR(r.delaySeconds, 200e-6, 1e-12);
  for (const char* bad :
       {"slow-link=1-1:2", "slow-link=1-2:1", "slow-link=1-2", "slow-link=a-2:2", "slow-rank=1:0",
        "slow-rank=1:fast", "slow-disk=1:2", "slow-link", "slow-link=1:2", "slow-link=-1-2:2"}) {
    EXPECT_THROW(parseInject(bad), UsageError) << bad;
  }
  std::vector<InjectSpec> specs{parseInject("slow-link=0-4:2")};
  EXPECT_THROW(validateInjects(specs, 4), UsageError);
  EXPECT_NO_THROW(validateInjects(specs, 5));
}

TEST(Inject, SlowLinkStretchesOnlyItsExchanges) {
  LocalWorld::run(3, [](Communicator& comm) {
    std::vector<InjectSpec> specs{parseInject("slow-link=0-1:5")};
    Team team(comm);
    team.setTransportDecorator(injectDecorator(specs));
    Transport& t = team.transport("local");
    EXPECT_EQ(t.name(), "local");
    // Each rank sleeps 2 ms before sending to its peer, so the exchange takes >= 2 ms; on the
    // slow link the injected wait makes it >= 5 x that.
    auto timed = [&](int peer) {
      char out = 1, in = 0;
      SendOp s{peer, &out, 1};
      RecvOp r{peer, &in, 1};
      double t0 = nowSeconds();
      t.exchange(std::span<const SendOp>(&s, 1), std::span<const RecvOp>(&r, 1),
                 Deadline::after(30));
      return nowSeconds() - t0;
    };
    comm.barrier(Deadline::after(30));
    if (comm.rank() == 2) return;
    const int peer = 1 - comm.rank();
    if (comm.rank() == 1) waitFor(2e-3);
    double slow = timed(peer);
    if (comm.rank() == 0) {
      EXPECT_GE(slow, 5 * 2e-3 * 0.9);
    }
  });
}

// What a verdict names: "link A-B" for suspect links, "rank R" for named endpoints, either metric.
std::set<std::string> namedIn(const DiagLinksResult& r) {
  std::set<std::string> named;
  for (const LinkVerdict* v : {&r.finalLatency, &r.finalBandwidth}) {
    for (const EndpointJudgement& e : v->endpoints) named.insert("rank " + e.name);
    for (size_t i : v->suspects) {
      named.insert(fmt::format("link {}-{}", v->links[i].pair.a, v->links[i].pair.b));
    }
  }
  return named;
}

TEST(DiagLinksLocal, FindsTheInjectedSlowLinkAndSlowRank) {
  LinkProbeOptions p;
  p.bandwidthBytes = 64 << 10;
  p.window = 4;
  p.bandwidthIters = 5;
  p.latencyIters = 30;
  p.latencyWarmup = 3;
  DiagLinksOptions o;
  o.probe = p;
  auto run = [&](int n, std::vector<InjectSpec> specs) {
    DiagLinksResult out;
    LocalWorld::run(n, [&](Communicator& comm) {
      // The injector is the team's transport decorator, as in the CLI.
      Team team(comm);
      team.setTransportDecorator(injectDecorator(specs));
      auto res = runDiagLinks(team, "local", o, [](int, int) { return std::string(); });
      // The matrix and the confirmation share the team's one transport.
      EXPECT_EQ(team.transportSetups(), 1);
      if (comm.rank() == 0) out = res;
    });
    return out;
  };
  // Exactly the injected fault is named, in one of 5 attempts: at these short counts a parallel
  // ctest on 2 loaded cores added a false suspect (or missed on one metric) about 1 run in 10,
  // and alone on this VM 8 thread ranks with a 2x link named nothing in all of 3 attempts in 2
  // of about 25 CI runs (sessions 18 and 20); the error rates at the CLI's counts are measured
  // apart (notes). A broken engine never passes.
  auto exactly = [&](int n, const char* inject, const std::set<std::string>& want) {
    std::set<std::string> got;
    for (int attempt = 0; attempt < 5 && got != want; ++attempt) {
      DiagLinksResult r = run(n, {parseInject(inject)});
      EXPECT_EQ(r.rounds, n % 2 == 0 ? n - 1 : n);
      EXPECT_EQ(r.repeats, 5);                 // schedules of the concurrent rounds
      EXPECT_GT(r.bandwidthWindowSeconds, 0);  // every pair of a round measured for as long
      EXPECT_EQ(r.links.size(), static_cast<size_t>(n * (n - 1) / 2));
      got = namedIn(r);
    }
    EXPECT_EQ(got, want) << inject;
  };
  exactly(6, "slow-link=1-4:8", {"link 1-4"});
  // Twice as slow among 8 thread ranks: hidden in concurrent rounds timed by count (a pair done
  // early left the slow one alone with the cores), found with common windows and 5 schedules.
  exactly(8, "slow-link=2-5:2", {"link 2-5"});
  // The slow rank is named (on latency, bandwidth or both), and none of its links.
  exactly(5, "slow-rank=3:2ms", {"rank 3"});
}

TEST(JudgeStragglers, LateArriverNamedLateFinisherMeasured) {
  // 5 ranks x 30 calls of ~1 ms in 8 steps: rank 2 posts 300 us late (the others wait for it and
  // all finish together); rank 4 arrives on time and finishes 150 us after the others.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> jitter(-2e-6, 2e-6);
  const int n = 5, iters = 30;
  std::vector<std::vector<double>> arrive(n), finish(n);
  for (int r = 0; r < n; ++r) {
    for (int i = 0; i < iters; ++i) {
      arrive[r].push_back((r == 2 ? 300e-6 : 1e-6) + jitter(rng));
      finish[r].push_back(1e-3 + 300e-6 + (r == 4 ? 150e-6 : 0) + jitter(rng));
    }
  }
  StraggleVerdict v = judgeStragglers(arrive, finish, 8);
  EXPECT_TRUE(v.ranks[2].lateArriver);
  EXPECT_EQ(v.ranks[2].lastToArrive, iters);
  EXPECT_NEAR(v.ranks[2].arriveLateUs, 299, 5);
  // A late finisher is not a late arriver; what it is, the two ring directions tell.
  EXPECT_FALSE(v.ranks[4].lateArriver);
  EXPECT_EQ(v.ranks[4].lastToFinish, iters);
  EXPECT_NEAR(v.ranks[4].finishLateUs, 150, 5);
  for (int r : {0, 1, 3}) EXPECT_FALSE(v.ranks[r].lateArriver);
  // Healthy: jitter only.
  for (int r = 0; r < n; ++r) {
    for (int i = 0; i < iters; ++i) {
      arrive[r][i] = 1e-6 + jitter(rng);
      finish[r][i] = 1e-3 + jitter(rng);
    }
  }
  for (const RankStraggle& r : judgeStragglers(arrive, finish, 8).ranks) {
    EXPECT_FALSE(r.lateArriver);
  }
}

// A ring of n ranks over 30 calls of 2 ms in each direction: `slowHop(from, to)` says whether
// the hop from -> to is slow. The rank receiving over a slow hop finishes last, `behind` seconds
// after the others (a tc-throttled mesh: about a step); a late arriver posts 1 ms late and every
// rank waits for it.
RingStraggleVerdict ringVerdict(int n, const std::function<bool(int, int)>& slowHop,
                                int lateRank = -1, double behind = 2e-3, int lateInTen = 10) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> jitter(-20e-6, 20e-6);
  const int iters = 30;
  std::vector<std::vector<double>> arrive[2], finish[2];
  for (int dir = 0; dir < 2; ++dir) {
    arrive[dir].assign(n, {});
    finish[dir].assign(n, {});
    for (int r = 0; r < n; ++r) {
      const int from = dir == 0 ? (r + n - 1) % n : (r + 1) % n;
      for (int i = 0; i < iters; ++i) {
        arrive[dir][r].push_back((r == lateRank ? 1e-3 : 1e-6) + jitter(rng));
        finish[dir][r].push_back(2e-3 + (lateRank >= 0 ? 1e-3 : 0) +
                                 (slowHop(from, r) && i % 10 < lateInTen ? behind : 0) +
                                 jitter(rng));
      }
    }
  }
  return judgeRingStragglers(arrive[0], finish[0], arrive[1], finish[1], 2 * (n - 1));
}

std::vector<std::string> named(const RingStraggleVerdict& v) {
  std::vector<std::string> out;
  for (const StraggleSuspect& s : v.suspects) out.push_back(s.name() + " " + s.what());
  return out;
}

TEST(JudgeRingStragglers, TheTwoDirectionsNameWhichEndIsSlow) {
  using V = std::vector<std::string>;
  for (int n : {3, 4, 5, 8}) {
    SCOPED_TRACE(n);
    EXPECT_TRUE(ringVerdict(n, [](int, int) { return false; }).healthy());
    // Rank 2's outgoing side (a throttled NIC): its hops to 3 (forward) and to 1 (backward).
    EXPECT_EQ(named(ringVerdict(n, [](int from, int) { return from == 2; })),
              V{"rank 2 sends slowly"});
    // Rank 1's incoming side.
    EXPECT_EQ(named(ringVerdict(n, [](int, int to) { return to == 1; })),
              V{"rank 1 receives slowly"});
    // The link between 0 and 1, both ways.
    EXPECT_EQ(named(ringVerdict(n, [](int a, int b) { return a + b == 1; })),
              V{"link 0-1 slow both ways"});
    // One way only: 1 -> 2 (the forward ring's hop).
    EXPECT_EQ(named(ringVerdict(n, [](int a, int b) { return a == 1 && b == 2; })),
              V{"link 1-2 slow 1 -> 2"});
    // A late arriver is named for that alone, not for the hops it slows.
    EXPECT_EQ(named(ringVerdict(
                  n, [](int, int) { return false; }, 2)),
              V{"rank 2 arrives late"});
  }
  // n = 4: the rank opposite a slow sender's successors is not mistaken for it.
  EXPECT_EQ(named(ringVerdict(4, [](int from, int) { return from == 0; })),
            V{"rank 0 sends slowly"});
}

TEST(JudgeRingStragglers, AlwaysLastButOnlyALittleLateIsHealthy) {
  // 4 ranks, 6 steps of a 2 ms call: a step is 333 us. Healthy ranks sharing 2 cores made a
  // neighbour pair the last finishers in most calls, up to 0.28 of a step late: not named.
  // Throttled, each was 0.41 of a step late or more.
  auto link01 = [](int a, int b) { return a + b == 1; };
  EXPECT_TRUE(ringVerdict(4, link01, -1, 0.25 * 2e-3 / 6).healthy());
  EXPECT_EQ(named(ringVerdict(4, link01, -1, 0.35 * 2e-3 / 6)),
            std::vector<std::string>{"link 0-1 slow both ways"});
}

TEST(JudgeRingStragglers, ALateReceiverNeedNotBeLastInEveryCall) {
  // Under a parallel build a throttled receiver was last in 72% and 56% of the calls, well over a
  // step late: named. Last in under half of them: not.
  auto into1 = [](int, int to) { return to == 1; };
  EXPECT_EQ(named(ringVerdict(4, into1, -1, 2e-3, 6)),
            std::vector<std::string>{"rank 1 receives slowly"});
  EXPECT_TRUE(ringVerdict(4, into1, -1, 2e-3, 4).healthy());
}

TEST(JudgeRingStragglers, AReceiverTiedForLastWithTheRankItFeedsReceivesSlowly) {
  // The tc mesh with rank 1's incoming side throttled (netns.ranks_receive, 2026-11-27): forward
  // rank 1 finished a step after the others; backward, rank 1 and rank 0 (the rank it forwards to)
  // both a step after ranks 2 and 3, rank 0 a few microseconds after rank 1 in most calls. Counting
  // only the last finisher read that as the link 0-1 (x forward, x - 1 backward) in 11 of 12 runs.
  const int n = 4, iters = 30;
  const double call = 2e-3, step = call / 6;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> jitter(-5e-6, 5e-6);
  std::vector<std::vector<double>> arrive(n, std::vector<double>(iters, 1e-6)), fwd(n), bwd(n);
  for (int r = 0; r < n; ++r) {
    for (int i = 0; i < iters; ++i) {
      fwd[r].push_back(call + (r == 1 ? step : 0) + jitter(rng));
      const double tie = r == 1 ? step : r == 0 ? step + (i % 10 < 7 ? 3e-6 : -3e-6) : 0;
      bwd[r].push_back(call + tie + jitter(rng) * 0.1);
    }
  }
  const RingStraggleVerdict v = judgeRingStragglers(arrive, fwd, arrive, bwd, 6);
  EXPECT_EQ(named(v), std::vector<std::string>{"rank 1 receives slowly"});
  EXPECT_LT(v.backward.ranks[1].lastToFinish, iters / 2);  // last alone in under half
  EXPECT_EQ(v.backward.ranks[1].tiedLastToFinish, iters);
  EXPECT_EQ(v.backward.tiedLast[0][1], iters);
  // The same calls with rank 1 a step ahead of rank 0 backward are the link 0-1: a link's two
  // ends are never tied.
  for (int i = 0; i < iters; ++i) bwd[1][i] = call + jitter(rng);
  EXPECT_EQ(named(judgeRingStragglers(arrive, fwd, arrive, bwd, 6)),
            std::vector<std::string>{"link 0-1 slow both ways"});
}

TEST(PairwiseLogs, RealClusterLogsNameTheSlowPairs) {
  // Three real logs of one H100 cluster: a slow pair, a healthy pair, and one whose sendrecv test
  // was cut short (a table without rows): that test is a failed link, its alltoall still counts.
  std::vector<PairwiseInput> inputs;
  for (const char* f :
       {"nccl_N2_G1_cnode2-001_cnode2-004.log", "nccl_N2_G1_cnode2-001_cnode2-002.log",
        "nccl_N2_G1_cnode2-002_cnode2-008.log"}) {
    std::ifstream in(std::string(CB_SOURCE_DIR) + "/tests/data/diag/cluster00-g1/" + f);
    ASSERT_TRUE(in) << f;
    std::ostringstream text;
    text << in.rdbuf();
    ImportOptions io;
    io.path = f;
    inputs.push_back({f, parsePairwiseLog(text.str(), io)});
  }
  PairwiseLogs logs = pairwiseLinks(inputs);
  ASSERT_EQ(logs.hosts.size(), 4u);
  ASSERT_EQ(logs.matrices.size(), 2u);
  EXPECT_EQ(logs.matrices[0].collective, "alltoall");
  EXPECT_EQ(logs.matrices[1].collective, "sendrecv");
  ASSERT_EQ(logs.matrices[0].links.size(), 3u);
  EXPECT_NEAR(logs.matrices[0].links[0].value, 5.764, 0.01);  // "Avg bus bandwidth: 5.76435"
  EXPECT_GT(logs.matrices[0].links[1].value, 13);
  EXPECT_FALSE(logs.matrices[0].links[2].failed);
  int failed = 0;
  for (const PairwiseLink& l : logs.matrices[1].links) failed += l.failed;
  EXPECT_EQ(failed, 1);
}

TEST(PairwiseLogs, NeedsTwoHostsPerLog) {
  ImportedRun one;
  one.run.hosts = "a";
  EXPECT_THROW(pairwiseLinks({{"x.log", {one}}}), UsageError);
}

TEST(DiagReport, VariantRoundTripsAndHtmlMarksSuspects) {
  std::string src, a, b;
  ASSERT_TRUE(parseDiagVariant(diagVariant("nccl-tests", "cnode2-001", "cnode2-004"), src, a, b));
  EXPECT_EQ(src, "nccl-tests");
  EXPECT_EQ(a, "cnode2-001");
  EXPECT_EQ(b, "cnode2-004");
  std::vector<ResultRecord> rs;
  for (auto [x, y, v] : {std::tuple{0, 1, 10.0}, {0, 2, 10.0}, {1, 2, 4.0}}) {
    ResultRecord r;
    r.collective = "diag-bibw";
    r.variant = diagVariant("shm", std::to_string(x), std::to_string(y));
    r.busbw = v;
    if (v < 5) r.message = "suspect link 1-2 (0.40 x class median)";
    rs.push_back(r);
  }
  std::string html = diagHtmlSection(rs);
  EXPECT_NE(html.find("<svg class=\"heatmap\""), std::string::npos);
  EXPECT_NE(html.find("class=\"cell suspect\""), std::string::npos);
  EXPECT_NE(html.find("suspect link 1-2"), std::string::npos);
  EXPECT_EQ(diagHtmlSection({}), "");
}

// A world too small to judge anything is refused in one line, before anything is measured.
TEST(DiagRequire, AWorldTooSmallIsOneUsageLine) {
  EXPECT_NO_THROW(requireRanks(3, 3, "diag links", "a link is judged against the others"));
  try {
    requireRanks(2, 4, "diag bisect", "two halves of 2");
    FAIL() << "2 ranks accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "diag bisect needs at least 4 ranks (this world has 2): two halves of 2");
  }
}

}  // namespace
}  // namespace cb
