// A point-to-point measurement as a result record (what `p2p` stores), and the bound it is
// judged against.
#pragma once

#include <cstdint>

#include "bench/P2p.h"
#include "core/PeakModel.h"
#include "core/Result.h"
#include "core/Stats.h"

namespace cb {

// The bound of a p2p point from its pair's link bound: bw moves one direction at a time, bibw
// both (twice the link); latency has none (0), nor a point whose buffers fit the cache.
double p2pPeak(const P2pPoint& p, const Bound& b);
// The record `p2p` stores: collective = the test, variant = transport and pair, one byte per
// element, no op; the peak set where one is known.
ResultRecord p2pRecord(const P2pPoint& p, int64_t runId, Statistic statistic, const Bound& peak);

}  // namespace cb
