// The watchdog's abort may free what the owner uses (ncclCommAbort frees the communicator at
// once when it is the process's last rank). A stand-in communicator freed by the end: under ASan
// (scripts/sanitize.sh) any touch after the end is a use after free, and in a plain build the
// owner's pointer is null by then. Without the guard (check a flag, then call) the owner races
// the free.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "core/EndableUse.h"

namespace cb {
namespace {

struct StandInComm {
  std::atomic<int> calls{0};
};

TEST(EndableUse, NoUseTouchesTheResourceOnceTheEndFreedIt) {
  using namespace std::chrono_literals;
  for (int round = 0; round < 200; ++round) {
    auto* comm = new StandInComm;
    EndableUse guard;
    std::atomic<int> uses{0};
    std::thread owner([&] {
      // The owner's calls, back to back, as a batch of enqueues and async-error polls.
      while (guard.use([&] { comm->calls.fetch_add(1); })) uses.fetch_add(1);
    });
    std::this_thread::sleep_for(std::chrono::microseconds(round * 5));
    bool ran = guard.end(
        [&] {
          delete comm;  // what ncclCommAbort does to the last rank's communicator
          comm = nullptr;
        },
        2000ms);
    owner.join();
    EXPECT_TRUE(ran);
    EXPECT_EQ(comm, nullptr);
    EXPECT_TRUE(guard.ended());
    EXPECT_EQ(guard.inUse(), 0);
    // A second end (the owner's own abort after the watchdog's) runs nothing.
    EXPECT_FALSE(guard.end([] { FAIL() << "a second abort"; }, 0ms));
  }
}

TEST(EndableUse, AUseBlockedInsideTheLibraryIsReleasedByTheEndAfterTheGrace) {
  using namespace std::chrono_literals;
  EndableUse guard;
  std::atomic<bool> abortFlag{false};  // the library's own flag, which its blocked call polls
  std::atomic<bool> inside{false};
  std::atomic<bool> usedAfter{false};
  std::thread owner([&] {
    guard.use([&] {
      inside = true;
      while (!abortFlag.load()) std::this_thread::sleep_for(1ms);  // a peer that never comes
    });
    // After the blocked call returned, nothing more reaches the library.
    usedAfter = guard.use([] {});
  });
  while (!inside.load()) std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(guard.end([&] { abortFlag = true; }, 50ms));
  owner.join();
  EXPECT_FALSE(usedAfter.load());
}

TEST(EndableUse, AnExceptionInsideAUseLeavesIt) {
  using namespace std::chrono_literals;
  EndableUse guard;
  EXPECT_THROW(guard.use([] { throw std::runtime_error("ncclInternalError"); }),
               std::runtime_error);
  EXPECT_EQ(guard.inUse(), 0);  // else the end would wait for a use that left long ago
  EXPECT_TRUE(guard.end([] {}, 0ms));
}

}  // namespace
}  // namespace cb
