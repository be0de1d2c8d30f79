// The hand-written algorithms beyond the default sweep of test_schedules.cpp: their options
// (hierarchical ranks per node, chain chunk size), broadcast roots other than 0, send buffers left
// untouched out of place, and allreduce results identical bit for bit on every rank when the data
// is not integer-valued (so the reduction order matters in floating point).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string_view>

#include <fmt/format.h>

#include "bench/Verify.h"
#include "collectives/algorithms/Algorithms.h"
#include "collectives/schedule/ReferenceExecutor.h"
#include "common/ReferenceRun.h"
#include "core/Error.h"
#include "core/Half.h"

namespace cb {
namespace {

using test::findAlgorithm;
using test::runOnReference;

std::vector<size_t> countsFor(int n) { return {0, 1, static_cast<size_t>(n + 1), 1009}; }

TEST(AlgorithmOptions, HierarchicalAnyRanksPerNode) {
  const auto& algo = findAlgorithm(Collective::kAllReduce, "hierarchical");
  int cases = 0;
  for (int n = 1; n <= 17; ++n) {
    for (int perNode : {1, 2, 3, 4, 5, 8, 16}) {
      AlgoOptions o;
      o.ranksPerNode = perNode;
      for (size_t count : countsFor(n)) {
        for (bool inPlace : {false, true}) {
          CollArgs args{Collective::kAllReduce, DataType::kInt32, RedOp::kSum, 0, count};
          EXPECT_EQ(runOnReference(algo, n, args, o, inPlace, 3 + count), "")
              << "n=" << n << " ranksPerNode=" << perNode << " count=" << count
              << (inPlace ? " in place" : "");
          ++cases;
        }
      }
    }
  }
  EXPECT_GT(cases, 900);
}

TEST(AlgorithmOptions, HierarchicalEveryDtypeAndOpWithUnevenNodes) {
  const auto& algo = findAlgorithm(Collective::kAllReduce, "hierarchical");
  for (auto [n, perNode] : {std::pair{7, 3}, std::pair{10, 4}, std::pair{5, 2}}) {
    AlgoOptions o;
    o.ranksPerNode = perNode;
    for (DataType t : allDataTypes()) {
      for (RedOp op : {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin, RedOp::kAvg,
                       RedOp::kBand, RedOp::kBor, RedOp::kBxor}) {
        if (!redOpValidFor(op, t)) continue;
        CollArgs args{Collective::kAllReduce, t, op, 0, 41};
        for (bool inPlace : {false, true}) {
          EXPECT_EQ(runOnReference(algo, n, args, o, inPlace, 11), "")
              << "n=" << n << " ranksPerNode=" << perNode << " " << dataTypeName(t) << " "
              << redOpName(op) << (inPlace ? " in place" : "");
        }
      }
    }
  }
}

TEST(AlgorithmOptions, BroadcastsFromEveryRootAndChunkSize) {
  for (const char* name : {"binomial", "chain"}) {
    const auto& algo = findAlgorithm(Collective::kBroadcast, name);
    for (int n = 1; n <= 17; ++n) {
      for (int root : {0, n / 2, n - 1}) {
        for (size_t chunk : {size_t{0}, size_t{1}, size_t{3}, size_t{64}}) {
          if (name == std::string_view("binomial") && chunk) continue;
          AlgoOptions o;
          o.chunkElements = chunk;
          for (size_t count : countsFor(n)) {
            for (bool inPlace : {false, true}) {
              CollArgs args{Collective::kBroadcast, DataType::kInt8, RedOp::kSum, root, count};
              EXPECT_EQ(runOnReference(algo, n, args, o, inPlace, 5 + count), "")
                  << name << " n=" << n << " root=" << root << " chunk=" << chunk
                  << " count=" << count << (inPlace ? " in place" : "");
            }
          }
        }
      }
    }
  }
}

TEST(AlgorithmOptions, ChainPipelinesInChunks) {
  // k chunks: the root sends k messages, a middle rank k + 1 rounds (receive one, forward one).
  CollArgs args{Collective::kBroadcast, DataType::kFloat, RedOp::kSum, 2, 1000};
  AlgoOptions o;
  o.chunkElements = 100;
  const auto& chain = findAlgorithm(Collective::kBroadcast, "chain");
  EXPECT_EQ(chain.build(2, 5, args, o).phases.size(), 10u);
  EXPECT_EQ(chain.build(3, 5, args, o).phases.size(), 11u);
  EXPECT_EQ(chain.build(1, 5, args, o).phases.size(), 10u);  // the end of the chain
  // The default chunk is 64 KiB: 2^20 floats make 64 chunks.
  args.count = 1 << 20;
  EXPECT_EQ(chain.build(2, 5, args, {}).phases.size(), 64u);
}

TEST(AlgorithmOptions, EveryAlgorithmLeavesTheSendBufferAloneWithAnyRoot) {
  for (const auto& algo : algorithms()) {
    for (int n = 1; n <= 9; ++n) {
      for (size_t count : {size_t{37}, static_cast<size_t>(n + 1)}) {
        CollArgs args{algo.coll, DataType::kFloat, RedOp::kAvg, n - 1, count};
        if (algo.unsupported && algo.unsupported(n, args, {})) continue;
        EXPECT_EQ(runOnReference(algo, n, args, {}, false, 9), "")
            << collectiveName(algo.coll) << "/" << algo.name << " n=" << n << " count=" << count;
      }
    }
  }
}

// Random non-integer data: sums depend on the order of operations, so ranks that combined the
// inputs in different orders would disagree in the last bits.
template <class T, class Make>
void expectSameBitsOnEveryRank(const AlgorithmInfo& algo, int n, DataType t, RedOp op,
                               const AlgoOptions& opts, Make make) {
  const size_t count = 301;
  CollArgs args{Collective::kAllReduce, t, op, 0, count};
  std::mt19937 rng(1234 + n);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<Schedule> schedules;
  std::vector<RankBuffers> bufs(n);
  for (int r = 0; r < n; ++r) {
    schedules.push_back(algo.build(r, n, args, opts));
    bufs[r].send.resize(count * sizeof(T));
    bufs[r].recv.resize(count * sizeof(T));
    auto* p = reinterpret_cast<T*>(bufs[r].send.data());
    for (size_t i = 0; i < count; ++i) p[i] = make(dist(rng));
  }
  runReference(schedules, args, bufs);
  for (int r = 1; r < n; ++r) {
    EXPECT_EQ(countWrong(t, bufs[r].recv.data(), bufs[0].recv.data(), count), 0)
        << algo.name << " n=" << n << " " << dataTypeName(t) << " " << redOpName(op) << ": rank "
        << r << " differs from rank 0";
  }
}

TEST(AlgorithmOptions, AllReduceGivesTheSameBitsOnEveryRank) {
  AlgoOptions o;
  o.ranksPerNode = 4;
  for (const auto& algo : algorithms()) {
    if (algo.coll != Collective::kAllReduce) continue;
    for (int n : {2, 3, 5, 8, 11}) {
      for (RedOp op : {RedOp::kSum, RedOp::kProd, RedOp::kAvg}) {
        expectSameBitsOnEveryRank<float>(algo, n, DataType::kFloat, op, o,
                                         [](float x) { return x; });
        expectSameBitsOnEveryRank<Half>(algo, n, DataType::kHalf, op, o,
                                        [](float x) { return floatToHalf(x); });
      }
    }
  }
}

}  // namespace
}  // namespace cb
