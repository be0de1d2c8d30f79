// The Mann-Whitney U test, per-case verdicts and the gate's series rule (see Compare.h for the
// decision rule in full).
#include "results/Compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "core/Error.h"
#include "core/Stats.h"
#include "core/Text.h"

namespace cb {

// ---- Mann-Whitney U test ----

std::vector<double> mannWhitneyExactCounts(int n1, int n2) {
  if (n1 < 0 || n2 < 0) throw InternalError("mannWhitneyExactCounts: negative sample size");
  // f[i] holds the distribution of U for i values of the first sample and j of the second.
  // Placing the largest value last: if it belongs to the first sample it beats all j values
  // of the second, so f(i, j; u) = f(i - 1, j; u - j) + f(i, j - 1; u). Only additions of
  // positive counts: no cancellation, exact up to 2^53 and accurate far beyond.
  std::vector<std::vector<double>> f(static_cast<size_t>(n1) + 1, std::vector<double>{1.0});
  for (int j = 1; j <= n2; ++j) {
    for (int i = 1; i <= n1; ++i) {
      std::vector<double> next(static_cast<size_t>(i) * j + 1, 0.0);
      const std::vector<double>& old = f[i];  // (i, j - 1)
      for (size_t u = 0; u < old.size(); ++u) next[u] += old[u];
      const std::vector<double>& left = f[i - 1];  // (i - 1, j), already updated
      for (size_t u = 0; u < left.size(); ++u) next[u + j] += left[u];
      f[i] = std::move(next);
    }
  }
  return f[n1];
}

namespace {

// Two-sided p of the normal approximation for U (scipy's: continuity correction 0.5, variance
// with the tie term sum(t^3 - t)).
double normalPValue(double u1, size_t n1, size_t n2, double tieTerm) {
  double nn1 = static_cast<double>(n1), nn2 = static_cast<double>(n2), n = nn1 + nn2;
  double mu = nn1 * nn2 / 2;
  double u = std::max(u1, nn1 * nn2 - u1);
  double var = nn1 * nn2 / 12 * ((n + 1) - tieTerm / (n * (n - 1)));
  if (!(var > 0)) return 1;  // every value tied
  double z = (u - mu - 0.5) / std::sqrt(var);
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));  // 2 * P(Z > z)
}

bool exactApplies(size_t n1, size_t n2) {
  return n1 <= kMannWhitneyExactLimit && n2 <= kMannWhitneyExactLimit;
}

}  // namespace

MannWhitney mannWhitneyU(std::span<const double> a, std::span<const double> b,
                         MannWhitneyMethod method) {
  MannWhitney r;
  r.n1 = a.size();
  r.n2 = b.size();
  if (a.empty() || b.empty()) return r;
  // Ranks over the pooled sample, ties sharing their average rank.
  std::vector<std::pair<double, bool>> all;  // value, from a
  all.reserve(a.size() + b.size());
  for (double x : a) all.emplace_back(x, true);
  for (double x : b) all.emplace_back(x, false);
  std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  double rankSumA = 0, tieTerm = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j + 1 < all.size() && all[j + 1].first == all[i].first) ++j;
    double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    double t = static_cast<double>(j - i + 1);
    tieTerm += t * t * t - t;
    for (size_t k = i; k <= j; ++k) {
      if (all[k].second) rankSumA += rank;
    }
    i = j + 1;
  }
  double n1 = static_cast<double>(r.n1), n2 = static_cast<double>(r.n2);
  r.u1 = rankSumA - n1 * (n1 + 1) / 2;
  r.ties = tieTerm > 0;
  bool exact = method == MannWhitneyMethod::kExact ||
               (method == MannWhitneyMethod::kAuto && exactApplies(r.n1, r.n2));
  if (!r.ties && exact) {
    std::vector<double> counts =
        mannWhitneyExactCounts(static_cast<int>(r.n1), static_cast<int>(r.n2));
    double total = std::accumulate(counts.begin(), counts.end(), 0.0);
    // U1 is a whole number without ties; the distribution is symmetric, so the two-sided p is
    // twice the upper tail beyond the larger of U1 and U2.
    size_t u = static_cast<size_t>(std::llround(std::max(r.u1, n1 * n2 - r.u1)));
    double tail = 0;
    for (size_t k = u; k < counts.size(); ++k) tail += counts[k];
    r.pValue = std::min(1.0, 2 * tail / total);
    r.exact = true;
  } else {
    r.pValue = normalPValue(r.u1, r.n1, r.n2, tieTerm);
  }
  return r;
}

