// Run-level tests, per-case verdicts and the gate's outcome (see Compare.h for the decision
// rule in full). compareRuns is a sequence of stages (pairCases ... settleOutcome) that share
// the sides' values in a CompareWork.
#include "results/Compare.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "core/EnumNames.h"
#include "core/Error.h"
#include "core/Stats.h"
#include "core/Text.h"
#include "results/FingerprintDiff.h"

namespace cb {

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
std::string runValueName(double quantile) {
  if (quantile <= 0) return "min";
  if (std::abs(quantile - 0.5) < 1e-9) return "median";
  return fmt::format("p{:g}", quantile * 100);
}

double parseThreshold(std::string_view text) {
  std::string_view t = trim(text);
  if (!t.empty() && t.back() == '%') t = trim(t.substr(0, t.size() - 1));
  double value = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size() || !std::isfinite(value)) {
    throw UsageError(fmt::format("--threshold '{}' is not a percentage such as 5%", text));
  }
  // 0% asks to detect any change at all: no number of runs can, so every case would read
  // inconclusive.
  if (value <= 0 || value >= 100) {
    throw UsageError(fmt::format("--threshold '{}' must be above 0% and below 100%", text));
  }
  return value / 100;
}

double checkAlpha(double alpha) {
  if (!(alpha > 0 && alpha <= 0.5)) {
    throw UsageError(fmt::format("--alpha {} must be above 0 and at most 0.5", alpha));
  }
  return alpha;
}

constexpr EnumRow<Verdict> kVerdicts[] = {{Verdict::kRegression, "regression"},
                                          {Verdict::kImprovement, "improvement"},
                                          {Verdict::kSame, "same"},
                                          {Verdict::kInconclusive, "inconclusive"},
                                          {Verdict::kNotComparable, "not comparable"}};
std::string_view verdictName(Verdict v) { return enumName(kVerdicts, v); }

constexpr EnumRow<GateOutcome> kGateOutcomes[] = {
    {GateOutcome::kPass, "pass"},
    {GateOutcome::kRegression, "regression"},
    {GateOutcome::kInconclusive, "inconclusive"},
    {GateOutcome::kNothingComparable, "nothing comparable"}};
std::string_view gateOutcomeName(GateOutcome o) { return enumName(kGateOutcomes, o); }

int Comparison::count(Verdict v) const {
  return static_cast<int>(
      std::count_if(cases.begin(), cases.end(), [&](const auto& c) { return c.verdict == v; }));
}

// ---- run-level statistics ----

namespace {

// The regularized incomplete beta function I_x(a, b) by its continued fraction (modified
// Lentz), on the side where the fraction converges fast.
double incompleteBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - incompleteBeta(b, a, 1 - x);
  const double logFront =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  constexpr double kTiny = 1e-300, kEps = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 500; ++m) {
    const double mm = m;
    // Even step, then odd step of the fraction.
    double num = mm * (b - mm) * x / ((a + 2 * mm - 1) * (a + 2 * mm));
    d = 1 + num * d;
    c = 1 + num / c;
    d = 1 / (std::abs(d) < kTiny ? kTiny : d);
    c = std::abs(c) < kTiny ? kTiny : c;
    h *= d * c;
    num = -(a + mm) * (a + b + mm) * x / ((a + 2 * mm) * (a + 2 * mm + 1));
    d = 1 + num * d;
    c = 1 + num / c;
    d = 1 / (std::abs(d) < kTiny ? kTiny : d);
    c = std::abs(c) < kTiny ? kTiny : c;
    double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1) < kEps) break;
  }
  return std::exp(logFront) * h / a;
}

double mean(std::span<const double> v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double sumSquares(std::span<const double> v) {
  double m = mean(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s;
}

}  // namespace

double studentTTwoSidedP(double t, double df) {
  if (!(df > 0)) throw InternalError("studentTTwoSidedP: df must be positive");
  if (std::isnan(t)) return 1;
  if (std::isinf(t)) return 0;
  return std::clamp(incompleteBeta(df / 2, 0.5, df / (df + t * t)), 0.0, 1.0);
}

double fUpperP(double f, double df1, double df2) {
  if (!(f > 0)) return 1;
  return std::clamp(incompleteBeta(df2 / 2, df1 / 2, df2 / (df2 + df1 * f)), 0.0, 1.0);
}

double studentTCritical(double p, double df) {
  if (!(p > 0 && p <= 1)) throw InternalError("studentTCritical: p must be in (0, 1]");
  // The two-sided p falls as t grows: bisect on t (in a bracket that always holds p).
  double lo = 0, hi = 1;
  while (studentTTwoSidedP(hi, df) > p && hi < 1e12) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    double mid = (lo + hi) / 2;
    (studentTTwoSidedP(mid, df) > p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

TTest studentT(std::span<const double> a, std::span<const double> b) {
  return studentT(a, b, NoiseSums{});
}

TTest studentT(std::span<const double> a, std::span<const double> b, const NoiseSums& extra) {
  TTest r;
  r.n1 = static_cast<int>(a.size());
  r.n2 = static_cast<int>(b.size());
  if (a.empty() || b.empty()) return r;
  r.diff = mean(b) - mean(a);
  r.df = r.n1 + r.n2 - 2 + extra.df;
  if (r.df < 1) return r;
  r.valid = true;
  r.sd = std::sqrt((sumSquares(a) + sumSquares(b) + extra.ss) / r.df);
  double se = r.sd * std::sqrt(1.0 / r.n1 + 1.0 / r.n2);
  if (!(se > 0)) {
    r.pValue = r.diff == 0 ? 1 : 0;  // no spread at all: any difference is certain
    return r;
  }
  r.pValue = studentTTwoSidedP(r.diff / se, r.df);
  return r;
}

double minDetectableDiff(double sd, int n1, int n2, double alpha, double power, double extraDf) {
  const double df = n1 + n2 - 2 + extraDf;
  if (n1 < 1 || n2 < 1 || df < 1) return std::numeric_limits<double>::infinity();
  // Two-sided critical value plus the one-sided quantile of the power (the textbook formula,
  // with t instead of z so small replicate counts pay their price).
  double t = studentTCritical(alpha, df) + studentTCritical(2 * (1 - power), df);
  return t * sd * std::sqrt(1.0 / n1 + 1.0 / n2);
}

bool descheduledPoint(std::span<const double> samples, double quantile) {
  if (samples.size() < 2) return false;
  const double fastest = *std::min_element(samples.begin(), samples.end());
  return fastest > 0 && percentile(samples, quantile) > kDescheduledRatio * fastest;
}

Undisturbed setAsideDisturbed(std::span<const double> a, std::span<const double> b,
                              std::span<const double> stored) {
  std::vector<double> dev;
  double mid[2] = {0, 0};
  for (int s = 0; s < 2; ++s) {
    std::span<const double> side = s == 0 ? a : b;
    if (side.empty()) continue;
    mid[s] = percentile(side, 0.5);
    for (double x : side) dev.push_back(std::abs(x - mid[s]));
  }
  Undisturbed u;
  dev.insert(dev.end(), stored.begin(), stored.end());
  const double scale = dev.empty() ? 0 : 1.482602218505602 * percentile(dev, 0.5);
  auto far = [&](double x, int s) { return std::abs(x - mid[s]) / scale > kDisturbedZ; };
  for (int s = 0; s < 2; ++s) {
    for (double x : s == 0 ? a : b) {
      // No spread at all (half the values equal): nothing can be told disturbed. Nor on a side
      // of two runs: both lie as far from their median, and which one was disturbed is unknown
      // (a side's run left out for its placement left two, both set aside, nothing tested).
      const bool out = scale > 0 && (s == 0 ? a : b).size() >= 3 && far(x, s);
      // A value set aside on one side that sits by the other side's median means the runs fall
      // in two groups (a busy machine's two modes) and the sides' medians in different ones:
      // setting aside would compare mode with mode. Keep everything; the spread then shows.
      if (out && !a.empty() && !b.empty() && !far(x, 1 - s)) {
        Undisturbed all{{a.begin(), a.end()}, {b.begin(), b.end()}};
        all.twoGroups = true;
        return all;
      }
      if (!out) (s == 0 ? u.a : u.b).push_back(x);
      (s == 0 ? u.setAsideA : u.setAsideB) += out;
    }
  }
  return u;
}

int runsNeeded(double sd, double target, double alpha, double power, double extraDf) {
  if (!(sd > 0)) return 0;
  auto reaches = [&](int n) {
    return minDetectableDiff(sd, n, n, alpha, power, extraDf) <= target;
  };
  if (!reaches(kRunsNeededCap)) return kRunsNeededCap + 1;
  // The detectable change falls as n grows: bisect for the first n that reaches the target.
  int lo = 1, hi = kRunsNeededCap;  // reaches(hi); lo does not (n = 1 tests nothing)
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    (reaches(mid) ? hi : lo) = mid;
  }
  return hi;
}

namespace {

std::map<int, std::vector<double>> byGroup(std::span<const GroupedValue> values) {
  std::map<int, std::vector<double>> groups;
  for (const GroupedValue& v : values) groups[v.group].push_back(v.value);
  return groups;
}

// Distances from the group medians (a disturbed run must not move its own reference), of every
// group of 2 or more.
std::vector<double> deviationsFromMedians(const std::map<int, std::vector<double>>& groups) {
  std::vector<double> dev;
  for (const auto& [g, xs] : groups) {
    if (xs.size() < 2) continue;
    const double mid = percentile(xs, 0.5);
    for (double x : xs) dev.push_back(std::abs(x - mid));
  }
  return dev;
}

}  // namespace

std::vector<double> storedDeviations(std::span<const GroupedValue> values) {
  return deviationsFromMedians(byGroup(values));
}

NoiseSums withinGroupNoise(std::span<const GroupedValue> values) {
  const std::map<int, std::vector<double>> groups = byGroup(values);
  // The deviations pooled into one robust scale.
  const std::vector<double> dev = deviationsFromMedians(groups);
  NoiseSums out;
  if (dev.empty()) return out;
  const double scale = 1.482602218505602 * percentile(dev, 0.5);
  for (const auto& [g, xs] : groups) {
    if (xs.size() < 2) continue;
    const double mid = percentile(xs, 0.5);
    std::vector<double> kept;
    for (double x : xs) {
      if (!(scale > 0) || std::abs(x - mid) / scale <= kDisturbedZ) kept.push_back(x);
    }
    if (kept.size() < 2) continue;
    out.ss += sumSquares(kept);
    out.df += static_cast<double>(kept.size() - 1);
  }
  return out;
}

BuildsSpread buildsSpread(std::span<const GroupedValue> values) {
  std::map<int, std::vector<double>> builds;
  for (const GroupedValue& v : values) {
    if (v.group >= 0) builds[v.group].push_back(v.value);
  }
  BuildsSpread out;
  if (static_cast<int>(builds.size()) < kBuildsSpreadMin) return out;
  std::vector<double> means;
  for (const auto& [group, xs] : builds) means.push_back(mean(xs));
  // The plain variance, not a robust one: lasting states split builds into two groups, which a
  // robust scale takes for outliers (a 7-to-5 split of 12 builds gave a MAD near 0). The part
  // of it that is the runs' own noise is kept: a conservative test, not a sharper one.
  out.known = true;
  out.var = sumSquares(means) / static_cast<double>(means.size() - 1);
  out.df = static_cast<double>(means.size() - 1);
  return out;
}

Modes findModes(std::span<const GroupedValue> values, double minGap) {
  Modes best;
  const size_t n = values.size();
  if (n < 4) return best;
  std::vector<GroupedValue> v(values.begin(), values.end());
  std::sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.value < y.value; });
  // The split with the least within-cluster sum of squares (1-D 2-means, exact by scanning).
  std::vector<double> sorted;
  for (const GroupedValue& g : v) sorted.push_back(g.value);
  double bestSs = std::numeric_limits<double>::infinity();
  size_t split = 0;
  for (size_t k = 2; k + 2 <= n; ++k) {
    std::span<const double> lo(sorted.data(), k), hi(sorted.data() + k, n - k);
    const double ss = sumSquares(lo) + sumSquares(hi);
    if (ss < bestSs) {
      bestSs = ss;
      split = k;
    }
  }
  if (split == 0) return best;
  std::span<const double> lo(sorted.data(), split), hi(sorted.data() + split, n - split);
  const double gap = mean(hi) - mean(lo);
  const double within = std::sqrt(bestSs / static_cast<double>(n - 2));
  if (!(gap >= minGap) || !(gap >= kModeSeparation * within)) return best;
  // Modes, not builds: one of the comparison's sides (negative groups) landed in both, or enough
  // stored builds did (kModeBuildsWithHistory, and kModeBuildsShare of them). In a window of a
  // dozen builds, a run of one or two builds pushed across by a busy moment is chance, and the
  // regressions kept in the window then looked like a second mode of the machine (issue 26's
  // protocol under a compile: 18 of 60 slowdowns called "two modes" with one stored build
  // enough, 0 of 60 with this rule). A machine in modes puts most builds in both.
  std::map<int, std::pair<bool, bool>> seen;
  for (size_t i = 0; i < n; ++i)
    (i < split ? seen[v[i].group].first : seen[v[i].group].second) = true;
  int sides = 0, stored = 0, storedBuilds = 0;
  for (const auto& [group, where] : seen) {
    storedBuilds += group >= 0;
    if (where.first && where.second) ++(group < 0 ? sides : stored);
  }
  // A window of kModeBuildsAlone stored builds or more judges modes by its builds alone: one of
  // the sides' few runs across the gap is then a disturbed run (issue 26's protocol: a baseline
  // run 0.15 above its two siblings, beside the window's regressed builds, made two 30%
  // slowdowns "two modes" in one round of ten).
  if (storedBuilds >= kModeBuildsAlone) sides = 0;
  const int need = std::max(kModeBuildsWithHistory,
                            static_cast<int>(std::ceil(kModeBuildsShare * storedBuilds)));
  if (sides == 0 && stored < need) return best;
  best.found = true;
  best.cut = (sorted[split - 1] + sorted[split]) / 2;
  best.low = mean(lo);
  best.high = mean(hi);
  best.nLow = static_cast<int>(split);
  best.nHigh = static_cast<int>(n - split);
  return best;
}

