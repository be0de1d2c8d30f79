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

namespace cb::cli {

ResultRecord toRecord(const PointResult& p, int64_t runId, Statistic statistic);
// The session options every measuring command takes from its flags (--label, --db/--no-db, -T,
// --np); the command line is this process's.
SessionOptions sessionOptions(const std::string& label, const std::string& db, bool noDb,
                              double timeoutSeconds, const WorldOptions& world);
// The timing part of a record (seconds in, microseconds stored), shared by every measurement.
void setTiming(ResultRecord& r, const Summary& summary, double timeSeconds, int iterations,
               Statistic statistic, const std::vector<double>& samples,
               const std::vector<double>& rankSamples);

}  // namespace cb::cli