double minAchievablePValue(size_t n1, size_t n2) {
  if (n1 == 0 || n2 == 0) return 1;
  if (exactApplies(n1, n2)) {
    // 2 / C(n1 + n2, n1), by lgamma to stay finite for any size.
    double logC = std::lgamma(static_cast<double>(n1 + n2) + 1) -
                  std::lgamma(static_cast<double>(n1) + 1) -
                  std::lgamma(static_cast<double>(n2) + 1);
    return std::min(1.0, 2 * std::exp(-logC));
  }
  return normalPValue(static_cast<double>(n1) * static_cast<double>(n2), n1, n2, 0);
}

std::vector<double> holmAdjust(std::span<const double> p) {
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return p[x] < p[y]; });
  std::vector<double> adjusted(p.size());
  double running = 0;
  const size_t m = p.size();
  for (size_t k = 0; k < m; ++k) {
    running = std::max(running, std::min(1.0, static_cast<double>(m - k) * p[order[k]]));
    adjusted[order[k]] = running;
  }
  return adjusted;
}

// ---- options ----

Metric parseMetric(std::string_view text) {
  std::string t = toLower(trim(text));
  if (t == "busbw") return Metric::kBusbw;
  if (t == "time") return Metric::kTime;
  throw UsageError(fmt::format("--metric '{}' is not one of busbw, time", text));
}

std::string_view metricName(Metric m) { return m == Metric::kBusbw ? "busbw" : "time"; }
std::string_view metricUnit(Metric m) { return m == Metric::kBusbw ? "GB/s" : "us"; }

double parseThreshold(std::string_view text) {
  std::string_view t = trim(text);
  if (!t.empty() && t.back() == '%') t = trim(t.substr(0, t.size() - 1));
  double value = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size() || !std::isfinite(value)) {
    throw UsageError(fmt::format("--threshold '{}' is not a percentage such as 5%", text));
  }
  if (value < 0 || value >= 100) {
    throw UsageError(fmt::format("--threshold '{}' must be at least 0% and below 100%", text));
  }
  return value / 100;
}

double checkAlpha(double alpha) {
  if (!(alpha > 0 && alpha <= 0.5)) {
    throw UsageError(fmt::format("--alpha {} must be above 0 and at most 0.5", alpha));
  }
  return alpha;
}

std::string_view verdictName(Verdict v) {
  switch (v) {
    case Verdict::kRegression: return "regression";
    case Verdict::kImprovement: return "improvement";
    case Verdict::kSame: return "same";
    case Verdict::kInconclusive: return "inconclusive";
    case Verdict::kNotComparable: return "not comparable";
  }
  return "?";
}

std::string_view gateOutcomeName(GateOutcome o) {
  switch (o) {
    case GateOutcome::kPass: return "pass";
    case GateOutcome::kRegression: return "regression";
    case GateOutcome::kInconclusive: return "inconclusive";
    case GateOutcome::kNothingComparable: return "nothing comparable";
  }
  return "?";
}

int Comparison::count(Verdict v) const {
  return static_cast<int>(
      std::count_if(cases.begin(), cases.end(), [&](const auto& c) { return c.verdict == v; }));
}

// ---- comparing runs ----