bool busbwByAlgbw(const ResultRecord& r) { return r.busbw == 0.0 && r.algbw > 0.0; }

// ---- comparing runs ----

namespace {

bool isOk(const ResultRecord* r) { return r->status == ResultStatus::kOk && r->wrong <= 0; }

bool usesAlgbw(const ResultRecord& r, Metric metric) {
  return metric == Metric::kBusbw && busbwByAlgbw(r);
}

// The value of the metric for one result: the `quantile` of its iterations (--run-value; 0 the
// fastest) when samples were kept, else the reported value (imports). busbw is proportional to 1 /
// time for a given case, scaled so the reported time maps to the reported busbw. nullopt when the
// metric is unknown.
std::optional<double> metricValue(const ResultRecord& r, Metric metric, double quantile) {
  double t = r.samplesUs.empty() ? r.timeUs : percentile(r.samplesUs, quantile);
  if (metric == Metric::kTime) {
    return t > 0 && std::isfinite(t) ? std::optional<double>(t) : std::nullopt;
  }
  // One rank has no busbw: nccl-tests' factors (2(n-1)/n, (n-1)/n) are 0 there. Its algbw, the
  // same 1 / time scaled by the case's bytes, stands in, so a one-GPU runner's gate tests cases.
  std::optional<double> bw = r.busbw;
  if (usesAlgbw(r, metric)) bw = r.algbw;
  if (!(bw > 0) || !std::isfinite(*bw)) return std::nullopt;
  if (r.samplesUs.empty() || !(r.timeUs > 0) || !(t > 0)) return bw;
  return *bw * r.timeUs / t;
}

// log of a value, signed so that larger is worse.
double worseLog(double value, Metric metric) {
  return metric == Metric::kTime ? std::log(value) : -std::log(value);
}
double pctOfLog(double d) { return std::expm1(d) * 100; }
// Three significant digits: modes of 0.0123 GB/s and of 123 us alike.
std::string modeText(double v) { return fmt::format("{:.3g}", v); }

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
        std::string parts = fingerprintDifference(b.environmentJson, c.environmentJson);
        if (!parts.empty()) detail += " (" + parts + ")";
      }
      differ = true;
    }
  }
  if (differ) return {true, fmt::format("environment fingerprints differ: {}", detail)};
  if (unknown) return {false, "environment fingerprints unknown (imported runs): compared as is"};
  return {false, ""};
}

// A replicate: one run, or one cycle of a -N sweep (the k-th result of a case in its run).
using ReplicateId = std::pair<int64_t, int>;

// log values (larger = worse) of every case, per replicate, one side.
struct SideValues {
  std::map<ReplicateId, std::map<CaseKey, double>> byReplicate;
  bool anySamples = false;
  int descheduled = 0;                           // points set aside by descheduledPoint
  std::map<CaseKey, int> descheduledOf, keptOf;  // per case, points set aside and kept
};

double fastest(const ResultRecord& r) {
  return *std::min_element(r.samplesUs.begin(), r.samplesUs.end());
}

