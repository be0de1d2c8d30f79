// Comparison statistics and verdicts: the Mann-Whitney U test against enumeration, published
// values and tables; Holm; thresholds; per-case verdicts (regression, improvement, same,
// inconclusive, not comparable); the series rule of the gate; baseline selection by label; and
// the store queries behind history, export and db.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>
#include <string>

#include <fmt/format.h>

#include "core/Error.h"
#include "results/Case.h"
#include "results/Compare.h"
#include "results/Store.h"

namespace cb {
namespace {

// ---- Mann-Whitney U ----

// Two-sided exact p by brute force: every way of choosing which n1 of the pooled values are
// "a", counting the labellings at least as extreme (max(U1, U2)) as the observed one.
double enumeratedPValue(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> pooled(a);
  pooled.insert(pooled.end(), b.begin(), b.end());
  const size_t n = pooled.size(), n1 = a.size(), n2 = b.size();
  auto uOf = [&](const std::vector<bool>& isA) {
    double u = 0;
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) {
        if (isA[i] && !isA[j]) u += pooled[i] > pooled[j] ? 1 : pooled[i] == pooled[j] ? 0.5 : 0;
      }
    }
    return std::max(u, static_cast<double>(n1 * n2) - u);
  };
  std::vector<bool> observed(n, false);
  std::fill(observed.begin(), observed.begin() + static_cast<std::ptrdiff_t>(n1), true);
  const double uObserved = uOf(observed);
  std::vector<bool> isA(n, false);
  std::fill(isA.end() - static_cast<std::ptrdiff_t>(n1), isA.end(), true);  // first permutation
  size_t total = 0, extreme = 0;
  do {
    ++total;
    if (uOf(isA) >= uObserved - 1e-9) ++extreme;
  } while (std::next_permutation(isA.begin(), isA.end()));
  return std::min(1.0, static_cast<double>(extreme) / static_cast<double>(total));
}

TEST(MannWhitney, ScipyDocumentationExample) {
  // scipy.stats.mannwhitneyu docs: males vs females, U1 = 17; method="exact" gives
  // 0.1111111111111111 (= 14/126), method="asymptotic" 0.11134688653314041.
  std::vector<double> males{19, 22, 16, 29, 24}, females{20, 11, 17, 12};
  MannWhitney exact = mannWhitneyU(males, females);
  EXPECT_TRUE(exact.exact);
  EXPECT_FALSE(exact.ties);
  EXPECT_DOUBLE_EQ(exact.u1, 17);
  EXPECT_NEAR(exact.pValue, 14.0 / 126, 1e-14);
  MannWhitney normal = mannWhitneyU(males, females, MannWhitneyMethod::kNormal);
  EXPECT_FALSE(normal.exact);
  EXPECT_NEAR(normal.pValue, 0.11134688653314041, 1e-12);
  // Swapping the samples swaps U1 and U2 but not the two-sided p.
  MannWhitney swapped = mannWhitneyU(females, males);
  EXPECT_DOUBLE_EQ(swapped.u1, 3);
  EXPECT_NEAR(swapped.pValue, exact.pValue, 1e-15);
}

TEST(MannWhitney, ExactMatchesEnumeration) {
  std::mt19937 rng(7);
  for (auto [n1, n2] : {std::pair{1, 1}, {2, 3}, {4, 5}, {3, 7}, {6, 6}, {5, 8}}) {
    for (int trial = 0; trial < 6; ++trial) {
      std::vector<double> values(static_cast<size_t>(n1 + n2));
      std::iota(values.begin(), values.end(), 1.0);
      std::shuffle(values.begin(), values.end(), rng);
      // Some trials shift the first sample up, so small p-values are covered too.
      std::vector<double> a(values.begin(), values.begin() + n1),
          b(values.begin() + n1, values.end());
      if (trial % 2) {
        for (double& x : a) x += 0.5 * (n1 + n2) + 0.25;
      }
      MannWhitney r = mannWhitneyU(a, b);
      ASSERT_TRUE(r.exact);
      EXPECT_NEAR(r.pValue, enumeratedPValue(a, b), 1e-12) << n1 << " vs " << n2;
    }
  }
}

TEST(MannWhitney, ExactCountsAreTheGaussianBinomial) {
  // n1 = n2 = 2: U = 0..4 with frequencies 1 1 2 1 1 over C(4, 2) = 6.
  EXPECT_EQ(mannWhitneyExactCounts(2, 2), (std::vector<double>{1, 1, 2, 1, 1}));
  for (auto [n1, n2] : {std::pair{3, 4}, {7, 5}, {30, 30}, {50, 50}}) {
    std::vector<double> c = mannWhitneyExactCounts(n1, n2);
    ASSERT_EQ(c.size(), static_cast<size_t>(n1 * n2 + 1));
    double total = std::accumulate(c.begin(), c.end(), 0.0);
    double binom =
        std::exp(std::lgamma(n1 + n2 + 1.0) - std::lgamma(n1 + 1.0) - std::lgamma(n2 + 1.0));
    EXPECT_NEAR(total / binom, 1, 1e-9);
    for (size_t u = 0; u < c.size(); ++u) EXPECT_DOUBLE_EQ(c[u], c[c.size() - 1 - u]);
  }
}

