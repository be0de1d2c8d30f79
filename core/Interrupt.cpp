#include "core/Interrupt.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>

#include "core/Communicator.h"
#include "core/Error.h"
#include "core/InterruptLine.h"
#include "core/Text.h"

namespace cb {
namespace {

std::atomic<int> gSignal{0};          // see Interrupt.h: the one process-wide flag
std::atomic<int64_t> gSignalAtNs{0};  // when it was first set (CLOCK_MONOTONIC)
std::atomic<bool> gDeferred{false};   // set once by an MPI world, before any rank thread exists
std::atomic<bool> gAbandoned{false};  // a deferred wait gave up on the signal

// How long an MPI world's waits keep going after a signal, for the ranks to meet at an agreed
// point. mpirun sends SIGTERM, then SIGKILL one second later (Open MPI 4.1): the rest of that
// second is left for storing the run's status and exiting.
constexpr int64_t kDeferGraceNs = 500'000'000;

int64_t monotonicNs() {  // clock_gettime is async-signal-safe
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

void setSignal(int sig) {
  if (sig == 0) {  // tests clear the flag
    gSignal.store(0, std::memory_order_relaxed);
    gSignalAtNs.store(0, std::memory_order_relaxed);
    return;
  }
  int64_t none = 0;
  gSignalAtNs.compare_exchange_strong(none, monotonicNs(), std::memory_order_relaxed);
  gSignal.store(sig, std::memory_order_relaxed);
}

extern "C" void onSignal(int sig) { setSignal(sig); }

}  // namespace

void installInterruptHandlers() {
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int interruptExitCode() {
  const int sig = gSignal.load(std::memory_order_relaxed);
  return 128 + (sig > 0 ? sig : SIGINT);
}

bool interruptRequested() { return gSignal.load(std::memory_order_relaxed) != 0; }
int interruptSignal() { return gSignal.load(std::memory_order_relaxed); }
void requestInterrupt(int sig) { setSignal(sig); }
bool interruptStopsWaits() {
  if (!interruptRequested()) return false;
  if (!gDeferred.load(std::memory_order_relaxed)) return true;
  if (monotonicNs() - gSignalAtNs.load(std::memory_order_relaxed) < kDeferGraceNs) return false;
  gAbandoned.store(true, std::memory_order_relaxed);
  return true;
}
namespace {
std::mutex gHookMutex;
std::function<void()> gExitHook;  // guarded by gHookMutex
}  // namespace

void setInterruptHook(std::function<void()> hook) {
  std::lock_guard lock(gHookMutex);
  gExitHook = std::move(hook);
}

void runInterruptHook() {
  std::lock_guard lock(gHookMutex);
  try {
    if (gExitHook) gExitHook();
  } catch (...) {  // the main thread's own path tries again and reports
  }
}

void printInterruptLineOnce(const std::string& line) {
  static std::atomic<bool> printed{false};
  if (printed.exchange(true)) return;
  std::fflush(stdout);
  std::fprintf(stderr, "collbench: %s\n", printable(line).c_str());
  std::fflush(stderr);
}

void deferInterruptsToAgreedPoints() { gDeferred.store(true, std::memory_order_relaxed); }
bool waitAbandonedOnInterrupt() { return gAbandoned.load(std::memory_order_relaxed); }

void zeroFillInterruptibly(void* p, size_t bytes) {
  constexpr size_t kSlice = size_t{64} << 20;  // ~10 ms of memset
  auto* c = static_cast<char*>(p);
  for (size_t done = 0; done < bytes; done += kSlice) {
    if (interruptStopsWaits()) {
      throw InterruptedError(fmt::format("interrupted by signal {} while faulting in {} bytes",
                                         interruptSignal(), bytes));
    }
    std::memset(c + done, 0, std::min(kSlice, bytes - done));
  }
}

bool interruptAgreed(Communicator& comm, Deadline d) {
  auto signals = comm.allgather<int32_t>(interruptSignal(), d);
  const int sig = *std::max_element(signals.begin(), signals.end());
  if (sig != 0 && !interruptRequested()) requestInterrupt(sig);
  return sig != 0;
}

void stopIfInterrupted(Communicator& comm, Deadline d) {
  if (interruptAgreed(comm, d)) {
    throw InterruptedError(fmt::format("interrupted by signal {}", interruptSignal()));
  }
}

}  // namespace cb
