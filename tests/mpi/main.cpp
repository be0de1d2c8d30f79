// Entry point of cb_mpi_tests, run by CTest under mpirun with 2 and 3 processes. Every rank runs
// every test; only rank 0 prints the gtest report (other ranks print their own failures, tagged
// with the rank), and the exit code is nonzero on every rank if any test failed on any rank.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <exception>
#include <string>

#include "MpiTest.h"
#include "collectives/mpi/MpiWorld.h"

namespace cb::test {
namespace {

Communicator* gWorld = nullptr;
Team* gTeam = nullptr;

// On ranks other than 0: print failed assertions only, tagged with the rank.
class RankFailurePrinter final : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  // The name is kept here: gtest holds its lock while it reports a part result, so asking it
  // for the current test from OnTestPartResult would deadlock.
  void OnTestStart(const ::testing::TestInfo& t) override {
    test_ = fmt::format("{}.{}", t.test_suite_name(), t.name());
  }
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    fmt::print(stderr, "[rank {}] FAILED {} at {}:{}\n{}\n", rank_, test_,
               r.file_name() ? r.file_name() : "?", r.line_number(), r.message());
    std::fflush(stderr);
  }

 private:
  int rank_;
  std::string test_;
};

}  // namespace

Communicator& world() { return *gWorld; }
Team& worldTeam() { return *gTeam; }

void MpiTest::TearDown() {
  auto failed = world().allgather<uint8_t>(HasFailure() ? 1 : 0, soon());
  for (int r = 0; r < world().size(); ++r) {
    if (failed[r] && r != world().rank()) ADD_FAILURE() << "the test failed on rank " << r;
  }
}

}  // namespace cb::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  try {
    cb::MpiWorld mpi;
    cb::test::gWorld = &mpi.world();
    cb::Team team(mpi.world());
    cb::test::gTeam = &team;
    int rank = mpi.world().rank();
    if (rank != 0) {
      auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
      listeners.Append(new cb::test::RankFailurePrinter(rank));
    }
    int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
    bool anyFailed = mpi.world().anyTrue(failed != 0, cb::Deadline::after(60));
    cb::test::gWorld = nullptr;
    if (anyFailed && rank == 0) fmt::print(stderr, "cb_mpi_tests: a test failed on some rank\n");
    return anyFailed ? 1 : 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "cb_mpi_tests: {}\n", e.what());
    return 2;
  }
}
