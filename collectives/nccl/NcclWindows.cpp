// The -R 2 window policy (see NcclWindows.h).
#include "collectives/nccl/NcclWindows.h"

#include <algorithm>

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

}  // namespace cb
