#include "adapters/SweepRecords.h"

#include "bench/Report.h"
#include "core/Error.h"

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

// A stored result as the sweep reported it, for the nccl-tests table; nullopt when the
// collective, type or op is not one nccl-tests has (a proxy step, an OSU point-to-point test).
std::optional<PointResult> pointFromRecord(const ResultRecord& r) {
  PointResult p;
  try {
    p.coll = parseCollective(r.collective);
    p.dtype = parseDataType(r.dtype);
    // The tests without an op print "none" whatever p.op holds (an imported alltoall stores
    // "none"; sendrecv's test prints its op).
    p.op = printsRedOp(p.coll) ? parseRedOp(r.op) : RedOp::kSum;
  } catch (const UsageError&) {
    return std::nullopt;
  }
  // The sweep's own conventions for what is not known: root -1 (nccl-tests prints it for a
  // collective without one), wrong -1 (printed "N/A"), time 0 (the row's columns "N/A").
  p.variant = r.variant;
  p.root = r.root.value_or(-1);
  p.bytes = r.sizeBytes;
  p.count = r.count.value_or(0);
  p.placement = r.placement == "in" ? Placement::kIn : Placement::kOut;
  p.nranks = r.nranks.value_or(0);
  p.status = r.status;
  p.message = r.message;
  p.iterations = static_cast<int>(r.iterations.value_or(0));
  p.timeSeconds = r.timeKnown ? r.timeUs * 1e-6 : 0;
  p.algbw = r.algbw.value_or(0);
  p.busbw = r.busbw.value_or(0);
  p.wrong = r.wrong.value_or(-1);
  return p;
}

}  // namespace cb
