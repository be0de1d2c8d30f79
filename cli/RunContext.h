// The translation of bench results into store records, shared by the commands that measure (the
// world, the header and the run's lifecycle are the run session's: session/RunSession.h).
#pragma once

#include <cstdint>
#include <vector>

#include "bench/Sweep.h"
#include "core/Stats.h"
#include "results/Records.h"
#include "session/RunSession.h"

namespace cb::cli {

ResultRecord toRecord(const PointResult& p, int64_t runId, Statistic statistic);
// The timing part of a record (seconds in, microseconds stored), shared by every measurement.
void setTiming(ResultRecord& r, const Summary& summary, double timeSeconds, int iterations,
               Statistic statistic, const std::vector<double>& samples,
               const std::vector<double>& rankSamples);

}  // namespace cb::cli
