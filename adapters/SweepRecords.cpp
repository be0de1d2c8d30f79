#include "adapters/SweepRecords.h"

namespace cb {

ResultRecord toRecord(const PointResult& p, int64_t runId, Statistic statistic) {
  ResultRecord r;
  r.runId = runId;
  r.collective = std::string(collectiveName(p.coll));
  r.variant = p.variant;
  r.dtype = std::string(dataTypeName(p.dtype));
  r.op = hasReduction(p.coll) ? std::string(redOpName(p.op)) : "none";
  if (p.root >= 0) r.root = p.root;  // -1: not a rooted collective
  r.sizeBytes = p.bytes;
  r.count = p.count;
  r.placement = std::string(placementName(p.placement));
  r.nranks = p.nranks;
  r.status = p.status;
  r.message = p.message;
  // A point that is not ok and has no bandwidth was not timed: unknown, not 0 GB/s.
  if (p.status == "ok" || p.algbw != 0) r.algbw = p.algbw;
  if (p.status == "ok" || p.busbw != 0) r.busbw = p.busbw;
  if (p.wrong >= 0) r.wrong = p.wrong;  // -1: not verified
  if (p.peak > 0) {
    r.peakGBps = p.peak;
    r.peakLimit = p.peakLimit;
  }
  setTiming(r, p.summary, p.timeSeconds, p.iterations, statistic, p.samples, p.rankSamples);
  return r;
}

}  // namespace cb