// Two-sided exact p for U = u (lower tail, doubled), from the distribution.
double tableP(int n1, int n2, int u) {
  std::vector<double> c = mannWhitneyExactCounts(n1, n2);
  double total = std::accumulate(c.begin(), c.end(), 0.0);
  double tail = std::accumulate(c.begin(), c.begin() + u + 1, 0.0);
  return std::min(1.0, 2 * tail / total);
}

TEST(MannWhitney, CriticalValuesOfPublishedTables) {
  // Two-tailed critical values of U (reject when U <= value) from the standard tables:
  // n1 = n2 = 5: 2 at 0.05, 0 at 0.01; n1 = n2 = 8: 13 at 0.05; n1 = n2 = 10: 23 at 0.05,
  // 16 at 0.01.
  struct Row {
    int n, crit;
    double alpha;
  };
  for (Row r :
       {Row{5, 2, 0.05}, Row{5, 0, 0.01}, Row{8, 13, 0.05}, Row{10, 23, 0.05}, Row{10, 16, 0.01}}) {
    EXPECT_LE(tableP(r.n, r.n, r.crit), r.alpha) << "n=" << r.n << " U=" << r.crit;
    EXPECT_GT(tableP(r.n, r.n, r.crit + 1), r.alpha) << "n=" << r.n << " U=" << r.crit + 1;
  }
  // n1 = n2 = 5, U = 2: frequencies 1, 1, 2 out of 252.
  EXPECT_NEAR(tableP(5, 5, 2), 2 * 4 / 252.0, 1e-15);
}

TEST(MannWhitney, NormalApproximationWithTies) {
  // By hand: pooled ranks 1 | 2,2,2 -> 3 | 3,3,3 -> 6 | 4 -> 8 | 5, 6, 7 -> 9, 10, 11.
  // R1 = 1 + 3 + 3 + 6 + 8 = 21, U1 = 21 - 15 = 6, U2 = 24; tie term 2 * (27 - 3) = 48;
  // var = 30/12 * (12 - 48/110) = 28.909; z = (24 - 15 - 0.5) / 5.37672 = 1.58089;
  // p = erfc(z / sqrt 2) = 0.113903.
  std::vector<double> a{1, 2, 2, 3, 4}, b{2, 3, 3, 5, 6, 7};
  MannWhitney r = mannWhitneyU(a, b);
  EXPECT_TRUE(r.ties);
  EXPECT_FALSE(r.exact);  // ties: the exact law does not apply
  EXPECT_DOUBLE_EQ(r.u1, 6);
  EXPECT_NEAR(r.pValue, 0.11390314458853065, 1e-12);
  // All tied: no evidence at all.
  std::vector<double> same(6, 3.0);
  EXPECT_DOUBLE_EQ(mannWhitneyU(same, same).pValue, 1);
  EXPECT_DOUBLE_EQ(mannWhitneyU({}, same).pValue, 1);
}

TEST(MannWhitney, LargeSamplesUseTheNormalApproximation) {
  std::vector<double> a(60), b(60);
  for (int i = 0; i < 60; ++i) {
    a[i] = 100 + 0.37 * i;
    b[i] = 101 + 0.41 * i;
  }
  MannWhitney r = mannWhitneyU(a, b);
  EXPECT_FALSE(r.exact);
  // Complete separation of 60 vs 60 is far beyond any alpha.
  std::vector<double> c(60);
  for (int i = 0; i < 60; ++i) c[i] = 200 + i;
  EXPECT_LT(mannWhitneyU(a, c).pValue, 1e-15);
  EXPECT_GT(r.pValue, 0);
  EXPECT_LE(r.pValue, 1);
}

TEST(MannWhitney, MinimumAchievablePValue) {
  EXPECT_NEAR(minAchievablePValue(3, 3), 0.1, 1e-15);
  EXPECT_NEAR(minAchievablePValue(4, 4), 2 / 70.0, 1e-15);
  EXPECT_NEAR(minAchievablePValue(5, 5), 2 / 252.0, 1e-15);
  EXPECT_DOUBLE_EQ(minAchievablePValue(1, 1), 1);
  EXPECT_DOUBLE_EQ(minAchievablePValue(0, 9), 1);
  // It is what complete separation actually gives.
  std::vector<double> lo{1, 2, 3, 4, 5}, hi{6, 7, 8, 9, 10};
  EXPECT_NEAR(mannWhitneyU(lo, hi).pValue, minAchievablePValue(5, 5), 1e-15);
  EXPECT_LT(minAchievablePValue(100, 100), 1e-20);
}

TEST(Holm, AdjustsInRankOrder) {
  // Sorted 0.005 0.01 0.03 0.04 -> x4, x3, x2, x1 = 0.02 0.03 0.06 0.04 -> running max.
  std::vector<double> p{0.01, 0.04, 0.03, 0.005};
  std::vector<double> adj = holmAdjust(p);
  EXPECT_NEAR(adj[0], 0.03, 1e-15);
  EXPECT_NEAR(adj[1], 0.06, 1e-15);
  EXPECT_NEAR(adj[2], 0.06, 1e-15);
  EXPECT_NEAR(adj[3], 0.02, 1e-15);
  EXPECT_EQ(holmAdjust(std::vector<double>{0.6, 0.7}), (std::vector<double>{1, 1}));
  EXPECT_TRUE(holmAdjust({}).empty());
}

// ---- options and case syntax ----

