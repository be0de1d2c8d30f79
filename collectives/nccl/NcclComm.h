// NCCL communicators, created blocking (config.blocking = 1) as nccl-tests creates them. A
// non-blocking communicator would be easier to bound with deadlines, but in NCCL 2.28 every call
// on one ends in ncclGroupEndInternal creating a helper thread (and returning ncclInProgress), so
// each timed call would include a thread creation and the planning on it. Deadlines are kept by
// other means:
//   - init: a watchdog armed with the deadline. NCCL can't abort a blocking init from another
//     thread safely (init.cc frees the communicator itself when the init fails, which would race
//     ncclCommAbort), so past the deadline the process prints one line and exits (code 2);
//   - calls: the DeviceCallRunner's watchdog aborts the communicator (ncclCommAbort from another
//     thread while this one is inside NCCL or waits for the stream; supported on an initialized
//     communicator), and the stream wait polls ncclCommGetAsyncError against the deadline.
//
// The unique id travels through Communicator::allgatherBytes (rank 0 creates it, everyone takes
// rank 0's), which works in the local-threads and the MPI world alike.
//
// NCCL reads NCCL_ALGO / NCCL_PROTO when a communicator is created, so algorithm variants get a
// communicator of their own, created with those variables set (setenv) and restored afterwards.
#pragma once

#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collectives/nccl/NcclWindows.h"
#include "core/Clock.h"
#include "core/Communicator.h"
#include "core/EndableUse.h"