SideValues collect(const RunSet& set, const CompareOptions& o, const std::set<CaseKey>& keep) {
  SideValues out;
  // Each case's fastest iteration in every run of this set: a point whose own fastest is
  // kDescheduledRatio times the runs' median waited for a CPU in every call, its fastest
  // included, which descheduledPoint cannot see (beside a compile taking 1.7 of 2 CPUs: a 256K
  // point's fastest of 30 at 1063 us, 10 us in the side's other runs; a same-build gate read it
  // as a 90% regression, issue 26's round 35). A slower build moves every run's fastest alike.
  std::map<CaseKey, std::vector<double>> fastestOf;
  for (const ResultRecord& r : set.results) {
    if (isOk(&r) && !r.samplesUs.empty()) fastestOf[CaseKey::of(r)].push_back(fastest(r));
  }
  std::map<CaseKey, double> medianFastest;  // of cases measured by 3 runs or more
  for (const auto& [key, all] : fastestOf) {
    if (all.size() >= 3) medianFastest[key] = percentile(all, 0.5);
  }
  // A whole run that far is a state of the machine, which the run's level and the modes judge
  // (a baseline run 100x slower as a whole is evidence the machine goes there): only points far
  // while most of their run is not are left out.
  std::vector<bool> far(set.results.size(), false);
  std::map<int64_t, std::pair<int, int>> farInRun;  // run id: points far, points
  for (size_t i = 0; i < set.results.size(); ++i) {
    const ResultRecord& r = set.results[i];
    if (!isOk(&r) || r.samplesUs.empty()) continue;
    auto mid = medianFastest.find(CaseKey::of(r));
    far[i] = mid != medianFastest.end() && fastest(r) > kDescheduledRatio * mid->second;
    farInRun[r.runId].first += far[i];
    ++farInRun[r.runId].second;
  }
  auto waitedThroughout = [&](size_t i) {
    const auto& [farPoints, points] = farInRun[set.results[i].runId];
    return far[i] && 2 * farPoints < points;
  };
  std::map<std::pair<int64_t, CaseKey>, int> seen;
  for (size_t i = 0; i < set.results.size(); ++i) {
    const ResultRecord& r = set.results[i];
    CaseKey key = CaseKey::of(r);
    int cycle = seen[{r.runId, key}]++;
    out.anySamples = out.anySamples || !r.samplesUs.empty();
    if (!keep.contains(key) || !isOk(&r)) continue;
    if (descheduledPoint(r.samplesUs, o.runQuantile) || waitedThroughout(i)) {
      ++out.descheduled;  // its value is the scheduler's, not the code's: no replicate here
      ++out.descheduledOf[key];
      continue;
    }
    ++out.keptOf[key];
    if (auto v = metricValue(r, o.metric, o.runQuantile)) {
      out.byReplicate[{r.runId, cycle}][key] = worseLog(*v, o.metric);
    }
  }
  return out;
}

// Cases whose points waited for a CPU (descheduledPoint) in most runs of a side: the few kept
// ones waited too, only less than 4x their fastest iteration, which had waited as well (a
// compile took 1.7 of 2 CPUs: every iteration of a 1 MiB point at 1.1-7 ms, 15-100x its time).
// Their values are the scheduler's: such a case is not tested and says why (its kept values
// still count in their runs' levels, as every case's do).
std::map<CaseKey, std::string> mostlyDescheduled(const SideValues& base, const SideValues& cand) {
  std::map<CaseKey, std::string> out;
  for (auto [side, name] : {std::pair{&base, "baseline"}, std::pair{&cand, "candidate"}}) {
    for (const auto& [key, n] : side->descheduledOf) {
      const int kept = side->keptOf.contains(key) ? side->keptOf.at(key) : 0;
      if (n > kept && !out.contains(key)) {
        out[key] =
            fmt::format("most points waited for a CPU: {} of the {}'s {} runs", n, name, n + kept);
      }
    }
  }
  return out;
}

// Each replicate's level: the median over its cases of (value - the case's mean over every
// replicate of both sides). Cases measured by one replicate only carry no information.
std::map<ReplicateId, double> levels(const SideValues& base, const SideValues& cand,
                                     std::map<CaseKey, double>& caseMean) {
  std::map<CaseKey, std::pair<double, int>> sums;
  for (const SideValues* side : {&base, &cand}) {
    for (const auto& [id, values] : side->byReplicate) {
      for (const auto& [key, y] : values) {
        sums[key].first += y;
        ++sums[key].second;
      }
    }
  }
  caseMean.clear();
  for (const auto& [key, s] : sums) caseMean[key] = s.first / s.second;
  std::map<ReplicateId, double> out;
  for (const SideValues* side : {&base, &cand}) {
    for (const auto& [id, values] : side->byReplicate) {
      std::vector<double> dev;
      for (const auto& [key, y] : values) dev.push_back(y - caseMean[key]);
      if (!dev.empty()) out[id] = medianOf(dev);
    }
  }
  return out;
}

// What the stored runs say about one test: their values (grouped by build) and noise learned by
// an earlier calibration.
struct Evidence {
  std::vector<GroupedValue> history;
  NoiseSums learned;
  // The two sides' runs alternate in time (sidesInterleaved): a state of the machine that lasts
  // would have caught baseline runs too, so the candidate's runs sitting together in a mode the
  // baseline rarely visits can be told from chance (modeVisitChance).
  bool interleaved = false;
  // Set for a case's test as measured (rule 5c): the spread of the stored builds' means.
  BuildsSpread builds;
};

// Group ids of the comparison's own sides in findModes (history groups are >= 0).
constexpr int kBaseGroup = -1, kCandGroup = -2;

// Modes of a quantity over the comparison and its history; `minGap` in log.
Modes modesOf(std::span<const double> base, std::span<const double> cand, const Evidence& e,
              double minGap) {
  std::vector<GroupedValue> all(e.history.begin(), e.history.end());
  for (double x : base) all.push_back({kBaseGroup, x});
  for (double x : cand) all.push_back({kCandGroup, x});
  return findModes(all, minGap);
}

}  // namespace

double modeVisitChance(int k, int n, int m, int total) {
  if (k <= 0) return 1;
  if (k > n) return 0;
  // Laplace's rule of succession: a mode never seen in `total` runs still has some chance.
  const double p = (m + 1.0) / (total + 2.0);
  double tail = 0;
  for (int j = k; j <= n; ++j) {
    tail += std::exp(std::lgamma(n + 1.0) - std::lgamma(j + 1.0) - std::lgamma(n - j + 1.0) +
                     j * std::log(p) + (n - j) * std::log1p(-p));
  }
  return std::min(1.0, tail);
}

bool sidesInterleaved(std::span<const RunRecord> base, std::span<const RunRecord> cand) {
  if (base.empty() || cand.empty()) return false;
  // Run ids are the database's insertion order: the order the runs were taken in.
  std::vector<std::pair<int64_t, bool>> order;
  for (const RunRecord& r : base) order.push_back({r.id, false});
  for (const RunRecord& r : cand) order.push_back({r.id, true});
  std::sort(order.begin(), order.end());
  int changes = 0;
  for (size_t i = 1; i < order.size(); ++i) changes += order[i].second != order[i - 1].second;
  // The shorter side alternates with the other throughout: b c b c b c, c b c b c b, b c b c b.
  const int shorter = static_cast<int>(std::min(base.size(), cand.size()));
  return changes >= 2 * shorter - 1 && shorter >= 2;
}

