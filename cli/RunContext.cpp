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
  r.root = p.root;
  r.sizeBytes = p.bytes;
  r.count = p.count;
  r.placement = std::string(placementName(p.placement));
  r.nranks = p.nranks;
  r.status = p.status;
  r.message = p.message;
  r.algbw = p.algbw;
  r.busbw = p.busbw;
  r.wrong = p.wrong;
  setTiming(r, p.summary, p.timeSeconds, p.iterations, statistic, p.samples, p.rankSamples);
  return r;
}

void setTiming(ResultRecord& r, const Summary& summary, double timeSeconds, int iterations,
               Statistic statistic, const std::vector<double>& samples,
               const std::vector<double>& rankSamples) {
  r.iterations = iterations;
  r.statistic = std::string(statisticName(statistic));
  r.timeUs = timeSeconds * 1e6;
  r.medianUs = summary.median * 1e6;
  r.meanUs = summary.mean * 1e6;
  r.minUs = summary.min * 1e6;
  r.maxUs = summary.max * 1e6;
  r.p99Us = summary.p99 * 1e6;
  r.cv = summary.cv;
  r.samplesUs.clear();
  r.rankSamplesUs.clear();
  r.samplesUs.reserve(samples.size());
  for (double x : samples) r.samplesUs.push_back(x * 1e6);
  r.rankSamplesUs.reserve(rankSamples.size());
  for (double x : rankSamples) r.rankSamplesUs.push_back(x * 1e6);
}

}  // namespace cb::cli
