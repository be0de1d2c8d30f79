// Binomial-tree Broadcast (MPICH's short-message broadcast; the classic lg(n)-round tree).
//
// Steps: ranks are renumbered so the root is 0 (v = (r - root) mod n). Rank v != 0 receives the
// whole buffer from v - lowbit(v), then sends it to v + m for m = lowbit(v)/2, ..., 1 (while
// v + m < n); the root sends to every power of two below n, largest subtree first. The root
// sends straight from its send buffer and copies it to its receive buffer (nothing in place).
//
// Cost: ceil(lg n) (alpha + S beta). Latency-optimal; for large S the pipelined chain wins.
// Constraints: none.
#include "collectives/algorithms/Algorithms.h"

namespace cb {

Schedule binomialBroadcast(int rank, int nranks, const CollArgs& args, const AlgoOptions&) {
  const size_t count = args.count;
  ScheduleBuilder b(count, count);
  const auto [send, recv] = wholeBuffers(count);
  const int v = (rank - args.root % nranks + nranks) % nranks;
  auto real = [&](int u) { return (u + args.root) % nranks; };
  int low = 1;  // lowbit(v); for the root, the smallest power of two >= n
  Span src = recv;
  if (v == 0) {
    while (low < nranks) low <<= 1;
    b.newPhase().steps.push_back(copyStep(send, recv));
    src = send;
  } else {
    low = v & -v;
    b.newPhase().steps.push_back(recvStep(real(v - low), recv));
    b.newPhase();
  }
  bool first = true;
  for (int m = low / 2; m >= 1; m /= 2) {
    if (v + m >= nranks) continue;
    auto& ph = first ? b.phase() : b.newPhase();
    ph.steps.push_back(sendStep(real(v + m), src));
    first = false;
  }
  return std::move(b).build();
}

}  // namespace cb
