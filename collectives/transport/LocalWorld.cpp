// Thread ranks in one process. Point-to-point is a rendezvous: the sender posts a pointer to its
// data in the receiver's inbox and waits; the receiver copies (or reduces) straight from the
// sender's memory and marks the post done. One copy, no staging: the zero-copy limit of a host
// transport. Each rank has one mutex + condition variable guarding its inbox and the completion of
// the sends it posted, so every wait is a predicate wait with a deadline (no lost wake-ups).
#include "collectives/transport/LocalWorld.h"

#include <sched.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include "collectives/transport/WaitPolicy.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/Reduce.h"

namespace cb {
namespace {

struct Post {
  int src;
  int tag;
  const void* data;
  size_t bytes;
  bool done = false;  // guarded by the sender's mailbox mutex
};

struct Mailbox {
  std::mutex m;
  std::condition_variable cv;
  std::deque<Post*> inbox;  // posts addressed to this rank, in posting order
  // The CPU this rank ran on when it last entered an exchange (-1: unknown): a peer waiting
  // for it does not spin when they share a CPU, since spinning there only delays it.
  alignas(64) std::atomic<int> cpu{-1};
  // Bumped (under m) with every notify of cv: a spinning owner watches it without the lock (and
  // on its own cache line), so its spin never contends with the peer that posts into this box.
  std::atomic<uint64_t> changes{0};
  void notify() {
    changes.fetch_add(1, std::memory_order_release);
    cv.notify_all();
  }
};

struct LocalShared {
  LocalShared(int n, bool over) : nranks(n), oversubscribed(over), boxes(n) {}
  const int nranks;
  // More rank threads in the process's world than CPUs it may run on: a rank waiting for a
  // peer yields instead of spinning, since the peer may need this very CPU.
  const bool oversubscribed;
  std::vector<Mailbox> boxes;
  std::atomic<bool> aborted{false};

  // Allgather / barrier state.
  std::mutex gm;
  std::condition_variable gcv;
  uint64_t generation = 0;
  int arrived = 0;
  std::vector<std::vector<std::byte>> slots{static_cast<size_t>(nranks)};
  std::vector<char> present = std::vector<char>(static_cast<size_t>(nranks), 0);  // this round
  std::shared_ptr<const std::vector<std::byte>> lastResult;

  // Sub-communicators being created: (split sequence, color) -> shared state.
  std::mutex sm;
  std::map<std::pair<uint64_t, int>, std::shared_ptr<LocalShared>> pendingSplits;

