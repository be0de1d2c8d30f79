// What a proxy run stores and writes (training_proxies/Proxy.h): one result record per world size
// (collective "proxy-<mode>", placement "step", time = step time, samples = per-step times) so
// runs/show/compare/gate treat a step like a collective, and the JSON document of the whole run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "results/Records.h"
#include "training_proxies/Proxy.h"

namespace cb {

// The step's form in a record's variant: "allreduce-nooverlap", "1f1b-m4", "dp2xtp2xpp1", with
// what else changes the step's traffic ("-m4", "-zero1", "-adam").
std::string proxyFormText(const proxy::ProxyOptions& o, const proxy::Layout& l);

// One world size's step as a result record of run `runId`.
ResultRecord proxyStepRecord(const proxy::ProxyOptions& o, const proxy::ProxyResult& r,
                             const proxy::ProxyRun& run, int64_t runId);

// "# peak: host memory copy ..." (with its newline), "" when no copy rate was measured.
std::string proxyCopyPeakLine(double copyGBps, int ranks);

// Everything rank 0 stores of a run: the JSON document (the run's "proxy" detail and --json), one
// record per world size, the wrong elements over every run.
struct ProxyOutputs {
  std::string json;
  std::vector<ResultRecord> records;
  int64_t wrong = 0;
};
ProxyOutputs proxyOutputs(const proxy::ProxyOptions& o, const proxy::ProxyResult& r, int64_t runId);

}  // namespace cb