TEST(CompareOptions, Thresholds) {
  EXPECT_DOUBLE_EQ(parseThreshold("5%"), 0.05);
  EXPECT_DOUBLE_EQ(parseThreshold("5"), 0.05);
  EXPECT_DOUBLE_EQ(parseThreshold(" 12.5 % "), 0.125);
  EXPECT_DOUBLE_EQ(parseThreshold("0"), 0);
  for (const char* bad : {"", "%", "abc", "-1%", "100%", "5%%", "1e999", "nan"}) {
    EXPECT_THROW(parseThreshold(bad), UsageError) << bad;
  }
  EXPECT_DOUBLE_EQ(checkAlpha(0.01), 0.01);
  EXPECT_THROW(checkAlpha(0), UsageError);
  EXPECT_THROW(checkAlpha(0.9), UsageError);
  EXPECT_EQ(parseMetric("busbw"), Metric::kBusbw);
  EXPECT_EQ(parseMetric("TIME"), Metric::kTime);
  EXPECT_THROW(parseMetric("algbw"), UsageError);
}

TEST(CaseSyntax, KeysPatternsAndSizes) {
  ResultRecord r;
  r.collective = "allreduce";
  r.variant = "ring/local";
  r.dtype = "float";
  r.op = "sum";
  r.sizeBytes = 1 << 20;
  r.placement = "out";
  r.nranks = 2;
  CaseKey key = CaseKey::of(r);
  EXPECT_EQ(key.toString(), "allreduce:ring/local:float:sum:1M:out:2");
  EXPECT_EQ(key.seriesString(), "allreduce:ring/local:float:sum:*:out:2");
  EXPECT_EQ(compactSize(1536), "1536");
  EXPECT_EQ(compactSize(8), "8");
  EXPECT_EQ(compactSize(3ull << 30), "3G");
  EXPECT_EQ(compactSize(0), "0");

  EXPECT_TRUE(CasePattern::parse("allreduce").matches(key));
  EXPECT_TRUE(CasePattern::parse("allreduce:ring/local:float:sum:1M:out:2").matches(key));
  EXPECT_TRUE(CasePattern::parse("allreduce::*:sum:512K-4M").matches(key));
  EXPECT_FALSE(CasePattern::parse("allreduce:ring/local:float:sum:2M").matches(key));
  EXPECT_FALSE(CasePattern::parse("allgather").matches(key));
  EXPECT_FALSE(CasePattern::parse("allreduce:::::in").matches(key));
  EXPECT_FALSE(CasePattern::parse("allreduce::::::4").matches(key));
  EXPECT_TRUE(CasePattern::parse("*").matches(key));
  key.root = 0;
  EXPECT_EQ(key.toString(), "allreduce:ring/local:float:sum:1M:out:2:root=0");
  EXPECT_TRUE(CasePattern::parse("allreduce:::::::root=0").matches(key));
  EXPECT_FALSE(CasePattern::parse("allreduce:::::::1").matches(key));
  EXPECT_THROW(CasePattern::parse("a:b:c:d:1M:out:2:0:extra"), UsageError);
  EXPECT_THROW(CasePattern::parse("allreduce::::1Q"), UsageError);
  EXPECT_THROW(CasePattern::parse("allreduce:::::sideways"), UsageError);
  EXPECT_THROW(CasePattern::parse("allreduce::::::two"), UsageError);

  SizeFilter f = SizeFilter::parse("1M-64M, 4K");
  EXPECT_TRUE(f.contains(1 << 20));
  EXPECT_TRUE(f.contains(64 << 20));
  EXPECT_TRUE(f.contains(4096));
  EXPECT_FALSE(f.contains(8192));
  EXPECT_FALSE(f.contains(65ull << 20));
  EXPECT_TRUE(SizeFilter::parse("").contains(12345));
  EXPECT_TRUE(SizeFilter::parse("1M-").contains(1ull << 40));
  EXPECT_FALSE(SizeFilter::parse("-64K").contains(65537));
  EXPECT_THROW(SizeFilter::parse("64M-1M"), UsageError);
  EXPECT_THROW(SizeFilter::parse("lots"), UsageError);
  EXPECT_THROW(SizeFilter::parse("-"), UsageError);
}

// ---- verdicts ----

RunRecord run(int64_t id, const std::string& fingerprint = "f00d", const std::string& label = "",
              const std::string& startedAt = "2025-01-01T00:00:00Z") {
  RunRecord r;
  r.id = id;
  r.fingerprint = fingerprint;
  r.label = label;
  r.startedAt = startedAt;
  r.status = RunStatus::kOk;
  return r;
}

// A result of `n` iterations whose times spread evenly around `timeUs` (+-5%), with the
// busbw of that time for a 1 MiB-ish case.
ResultRecord result(int64_t runId, uint64_t size, double timeUs, int n = 30,
                    const std::string& variant = "ring/local") {
  ResultRecord r;
  r.runId = runId;
  r.collective = "allreduce";
  r.variant = variant;
  r.dtype = "float";
  r.op = "sum";
  r.sizeBytes = size;
  r.placement = "out";
  r.nranks = 2;
  r.iterations = n;
  for (int i = 0; i < n; ++i) {
    // A deterministic spread; the offset per run id keeps values of different runs untied.
    double spread = n > 1 ? (static_cast<double>(i) / (n - 1) - 0.5) * 0.1 : 0;
    r.samplesUs.push_back(timeUs * (1 + spread) + 1e-6 * static_cast<double>(runId));
  }
  r.timeUs = r.medianUs = timeUs;
  r.busbw = static_cast<double>(size) / (timeUs * 1e3);
  return r;
}

