// Hierarchical AllReduce (Horovod's and NCCL's two-level scheme; "2D" allreduce): reduce-scatter
// inside each node, allreduce across nodes among the ranks that hold the same chunk, allgather
// inside each node.
//
// Steps: a node is a group of L = AlgoOptions::ranksPerNode consecutive ranks (0 or >= n: one
// node); N = ceil(n / L) nodes, the last one smaller when L does not divide n. The buffer is cut
// into L chunks; in a node of s ranks, local rank i owns chunks i, i + s, i + 2s, ... (one chunk
// in a full node; a smaller node shares all L chunks among fewer ranks). (1) Direct intra-node
// reduce-scatter: each rank sends every chunk it does not own to its owner in the node and
// reduces the contributions it receives to its own chunks. (2) For each chunk, the owners in the
// N nodes run a ring allreduce on it (the chunk cut into N pieces; rings of different chunks run
// in lockstep, so a rank owning several chunks takes part in several rings); avg divides each
// piece once, after the ring's reduce-scatter. (3) Direct intra-node allgather: owners send their
// chunks to every other rank of their node. Each element is reduced along one path only, so
// every rank gets the same bits.
//
// Cost (full nodes): 2N alpha + 2 (1 + (N-1)/N) S/L beta + ((L-1)/L + (N-1)/(N L)) S gamma,
// counting intra-node rounds whose messages travel in parallel on distinct links. Inter-node
// traffic per rank is 2 (N-1)/N S/L, L times less than a flat ring's. L = n is two-shot; L = 1 is
// the ring. Scratch: (L-1)/L S per rank in full nodes (more in the smaller last node).
// Constraints: none (any n, any L; an uneven last node is correct but is the bottleneck).
#include <algorithm>
#include <vector>

#include "collectives/algorithms/Algorithms.h"

namespace cb {

Schedule hierarchicalAllReduce(int rank, int nranks, const CollArgs& args,
                               const AlgoOptions& opts) {
  const size_t count = args.count;
  const int perNode =
      opts.ranksPerNode <= 0 || opts.ranksPerNode >= nranks ? nranks : opts.ranksPerNode;
  const size_t L = static_cast<size_t>(perNode);
  const int nodes = (nranks + perNode - 1) / perNode;
  const int node = rank / perNode, local = rank % perNode;
  auto nodeSize = [&](int k) { return std::min(perNode, nranks - k * perNode); };
  const int size = nodeSize(node);
  auto owner = [&](int k, size_t c) { return k * perNode + static_cast<int>(c) % nodeSize(k); };
  auto chunk = [&](BufferRef buf, size_t c) {
    return Span{buf, chunkBegin(count, L, c), chunkSize(count, L, c)};
  };
  std::vector<size_t> owned;
  for (size_t c = static_cast<size_t>(local); c < L; c += static_cast<size_t>(size)) {
    owned.push_back(c);
  }
  ScheduleBuilder b(count, count);

  // (1) Intra-node reduce-scatter. Slot (i, mate) holds that node mate's part of owned[i].
  const size_t slotSize = (count + L - 1) / L;  // the largest chunk
  const size_t mates = static_cast<size_t>(size - 1);
  auto slot = [&](size_t i, int mateLocal) {
    size_t m = static_cast<size_t>(mateLocal < local ? mateLocal : mateLocal - 1);
    return Span{BufferRef::kScratch, (i * mates + m) * slotSize, chunkSize(count, L, owned[i])};
  };
  b.needScratch(owned.size() * mates * slotSize);
  if (size > 1) {
    // Per pair of ranks, both sides post chunks in increasing order, so messages match.
    auto& ph = b.newPhase();
    for (size_t c = 0; c < L; ++c) {
      if (owner(node, c) != rank)
        ph.steps.push_back(sendStep(owner(node, c), chunk(BufferRef::kSend, c)));
    }
    for (size_t i = 0; i < owned.size(); ++i) {
      for (int m = 0; m < size; ++m) {
        if (m != local) ph.steps.push_back(recvStep(node * perNode + m, slot(i, m)));
      }
    }
  }
  auto& combine = b.newPhase();
  for (size_t i = 0; i < owned.size(); ++i) {
    const Span dst = chunk(BufferRef::kRecv, owned[i]);
    combine.steps.push_back(copyStep(chunk(BufferRef::kSend, owned[i]), dst));
    for (int m = 0; m < size; ++m) {
      if (m != local) combine.steps.push_back(reduceStep(slot(i, m), dst));
    }
  }

  // (2) Inter-node ring allreduce of each owned chunk among its owners, one per node.
  const size_t N = static_cast<size_t>(nodes);
  const size_t pos = static_cast<size_t>(node);
  auto piece = [&](size_t c, size_t j) {
    const size_t len = chunkSize(count, L, c);
    j %= N;
    return Span{BufferRef::kRecv, chunkBegin(count, L, c) + chunkBegin(len, N, j),
                chunkSize(len, N, j)};
  };
  auto right = [&](size_t c) { return owner((node + 1) % nodes, c); };
  auto left = [&](size_t c) { return owner((node + nodes - 1) % nodes, c); };
  for (size_t s = 0; s + 1 < N; ++s) {
    auto& ph = s == 0 ? b.phase() : b.newPhase();
    for (size_t c : owned) ph.steps.push_back(sendStep(right(c), piece(c, pos + N - s)));
    for (size_t c : owned) {
      const Span p = piece(c, pos + 2 * N - s - 1);
      ph.steps.push_back(recvReduceStep(left(c), p, p));
    }
  }
  auto& gather = N > 1 ? b.newPhase() : b.phase();
  if (args.op == RedOp::kAvg) {
    for (size_t c : owned) gather.steps.push_back(scaleStep(piece(c, pos + 1)));
  }
  for (size_t s = 0; s + 1 < N; ++s) {
    auto& ph = s == 0 ? b.phase() : b.newPhase();
    for (size_t c : owned) ph.steps.push_back(sendStep(right(c), piece(c, pos + 1 + N - s)));
    for (size_t c : owned) ph.steps.push_back(recvStep(left(c), piece(c, pos + N - s)));
  }

  // (3) Intra-node allgather.
  if (size > 1) {
    auto& ph = b.newPhase();
    for (size_t c : owned) {
      for (int m = 0; m < size; ++m) {
        if (m != local)
          ph.steps.push_back(sendStep(node * perNode + m, chunk(BufferRef::kRecv, c)));
      }
    }
    for (size_t c = 0; c < L; ++c) {
      if (owner(node, c) != rank)
        ph.steps.push_back(recvStep(owner(node, c), chunk(BufferRef::kRecv, c)));
    }
  }
  return std::move(b).build();
}

}  // namespace cb
