// Direct AllGather: every rank sends its block to every other rank in one round (the pattern of
// NCCL's and mscclpp's all-pairs kernels on fully connected nodes).
//
// Steps: rank r copies its block to place r (nothing to do in place), sends its block to each
// other rank and receives block j from rank j into place j, all in one round.
//
// Cost: alpha + S/n beta (S = n * count bytes gathered), counting one round whose n-1 messages
// travel in parallel on distinct links; each rank injects (n-1)/n S. Constraints: none.
#include "collectives/algorithms/Algorithms.h"

namespace cb {

Schedule directAllGather(int rank, int nranks, const CollArgs& args, const AlgoOptions&) {
  const size_t m = args.count;
  ScheduleBuilder b(m, m * static_cast<size_t>(nranks));
  const Span input{BufferRef::kSend, 0, m};
  auto block = [&](int j) { return Span{BufferRef::kRecv, static_cast<size_t>(j) * m, m}; };
  auto& ph = b.newPhase();
  ph.steps.push_back(copyStep(input, block(rank)));
  for (int j = 0; j < nranks; ++j) {
    if (j != rank) ph.steps.push_back(sendStep(j, input));
  }
  for (int j = 0; j < nranks; ++j) {
    if (j != rank) ph.steps.push_back(recvStep(j, block(j)));
  }
  return std::move(b).build();
}

}  // namespace cb