  void abortAll() {
    aborted = true;
    for (auto& b : boxes) {
      std::lock_guard lk(b.m);
      b.notify();
    }
    std::lock_guard lk(gm);
    gcv.notify_all();
  }
};

// How a waiting rank spends the time before its peer's post or completion arrives:
//  - A peer on another CPU: spin (PAUSE, watching the box's change counter) for kSpinTime, the
//    cost of a few small hand-offs; a sleep would add a wake-up, which on a VM is an IPI to a
//    halted vCPU (~15 us here).
//  - More ranks than CPUs, or the peer on this CPU: spinning keeps the peer off; yield
//    (WaitPolicy.h: timed, and paused when the CPU went to another process), as Open MPI's
//    mpi_yield_when_idle: 4 ranks on 2 idle cores, 17 us an 8 B allreduce, 100 us sleeping.
//  - Then sleep on the box's condition variable until a notify.
// The spin-then-yield loop this replaced gave other processes' slices away (WaitPolicy.h).
constexpr auto kSpinTime = std::chrono::microseconds(20);
constexpr int kMaxYields = 64;

int allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

// Spins until `changes` moves past `seen` (true) or `until` passes (false).
bool spinUntilChanged(const std::atomic<uint64_t>& changes, uint64_t seen,
                      SteadyClock::time_point until) {
  while (true) {
    for (int k = 0; k < 64; ++k) {
      if (changes.load(std::memory_order_acquire) != seen) return true;
      cpuRelax();
    }
    if (SteadyClock::now() >= until) return false;
  }
}

constexpr std::string_view kAbortedWhileIn = "aborted while in ";

// `where`: what this rank was waiting in, which LocalWorld::run puts into a timeout's line.
[[noreturn]] void throwAborted(const std::string& where) {
  throw Error(ErrorKind::kInternal,
              fmt::format("{}{}: another rank of the local world failed", kAbortedWhileIn, where));
}

// A signal handler cannot wake a condition variable, so every wait sleeps in slices of this
// length and looks at the interrupt flag between them: a SIGINT reaches a rank blocked in a
// proxy step or a diagnosis round within a slice, not at the (minutes away) deadline.
constexpr auto kInterruptSlice = std::chrono::milliseconds(50);

[[noreturn]] void throwInterrupted(const char* where, int rank) {
  throw InterruptedError(
      fmt::format("{} on rank {} interrupted by signal {}", where, rank, interruptSignal()));
}

// Waits on cv until pred holds, the deadline passes (returns false) or a signal arrives
// (returns true with interrupted set).
template <class Pred>
bool waitSliced(std::condition_variable& cv, std::unique_lock<std::mutex>& lk, const Deadline& d,
                bool& interrupted, Pred pred) {
  while (!pred()) {
    if (interruptStopsWaits()) {
      interrupted = true;
      return true;
    }
    const auto now = SteadyClock::now();
    if (now >= d.at()) return pred();
    cv.wait_until(lk, std::min(d.at(), now + kInterruptSlice));
  }
  return true;
}

// "rank 1 to send, rank 2 to receive": the peers a timed-out exchange still waits for.
std::string waitedFor(std::vector<int> from, std::vector<int> to) {
  auto names = [](std::vector<int>& v, const char* what) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return fmt::format("rank{} {} to {}", v.size() == 1 ? "" : "s", fmt::join(v, ", "), what);
  };
  if (!from.empty() && !to.empty()) return names(from, "send") + ", " + names(to, "receive");
  return from.empty() ? names(to, "receive") : names(from, "send");
}

class LocalComm final : public Communicator, public LocalExchange {
 public:
  LocalComm(std::shared_ptr<LocalShared> shared, int rank)
      : shared_(std::move(shared)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return shared_->nranks; }
  WorldKind worldKind() const override { return WorldKind::kLocal; }

  void send(int peer, const void* data, size_t bytes, int tag, Deadline d) override {
    checkPeer(peer);
    SendOp s{peer, data, bytes};
    exchangeTagged({&s, 1}, {}, tag, d);
  }
  void recv(int peer, void* data, size_t bytes, int tag, Deadline d) override {
    checkPeer(peer);
    RecvOp r{peer, data, bytes};
    exchangeTagged({}, {&r, 1}, tag, d);
  }
  void barrier(Deadline d) override { allgatherBytes(nullptr, 0, d); }

  std::vector<std::byte> allgatherBytes(const void* data, size_t bytes, Deadline d) override {
    auto& s = *shared_;
    std::unique_lock lk(s.gm);
    auto& slot = s.slots[rank_];
    slot.resize(bytes);
    if (bytes) std::memcpy(slot.data(), data, bytes);
    uint64_t gen = s.generation;
    s.present[rank_] = 1;
    if (++s.arrived == s.nranks) {
      std::fill(s.present.begin(), s.present.end(), 0);
      for (const auto& sl : s.slots) {
        if (sl.size() != bytes) {
          s.arrived = 0;
          throw InternalError("allgather: ranks contributed different sizes");
        }
      }
      auto result = std::make_shared<std::vector<std::byte>>();
      result->reserve(bytes * s.nranks);
      for (const auto& sl : s.slots) result->insert(result->end(), sl.begin(), sl.end());
      s.lastResult = std::move(result);
      s.arrived = 0;
      ++s.generation;
      s.gcv.notify_all();
    } else {
      bool interrupted = false;
      const bool arrived = waitSliced(s.gcv, lk, d, interrupted,
                                      [&] { return s.generation != gen || s.aborted.load(); });
      if (s.generation == gen) {
        // Leaving without the result: this rank's arrival is taken back so the count stays true.
        // It stays marked present: it did arrive, and the others' lines should not name it.
        --s.arrived;
        std::vector<int> missing;
        for (int r = 0; r < s.nranks; ++r) {
          if (!s.present[r] && r != rank_) missing.push_back(r);
        }
        // Empty only for a rank that came after a peer had given up (an abort, not a timeout).
        const std::string where =
            missing.empty()
                ? fmt::format("barrier/allgather on rank {} (arrived after a peer gave up)", rank_)
                : fmt::format("barrier/allgather on rank {} (rank{} {} never arrived)", rank_,
                              missing.size() == 1 ? "" : "s", fmt::join(missing, ", "));
        if (s.aborted) throwAborted(where);
        if (interrupted) throwInterrupted("barrier/allgather", rank_);
        if (!arrived) d.check(where);
      }
    }
    return *s.lastResult;
  }

