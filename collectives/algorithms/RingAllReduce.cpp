// Ring AllReduce (Patarasuk & Yuan; NCCL's ring; Baidu's ring-allreduce).
//
// Steps: the buffer is cut into n chunks. Reduce-scatter: in step s = 0..n-2, rank r sends chunk
// (r - s) mod n to r+1 and receives chunk (r - s - 1) mod n from r-1, reducing it with its own
// contribution straight into the receive buffer. After n-1 steps rank r owns chunk (r + 1) mod n
// fully reduced. Allgather: in step s = 0..n-2, rank r sends chunk (r + 1 - s) mod n and receives
// chunk (r - s) mod n, copying it into place. avg divides the owned chunk once before the
// allgather. Out of place, the first reduction reads the send buffer directly: no initial copy.
//
// Cost: 2(n-1) alpha + 2(n-1)/n S beta + (n-1)/n S gamma. Bandwidth-optimal; latency grows with n.
// Constraints: none (any n, any count; chunks differ by at most one element).
#include "collectives/algorithms/Algorithms.h"

namespace cb {

Schedule ringAllReduce(int rank, int nranks, const CollArgs& args, const AlgoOptions&) {
  const size_t count = args.count;
  const size_t n = static_cast<size_t>(nranks);
  ScheduleBuilder b(count, count);
  auto chunk = [&](BufferRef buf, size_t j) { return chunkOf(buf, count, n, j % n); };
  const int right = (rank + 1) % nranks, left = (rank - 1 + nranks) % nranks;
  const size_t r = static_cast<size_t>(rank);
  if (nranks == 1) {
    b.newPhase().steps.push_back(
        copyStep({BufferRef::kSend, 0, count}, {BufferRef::kRecv, 0, count}));
    return std::move(b).build();
  }
  for (size_t s = 0; s + 1 < n; ++s) {
    auto& ph = b.newPhase();
    // Step 0 sends the raw contribution; later steps forward what the previous step reduced.
    ph.steps.push_back(
        sendStep(right, chunk(s == 0 ? BufferRef::kSend : BufferRef::kRecv, r + n - s)));
    size_t j = r + 2 * n - s - 1;
    ph.steps.push_back(
        recvReduceStep(left, chunk(BufferRef::kSend, j), chunk(BufferRef::kRecv, j)));
  }
  for (size_t s = 0; s + 1 < n; ++s) {
    auto& ph = b.newPhase();
    if (s == 0 && args.op == RedOp::kAvg)
      ph.steps.push_back(scaleStep(chunk(BufferRef::kRecv, r + 1)));
    ph.steps.push_back(sendStep(right, chunk(BufferRef::kRecv, r + 1 + n - s)));
    ph.steps.push_back(recvStep(left, chunk(BufferRef::kRecv, r + n - s)));
  }
  return std::move(b).build();
}

}  // namespace cb
