#include "bench/Sweep.h"

#include <cmath>

namespace cb {

std::string_view rankCombineName(RankCombine c) {
  static constexpr std::string_view kNames[] = {"rank0", "avg", "min", "max"};
  return kNames[static_cast<size_t>(c)];
}

std::string_view placementName(Placement p) { return p == Placement::kOut ? "out" : "in"; }

std::vector<uint64_t> sweepSizes(const SweepOptions& o) {
  std::vector<uint64_t> sizes;
  uint64_t s = o.minBytes;
  while (s <= o.maxBytes) {
    sizes.push_back(s);
    uint64_t next = o.stepBytes > 0 ? s + o.stepBytes
                                    : static_cast<uint64_t>(std::llround(
                                          static_cast<double>(s) * o.stepFactor));
    if (next <= s) break;  // -f 1 or min 0: one point, as nccl-tests does
    s = next;
  }
  return sizes;
}

}  // namespace cb