namespace {

// The per-iteration values of the metric for one result: the stored per-iteration times, or
// the single reported value when no samples were kept (imports). busbw is proportional to
// 1 / time for a given case, scaled so the reported time maps to the reported busbw.
std::vector<double> metricSamples(const ResultRecord& r, Metric metric) {
  std::vector<double> times = r.samplesUs;
  if (times.empty() && r.timeUs > 0) times.push_back(r.timeUs);
  if (metric == Metric::kTime) return times;
  if (r.busbw <= 0) return {};
  if (r.timeUs <= 0) return {r.busbw};
  double scale = r.busbw * r.timeUs;
  std::vector<double> out;
  out.reserve(times.size());
  for (double t : times) {
    if (t > 0) out.push_back(scale / t);
  }
  return out;
}

double median(std::vector<double> v) { return percentile(v, 0.5); }

// Both sides' results of one case.
struct CaseSides {
  std::vector<const ResultRecord*> base, cand;
};

bool isOk(const ResultRecord* r) { return r->status == "ok"; }
bool isWrong(const ResultRecord* r) { return r->wrong > 0; }

std::string shortFingerprint(const RunRecord& r) {
  return r.fingerprint.empty() ? "unknown" : r.fingerprint;
}

// Whether the environments differ, and the line that says so ("" when they match).
std::pair<bool, std::string> environmentCheck(const RunSet& base, const RunSet& cand) {
  bool differ = false, unknown = false;
  std::string detail;
  for (const RunRecord& c : cand.runs) {
    for (const RunRecord& b : base.runs) {
      if (b.fingerprint == c.fingerprint) {
        unknown = unknown || b.fingerprint.empty();
        continue;
      }
      if (!differ) {
        detail = fmt::format("run {} has fingerprint {}, run {} has {}", b.id, shortFingerprint(b),
                             c.id, shortFingerprint(c));
      }
      differ = true;
    }
  }
  if (differ) return {true, fmt::format("environment fingerprints differ: {}", detail)};
  if (unknown) return {false, "environment fingerprints unknown (imported runs): compared as is"};
  return {false, ""};
}

void judgeCase(CaseComparison& c, const CaseSides& sides, const CompareOptions& o) {
  std::vector<const ResultRecord*> baseOk, candOk;
  for (const ResultRecord* r : sides.base) {
    if (isOk(r) && !isWrong(r)) baseOk.push_back(r);
  }
  for (const ResultRecord* r : sides.cand) {
    if (isOk(r) && !isWrong(r)) candOk.push_back(r);
  }
  // A candidate that breaks where the baseline worked is a regression whatever the timing.
  if (!baseOk.empty()) {
    for (const ResultRecord* r : sides.cand) {
      if (r->status == "failed" || isWrong(r)) {
        c.verdict = Verdict::kRegression;
        c.failed = c.confirmed = true;
        c.note = isWrong(r) ? fmt::format("candidate computed {} wrong element(s)", r->wrong)
                            : fmt::format("candidate failed{}{}", r->message.empty() ? "" : ": ",
                                          r->message);
        return;
      }
    }
  }
  if (baseOk.empty() || candOk.empty()) {
    const ResultRecord* bad = baseOk.empty() ? sides.base.front() : sides.cand.front();
    c.verdict = Verdict::kNotComparable;
    std::string what = isWrong(bad) ? fmt::format("{} wrong element(s)", bad->wrong) : bad->status;
    c.note = fmt::format("{} {}{}{}", baseOk.empty() ? "baseline" : "candidate", what,
                         bad->message.empty() ? "" : ": ", bad->message);
    return;
  }

  std::vector<double> base, cand;
  std::vector<double> runMedians;
  std::set<int64_t> baseRunIds;
  for (const ResultRecord* r : baseOk) baseRunIds.insert(r->runId);
  for (int64_t runId : baseRunIds) {
    std::vector<double> runValues;
    for (const ResultRecord* r : baseOk) {
      if (r->runId != runId) continue;
      std::vector<double> v = metricSamples(*r, o.metric);
      runValues.insert(runValues.end(), v.begin(), v.end());
    }
    if (!runValues.empty()) runMedians.push_back(median(runValues));
    base.insert(base.end(), runValues.begin(), runValues.end());
  }
  for (const ResultRecord* r : candOk) {
    std::vector<double> v = metricSamples(*r, o.metric);
    cand.insert(cand.end(), v.begin(), v.end());
  }
  c.baseRuns = static_cast<int>(runMedians.size());
  c.baseN = base.size();
  c.candN = cand.size();
  if (base.empty() || cand.empty()) {
    c.verdict = Verdict::kInconclusive;
    c.note = fmt::format("no {} values", metricName(o.metric));
    return;
  }
  c.baseValue = median(base);
  c.candValue = median(cand);
  if (!(c.baseValue > 0)) {
    c.verdict = Verdict::kInconclusive;
    c.note = fmt::format("baseline {} is 0", metricName(o.metric));
    return;
  }
  c.changePct = (c.candValue - c.baseValue) / c.baseValue * 100;
  c.worsePct = o.metric == Metric::kBusbw ? -c.changePct : c.changePct;
  // The baseline's own run-to-run spread, when it has several runs: the candidate has to be
  // worse than the baseline's worst run, not merely than its pooled median.
  if (runMedians.size() >= 2) {
    for (double m : runMedians) {
      c.noisePct = std::max(c.noisePct, std::abs(m - c.baseValue) / c.baseValue * 100);
    }
  }
  c.thresholdPct = o.threshold * 100 + c.noisePct;
  c.minP = minAchievablePValue(c.baseN, c.candN);
  if (c.baseN == 1 && c.candN == 1) {
    c.verdict = Verdict::kInconclusive;
    c.note = "no per-iteration samples: nothing to test";
    return;
  }
  MannWhitney test = mannWhitneyU(base, cand);
  c.pValue = test.pValue;
  c.exact = test.exact;
  c.tested = true;  // testability and verdict are decided over all cases
}

}  // namespace

