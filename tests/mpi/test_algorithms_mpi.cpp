// Every hand-written algorithm (not just the rings) through the host executor over each host
// transport of the build (mpi, shm, ucx) under mpirun: real concurrency, zero-length messages,
// several messages to one peer in one phase, and sizes that cross the shared-memory slot
// boundaries, checked bit for bit, in and out of place, with the broadcast root on the last rank.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "MpiTestSupport.h"
#include "bench/Verify.h"
#include "collectives/algorithms/Algorithms.h"
#include "collectives/schedule/HostExecutor.h"
#include "collectives/transport/Transports.h"

namespace cb::test {
namespace {

class AlgorithmTransportTest : public MpiTest, public ::testing::WithParamInterface<std::string> {
 protected:
  // Runs one configuration twice (fresh pattern each time); returns the wrong element count.
  int64_t run(Transport& t, const AlgorithmInfo& algo, const CollArgs& args, const AlgoOptions& o,
              bool inPlace) {
    const int n = size(), r = rank();
    const size_t es = dataTypeSize(args.dtype);
    const size_t sc = sendCount(args, n), rc = recvCount(args, n);
    HostExecutor exec(t, algo.build(r, n, args, o), args);
    int64_t wrong = 0;
    for (uint64_t seed : {21, 22}) {
      std::vector<std::byte> input(sc * es), recv(rc * es, std::byte{0x5a}), send;
      fillInput(args, r, n, seed, input.data());
      const std::byte* got = recv.data();
      if (!inPlace) {
        send = input;
        exec.run(send.data(), recv.data(), soon());
        if (send != input) ++wrong;  // the send buffer is the caller's: never written
      } else if (args.coll == Collective::kReduceScatter) {
        send = input;
        exec.run(send.data(), send.data() + inPlaceRecvOffset(args, r) * es, soon());
        got = send.data() + inPlaceRecvOffset(args, r) * es;
      } else {
        std::memcpy(recv.data() + inPlaceSendOffset(args, r) * es, input.data(), sc * es);
        exec.run(recv.data() + inPlaceSendOffset(args, r) * es, recv.data(), soon());
      }
      std::vector<std::byte> expected(rc * es);
      if (expectedOutput(args, r, n, seed, expected.data())) {
        wrong += countWrong(args.dtype, got, expected.data(), rc);
      }
    }
    return wrong;
  }
};

TEST_P(AlgorithmTransportTest, EveryAlgorithmIsCorrect) {
  if (auto why = transportUnsupported(GetParam(), comm())) GTEST_SKIP() << *why;
  auto t = makeTransport(GetParam(), comm());
  AlgoOptions o;
  o.ranksPerNode = 2;      // hierarchical: with 3 ranks, a node of 2 and a node of 1
  o.chunkElements = 4096;  // chain: pipelined in 16 KiB chunks
  const size_t counts[] = {0, 1, 1009, (size_t{3} << 20) / 4 + 3};
  for (const auto& algo : algorithms()) {
    std::vector<std::pair<CollArgs, bool>> cases;
    for (size_t count : counts) {
      for (bool inPlace : {false, true}) {
        cases.push_back({{algo.coll, DataType::kFloat, RedOp::kSum, size() - 1, count}, inPlace});
      }
    }
    if (hasReduction(algo.coll)) {
      cases.push_back({{algo.coll, DataType::kHalf, RedOp::kAvg, 0, 5003}, false});
    }
    for (const auto& [args, inPlace] : cases) {
      const auto what = fmt::format("{}/{} {} {} count {}{}", collectiveName(algo.coll), algo.name,
                                    dataTypeName(args.dtype), redOpName(args.op), args.count,
                                    inPlace ? " in place" : "");
      try {
        EXPECT_EQ(run(*t, algo, args, o, inPlace), 0) << what;
      } catch (const std::exception& e) {
        FAIL() << what << ": " << e.what();  // the transport is unusable after an error
      }
    }
  }
}

// Every host transport this build has, except "local" (threads of one process).
std::vector<std::string> processTransports() {
  auto names = transportNames();
  std::erase(names, "local");
  return names;
}

INSTANTIATE_TEST_SUITE_P(Transports, AlgorithmTransportTest,
                         ::testing::ValuesIn(processTransports()));

}  // namespace
}  // namespace cb::test
