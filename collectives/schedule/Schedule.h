// The schedule model. A hand-written algorithm is a pure function
//   (rank, nranks, CollArgs, options) -> Schedule
// of phases. A phase is: its local steps (copy, reduce), in order, then one round of
// communication in which all its sends and receives are in flight at once. A rank starts phase
// k+1 when its phase k is complete. Sends and receives to the same peer match in posting order.
// Executors run schedules: the reference executor (all ranks in one process, on plain arrays,
// with rendezvous semantics so it also finds deadlocks), the host executor (over a Transport),
// later the CUDA executor and the alpha-beta cost model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/Collective.h"

namespace cb {

enum class BufferRef : uint8_t { kSend, kRecv, kScratch };

// A range of elements of one of the three buffers.
struct Span {
  BufferRef buf = BufferRef::kRecv;
  size_t offset = 0;  // elements
  size_t count = 0;   // elements
};

enum class StepKind : uint8_t {
  kCopy,        // local: dst = src
  kReduce,      // local: dst = dst op src
  kSend,        // comm: send src to peer
  kRecv,        // comm: receive from peer into dst
  kRecvReduce,  // comm: dst = src op (received from peer); src may equal dst
  kScale,       // local: dst = dst / nranks (the last step of avg)
};

struct Step {
  StepKind kind = StepKind::kCopy;
  int peer = -1;
  Span src;
  Span dst;
};

struct Phase {
  std::vector<Step> steps;
};

// Alpha-beta-gamma cost on the critical path: time ~ alpha*messages + beta*bytes + gamma*reduced.
struct Cost {
  double messages = 0;      // latency terms (communication rounds with a message)
  double bytes = 0;         // bytes on the critical path (largest message of each round)
  double reducedBytes = 0;  // bytes combined by reductions on the critical path
};

struct Schedule {
  std::vector<Phase> phases;
  size_t scratchCount = 0;  // elements of scratch the schedule needs
  // Per-rank buffer sizes the schedule was built for (elements), for checks.
  size_t sendCount = 0;
  size_t recvCount = 0;
};

// Balanced split of `count` into `parts`: part i covers [chunkBegin(i), chunkBegin(i+1)).
inline size_t chunkBegin(size_t count, size_t parts, size_t i) {
  return static_cast<size_t>((static_cast<unsigned __int128>(count) * i) / parts);
}
inline size_t chunkSize(size_t count, size_t parts, size_t i) {
  return chunkBegin(count, parts, i + 1) - chunkBegin(count, parts, i);
}
// Part i of buffer `buf` when its `count` elements are split into `parts` balanced parts.
inline Span chunkOf(BufferRef buf, size_t count, size_t parts, size_t i) {
  return Span{buf, chunkBegin(count, parts, i), chunkSize(count, parts, i)};
}
// The whole send and receive buffers of `count` elements each (an allreduce's, a broadcast's).
struct WholeBuffers {
  Span send, recv;
};
inline WholeBuffers wholeBuffers(size_t count) {
  return {Span{BufferRef::kSend, 0, count}, Span{BufferRef::kRecv, 0, count}};
}

// A block collective (allgather, reduce-scatter) as its offset arithmetic wants it: m elements in
// each rank's block, n ranks, this rank r.
struct Blocks {
  size_t m, n, r;
};
inline Blocks blocksOf(int rank, int nranks, const CollArgs& args) {
  return {args.count, static_cast<size_t>(nranks), static_cast<size_t>(rank)};
}

// Cost of one rank's schedule (element size in bytes); the critical path is the max over ranks.
Cost rankCost(const Schedule& s, size_t elementSize);
// The same cost split by link: a round with a message to or from a peer for which `remote` is
// true (another node) counts in `remote`, every other round in `local`; the slowest link of a
// round decides its time. Reductions count in `local` (they run on the rank, not on a link).
struct LinkCost {
  Cost local, remote;
};
LinkCost rankCostByLink(const Schedule& s, size_t elementSize,
                        const std::function<bool(int peer)>& remote);
// Throws InternalError if a step reads or writes outside its buffer.
void validateBounds(const Schedule& s, int rank);

// Builder helpers keep algorithm files short.
class ScheduleBuilder {
 public:
  ScheduleBuilder(size_t sendCount, size_t recvCount) {
    s_.sendCount = sendCount;
    s_.recvCount = recvCount;
  }
  Phase& newPhase() { return s_.phases.emplace_back(); }
  Phase& phase() { return s_.phases.empty() ? newPhase() : s_.phases.back(); }
  void needScratch(size_t count) { s_.scratchCount = std::max(s_.scratchCount, count); }
  Schedule build() &&;  // drops empty phases

 private:
  Schedule s_;
};

inline Step copyStep(Span src, Span dst) { return {StepKind::kCopy, -1, src, dst}; }
inline Step reduceStep(Span src, Span dst) { return {StepKind::kReduce, -1, src, dst}; }
inline Step sendStep(int peer, Span src) { return {StepKind::kSend, peer, src, {}}; }
inline Step recvStep(int peer, Span dst) { return {StepKind::kRecv, peer, {}, dst}; }
inline Step recvReduceStep(int peer, Span local, Span dst) {
  return {StepKind::kRecvReduce, peer, local, dst};
}
inline Step scaleStep(Span dst) { return {StepKind::kScale, -1, {}, dst}; }

}  // namespace cb
