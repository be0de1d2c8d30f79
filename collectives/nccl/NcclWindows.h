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
#include <map>
#include <mutex>

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

// The buffers -R 1 registers (ncclCommRegister, local to the rank: no peer takes part). nccl-tests
// registers its buffers once per run; a prepared collective lives for one point, so the
// registrations belong to the communicator: each buffer is registered the first time a call uses
// it and kept for the run (a larger range of the same buffer registers again), and forgotten when
// the engine frees the buffer (released(), called before the memory goes) or the communicator
// goes. Behind RegisterOps, so the policy is counted on the host.
struct RegisterOps {
  std::function<void*(void* ptr, size_t bytes)> enroll;  // ncclCommRegister: the handle
  std::function<void(void* handle)> withdraw;            // ncclCommDeregister
};

class BufferRegistrations {
 public:
  explicit BufferRegistrations(RegisterOps ops);
  ~BufferRegistrations();
  BufferRegistrations(const BufferRegistrations&) = delete;
  BufferRegistrations& operator=(const BufferRegistrations&) = delete;

  // [ptr, ptr + bytes) registered: at once if already covered, else (again) now.
  void ensure(void* ptr, size_t bytes);
  // The memory [base, base + bytes) is about to be freed: its registrations are withdrawn.
  void released(const void* base, size_t bytes);
  // Forgets every registration without withdrawing (the communicator failed or was aborted).
  void abandon();
  size_t registrations() const;  // ncclCommRegister calls so far
  size_t held() const;

 private:
  struct Held {
    size_t bytes;
    void* handle;
  };
  RegisterOps ops_;
  // released() comes from the thread that frees a buffer, which in the local world may be another
  // rank's thread than this set's owner.
  mutable std::mutex mutex_;
  std::map<char*, Held> held_;
  size_t registrations_ = 0;
};

// Every device buffer's release passes through here before the memory is freed, so the
// registrations that cover it (any communicator's on this process) are withdrawn first.
void deviceMemoryReleased(const void* base, size_t bytes);

}  // namespace cb
