#include "collectives/transport/WaitPolicy.h"

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace cb {
namespace {

using Clock = std::chrono::steady_clock;

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

// Steady-clock ns until which yields are paused: a property of the machine's load, so one per
// process (every rank thread and every transport of it).
std::atomic<int64_t> pausedUntil{0};

}  // namespace

bool yieldsAllowed() { return nowNs() >= pausedUntil.load(std::memory_order_relaxed); }

void timedYield(void (*yield)()) {
  const int64_t t0 = nowNs();
  if (yield) {
    yield();
  } else {
    sched_yield();
  }
  const int64_t t1 = nowNs();
  if (t1 - t0 > kSlowYieldUs * 1000) {
    pausedUntil.store(t1 + kYieldPauseMs * 1000000, std::memory_order_relaxed);
  }
}

}  // namespace cb
