// NCCL communicators: created non-blocking (config.blocking = 0) so that init and every call can
// be polled with ncclCommGetAsyncError against a Deadline and aborted (ncclCommAbort) when it
// passes: a lost peer gives a TimeoutError, never a hang.
//
// The unique id travels through Communicator::allgatherBytes (rank 0 creates it, everyone takes
// rank 0's), which works in the local-threads and the MPI world alike.
//
// NCCL reads NCCL_ALGO / NCCL_PROTO when a communicator is created, so algorithm variants get a
// communicator of their own, created with those variables set (setenv) and restored afterwards.
#pragma once

#include <nccl.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/Clock.h"
#include "core/Communicator.h"

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

  // Waits out a non-blocking call that returned `r`: polls ncclCommGetAsyncError while it says
  // ncclInProgress; throws NcclCallError on an error (marking this communicator failed), or
  // aborts and throws TimeoutError past the deadline.
  void complete(ncclResult_t r, const char* what, Deadline d);
  // Throws NcclCallError (marking the communicator failed) on an asynchronous error.
  void checkAsync(const char* what);
  // Thread-safe and idempotent: the watchdog may call it while the owner waits on an event.
  void abort() noexcept;
  // The last error text NCCL recorded for this communicator ("" if none).
  std::string lastError() const;

 private:
  [[noreturn]] void fail(ncclResult_t r, const char* what);

  ncclComm_t comm_ = nullptr;
  int device_;
  int rank_;
  int size_;
  NcclEnv env_;
  std::atomic<bool> aborted_{false};
  std::atomic<bool> failed_{false};
};

// The rank's NCCL communicators, reused across prepared collectives: creating one costs 0.1-1 s
// and the engine prepares a variant per measured point. One pool per thread, because an NCCL
// communicator belongs to the rank that created it and local-world ranks are threads (thread exit
// frees them while the CUDA runtime is still up). acquire() is collective: the ranks agree on
// reusing a cached communicator by comparing the nonce they drew together when creating it, so a
// stale entry (e.g. a new Communicator at a recycled address) is never mixed with a fresh one.
class NcclCommPool {
 public:
  static NcclCommPool& forThisThread();
  std::shared_ptr<NcclComm> acquire(Communicator& comm, int device, const NcclEnv& env, Deadline d);
  // Drops every cached communicator of this thread (they close when no prepared collective
  // holds them any more).
  void clear();
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    const Communicator* owner;
    std::string envKey;
    uint64_t nonce;
    uint64_t lastUse;
    std::shared_ptr<NcclComm> comm;
  };
  std::vector<Entry> entries_;
  uint64_t clock_ = 0;
};

}  // namespace cb