Comparison compareRuns(const RunSet& base, const RunSet& cand, const CompareOptions& o) {
  Comparison out;
  out.options = o;
  std::map<CaseKey, CaseSides> sides;
  for (const ResultRecord& r : base.results) sides[CaseKey::of(r)].base.push_back(&r);
  for (const ResultRecord& r : cand.results) sides[CaseKey::of(r)].cand.push_back(&r);

  auto [differ, envNote] = environmentCheck(base, cand);
  out.environmentDiffers = differ;
  out.environmentNote = envNote;
  const bool blocked = differ && !o.allowDifferentEnvironment;

  for (const auto& [key, s] : sides) {
    if (!o.sizes.contains(key.sizeBytes)) {
      ++out.skipped;
      continue;
    }
    if (s.cand.empty()) {
      out.onlyBase.push_back(key);
      continue;
    }
    if (s.base.empty()) {
      out.onlyCand.push_back(key);
      continue;
    }
    bool anyOk = std::any_of(s.base.begin(), s.base.end(), isOk) ||
                 std::any_of(s.cand.begin(), s.cand.end(), isOk);
    if (!anyOk) {
      ++out.skipped;  // unsupported (or failed) on both sides: nothing to say
      continue;
    }
    CaseComparison c;
    c.key = key;
    if (blocked) {
      c.verdict = Verdict::kNotComparable;
      c.note = "environment fingerprints differ";  // the full line is environmentNote
    } else {
      judgeCase(c, s, o);
    }
    out.cases.push_back(std::move(c));
  }

  // Testability: Holm needs p < alpha / m for the best of m cases, so a regression present in
  // all m cases at complete separation reaches alpha only when m * minP < alpha. Keep the
  // largest set of cases (smallest minP first) that can; the others are inconclusive.
  std::vector<double> minPs;
  for (const CaseComparison& c : out.cases) {
    if (c.tested) minPs.push_back(c.minP);
  }
  std::sort(minPs.begin(), minPs.end());
  size_t testable = 0;
  for (size_t k = minPs.size(); k > 0; --k) {
    // Cases with the same sample sizes stand or fall together: never split a tie.
    bool splitsTie = k < minPs.size() && minPs[k] == minPs[k - 1];
    if (!splitsTie && minPs[k - 1] * static_cast<double>(k) < o.alpha) {
      testable = k;
      break;
    }
  }
  const double minPLimit = testable > 0 ? minPs[testable - 1] : -1;
  size_t admitted = 0;
  for (CaseComparison& c : out.cases) {
    if (!c.tested) continue;
    if (c.minP <= minPLimit && admitted < testable) {
      ++admitted;
      continue;
    }
    c.tested = false;
    c.verdict = Verdict::kInconclusive;
    c.note = fmt::format(
        "{} vs {} samples: the smallest possible p, {:.2g}, cannot reach alpha {:g} over {} "
        "case(s)",
        c.baseN, c.candN, c.minP, o.alpha, std::max<size_t>(minPs.size(), 1));
  }

  // Holm over every tested case of this comparison.
  std::vector<double> raw;
  for (const CaseComparison& c : out.cases) {
    if (c.tested) raw.push_back(c.pValue);
  }
  std::vector<double> adjusted = holmAdjust(raw);
  size_t next = 0;
  for (CaseComparison& c : out.cases) {
    if (!c.tested) continue;
    c.adjustedP = adjusted[next++];
    bool significant = c.adjustedP < o.alpha;
    if (significant && c.worsePct > c.thresholdPct) {
      c.verdict = Verdict::kRegression;
    } else if (significant && -c.worsePct > c.thresholdPct) {
      c.verdict = Verdict::kImprovement;
    } else {
      c.verdict = Verdict::kSame;
    }
  }

  // The run's common shift: the median change over every tested case. A whole run a few
  // percent slower or faster is what a shared machine does between two processes.
  std::vector<double> allWorse;
  int rawRegressions = 0;
  for (const CaseComparison& c : out.cases) {
    if (!c.tested) continue;
    allWorse.push_back(c.worsePct);
    rawRegressions += c.verdict == Verdict::kRegression;
  }
  out.commonShiftPct = allWorse.empty() ? 0 : median(allWorse);
  const double driftPct = o.drift * 100, thresholdPct = o.threshold * 100;

  // Series: each is judged against the shift of the rest of the run (leave-one-out, so a
  // regression confined to some series stands out of the others), forgiven only when the rest
  // is slower (never when faster), at most by --drift, and only when at least two other series
  // tell what the rest does. More than half of the tested sizes must regress beyond that shift
  // and the median change beyond it must pass the threshold.
  std::map<CaseKey, std::vector<CaseComparison*>> bySeries;
  for (CaseComparison& c : out.cases) {
    if (c.tested) bySeries[c.key.series()].push_back(&c);
  }
  for (auto& [key, members] : bySeries) {
    SeriesSummary s;
    s.series = key;
    std::vector<double> others;
    for (const auto& [otherKey, otherMembers] : bySeries) {
      if (otherKey == key) continue;
      for (const CaseComparison* c : otherMembers) others.push_back(c->worsePct);
    }
    if (bySeries.size() >= 3 && !others.empty()) {
      s.shiftPct = std::clamp(median(others), 0.0, driftPct);
    }
    std::vector<double> worse;
    for (CaseComparison* c : members) {
      ++s.tested;
      s.regressions +=
          c->verdict == Verdict::kRegression && c->worsePct - s.shiftPct > c->thresholdPct;
      s.improvements += c->verdict == Verdict::kImprovement;
      worse.push_back(c->worsePct);
    }
    s.medianWorsePct = median(worse);
    s.regression = s.regressions * 2 > s.tested && s.medianWorsePct - s.shiftPct > thresholdPct;
    if (s.regression) {
      for (CaseComparison* c : members) {
        if (c->verdict == Verdict::kRegression && c->worsePct - s.shiftPct > c->thresholdPct) {
          c->confirmed = true;
        }
      }
    }
    out.series.push_back(s);
  }
  // A whole run slower beyond --drift is a regression in its own right.
  out.globalRegression =
      out.commonShiftPct > driftPct && rawRegressions * 2 > static_cast<int>(allWorse.size());
  if (out.globalRegression) {
    for (CaseComparison& c : out.cases) {
      if (c.verdict == Verdict::kRegression) c.confirmed = true;
    }
  }

  bool anyConfirmed =
      std::any_of(out.cases.begin(), out.cases.end(), [](const auto& c) { return c.confirmed; });
  bool anyTested =
      std::any_of(out.cases.begin(), out.cases.end(), [](const auto& c) { return c.tested; });
  bool anyOpen = std::any_of(out.cases.begin(), out.cases.end(), [](const auto& c) {
    return c.verdict == Verdict::kInconclusive || c.verdict == Verdict::kNotComparable;
  });
  if (blocked || out.cases.empty()) {
    out.outcome = GateOutcome::kNothingComparable;
  } else if (anyConfirmed) {
    out.outcome = GateOutcome::kRegression;
  } else if (anyOpen || !anyTested) {
    out.outcome = GateOutcome::kInconclusive;
  } else {
    out.outcome = GateOutcome::kPass;
  }
  return out;
}

