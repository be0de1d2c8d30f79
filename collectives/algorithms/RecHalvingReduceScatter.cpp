// Recursive-halving ReduceScatter (MPICH's reduce_scatter for commutative ops; Thakur,
// Rabenseifner & Gropp 2005).
//
// Steps: for mask = p/2, ..., 1, rank r keeps the half of its current window of blocks that holds
// block r, sends the other half to r XOR mask and reduces the half it receives into its kept
// half (in scratch; the first round reads the send buffer, the last one reduces straight into the
// receive buffer). After lg p rounds block r is fully reduced; avg divides it once. Non-powers of
// two use the fold (Fold.h): odd ranks among the first 2(n-p) give their whole input to the even
// rank below, which then stands for both ranks' blocks (consecutive, so each exchanged half is
// still one message), and at the end sends the odd rank its reduced block.
//
// Cost: lg(n) alpha + (n-1)/n S beta + (n-1)/n S gamma (S = n * count bytes reduced) for n a
// power of two. With the fold (p = largest power of two below n): lg(p) + 2 rounds; a host's
// halves hold up to twice the blocks, so at most ((2p-1)/n + 1) S beta and ((2p-2)/n + 1) S gamma
// (the fold's hand-off and return included). Scratch: S.
// Constraints: none.
#include "collectives/algorithms/Algorithms.h"
#include "collectives/algorithms/Fold.h"

namespace cb {

Schedule recHalvingReduceScatter(int rank, int nranks, const CollArgs& args, const AlgoOptions&) {
  const size_t m = args.count;
  const size_t n = static_cast<size_t>(nranks);
  const Fold f(nranks);
  ScheduleBuilder b(m * n, m);
  // Blocks [lo, hi) of rank indices, in the send buffer or scratch.
  auto blocks = [&](BufferRef buf, int lo, int hi) {
    return Span{buf, static_cast<size_t>(lo) * m, static_cast<size_t>(hi - lo) * m};
  };
  const Span out{BufferRef::kRecv, 0, m};
  if (f.extra(rank)) {
    b.newPhase().steps.push_back(sendStep(rank - 1, blocks(BufferRef::kSend, 0, nranks)));
    b.newPhase().steps.push_back(recvStep(rank - 1, out));
    return std::move(b).build();
  }
  const int q = f.newRank(rank);
  const bool host = f.host(rank);
  BufferRef cur = BufferRef::kSend;
  if (host) {
    b.needScratch(m * n);
    b.newPhase().steps.push_back(recvReduceStep(rank + 1, blocks(BufferRef::kSend, 0, nranks),
                                                blocks(BufferRef::kScratch, 0, nranks)));
    cur = BufferRef::kScratch;
  }
  for (const HalvingRound& h : halvingRounds(q, f.p)) {
    const int peer = f.realRank(h.peer);
    // A plain rank's last kept window is its own block: reduce it into the receive buffer.
    const bool last = h.mask == 1 && !host;
    if (!last) b.needScratch(m * n);
    const Span kept = blocks(cur, f.first(h.keepLo), f.first(h.keepHi));
    auto& ph = b.newPhase();
    ph.steps.push_back(sendStep(peer, blocks(cur, f.first(h.giveLo), f.first(h.giveHi))));
    ph.steps.push_back(recvReduceStep(
        peer, kept,
        last ? out : blocks(BufferRef::kScratch, f.first(h.keepLo), f.first(h.keepHi))));
    cur = BufferRef::kScratch;
  }
  auto& fin = b.newPhase();
  if (f.p == 1) fin.steps.push_back(copyStep(blocks(BufferRef::kSend, 0, 1), out));
  if (host) {
    // This rank holds blocks rank and rank + 1, reduced.
    const Span partner = blocks(BufferRef::kScratch, rank + 1, rank + 2);
    fin.steps.push_back(copyStep(blocks(BufferRef::kScratch, rank, rank + 1), out));
    if (args.op == RedOp::kAvg) fin.steps.push_back(scaleStep(partner));
    fin.steps.push_back(sendStep(rank + 1, partner));
  }
  if (args.op == RedOp::kAvg) fin.steps.push_back(scaleStep(out));
  return std::move(b).build();
}

}  // namespace cb
