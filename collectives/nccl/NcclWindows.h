// The symmetric windows of -R 2 (ncclCommWindowRegister): two device buffers from ncclMemAlloc,
// registered as windows of one communicator. Registration is collective and costs a round of
// NCCL bootstrap, so the windows belong to the communicator, not to a prepared collective:
// allocated and registered once per run at the run's largest size (the sweep passes it as
// GpuLaunchOptions::largestBytes), as the engine's buffer pool keeps its buffers, and shared by
// every prepared collective on that communicator, the -G checker instance included.
//
// The device and NCCL calls are behind WindowOps, so the policy (how often they happen) is tested
// on the host by counting them.
#pragma once

#include <cstddef>
#include <functional>

namespace cb {

struct WindowOps {
  std::function<void*(size_t bytes)> allocate;           // ncclMemAlloc
  std::function<void(void* ptr)> release;                // ncclMemFree
  std::function<void*(void* ptr, size_t bytes)> enroll;  // ncclCommWindowRegister (collective)
  std::function<void(void* window)> withdraw;            // ncclCommWindowDeregister (collective)
};

class SymmetricWindows {
 public:
  explicit SymmetricWindows(WindowOps ops) : ops_(std::move(ops)) {}
  ~SymmetricWindows() { drop(); }
  SymmetricWindows(const SymmetricWindows&) = delete;
  SymmetricWindows& operator=(const SymmetricWindows&) = delete;

  struct Pair {
    char* a;  // the send side, or the whole in-place range
    char* b;  // the out-of-place receive side
    size_t bytes;
  };
  // Windows of at least `bytes` each. Collective: every rank asks for the same sizes in the same
  // order, so every rank (re)registers at the same calls. Allocates max(bytes, largestBytes) the
  // first time; again (deregister, free, allocate, register) only for a larger size.
  Pair ensure(size_t bytes, size_t largestBytes);
  // Forgets the windows without deregistering them (the communicator failed or was aborted:
  // NCCL calls on it would not return); the memory is still freed.
  void abandon() { withdrawn_ = true; }
  // ncclCommWindowRegister calls so far (tests).
  size_t registrations() const { return registrations_; }

 private:
  void drop();

  WindowOps ops_;
  char* a_ = nullptr;
  char* b_ = nullptr;
  void* windowA_ = nullptr;
  void* windowB_ = nullptr;
  size_t bytes_ = 0;
  size_t registrations_ = 0;
  bool withdrawn_ = false;
};

}  // namespace cb
