// The translation of bench results into store records, shared by the commands that measure (the
// world, the header and the run's lifecycle are the run session's: session/RunSession.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/Sweep.h"
#include "core/Stats.h"
#include "results/Records.h"
#include "session/RunSession.h"

namespace cb {

ResultRecord toRecord(const PointResult& p, int64_t runId, Statistic statistic);
}  // namespace cb
