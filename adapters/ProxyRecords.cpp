#include "adapters/ProxyRecords.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/Stats.h"
#include "training_proxies/ProxyReport.h"

namespace cb {

using namespace cb::proxy;

std::string proxyFormText(const ProxyOptions& o, const Layout& l) {
  std::string form = o.mode.info().form(o, l);
  // What else changes the step's traffic names a different case.
  if (o.mode.info().dimension != &Layout::pp && microBatchesFor(o, l) > 1) {
    form += fmt::format("-m{}", microBatchesFor(o, l));
  }
  if (o.zero > 0 && o.zero < 3) form += fmt::format("-zero{}", o.zero);
  if (o.optimizer != OptimizerKind::kNone) form += fmt::format("-{}", optimizerName(o.optimizer));
  return form;
}

ResultRecord proxyStepRecord(const ProxyOptions& o, const ProxyResult& r, const ProxyRun& run,
                             int64_t runId) {
  ResultRecord rec;
  rec.runId = runId;
  rec.collective = fmt::format("proxy-{}", proxyModeName(o.mode));
  rec.variant = fmt::format("{}{}/{}/{}", o.model.name,
                            o.model.sliced() ? fmt::format("-{}blk", o.model.slicedBlocks) : "",
                            proxyFormText(o, run.layout), variantLabel(r));
  rec.dtype = std::string(dataTypeName(o.gradType));
  rec.op = "sum";
  rec.sizeBytes = run.commBytesPerStep;
  rec.count = static_cast<uint64_t>(run.batchPerRank * run.layout.dp + 0.5);
  rec.placement = "step";
  rec.nranks = run.n;
  rec.status = ResultStatus::kOk;
  if (run.wrong >= 0) rec.wrong = run.wrong;  // -1: not verified
  // Bandwidth of a step: the bytes rank 0 hands to communication per step over the step time.
  if (run.step > 0) rec.algbw = rec.busbw = run.commBytesPerStep / run.step / 1e9;
  Summary s = summarize(run.stepSamples);
  setTiming(rec, s, s.median, run.steps, Statistic::kMedian, run.stepSamples, run.rankSteps);
  return rec;
}

std::string proxyCopyPeakLine(double copyGBps, int ranks) {
  if (!(copyGBps > 0)) return "";
  return fmt::format("# peak: host memory copy {:.2f} GB/s per rank ({} ranks copying at once)\n",
                     copyGBps, ranks);
}

ProxyOutputs proxyOutputs(const ProxyOptions& o, const ProxyResult& r, int64_t runId) {
  ProxyOutputs out;
  out.json = proxyJson(o, r);
  for (const auto& run : r.runs) {
    out.records.push_back(proxyStepRecord(o, r, run, runId));
    out.wrong += std::max<int64_t>(run.wrong, 0);
  }
  return out;
}

}  // namespace cb
