// Deadline-aware completion of MPI requests, shared by the MPI communicator and the MPI
// transport. MPI's blocking calls can't be interrupted, so every wait here is a test loop: it
// spins for the first few microseconds (the common case completes there, at full speed), then
// yields the core, then sleeps in short naps so a long wait (a slow peer, an oversubscribed node)
// does not burn a whole core.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>

#include "collectives/mpi/MpiWorld.h"  // <mpi.h>, C API only
#include "core/Clock.h"

namespace cb::mpi_detail {

// Outcome of waitAll: every request completed, the deadline passed, or a signal ended it.
enum class WaitResult { kDone, kTimedOut, kInterrupted };

// Tests `reqs` with MPI_Testall until they all complete, the deadline passes or
// interruptStopsWaits() (core/Interrupt.h: only once the grace for an agreed stop has passed).
// `statuses` (same length as reqs, or empty for MPI_STATUSES_IGNORE) receives the statuses on
// completion. MPI errors throw MpiError with `what` as context. `idle`: sleep between tests from
// the start (for a rank with nothing else to do: polling would take CPU time from the ranks it
// waits for).
WaitResult waitAll(std::span<MPI_Request> reqs, std::span<MPI_Status> statuses, Deadline d,
                   const char* what, bool idle = false);

// Throws TimeoutError("<what> did not complete within N s (-T)"), with the rank board's account
// of the `members` (world ranks) that never arrived when there is a board.
[[noreturn]] void throwTimeout(const std::string& what, Deadline d, std::span<const int> members);

// Throws InterruptedError("<what> interrupted by signal N").
[[noreturn]] void throwInterrupted(const std::string& what);

// Index of the first request that has not completed (reqs.size() if none). Does not free any.
size_t firstPending(std::span<const MPI_Request> reqs);

// Gives up on point-to-point requests after a timeout: cancels the pending ones, waits briefly
// for the cancellations to complete, and frees whatever is left so no request stays matched
// against a later message. Never throws.
void abandonPointToPoint(std::span<MPI_Request> reqs);

// True once MPI_Finalize has run (destructors must then not call MPI).
bool mpiFinalized();

// MPI counts are ints: messages go in chunks of at most 1 GiB.
inline constexpr size_t kMaxChunk = size_t{1} << 30;
inline size_t chunkCount(size_t bytes) {
  return std::max<size_t>(1, (bytes + kMaxChunk - 1) / kMaxChunk);
}
inline int chunkBytes(size_t bytes, size_t chunk) {
  return static_cast<int>(std::min(kMaxChunk, bytes - chunk * kMaxChunk));
}

}  // namespace cb::mpi_detail
