// Bruck AllGather (Bruck et al. 1997; MPICH's allgather for short messages and non-power-of-two
// n).
//
// Steps: rank r keeps a rotated copy in scratch, tmp[i] = block (r + i) mod n, starting with its
// own block at tmp[0]. In round k (d = 2^k, while d < n) it sends tmp[0, c) to rank r - d and
// receives tmp[d, d + c) from rank r + d, with c = min(d, n - d): the run it holds doubles each
// round, and the last round sends only what is missing, so any n takes ceil(lg n) rounds. The
// first round sends straight from the send buffer. At the end the blocks are rotated into place
// (two copies) and the own block is copied from the send buffer (nothing to do in place).
//
// Cost: ceil(lg n) alpha + (n-1)/n S beta (S = n * count bytes gathered). Scratch: S.
// Constraints: none.
#include <algorithm>

#include "collectives/algorithms/Algorithms.h"

namespace cb {

Schedule bruckAllGather(int rank, int nranks, const CollArgs& args, const AlgoOptions&) {
  const auto [m, n, r] = blocksOf(rank, nranks, args);
  ScheduleBuilder b(m, m * n);
  const Span input{BufferRef::kSend, 0, m};
  auto tmp = [&](size_t i, size_t c) { return Span{BufferRef::kScratch, i * m, c * m}; };
  auto blocks = [&](size_t lo, size_t c) { return Span{BufferRef::kRecv, lo * m, c * m}; };
  auto& first = b.newPhase();
  if (n > 1) {
    b.needScratch(n * m);
    first.steps.push_back(copyStep(input, tmp(0, 1)));
  }
  for (size_t d = 1; d < n; d <<= 1) {
    const size_t c = std::min(d, n - d);
    auto& ph = d == 1 ? b.phase() : b.newPhase();
    ph.steps.push_back(sendStep(static_cast<int>((r + n - d) % n), d == 1 ? input : tmp(0, c)));
    ph.steps.push_back(recvStep(static_cast<int>((r + d) % n), tmp(d, c)));
  }
  auto& place = b.newPhase();
  place.steps.push_back(copyStep(input, blocks(r, 1)));
  if (n > 1) {
    place.steps.push_back(copyStep(tmp(1, n - r - 1), blocks(r + 1, n - r - 1)));
    place.steps.push_back(copyStep(tmp(n - r, r), blocks(0, r)));
  }
  return std::move(b).build();
}

}  // namespace cb
