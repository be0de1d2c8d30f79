// Recursive-doubling AllReduce (MPICH's short-message allreduce; Thakur, Rabenseifner & Gropp
// 2005).
//
// Steps: for mask = 1, 2, ..., p/2, rank r exchanges its whole partial result with r XOR mask and
// both combine it, so after lg p rounds every rank holds the full reduction. Each round reduces
// straight from the incoming data into the other of two buffers (receive buffer, scratch), so a
// round never receives into memory it is sending; the parity is chosen so the last round lands in
// the receive buffer (otherwise one final local copy). Non-powers of two use the fold (Fold.h):
// odd ranks among the first 2(n-p) send their input to the even rank below, which reduces it
// first, and get the result back at the end. avg divides once, on every rank of the power-of-two
// group, before the result goes back to the folded ranks. Every rank computes the same bits
// (a op b == b op a for the element-wise ops).
//
// Cost: lg(p) alpha + lg(p) S beta + lg(p) S gamma, p = n a power of two; otherwise p is the
// largest power of two below n and the fold adds 2 alpha + 2 S beta + S gamma. Latency-optimal;
// moves lg(n) times the data of the ring. Constraints: none.
#include "collectives/algorithms/Algorithms.h"
#include "collectives/algorithms/Fold.h"

namespace cb {

Schedule recDoublingAllReduce(int rank, int nranks, const CollArgs& args, const AlgoOptions&) {
  const size_t count = args.count;
  const Fold f(nranks);
  ScheduleBuilder b(count, count);
  const auto [send, recv] = wholeBuffers(count);
  const Span scratch{BufferRef::kScratch, 0, count};
  if (f.extra(rank)) {
    b.newPhase().steps.push_back(sendStep(rank - 1, send));
    b.newPhase().steps.push_back(recvStep(rank - 1, recv));
    return std::move(b).build();
  }
  const int q = f.newRank(rank);
  const bool host = f.host(rank);
  int rounds = host ? 1 : 0;
  for (int mask = 1; mask < f.p; mask <<= 1) ++rounds;
  // In place, send and receive buffers are the same memory, so only a round that sends nothing
  // (the host's fold) may reduce from the send buffer into the receive buffer.
  bool toRecv = host && rounds % 2 == 1;
  Span cur = send;
  auto reduceRound = [&](int peer, bool alsoSend) {
    const Span dst = toRecv ? recv : scratch;
    if (!toRecv) b.needScratch(count);
    auto& ph = b.newPhase();
    if (alsoSend) ph.steps.push_back(sendStep(peer, cur));
    ph.steps.push_back(recvReduceStep(peer, cur, dst));
    cur = dst;
    toRecv = !toRecv;
  };
  if (host) reduceRound(rank + 1, false);
  for (int mask = 1; mask < f.p; mask <<= 1) reduceRound(f.realRank(q ^ mask), true);
  auto& last = b.newPhase();
  if (cur.buf != BufferRef::kRecv) last.steps.push_back(copyStep(cur, recv));
  if (args.op == RedOp::kAvg) last.steps.push_back(scaleStep(recv));
  if (host) last.steps.push_back(sendStep(rank + 1, recv));
  return std::move(b).build();
}

}  // namespace cb