RunSet side(RunRecord r, const std::vector<std::pair<uint64_t, double>>& points, int n = 30) {
  RunSet s;
  for (auto [size, t] : points) s.results.push_back(result(r.id, size, t, n));
  s.runs.push_back(std::move(r));
  return s;
}

const std::vector<uint64_t> kSizes{1024, 4096, 16384, 65536, 262144};

std::vector<std::pair<uint64_t, double>> scaled(double factor, double slowFactor = 1,
                                                int slowCount = 0) {
  std::vector<std::pair<uint64_t, double>> points;
  for (size_t i = 0; i < kSizes.size(); ++i) {
    double t = 10.0 * static_cast<double>(i + 1) * factor;
    if (static_cast<int>(i) < slowCount) t *= slowFactor;
    points.emplace_back(kSizes[i], t);
  }
  return points;
}

const CaseComparison& findCase(const Comparison& c, uint64_t size) {
  for (const auto& cc : c.cases) {
    if (cc.key.sizeBytes == size) return cc;
  }
  throw std::runtime_error("case not found");
}

TEST(CompareRuns, ConsistentSlowdownIsARegression) {
  CompareOptions o;
  o.metric = Metric::kTime;
  Comparison c = compareRuns(side(run(1), scaled(1)), side(run(2), scaled(1.5)), o);
  ASSERT_EQ(c.cases.size(), kSizes.size());
  for (const auto& cc : c.cases) {
    EXPECT_EQ(cc.verdict, Verdict::kRegression) << cc.key.toString();
    EXPECT_NEAR(cc.changePct, 50, 0.01);
    EXPECT_NEAR(cc.worsePct, 50, 0.01);
    EXPECT_TRUE(cc.exact);  // 30 vs 30 without ties
    EXPECT_LT(cc.adjustedP, 0.01);
    EXPECT_TRUE(cc.confirmed);
  }
  ASSERT_EQ(c.series.size(), 1u);
  EXPECT_TRUE(c.series[0].regression);
  EXPECT_EQ(c.outcome, GateOutcome::kRegression);

  // The same runs judged on busbw: lower is worse, same verdicts.
  o.metric = Metric::kBusbw;
  Comparison b = compareRuns(side(run(1), scaled(1)), side(run(2), scaled(1.5)), o);
  EXPECT_NEAR(findCase(b, 4096).changePct, -100.0 / 3, 0.01);
  EXPECT_NEAR(findCase(b, 4096).worsePct, 100.0 / 3, 0.01);
  EXPECT_EQ(b.outcome, GateOutcome::kRegression);
}

TEST(CompareRuns, SpeedupIsAnImprovementAndPasses) {
  CompareOptions o;
  Comparison c = compareRuns(side(run(1), scaled(1)), side(run(2), scaled(0.7)), o);
  for (const auto& cc : c.cases) EXPECT_EQ(cc.verdict, Verdict::kImprovement);
  EXPECT_EQ(c.count(Verdict::kImprovement), 5);
  EXPECT_EQ(c.outcome, GateOutcome::kPass);
}

TEST(CompareRuns, SignificantButSmallChangeIsTheSame) {
  // +3% is significant with these tight samples but within the 5% threshold.
  CompareOptions o;
  o.metric = Metric::kTime;
  Comparison c = compareRuns(side(run(1), scaled(1)), side(run(2), scaled(1.03)), o);
  for (const auto& cc : c.cases) {
    EXPECT_EQ(cc.verdict, Verdict::kSame);
    EXPECT_LT(cc.adjustedP, 0.01);
  }
  EXPECT_EQ(c.outcome, GateOutcome::kPass);
  // A 2% threshold makes the same change a regression.
  o.threshold = 0.02;
  EXPECT_EQ(compareRuns(side(run(1), scaled(1)), side(run(2), scaled(1.03)), o).outcome,
            GateOutcome::kRegression);
}

TEST(CompareRuns, LargeButNotSignificantChangeIsTheSame) {
  // 5 vs 5 samples can reach p = 0.0079 at best: one interleaved value keeps p above alpha.
  CompareOptions o;
  o.metric = Metric::kTime;
  RunSet base = side(run(1), {{1024, 10}}, 5), cand = side(run(2), {{1024, 20}}, 5);
  cand.results[0].samplesUs[0] = 9.9;  // overlaps the baseline
  Comparison c = compareRuns(base, cand, o);
  ASSERT_EQ(c.cases.size(), 1u);
  EXPECT_GT(c.cases[0].worsePct, 50);
  EXPECT_GE(c.cases[0].adjustedP, 0.01);
  EXPECT_EQ(c.cases[0].verdict, Verdict::kSame);
}

