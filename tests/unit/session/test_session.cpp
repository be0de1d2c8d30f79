// The run lifecycle every measuring command shares (session/RunSession.h): how the body's outcome
// or error becomes the run's status in the store and the exit code, on a local world of 2 ranks.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <string>

#include "common/TempDir.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "results/Store.h"
#include "session/RunSession.h"

namespace cb {
namespace {

class Lifecycle : public ::testing::Test {
 protected:
  void SetUp() override {
    o_.dbPath = dir_.file("cb.db");
    o_.label = "lifecycle";
    o_.world.np = 2;
  }
  // The interrupt flag is process-wide: a test that raises it must not stop every test after it
  // when the whole binary runs as one process.
  void TearDown() override { requestInterrupt(0); }
  // The statuses of the runs stored, newest first.
  std::vector<std::string> statuses() {
    std::vector<std::string> out;
    if (!std::filesystem::exists(o_.dbPath)) return out;
    for (const auto& r : Store::open(o_.dbPath, false).listRuns()) {
      out.emplace_back(runStatusName(r.status));
    }
    return out;
  }
  // A command that begins its run and ends with `outcome` exits `code` and leaves the run in
  // `status`.
  void expectEnd(const RunOutcome& outcome, int code, const std::string& status) {
    EXPECT_EQ(runMeasuringCommand(o_,
                                  [&](RunSession& s) {
                                    s.beginRun();
                                    return outcome;
                                  }),
              code);
    EXPECT_EQ(statuses(), std::vector<std::string>{status});
  }
  TempDir dir_;
  SessionOptions o_;
};

TEST_F(Lifecycle, CompletedRunIsOk) {
  int code = runMeasuringCommand(o_, [](RunSession& s) {
    EXPECT_EQ(s.team().size(), 2);
    EXPECT_EQ(s.record().worldSize, 2);
    EXPECT_FALSE(s.record().fingerprint.empty());
    s.beginRun();
    return RunOutcome{};
  });
  EXPECT_EQ(code, 0);
  EXPECT_EQ(statuses(), std::vector<std::string>{"ok"});
}

TEST_F(Lifecycle, WrongDataExitsOneAndTheRunIsStillOk) { expectEnd({.wrong = 3}, 1, "ok"); }

TEST_F(Lifecycle, AFailedPointExitsOneAndTheRunIsStillOk) {
  expectEnd({.failed = 2, .firstFailure = "nccl: ncclAllReduce failed"}, 1, "ok");
}

TEST_F(Lifecycle, StoppedBetweenPointsIsInterrupted) {
  expectEnd({.interrupted = true}, 130, "interrupted");
}

TEST_F(Lifecycle, AnErrorAfterBeginIsFailed) {
  EXPECT_THROW(runMeasuringCommand(o_,
                                   [](RunSession& s) -> RunOutcome {
                                     s.beginRun();
                                     throw TimeoutError("a peer did not answer");
                                   }),
               TimeoutError);
  EXPECT_EQ(statuses(), std::vector<std::string>{"failed"});
}

// A launcher's SIGTERM may reach a peer first: this rank then sees a failed peer, not a signal
// of its own. Whatever the error, a signal received makes the run interrupted (exit 130).
TEST_F(Lifecycle, AnyErrorAfterASignalIsInterrupted) {
  EXPECT_THROW(runMeasuringCommand(o_,
                                   [](RunSession& s) -> RunOutcome {
                                     s.beginRun();
                                     if (s.root()) requestInterrupt(SIGTERM);
                                     s.comm().barrier(Deadline::after(60));
                                     throw InternalError("peer exited");
                                   }),
               InterruptedError);
  requestInterrupt(0);  // the flag is process-wide: later tests must not see it
  EXPECT_EQ(statuses(), std::vector<std::string>{"interrupted"});
}

TEST_F(Lifecycle, AnErrorBeforeBeginStoresNothing) {
  EXPECT_THROW(
      runMeasuringCommand(o_, [](RunSession&) -> RunOutcome { throw UsageError("bad flag"); }),
      UsageError);
  EXPECT_TRUE(statuses().empty());
}

}  // namespace
}  // namespace cb
