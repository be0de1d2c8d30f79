#include "core/RankBoard.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <string_view>
#include <thread>

#include "core/Clock.h"
#include "core/Error.h"
#include "core/ExitStuck.h"
#include "core/Interrupt.h"
#include "core/InterruptLine.h"
#include "core/Text.h"

namespace cb {
namespace {

// How often the watchdog looks at this rank's wait, and how long a timed-out rank leaves a lower
// rank to print the job's line before printing its own (it is then usually aborted by it).
constexpr auto kWatchEvery = std::chrono::milliseconds(100);
constexpr auto kLowerRankGrace = std::chrono::milliseconds(300);

struct Board {
  RankSlot* slots = nullptr;
  int ranks = 0;
  int me = -1;
  std::vector<bool> visible;
  std::vector<std::string> host;
  // The current wait's members (world ranks): a span of the communicator's own vector, which
  // outlives every wait on it. Read by the watchdog only while this rank waits.
  std::atomic<const int*> members{nullptr};
  std::atomic<size_t> memberCount{0};
  // The strings copied into this rank's slot's `calls` (main thread), and the entry to reuse next.
  const char* interned[kSlotCalls] = {};
  int nextCall = 0;
  std::mutex mutex;
  std::condition_variable cv;
  bool stop = false;
  std::thread watchdog;