namespace cb {

// Environment settings applied while a communicator is created, e.g. {{"NCCL_ALGO", "Ring"}}.
using NcclEnv = std::vector<std::pair<std::string, std::string>>;
// "NCCL_ALGO=Ring NCCL_PROTO=LL", or "" for none.
std::string ncclEnvText(const NcclEnv& env);

// Sets the variables for its lifetime and restores the previous values after. setenv is process
// state, and in the local world every rank thread creates its communicator at the same time: all
// holders share one process-wide record; holders of the same settings overlap (a reference
// count), holders of different settings wait (up to the deadline) for the others to finish.
class ScopedNcclEnv {
 public:
  ScopedNcclEnv(const NcclEnv& env, Deadline d);
  ~ScopedNcclEnv();
  ScopedNcclEnv(const ScopedNcclEnv&) = delete;
  ScopedNcclEnv& operator=(const ScopedNcclEnv&) = delete;
};

class NcclComm {
 public:
  // Collective over `comm`: ranks must call it together. `device` becomes current.
  NcclComm(Communicator& comm, int device, const NcclEnv& env, Deadline d);
  // No NCCL communicator behind it: for tests of the pool's policy (get() is null).
  struct Placeholder {};
  NcclComm(Placeholder, int rank, int size, int device, const NcclEnv& env)
      : device_(device), rank_(rank), size_(size), env_(env) {}
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  ncclComm_t get() const { return comm_; }
  int device() const { return device_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  const NcclEnv& env() const { return env_; }
  // False after an abort or an asynchronous error: the pool then makes a new one.
  bool usable() const { return !aborted_.load() && !failed_.load(); }
  // True once abort() ran (the watchdog's, at a deadline): the handle must not be used again.
  bool aborted() const { return aborted_.load(); }

  // Makes one NCCL call on this communicator, `fn(handle)`, and completes it (complete()). The
  // call goes through the abort's guard (core/EndableUse.h): after abort() began, no call
  // touches the handle (TimeoutError instead), and abort() waits for a call in progress before
  // ncclCommAbort frees the communicator. Every use of get() by a variant goes through here.
  template <class Fn>
  void call(const char* what, Deadline d, Fn&& fn) {
    ncclResult_t r = ncclSuccess;
    if (!guard_.use([&] { r = fn(comm_); })) throwAborted(what);
    complete(r, what, d);
  }
  // Runs `fn` (work that relies on the communicator, e.g. launching a graph of its kernels)
  // unless the communicator was aborted; false, fn not run, after an abort.
  template <class Fn>
  bool whileAlive(Fn&& fn) {
    return guard_.use(std::forward<Fn>(fn));
  }

  // Checks the result `r` of a call: throws NcclCallError on an error (marking this communicator
  // failed), TimeoutError when the communicator was aborted (the error is the abort's). Should a
  // call still say ncclInProgress, polls ncclCommGetAsyncError until it ends, aborting and throwing
  // TimeoutError past the deadline.
  void complete(ncclResult_t r, const char* what, Deadline d);
  // Throws NcclCallError (marking the communicator failed) on an asynchronous error.
  void checkAsync(const char* what);
  // Thread-safe and idempotent: the watchdog may call it while the owner waits on an event. Waits
  // (up to kAbortGrace) for a call in progress through call()/whileAlive() to leave first.
  void abort() noexcept;
  static constexpr std::chrono::milliseconds kAbortGrace{2000};
  // The last error text NCCL recorded for this communicator ("" if none).
  std::string lastError() const;
  // The -R 2 windows of this communicator (NcclWindows.h), made on first use; `d` bounds the
  // registrations that the next ensure() makes. One communicator of the thread holds windows at
  // a time: taking them here drops another's (deregistered and freed; every rank's pool drops
  // the same at the same call), so several --nccl-algo columns at -e 8G hold 2 x 8 GiB, not
  // 2 x 8 GiB per column.
  SymmetricWindows& windows(Deadline d);
  bool holdsWindows() const { return windows_ != nullptr; }
  // The -R 1 registrations of this communicator (NcclWindows.h), kept for the run.
  BufferRegistrations& registrations(Deadline d);

 private:
  [[noreturn]] void fail(ncclResult_t r, const char* what);
  [[noreturn]] static void throwAborted(const char* what);
  // ncclGetLastError / ncclCommGetAsyncError through the guard: false after an abort.
  bool asyncError(ncclResult_t* state, ncclResult_t* query);

  ncclComm_t comm_ = nullptr;
  int device_;
  int rank_;
  int size_;
  NcclEnv env_;
  std::atomic<bool> aborted_{false};
  std::atomic<bool> failed_{false};
  // Every NCCL call on comm_ after init; abort() ends it. Before the windows and registrations,
  // whose withdrawals go through it when they are destroyed.
  mutable EndableUse guard_;
  Deadline windowDeadline_ = Deadline::never();
  std::unique_ptr<SymmetricWindows> windows_;  // deregistered before the communicator goes
  Deadline registerDeadline_ = Deadline::never();
  std::unique_ptr<BufferRegistrations> registrations_;  // likewise
};

// How a pool makes a communicator (NcclComm's constructor; tests count calls with a fake).
using NcclCommFactory =
    std::function<std::shared_ptr<NcclComm>(Communicator&, int device, const NcclEnv&, Deadline)>;

// The rank's NCCL communicators, reused across prepared collectives: creating one costs 0.1-1 s
// and the engine prepares a variant per measured point. One pool per thread, because an NCCL
// communicator belongs to the rank that created it and local-world ranks are threads (thread exit
// frees them while the CUDA runtime is still up). acquire() is collective: the ranks agree on
// reusing a cached communicator by comparing the nonce they drew together when creating it, so a
// stale entry (e.g. a new Communicator at a recycled address) is never mixed with a fresh one.
//
// Up to kMaxEntries communicators (any settings) are kept, least recently used evicted first.
// A sweep alternates between every NCCL variant at each size, so the cache must hold one per
// variant or it rebuilds communicators at every point: 24 covers the default communicator and
// every --nccl-algo x --nccl-proto pair NCCL 2.28 knows (7 x 3).
class NcclCommPool {
 public:
  static constexpr size_t kMaxEntries = 24;

  NcclCommPool();
  explicit NcclCommPool(NcclCommFactory factory);
  static NcclCommPool& forThisThread();
  std::shared_ptr<NcclComm> acquire(Communicator& comm, int device, const NcclEnv& env, Deadline d);
  size_t size() const { return entries_.size(); }
  // Communicators created so far (each one an ncclCommInitRankConfig).
  size_t created() const { return created_; }

 private:
  struct Entry {
    const Communicator* owner;
    std::string envKey;
    uint64_t nonce;
    uint64_t lastUse;
    std::shared_ptr<NcclComm> comm;
  };
  NcclCommFactory factory_;
  std::vector<Entry> entries_;
  uint64_t clock_ = 0;
  size_t created_ = 0;
};

}  // namespace cb
