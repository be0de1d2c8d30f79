// One-shot (direct) AllReduce: the small-message algorithm of NCCL's and mscclpp's one-shot
// kernels, in which every rank reads every other rank's input.
//
// Steps: one round in which each rank sends its whole buffer to every other rank and receives
// every other rank's buffer into scratch; then it reduces all n inputs locally and divides once
// (avg). All ranks combine x0 op x1 op ... op x(n-1) in that order (the inputs before r are
// folded into scratch, then r's own input is combined with that prefix, then the rest), so every
// rank gets the same bits in floating point although each reduces for itself.
//
// Cost: alpha + S beta + (n-1) S gamma, counting one round whose n-1 messages travel in parallel
// on distinct links; each rank injects (n-1) S, so it only pays for small S or many links.
// Scratch: (n-1) S. Constraints: none.
#include "collectives/algorithms/Algorithms.h"

namespace cb {

Schedule oneShotAllReduce(int rank, int nranks, const CollArgs& args, const AlgoOptions&) {
  const size_t count = args.count;
  ScheduleBuilder b(count, count);
  const auto [send, recv] = wholeBuffers(count);
  // Input of rank j != rank.
  auto slot = [&](int j) {
    return Span{BufferRef::kScratch, static_cast<size_t>(j < rank ? j : j - 1) * count, count};
  };
  b.needScratch(static_cast<size_t>(nranks - 1) * count);
  auto& exchange = b.newPhase();
  for (int j = 0; j < nranks; ++j) {
    if (j != rank) exchange.steps.push_back(sendStep(j, send));
  }
  for (int j = 0; j < nranks; ++j) {
    if (j != rank) exchange.steps.push_back(recvStep(j, slot(j)));
  }
  auto& combine = b.newPhase();
  for (int j = 1; j < rank; ++j) combine.steps.push_back(reduceStep(slot(j), slot(0)));
  combine.steps.push_back(copyStep(send, recv));
  if (rank > 0) combine.steps.push_back(reduceStep(slot(0), recv));
  for (int j = rank + 1; j < nranks; ++j) combine.steps.push_back(reduceStep(slot(j), recv));
  if (args.op == RedOp::kAvg) combine.steps.push_back(scaleStep(recv));
  return std::move(b).build();
}

}  // namespace cb
