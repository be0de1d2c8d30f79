// Gathering every rank's outcome of a proxy run on rank 0.
#include "training_proxies/RankProxy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/Error.h"
#include "core/Stats.h"
#include "core/Text.h"
#include "training_proxies/Plan.h"

namespace cb::proxy::rank {

namespace {

std::string serializeStats(const RankOutcome& o) {
  std::string s;
  for (const auto& k : o.order) {
    auto it = o.callTimes.find(k);
    if (it == o.callTimes.end()) continue;
    std::vector<double> t = it->second;
    s += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{:.9g}\n", k.group, k.coll, k.bytes, k.nranks,
                     dataTypeName(k.dtype), o.callsPerStep.at(k), summarize(t).median);
  }
  return s;
}

std::vector<std::string> splitTabs(const std::string& line, int parts) {
  std::vector<std::string> out;
  size_t start = 0;
  for (int i = 0; i < parts - 1; ++i) {
    size_t t = line.find('\t', start);
    if (t == std::string::npos) break;
    out.push_back(line.substr(start, t - start));
    start = t + 1;
  }
  out.push_back(line.substr(start));
  return out;
}

double busFactorFor(const std::string& coll, int n) {
  if (coll == "allreduce") return busBwFactor(Collective::kAllReduce, n);
  if (coll == "allgather") return busBwFactor(Collective::kAllGather, n);
  if (coll == "reduce_scatter") return busBwFactor(Collective::kReduceScatter, n);
  return 1;
}

// Every rank's per-step metrics as gathered: step, compute, comm, exposed, transfer, bubble.
struct RankMetrics {
  static constexpr int kCount = 6;
  std::vector<double> all;
  int steps = 0;
  double operator()(int r, int metric, int k) const {
    return all[(r * kCount + metric) * steps + k];
  }
};

// The pipeline's idle time per stage (fractions of the step, medians over the steps): bubble,
// transfer, exposed and other, and the schedule bubble, with the waits on computing peers held
// against the schedule's own idle with the stages' measured compute (PipeIdle.h, splitWait).
void splitStageIdle(const ProxyOptions& o, const RankMetrics& at,
                    const std::vector<Layout>& layouts, int m, const std::vector<double>& combined,
                    ProxyRun& run) {
  const int n = static_cast<int>(layouts.size());
  const int steps = at.steps;
  const int pp = layouts.front().pp;
  run.bubbleIdeal = idealBubble(pp, m);
  // Per step, the idle the schedule imposes on each stage with the stages' measured compute
  // (mean over a stage's ranks) and instant transfers; the asynchronous schedule over its
  // window of steps, with the mean compute.
  const bool async = o.schedule == PpSchedule::kAsync;
  std::vector<std::vector<double>> perStage(steps, std::vector<double>(pp, 0));
  std::vector<double> ranksOf(pp, 0), meanCompute(pp, 0);
  for (int r = 0; r < n; ++r) ranksOf[layouts[r].ppIdx] += 1;
  for (int k = 0; k < steps; ++k) {
    for (int r = 0; r < n; ++r) {
      const double c = at(r, 1, k) / ranksOf[layouts[r].ppIdx];
      perStage[k][layouts[r].ppIdx] += c;
      meanCompute[layouts[r].ppIdx] += c / steps;
    }
  }
  std::vector<std::vector<double>> schedIdle(steps);
  for (int k = 0; k < steps; ++k) {
    schedIdle[k] =
        async ? (k == 0 ? scheduleIdlePerStep(o.schedule, m, steps, meanCompute) : schedIdle[0])
              : scheduleIdlePerStep(o.schedule, m, 1, perStage[k]);
  }
  for (int st = 0; st < pp; ++st) {
    // Per step, the stage's mean over its ranks of idle and its parts, and the bubble's share
    // of the stage's compute plus bubble.
    std::vector<double> idle, transfer, exposed, bubble, other, sched;
    for (int k = 0; k < steps; ++k) {
      double i = 0, x = 0, e = 0, b = 0, sb = 0;
      int cnt = 0;
      for (int r = 0; r < n; ++r) {
        if (layouts[r].ppIdx != st) continue;
        i += (combined[k] - at(r, 1, k)) / combined[k];
        // A stage done before the slowest one waits for the flush: bubble as well. Beyond the
        // schedule's own idle, the wait is the transfers' and collectives' that made a peer's
        // compute late (PipeIdle.h, splitWait).
        const WaitSplit w = splitWait(at(r, 5, k) + combined[k] - at(r, 0, k), schedIdle[k][st],
                                      at(r, 4, k), at(r, 3, k) - at(r, 4, k));
        x += w.transfer / combined[k];
        e += w.exposed / combined[k];
        b += w.bubble / combined[k];
        sb += at(r, 1, k) + w.bubble > 0 ? w.bubble / (at(r, 1, k) + w.bubble) : 0;
        ++cnt;
      }
      idle.push_back(i / cnt);
      transfer.push_back(x / cnt);
      exposed.push_back(e / cnt);
      bubble.push_back(b / cnt);
      other.push_back((i - x - e - b) / cnt);
      sched.push_back(sb / cnt);
    }
    run.idlePerStage.push_back(summarize(idle).median);
    run.transferPerStage.push_back(summarize(transfer).median);
    run.exposedPerStage.push_back(summarize(exposed).median);
    run.bubblePerStage.push_back(summarize(bubble).median);
    run.otherPerStage.push_back(summarize(other).median);
    run.scheduleBubblePerStage.push_back(summarize(sched).median);
  }
}

}  // namespace

