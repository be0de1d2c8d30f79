#include "cli/RunContext.h"

namespace cb::cli {

SessionOptions sessionOptions(const std::string& label, const std::string& db, bool noDb,
                              double timeoutSeconds, const WorldOptions& world) {
  SessionOptions session;
  session.label = label;
  session.commandLine = commandLine();
  session.dbPath = noDb ? "" : db;
  session.transports.setupSeconds = timeoutSeconds;
  session.world = world;
  return session;
}

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

void setTiming(ResultRecord& r, const Summary& summary, double timeSeconds, int iterations,
               Statistic statistic, const std::vector<double>& samples,
               const std::vector<double>& rankSamples) {
  // What was not measured stays unset (stored NULL): no iterations, no time without samples,
  // no cv from fewer than 2 samples.
  r.iterations.reset();
  if (iterations > 0) r.iterations = iterations;
  r.statistic = std::string(statisticName(statistic));
  r.timeKnown = timeSeconds > 0 || summary.n > 0;
  r.timeUs = timeSeconds * 1e6;
  for (auto* v : {&r.meanUs, &r.minUs, &r.maxUs, &r.p99Us, &r.cv}) v->reset();
  r.medianKnown = summary.n > 0;
  r.medianUs = 0;
  if (summary.n > 0) {
    r.medianUs = summary.median * 1e6;
    r.meanUs = summary.mean * 1e6;
    r.minUs = summary.min * 1e6;
    r.maxUs = summary.max * 1e6;
    r.p99Us = summary.p99 * 1e6;
  }
  if (summary.n > 1) r.cv = summary.cv;
  r.samplesUs.clear();
  r.rankSamplesUs.clear();
  r.samplesUs.reserve(samples.size());
  for (double x : samples) r.samplesUs.push_back(x * 1e6);
  r.rankSamplesUs.reserve(rankSamples.size());
  for (double x : rankSamples) r.rankSamplesUs.push_back(x * 1e6);
}

}  // namespace cb::cli
