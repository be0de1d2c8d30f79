#include "adapters/P2pRecords.h"

#include <string>

namespace cb {

// bw moves one direction at a time, bibw both; latency has no bandwidth bound.
double p2pPeak(const P2pPoint& p, const Bound& b) {
  // Buffers that fit the cache never reach the memory the bound is of.
  if (p.test == P2pTest::kLatency || !b.known() || b.cacheResident(p.bytes)) return 0;
  return p.test == P2pTest::kBibw ? 2 * b.busbw : b.busbw;
}

ResultRecord p2pRecord(const P2pPoint& p, int64_t runId, Statistic statistic, const Bound& peak) {
  ResultRecord r;
  r.runId = runId;
  r.collective = std::string(p2pTestName(p.test));
  r.variant = p2pVariantLabel(p.transport, p.pair);
  r.dtype = "uint8";
  r.op = "none";
  r.sizeBytes = p.bytes;
  r.count = p.bytes;
  r.placement = "out";
  r.nranks = 2;
  r.status = p.status;
  r.message = p.message;
  if (p.status == ResultStatus::kOk || p.bandwidthGBs != 0) r.algbw = r.busbw = p.bandwidthGBs;
  if (p.wrong >= 0) r.wrong = p.wrong;  // -1: not verified
  setTiming(r, p.summary, p.timeSeconds, p.iterations, statistic, p.samples, p.rankSamples);
  if (peak.known() && p2pPeak(p, peak) > 0) {
    r.peakGBps = p2pPeak(p, peak);
    r.peakLimit = peak.limit;
  }
  return r;
}

}  // namespace cb