  RankSlot& mine() { return slots[me]; }
};

std::atomic<Board*> gBoard{nullptr};  // see RankBoard.h: one rank per process

// A seqlock write. A slot has one writer, its rank's main thread, so the version is bumped by
// plain stores, not locked read-modify-writes (they cost a timed 8-byte MPI_Allreduce ~20 ns when
// BoardWait wrote a name there; docs/MEASUREMENT.md).
void writeText(RankSlot& s, char* field, size_t size, std::string_view text) {
  const uint32_t v = s.version.load(std::memory_order_relaxed);
  s.version.store(v + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  const size_t n = std::min(text.size(), size - 1);
  std::memcpy(field, text.data(), n);
  field[n] = '\0';
  s.version.store(v + 2, std::memory_order_release);
}

// A consistent copy of a peer's texts (a seqlock read; gives up on a torn copy after a few tries).
struct SlotView {
  int pid = 0;
  bool waiting = false;
  int iteration = 0;
  int iterations = 0;
  double waitSince = 0;
  std::string activity;
  std::string call;
};

SlotView readSlot(const RankSlot& s) {
  SlotView v;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const uint32_t before = s.version.load(std::memory_order_acquire);
    char activity[sizeof s.activity];
    char call[sizeof s.calls[0]];
    const int index = std::clamp(s.callIndex.load(std::memory_order_relaxed), 0, kSlotCalls - 1);
    std::memcpy(activity, s.activity, sizeof activity);
    std::memcpy(call, s.calls[index], sizeof call);
    std::atomic_thread_fence(std::memory_order_acquire);
    if ((before & 1) == 0 && s.version.load(std::memory_order_relaxed) == before) {
      activity[sizeof activity - 1] = '\0';
      call[sizeof call - 1] = '\0';
      v.activity = activity;
      v.call = call;
      break;
    }
  }
  v.pid = s.pid.load(std::memory_order_relaxed);
  v.waiting = s.waiting.load(std::memory_order_acquire) != 0;
  v.iteration = s.iteration.load(std::memory_order_relaxed);
  v.iterations = s.iterations.load(std::memory_order_relaxed);
  v.waitSince = s.waitSince.load(std::memory_order_relaxed);
  return v;
}

bool processGone(int pid) { return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH; }

// 'T' (stopped by a signal) or 't' (traced) in /proc/PID/stat.
bool processStopped(int pid) {
  std::ifstream f(fmt::format("/proc/{}/stat", pid));
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return false;
  return stat[paren + 2] == 'T' || stat[paren + 2] == 't';
}

std::string whereText(const SlotView& v) {
  std::string where = v.activity.empty() ? "its set-up" : v.activity;
  if (v.iterations > 0) where += fmt::format(", iteration {} of {}", v.iteration, v.iterations);
  return where;
}

std::string rankList(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out += i + 1 == ranks.size() ? " and " : ", ";
    out += std::to_string(ranks[i]);
  }
  return out;
}

std::string report(Board& b, std::span<const int> members) {
  std::vector<std::string> missing;
  std::vector<int> waiters;
  std::vector<std::string> elsewhere;  // waiting, but in another call than this rank
  const SlotView self = readSlot(b.mine());
  for (int r : members) {
    if (r < 0 || r >= b.ranks) continue;
    if (r == b.me) {
      waiters.push_back(r);
      continue;
    }
    const std::string& host = b.host[static_cast<size_t>(r)];
    if (!b.visible[static_cast<size_t>(r)]) {
      missing.push_back(fmt::format("rank {} ({}) is on another host, not visible from here", r,
                                    printable(host)));
      continue;
    }
    const SlotView v = readSlot(b.slots[r]);
    const std::string who = fmt::format("rank {} ({}, pid {})", r, printable(host), v.pid);
    if (v.pid <= 0) {
      missing.push_back(fmt::format("rank {} ({}) never published where it is", r, host));
    } else if (processGone(v.pid)) {
      missing.push_back(fmt::format("{} died in {}", who, printable(whereText(v))));
    } else if (processStopped(v.pid)) {
      missing.push_back(fmt::format("{} is stopped in {}", who, printable(whereText(v))));
    } else if (v.waiting && v.call == self.call) {
      waiters.push_back(r);
    } else if (v.waiting) {
      elsewhere.push_back(
          fmt::format("{} waits in {} ({})", who, printable(v.call), printable(whereText(v))));
    } else {
      missing.push_back(fmt::format("{} never arrived, busy in {}", who, printable(whereText(v))));
    }
  }
  std::string out;
  for (const auto& m : missing) out += (out.empty() ? "" : "; ") + m;
  for (const auto& m : elsewhere) out += (out.empty() ? "" : "; ") + m;
  const double waited = std::max(0.0, nowSeconds() - self.waitSince);
  out += fmt::format("{}{} waited {:.0f} s in {}", out.empty() ? "" : "; ", rankList(waiters),
                     waited, printable(self.call));
  return out;
}

// Lets a lower-ranked member that timed out too print the job's line first: it aborts the job,
// and the survivors would otherwise print the same line once each.
void deferToLowerRank(Board& b, std::span<const int> members) {
  b.mine().waiting.store(2, std::memory_order_release);  // 2: this rank is reporting
  std::this_thread::sleep_for(kLowerRankGrace);
  for (int r : members) {
    if (r >= b.me) continue;
    if (r >= 0 && b.visible[static_cast<size_t>(r)] &&
        b.slots[r].waiting.load(std::memory_order_acquire) == 2) {
      std::this_thread::sleep_for(std::chrono::seconds(3));
      return;
    }
  }
}

void watch(Board& b) {
  bool hookRan = false;
  std::unique_lock lock(b.mutex);
  while (!b.cv.wait_for(lock, kWatchEvery, [&] { return b.stop; })) {
    if (!hookRan && interruptRequested()) {
      runInterruptHook();
      hookRan = true;
    }
    RankSlot& s = b.mine();
    if (s.waiting.load(std::memory_order_acquire) != 1) continue;
    const int* m = b.members.load(std::memory_order_acquire);
    std::span<const int> members(m, m ? b.memberCount.load(std::memory_order_acquire) : 0);
    const double now = nowSeconds();
    bool peerGone = false;
    for (int r : members) {
      if (r != b.me && r >= 0 && r < b.ranks && b.visible[static_cast<size_t>(r)]) {
        peerGone = peerGone || processGone(b.slots[r].pid.load(std::memory_order_relaxed));
      }
    }
    const bool blocking = s.blocking.load(std::memory_order_relaxed) != 0;
    if (blocking && interruptStopsWaits()) {
      // A signal's grace passed while this rank sits in a blocking call, which a peer that gave
      // up its own wait will never complete: leave as that peer did (session/WorldFailure).
      if (b.me == 0) {
        printInterruptLineOnce(fmt::format("interrupted by signal {}", interruptSignal()));
      }
      std::fflush(stdout);
      std::_Exit(exitCodeFor(ErrorKind::kInterrupted));
    }
    const bool late = blocking && now > s.waitUntil.load(std::memory_order_relaxed);
    if (!peerGone && !late) continue;
    const SlotView self = readSlot(s);
    std::string line = report(b, members);
    deferToLowerRank(b, members);
    if (peerGone) {
      exitStuck(fmt::format("rank {}: a peer died while this rank waited in {}: {}", b.me,
                            printable(self.call), line));
    }
    exitStuck(fmt::format("rank {}: {} did not complete within {:g} s (-T): {}", b.me,
                          printable(self.call),
                          s.waitUntil.load(std::memory_order_relaxed) - self.waitSince, line));
  }
}

}  // namespace

