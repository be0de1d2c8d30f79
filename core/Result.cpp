#include "core/Result.h"

#include "core/EnumNames.h"

namespace cb {
namespace {

constexpr EnumRow<ResultStatus> kStatuses[] = {{ResultStatus::kOk, "ok"},
                                               {ResultStatus::kUnsupported, "unsupported"},
                                               {ResultStatus::kFailed, "failed"},
                                               {ResultStatus::kSkipped, "skipped"}};

}  // namespace

std::string_view resultStatusName(ResultStatus s) { return enumName(kStatuses, s); }
std::optional<ResultStatus> parseResultStatus(std::string_view name) {
  return enumValue(kStatuses, name);
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
  for (auto* v : {&r.meanUs, &r.minUs, &r.maxUs, &r.p99Us, &r.cv, &r.stddevUs}) v->reset();
  r.medianKnown = summary.n > 0;
  r.medianUs = 0;
  if (summary.n > 0) {
    r.medianUs = summary.median * 1e6;
    r.meanUs = summary.mean * 1e6;
    r.minUs = summary.min * 1e6;
    r.maxUs = summary.max * 1e6;
    r.p99Us = summary.p99 * 1e6;
    r.stddevUs = summary.stddev * 1e6;
  }
  if (summary.n > 1) r.cv = summary.cv;
  r.samplesUs.clear();
  r.rankSamplesUs.clear();
  r.samplesUs.reserve(samples.size());
  for (double x : samples) r.samplesUs.push_back(x * 1e6);
  r.rankSamplesUs.reserve(rankSamples.size());
  for (double x : rankSamples) r.rankSamplesUs.push_back(x * 1e6);
}

}  // namespace cb
