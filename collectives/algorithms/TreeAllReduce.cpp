// Binomial-tree AllReduce: binomial reduce to rank 0, then binomial broadcast from rank 0.
//
// Steps: reduce: for mask = 1, 2, 4, ..., a rank with bit 'mask' set sends its partial result to
// rank - mask and is done; otherwise it receives rank + mask's partial (if that rank exists) and
// reduces it into its receive buffer (the first one straight from its send buffer, no copy).
// Rank 0 ends with the full result and divides it once (avg). Broadcast: rank r != 0 receives
// from r - lowbit(r), then sends to r + m for m = lowbit(r)/2, ..., 1; rank 0 sends to every
// power of two below n, largest first. One reduction per element: every rank gets the same bits.
//
// Cost: 2 ceil(lg n) alpha + 2 ceil(lg n) S beta + ceil(lg n) S gamma (rank 0 is the critical
// path). Latency like recursive doubling with half its traffic per round, but 2x the rounds.
// Constraints: none.
#include "collectives/algorithms/Algorithms.h"

namespace cb {

Schedule treeAllReduce(int rank, int nranks, const CollArgs& args, const AlgoOptions&) {
  const size_t count = args.count;
  ScheduleBuilder b(count, count);
  const auto [send, recv] = wholeBuffers(count);
  Span cur = send;
  int low = 1;  // lowbit(rank), or the smallest power of two >= n for rank 0
  for (; low < nranks; low <<= 1) {
    if (rank & low) {
      b.newPhase().steps.push_back(sendStep(rank - low, cur));
      break;
    }
    if (rank + low < nranks) {
      // Nothing else is in flight in this phase, so in place (send == recv) is fine.
      b.newPhase().steps.push_back(recvReduceStep(rank + low, cur, recv));
      cur = recv;
    }
  }
  if (rank == 0) {
    auto& root = b.newPhase();
    if (cur.buf != BufferRef::kRecv) root.steps.push_back(copyStep(send, recv));
    if (args.op == RedOp::kAvg) root.steps.push_back(scaleStep(recv));
  } else {
    b.newPhase().steps.push_back(recvStep(rank - low, recv));
    b.newPhase();
  }
  bool first = true;
  for (int m = low / 2; m >= 1; m /= 2) {
    if (rank + m >= nranks) continue;
    auto& ph = first ? b.phase() : b.newPhase();
    ph.steps.push_back(sendStep(rank + m, recv));
    first = false;
  }
  return std::move(b).build();
}

}  // namespace cb
