// Direct ReduceScatter: every rank sends block j of its input straight to rank j in one round,
// then reduces the n contributions to its own block (the first shot of two-shot allreduce).
//
// Steps: rank r sends block j to rank j for every j != r and receives every other rank's block r
// into scratch, all in one round; then it reduces them into its receive buffer (starting from its
// own block; nothing to copy in place) and divides once (avg).
//
// Cost: alpha + S/n beta + (n-1)/n S gamma (S = n * count bytes reduced), counting one round
// whose n-1 messages travel in parallel on distinct links; each rank injects (n-1)/n S.
// Scratch: (n-1)/n S. Constraints: none.
#include "collectives/algorithms/Algorithms.h"

namespace cb {

Schedule directReduceScatter(int rank, int nranks, const CollArgs& args, const AlgoOptions&) {
  const size_t m = args.count;
  const size_t n = static_cast<size_t>(nranks);
  ScheduleBuilder b(m * n, m);
  auto block = [&](int j) { return Span{BufferRef::kSend, static_cast<size_t>(j) * m, m}; };
  auto slot = [&](int j) {
    return Span{BufferRef::kScratch, static_cast<size_t>(j < rank ? j : j - 1) * m, m};
  };
  const Span out{BufferRef::kRecv, 0, m};
  b.needScratch((n - 1) * m);
  auto& ph = b.newPhase();
  for (int j = 0; j < nranks; ++j) {
    if (j != rank) ph.steps.push_back(sendStep(j, block(j)));
  }
  for (int j = 0; j < nranks; ++j) {
    if (j != rank) ph.steps.push_back(recvStep(j, slot(j)));
  }
  auto& combine = b.newPhase();
  combine.steps.push_back(copyStep(block(rank), out));
  for (int j = 0; j < nranks; ++j) {
    if (j != rank) combine.steps.push_back(reduceStep(slot(j), out));
  }
  if (args.op == RedOp::kAvg) combine.steps.push_back(scaleStep(out));
  return std::move(b).build();
}

}  // namespace cb