// ---- choosing the runs ----

RunSpec RunSpec::parse(std::string_view text, bool allowLabel) {
  RunSpec spec;
  spec.text = std::string(trim(text));
  std::string_view t = spec.text;
  if (t == "last" || t == "latest") {
    spec.last = true;
    return spec;
  }
  if (t.starts_with("label:")) {
    if (!allowLabel) {
      throw UsageError(
          fmt::format("'{}': a label selects baselines only; give a run id or last", text));
    }
    std::string_view name = t.substr(6);
    size_t at = name.rfind("@last-");
    if (at != std::string_view::npos) {
      std::string_view k = name.substr(at + 6);
      auto [end, ec] = std::from_chars(k.data(), k.data() + k.size(), spec.lastK);
      if (ec != std::errc() || end != k.data() + k.size() || spec.lastK < 1) {
        throw UsageError(fmt::format("'{}': K in @last-K must be a positive whole number", text));
      }
      name = name.substr(0, at);
    }
    if (name.empty()) throw UsageError(fmt::format("'{}': empty label name", text));
    spec.label = std::string(name);
    return spec;
  }
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), spec.id);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size() || spec.id <= 0) {
    throw UsageError(fmt::format("run '{}' is not a run id (a positive number), last{}", text,
                                 allowLabel ? ", label:NAME or label:NAME@last-K" : ""));
  }
  return spec;
}

std::vector<RunRecord> pickLabelRuns(const std::vector<RunRecord>& labelledNewestFirst,
                                     const RunSpec& spec, const RunRecord* candidate) {
  std::vector<RunRecord> picked;
  for (const RunRecord& r : labelledNewestFirst) {
    if (static_cast<int>(picked.size()) >= spec.lastK) break;
    if (r.label != spec.label || r.status != RunStatus::kOk) continue;
    if (candidate) {
      if (r.id == candidate->id) continue;
      // Not started after the candidate: replaying history gates each run against its past.
      if (std::tie(r.startedAt, r.id) > std::tie(candidate->startedAt, candidate->id)) continue;
    }
    picked.push_back(r);
  }
  return picked;
}

}  // namespace cb
