// Two-shot (direct) AllReduce: direct reduce-scatter then direct allgather, as in NCCL's and
// mscclpp's two-shot kernels for fully connected nodes.
//
// Steps: the buffer is cut into n chunks. Round 1: rank r sends chunk j of its input to rank j
// and receives chunk r from every other rank into scratch. It then reduces the n contributions
// to chunk r into its receive buffer and divides once (avg). Round 2: it sends chunk r to every
// other rank and receives every other chunk into place. One reduction per element: every rank
// gets the same bits.
//
// Cost: 2 alpha + 2 S/n beta + (n-1)/n S gamma, counting rounds whose n-1 messages travel in
// parallel on distinct links; each rank injects 2 (n-1)/n S. Scratch: (n-1) S/n.
// Constraints: none.
#include "collectives/algorithms/Algorithms.h"

namespace cb {

Schedule twoShotAllReduce(int rank, int nranks, const CollArgs& args, const AlgoOptions&) {
  const size_t count = args.count;
  const size_t n = static_cast<size_t>(nranks);
  ScheduleBuilder b(count, count);
  auto chunk = [&](BufferRef buf, int j) { return chunkOf(buf, count, n, static_cast<size_t>(j)); };
  const size_t mine = chunkSize(count, n, static_cast<size_t>(rank));
  // Rank j's contribution to chunk `rank`.
  auto slot = [&](int j) {
    return Span{BufferRef::kScratch, static_cast<size_t>(j < rank ? j : j - 1) * mine, mine};
  };
  b.needScratch((n - 1) * mine);
  auto& scatter = b.newPhase();
  for (int j = 0; j < nranks; ++j) {
    if (j != rank) scatter.steps.push_back(sendStep(j, chunk(BufferRef::kSend, j)));
  }
  for (int j = 0; j < nranks; ++j) {
    if (j != rank) scatter.steps.push_back(recvStep(j, slot(j)));
  }
  auto& gather = b.newPhase();
  const Span own = chunk(BufferRef::kRecv, rank);
  gather.steps.push_back(copyStep(chunk(BufferRef::kSend, rank), own));
  for (int j = 0; j < nranks; ++j) {
    if (j != rank) gather.steps.push_back(reduceStep(slot(j), own));
  }
  if (args.op == RedOp::kAvg) gather.steps.push_back(scaleStep(own));
  for (int j = 0; j < nranks; ++j) {
    if (j != rank) gather.steps.push_back(sendStep(j, own));
  }
  for (int j = 0; j < nranks; ++j) {
    if (j != rank) gather.steps.push_back(recvStep(j, chunk(BufferRef::kRecv, j)));
  }
  return std::move(b).build();
}

}  // namespace cb
