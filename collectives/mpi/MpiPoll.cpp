// Test loops with deadlines for MPI requests (see MpiPoll.h for the waiting strategy).
#include "collectives/mpi/MpiPoll.h"

#include <fmt/format.h>
#include <sched.h>

#include <chrono>
#include <thread>

#include "collectives/mpi/MpiWorld.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "core/RankBoard.h"

namespace cb::mpi_detail {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

// Tests done before looking at the clock at all: small messages complete here.
constexpr int kFreeSpins = 64;
// Then: keep spinning up to kSpinFor, yield up to kYieldFor, and nap kNap per test after that.
// Only waits longer than kYieldFor pay the nap's wake-up latency, and they are already slow.
constexpr auto kSpinFor = microseconds(50);
constexpr auto kYieldFor = milliseconds(20);
constexpr auto kNap = microseconds(50);
// An idle waiter's nap: long enough that its wake-ups cost the busy ranks little, short next to
// what it waits for (a measurement of milliseconds).
constexpr auto kIdleNap = microseconds(200);

// How long abandonPointToPoint waits for cancelled requests before freeing them.
constexpr auto kCancelGrace = milliseconds(500);

void throwStatusError(int rc, std::span<MPI_Status> statuses, const char* what) {
  if (rc == MPI_ERR_IN_STATUS) {
    for (const auto& s : statuses) {
      if (s.MPI_ERROR != MPI_SUCCESS && s.MPI_ERROR != MPI_ERR_PENDING) checkMpi(s.MPI_ERROR, what);
    }
  }
  checkMpi(rc, what);
}

}  // namespace

WaitResult waitAll(std::span<MPI_Request> reqs, std::span<MPI_Status> statuses, Deadline d,
                   const char* what, bool idle) {
  MPI_Status* st = statuses.empty() ? MPI_STATUSES_IGNORE : statuses.data();
  int n = static_cast<int>(reqs.size());
  int iter = 0;
  SteadyClock::time_point start;
  while (true) {
    int flag = 0;
    int rc = MPI_Testall(n, reqs.data(), &flag, st);
    if (rc != MPI_SUCCESS) throwStatusError(rc, statuses, what);
    if (flag) return WaitResult::kDone;
    if (idle) {
      if (SteadyClock::now() >= d.at()) return WaitResult::kTimedOut;
      if (interruptStopsWaits()) return WaitResult::kInterrupted;
      std::this_thread::sleep_for(kIdleNap);
      continue;
    }
    if (++iter < kFreeSpins) continue;
    auto now = SteadyClock::now();
    if (now >= d.at()) return WaitResult::kTimedOut;
    if (iter == kFreeSpins) start = now;
    auto waited = now - start;
    if (waited < kSpinFor) continue;
    // Only a wait that is already long checks for SIGINT: a fast collective finishes first.
    if (interruptStopsWaits()) return WaitResult::kInterrupted;
    if (waited < kYieldFor) {
      sched_yield();
    } else {
      std::this_thread::sleep_for(kNap);
    }
  }
}

void throwInterrupted(const std::string& what) {
  throw InterruptedError(fmt::format("{} interrupted by signal {}", what, interruptSignal()));
}

void throwTimeout(const std::string& what, Deadline d, std::span<const int> members) {
  std::string board = boardHangReport(members);
  throw TimeoutError(fmt::format("{} did not complete within {:g} s (-T){}{}", what, d.seconds(),
                                 board.empty() ? "" : ": ", board));
}

size_t firstPending(std::span<const MPI_Request> reqs) {
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    int flag = 0;
    if (MPI_Request_get_status(reqs[i], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || !flag) return i;
  }
  return reqs.size();
}

void abandonPointToPoint(std::span<MPI_Request> reqs) {
  for (auto& r : reqs) {
    if (r != MPI_REQUEST_NULL) MPI_Cancel(&r);
  }
  // A cancelled receive completes at once; a send may not be cancellable (Open MPI's ob1 never
  // cancels sends), so give the requests a short grace and free what is left.
  auto until = SteadyClock::now() + kCancelGrace;
  bool pending = true;
  while (pending && SteadyClock::now() < until) {
    pending = false;
    for (auto& r : reqs) {
      if (r == MPI_REQUEST_NULL) continue;
      int flag = 0;
      if (MPI_Test(&r, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) flag = 0;
      if (!flag) pending = true;
    }
    if (pending) sched_yield();
  }
  for (auto& r : reqs) {
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }
}

bool mpiFinalized() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

}  // namespace cb::mpi_detail
