// Runs one schedule per rank, all ranks in one process on plain arrays, with rendezvous
// semantics: a send completes only when the matching receive is posted. Detects deadlocks,
// size mismatches between matched send and receive, and messages never received.
#pragma once

#include <functional>
#include <vector>

#include "collectives/schedule/Schedule.h"

namespace cb {

struct RankBuffers {
  std::vector<std::byte> send;
  std::vector<std::byte> recv;
  // When true, the send buffer is the recv buffer (in place) at inPlaceOffset elements:
  // allgather: send = recv + offset; reduce_scatter: recv = send + offset; others: same memory.
  bool inPlace = false;
};

// buffers[r] holds rank r's data; on return recv (or send, in place) holds the results.
// Throws InternalError on deadlock or mismatch.
void runReference(const std::vector<Schedule>& schedules, const CollArgs& args,
                  std::vector<RankBuffers>& buffers);

}  // namespace cb
