// Deadline watchdog for blocking waits (see Watchdog.h).
#include "collectives/nccl/Watchdog.h"

namespace cb {

Watchdog::Watchdog(std::function<void()> onExpire)
    : onExpire_(std::move(onExpire)), thread_([this] { loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::arm(Deadline d) {
  {
    std::lock_guard lock(mutex_);
    armed_ = true;
    fired_ = false;
    deadline_ = d;
  }
  cv_.notify_all();
}

bool Watchdog::disarm() {
  std::lock_guard lock(mutex_);
  armed_ = false;
  return fired_;
}

void Watchdog::loop() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    if (!armed_ || fired_) {
      cv_.wait(lock);
      continue;
    }
    if (deadline_.at() == SteadyClock::time_point::max()) {
      cv_.wait(lock);  // never expires; wake on disarm/re-arm/stop
      continue;
    }
    if (cv_.wait_until(lock, deadline_.at()) == std::cv_status::timeout && armed_ && !fired_ &&
        deadline_.expired()) {
      fired_ = true;
      // Run the callback outside the lock: it may take long (ncclCommAbort), and disarm()
      // must still be able to return.
      lock.unlock();
      onExpire_();
      lock.lock();
    }
  }
}

}  // namespace cb
