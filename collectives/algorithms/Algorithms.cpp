// The table of hand-written algorithms: what the registry publishes (one variant per entry, named
// by the entry; names are unique per collective) and what the schedule tests sweep. Cost strings
// use a = alpha (per message), b = beta (per byte), g = gamma (per byte reduced), S = the
// nccl-tests size of the collective in bytes, lg = log2.
#include "collectives/algorithms/Algorithms.h"

#include <array>

namespace cb {

std::span<const AlgorithmInfo> algorithms() {
  static const std::array kTable{
      // AllReduce
      AlgorithmInfo{Collective::kAllReduce, "ring",
                    "ring reduce-scatter then ring allgather (bandwidth-optimal)", "",
                    "2(n-1)a + 2(n-1)/n*S*b + (n-1)/n*S*g", ringAllReduce},
      AlgorithmInfo{Collective::kAllReduce, "recdoubling",
                    "recursive doubling: lg n rounds exchanging the whole buffer (latency-optimal)",
                    "", "lg(p)a + lg(p)*S*b + lg(p)*S*g; n != p (fold): +2a + 2S*b + S*g",
                    recDoublingAllReduce},
      AlgorithmInfo{Collective::kAllReduce, "rabenseifner",
                    "recursive-halving reduce-scatter then recursive-doubling allgather", "",
                    "2lg(p)a + 2(p-1)/p*S*b + (p-1)/p*S*g; n != p (fold): +2a + 2S*b + S*g",
                    rabenseifnerAllReduce},
      AlgorithmInfo{Collective::kAllReduce, "tree",
                    "binomial-tree reduce to rank 0, then binomial-tree broadcast", "",
                    "2ceil(lg n)a + 2ceil(lg n)*S*b + ceil(lg n)*S*g", treeAllReduce},
      AlgorithmInfo{Collective::kAllReduce, "oneshot",
                    "one-shot: every rank sends its buffer to all and reduces all n inputs", "",
                    "a + S*b + (n-1)*S*g (parallel links; each rank injects (n-1)*S)",
                    oneShotAllReduce},
      AlgorithmInfo{Collective::kAllReduce, "twoshot",
                    "two-shot: direct reduce-scatter then direct allgather", "",
                    "2a + 2S/n*b + (n-1)/n*S*g (parallel links; each rank injects 2(n-1)/n*S)",
                    twoShotAllReduce},
      AlgorithmInfo{Collective::kAllReduce, "hierarchical",
                    "intra-node reduce-scatter, inter-node ring allreduce, intra-node allgather",
                    "",
                    "2N*a + 2(1 + (N-1)/N)*S/L*b + ((L-1)/L + (N-1)/(N*L))*S*g; L ranks per node, "
                    "N nodes",
                    hierarchicalAllReduce},
      // AllGather
      AlgorithmInfo{Collective::kAllGather, "ring", "ring: n-1 steps, each passes one block on", "",
                    "(n-1)a + (n-1)/n*S*b", ringAllGather},
      AlgorithmInfo{Collective::kAllGather, "recdoubling",
                    "recursive doubling: lg n rounds, the held run of blocks doubles each round",
                    "",
                    "lg(n)a + (n-1)/n*S*b; n != p (fold): (lg(p)+2)a + at most ((2p-1)/n + 1)*S*b",
                    recDoublingAllGather},
      AlgorithmInfo{Collective::kAllGather, "bruck",
                    "Bruck: ceil(lg n) rounds for any n, rotated in scratch", "",
                    "ceil(lg n)a + (n-1)/n*S*b", bruckAllGather},
      AlgorithmInfo{Collective::kAllGather, "direct",
                    "direct: every rank sends its block to every other rank in one round", "",
                    "a + S/n*b (parallel links; each rank injects (n-1)/n*S)", directAllGather},
      // ReduceScatter
      AlgorithmInfo{Collective::kReduceScatter, "ring",
                    "ring: n-1 steps, each adds the local block to a passing partial", "",
                    "(n-1)a + (n-1)/n*S*b + (n-1)/n*S*g", ringReduceScatter},
      AlgorithmInfo{Collective::kReduceScatter, "rechalving",
                    "recursive halving: lg n rounds, each exchanges half of the remaining blocks",
                    "",
                    "lg(n)a + (n-1)/n*S*b + (n-1)/n*S*g; n != p (fold): (lg(p)+2)a + at most "
                    "((2p-1)/n + 1)*S*b + ((2p-2)/n + 1)*S*g",
                    recHalvingReduceScatter},
      AlgorithmInfo{Collective::kReduceScatter, "direct",
                    "direct: every rank sends block j to rank j in one round, then reduces", "",
                    "a + S/n*b + (n-1)/n*S*g (parallel links; each rank injects (n-1)/n*S)",
                    directReduceScatter},
      // Broadcast
      AlgorithmInfo{Collective::kBroadcast, "binomial",
                    "binomial tree from the root: ceil(lg n) rounds of the whole buffer", "",
                    "ceil(lg n)(a + S*b)", binomialBroadcast},
      AlgorithmInfo{Collective::kBroadcast, "chain",
                    "pipelined chain from the root, in chunks (--chunk, default 64 KiB)", "",
                    "(n-2+k)(a + C*b), k = ceil(S/C) chunks of C bytes", chainBroadcast},
  };
  return kTable;
}

}  // namespace cb