  std::unique_ptr<Communicator> split(int color, int key, Deadline d) override {
    struct Entry {
      int color, key, rank;
    };
    auto all = allgather(Entry{color, key, rank_}, d);
    uint64_t seq = splitSeq_++;
    std::unique_ptr<Communicator> out;
    if (color >= 0) {
      std::vector<Entry> members;
      for (const auto& e : all) {
        if (e.color == color) members.push_back(e);
      }
      std::stable_sort(members.begin(), members.end(), [](const Entry& a, const Entry& b) {
        return a.key != b.key ? a.key < b.key : a.rank < b.rank;
      });
      int newRank = static_cast<int>(std::find_if(members.begin(), members.end(),
                                                  [&](const Entry& e) { return e.rank == rank_; }) -
                                     members.begin());
      std::shared_ptr<LocalShared> sub;
      {
        std::lock_guard lk(shared_->sm);
        auto& slot = shared_->pendingSplits[{seq, color}];
        if (!slot) {
          slot = std::make_shared<LocalShared>(static_cast<int>(members.size()),
                                               shared_->oversubscribed);
        }
        sub = slot;
      }
      out = std::make_unique<LocalComm>(std::move(sub), newRank);
    }
    barrier(d);  // every member holds its copy: the table entry can go
    if (rank_ == 0) {
      std::lock_guard lk(shared_->sm);
      std::erase_if(shared_->pendingSplits, [&](const auto& kv) { return kv.first.first == seq; });
    }
    return out;
  }

  void exchangeTagged(std::span<const SendOp> sends, std::span<const RecvOp> recvs, int tag,
                      Deadline d) override;
  // Before giving up on a timed-out exchange: take back the posts nobody took, and wait for the
  // ones a receiver is copying right now, so no one reads this stack frame after we leave.
  void withdrawPosts(std::vector<Post>& posts, std::span<const SendOp> sends);
  size_t takeArrived(std::span<const RecvOp> recvs, std::vector<char>& received, size_t pending,
                     int tag);
  const std::shared_ptr<LocalShared>& shared() const { return shared_; }

 private:
  // Spinning helps only while a peer this rank waits for runs on another CPU; on this CPU it
  // keeps that peer off until the spin ends (both threads on one core: each hand-off would
  // cost the whole spin). True when every peer this rank still waits for last ran on its CPU.
  bool peerOnThisCpu(std::span<const RecvOp> recvs, const std::vector<char>& received,
                     std::span<const SendOp> sends, const std::vector<Post>& posts) const {
    const int here = sched_getcpu();
    auto elsewhere = [&](int peer) {
      return shared_->boxes[peer].cpu.load(std::memory_order_relaxed) != here;
    };
    for (size_t i = 0; i < recvs.size(); ++i) {
      if (!received[i] && elsewhere(recvs[i].peer)) return false;
    }
    for (size_t i = 0; i < posts.size(); ++i) {
      if (!posts[i].done && elsewhere(sends[i].peer)) return false;
    }
    return true;
  }

  void checkPeer(int peer) const {
    if (peer < 0 || peer >= size()) {
      throw InternalError(fmt::format("peer {} out of range [0, {})", peer, size()));
    }
  }