TEST(CompareRuns, IsolatedSlowSizeIsNotConfirmed) {
  // One size of five is 3x slower (a hiccup of a shared machine): the case is a regression,
  // but its series is not, and the gate passes.
  CompareOptions o;
  o.metric = Metric::kTime;
  Comparison c = compareRuns(side(run(1), scaled(1)), side(run(2), scaled(1, 3, 1)), o);
  EXPECT_EQ(findCase(c, 1024).verdict, Verdict::kRegression);
  EXPECT_FALSE(findCase(c, 1024).confirmed);
  EXPECT_EQ(c.series.at(0).regressions, 1);
  EXPECT_FALSE(c.series.at(0).regression);
  EXPECT_EQ(c.outcome, GateOutcome::kPass);
  // Three of five sizes: a majority, and the median change is +200%.
  Comparison d = compareRuns(side(run(1), scaled(1)), side(run(2), scaled(1, 3, 3)), o);
  EXPECT_TRUE(d.series.at(0).regression);
  EXPECT_EQ(d.outcome, GateOutcome::kRegression);
  // --sizes leaving only the slow size: a series of one case, which decides alone.
  o.sizes = SizeFilter::parse("1K");
  Comparison e = compareRuns(side(run(1), scaled(1)), side(run(2), scaled(1, 3, 1)), o);
  ASSERT_EQ(e.cases.size(), 1u);
  EXPECT_EQ(e.skipped, 4);
  EXPECT_EQ(e.outcome, GateOutcome::kRegression);
}

TEST(CompareRuns, TooFewSamplesAreInconclusive) {
  CompareOptions o;
  o.metric = Metric::kTime;
  Comparison c = compareRuns(side(run(1), scaled(1), 4), side(run(2), scaled(3), 4), o);
  for (const auto& cc : c.cases) {
    EXPECT_EQ(cc.verdict, Verdict::kInconclusive);
    EXPECT_NEAR(cc.minP, 2 / 70.0, 1e-12);
    EXPECT_NE(cc.note.find("smallest possible p"), std::string::npos) << cc.note;
  }
  EXPECT_EQ(c.outcome, GateOutcome::kInconclusive);
  // At alpha 0.05 one case of 4 vs 4 can decide (p >= 0.029), but not five together (Holm
  // would need 5 x 0.029 < 0.05).
  o.alpha = 0.05;
  EXPECT_EQ(compareRuns(side(run(1), scaled(1), 4), side(run(2), scaled(3), 4), o).outcome,
            GateOutcome::kInconclusive);
  o.sizes = SizeFilter::parse("1K");
  Comparison one = compareRuns(side(run(1), scaled(1), 4), side(run(2), scaled(3), 4), o);
  ASSERT_EQ(one.cases.size(), 1u);
  EXPECT_EQ(one.cases[0].verdict, Verdict::kRegression);
  EXPECT_EQ(one.outcome, GateOutcome::kRegression);
  // Mixed sample sizes: the cases that can reach alpha together are tested.
  o.sizes = {};
  RunSet base = side(run(1), scaled(1), 30), cand = side(run(2), scaled(3), 30);
  cand.results[0] = result(2, 1024, 30, 1);  // 30 vs 1: p >= 2/31
  Comparison mixed = compareRuns(base, cand, o);
  EXPECT_EQ(findCase(mixed, 1024).verdict, Verdict::kInconclusive);
  EXPECT_EQ(findCase(mixed, 4096).verdict, Verdict::kRegression);
  EXPECT_EQ(mixed.outcome, GateOutcome::kRegression);
  // Imported runs keep no samples: one value each, nothing to test.
  RunSet ib = side(run(1), {{1024, 10}}, 1), ic = side(run(2), {{1024, 30}}, 1);
  ib.results[0].samplesUs.clear();
  ic.results[0].samplesUs.clear();
  Comparison imp = compareRuns(ib, ic, o);
  EXPECT_EQ(imp.cases.at(0).verdict, Verdict::kInconclusive);
  EXPECT_EQ(imp.cases.at(0).baseN, 1u);
}

TEST(CompareRuns, DifferentFingerprintsAreNotComparable) {
  CompareOptions o;
  Comparison c = compareRuns(side(run(1, "aaaa"), scaled(1)), side(run(2, "bbbb"), scaled(2)), o);
  ASSERT_EQ(c.cases.size(), kSizes.size());
  for (const auto& cc : c.cases) {
    EXPECT_EQ(cc.verdict, Verdict::kNotComparable);
    EXPECT_FALSE(cc.tested);
  }
  EXPECT_TRUE(c.environmentDiffers);
  EXPECT_NE(c.environmentNote.find("aaaa"), std::string::npos) << c.environmentNote;
  EXPECT_EQ(c.outcome, GateOutcome::kNothingComparable);
  // Unknown against known differs too.
  EXPECT_TRUE(
      compareRuns(side(run(1, ""), scaled(1)), side(run(2, "b"), scaled(1)), o).environmentDiffers);
  // Explicitly allowed: compared, and still flagged.
  o.allowDifferentEnvironment = true;
  Comparison a = compareRuns(side(run(1, "aaaa"), scaled(1)), side(run(2, "bbbb"), scaled(2)), o);
  EXPECT_EQ(a.outcome, GateOutcome::kRegression);
  EXPECT_TRUE(a.environmentDiffers);
}

