// Uses that an end waits for (see EndableUse.h).
#include "core/EndableUse.h"

namespace cb {

bool EndableUse::end(const std::function<void()>& action, std::chrono::milliseconds grace) {
  {
    std::unique_lock lock(mutex_);
    if (ended_) return false;
    ended_ = true;
    cv_.wait_for(lock, grace, [this] { return inUse_ == 0; });
  }
  action();
  return true;
}

bool EndableUse::ended() const {
  std::lock_guard lock(mutex_);
  return ended_;
}

int EndableUse::inUse() const {
  std::lock_guard lock(mutex_);
  return inUse_;
}

void EndableUse::leave() {
  std::lock_guard lock(mutex_);
  if (--inUse_ == 0) cv_.notify_all();
}

}  // namespace cb
