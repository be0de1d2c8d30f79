// The alpha-beta cost each hand-written algorithm states (its file's prose and the table's cost
// string) against what its schedules do: rankCost() of every rank (the worst rank is the one the
// formula describes; messages exactly, bytes within rounding), and for the algorithms whose
// critical path crosses ranks (trees, pipelines) a small rendezvous simulation of all ranks'
// schedules, which sees the waits that one rank's cost cannot.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "collectives/algorithms/Algorithms.h"
#include "common/ReferenceRun.h"
#include "core/Error.h"

namespace cb {
namespace {

using test::findAlgorithm;

// The worst rank's value of each component.
Cost worstRankCost(const AlgorithmInfo& algo, int n, const CollArgs& args,
                   const AlgoOptions& opts = {}) {
  Cost worst;
  for (int r = 0; r < n; ++r) {
    Cost c = rankCost(algo.build(r, n, args, opts), dataTypeSize(args.dtype));
    worst.messages = std::max(worst.messages, c.messages);
    worst.bytes = std::max(worst.bytes, c.bytes);
    worst.reducedBytes = std::max(worst.reducedBytes, c.reducedBytes);
  }
  return worst;
}

struct Formula {
  double messages;
  double bytes;    // multiples of S
  double reduced;  // multiples of S
};

void expectCost(Collective coll, std::string_view name, int n, size_t count, Formula f,
                const AlgoOptions& opts = {}) {
  CollArgs args{coll, DataType::kFloat, RedOp::kSum, 0, count};
  const double S = static_cast<double>(algBytes(args, n));
  Cost c = worstRankCost(findAlgorithm(coll, name), n, args, opts);
  const double slack = 4.0 * n * n;  // a few elements per message of rounding, at most
  EXPECT_EQ(c.messages, f.messages) << collectiveName(coll) << "/" << name << " n=" << n;
  EXPECT_NEAR(c.bytes, f.bytes * S, slack) << collectiveName(coll) << "/" << name << " n=" << n;
  EXPECT_NEAR(c.reducedBytes, f.reduced * S, slack)
      << collectiveName(coll) << "/" << name << " n=" << n;
}

TEST(AlgorithmCost, AllReduceMatchesTheStatedFormulas) {
  for (int n : {2, 4, 8, 16}) {
    const double lg = std::log2(n), dn = n;
    const size_t count = 48 * 1024;  // divisible by every n here
    const auto ar = Collective::kAllReduce;
    expectCost(ar, "ring", n, count, {2 * (dn - 1), 2 * (dn - 1) / dn, (dn - 1) / dn});
    expectCost(ar, "recdoubling", n, count, {lg, lg, lg});
    expectCost(ar, "rabenseifner", n, count, {2 * lg, 2 * (dn - 1) / dn, (dn - 1) / dn});
    expectCost(ar, "tree", n, count, {2 * lg, 2 * lg, lg});
    expectCost(ar, "oneshot", n, count, {1, 1, dn - 1});
    expectCost(ar, "twoshot", n, count, {2, 2 / dn, (dn - 1) / dn});
  }
  // Not a power of two: the fold adds 2a + 2S*b + S*g (p = 4 for n = 6).
  const size_t count = 12 * 1024;
  expectCost(Collective::kAllReduce, "recdoubling", 6, count, {2 + 2, 2 + 2, 2 + 1});
  expectCost(Collective::kAllReduce, "rabenseifner", 6, count,
             {2 * 2 + 2, 2 * 3.0 / 4 + 2, 3.0 / 4 + 1});
  expectCost(Collective::kAllReduce, "tree", 6, count, {6, 6, 3});  // ceil(lg 6) = 3
}

TEST(AlgorithmCost, HierarchicalMatchesTheStatedFormula) {
  const size_t count = 48 * 1024;
  for (auto [n, L] :
       {std::pair{16, 4}, std::pair{8, 2}, std::pair{16, 8}, std::pair{8, 1}, std::pair{8, 8}}) {
    const double N = n / L, dL = L;
    AlgoOptions o;
    o.ranksPerNode = L;
    // Intra-node rounds vanish when a node is one rank: then it is the ring over N nodes.
    const double intra = L > 1 ? 2 : 0;
    expectCost(Collective::kAllReduce, "hierarchical", n, count,
               {intra + 2 * (N - 1), intra / dL + 2 * (N - 1) / (N * dL),
                (dL - 1) / dL + (N - 1) / (N * dL)},
               o);
  }
  // ranksPerNode 0 (one node) is two-shot.
  expectCost(Collective::kAllReduce, "hierarchical", 8, count, {2, 2.0 / 8, 7.0 / 8});
}

TEST(AlgorithmCost, AllGatherAndReduceScatterMatchTheStatedFormulas) {
  for (int n : {2, 4, 8, 16}) {
    const double lg = std::log2(n), dn = n;
    const size_t m = 1024;
    const auto ag = Collective::kAllGather, rs = Collective::kReduceScatter;
    expectCost(ag, "ring", n, m, {dn - 1, (dn - 1) / dn, 0});
    expectCost(ag, "recdoubling", n, m, {lg, (dn - 1) / dn, 0});
    expectCost(ag, "bruck", n, m, {lg, (dn - 1) / dn, 0});
    expectCost(ag, "direct", n, m, {1, 1 / dn, 0});
    expectCost(rs, "ring", n, m, {dn - 1, (dn - 1) / dn, (dn - 1) / dn});
    expectCost(rs, "rechalving", n, m, {lg, (dn - 1) / dn, (dn - 1) / dn});
    expectCost(rs, "direct", n, m, {1, 1 / dn, (dn - 1) / dn});
  }
  // Bruck needs no fold: ceil(lg n) rounds and (n-1)/n S for any n.
  expectCost(Collective::kAllGather, "bruck", 6, 1024, {3, 5.0 / 6, 0});
  expectCost(Collective::kAllGather, "bruck", 13, 1024, {4, 12.0 / 13, 0});
  // The fold (p = 4): lg(p) + 2 rounds; n = 6 and 7 reach the stated bound ((2p-1)/n + 1) S of
  // bytes and ((2p-2)/n + 1) S reduced, n = 5 stays below it.
  for (int n : {6, 7}) {
    const double dn = n;
    expectCost(Collective::kAllGather, "recdoubling", n, 1024, {4, 7 / dn + 1, 0});
    expectCost(Collective::kReduceScatter, "rechalving", n, 1024, {4, 7 / dn + 1, 6 / dn + 1});
  }
  expectCost(Collective::kAllGather, "recdoubling", 5, 1024, {4, 11.0 / 5, 0});
}

TEST(AlgorithmCost, BroadcastPerRankCost) {
  for (int n : {2, 4, 8, 16}) {
    expectCost(Collective::kBroadcast, "binomial", n, 4096, {std::log2(n), std::log2(n), 0});
    // One rank of the chain sees its own k + 1 rounds of one chunk (k for n = 2).
    AlgoOptions o;
    o.chunkElements = 256;
    const double k = 4096 / 256;
    const double rounds = n > 2 ? k + 1 : k;
    expectCost(Collective::kBroadcast, "chain", n, 4096, {rounds, rounds / k, 0}, o);
  }
}

// Rendezvous timing of all ranks' schedules: a phase starts when the rank's previous phase ends;
// a message completes alpha + beta * bytes after both its send and its receive are posted; a
// phase ends when its last message does. Returns the time the last rank finishes.
double simulate(const std::vector<Schedule>& s, size_t elementSize, double alpha, double beta) {
  const int n = static_cast<int>(s.size());
  std::vector<size_t> phase(n, 0), outstanding(n, 0);
  std::vector<double> clock(n, 0), end(n, 0);
  std::vector<bool> entered(n, false);
  struct Posted {
    size_t count;
    double at;
  };
  std::map<std::pair<int, int>, std::pair<std::deque<Posted>, std::deque<Posted>>> channels;
  while (true) {
    bool progress = false, done = true;
    for (int r = 0; r < n; ++r) {
      if (phase[r] >= s[r].phases.size()) continue;
      done = false;
      if (entered[r]) continue;
      entered[r] = true;
      progress = true;
      end[r] = clock[r];
      for (const auto& st : s[r].phases[phase[r]].steps) {
        if (st.kind == StepKind::kSend) {
          channels[{r, st.peer}].first.push_back({st.src.count, clock[r]});
          ++outstanding[r];
        } else if (st.kind == StepKind::kRecv || st.kind == StepKind::kRecvReduce) {
          channels[{st.peer, r}].second.push_back({st.dst.count, clock[r]});
          ++outstanding[r];
        }
      }
    }
    if (done) break;
    for (auto& [key, ch] : channels) {
      auto& [sends, recvs] = ch;
      while (!sends.empty() && !recvs.empty()) {
        double t = std::max(sends.front().at, recvs.front().at) + alpha +
                   beta * static_cast<double>(sends.front().count * elementSize);
        end[key.first] = std::max(end[key.first], t);
        end[key.second] = std::max(end[key.second], t);
        --outstanding[key.first];
        --outstanding[key.second];
        sends.pop_front();
        recvs.pop_front();
        progress = true;
      }
    }
    for (int r = 0; r < n; ++r) {
      if (entered[r] && outstanding[r] == 0) {
        entered[r] = false;
        clock[r] = end[r];
        ++phase[r];
        progress = true;
      }
    }
    if (!progress) throw InternalError("simulation deadlocked");
  }
  return *std::max_element(clock.begin(), clock.end());
}

double criticalPath(Collective coll, std::string_view name, int n, size_t count,
                    const AlgoOptions& opts, double alpha, double beta, int root = 0) {
  CollArgs args{coll, DataType::kFloat, RedOp::kSum, root, count};
  std::vector<Schedule> s;
  for (int r = 0; r < n; ++r) s.push_back(findAlgorithm(coll, name).build(r, n, args, opts));
  return simulate(s, 4, alpha, beta);
}

TEST(AlgorithmCost, CriticalPathsAcrossRanks) {
  const double a = 5.0, b = 0.01;
  for (int n : {2, 4, 8, 16}) {
    const double lg = std::log2(n);
    const size_t count = 4096;
    const double S = 4.0 * count;
    // Pipelined chain: (n - 2 + k)(a + C b), whatever the root.
    AlgoOptions o;
    o.chunkElements = 256;
    const double k = 16, C = 4.0 * 256;
    for (int root : {0, n - 1}) {
      EXPECT_NEAR(criticalPath(Collective::kBroadcast, "chain", n, count, o, a, b, root),
                  (n - 2 + k) * (a + C * b), 1e-6)
          << "n=" << n << " root=" << root;
    }
    EXPECT_NEAR(criticalPath(Collective::kBroadcast, "binomial", n, count, {}, a, b),
                lg * (a + S * b), 1e-6);
    EXPECT_NEAR(criticalPath(Collective::kAllReduce, "tree", n, count, {}, a, b),
                2 * lg * (a + S * b), 1e-6);
    EXPECT_NEAR(criticalPath(Collective::kAllReduce, "ring", n, count, {}, a, b),
                2 * (n - 1) * (a + S / n * b), 1e-6);
    EXPECT_NEAR(criticalPath(Collective::kAllReduce, "rabenseifner", n, count, {}, a, b),
                2 * lg * a + 2.0 * (n - 1) / n * S * b, 1e-6);
  }
  // Hierarchical, 4 nodes of 4: 2N rounds, as the per-rank count says (all ranks in lockstep).
  AlgoOptions o;
  o.ranksPerNode = 4;
  const double S = 4.0 * 4096;
  EXPECT_NEAR(criticalPath(Collective::kAllReduce, "hierarchical", 16, 4096, o, a, b),
              8 * a + (2.0 / 4 + 2.0 * 3 / 16) * S * b, 1e-6);
}

}  // namespace
}  // namespace cb