TEST(CompareRuns, FailuresAndUnsupportedCases) {
  CompareOptions o;
  RunSet base = side(run(1), scaled(1)), cand = side(run(2), scaled(1));
  cand.results[1].status = "failed";
  cand.results[1].message = "timeout after 300 s";
  cand.results[2].wrong = 12;
  cand.results[3].status = "unsupported";
  base.results[4].status = "unsupported";
  cand.results[4].status = "unsupported";
  Comparison c = compareRuns(base, cand, o);
  ASSERT_EQ(c.cases.size(), 4u);  // both unsupported: skipped
  EXPECT_EQ(c.skipped, 1);
  EXPECT_EQ(findCase(c, 1024).verdict, Verdict::kSame);
  EXPECT_EQ(findCase(c, 4096).verdict, Verdict::kRegression);
  EXPECT_TRUE(findCase(c, 4096).confirmed);
  EXPECT_EQ(findCase(c, 4096).note, "candidate failed: timeout after 300 s");
  EXPECT_EQ(findCase(c, 16384).note, "candidate computed 12 wrong element(s)");
  EXPECT_EQ(findCase(c, 65536).verdict, Verdict::kNotComparable);
  EXPECT_EQ(findCase(c, 65536).note, "candidate unsupported");
  EXPECT_EQ(c.outcome, GateOutcome::kRegression);
}

TEST(CompareRuns, CasesOnOneSideOnly) {
  CompareOptions o;
  RunSet base = side(run(1), scaled(1)), cand = side(run(2), scaled(1));
  base.results.pop_back();
  cand.results.erase(cand.results.begin());
  Comparison c = compareRuns(base, cand, o);
  EXPECT_EQ(c.cases.size(), 3u);
  ASSERT_EQ(c.onlyBase.size(), 1u);
  EXPECT_EQ(c.onlyBase[0].sizeBytes, 1024u);
  ASSERT_EQ(c.onlyCand.size(), 1u);
  EXPECT_EQ(c.onlyCand[0].sizeBytes, 262144u);
  EXPECT_EQ(c.outcome, GateOutcome::kPass);
  // Nothing in common: nothing to compare.
  RunSet other = side(run(3), {{777, 5}});
  EXPECT_EQ(compareRuns(base, other, o).outcome, GateOutcome::kNothingComparable);
}

TEST(CompareRuns, PooledBaselineWidensTheThresholdByItsSpread) {
  // Two baseline runs 20% apart: a candidate 15% slower than the faster one is within the
  // baseline's own spread, and is not a regression; one 60% slower is.
  CompareOptions o;
  o.metric = Metric::kTime;
  RunSet base = side(run(1), scaled(1));
  RunSet second = side(run(2), scaled(1.2));
  base.runs.push_back(second.runs[0]);
  base.results.insert(base.results.end(), second.results.begin(), second.results.end());
  Comparison c = compareRuns(base, side(run(3), scaled(1.15)), o);
  const CaseComparison& cc = findCase(c, 4096);
  EXPECT_EQ(cc.baseRuns, 2);
  EXPECT_EQ(cc.baseN, 60u);
  EXPECT_FALSE(cc.exact);  // 60 vs 30: beyond the exact limit
  EXPECT_GT(cc.noisePct, 8);
  EXPECT_NEAR(cc.thresholdPct, 5 + cc.noisePct, 1e-12);
  EXPECT_NE(cc.verdict, Verdict::kRegression);
  EXPECT_EQ(c.outcome, GateOutcome::kPass);
  EXPECT_EQ(compareRuns(base, side(run(3), scaled(1.6)), o).outcome, GateOutcome::kRegression);
}

// Four variants x five sizes; each variant's times scaled by its factor.
RunSet variants(int64_t id, const std::vector<double>& factors) {
  RunSet s;
  s.runs.push_back(run(id));
  const char* names[] = {"ring/local", "tree/local", "oneshot/local", "twoshot/local"};
  for (size_t v = 0; v < factors.size(); ++v) {
    for (size_t i = 0; i < kSizes.size(); ++i) {
      s.results.push_back(
          result(id, kSizes[i], 10.0 * static_cast<double>(i + 1) * factors[v], 30, names[v]));
    }
  }
  return s;
}

TEST(CompareRuns, ShiftOfTheWholeRunIsTheMachine) {
  CompareOptions o;
  o.metric = Metric::kTime;
  // Every variant 8% slower: the machine, within --drift.
  Comparison c = compareRuns(variants(1, {1, 1, 1, 1}), variants(2, {1.08, 1.08, 1.08, 1.08}), o);
  EXPECT_NEAR(c.commonShiftPct, 8, 0.01);
  EXPECT_EQ(c.count(Verdict::kRegression), 20);  // each case on its own: beyond 5%
  for (const SeriesSummary& s : c.series) {
    EXPECT_NEAR(s.shiftPct, 8, 0.01);
    EXPECT_FALSE(s.regression);
  }
  EXPECT_FALSE(c.globalRegression);
  EXPECT_EQ(c.outcome, GateOutcome::kPass);
  // Without the allowance the same runs fail.
  o.drift = 0;
  EXPECT_EQ(
      compareRuns(variants(1, {1, 1, 1, 1}), variants(2, {1.08, 1.08, 1.08, 1.08}), o).outcome,
      GateOutcome::kRegression);
}