namespace {

// Fills a LevelTest from the two sides' values (log, larger is worse) and the stored runs'.
void runTest(LevelTest& t, std::span<const double> baseIn, std::span<const double> cand,
             double alpha, const CompareOptions& o, const Evidence& e = {}) {
  // Two modes: when both sides sit mostly in one (their medians do), they are compared there,
  // with the noise of the stored runs in that mode (a side's few runs in the other mode are set
  // aside as disturbed, below). When the sides' medians sit in different modes, the change may be
  // a switch between them, and the test is inconclusive, unless the runs were interleaved and the
  // same build (baseline and stored runs) visits the candidate's mode so rarely that the
  // candidate's runs landing there together is not chance (modeVisitChance below alpha): then it
  // is a change, and the baseline's few runs in that mode were disturbed ones. Without
  // interleaving, a machine state that lasted through the candidate's runs explains them as well.
  std::vector<double> base(baseIn.begin(), baseIn.end());
  int setAsideAsRare = 0;
  std::vector<GroupedValue> history = e.history;
  const Modes modes = modesOf(base, cand, e, std::log1p(o.threshold));
  if (modes.found && !base.empty() && !cand.empty()) {
    auto low = [&](double x) { return x <= modes.cut; };
    // A side sits in the mode most of its runs are in; one split evenly sits in neither (the
    // median of 2 runs, one in each, is a value between the modes that none of its runs had).
    auto lowRuns = [&](std::span<const double> xs) {
      return static_cast<int>(std::count_if(xs.begin(), xs.end(), low));
    };
    const int baseLowRuns = lowRuns(base), candLowRuns = lowRuns(cand);
    const bool split = 2 * baseLowRuns == static_cast<int>(base.size()) ||
                       2 * candLowRuns == static_cast<int>(cand.size());
    const bool baseLow = 2 * baseLowRuns > static_cast<int>(base.size());
    const bool candLow = 2 * candLowRuns > static_cast<int>(cand.size());
    bool compareInBaseMode = baseLow == candLow && !split;
    if (!compareInBaseMode && !split && e.interleaved) {
      auto inCandMode = [&](double x) { return low(x) == candLow; };
      const int k = static_cast<int>(std::count_if(cand.begin(), cand.end(), inCandMode));
      int m = static_cast<int>(std::count_if(base.begin(), base.end(), inCandMode));
      for (const GroupedValue& g : history) m += inCandMode(g.value);
      const int total = static_cast<int>(base.size() + history.size());
      t.modeVisitChance = modeVisitChance(k, static_cast<int>(cand.size()), m, total);
      if (t.modeVisitChance < alpha) {
        compareInBaseMode = true;
        setAsideAsRare = static_cast<int>(std::erase_if(base, inCandMode));
      }
    }
    if (!compareInBaseMode) {
      t.modal = true;
      t.modeGapPct = pctOfLog(modes.high - modes.low);
    }
    if (compareInBaseMode) {
      std::erase_if(history, [&](const GroupedValue& g) { return low(g.value) != baseLow; });
    }
  }
  NoiseSums extra = withinGroupNoise(history);
  extra += e.learned;
  Undisturbed u = setAsideDisturbed(base, cand);
  // The window's noise joins only when the sides' own spread is not clearly larger (an F test
  // at kPoolingAlpha): runs that spread more than the window's did were taken in another state of
  // the machine (a compile's phase beside them), and pooling them with quieter runs made a batch
  // shift of 7-10% look certain.
  auto spreadsMore = [&](const Undisturbed& x) {
    const TTest own = studentT(x.a, x.b, NoiseSums{});
    return own.valid &&
           fUpperP(own.sd * own.sd / (extra.ss / extra.df), own.df, extra.df) < kPoolingAlpha;
  };
  if (extra.df > 0 && extra.ss > 0) {
    // The window's spread also scales what is disturbed: with 3 runs a side the sides' own
    // scale is the mean of two deviations (two of the six are the medians' own 0), so one side
    // agreeing within 0.3% by chance made the other's ordinary spread "disturbed", and one run
    // far from its siblings inflated the scale that should have found it. On that scale a side
    // may lose one run; more than one far away is a state of the machine the window did not see.
    const Undisturbed pooled = setAsideDisturbed(base, cand, storedDeviations(history));
    if (pooled.setAsideA <= 1 && pooled.setAsideB <= 1 && !spreadsMore(pooled)) {
      u = pooled;
    } else if (spreadsMore(u)) {
      extra = NoiseSums{};
    }
  }
  u.setAsideA += setAsideAsRare;
  t.setAsideBase = u.setAsideA;
  t.setAsideCand = u.setAsideB;
  t.twoGroups = u.twoGroups;
  t.historyDf = extra.df;
  TTest r = studentT(u.a, u.b, extra);
  t.worsePct = pctOfLog(r.diff);
  t.changePct = o.metric == Metric::kTime ? t.worsePct : pctOfLog(-r.diff);
  t.alphaUsed = alpha;
  if (!r.valid || u.a.empty() || u.b.empty()) return;
  t.tested = true;
  t.pValue = t.adjustedP = r.pValue;
  if (e.builds.known) {
    // The two sides are two builds: each mean carries its build's share of the builds' spread
    // besides its runs' noise. Welch-Satterthwaite degrees of freedom for the sum of the two.
    const double runs = r.sd * r.sd * (1.0 / r.n1 + 1.0 / r.n2), builds = 2 * e.builds.var;
    const double se = std::sqrt(runs + builds);
    if (!(se > 0)) return;  // no spread at all: the plain test above stands
    const double df = builds > 0 ? (runs + builds) * (runs + builds) /
                                       (runs * runs / r.df + builds * builds / e.builds.df)
                                 : r.df;
    t.pValue = t.adjustedP = studentTTwoSidedP(r.diff / se, df);
    // More runs do not shrink the builds' share: no runs-needed figure for this test.
    t.mdcPct =
        pctOfLog((studentTCritical(alpha, df) + studentTCritical(2 * (1 - o.power), df)) * se);
    return;
  }
  const double target = std::log1p(o.threshold);
  double mdc = minDetectableDiff(r.sd, r.n1, r.n2, alpha, o.power, extra.df);
  t.mdcPct = pctOfLog(mdc);
  t.runsNeeded = mdc > target ? runsNeeded(r.sd, target, alpha, o.power, extra.df) : 0;
  // Runs set aside now will be set aside then: ask for enough that the kept ones suffice.
  const double kept = static_cast<double>(u.a.size() + u.b.size()) /
                      static_cast<double>(baseIn.size() + cand.size());
  if (t.runsNeeded > 0 && t.runsNeeded <= kRunsNeededCap && kept < 1) {
    t.runsNeeded = std::min(kRunsNeededCap + 1, static_cast<int>(std::ceil(t.runsNeeded / kept)));
  }
}

// The verdict of a tested level once its adjusted p is known.
void decide(LevelTest& t, double threshold, double alpha) {
  if (!t.tested || t.modal) {
    t.verdict = Verdict::kInconclusive;
    return;
  }
  const bool significant = t.adjustedP < alpha;
  // The threshold is the change the gate must be able to see (the MDC target); a significant
  // change is flagged from half of it, so one of the threshold is found with the stated power
  // while the tiny but significant shifts of many quiet runs never fail a build.
  const double thresholdPct = threshold * 100 / 2;
  // Improvement measured on the same log scale: 1 / (1 + worse) - 1 beyond the threshold.
  const double betterPct = (1 / (1 + t.worsePct / 100) - 1) * 100;
  if (significant && t.worsePct > thresholdPct) {
    t.verdict = Verdict::kRegression;
  } else if (significant && betterPct > thresholdPct) {
    t.verdict = Verdict::kImprovement;
  } else if (t.mdcPct > threshold * 100) {
    t.verdict = Verdict::kInconclusive;
  } else {
    t.verdict = Verdict::kSame;
  }
}

// ---- compareRuns, stage by stage ----

// A case's results on each side.
struct CaseSides {
  std::vector<const ResultRecord*> base, cand;
};

// Judges a case that failed or broke on a side: not comparable, or a regression when the
// candidate broke where the baseline worked. False when the case is left to the tests.
bool judgeFailures(CaseComparison& c, const CaseSides& s, bool blocked) {
  const bool baseFine = std::any_of(s.base.begin(), s.base.end(), isOk);
  const ResultRecord* broken = nullptr;
  for (const ResultRecord* r : s.cand) {
    if (r->status == ResultStatus::kFailed || r->wrong > 0) broken = broken ? broken : r;
  }
  if (blocked) {
    c.verdict = Verdict::kNotComparable;
    c.note = "environment fingerprints differ";  // the full line is environmentNote
  } else if (baseFine && broken) {
    // A candidate that breaks where the baseline worked is a regression whatever the timing.
    c.verdict = Verdict::kRegression;
    c.failed = true;
    c.note = broken->wrong > 0
                 ? fmt::format("candidate computed {} wrong element(s)", *broken->wrong)
                 : fmt::format("candidate failed{}{}", broken->message.empty() ? "" : ": ",
                               broken->message);
  } else if (!baseFine || std::none_of(s.cand.begin(), s.cand.end(), isOk)) {
    const ResultRecord* bad = baseFine ? s.cand.front() : s.base.front();
    c.verdict = Verdict::kNotComparable;
    std::string what = bad->wrong > 0 ? fmt::format("{} wrong element(s)", *bad->wrong)
                                      : std::string(resultStatusName(bad->status));
    c.note = fmt::format("{} {}{}{}", baseFine ? "candidate" : "baseline", what,
                         bad->message.empty() ? "" : ": ", bad->message);
  } else {
    return false;
  }
  return true;
}

// Pairs the cases of the two sides: those outside --sizes, measured by one side only or by
// neither are counted; the others become out.cases, failures judged. Returns the cases to test.
std::set<CaseKey> pairCases(const RunSet& base, const RunSet& cand, const CompareOptions& o,
                            bool blocked, Comparison& out) {
  std::map<CaseKey, CaseSides> sides;
  for (const ResultRecord& r : base.results) sides[CaseKey::of(r)].base.push_back(&r);
  for (const ResultRecord& r : cand.results) sides[CaseKey::of(r)].cand.push_back(&r);
  std::set<CaseKey> testable;
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
    auto ok = [](const ResultRecord* r) { return r->status == ResultStatus::kOk; };
    if (std::none_of(s.base.begin(), s.base.end(), ok) &&
        std::none_of(s.cand.begin(), s.cand.end(), ok)) {
      ++out.skipped;  // unsupported (or failed) on both sides: nothing to say
      continue;
    }
    CaseComparison c;
    c.key = key;
    if (!judgeFailures(c, s, blocked)) testable.insert(key);
    out.cases.push_back(std::move(c));
  }
  return testable;
}

// One case's values on each side, and the same net of their replicate's level.
struct CaseData {
  std::vector<double> base, cand, baseNet, candNet;
};

// A stored run of the lookback window, on the comparison's scale.
struct HistoryRun {
  int group = 0;
  double level = 0;
  std::map<CaseKey, double> y, net;
};

