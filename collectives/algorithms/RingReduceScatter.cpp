// Ring ReduceScatter.
//
// Steps: in step s = 0..n-2 rank r sends the partial sum of block (r - s - 1) mod n to r+1 and
// receives the partial of block (r - s - 2) mod n from r-1, adding its own contribution. Partials
// alternate between two scratch slots (one being sent while the other is received); the last step
// reduces into the receive buffer, which then holds block r fully reduced. avg divides it once.
//
// Cost: (n-1) alpha + (n-1)/n S beta + (n-1)/n S gamma, S = n * count bytes reduced.
// Constraints: none.
#include "collectives/algorithms/Algorithms.h"

namespace cb {

Schedule ringReduceScatter(int rank, int nranks, const CollArgs& args, const AlgoOptions&) {
  const auto [m, n, r] = blocksOf(rank, nranks, args);
  ScheduleBuilder b(m * n, m);
  auto own = [&](size_t j) { return Span{BufferRef::kSend, (j % n) * m, m}; };
  auto slot = [&](size_t s) { return Span{BufferRef::kScratch, (s % 2) * m, m}; };
  const Span out{BufferRef::kRecv, 0, m};
  const int right = (rank + 1) % nranks, left = (rank - 1 + nranks) % nranks;
  if (nranks == 1) {
    b.newPhase().steps.push_back(copyStep(own(0), out));
    return std::move(b).build();
  }
  b.needScratch(n > 2 ? 2 * m : 0);
  for (size_t s = 0; s + 1 < n; ++s) {
    auto& ph = b.newPhase();
    ph.steps.push_back(sendStep(right, s == 0 ? own(r + n - 1) : slot(s - 1)));
    size_t j = r + 2 * n - s - 2;
    ph.steps.push_back(recvReduceStep(left, own(j), s + 2 == n ? out : slot(s)));
  }
  if (args.op == RedOp::kAvg) b.newPhase().steps.push_back(scaleStep(out));
  return std::move(b).build();
}

}  // namespace cb
