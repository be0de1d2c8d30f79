// Monotonic time and deadlines: every blocking wait in collbench takes a Deadline.
#pragma once

#include <chrono>
#include <string>

namespace cb {

using SteadyClock = std::chrono::steady_clock;

inline double nowSeconds() {
  return std::chrono::duration<double>(SteadyClock::now().time_since_epoch()).count();
}

class Deadline {
 public:
  static Deadline after(double seconds) {
    return Deadline(SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                                             std::chrono::duration<double>(seconds)),
                    seconds);
  }
  static Deadline never() { return Deadline(SteadyClock::time_point::max(), 0); }
  bool expired() const { return SteadyClock::now() >= at_; }
  SteadyClock::time_point at() const { return at_; }
  // The timeout it was made with (0 for never), for error messages.
  double seconds() const { return seconds_; }
  // Throws TimeoutError("<what> did not complete within <s> s") when expired.
  void check(const std::string& what) const;

 private:
  Deadline(SteadyClock::time_point at, double s) : at_(at), seconds_(s) {}
  SteadyClock::time_point at_;
  double seconds_;
};

}  // namespace cb
