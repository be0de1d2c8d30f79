// A group of ranks that can talk: point-to-point send/recv, barrier, small-metadata allgather and
// split. Implemented by the local (threads) world and the MPI world in collectives/. Every
// blocking call takes a Deadline and throws TimeoutError past it: no hang without a deadline.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/Clock.h"

namespace cb {

enum class WorldKind : uint8_t { kLocal, kMpi };
std::string_view worldKindName(WorldKind k);  // "local" | "mpi"

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual WorldKind worldKind() const = 0;

  // Blocking point-to-point with matching by (peer, tag) in posting order.
  virtual void send(int peer, const void* data, size_t bytes, int tag, Deadline d) = 0;
  virtual void recv(int peer, void* data, size_t bytes, int tag, Deadline d) = 0;
  virtual void barrier(Deadline d) = 0;
  // A barrier for a rank with nothing to do while others measure: it sleeps between checks
  // instead of polling, so on a host with fewer cores than ranks it takes no CPU time from the
  // ranks it waits for. Matches barrier() on the other ranks. A blocking barrier is one already.
  virtual void idleBarrier(Deadline d) { barrier(d); }
  // Every rank contributes exactly `bytes` bytes; returns size()*bytes, rank-major.
  virtual std::vector<std::byte> allgatherBytes(const void* data, size_t bytes, Deadline d) = 0;
  // Ranks with the same color form a new communicator, ordered by (key, old rank).
  // Collective over this communicator.
  virtual std::unique_ptr<Communicator> split(int color, int key, Deadline d) = 0;

  // --- helpers built on the primitives above ---
  template <class T>
  std::vector<T> allgather(const T& value, Deadline d) {
    static_assert(std::is_trivially_copyable_v<T>);
    auto bytes = allgatherBytes(&value, sizeof(T), d);
    std::vector<T> out(size());
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }
  // Strings of any length (two allgathers: lengths, then padded payloads).
  std::vector<std::string> allgatherStrings(const std::string& s, Deadline d);
  // Rank `root`'s value on every rank.
  template <class T>
  T broadcastValue(const T& value, int root, Deadline d) {
    return allgather(value, d)[root];
  }
  // True on every rank if it is true on any rank (used to agree on stopping).
  bool anyTrue(bool flag, Deadline d);
};

}  // namespace cb
