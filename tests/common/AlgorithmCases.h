// The algorithm x transport checks shared by the thread-world tests (tests/unit) and the
// multi-process tests (tests/mpi): one configuration through the host executor, in or out of
// place, checked bit for bit against what every rank computes on its own; and the cases every
// algorithm runs (zero-length, one element, odd sizes, a size that crosses shm slot boundaries,
// the broadcast/reduce root on the last rank, half avg for reductions).
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "bench/Verify.h"
#include "collectives/algorithms/Algorithms.h"
#include "collectives/schedule/HostExecutor.h"
#include "core/Clock.h"
#include "core/Collective.h"
#include "core/Transport.h"

namespace cb::test {

struct AlgorithmCase {
  CollArgs args;
  bool inPlace = false;
  std::string describe(const AlgorithmInfo& algo) const {
    return fmt::format("{}/{} {} {} count {}{}", collectiveName(algo.coll), algo.name,
                       dataTypeName(args.dtype), redOpName(args.op), args.count,
                       inPlace ? " in place" : "");
  }
};

// The cases of one algorithm on n ranks for the given counts (float sum, in and out of place;
// plus half avg for reductions).
inline std::vector<AlgorithmCase> algorithmCases(const AlgorithmInfo& algo, int n,
                                                 const std::vector<size_t>& counts) {
  std::vector<AlgorithmCase> cases;
  for (size_t count : counts) {
    for (bool inPlace : {false, true}) {
      cases.push_back({{algo.coll, DataType::kFloat, RedOp::kSum, n - 1, count}, inPlace});
    }
  }
  if (hasReduction(algo.coll)) cases.push_back({{algo.coll, DataType::kHalf, RedOp::kAvg, 0, 503}});
  return cases;
}

// The one-device checks (the CUDA executor on one GPU, and its order played on the host): every
// algorithm on 2..5 ranks, each count, each op (int32; float for avg), the root on rank 2 from
// three ranks on; `check(algo, n, args, opts)` for every case the algorithm supports.
template <class Check>
void forEachOneDeviceCase(std::initializer_list<size_t> counts, std::initializer_list<RedOp> ops,
                          Check check) {
  for (const AlgorithmInfo& algo : algorithms()) {
    for (int n = 2; n <= 5; ++n) {
      for (size_t count : counts) {
        for (RedOp op : ops) {
          CollArgs args;
          args.coll = algo.coll;
          args.dtype = op == RedOp::kAvg ? DataType::kFloat : DataType::kInt32;
          args.op = op;
          args.count = count;
          args.root = n > 2 ? 2 : 0;
          AlgoOptions opts;
          if (algo.unsupported && algo.unsupported(n, args, opts)) continue;
          check(algo, n, args, opts);
        }
      }
    }
  }
}

// Runs one case twice on rank r of n (fresh pattern each time); returns the wrong element count
// (plus one if an out-of-place call wrote its send buffer).
inline int64_t runAlgorithmCase(Transport& t, int r, int n, const AlgorithmInfo& algo,
                                const AlgorithmCase& c, const AlgoOptions& o, Deadline d) {
  const CollArgs& args = c.args;
  const size_t es = dataTypeSize(args.dtype);
  const size_t sc = sendCount(args, n), rc = recvCount(args, n);
  HostExecutor exec(t, algo.build(r, n, args, o), args);
  int64_t wrong = 0;
  for (uint64_t seed : {21, 22}) {
    std::vector<std::byte> input(sc * es), recv(rc * es, std::byte{0x5a}), send;
    fillInput(args, r, n, seed, input.data());
    const std::byte* got = recv.data();
    if (!c.inPlace) {
      send = input;
      exec.run(send.data(), recv.data(), d);
      if (send != input) ++wrong;  // the send buffer is the caller's: never written
    } else if (args.coll == Collective::kReduceScatter) {
      send = input;
      exec.run(send.data(), send.data() + inPlaceRecvOffset(args, r) * es, d);
      got = send.data() + inPlaceRecvOffset(args, r) * es;
    } else {
      // memcpy with a null source is undefined even for 0 bytes (UBSan): skip empty inputs.
      if (sc > 0) std::memcpy(recv.data() + inPlaceSendOffset(args, r) * es, input.data(), sc * es);
      exec.run(recv.data() + inPlaceSendOffset(args, r) * es, recv.data(), d);
    }
    std::vector<std::byte> expected(rc * es);
    if (expectedOutput(args, r, n, seed, expected.data())) {
      wrong += countWrong(args.dtype, got, expected.data(), rc);
    }
  }
  return wrong;
}

}  // namespace cb::test
