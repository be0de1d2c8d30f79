// The translation of bench results into store records and back, shared by the commands that
// measure and by `show` (the world, the header and the run's lifecycle are the run session's:
// session/RunSession.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/Sweep.h"
#include "core/Stats.h"
#include "results/Records.h"
#include "session/RunSession.h"

namespace cb {

ResultRecord toRecord(const PointResult& p, int64_t runId, Statistic statistic);
// A stored result as the sweep reported it, for the nccl-tests table of `show`; nullopt when the
// collective, type or op is not one nccl-tests has (a proxy step, an OSU point-to-point test).
std::optional<PointResult> pointFromRecord(const ResultRecord& r);

}  // namespace cb