TEST(CompareRuns, RegressionOfOneVariantStandsOutOfTheRun) {
  CompareOptions o;
  o.metric = Metric::kTime;
  // One variant 30% slower, the others unchanged: its series regresses.
  Comparison c = compareRuns(variants(1, {1, 1, 1, 1}), variants(2, {1.3, 1, 1, 1}), o);
  EXPECT_EQ(c.outcome, GateOutcome::kRegression);
  int regressing = 0;
  for (const SeriesSummary& s : c.series) regressing += s.regression;
  EXPECT_EQ(regressing, 1);
  EXPECT_FALSE(c.globalRegression);
  // The same on a machine 8% slower throughout: 1.3 * 1.08 against the rest's +8%.
  Comparison d = compareRuns(variants(1, {1, 1, 1, 1}), variants(2, {1.404, 1.08, 1.08, 1.08}), o);
  EXPECT_EQ(d.outcome, GateOutcome::kRegression);
  // +10% on top of +8% (1.188 = 1.08 * 1.1): beyond the shift by more than 5%: caught.
  Comparison e = compareRuns(variants(1, {1, 1, 1, 1}), variants(2, {1.188, 1.08, 1.08, 1.08}), o);
  EXPECT_EQ(e.outcome, GateOutcome::kRegression);
  // +3% on top of +8%: within the threshold beyond the shift.
  Comparison f = compareRuns(variants(1, {1, 1, 1, 1}), variants(2, {1.11, 1.08, 1.08, 1.08}), o);
  EXPECT_EQ(f.outcome, GateOutcome::kPass);
}

TEST(CompareRuns, WholeRunBeyondDriftRegresses) {
  CompareOptions o;
  o.metric = Metric::kTime;
  Comparison c = compareRuns(variants(1, {1, 1, 1, 1}), variants(2, {1.3, 1.3, 1.3, 1.3}), o);
  EXPECT_NEAR(c.commonShiftPct, 30, 0.01);
  EXPECT_TRUE(c.globalRegression);
  EXPECT_EQ(c.outcome, GateOutcome::kRegression);
  for (const auto& cc : c.cases) EXPECT_TRUE(cc.confirmed);
  // A faster run is never forgiven into anything: an improvement everywhere passes.
  EXPECT_EQ(compareRuns(variants(1, {1, 1, 1, 1}), variants(2, {0.7, 0.7, 0.7, 0.7}), o).outcome,
            GateOutcome::kPass);
  // ... and a faster rest of the run does not lower the bar for one variant: +10% fails.
  EXPECT_EQ(compareRuns(variants(1, {1, 1, 1, 1}), variants(2, {1.1, 0.8, 0.8, 0.8}), o).outcome,
            GateOutcome::kRegression);
}

TEST(CompareRuns, FewSeriesGetNoAllowance) {
  // Two series only: no "rest of the run" to learn a shift from; +8% is judged as it is.
  CompareOptions o;
  o.metric = Metric::kTime;
  Comparison c = compareRuns(variants(1, {1, 1}), variants(2, {1.08, 1.08}), o);
  for (const SeriesSummary& s : c.series) EXPECT_DOUBLE_EQ(s.shiftPct, 0);
  EXPECT_EQ(c.outcome, GateOutcome::kRegression);
}

// ---- choosing runs ----

TEST(RunSpec, Parses) {
  RunSpec id = RunSpec::parse("42", true);
  EXPECT_EQ(id.id, 42);
  EXPECT_TRUE(RunSpec::parse("last", false).last);
  RunSpec label = RunSpec::parse("label:main", true);
  EXPECT_EQ(label.label, "main");
  EXPECT_EQ(label.lastK, 1);
  RunSpec k = RunSpec::parse("label:nightly@gpu@last-5", true);
  EXPECT_EQ(k.label, "nightly@gpu");
  EXPECT_EQ(k.lastK, 5);
  EXPECT_THROW(RunSpec::parse("label:main", false), UsageError);
  for (const char* bad : {"", "0", "-3", "abc", "12x", "label:", "label:x@last-0", "label:x@last-",
                          "label:x@last-two"}) {
    EXPECT_THROW(RunSpec::parse(bad, true), UsageError) << bad;
  }
}

TEST(RunSpec, LastKOfALabel) {
  std::vector<RunRecord> newestFirst{
      run(9, "f", "main", "2025-01-09T00:00:00Z"), run(8, "f", "main", "2025-01-08T00:00:00Z"),
      run(7, "f", "main", "2025-01-07T00:00:00Z"), run(6, "f", "main", "2025-01-06T00:00:00Z"),
      run(5, "f", "main", "2025-01-05T00:00:00Z")};
  newestFirst[2].status = RunStatus::kInterrupted;  // never a baseline
  RunSpec spec = RunSpec::parse("label:main@last-3", true);
  // The candidate is the newest run of the label itself: the baseline is the 3 finished
  // runs before it.
  std::vector<RunRecord> picked = pickLabelRuns(newestFirst, spec, &newestFirst[0]);
  ASSERT_EQ(picked.size(), 3u);
  EXPECT_EQ(picked[0].id, 8);
  EXPECT_EQ(picked[1].id, 6);
  EXPECT_EQ(picked[2].id, 5);
  // A candidate in the past: only runs started before it.
  RunRecord old = run(100, "f", "pr", "2025-01-06T12:00:00Z");
  picked = pickLabelRuns(newestFirst, spec, &old);
  ASSERT_EQ(picked.size(), 2u);
  EXPECT_EQ(picked[0].id, 6);
  // Fewer runs than K: what there is. None: empty.
  RunRecord first = run(1, "f", "pr", "2025-01-01T00:00:00Z");
  EXPECT_TRUE(pickLabelRuns(newestFirst, spec, &first).empty());
}

// ---- store queries ----

