// A resource that its owner uses while another thread (a watchdog) may end it with an action that
// frees it: ncclCommAbort frees an NCCL communicator at once when it is the process's last rank
// (every MPI rank, the last thread of the local world), while the owner may be between its
// "aborted?" check and its next NCCL call. So the owner makes each call through use(), and the
// end waits for a call in progress to leave before the action runs:
//   - use(fn) runs fn only while not ended (false, fn not run, after the end began);
//   - end(action, grace) marks the end (no use starts after it), waits up to `grace` for uses in
//     progress, then runs the action once.
// A use still in progress after the grace is blocked inside the library (a blocking NCCL call
// waiting for a peer that never comes), which only the action releases: it runs then, and what
// the library does inside that call is the library's; the owner touches nothing after the use
// returns, since every later use() answers false.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>

namespace cb {

class EndableUse {
 public:
  template <class Fn>
  bool use(Fn&& fn) {
    {
      std::lock_guard lock(mutex_);
      if (ended_) return false;
      ++inUse_;
    }
    struct Leave {
      EndableUse* self;
      ~Leave() { self->leave(); }
    } leave{this};
    fn();
    return true;
  }

  // True when this call ran `action` (false: an earlier end did).
  bool end(const std::function<void()>& action, std::chrono::milliseconds grace);
  bool ended() const;
  // Uses in progress (tests).
  int inUse() const;

 private:
  void leave();

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  int inUse_ = 0;
  bool ended_ = false;
};

}  // namespace cb