  std::shared_ptr<LocalShared> shared_;
  int rank_;
  uint64_t splitSeq_ = 0;
};

void LocalComm::exchangeTagged(std::span<const SendOp> sends, std::span<const RecvOp> recvs,
                               int tag, Deadline d) {
  auto& s = *shared_;
  auto& mine = s.boxes[rank_];
  // Posts live on this stack frame: we return only when every receiver marked them done.
  std::vector<Post> posts;
  posts.reserve(sends.size());
  for (const auto& op : sends) posts.push_back(Post{rank_, tag, op.data, op.bytes});
  for (auto& p : posts) {
    auto& box = s.boxes[sends[&p - posts.data()].peer];
    std::lock_guard lk(box.m);
    box.inbox.push_back(&p);
    box.notify();
  }
  std::vector<char> received(recvs.size(), 0);
  size_t pendingRecvs = recvs.size();
  auto sendsDone = [&] {
    return std::all_of(posts.begin(), posts.end(), [](const Post& p) { return p.done; });
  };
  // Names the ranks this one still waits for: the question a hang asks is who never came.
  auto where = [&] {
    std::vector<int> from, to;
    for (size_t i = 0; i < recvs.size(); ++i) {
      if (!received[i]) from.push_back(recvs[i].peer);
    }
    for (size_t i = 0; i < posts.size(); ++i) {
      if (!posts[i].done) to.push_back(sends[i].peer);
    }
    return fmt::format("point-to-point exchange on rank {} (waiting for {})", rank_,
                       waitedFor(from, to));
  };
  mine.cpu.store(sched_getcpu(), std::memory_order_relaxed);
  int spins = 0;
  SteadyClock::time_point spinFrom;
  while (true) {
    pendingRecvs -= takeArrived(recvs, received, pendingRecvs, tag);
    {
      std::unique_lock lk(mine.m);
      if (pendingRecvs == 0 && sendsDone()) return;
      if (s.aborted) {
        const std::string text = where();  // reads the posts' done flags: under the lock
        lk.unlock();
        withdrawPosts(posts, sends);
        throwAborted(text);
      }
      // Spin, yield or sleep: see kSpinTime.
      if (spins++ == 0) spinFrom = SteadyClock::now();
      if (!s.oversubscribed && !peerOnThisCpu(recvs, received, sends, posts)) {
        const uint64_t seen = mine.changes.load(std::memory_order_relaxed);
        lk.unlock();
        if (spinUntilChanged(mine.changes, seen, spinFrom + kSpinTime)) continue;
        lk.lock();  // spun out: sleep (the wait's predicate sees anything that came meanwhile)
      } else if (spins <= kMaxYields && yieldsAllowed()) {
        lk.unlock();
        timedYield();
        continue;
      }
      auto ready = [&] {
        if (s.aborted || (pendingRecvs == 0 && sendsDone())) return true;
        for (size_t i = 0; i < recvs.size(); ++i) {
          if (received[i]) continue;
          for (const Post* p : mine.inbox) {
            if (p->src == recvs[i].peer && p->tag == tag) return true;
          }
        }
        return sendsDone() && pendingRecvs == 0;
      };
      bool interrupted = false;
      const bool woke = waitSliced(mine.cv, lk, d, interrupted, ready);
      if (interrupted) {
        lk.unlock();
        withdrawPosts(posts, sends);
        throwInterrupted("point-to-point exchange", rank_);
      }
      if (!woke) {
        const std::string text = where();  // reads the posts' done flags: under the lock
        lk.unlock();
        withdrawPosts(posts, sends);
        d.check(text);
      }
      spins = 0;
      mine.cpu.store(sched_getcpu(), std::memory_order_relaxed);  // it may wake elsewhere
    }
  }
}

// Takes every post that matches a pending receive now, in MPI's non-overtaking order, and copies
// or reduces it outside the inbox's lock; returns how many receives completed.
size_t LocalComm::takeArrived(std::span<const RecvOp> recvs, std::vector<char>& received,
                              size_t pending, int tag) {
  auto& s = *shared_;
  auto& mine = s.boxes[rank_];
  size_t taken = 0;
  for (size_t i = 0; i < recvs.size() && taken < pending; ++i) {
    if (received[i]) continue;
    const RecvOp& r = recvs[i];
    Post* post = nullptr;
    {
      std::lock_guard lk(mine.m);
      // The first post from that peer with this tag: MPI's non-overtaking order.
      auto it = std::find_if(mine.inbox.begin(), mine.inbox.end(),
                             [&](const Post* p) { return p->src == r.peer && p->tag == tag; });
      if (it == mine.inbox.end()) continue;
      // Receives from the same peer complete in posting order, too.
      bool earlierPending = false;
      for (size_t j = 0; j < i; ++j) {
        if (!received[j] && recvs[j].peer == r.peer) earlierPending = true;
      }
      if (earlierPending) continue;
      post = *it;
      mine.inbox.erase(it);
    }
    // A post taken out of the inbox is marked done on every way out, a throw included: its
    // sender waits for that (withdrawPosts cannot take back what is no longer in the inbox),
    // and a sender never released waited forever after a size mismatch.
    struct Release {
      LocalShared& s;
      Post* post;
      ~Release() {
        auto& senderBox = s.boxes[post->src];
        std::lock_guard lk(senderBox.m);
        post->done = true;
        senderBox.notify();
      }
    } release{s, post};
    if (post->bytes != r.bytes) {
      s.abortAll();
      throw InternalError(fmt::format("rank {} expected {} bytes from rank {}, got {}", rank_,
                                      r.bytes, r.peer, post->bytes));
    }
    if (r.reduce) {
      reduce(r.dtype, r.op, r.dst, r.local, post->data, r.bytes / dataTypeSize(r.dtype));
    } else if (r.bytes) {
      copyPiece(r.dst, post->data, r.bytes, r.bytes);
    }
    received[i] = 1;
    ++taken;
  }
  return taken;
}

void LocalComm::withdrawPosts(std::vector<Post>& posts, std::span<const SendOp> sends) {
  auto& s = *shared_;
  std::vector<char> withdrawn(posts.size(), 0);
  for (size_t i = 0; i < posts.size(); ++i) {
    auto& box = s.boxes[sends[i].peer];
    std::lock_guard lk(box.m);
    auto it = std::find(box.inbox.begin(), box.inbox.end(), &posts[i]);
    if (it != box.inbox.end()) {
      box.inbox.erase(it);
      withdrawn[i] = 1;
    }
  }
  auto& mine = s.boxes[rank_];
  std::unique_lock lk(mine.m);
  mine.cv.wait(lk, [&] {
    for (size_t i = 0; i < posts.size(); ++i) {
      if (!withdrawn[i] && !posts[i].done) return false;
    }
    return true;
  });
}

}  // namespace