// What the stages of compareRuns share: the sides' values, their levels and the stored runs.
struct CompareWork {
  std::set<CaseKey> testable;
  SideValues bv, cv;
  std::map<CaseKey, double> caseMean;
  std::map<ReplicateId, double> level;
  std::map<CaseKey, CaseData> data;
  std::vector<HistoryRun> hist;
  std::vector<const LearnedNoise*> learned;  // calibrations of the same --run-value
  bool interleaved = false;
  std::map<CaseKey, std::string> scheduled;  // cases left out (mostlyDescheduled), with why
};

std::map<CaseKey, CaseData> caseData(CompareWork& w) {
  std::map<CaseKey, CaseData> data;
  auto gather = [&](const SideValues& side, bool isBase) {
    for (const auto& [id, values] : side.byReplicate) {
      for (const auto& [key, y] : values) {
        CaseData& d = data[key];
        (isBase ? d.base : d.cand).push_back(y);
        (isBase ? d.baseNet : d.candNet).push_back(y - w.level[id]);
      }
    }
  };
  gather(w.bv, true);
  gather(w.cv, false);
  return data;
}

// The stored runs of the lookback window: each one's level and net values against the same
// case means, so they lie on the comparison's scale; grouped by label (one build each).
std::vector<HistoryRun> historyRuns(const RunSet& runs, const CompareOptions& o,
                                    const std::set<CaseKey>& testable,
                                    const std::map<CaseKey, double>& caseMean) {
  std::vector<HistoryRun> hist;
  std::map<int64_t, int> groupOf;
  std::map<std::string, int> labelGroup;
  int next = 0;
  for (const RunRecord& r : runs.runs) {
    if (r.status != RunStatus::kOk) continue;
    if (r.label.empty()) {
      groupOf[r.id] = next++;
    } else {
      auto [it, fresh] = labelGroup.try_emplace(r.label, next);
      next += fresh;
      groupOf[r.id] = it->second;
    }
  }
  SideValues hv = collect(runs, o, testable);
  for (const auto& [id, values] : hv.byReplicate) {
    if (!groupOf.contains(id.first)) continue;
    HistoryRun h;
    h.group = groupOf[id.first];
    std::vector<double> dev;
    for (const auto& [key, y] : values) {
      if (caseMean.contains(key)) dev.push_back(y - caseMean.at(key));
    }
    if (dev.empty()) continue;
    h.level = medianOf(dev);
    h.y = values;
    for (const auto& [key, y] : values) h.net[key] = y - h.level;
    hist.push_back(std::move(h));
  }
  return hist;
}

std::vector<const LearnedNoise*> learnedFor(const History& history, const CompareOptions& o) {
  std::vector<const LearnedNoise*> learned;
  for (const LearnedNoise& l : history.learned) {
    if (std::abs(l.runQuantile - o.runQuantile) < 1e-9) learned.push_back(&l);
  }
  return learned;
}

Evidence caseEvidence(const CompareWork& w, const CaseKey& key) {
  Evidence e;
  e.interleaved = w.interleaved;
  for (const HistoryRun& h : w.hist) {
    if (auto it = h.net.find(key); it != h.net.end()) e.history.push_back({h.group, it->second});
  }
  for (const LearnedNoise* l : w.learned) {
    if (auto it = l->cases.find(key.toString()); it != l->cases.end()) e.learned += it->second;
  }
  return e;
}

// A case's values as measured in the stored runs, and how their builds' means spread (rule 5c).
Evidence asMeasuredEvidence(const CompareWork& w, const CaseKey& key) {
  Evidence e;
  e.interleaved = w.interleaved;
  std::vector<GroupedValue> net;
  for (const HistoryRun& h : w.hist) {
    if (auto it = h.y.find(key); it != h.y.end()) e.history.push_back({h.group, it->second});
    if (auto it = h.net.find(key); it != h.net.end()) net.push_back({h.group, it->second});
  }
  e.builds = buildsSpread(net);
  return e;
}

// Which levels are tested and at which alpha.
struct TestPlan {
  bool enough = false;  // replicates enough for any test
  bool testCases = false, testSeries = false;
  std::map<CaseKey, int> seriesCases;      // per series, its cases with values on both sides
  std::map<CaseKey, Evidence> asMeasured;  // cases also tested as measured (rule 5c), with theirs
  double alphaWhole = 0, alphaConfined = 0;
  double alphaOneConfined = 0;  // the MDC of a confined test: Holm's strictest step
};

TestPlan planTests(const Comparison& out, const CompareWork& w, const CompareOptions& o) {
  TestPlan p;
  const int total = out.baseReplicates + out.candReplicates;
  p.enough = out.baseReplicates >= 1 && out.candReplicates >= 1 && total >= 4;
  // Which levels are tested: confined tests need something to be confined against.
  for (const auto& [key, d] : w.data) {
    if (!d.base.empty() && !d.cand.empty()) ++p.seriesCases[key.series()];
  }
  int dataCases = 0;
  for (const auto& [key, n] : p.seriesCases) dataCases += n;
  p.testCases = dataCases >= 2;
  if (p.testCases) {
    for (const auto& [key, d] : w.data) {
      if (d.base.empty() || d.cand.empty()) continue;
      if (Evidence e = asMeasuredEvidence(w, key); e.builds.known) p.asMeasured[key] = std::move(e);
    }
  }
  p.testSeries =
      p.seriesCases.size() >= 2 && std::any_of(p.seriesCases.begin(), p.seriesCases.end(),
                                               [](const auto& s) { return s.second >= 2; });
  const int confinedTests = (p.testCases ? dataCases : 0) +
                            (p.testSeries ? static_cast<int>(p.seriesCases.size()) : 0) +
                            static_cast<int>(p.asMeasured.size());
  p.alphaWhole = confinedTests > 0 ? o.alpha / 2 : o.alpha;
  p.alphaConfined = o.alpha / 2;
  // The MDC of a confined test is held to Holm's strictest step, alpha / (number of tests).
  p.alphaOneConfined = confinedTests > 0 ? p.alphaConfined / confinedTests : p.alphaConfined;
  return p;
}

void testWholeRun(Comparison& out, const CompareWork& w, const TestPlan& p,
                  const CompareOptions& o) {
  std::vector<double> b, c;
  for (const auto& [id, v] : w.level) {
    (w.bv.byReplicate.contains(id) ? b : c).push_back(v);
  }
  Evidence e;
  e.interleaved = w.interleaved;
  for (const HistoryRun& h : w.hist) e.history.push_back({h.group, h.level});
  for (const LearnedNoise* l : w.learned) e.learned += l->whole;
  if (p.enough && !w.data.empty()) runTest(out.wholeRun, b, c, p.alphaWhole, o, e);
  decide(out.wholeRun, o.threshold, p.alphaWhole);
}

// The two modes of a case its test found modal, in the metric's units: geometric means of the
// runs (its sides' and the stored ones) in each.
void caseModes(CaseComparison& c, const CaseData& d, const CompareWork& w, const Evidence& e,
               const CompareOptions& o) {
  const double sign = o.metric == Metric::kTime ? 1 : -1;
  const Modes m = modesOf(d.baseNet, d.candNet, e, std::log1p(o.threshold));
  double sum[2] = {0, 0};
  int n[2] = {0, 0};
  auto add = [&](double net, double y) {
    const int k = net <= m.cut ? 0 : 1;
    sum[k] += y;
    ++n[k];
  };
  for (size_t i = 0; i < d.base.size(); ++i) add(d.baseNet[i], d.base[i]);
  for (size_t i = 0; i < d.cand.size(); ++i) add(d.candNet[i], d.cand[i]);
  for (const HistoryRun& h : w.hist) {
    if (h.net.contains(c.key)) add(h.net.at(c.key), h.y.at(c.key));
  }
  c.modeA = std::exp(sign * sum[0] / std::max(n[0], 1));
  c.modeB = std::exp(sign * sum[1] / std::max(n[1], 1));
}

// A calibration that saw this case in two modes: a change as large as half their distance may
// be a switch between them.
void learnedModes(CaseComparison& c, const CompareWork& w, const CompareOptions& o) {
  for (const LearnedNoise* l : w.learned) {
    auto it = l->modes.find(c.key.toString());
    if (it == l->modes.end() || l->metric != metricName(o.metric)) continue;
    if (std::abs(std::log1p(c.confined.worsePct / 100)) >= it->second.gap / 2) {
      c.confined.modal = true;
      c.confined.modeGapPct = pctOfLog(it->second.gap);
      c.modeA = it->second.a;
      c.modeB = it->second.b;
    }
  }
}

