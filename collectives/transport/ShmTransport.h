// The shared-memory transport: ranks of one host exchange schedule messages through a POSIX
// shared-memory segment. Each ordered pair (src, dst) owns a channel: a ring of fixed-size slots
// plus a consumed counter. The sender copies into free slots, the receiver copies (or reduces, in
// one pass) out of them, so large messages stream with sender and receiver copying concurrently;
// messages of up to a few dozen bytes travel inside the slot's header cache line.
//
// The segment is created by rank 0 with a unique name, opened by the others, and unlinked as soon
// as every rank has mapped it: nothing is left in /dev/shm whatever way the processes end after
// set-up (normal exit, exception, signal, even SIGKILL).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/Clock.h"
#include "core/Communicator.h"
#include "core/Transport.h"

namespace cb {

inline constexpr size_t kDefaultZeroCopyBytes = size_t{64} << 10;

struct ShmOptions {
  size_t slotBytes = size_t{256} << 10;  // bytes per ring slot (a multiple of 4 KiB)
  int slots = 8;                         // slots per channel
  // Messages from this size up that lie in shareable memory go zero-copy (SIZE_MAX: never).
  size_t zeroCopyBytes = kDefaultZeroCopyBytes;
  double setupSeconds = 60;  // deadline of the set-up collectives
};

// The number of CPUs in the union of affinity masks given as one '0'/'1' character per CPU id.
// The transport compares it with the number of ranks: more ranks than CPUs means oversubscribed,
// and then idle ranks yield at once instead of spinning.
size_t cpusInUnion(const std::vector<std::string>& masks);

// Collective over `comm`. Throws UsageError when the ranks span several hosts and
// EnvironmentError when the segment can't be created or opened.
std::unique_ptr<Transport> makeShmTransport(Communicator& comm, const ShmOptions& opts = {});

}  // namespace cb