class TempDb {
 public:
  TempDb() {
    char pattern[] = "/tmp/cb_compare_XXXXXX";
    if (!::mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
  }
  ~TempDb() { std::filesystem::remove_all(dir_); }
  std::string path() const { return dir_ + "/cb.db"; }

 private:
  std::string dir_;
};

int64_t addRun(Store& store, const std::string& label, const std::string& startedAt, double timeUs,
               RunStatus status = RunStatus::kOk) {
  RunRecord r = run(0, "f00d", label, startedAt);
  r.status = RunStatus::kRunning;
  int64_t id = store.beginRun(r);
  std::vector<ResultRecord> results;
  for (uint64_t size : {uint64_t{1024}, uint64_t{1 << 20}}) {
    ResultRecord res = result(id, size, timeUs, 5);
    res.rankSamplesUs = res.samplesUs;
    res.rankSamplesUs.insert(res.rankSamplesUs.end(), res.samplesUs.begin(), res.samplesUs.end());
    results.push_back(res);
  }
  store.addResults(results);
  if (status != RunStatus::kRunning) store.finishRun(id, status);
  return id;
}

TEST(StoreQueries, LabelBaselineFromTheStore) {
  TempDb tmp;
  Store store = Store::open(tmp.path());
  int64_t a = addRun(store, "main", "2025-01-01T00:00:00Z", 10);
  int64_t b = addRun(store, "main", "2025-01-02T00:00:00Z", 11);
  addRun(store, "main", "2025-01-03T00:00:00Z", 12, RunStatus::kFailed);
  int64_t cand = addRun(store, "main", "2025-01-04T00:00:00Z", 13);
  RunFilter f;
  f.label = "main";
  RunSpec spec = RunSpec::parse("label:main@last-5", true);
  std::optional<RunRecord> candidate = store.findRun(cand);
  ASSERT_TRUE(candidate);
  std::vector<RunRecord> picked = pickLabelRuns(store.listRuns(f), spec, &*candidate);
  ASSERT_EQ(picked.size(), 2u);
  EXPECT_EQ(picked[0].id, b);
  EXPECT_EQ(picked[1].id, a);

  // Samples for comparisons: the combined ones, not the per-rank ones.
  std::vector<ResultRecord> rs = store.resultsWithSamples(a);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].samplesUs.size(), 5u);
  EXPECT_TRUE(rs[0].rankSamplesUs.empty());
}

TEST(StoreQueries, HistoryCheckPrune) {
  TempDb tmp;
  Store store = Store::open(tmp.path());
  for (int day = 1; day <= 5; ++day) {
    addRun(store, day % 2 ? "odd" : "even", fmt::format("2025-01-0{}T00:00:00Z", day), day);
  }
  std::vector<HistoryPoint> h = store.history(CasePattern::parse("allreduce::::1M"), {});
  ASSERT_EQ(h.size(), 5u);
  EXPECT_EQ(h[0].run.startedAt, "2025-01-01T00:00:00Z");  // oldest first
  EXPECT_EQ(h[4].result.sizeBytes, 1u << 20);
  EXPECT_DOUBLE_EQ(h[4].result.timeUs, 5);
  RunFilter f;
  f.label = "odd";
  f.limit = 2;
  h = store.history(CasePattern::parse("allreduce:ring/local:float:sum:1K:out:2"), f);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_DOUBLE_EQ(h[0].result.timeUs, 3);
  EXPECT_DOUBLE_EQ(h[1].result.timeUs, 5);
  f = {};
  f.since = "2025-01-04";
  EXPECT_EQ(store.history(CasePattern::parse(""), f).size(), 4u);  // 2 runs x 2 sizes
  EXPECT_TRUE(store.history(CasePattern::parse("allgather"), {}).empty());

  DbCheckReport check = store.check();
  EXPECT_TRUE(check.problems.empty());
  EXPECT_EQ(check.schemaVersion, Store::latestSchemaVersion());
  EXPECT_EQ(check.runs, 5);
  EXPECT_EQ(check.results, 10);
  EXPECT_EQ(check.samples, 10);
  EXPECT_EQ(check.rankSamples, 20);

  PruneOptions keep;
  keep.keepLast = 2;
  keep.dryRun = true;
  PruneReport dry = store.prune(keep);
  EXPECT_EQ(dry.runIds.size(), 3u);
  EXPECT_EQ(dry.results, 6);
  EXPECT_EQ(store.check().runs, 5);  // dry run: nothing deleted
  keep.dryRun = false;
  PruneReport done = store.prune(keep);
  EXPECT_EQ(done.runIds, dry.runIds);
  check = store.check();
  EXPECT_EQ(check.runs, 2);
  EXPECT_EQ(check.results, 4);  // cascaded to results, samples and rank samples
  EXPECT_EQ(check.samples, 4);
  EXPECT_EQ(check.rankSamples, 8);
  EXPECT_TRUE(check.problems.empty());

  PruneOptions before;
  before.before = "2025-01-05";
  EXPECT_EQ(store.prune(before).runIds.size(), 1u);
  EXPECT_EQ(store.check().runs, 1);
  EXPECT_THROW(store.prune(PruneOptions{}), UsageError);
  before.before = "yesterday";
  EXPECT_THROW(store.prune(before), UsageError);
  // A running run is never pruned.
  addRun(store, "live", "2025-01-06T00:00:00Z", 1, RunStatus::kRunning);
  PruneOptions all;
  all.keepLast = 0;
  store.prune(all);
  EXPECT_EQ(store.check().runs, 1);
  store.vacuum();
  EXPECT_GT(store.fileBytes(), 0);
}

}  // namespace
}  // namespace cb