// A case's values, spread and confined test; the test joins `family` (Holm's) when run.
void compareCase(CaseComparison& c, const CompareWork& w, const TestPlan& p,
                 const CompareOptions& o, std::vector<LevelTest*>& family) {
  auto it = w.data.find(c.key);
  if (!w.testable.contains(c.key) || it == w.data.end() || it->second.base.empty() ||
      it->second.cand.empty()) {
    if (w.testable.contains(c.key)) {
      c.verdict = Verdict::kInconclusive;
      auto why = w.scheduled.find(c.key);
      c.note = why != w.scheduled.end() ? why->second
                                        : fmt::format("no {} values", metricName(o.metric));
    }
    return;
  }
  const CaseData& d = it->second;
  c.baseRuns = static_cast<int>(d.base.size());
  c.candRuns = static_cast<int>(d.cand.size());
  Undisturbed u = setAsideDisturbed(d.base, d.cand);
  const double mb = mean(u.a), mc = mean(u.b);
  const double sign = o.metric == Metric::kTime ? 1 : -1;
  c.baseValue = std::exp(sign * mb);
  c.candValue = std::exp(sign * mc);
  c.worsePct = pctOfLog(mc - mb);
  c.changePct = (c.candValue / c.baseValue - 1) * 100;
  TTest spread = studentT(u.a, u.b);
  c.noisePct = spread.valid ? pctOfLog(spread.sd) : 0;
  if (auto why = w.scheduled.find(c.key); why != w.scheduled.end()) {
    c.verdict = Verdict::kInconclusive;  // caseVerdict leaves it so
    c.note = why->second;
    return;
  }
  if (p.enough && p.testCases) {
    const Evidence e = caseEvidence(w, c.key);
    runTest(c.confined, d.baseNet, d.candNet, p.alphaOneConfined, o, e);
    if (c.confined.modal) {
      caseModes(c, d, w, e, o);
    } else {
      learnedModes(c, w, o);
    }
    family.push_back(&c.confined);
    if (auto e = p.asMeasured.find(c.key); e != p.asMeasured.end()) {
      runTest(c.asMeasured, d.base, d.cand, p.alphaOneConfined, o, e->second);
      family.push_back(&c.asMeasured);
    }
  } else {
    Undisturbed net = setAsideDisturbed(d.baseNet, d.candNet);
    c.confined.worsePct = pctOfLog(mean(net.b) - mean(net.a));
  }
}

// A series' test: the mean over its sizes of the net values, per replicate.
SeriesSummary seriesTest(const CaseKey& seriesKey, int n, CompareWork& w, const Comparison& out,
                         const TestPlan& p, const CompareOptions& o) {
  SeriesSummary s;
  s.series = seriesKey;
  s.cases = n;
  std::vector<double> b, c;
  for (const SideValues* side : {&w.bv, &w.cv}) {
    for (const auto& [id, values] : side->byReplicate) {
      std::vector<double> net;
      for (const auto& [key, y] : values) {
        if (key.series() == seriesKey) net.push_back(y - w.level[id]);
      }
      if (!net.empty()) (side == &w.bv ? b : c).push_back(mean(net));
    }
  }
  Evidence e;
  for (const HistoryRun& h : w.hist) {
    std::vector<double> net;
    for (const auto& [key, y] : h.net) {
      if (key.series() == seriesKey) net.push_back(y);
    }
    if (!net.empty()) e.history.push_back({h.group, mean(net)});
  }
  for (const LearnedNoise* l : w.learned) {
    if (auto it = l->series.find(seriesKey.seriesString()); it != l->series.end()) {
      e.learned += it->second;
    }
  }
  runTest(s.confined, b, c, p.alphaOneConfined, o, e);
  // Most of its cases switching modes (seen here or by a calibration): so does the series.
  int modal = 0;
  double gap = 0;
  for (const CaseComparison& cc : out.cases) {
    if (cc.key.series() != seriesKey || !cc.confined.modal) continue;
    ++modal;
    gap = std::max(gap, cc.confined.modeGapPct);
  }
  if (!s.confined.modal && modal * 2 > n) {
    s.confined.modal = true;
    s.confined.modeGapPct = gap;
  }
  return s;
}

// Holm over every confined test, then their verdicts.
void holmAndDecide(const std::vector<LevelTest*>& family, double threshold, double alpha) {
  std::vector<double> raw;
  for (LevelTest* t : family) {
    if (t->tested) raw.push_back(t->pValue);
  }
  std::vector<double> adjusted = holmAdjust(raw);
  size_t next = 0;
  for (LevelTest* t : family) {
    if (t->tested) t->adjustedP = adjusted[next++];
    decide(*t, threshold, alpha);
  }
}

// A series worse (or better) than the rest of its run, but not beyond half the threshold itself
// (its change net of the run plus the run's own): the rest of the run moved the other way. It
// is the same: gating on it fails a steady series because the others sped up (the rule of
// caseVerdict's own test).
void onlyAgainstItsRun(LevelTest& t, const LevelTest& wholeRun, double threshold) {
  if (t.verdict != Verdict::kRegression && t.verdict != Verdict::kImprovement) return;
  const double worse = ((1 + t.worsePct / 100) * (1 + wholeRun.worsePct / 100) - 1) * 100;
  const double better = (1 / (1 + worse / 100) - 1) * 100;
  const double half = threshold * 100 / 2;
  if ((t.verdict == Verdict::kRegression ? worse : better) <= half) t.verdict = Verdict::kSame;
}

// Why a case is inconclusive when its own runs switch between two modes.
std::string modalNote(const CaseComparison& c, const CompareOptions& o) {
  // Its own values may sit in one mode while its run's level moves with the cases that
  // switch (a run's level is a median over its cases): then say that, not "X and X GB/s".
  const bool ownModes = std::abs(std::log(c.modeA / c.modeB)) >= std::log1p(o.threshold);
  return ownModes ? fmt::format(
                        "this case has two modes ({} and {} {}); pin ranks with --bind or "
                        "interleave runs",
                        modeText(c.modeA), modeText(c.modeB), metricUnit(o.metric))
                  : fmt::format(
                        "net of its run this case has two modes ({:.0f}% apart: other "
                        "cases of its runs switch modes); pin ranks with --bind or "
                        "interleave runs",
                        c.confined.modeGapPct);
}

// Why a case whose test or the whole run's was inconclusive is so.
std::string inconclusiveNote(const CaseComparison& c, const LevelTest& wholeRun) {
  int need = std::max(c.confined.runsNeeded, wholeRun.runsNeeded);
  return wholeRun.modal
             ? fmt::format("the whole runs have two modes ({:.0f}% apart)", wholeRun.modeGapPct)
         : need > kRunsNeededCap
             ? fmt::format("too noisy: more than {} runs per side needed", kRunsNeededCap)
         : need > 0 ? fmt::format("{} runs per side needed", need)
                    : "not testable";
}

// A case's verdict: by its own confined test, or when its series or the whole run regresses
// and the case itself is worse than the threshold.
void caseVerdict(CaseComparison& c, const Comparison& out, const TestPlan& p,
                 const CompareOptions& o) {
  if (out.thresholdOnly) {
    c.thresholdOnly = true;
    const double betterPct = (1 / (1 + c.worsePct / 100) - 1) * 100;
    c.verdict = c.worsePct > o.threshold * 100  ? Verdict::kRegression
                : betterPct > o.threshold * 100 ? Verdict::kImprovement
                                                : Verdict::kSame;
    c.note = "threshold only: one value per side, no replicates to test";
    return;
  }
  if (!p.enough) {
    c.verdict = Verdict::kInconclusive;
    c.note = out.tooFewNote;
    return;
  }
  const SeriesSummary* series = nullptr;
  for (const SeriesSummary& s : out.series) {
    if (s.series == c.key.series()) series = &s;
  }
  const double thresholdPct = o.threshold * 100 / 2;  // as in decide()
  const double betterPct = (1 / (1 + c.worsePct / 100) - 1) * 100;
  // Which test speaks for the case: its own, its series' (for the sizes that moved with the
  // series, net of their runs) or the whole run's (for the sizes that moved with the run).
  const double confinedBetterPct = (1 / (1 + c.confined.worsePct / 100) - 1) * 100;
  using By = CaseComparison::FlaggedBy;
  // A case is flagged only when it changed itself beyond half the threshold: worse (or better)
  // than the rest of its run alone is a run whose other cases moved the other way (on a machine
  // shared with a compile, a case steady while the others sped up 6% read as a regression).
  auto asMeasuredCases = [&](Verdict v) {
    return std::count_if(out.cases.begin(), out.cases.end(), [&](const CaseComparison& cc) {
      const double better = (1 / (1 + cc.worsePct / 100) - 1) * 100;
      return cc.asMeasured.verdict == v &&
             (v == Verdict::kRegression ? cc.worsePct : better) > thresholdPct;
    });
  };
  auto flaggedBy = [&](Verdict v, double own, double confined) {
    if (p.testCases && c.confined.verdict == v && own > thresholdPct) return By::kOwn;
    if (series && series->confined.verdict == v && confined > thresholdPct) return By::kSeries;
    if (out.wholeRun.verdict == v && own > thresholdPct) return By::kWholeRun;
    // A case's values as measured carry their runs' modes: not while the whole runs have two.
    // And the test stands for a change of every case, which its steady cases show together: one
    // case alone is a case-local change, the confined test's to find (one case at -17.8% as
    // measured, in a state of its own through a same-build gate's runs, issue 26's round 32).
    if (!out.wholeRun.modal && c.asMeasured.verdict == v && own > thresholdPct &&
        asMeasuredCases(v) >= kAsMeasuredCases)
      return By::kAsMeasured;
    return By::kNone;
  };
  if (p.testCases && c.confined.modal) {
    // Its own runs switch between two modes: neither its test nor its series' speak for it.
    c.verdict = Verdict::kInconclusive;
    c.note = modalNote(c, o);
    return;
  }
  if ((c.flaggedBy = flaggedBy(Verdict::kRegression, c.worsePct, c.confined.worsePct)) !=
      By::kNone) {
    c.verdict = Verdict::kRegression;
  } else if ((c.flaggedBy = flaggedBy(Verdict::kImprovement, betterPct, confinedBetterPct)) !=
             By::kNone) {
    c.verdict = Verdict::kImprovement;
  } else if ((p.testCases && c.confined.verdict == Verdict::kInconclusive) ||
             out.wholeRun.verdict == Verdict::kInconclusive) {
    c.verdict = Verdict::kInconclusive;
    c.note = inconclusiveNote(c, out.wholeRun);
  } else {
    c.verdict = Verdict::kSame;
  }
  // Flagged through another test: say which, with that test's p; the case's own p stays in
  // its column, so a case at p 0.9 beside one at 0.009 is not read as the evidence.
  if (c.flaggedBy == By::kSeries) {
    c.note = fmt::format("through its series (p {:.2g}); alone p {:.2g}",
                         series->confined.adjustedP, c.confined.adjustedP);
  } else if (c.flaggedBy == By::kWholeRun) {
    c.note = fmt::format("through the whole run (p {:.2g}); alone p {:.2g}", out.wholeRun.adjustedP,
                         c.confined.adjustedP);
  } else if (c.flaggedBy == By::kAsMeasured) {
    c.note =
        fmt::format("as measured, against the stored builds' spread (p {:.2g}); alone p {:.2g}",
                    c.asMeasured.adjustedP, c.confined.adjustedP);
  }
}

