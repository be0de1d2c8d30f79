// Every hand-written algorithm on the reference executor: n = 1..17 (primes included), awkward
// counts (0, 1, n-1, n+1, a prime), every dtype and every op valid for it, in and out of place,
// checked bit for bit against the verification pattern.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "bench/Verify.h"
#include "collectives/algorithms/Algorithms.h"
#include "collectives/schedule/ReferenceExecutor.h"
#include "common/ReferenceRun.h"
#include "core/Error.h"

namespace cb {
namespace {

std::vector<size_t> countsFor(int n) {
  std::vector<size_t> c{0, 1, static_cast<size_t>(n > 1 ? n - 1 : 2), static_cast<size_t>(n + 1),
                        1009};
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

// Runs one algorithm for one configuration; "" for a configuration it does not support, else
// what went wrong ("" when nothing did).
std::string runCase(const AlgorithmInfo& algo, int n, const CollArgs& args, bool inPlace,
                    uint64_t seed) {
  const AlgoOptions opts;
  if (algo.unsupported && algo.unsupported(n, args, opts)) return "";
  return test::runOnReference(algo, n, args, opts, inPlace, seed);
}

TEST(Schedules, EveryAlgorithmEveryRankCountAndPlacement) {
  int cases = 0;
  for (const auto& algo : algorithms()) {
    for (int n = 1; n <= 17; ++n) {
      for (size_t count : countsFor(n)) {
        for (bool inPlace : {false, true}) {
          if (inPlace && !hasInPlace(algo.coll)) continue;
          CollArgs args{algo.coll, DataType::kInt32, RedOp::kSum, 0, count};
          auto err = runCase(algo, n, args, inPlace, 1 + count);
          ++cases;
          EXPECT_EQ(err, "") << collectiveName(algo.coll) << "/" << algo.name << " n=" << n
                             << " count=" << count << (inPlace ? " in-place" : " out-of-place");
        }
      }
    }
  }
  EXPECT_GT(cases, 100);
}

TEST(Schedules, EveryAlgorithmEveryDtypeAndOp) {
  for (const auto& algo : algorithms()) {
    for (int n : {1, 2, 3, 5, 8}) {
      for (DataType t : allDataTypes()) {
        std::vector<RedOp> ops{RedOp::kSum};
        if (hasReduction(algo.coll)) {
          ops = {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin,
                 RedOp::kAvg, RedOp::kBand, RedOp::kBor, RedOp::kBxor};
        }
        for (RedOp op : ops) {
          if (!redOpValidFor(op, t)) continue;
          CollArgs args{algo.coll, t, op, 0, 37};
          for (bool inPlace : {false, true}) {
            if (inPlace && !hasInPlace(algo.coll)) continue;
            EXPECT_EQ(runCase(algo, n, args, inPlace, 7), "")
                << collectiveName(algo.coll) << "/" << algo.name << " n=" << n << " "
                << dataTypeName(t) << " " << redOpName(op) << (inPlace ? " in" : " out");
          }
        }
      }
    }
  }
}

// Two ranks of a 4-int allreduce whose phases `write(builder, rank)` builds: the reference
// executor must refuse them.
template <class Write>
void expectReferenceRefuses(Write write) {
  CollArgs args{Collective::kAllReduce, DataType::kInt32, RedOp::kSum, 0, 4};
  std::vector<Schedule> s(2);
  for (int r = 0; r < 2; ++r) {
    ScheduleBuilder b(4, 4);
    write(b, r);
    s[r] = std::move(b).build();
  }
  std::vector<RankBuffers> bufs(2);
  for (auto& b : bufs) {
    b.send.resize(16);
    b.recv.resize(16);
  }
  EXPECT_THROW(runReference(s, args, bufs), Error);
}

TEST(ReferenceExecutor, DetectsDeadlock) {
  // Both ranks receive first in their own phase: with rendezvous semantics nobody sends.
  expectReferenceRefuses([](ScheduleBuilder& b, int r) {
    b.newPhase().steps.push_back(recvStep(1 - r, {BufferRef::kRecv, 0, 4}));
    b.newPhase().steps.push_back(sendStep(1 - r, {BufferRef::kSend, 0, 4}));
  });
}

TEST(ReferenceExecutor, DetectsSizeMismatchAndBounds) {
  expectReferenceRefuses([](ScheduleBuilder& b, int r) {
    auto& ph = b.newPhase();
    ph.steps.push_back(sendStep(1 - r, {BufferRef::kSend, 0, r == 0 ? 4u : 3u}));
    ph.steps.push_back(recvStep(1 - r, {BufferRef::kRecv, 0, 4}));
  });

  ScheduleBuilder b(4, 4);
  b.newPhase().steps.push_back(copyStep({BufferRef::kSend, 2, 4}, {BufferRef::kRecv, 0, 4}));
  EXPECT_THROW(validateBounds(std::move(b).build(), 0), Error);
}

TEST(ReferenceExecutor, DetectsHazardInPhase) {
  // A phase that receives into the memory it sends from.
  expectReferenceRefuses([](ScheduleBuilder& b, int r) {
    auto& ph = b.newPhase();
    ph.steps.push_back(sendStep(1 - r, {BufferRef::kRecv, 0, 4}));
    ph.steps.push_back(recvStep(1 - r, {BufferRef::kRecv, 0, 4}));
  });
}

TEST(Cost, RingAllReduceMatchesFormula) {
  for (int n : {2, 3, 4, 8}) {
    CollArgs args{Collective::kAllReduce, DataType::kFloat, RedOp::kSum, 0, 1024 * 1024};
    Cost c = rankCost(ringAllReduce(0, n, args, {}), 4);
    EXPECT_EQ(c.messages, 2 * (n - 1));
    double S = 4.0 * 1024 * 1024;
    EXPECT_NEAR(c.bytes, 2.0 * (n - 1) / n * S, S * 0.001 * n);
  }
}

}  // namespace
}  // namespace cb
