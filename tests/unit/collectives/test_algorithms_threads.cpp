// Every hand-written algorithm over every transport a thread world can use (local, shm, ucx) for
// every rank count from 1 to 9 (primes, powers of two and neither), a few counts each (empty,
// one element, odd, larger than a shm slot), in and out of place, checked bit for bit. One test
// per transport and rank count (gloo-style names: Threads/AlgorithmsOverTransport.Correct/shm_n5),
// each failure naming the algorithm, type, count and placement. The team's transport is set up
// once per test and serves every algorithm and size.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "collectives/Team.h"
#include "collectives/transport/LocalWorld.h"
#include "common/AlgorithmCases.h"

namespace cb::test {
namespace {

using Param = std::tuple<std::string, int>;  // (transport, ranks)

class AlgorithmsOverTransport : public ::testing::TestWithParam<Param> {};

TEST_P(AlgorithmsOverTransport, Correct) {
  const auto& [transport, n] = GetParam();
  std::mutex m;
  std::vector<std::string> failures;
  LocalWorld::run(n, [&](Communicator& comm) {
    Team team(comm);
    Transport& t = team.transport(transport);
    AlgoOptions o;
    o.ranksPerNode = 2;      // hierarchical: nodes of 2 (and a last node of 1 when n is odd)
    o.chunkElements = 1024;  // chain: pipelined in 4 KiB chunks
    const std::vector<size_t> counts{0, 1, 1009, 70001};
    for (const AlgorithmInfo& algo : algorithms()) {
      for (const AlgorithmCase& c : algorithmCases(algo, n, counts)) {
        if (algo.unsupported && algo.unsupported(n, c.args, o)) continue;
        int64_t wrong = 0;
        try {
          wrong = runAlgorithmCase(t, comm.rank(), n, algo, c, o, Deadline::after(60));
        } catch (const std::exception& e) {
          // Ends the whole world (LocalWorld::run rethrows the first rank's error): name the case.
          throw std::runtime_error(c.describe(algo) + ": " + e.what());
        }
        if (wrong != 0) {
          std::lock_guard lk(m);
          failures.push_back(
              fmt::format("{} on rank {}: {} wrong", c.describe(algo), comm.rank(), wrong));
        }
      }
    }
    EXPECT_EQ(team.transportSetups(), 1);
  });
  for (const auto& f : failures) ADD_FAILURE() << f;
}

INSTANTIATE_TEST_SUITE_P(Threads, AlgorithmsOverTransport,
                         ::testing::Combine(::testing::Values("local", "shm", "ucx"),
                                            ::testing::Range(1, 10)),
                         [](const auto& info) {
                           return fmt::format("{}_n{}", std::get<0>(info.param),
                                              std::get<1>(info.param));
                         });

}  // namespace
}  // namespace cb::test