// The first test that met two modes, for the one-line outcome ("" when none did).
std::string modesNote(const Comparison& out) {
  for (const CaseComparison& c : out.cases) {
    if (c.confined.modal && c.verdict == Verdict::kInconclusive) {
      return fmt::format("{}: {}", c.key.toString(), c.note);
    }
  }
  constexpr const char* kModesAdvice = "pin ranks with --bind or interleave runs";
  for (const SeriesSummary& s : out.series) {
    if (s.confined.modal) {
      return fmt::format("series {} has two modes ({:.0f}% apart); {}", s.series.seriesString(),
                         s.confined.modeGapPct, kModesAdvice);
    }
  }
  if (out.wholeRun.modal) {
    return fmt::format("the whole runs have two modes ({:.0f}% apart); {}", out.wholeRun.modeGapPct,
                       kModesAdvice);
  }
  return "";
}

// The gate's outcome, and when inconclusive the runs per side its tests asked for.
void settleOutcome(Comparison& out, bool blocked) {
  auto anyCase = [&](auto pred) { return std::any_of(out.cases.begin(), out.cases.end(), pred); };
  const bool regression =
      !out.runProblems.empty() ||
      anyCase([](const CaseComparison& c) { return c.verdict == Verdict::kRegression; }) ||
      out.wholeRun.verdict == Verdict::kRegression ||
      std::any_of(out.series.begin(), out.series.end(), [](const SeriesSummary& s) {
        return s.confined.verdict == Verdict::kRegression;
      });
  const bool open =
      anyCase([](const CaseComparison& c) {
        return c.verdict == Verdict::kInconclusive || c.verdict == Verdict::kNotComparable;
      }) ||
      (!out.thresholdOnly && out.wholeRun.verdict == Verdict::kInconclusive) ||
      std::any_of(out.series.begin(), out.series.end(), [](const SeriesSummary& s) {
        return s.confined.verdict == Verdict::kInconclusive;
      });
  if (blocked || (out.cases.empty() && out.runProblems.empty())) {
    out.outcome = GateOutcome::kNothingComparable;
  } else if (regression) {
    out.outcome = GateOutcome::kRegression;
  } else if (open) {
    out.outcome = GateOutcome::kInconclusive;
  } else {
    out.outcome = GateOutcome::kPass;
  }
  if (out.outcome == GateOutcome::kInconclusive) {
    out.runsNeeded = out.wholeRun.runsNeeded;
    for (const CaseComparison& c : out.cases) {
      out.runsNeeded = std::max(out.runsNeeded, c.confined.runsNeeded);
    }
    for (const SeriesSummary& s : out.series) {
      out.runsNeeded = std::max(out.runsNeeded, s.confined.runsNeeded);
    }
  }
}

}  // namespace

// The stages in order; each reads what the ones before it left in `out` and `w`.
Comparison compareRuns(const RunSet& base, const RunSet& cand, const CompareOptions& o,
                       const History& history) {
  Comparison out;
  out.options = o;
  auto [differ, envNote] = environmentCheck(base, cand);
  out.environmentDiffers = differ;
  out.environmentNote = envNote;
  const bool blocked = differ && !o.allowDifferentEnvironment;

  CompareWork w;
  w.testable = pairCases(base, cand, o, blocked, out);
  w.bv = collect(base, o, w.testable);
  w.cv = collect(cand, o, w.testable);
  out.descheduledPoints = w.bv.descheduled + w.cv.descheduled;
  std::set<CaseKey> byAlgbw;
  for (const RunSet* side : {&base, &cand}) {
    for (const ResultRecord& r : side->results) {
      if (usesAlgbw(r, o.metric)) byAlgbw.insert(CaseKey::of(r));
    }
  }
  for (const CaseComparison& c : out.cases) out.algbwCases += byAlgbw.contains(c.key);
  w.scheduled = mostlyDescheduled(w.bv, w.cv);
  out.baseReplicates = static_cast<int>(w.bv.byReplicate.size());
  out.candReplicates = static_cast<int>(w.cv.byReplicate.size());
  w.level = levels(w.bv, w.cv, w.caseMean);
  w.data = caseData(w);
  w.hist = historyRuns(history.runs, o, w.testable, w.caseMean);
  w.learned = learnedFor(history, o);
  out.historyRuns = static_cast<int>(w.hist.size());
  w.interleaved = sidesInterleaved(base.runs, cand.runs);
  out.interleaved = w.interleaved;

  const TestPlan p = planTests(out, w, o);
  testWholeRun(out, w, p, o);
  std::vector<LevelTest*> family;  // the confined tests, for Holm
  for (CaseComparison& c : out.cases) compareCase(c, w, p, o, family);
  if (p.enough && p.testSeries) {
    for (const auto& [seriesKey, n] : p.seriesCases) {
      out.series.push_back(seriesTest(seriesKey, n, w, out, p, o));
    }
    for (SeriesSummary& s : out.series) family.push_back(&s.confined);
  }
  holmAndDecide(family, o.threshold, p.alphaConfined);
  for (SeriesSummary& s : out.series) onlyAgainstItsRun(s.confined, out.wholeRun, o.threshold);

  // Too few replicates: imported logs fall back to the threshold; measured runs need more.
  if (!p.enough) {
    out.thresholdOnly = !w.bv.anySamples && !w.cv.anySamples && !w.data.empty();
    out.tooFewNote = fmt::format(
        "{} baseline and {} candidate replicate(s): a test needs at least 4 in all, one per side",
        out.baseReplicates, out.candReplicates);
  }
  for (CaseComparison& c : out.cases) {
    if (c.failed || c.verdict == Verdict::kNotComparable || !w.data.contains(c.key) ||
        c.baseRuns == 0 || w.scheduled.contains(c.key)) {
      continue;
    }
    caseVerdict(c, out, p, o);
  }
  // A candidate run that failed is a regression whatever its cases say.
  for (const RunRecord& r : cand.runs) {
    if (r.status == RunStatus::kFailed)
      out.runProblems.push_back(fmt::format("run {} failed", r.id));
  }
  out.modesNote = modesNote(out);
  settleOutcome(out, blocked);
  return out;
}

