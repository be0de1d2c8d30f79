// How host ranks wait for a peer (collectives/transport/WaitPolicy.h and the local world's
// waits): a yield that gave the CPU away stops yields for a while, and the exchanges complete
// whichever way a rank waits (spinning for a peer elsewhere, yielding to a peer on its own CPU,
// sleeping while yields are paused).
#include <gtest/gtest.h>
#include <sched.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "collectives/transport/LocalWorld.h"
#include "collectives/transport/WaitPolicy.h"
#include "core/Clock.h"

namespace cb {
namespace {

void slowYield() { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }

void waitForYields() {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!yieldsAllowed() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

TEST(WaitPolicy, AYieldThatGaveTheCpuAwayPausesYieldsForAWhile) {
  waitForYields();
  ASSERT_TRUE(yieldsAllowed());
  timedYield(slowYield);  // 2 ms away: another process had the CPU
  EXPECT_FALSE(yieldsAllowed());
  std::this_thread::sleep_for(std::chrono::milliseconds(kYieldPauseMs + 50));
  EXPECT_TRUE(yieldsAllowed());
}

// Every rank sends its rank-stamped block to the next and receives from the previous, `rounds`
// times; each received block is checked.
void ringExchanges(int nranks, int rounds, size_t bytes) {
  LocalWorld::run(nranks, [&](Communicator& c) {
    const int next = (c.rank() + 1) % c.size();
    const int prev = (c.rank() + c.size() - 1) % c.size();
    std::vector<unsigned char> out(bytes), in(bytes);
    for (int i = 0; i < rounds; ++i) {
      std::memset(out.data(), (c.rank() * 31 + i) & 0xff, bytes);
      const Deadline d = Deadline::after(30);
      if (c.rank() % 2 == 0) {
        c.send(next, out.data(), bytes, i, d);
        c.recv(prev, in.data(), bytes, i, d);
      } else {
        c.recv(prev, in.data(), bytes, i, d);
        c.send(next, out.data(), bytes, i, d);
      }
      ASSERT_EQ(in[bytes - 1], static_cast<unsigned char>((prev * 31 + i) & 0xff));
    }
  });
}

// The ranks' threads inherit this thread's mask: all on one CPU, then back to what it was.
template <class F>
void onOneCpu(F f) {
  cpu_set_t was, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof(was), &was), 0);
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &was)) ++cpu;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  f();
  ASSERT_EQ(sched_setaffinity(0, sizeof(was), &was), 0);
}

TEST(WaitPolicy, RanksOnOneCpuExchangeByYieldingAndBySleeping) {
  onOneCpu([] {
    waitForYields();
    ringExchanges(2, 2000, 64);   // the peer on this CPU: yields hand it over
    ringExchanges(4, 500, 4096);  // more ranks than CPUs
    timedYield(slowYield);        // yields paused: every wait sleeps until notified
    ringExchanges(2, 2000, 64);
    ringExchanges(4, 500, 4096);
  });
}

TEST(WaitPolicy, RanksOnTheirOwnCpusExchangeShortAndLongHandOffs) {
  ringExchanges(2, 5000, 8);
  ringExchanges(2, 200, 1 << 20);  // hand-offs longer than the spin: spin, then sleep
}

}  // namespace
}  // namespace cb
