// The reference-executor check shared by the schedule tests (tests/unit/collectives): an
// algorithm looked up by name, and one configuration run on every rank of the reference executor,
// each rank's output compared bit for bit with what it computes on its own and, out of place,
// every send buffer left as it was.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "bench/Verify.h"
#include "collectives/algorithms/Algorithms.h"
#include "collectives/schedule/ReferenceExecutor.h"
#include "core/Error.h"

namespace cb::test {

// The algorithm `name` of `coll`; InternalError when the table has none.
inline const AlgorithmInfo& findAlgorithm(Collective coll, std::string_view name) {
  for (const auto& a : algorithms()) {
    if (a.coll == coll && name == a.name) return a;
  }
  throw InternalError(fmt::format("no algorithm {}/{}", collectiveName(coll), name));
}

// Runs one configuration on the reference executor; "" or what went wrong.
inline std::string runOnReference(const AlgorithmInfo& algo, int n, const CollArgs& args,
                                  const AlgoOptions& opts, bool inPlace, uint64_t seed) {
  const size_t es = dataTypeSize(args.dtype);
  const size_t sc = sendCount(args, n), rc = recvCount(args, n);
  std::vector<Schedule> schedules;
  std::vector<RankBuffers> bufs(n);
  std::vector<std::vector<std::byte>> inputs(n);
  for (int r = 0; r < n; ++r) {
    schedules.push_back(algo.build(r, n, args, opts));
    inputs[r].resize(sc * es);
    fillInput(args, r, n, seed, inputs[r].data());
    bufs[r].inPlace = inPlace;
    if (!inPlace) {
      bufs[r].send = inputs[r];
      bufs[r].recv.assign(rc * es, std::byte{0x5a});
    } else if (args.coll == Collective::kReduceScatter) {
      bufs[r].send = inputs[r];
    } else {
      bufs[r].recv.assign(rc * es, std::byte{0x5a});
      // memcpy with a null source is undefined even for 0 bytes (UBSan): skip empty inputs.
      if (sc > 0) {
        std::memcpy(bufs[r].recv.data() + inPlaceSendOffset(args, r) * es, inputs[r].data(),
                    sc * es);
      }
    }
  }
  try {
    runReference(schedules, args, bufs);
  } catch (const std::exception& e) {
    return e.what();
  }
  for (int r = 0; r < n; ++r) {
    if (!inPlace && bufs[r].send != inputs[r])
      return fmt::format("rank {} wrote its send buffer", r);
    std::vector<std::byte> expected(rc * es);
    if (!expectedOutput(args, r, n, seed, expected.data())) continue;
    const std::byte* got = inPlace && args.coll == Collective::kReduceScatter
                               ? bufs[r].send.data() + inPlaceRecvOffset(args, r) * es
                               : bufs[r].recv.data();
    if (auto wrong = countWrong(args.dtype, got, expected.data(), rc); wrong) {
      return fmt::format("rank {}: {} wrong element(s)", r, wrong);
    }
  }
  return "";
}

}  // namespace cb::test
