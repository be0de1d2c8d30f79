// The -R 2 window policy (see NcclWindows.h).
#include "collectives/nccl/NcclWindows.h"

#include <algorithm>
#include <mutex>
#include <set>

namespace cb {

SymmetricWindows::Pair SymmetricWindows::ensure(size_t bytes, size_t largestBytes) {
  bytes = std::max<size_t>(bytes, 1);  // a zero-byte call still needs a valid window
  if (a_ && bytes <= bytes_) return {a_, b_, bytes_};
  drop();
  size_t want = std::max(bytes, largestBytes);
  withdrawn_ = false;
  try {
    a_ = static_cast<char*>(ops_.allocate(want));
    b_ = static_cast<char*>(ops_.allocate(want));
    windowA_ = ops_.enroll(a_, want);
    ++registrations_;
    windowB_ = ops_.enroll(b_, want);
    ++registrations_;
  } catch (...) {
    drop();  // nothing half-registered is handed out later
    throw;
  }
  bytes_ = want;
  return {a_, b_, bytes_};
}

void SymmetricWindows::drop() {
  if (!withdrawn_) {
    if (windowA_) ops_.withdraw(windowA_);
    if (windowB_) ops_.withdraw(windowB_);
  }
  windowA_ = windowB_ = nullptr;
  if (a_) ops_.release(a_);
  if (b_) ops_.release(b_);
  a_ = b_ = nullptr;
  bytes_ = 0;
}

namespace {

// The live registration sets of this process (one per NCCL communicator that registered).
struct Listeners {
  std::mutex mutex;
  std::set<BufferRegistrations*> all;
};
Listeners& listeners() {
  static Listeners l;
  return l;
}

}  // namespace

BufferRegistrations::BufferRegistrations(RegisterOps ops) : ops_(std::move(ops)) {
  std::lock_guard lock(listeners().mutex);
  listeners().all.insert(this);
}

BufferRegistrations::~BufferRegistrations() {
  {
    std::lock_guard lock(listeners().mutex);
    listeners().all.erase(this);
  }
  std::lock_guard lock(mutex_);
  for (auto& [ptr, h] : held_) ops_.withdraw(h.handle);
}

void BufferRegistrations::ensure(void* ptr, size_t bytes) {
  if (bytes == 0) return;
  std::lock_guard lock(mutex_);
  auto* p = static_cast<char*>(ptr);
  auto it = held_.find(p);
  if (it != held_.end()) {
    if (it->second.bytes >= bytes) return;
    ops_.withdraw(it->second.handle);
    held_.erase(it);
  }
  void* handle = ops_.enroll(p, bytes);
  ++registrations_;
  held_.emplace(p, Held{bytes, handle});
}

void BufferRegistrations::released(const void* base, size_t bytes) {
  const char* lo = static_cast<const char*>(base);
  const char* hi = lo + bytes;
  std::lock_guard lock(mutex_);
  for (auto it = held_.begin(); it != held_.end();) {
    if (it->first >= lo && it->first < hi) {
      ops_.withdraw(it->second.handle);
      it = held_.erase(it);
    } else {
      ++it;
    }
  }
}

void BufferRegistrations::abandon() {
  std::lock_guard lock(mutex_);
  held_.clear();
}

size_t BufferRegistrations::registrations() const {
  std::lock_guard lock(mutex_);
  return registrations_;
}

size_t BufferRegistrations::held() const {
  std::lock_guard lock(mutex_);
  return held_.size();
}

void deviceMemoryReleased(const void* base, size_t bytes) {
  std::lock_guard lock(listeners().mutex);
  for (auto* r : listeners().all) r->released(base, bytes);
}

}  // namespace cb
