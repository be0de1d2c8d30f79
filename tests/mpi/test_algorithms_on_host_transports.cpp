// Every hand-written algorithm through the host executor over each host transport of the build
// (mpi, shm, ucx) under mpirun (CTest runs this binary with 2, 3 and 4 processes): real
// concurrency, zero-length messages, several messages to one peer in one phase, and sizes that
// cross the shared-memory slot boundaries, checked bit for bit, in and out of place, with the
// broadcast root on the last rank. One test per algorithm and transport, named after both
// (gloo-style: Algorithms/AlgorithmTransportTest.Correct/allreduce_ring_shm); the transports are
// the world team's, set up once for the whole binary.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "../common/AlgorithmCases.h"
#include "MpiTest.h"
#include "collectives/transport/Transports.h"

namespace cb::test {
namespace {

using Param = std::tuple<size_t, std::string>;  // (index into algorithms(), transport)

class AlgorithmTransportTest : public MpiTest, public ::testing::WithParamInterface<Param> {};

TEST_P(AlgorithmTransportTest, Correct) {
  const auto& [index, transport] = GetParam();
  const AlgorithmInfo& algo = algorithms()[index];
  if (auto why = team().transportUnsupported(transport)) GTEST_SKIP() << *why;
  Transport& t = team().transport(transport);
  AlgoOptions o;
  o.ranksPerNode = 2;      // hierarchical: with 3 ranks, a node of 2 and a node of 1
  o.chunkElements = 4096;  // chain: pipelined in 16 KiB chunks
  const std::vector<size_t> counts{0, 1, 1009, (size_t{3} << 20) / 4 + 3};
  for (const AlgorithmCase& c : algorithmCases(algo, size(), counts)) {
    if (algo.unsupported && algo.unsupported(size(), c.args, o)) continue;
    try {
      EXPECT_EQ(runAlgorithmCase(t, rank(), size(), algo, c, o, soon()), 0) << c.describe(algo);
    } catch (const std::exception& e) {
      FAIL() << c.describe(algo) << ": " << e.what();  // the transport is unusable after an error
    }
  }
}

// Every host transport this build has, except "local" (threads of one process).
std::vector<std::string> processTransports() {
  auto names = transportNames();
  std::erase(names, "local");
  return names;
}

std::vector<size_t> algorithmIndexes() {
  std::vector<size_t> out(algorithms().size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = i;
  return out;
}

INSTANTIATE_TEST_SUITE_P(Algorithms, AlgorithmTransportTest,
                         ::testing::Combine(::testing::ValuesIn(algorithmIndexes()),
                                            ::testing::ValuesIn(processTransports())),
                         [](const auto& info) {
                           const AlgorithmInfo& a = algorithms()[std::get<0>(info.param)];
                           return fmt::format("{}_{}_{}", collectiveName(a.coll), a.name,
                                              std::get<1>(info.param));
                         });

}  // namespace
}  // namespace cb::test