Calibration calibrate(const RunSet& runs, const CompareOptions& o, double target) {
  std::set<CaseKey> keep;
  for (const ResultRecord& r : runs.results) {
    if (o.sizes.contains(r.sizeBytes)) keep.insert(CaseKey::of(r));
  }
  SideValues v = collect(runs, o, keep);
  Calibration cal;
  cal.replicates = static_cast<int>(v.byReplicate.size());
  if (cal.replicates < 3) {
    throw UsageError(fmt::format(
        "--calibrate needs at least 3 runs of one build to measure their spread; got {}",
        cal.replicates));
  }
  std::map<CaseKey, double> caseMean;
  std::map<ReplicateId, double> level = levels(v, SideValues{}, caseMean);
  std::vector<double> levelValues;
  for (const auto& [id, l] : level) levelValues.push_back(l);
  Undisturbed steady = setAsideDisturbed(levelValues);
  if (steady.setAsideA * 4 > static_cast<int>(levelValues.size())) {
    // So many far runs are a second group the gates will meet on both sides (setAsideDisturbed
    // then keeps everything): the noise is that of all of them.
    steady = Undisturbed{levelValues, {}};
    cal.twoGroups = true;
  }
  cal.disturbed = cal.twoGroups ? 0 : steady.setAsideA;
  const double keptShare =
      static_cast<double>(steady.a.size()) / static_cast<double>(levelValues.size());
  const double sdWhole = std::sqrt(sumSquares(steady.a) / static_cast<double>(steady.a.size() - 1));
  std::map<CaseKey, std::vector<double>> net;
  std::set<CaseKey> series;
  for (const auto& [id, values] : v.byReplicate) {
    for (const auto& [key, y] : values) net[key].push_back(y - level[id]);
  }
  std::vector<std::pair<double, CaseKey>> caseSd;
  for (const auto& [key, values] : net) {
    series.insert(key.series());
    if (values.size() < 2) continue;
    Undisturbed kept = setAsideDisturbed(values);
    if (kept.a.size() < 2) continue;
    caseSd.emplace_back(std::sqrt(sumSquares(kept.a) / static_cast<double>(kept.a.size() - 1)),
                        key);
  }
  cal.cases = static_cast<int>(net.size());
  cal.series = static_cast<int>(series.size());

  // What is stored for later gates: the runs are one build, so one group.
  LearnedNoise& learned = cal.learned;
  for (const RunRecord& r : runs.runs) learned.runIds.push_back(r.id);
  learned.runQuantile = o.runQuantile;
  learned.metric = std::string(metricName(o.metric));
  // The calibrated runs are one build under study, as a side of a comparison is (group -1):
  // findModes takes that one build's runs in both clusters as modes.
  auto oneGroup = [](const std::vector<double>& xs) {
    std::vector<GroupedValue> g;
    for (double x : xs) g.push_back({-1, x});
    return g;
  };
  learned.whole = withinGroupNoise(oneGroup(levelValues));
  const double sign = o.metric == Metric::kTime ? 1 : -1;
  for (const auto& [key, values] : net) {
    learned.cases[key.toString()] = withinGroupNoise(oneGroup(values));
    Modes m = findModes(oneGroup(values), std::log1p(target));
    if (!m.found) continue;
    double sum[2] = {0, 0};
    int n[2] = {0, 0};
    for (const auto& [id, vals] : v.byReplicate) {
      auto it = vals.find(key);
      if (it == vals.end()) continue;
      const int k = it->second - level[id] <= m.cut ? 0 : 1;
      sum[k] += it->second;
      ++n[k];
    }
    learned.modes[key.toString()] = {std::exp(sign * sum[0] / std::max(n[0], 1)),
                                     std::exp(sign * sum[1] / std::max(n[1], 1)), m.high - m.low};
  }
  for (const CaseKey& s : series) {
    std::vector<double> means;
    for (const auto& [id, values] : v.byReplicate) {
      std::vector<double> xs;
      for (const auto& [key, y] : values) {
        if (key.series() == s) xs.push_back(y - level[id]);
      }
      if (!xs.empty()) means.push_back(mean(xs));
    }
    learned.series[s.seriesString()] = withinGroupNoise(oneGroup(means));
  }
  const int confined = cal.cases + (cal.series >= 2 ? cal.series : 0);
  const double alphaWhole = confined > 1 ? o.alpha / 2 : o.alpha;
  const double alphaCase = o.alpha / 2 / std::max(confined, 1);
  const double t = std::log1p(target);
  cal.wholeSdPct = pctOfLog(sdWhole);
  cal.runsWhole = runsNeeded(sdWhole, t, alphaWhole, o.power);
  if (cal.runsWhole <= kRunsNeededCap) {
    cal.runsWhole =
        std::min(kRunsNeededCap + 1, static_cast<int>(std::ceil(cal.runsWhole / keptShare)));
  }
  if (!caseSd.empty() && cal.cases >= 2) {
    std::sort(caseSd.begin(), caseSd.end());
    double mid = caseSd[caseSd.size() / 2].first;
    cal.caseSdPct = pctOfLog(mid);
    cal.worstCaseSdPct = pctOfLog(caseSd.back().first);
    cal.worstCase = caseSd.back().second;
    cal.runsCaseMedian = runsNeeded(mid, t, alphaCase, o.power);
    cal.runsCaseWorst = runsNeeded(caseSd.back().first, t, alphaCase, o.power);
  }
  return cal;
}

// ---- what a calibration stores ----

namespace {
constexpr const char* kLearnedFormat = "collbench-gate-calibration";

nlohmann::json sumsJson(const NoiseSums& n) { return {{"ss", n.ss}, {"df", n.df}}; }
NoiseSums sumsOf(const nlohmann::json& j) {
  NoiseSums n{j.at("ss").get<double>(), j.at("df").get<double>()};
  if (!(n.ss >= 0) || !(n.df >= 0) || !std::isfinite(n.ss) || !std::isfinite(n.df)) {
    throw std::invalid_argument("bad noise sums");
  }
  return n;
}
}  // namespace

std::string learnedNoiseJson(const LearnedNoise& n) {
  nlohmann::json j{{"format", kLearnedFormat}, {"version", 1},
                   {"runs", n.runIds},         {"run_quantile", n.runQuantile},
                   {"metric", n.metric},       {"whole", sumsJson(n.whole)}};
  nlohmann::json cases = nlohmann::json::object(), series = nlohmann::json::object();
  for (const auto& [key, sums] : n.cases) cases[key] = sumsJson(sums);
  for (const auto& [key, sums] : n.series) series[key] = sumsJson(sums);
  for (const auto& [key, m] : n.modes) {
    cases[key]["modes"] = {m.a, m.b};
    cases[key]["mode_gap"] = m.gap;
  }
  j["cases"] = cases;
  j["series"] = series;
  return j.dump();
}

std::optional<LearnedNoise> parseLearnedNoise(const std::string& json) {
  try {
    nlohmann::json j = nlohmann::json::parse(json);
    if (j.value("format", "") != kLearnedFormat || j.value("version", 0) != 1) return std::nullopt;
    LearnedNoise n;
    n.runIds = j.at("runs").get<std::vector<int64_t>>();
    n.runQuantile = j.at("run_quantile").get<double>();
    n.metric = j.at("metric").get<std::string>();
    n.whole = sumsOf(j.at("whole"));
    for (const auto& [key, c] : j.at("cases").items()) {
      n.cases[key] = sumsOf(c);
      if (c.contains("modes")) {
        auto m = c.at("modes").get<std::vector<double>>();
        const double gap = c.at("mode_gap").get<double>();
        if (m.size() == 2 && m[0] > 0 && m[1] > 0 && gap > 0) n.modes[key] = {m[0], m[1], gap};
      }
    }
    for (const auto& [key, c] : j.at("series").items()) n.series[key] = sumsOf(c);
    return n;
  } catch (const std::exception&) {
    return std::nullopt;  // not ours, or from a later format: the gate goes on without it
  }
}

// ---- choosing the runs ----

RunSpec RunSpec::parse(std::string_view text) {
  RunSpec spec;
  spec.text = std::string(trim(text));
  std::string_view t = spec.text;
  if (t == "last" || t == "latest") {
    spec.last = true;
    return spec;
  }
  if (t.starts_with("label:")) {
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
  for (const std::string& item : splitList(t)) {
    int64_t id = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || id <= 0) {
      throw UsageError(
          fmt::format("run '{}' is not a run id (a positive number), a list of ids (12,13), last, "
                      "label:NAME or label:NAME@last-K",
                      text));
    }
    if (std::find(spec.ids.begin(), spec.ids.end(), id) == spec.ids.end()) spec.ids.push_back(id);
  }
  if (spec.ids.empty()) throw UsageError(fmt::format("run '{}': no run given", text));
  return spec;
}

std::vector<RunRecord> pickLabelRuns(const std::vector<RunRecord>& labelledNewestFirst,
                                     const RunSpec& spec, const std::vector<RunRecord>& exclude) {
  const RunRecord* bound = nullptr;
  for (const RunRecord& e : exclude) {
    if (!bound || std::tie(e.startedAt, e.id) > std::tie(bound->startedAt, bound->id)) bound = &e;
  }
  std::vector<RunRecord> picked;
  for (const RunRecord& r : labelledNewestFirst) {
    if (spec.lastK > 0 && static_cast<int>(picked.size()) >= spec.lastK) break;
    if (r.label != spec.label || r.status != RunStatus::kOk) continue;
    if (std::any_of(exclude.begin(), exclude.end(), [&](const auto& e) { return e.id == r.id; })) {
      continue;
    }
    if (bound && std::tie(r.startedAt, r.id) > std::tie(bound->startedAt, bound->id)) continue;
    picked.push_back(r);
  }
  return picked;
}

}  // namespace cb
