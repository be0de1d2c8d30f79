// Rabenseifner's AllReduce (MPICH's long-message allreduce; Rabenseifner 2004; Thakur,
// Rabenseifner & Gropp 2005).
//
// Steps: the buffer is cut into p chunks. Reduce-scatter by recursive halving: for
// mask = p/2, ..., 1, rank r keeps the half of its current window of chunks that holds chunk r,
// sends the other half to r XOR mask and reduces the half it receives into its kept half, so
// after lg p rounds it owns chunk r fully reduced. avg divides that chunk once. Allgather by
// recursive doubling: for mask = 1, ..., p/2 it exchanges the 'mask' chunks it holds with
// r XOR mask. Everything happens in the receive buffer; the first round reads the send buffer,
// so no initial copy. Non-powers of two use the fold (Fold.h): odd ranks among the first 2(n-p)
// give their input to the even rank below and receive the whole result at the end.
//
// Cost: 2 lg(p) alpha + 2 (p-1)/p S beta + (p-1)/p S gamma, p = n a power of two; otherwise p is
// the largest power of two below n and the fold adds 2 alpha + 2 S beta + S gamma.
// Bandwidth-optimal like the ring with logarithmic latency. Constraints: none (chunks differ by at
// most one element; empty chunks are sent as such).
#include "collectives/algorithms/Algorithms.h"
#include "collectives/algorithms/Fold.h"

namespace cb {

Schedule rabenseifnerAllReduce(int rank, int nranks, const CollArgs& args, const AlgoOptions&) {
  const size_t count = args.count;
  const Fold f(nranks);
  const size_t p = static_cast<size_t>(f.p);
  ScheduleBuilder b(count, count);
  const auto [send, recv] = wholeBuffers(count);
  // Chunks [lo, hi) of the p-way split.
  auto chunks = [&](BufferRef buf, int lo, int hi) {
    size_t begin = chunkBegin(count, p, static_cast<size_t>(lo));
    return Span{buf, begin, chunkBegin(count, p, static_cast<size_t>(hi)) - begin};
  };
  if (f.extra(rank)) {
    b.newPhase().steps.push_back(sendStep(rank - 1, send));
    b.newPhase().steps.push_back(recvStep(rank - 1, recv));
    return std::move(b).build();
  }
  const int q = f.newRank(rank);
  BufferRef cur = BufferRef::kSend;
  if (f.host(rank)) {
    b.newPhase().steps.push_back(recvReduceStep(rank + 1, send, recv));
    cur = BufferRef::kRecv;
  }
  for (const HalvingRound& h : halvingRounds(q, f.p)) {
    const int peer = f.realRank(h.peer);
    auto& ph = b.newPhase();
    ph.steps.push_back(sendStep(peer, chunks(cur, h.giveLo, h.giveHi)));
    ph.steps.push_back(recvReduceStep(peer, chunks(cur, h.keepLo, h.keepHi),
                                      chunks(BufferRef::kRecv, h.keepLo, h.keepHi)));
    cur = BufferRef::kRecv;
  }
  // Now chunk q is final here: divide it once (avg), then gather everyone's.
  auto& owned = b.newPhase();
  if (cur != BufferRef::kRecv) owned.steps.push_back(copyStep(send, recv));  // n == 1
  if (args.op == RedOp::kAvg) owned.steps.push_back(scaleStep(chunks(BufferRef::kRecv, q, q + 1)));
  for (int mask = 1; mask < f.p; mask <<= 1) {
    auto& ph = mask == 1 ? b.phase() : b.newPhase();
    const int mine = q & ~(mask - 1), theirs = (q ^ mask) & ~(mask - 1);
    const int peer = f.realRank(q ^ mask);
    ph.steps.push_back(sendStep(peer, chunks(BufferRef::kRecv, mine, mine + mask)));
    ph.steps.push_back(recvStep(peer, chunks(BufferRef::kRecv, theirs, theirs + mask)));
  }
  if (f.host(rank)) b.newPhase().steps.push_back(sendStep(rank + 1, recv));
  return std::move(b).build();
}

}  // namespace cb