void attachRankBoard(RankSlot* slots, int ranks, int me, std::vector<bool> visible,
                     std::vector<std::string> hostOfRank) {
  detachRankBoard();
  auto* b = new Board;
  b->slots = slots;
  b->ranks = ranks;
  b->me = me;
  b->visible = std::move(visible);
  b->host = std::move(hostOfRank);
  RankSlot& s = b->mine();
  s.pid.store(static_cast<int32_t>(getpid()), std::memory_order_relaxed);
  writeText(s, s.host, sizeof s.host, b->host[static_cast<size_t>(me)]);
  b->watchdog = std::thread([b] { watch(*b); });
  gBoard.store(b, std::memory_order_release);
}

void detachRankBoard() {
  Board* b = gBoard.exchange(nullptr, std::memory_order_acq_rel);
  if (!b) return;
  {
    std::lock_guard lock(b->mutex);
    b->stop = true;
  }
  b->cv.notify_all();
  b->watchdog.join();
  delete b;
}

void publishActivity(const std::string& what, int iterations) {
  Board* b = gBoard.load(std::memory_order_acquire);
  if (!b) return;
  RankSlot& s = b->mine();
  writeText(s, s.activity, sizeof s.activity, what);
  s.iteration.store(0, std::memory_order_relaxed);
  s.iterations.store(iterations, std::memory_order_relaxed);
}

void publishIteration(int i) {
  Board* b = gBoard.load(std::memory_order_acquire);
  if (b) b->mine().iteration.store(i, std::memory_order_relaxed);
}

BoardWait::BoardWait(const char* call, std::span<const int> members, Deadline d, bool blocking) {
  Board* b = gBoard.load(std::memory_order_acquire);
  if (!b) return;
  active_ = true;
  RankSlot& s = b->mine();
  int index = -1;
  for (int i = 0; i < kSlotCalls && index < 0; ++i) {
    if (b->interned[i] == call) index = i;
  }
  if (index < 0) {
    index = b->nextCall;
    b->nextCall = (index + 1) % kSlotCalls;
    writeText(s, s.calls[index], sizeof s.calls[index], call);
    b->interned[index] = call;
  }
  s.callIndex.store(index, std::memory_order_relaxed);
  b->members.store(members.data(), std::memory_order_relaxed);
  b->memberCount.store(members.size(), std::memory_order_relaxed);
  const bool never = d.seconds() <= 0;
  const double until = never ? std::numeric_limits<double>::infinity()
                             : std::chrono::duration<double>(d.at().time_since_epoch()).count();
  s.waitSince.store(never ? nowSeconds() : until - d.seconds(), std::memory_order_relaxed);
  s.waitUntil.store(until, std::memory_order_relaxed);
  s.blocking.store(blocking ? 1 : 0, std::memory_order_relaxed);
  s.waiting.store(1, std::memory_order_release);
}

BoardWait::~BoardWait() {
  if (!active_) return;
  Board* b = gBoard.load(std::memory_order_acquire);
  if (b) b->mine().waiting.store(0, std::memory_order_release);
}

std::string boardHangReport(std::span<const int> members) {
  Board* b = gBoard.load(std::memory_order_acquire);
  if (!b) return {};
  std::string line = report(*b, members);
  deferToLowerRank(*b, members);
  return line;
}

}  // namespace cb
