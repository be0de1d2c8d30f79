// Blocking NCCL communicators with deadlines, scoped NCCL environment settings and the
// per-thread communicator pool (see NcclComm.h).
#include "collectives/nccl/NcclComm.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "collectives/nccl/CudaCheck.h"
#include "collectives/nccl/GpuDevice.h"
#include "collectives/nccl/Watchdog.h"
#include "core/Error.h"
#include "core/ExitStuck.h"

namespace cb {
namespace {

// Polls `state` until it leaves ncclInProgress: spins with yields first (calls finish in
// microseconds), then sleeps briefly so a long wait (communicator init) leaves the CPU to NCCL's
// own threads.
class Backoff {
 public:
  void pause() {
    if (++spins_ < 2000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

 private:
  int spins_ = 0;
};

// The process-wide record behind ScopedNcclEnv (setenv is process state, so this is too).
struct EnvRecord {
  std::mutex mutex;
  std::condition_variable cv;
  int holders = 0;
  std::string activeKey;
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
};

EnvRecord& envRecord() {
  static EnvRecord record;
  return record;
}

// The communicator of this thread whose windows are held (NcclComm::windows).
thread_local NcclComm* tWindowHolder = nullptr;

uint64_t freshNonce() {
  std::random_device rd;
  uint64_t n = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^
               static_cast<uint64_t>(SteadyClock::now().time_since_epoch().count());
  return n ? n : 1;
}

}  // namespace

std::string ncclEnvText(const NcclEnv& env) {
  std::string out;
  for (const auto& [name, value] : env) {
    if (!out.empty()) out += ' ';
    out += name + '=' + value;
  }
  return out;
}

ScopedNcclEnv::ScopedNcclEnv(const NcclEnv& env, Deadline d) {
  auto& rec = envRecord();
  std::string key = ncclEnvText(env);
  std::unique_lock lock(rec.mutex);
  while (rec.holders > 0 && rec.activeKey != key) {
    if (d.expired()) {
      throw TimeoutError(fmt::format(
          "waiting to set '{}' while another NCCL communicator is created with '{}' did not end "
          "within {:g} s (-T)",
          key, rec.activeKey, d.seconds()));
    }
    rec.cv.wait_for(lock, std::chrono::milliseconds(50));
  }
  if (rec.holders++ == 0) {
    rec.activeKey = key;
    rec.saved.clear();
    for (const auto& [name, value] : env) {
      const char* old = std::getenv(name.c_str());
      rec.saved.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      setenv(name.c_str(), value.c_str(), 1);
    }
  }
}

ScopedNcclEnv::~ScopedNcclEnv() {
  auto& rec = envRecord();
  std::lock_guard lock(rec.mutex);
  if (--rec.holders == 0) {
    for (const auto& [name, old] : rec.saved) {
      if (old) {
        setenv(name.c_str(), old->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
    rec.saved.clear();
    rec.activeKey.clear();
    rec.cv.notify_all();
  }
}

NcclComm::NcclComm(Communicator& comm, int device, const NcclEnv& env, Deadline d)
    : device_(device), rank_(comm.rank()), size_(comm.size()), env_(env) {
  setThreadDevice(device_);

  // Rank 0 creates the id; a flag travels with it so that a failure there stops every rank now
  // instead of at the deadline.
  struct Bootstrap {
    uint8_t ok = 0;
    ncclUniqueId id{};
  } mine;
  std::string rootError;
  if (rank_ == 0) {
    ncclResult_t r = ncclGetUniqueId(&mine.id);
    if (r == ncclSuccess) {
      mine.ok = 1;
    } else {
      rootError = ncclErrorMessage(r, "ncclGetUniqueId", ncclGetLastError(nullptr));
    }
  }
  Bootstrap root = comm.allgather(mine, d)[0];
  if (!root.ok) {
    throw NcclError(rank_ == 0 ? rootError
                               : "rank 0 could not create the NCCL unique id (see its error)");
  }

  ScopedNcclEnv scoped(env_, d);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 1;
  // A blocking init can't be aborted safely (NcclComm.h): past the deadline, end the process
  // with one line rather than hang.
  const int rank = rank_;
  const double seconds = d.seconds();
  Watchdog initWatch([rank, seconds] {
    exitStuck(fmt::format(
        "rank {}: ncclCommInitRankConfig did not complete within {:g} s (-T); NCCL can't abort "
        "a blocking init, exiting",
        rank, seconds));
  });
  initWatch.arm(d);
  ncclResult_t r = ncclCommInitRankConfig(&comm_, size_, root.id, rank_, &config);
  initWatch.disarm();
  try {
    complete(r, "ncclCommInitRankConfig", d);
  } catch (...) {
    abort();
    throw;
  }
}

NcclComm::~NcclComm() {
  if (tWindowHolder == this) tWindowHolder = nullptr;
  if (!comm_) return;
  std::optional<ScopedDevice> on;
  try {
    on.emplace(device_);
  } catch (const Error&) {
    abort();  // the device is gone: nothing to flush
    return;
  }
  if (windows_) {
    if (!usable()) windows_->abandon();  // NCCL calls on a failed communicator may not return
    windows_.reset();
  }
  if (registrations_) {
    if (!usable()) registrations_->abandon();
    registrations_.reset();
  }
  if (aborted_.load()) return;
  // Finalize flushes outstanding work and may wait for peers: a watchdog bounds it, and an
  // abort (which ends the wait) replaces the destroy when it fires or anything failed.
  bool destroyed = false;
  if (!failed_.load()) {
    Watchdog watch([this] { abort(); });
    watch.arm(Deadline::after(10));
    ncclResult_t state = ncclInProgress;
    guard_.use([&] { state = ncclCommFinalize(comm_); });
    bool fired = watch.disarm();
    if (!fired && state == ncclSuccess) {
      guard_.use([&] { destroyed = ncclCommDestroy(comm_) == ncclSuccess; });
    }
  }
  if (!destroyed) abort();
}

void NcclComm::complete(ncclResult_t r, const char* what, Deadline d) {
  if (r == ncclSuccess) return;
  if (r != ncclInProgress) fail(r, what);
  ncclResult_t state = ncclInProgress;
  Backoff backoff;
  while (true) {
    ncclResult_t q = ncclSuccess;
    if (!asyncError(&state, &q)) {
      throw TimeoutError(fmt::format("{}: the NCCL communicator was aborted", what));
    }
    if (q != ncclSuccess) fail(q, "ncclCommGetAsyncError");
    if (state != ncclInProgress) break;
    if (d.expired()) {
      abort();
      throw TimeoutError(fmt::format(
          "{} did not complete within {:g} s (-T); NCCL communicator aborted", what, d.seconds()));
    }
    backoff.pause();
  }
  if (state != ncclSuccess) fail(state, what);
}

bool NcclComm::asyncError(ncclResult_t* state, ncclResult_t* query) {
  return guard_.use([&] { *query = ncclCommGetAsyncError(comm_, state); });
}

void NcclComm::checkAsync(const char* what) {
  ncclResult_t state = ncclSuccess, q = ncclSuccess;
  if (!asyncError(&state, &q)) {
    throw TimeoutError(fmt::format("{}: the NCCL communicator was aborted", what));
  }
  if (q != ncclSuccess) fail(q, "ncclCommGetAsyncError");
  if (state != ncclSuccess && state != ncclInProgress) fail(state, what);
}

void NcclComm::abort() noexcept {
  if (!comm_ || aborted_.exchange(true)) return;
  guard_.end([this] { ncclCommAbort(comm_); }, kAbortGrace);
}

void NcclComm::throwAborted(const char* what) {
  throw TimeoutError(fmt::format("{}: the NCCL communicator was aborted", what));
}

SymmetricWindows& NcclComm::windows(Deadline d) {
  windowDeadline_ = d;
  if (tWindowHolder && tWindowHolder != this) {
    NcclComm* other = tWindowHolder;
    if (other->windows_ && !other->usable()) other->windows_->abandon();
    other->windows_.reset();
  }
  tWindowHolder = this;
  if (windows_) return *windows_;
  WindowOps ops;
  ops.allocate = [](size_t bytes) {
    void* p = nullptr;
    checkNccl(ncclMemAlloc(&p, bytes), "ncclMemAlloc (symmetric window)");
    return p;
  };
  ops.release = [](void* p) { ncclMemFree(p); };
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
  ops.enroll = [this](void* p, size_t bytes) -> void* {
    ncclWindow_t win = nullptr;
    call("ncclCommWindowRegister", windowDeadline_, [&](ncclComm_t c) {
      return ncclCommWindowRegister(c, p, bytes, &win, NCCL_WIN_COLL_SYMMETRIC);
    });
    return win;
  };
  ops.withdraw = [this](void* win) {
    try {
      call("ncclCommWindowDeregister", Deadline::after(10), [&](ncclComm_t c) {
        return ncclCommWindowDeregister(c, static_cast<ncclWindow_t>(win));
      });
    } catch (const Error&) {
      // marked failed; the pool replaces the communicator
    }
  };
#else
  ops.enroll = [](void*, size_t) -> void* {
    throw EnvironmentError("this NCCL build has no symmetric windows (needs NCCL 2.27)");
  };
  ops.withdraw = [](void*) {};
#endif
  windows_ = std::make_unique<SymmetricWindows>(std::move(ops));
  return *windows_;
}

BufferRegistrations& NcclComm::registrations(Deadline d) {
  registerDeadline_ = d;
  if (registrations_) return *registrations_;
  RegisterOps ops;
  ops.enroll = [this](void* p, size_t bytes) -> void* {
    void* handle = nullptr;
    call("ncclCommRegister", registerDeadline_,
         [&](ncclComm_t c) { return ncclCommRegister(c, p, bytes, &handle); });
    return handle;
  };
  ops.withdraw = [this](void* handle) {
    // Local (no peer takes part); an aborted communicator is not touched (the guard).
    guard_.use([&] { ncclCommDeregister(comm_, handle); });
  };
  registrations_ = std::make_unique<BufferRegistrations>(std::move(ops));
  return *registrations_;
}

std::string NcclComm::lastError() const {
  std::string text;
  if (!comm_) return text;
  guard_.use([&] {
    const char* s = ncclGetLastError(comm_);
    if (s) text = s;
  });
  return text;
}

void NcclComm::fail(ncclResult_t r, const char* what) {
  // A call that fails because the watchdog aborted the communicator under it (seen on an H100:
  // a batch of queued calls cut at -T) reports the deadline, not NCCL's error for the abort.
  if (aborted_.load()) {
    throw TimeoutError(fmt::format(
        "{} did not complete before the deadline (-T); NCCL communicator aborted", what));
  }
  std::string last = lastError();
  // NCCL refusing a forced algorithm/protocol plans nothing and leaves the communicator intact:
  // keep it (the column's refusal is remembered, NcclVariantPlan.h); anything else may have
  // left work or state behind, so the pool makes a new one.
  if (env_.empty() || !isNcclRefusal(r, last)) failed_ = true;
  throw NcclCallError(ncclErrorMessage(r, what, last), r, last);
}

NcclCommPool::NcclCommPool()
    : NcclCommPool([](Communicator& comm, int device, const NcclEnv& env, Deadline d) {
        return std::make_shared<NcclComm>(comm, device, env, d);
      }) {}

NcclCommPool::NcclCommPool(NcclCommFactory factory) : factory_(std::move(factory)) {}

NcclCommPool& NcclCommPool::forThisThread() {
  thread_local NcclCommPool pool;
  return pool;
}

std::shared_ptr<NcclComm> NcclCommPool::acquire(Communicator& comm, int device, const NcclEnv& env,
                                                Deadline d) {
  std::string key = ncclEnvText(env);
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& e) { return e.owner == &comm && e.envKey == key; });
  uint64_t mine = 0;
  if (it != entries_.end() && it->comm->usable() && it->comm->rank() == comm.rank() &&
      it->comm->size() == comm.size() && it->comm->device() == device) {
    mine = it->nonce;
  }
  auto all = comm.allgather(mine, d);
  bool agree =
      mine != 0 && std::all_of(all.begin(), all.end(), [&](uint64_t n) { return n == mine; });
  if (agree) {
    it->lastUse = ++clock_;
    return it->comm;
  }
  if (it != entries_.end()) entries_.erase(it);

  // Make room first, so the old communicator's GPU memory is free before the new one allocates.
  // Every rank runs the same sequence, so every rank evicts the same entries.
  while (entries_.size() >= kMaxEntries) {
    auto victim =
        std::min_element(entries_.begin(), entries_.end(),
                         [](const Entry& a, const Entry& b) { return a.lastUse < b.lastUse; });
    entries_.erase(victim);
  }

  uint64_t nonce = comm.broadcastValue<uint64_t>(comm.rank() == 0 ? freshNonce() : 0, 0, d);
  auto created = factory_(comm, device, env, d);
  ++created_;
  entries_.push_back({&comm, key, nonce, ++clock_, created});
  return created;
}

}  // namespace cb
