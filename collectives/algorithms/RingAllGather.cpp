// Ring AllGather.
//
// Steps: rank r places its block at r (a copy, skipped in place). In step s = 0..n-2 it sends
// block (r - s) mod n to r+1 and receives block (r - s - 1) mod n from r-1 into place. Step 0
// sends straight from the send buffer, so the copy overlaps the first transfer.
//
// Cost: (n-1) alpha + (n-1)/n S beta, S = n * count bytes gathered. Bandwidth-optimal.
// Constraints: none.
#include "collectives/algorithms/Algorithms.h"

namespace cb {

Schedule ringAllGather(int rank, int nranks, const CollArgs& args, const AlgoOptions&) {
  const auto [m, n, r] = blocksOf(rank, nranks, args);
  ScheduleBuilder b(m, m * n);
  auto block = [&](size_t j) { return Span{BufferRef::kRecv, (j % n) * m, m}; };
  const int right = (rank + 1) % nranks, left = (rank - 1 + nranks) % nranks;
  auto& first = b.newPhase();
  first.steps.push_back(copyStep({BufferRef::kSend, 0, m}, block(r)));
  for (size_t s = 0; s + 1 < n; ++s) {
    auto& ph = s == 0 ? first : b.newPhase();
    ph.steps.push_back(sendStep(right, s == 0 ? Span{BufferRef::kSend, 0, m} : block(r + n - s)));
    ph.steps.push_back(recvStep(left, block(r + 2 * n - s - 1)));
  }
  return std::move(b).build();
}

}  // namespace cb
