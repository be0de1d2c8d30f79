#include "core/Interrupt.h"

#include <atomic>
#include <csignal>

namespace cb {
namespace {

std::atomic<int> gSignal{0};  // see Interrupt.h: the one process-wide flag

extern "C" void onSignal(int sig) { gSignal.store(sig, std::memory_order_relaxed); }

}  // namespace

void installInterruptHandlers() {
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interruptRequested() { return gSignal.load(std::memory_order_relaxed) != 0; }
int interruptSignal() { return gSignal.load(std::memory_order_relaxed); }
void requestInterrupt(int sig) { gSignal.store(sig, std::memory_order_relaxed); }

}  // namespace cb
