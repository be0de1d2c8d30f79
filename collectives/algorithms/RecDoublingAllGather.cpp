// Recursive-doubling AllGather (MPICH's allgather for power-of-two n; Thakur, Rabenseifner &
// Gropp 2005).
//
// Steps: rank r places its block at r. For mask = 1, 2, ..., p/2 it exchanges the contiguous run
// of blocks it holds (mask blocks' worth of ranks) with r XOR mask, so the run doubles each
// round. The first round sends straight from the send buffer. Non-powers of two use the fold
// (Fold.h), not Bruck's scheme (that is the "bruck" variant): odd ranks among the first 2(n-p)
// give their block to the even rank below, which then stands for both; since a new rank stands
// for consecutive original ranks, every exchanged run is still one contiguous message. At the
// end each host sends the whole result to its odd partner.
//
// Cost: lg(n) alpha + (n-1)/n S beta (S = n * count bytes gathered) for n a power of two. With
// the fold (p = largest power of two below n): lg(p) + 2 rounds; a host's runs hold up to twice
// the blocks, so at most ((2p-1)/n + 1) S beta (the fold's hand-off and return included).
// Constraints: none.
#include "collectives/algorithms/Algorithms.h"
#include "collectives/algorithms/Fold.h"

namespace cb {

Schedule recDoublingAllGather(int rank, int nranks, const CollArgs& args, const AlgoOptions&) {
  const size_t m = args.count;
  const size_t n = static_cast<size_t>(nranks);
  const Fold f(nranks);
  ScheduleBuilder b(m, m * n);
  const Span input{BufferRef::kSend, 0, m};
  auto blocks = [&](int lo, int hi) {
    return Span{BufferRef::kRecv, static_cast<size_t>(lo) * m, static_cast<size_t>(hi - lo) * m};
  };
  if (f.extra(rank)) {
    b.newPhase().steps.push_back(sendStep(rank - 1, input));
    b.newPhase().steps.push_back(recvStep(rank - 1, blocks(0, nranks)));
    return std::move(b).build();
  }
  const int q = f.newRank(rank);
  const bool host = f.host(rank);
  auto& first = b.newPhase();
  first.steps.push_back(copyStep(input, blocks(rank, rank + 1)));
  if (host) first.steps.push_back(recvStep(rank + 1, blocks(rank + 1, rank + 2)));
  for (int mask = 1; mask < f.p; mask <<= 1) {
    const bool fromInput = mask == 1 && !host;
    auto& ph = fromInput ? b.phase() : b.newPhase();
    const int mine = q & ~(mask - 1), theirs = (q ^ mask) & ~(mask - 1);
    const int peer = f.realRank(q ^ mask);
    ph.steps.push_back(
        sendStep(peer, fromInput ? input : blocks(f.first(mine), f.first(mine + mask))));
    ph.steps.push_back(recvStep(peer, blocks(f.first(theirs), f.first(theirs + mask))));
  }
  if (host) b.newPhase().steps.push_back(sendStep(rank + 1, blocks(0, nranks)));
  return std::move(b).build();
}

}  // namespace cb
