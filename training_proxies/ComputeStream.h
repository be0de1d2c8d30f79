// The stand-in for a GPU stream in the proxies: a thread that runs compute ops in order by
// sleeping, chained on target times, and records when each ran. Internal to training_proxies/.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/Clock.h"

namespace cb::proxy::rank {

using Clock = std::chrono::steady_clock;

inline double secs(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

class ComputeStream {
 public:
  struct Interval {
    int op;
    Clock::time_point start, end;
  };

  ComputeStream() : thread_([this] { loop(); }) {}
  ~ComputeStream() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  uint64_t enqueue(double seconds, int op) {
    std::lock_guard<std::mutex> g(mu_);
    jobs_.push_back({seconds, op, Clock::now()});
    ++enqueued_;
    cv_.notify_all();
    return enqueued_;
  }
  void waitDone(uint64_t seq, Deadline d) {
    std::unique_lock<std::mutex> lk(mu_);
    while (done_ < seq) {
      if (doneCv_.wait_until(lk, d.at()) == std::cv_status::timeout && done_ < seq) {
        d.check("modelled compute");
      }
    }
  }
  void waitIdle(Deadline d) {
    uint64_t target;
    {
      std::lock_guard<std::mutex> g(mu_);
      target = enqueued_;
    }
    waitDone(target, d);
  }
  std::vector<Interval> take() {
    std::lock_guard<std::mutex> g(mu_);
    return std::exchange(intervals_, {});
  }

 private:
  struct Job {
    double seconds;
    int op;
    Clock::time_point enqueued;
  };
  void loop() {
    Clock::time_point chain{}, lastEnd{};
    for (;;) {
      Job j;
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return stop_ || !jobs_.empty(); });
        if (stop_ && jobs_.empty()) return;
        j = jobs_.front();
        jobs_.pop_front();
      }
      const auto now = Clock::now();
      // A job queued while the stream was busy starts at the previous job's target end, one
      // queued on an idle stream when it was queued (a kernel launched to an idle GPU stream
      // starts at once): this thread's late wake-ups are made up by the sleep, not added to it.
      const auto start = j.enqueued <= chain ? chain : j.enqueued;
      chain = start +
              std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(j.seconds));
      if (j.seconds > 0) std::this_thread::sleep_until(chain);
      const auto end = Clock::now();
      const auto recStart = std::max(std::min(start, now), lastEnd);
      lastEnd = end;
      std::lock_guard<std::mutex> g(mu_);
      intervals_.push_back({j.op, std::min(recStart, end), end});
      ++done_;
      doneCv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_, doneCv_;
  std::deque<Job> jobs_;
  std::vector<Interval> intervals_;
  uint64_t enqueued_ = 0, done_ = 0;
  bool stop_ = false;
  std::thread thread_;  // last: starts after the members it uses
};

}  // namespace cb::proxy::rank
