// Pipelined chain Broadcast (NCCL's ring broadcast; the long-message pipeline).
//
// Steps: ranks form a chain from the root, v = (r - root) mod n. The buffer is cut into k chunks
// of C elements (AlgoOptions::chunkElements; default 64 KiB worth). In round t the root sends
// chunk t to v = 1; every other rank receives chunk t from v - 1 and, in the same round, forwards
// chunk t - 1 to v + 1, so all links carry a chunk at once after n - 2 rounds of fill. The root
// sends from its send buffer and copies it to its receive buffer (nothing in place).
//
// Cost: (n - 2 + k) (alpha + C beta), k = ceil(S / C): about S beta for k >> n, independent of
// n. One rank's schedule shows only its own k + 1 rounds; the fill is the wait between ranks.
// Constraints: none (C is clamped to at least one element).
#include <algorithm>

#include "collectives/algorithms/Algorithms.h"

namespace cb {

Schedule chainBroadcast(int rank, int nranks, const CollArgs& args, const AlgoOptions& opts) {
  constexpr size_t kDefaultChunkBytes = 64 * 1024;
  const size_t count = args.count;
  const size_t chunkElems =
      opts.chunkElements ? opts.chunkElements
                         : std::max<size_t>(1, kDefaultChunkBytes / dataTypeSize(args.dtype));
  const size_t k = (count + chunkElems - 1) / chunkElems;
  auto chunk = [&](BufferRef buf, size_t t) {
    return Span{buf, t * chunkElems, std::min(chunkElems, count - t * chunkElems)};
  };
  ScheduleBuilder b(count, count);
  const int v = (rank - args.root % nranks + nranks) % nranks;
  const int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
  if (v == 0) {
    b.newPhase().steps.push_back(
        copyStep({BufferRef::kSend, 0, count}, {BufferRef::kRecv, 0, count}));
    for (size_t t = 0; t < k && nranks > 1; ++t) {
      auto& ph = t == 0 ? b.phase() : b.newPhase();
      ph.steps.push_back(sendStep(next, chunk(BufferRef::kSend, t)));
    }
    return std::move(b).build();
  }
  for (size_t t = 0; t <= k; ++t) {
    auto& ph = b.newPhase();
    if (t < k) ph.steps.push_back(recvStep(prev, chunk(BufferRef::kRecv, t)));
    if (t >= 1 && v + 1 < nranks)
      ph.steps.push_back(sendStep(next, chunk(BufferRef::kRecv, t - 1)));
  }
  return std::move(b).build();
}

}  // namespace cb
