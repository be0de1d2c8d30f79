// Where every rank of an MPI job is, so that a hang names the rank that never arrived ("which
// node is hanging?"). Each rank writes only its own slot of a small shared record: its host and
// pid, what it measures (a collective and size, an iteration of a count) and whether it waits in a
// communication call, since when and until when. When a wait passes its deadline, or a peer of
// the host dies, the waiting rank reads the others' slots without any collective (the stuck one
// can't complete) and prints one line.
//
// On a host the record is one memfd that the host's lowest rank creates and the others map through
// /proc (core/SharedMemory.h), so nothing is ever left in /dev/shm. Ranks on other hosts are not
// visible; the line names them as such. The board is process-wide (one rank per process under
// MPI) because both the engines and the communicator's waits write to it and neither is handed
// the other; the local world has no board and every call here is then a no-op.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/Clock.h"

namespace cb {

// One rank's slot: fixed layout, shared between the processes of a host.
inline constexpr int kSlotCalls = 4;

struct RankSlot {
  std::atomic<int32_t> pid;
  std::atomic<int32_t> waiting;   // 1 inside a communication call
  std::atomic<int32_t> blocking;  // 1 inside a call that can't check its own deadline
  std::atomic<int32_t> iteration;
  std::atomic<int32_t> iterations;  // 0: the activity has no iterations
  std::atomic<uint32_t> version;    // odd while the texts below are written
  std::atomic<double> waitSince;    // steady-clock seconds (CLOCK_MONOTONIC is host-wide)
  std::atomic<double> waitUntil;
  // Which of `calls` names the communication call waited in (now, or last).
  std::atomic<int32_t> callIndex;
  char host[64];
  char activity[64];  // "allreduce 32 MiB mpi"
  // The calls this rank waited in lately ("barrier", "MPI_Allreduce"), reused round robin: a wait
  // whose name is here already stores only its index, so the loops that alternate a call and a
  // barrier write no text inside the timed call.
  char calls[kSlotCalls][48];
};

// Attaches this process's rank `me` of `ranks` to `slots` (ranks entries, mapped shared);
// visible[r] says whether rank r's slot is written by a process of this host. Starts the
// watchdog that ends a blocking call past its deadline and a wait whose same-host peer died.
void attachRankBoard(RankSlot* slots, int ranks, int me, std::vector<bool> visible,
                     std::vector<std::string> hostOfRank);
void detachRankBoard();  // stops the watchdog; before the slots' memory goes away

// What this rank measures now; iterations 0 when it has none.
void publishActivity(const std::string& what, int iterations = 0);
void publishIteration(int i);

// Marks this rank as waiting in `call` among `members` (world ranks) until destroyed. `blocking`:
// the call can't honour its deadline itself (a blocking MPI call), so the watchdog ends the
// process with the board's line once `d` has passed. A handful of relaxed stores and no clock
// read (the wait began d.seconds() before d.at()), so it may sit inside timed calls; `call` (a
// string that outlives the process's waits: a literal) is copied only when it is not one of the
// slot's recent calls.
class BoardWait {
 public:
  BoardWait(const char* call, std::span<const int> members, Deadline d, bool blocking = false);
  ~BoardWait();
  BoardWait(const BoardWait&) = delete;
  BoardWait& operator=(const BoardWait&) = delete;

 private:
  bool active_ = false;
};

// The line for a wait of this rank that ran out: the members that never arrived (host, pid, what
// they were last in, stopped or dead), then who waited how long. Empty without a board.
std::string boardHangReport(std::span<const int> members);

}  // namespace cb
