// The one signal path (core/Interrupt.h): agreed stop points, the grace an MPI world's waits give
// the ranks to meet at one, and buffers faulted in slices that a signal ends.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

#include "collectives/transport/LocalWorld.h"
#include "core/Buffer.h"
#include "core/Error.h"
#include "core/Interrupt.h"

namespace cb {
namespace {

struct ClearInterrupt {
  ~ClearInterrupt() { requestInterrupt(0); }
};

// Issue 50: an interrupted command exits 128 + the signal, as shells and Slurm read it.
TEST(Interrupt, ExitCodeIs128PlusTheSignal) {
  ClearInterrupt clear;
  EXPECT_EQ(exitCodeFor(ErrorKind::kInterrupted), 130);  // no signal known: SIGINT's
  requestInterrupt(SIGTERM);
  EXPECT_EQ(exitCodeFor(ErrorKind::kInterrupted), 143);
  requestInterrupt(0);
  requestInterrupt(SIGINT);
  EXPECT_EQ(exitCodeFor(ErrorKind::kInterrupted), 130);
  EXPECT_EQ(exitCodeFor(ErrorKind::kUsage), 2);
}

TEST(Interrupt, EveryRankAgreesAndStopsAtTheSamePoint) {
  ClearInterrupt clear;
  std::atomic<int> stopped{0};
  LocalWorld::run(3, [&](Communicator& c) {
    EXPECT_FALSE(interruptAgreed(c, Deadline::after(60)));
    c.barrier(Deadline::after(60));
    if (c.rank() == 1) requestInterrupt(SIGTERM);
    // The flag is set before rank 1 enters the agreement, so every rank learns of it there
    // (the local world's waits may also stop on it first: either way the rank stops).
    try {
      stopIfInterrupted(c, Deadline::after(60));
    } catch (const InterruptedError&) {
      stopped++;
    }
  });
  EXPECT_EQ(stopped.load(), 3);
  EXPECT_EQ(interruptSignal(), SIGTERM);
}

TEST(Interrupt, FaultingInABigBufferStopsOnASignal) {
  ClearInterrupt clear;
  HostBuffer b(size_t{256} << 20);
  requestInterrupt(SIGINT);
  EXPECT_THROW(b.faultIn(), InterruptedError);
  requestInterrupt(0);
  EXPECT_NO_THROW(b.faultIn());
  EXPECT_EQ(static_cast<const char*>(b.data())[(size_t{256} << 20) - 1], 0);
}

// In a child process: an MPI world's deferral is never undone.
TEST(InterruptDeathTest, AnMpiWorldsWaitsKeepGoingForAGraceThenGiveUp) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        deferInterruptsToAgreedPoints();
        requestInterrupt(SIGTERM);
        const bool early = interruptStopsWaits();
        const bool abandonedEarly = waitAbandonedOnInterrupt();
        std::this_thread::sleep_for(std::chrono::milliseconds(600));
        const bool late = interruptStopsWaits();
        std::_Exit(!early && !abandonedEarly && late && waitAbandonedOnInterrupt() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace cb