void LocalWorld::run(int nranks, const std::function<void(Communicator&)>& fn) {
  if (nranks < 1) throw UsageError(fmt::format("--np must be at least 1 (got {})", nranks));
  auto shared = std::make_shared<LocalShared>(nranks, nranks > allowedCpus());
  std::vector<std::exception_ptr> errors(nranks);
  std::atomic<int> firstFailed{-1};
  auto body = [&](int r) {
    try {
      LocalComm comm(shared, r);
      fn(comm);
    } catch (...) {
      errors[r] = std::current_exception();
      int expected = -1;
      firstFailed.compare_exchange_strong(expected, r);
      shared->abortAll();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(nranks - 1);
  for (int r = 1; r < nranks; ++r) threads.emplace_back(body, r);
  body(0);  // rank 0 runs on the calling thread (it prints and writes the database)
  for (auto& t : threads) t.join();
  const int f = firstFailed.load();
  if (f < 0) return;
  // A deadline passed: every rank's own view goes into the one line (who waited for whom, and
  // what the rank that never came was doing), since the first rank to give up rarely knows why.
  try {
    std::rethrow_exception(errors[f]);
  } catch (const TimeoutError& first) {
    std::string line = first.what();
    for (int r = 0; r < nranks; ++r) {
      if (r == f || !errors[r]) continue;
      try {
        std::rethrow_exception(errors[r]);
      } catch (const TimeoutError& e) {
        line += fmt::format("; {}", e.what());
      } catch (const Error& e) {
        const std::string_view what = e.what();
        if (what.starts_with(kAbortedWhileIn)) {
          line +=
              fmt::format("; {}", what.substr(kAbortedWhileIn.size(), what.find(": another rank") -
                                                                          kAbortedWhileIn.size()));
        }
      } catch (...) {
      }
    }
    throw TimeoutError(line);
  }
}

}  // namespace cb