ProxyRun gatherRun(Communicator& comm, const ProxyOptions& o, const Layout& layout0, double batch,
                   RankOutcome& mine) {
  const int n = comm.size();
  Deadline d = Deadline::after(o.timeoutSeconds);
  ProxyRun run;
  run.n = n;
  run.layout = layout0;
  run.batchPerRank = batch;
  const int steps = static_cast<int>(mine.step.size());
  run.steps = steps;
  std::vector<double> flat;
  for (auto* v :
       {&mine.step, &mine.compute, &mine.comm, &mine.exposed, &mine.transfer, &mine.bubble}) {
    flat.insert(flat.end(), v->begin(), v->end());
  }
  auto bytes = comm.allgatherBytes(flat.data(), flat.size() * sizeof(double), d);
  std::vector<double> all(bytes.size() / sizeof(double));
  std::memcpy(all.data(), bytes.data(), bytes.size());
  const RankMetrics at{std::move(all), steps};
  std::vector<Layout> layouts(n);
  for (int r = 0; r < n; ++r) layouts[r] = resolveLayout(o, n, r);
  std::vector<double> combined(steps), comp(steps), com(steps), exp(steps), xfer(steps);
  for (int k = 0; k < steps; ++k) {
    for (int r = 0; r < n; ++r) {
      combined[k] = std::max(combined[k], at(r, 0, k));
      comp[k] = std::max(comp[k], at(r, 1, k));
      com[k] = std::max(com[k], at(r, 2, k));
      exp[k] = std::max(exp[k], at(r, 3, k));
      xfer[k] = std::max(xfer[k], at(r, 4, k));
    }
  }
  run.stepSamples = combined;
  for (int r = 0; r < n; ++r) {
    for (int k = 0; k < steps; ++k) run.rankSteps.push_back(at(r, 0, k));
  }
  Summary s = summarize(combined);
  run.step = s.median;
  run.stepMin = s.min;
  run.stepMax = s.max;
  run.stepCv = s.cv;
  run.compute = summarize(comp).median;
  run.comm = summarize(com).median;
  run.exposed = summarize(exp).median;
  run.transfer = summarize(xfer).median;
  run.overlapPct = run.comm > 0 ? 100.0 * std::max(0.0, 1 - run.exposed / run.comm) : 0;
  const int pp = layout0.pp;
  const int m = microBatchesFor(o, layout0);
  if (pp > 1) splitStageIdle(o, at, layouts, m, combined, run);
  const int dp = layout0.dp;
  double workers = parameterServer(o) ? n - o.servers : dp;
  const double samples = batch * workers * m;
  run.samplesPerSecond = run.step > 0 ? samples / run.step : 0;
  run.tokensPerSecond = run.samplesPerSecond * o.model.tokensPerSample();
  run.commBytesPerStep = comm.broadcastValue(mine.commBytes, 0, d);
  // Calls: each rank's medians; the call's time is the slowest rank's.
  auto statTexts = comm.allgatherStrings(serializeStats(mine), d);
  std::map<StatKey, CallStat> calls;
  std::vector<StatKey> order;  // as rank 0 issues them, then what other ranks add
  for (const auto& text : statTexts) {
    for (const auto& line : nonEmptyLines(text)) {
      auto f = splitTabs(line, 7);
      if (f.size() != 7) continue;
      StatKey k{f[0], f[1], std::stoull(f[2]), std::stoi(f[3]), parseDataType(f[4])};
      if (!calls.count(k)) order.push_back(k);
      CallStat& c = calls[k];
      c.group = k.group;
      c.coll = k.coll;
      c.bytes = k.bytes;
      c.nranks = k.nranks;
      c.dtype = k.dtype;
      c.callsPerStep = std::max(c.callsPerStep, std::stoi(f[5]));
      c.seconds = std::max(c.seconds, std::stod(f[6]));
    }
  }
  for (const auto& k : order) {
    CallStat& c = calls[k];
    c.algbw = c.seconds > 0 ? c.bytes / c.seconds / 1e9 : 0;
    c.busbw = c.algbw * busFactorFor(c.coll, c.nranks);
    run.calls.push_back(c);
  }
  // Timeline of the median step (synchronous) or of the window (asynchronous pipeline).
  int pick = 0;
  if (mine.timelineText.size() > 1) {
    std::vector<std::pair<double, int>> byTime;
    for (int k = 0; k < steps; ++k) byTime.emplace_back(combined[k], k);
    std::sort(byTime.begin(), byTime.end());
    pick = byTime[byTime.size() / 2].second;
  }
  pick = comm.broadcastValue(pick, 0, d);
  auto tl = comm.allgatherStrings(mine.timelineText.empty() ? "" : mine.timelineText[pick], d);
  for (const auto& text : tl) {
    std::vector<TimelineEvent> ev;
    for (const auto& line : nonEmptyLines(text)) {
      auto f = splitTabs(line, 4);
      if (f.size() != 4) continue;
      ev.push_back({f[3], f[0][0], std::stod(f[1]), std::stod(f[2])});
    }
    run.timeline.push_back(std::move(ev));
  }
  auto wrong = comm.allgather(mine.wrong, d);
  run.wrong = -1;
  for (int64_t w : wrong) {
    if (w >= 0) run.wrong = std::max<int64_t>(run.wrong, 0) + w;
  }
  return run;
}

}  // namespace cb::proxy::rank
