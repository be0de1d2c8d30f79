#include "collectives/algorithms/Algorithms.h"

#include <array>

namespace cb {

std::span<const AlgorithmInfo> algorithms() {
  static const std::array kTable{
      AlgorithmInfo{Collective::kAllReduce, "ring",
                    "ring reduce-scatter then ring allgather (bandwidth-optimal)", "",
                    "2(n-1)a + 2(n-1)/n*S*b + (n-1)/n*S*g", ringAllReduce},
      AlgorithmInfo{Collective::kAllGather, "ring", "ring: n-1 steps, each passes one block on",
                    "", "(n-1)a + (n-1)/n*S*b", ringAllGather},
      AlgorithmInfo{Collective::kReduceScatter, "ring",
                    "ring: n-1 steps, each adds the local block to a passing partial", "",
                    "(n-1)a + (n-1)/n*S*b + (n-1)/n*S*g", ringReduceScatter},
  };
  return kTable;
}

}  // namespace cb
