// A watchdog for waits that cannot poll (a blocking-sync CUDA event wait): armed with a deadline
// before the wait, disarmed after it; if the deadline passes while armed it calls onExpire once
// (the NCCL variants abort their communicator there, which makes the stuck wait return). One
// thread per watchdog, created once and reused, so arming costs a lock and a notify.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "core/Clock.h"

namespace cb {

class Watchdog {
 public:
  explicit Watchdog(std::function<void()> onExpire);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void arm(Deadline d);
  // Ends the armed period; true if onExpire ran during it.
  bool disarm();

 private:
  void loop();

  std::function<void()> onExpire_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool armed_ = false;
  bool fired_ = false;
  bool stop_ = false;
  Deadline deadline_ = Deadline::never();
  std::thread thread_;  // last: starts after the members it reads exist
};

}  // namespace cb
