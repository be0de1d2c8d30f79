// Comparing runs: the Mann-Whitney U test, per-case verdicts and the gate's run-level decision.
// Pure functions over records (no database, no I/O), so every rule is unit-tested.
//
// The decision rule (also printed by `collbench gate --help`):
//  1. Cases. Each case both sides measured (same collective, variant, dtype, op, size, placement,
//     world size) is compared on the medians of its metric (busbw: higher is better; time: lower
//     is better) and by a two-sided Mann-Whitney U test over the per-iteration samples. When the
//     fingerprints of the runs differ the case is "not comparable" and nothing is computed.
//  2. Significance. The p-values are corrected for multiple testing (Holm), so comparing 200
//     cases does not buy 2 false alarms at alpha 0.01.
//  3. Testability. A case whose sample sizes cannot reach significance even at complete
//     separation is "inconclusive" (e.g. 4 against 4 iterations: p >= 0.029). With Holm, m
//     cases all completely separated reach alpha only when m * (smallest possible p) < alpha:
//     the largest set of cases for which that holds is tested, the rest is inconclusive.
//  4. Practical change. A case is a "regression" (or "improvement") when its corrected p is
//     below alpha AND its median is worse (better) by more than the threshold. When the baseline
//     pools several runs (label:NAME@last-K), their own run-to-run spread in that case is added
//     to the threshold: a candidate must be worse than the baseline's worst run by the threshold.
//  5. Consistency. On a shared machine a run-wide hiccup slows one or two sizes of every
//     variant, and a whole run is often 5-15% slower or faster than the next (frequency,
//     co-runners). The gate therefore judges series (a case without its size), each against
//     the rest of the run: the median change of the other series, when they are slower, up to
//     --drift (default 15%), is attributed to the machine ("shift"). A series regresses when
//     more than half of its tested sizes regress by more than the threshold beyond that shift,
//     and its median change beyond the shift passes the threshold. With fewer than three
//     series there is no "rest" to learn from and the shift is 0.
//  6. Whole run. When the median change over all tested cases (the common shift) is worse than
//     --drift and most cases regress, the run regresses as a whole.
//  7. Failures. A candidate that fails or computes wrong results where the baseline passed is
//     always a regression.
//  8. Outcome. Regression if any series or the whole run regresses or a case failed; else
//     inconclusive if any comparable case was inconclusive or lost coverage; else pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "results/Case.h"
#include "results/Records.h"

namespace cb {

// ---- Mann-Whitney U test ----

// Samples up to this size on both sides, without ties, use the exact null distribution.
constexpr size_t kMannWhitneyExactLimit = 50;

struct MannWhitney {
  size_t n1 = 0, n2 = 0;
  // U of the first sample: pairs (a_i, b_j) with a_i > b_j, ties counting 1/2 (scipy's U1).
  double u1 = 0;
  double pValue = 1;  // two-sided
  bool exact = false;
  bool ties = false;
};

// kAuto: exact when there are no ties and both n <= kMannWhitneyExactLimit, else the normal
// approximation with tie and continuity correction (scipy.stats.mannwhitneyu's formulas).
// kExact with ties falls back to the normal approximation (the exact law assumes no ties).
enum class MannWhitneyMethod : uint8_t { kAuto, kExact, kNormal };

// Two-sided test. An empty side gives p = 1.
MannWhitney mannWhitneyU(std::span<const double> a, std::span<const double> b,
                         MannWhitneyMethod method = MannWhitneyMethod::kAuto);

// Frequencies of U = 0..n1*n2 over all C(n1+n2, n1) arrangements without ties.
std::vector<double> mannWhitneyExactCounts(int n1, int n2);

// The smallest two-sided p-value the test can return for samples of these sizes (complete
// separation): 2 / C(n1+n2, n1) with the exact distribution, else the normal approximation's.
double minAchievablePValue(size_t n1, size_t n2);

// Holm-Bonferroni adjusted p-values (same order as the input).
std::vector<double> holmAdjust(std::span<const double> p);

// ---- what is compared ----

enum class Metric : uint8_t { kBusbw, kTime };
Metric parseMetric(std::string_view text);  // busbw | time; UsageError
std::string_view metricName(Metric m);
std::string_view metricUnit(Metric m);  // "GB/s" | "us"

struct CompareOptions {
  Metric metric = Metric::kBusbw;
  double threshold = 0.05;  // fraction: 0.05 = 5%
  double alpha = 0.01;
  // Largest slowdown of the whole run attributed to the machine rather than the code (see 5).
  double drift = 0.15;
  SizeFilter sizes;
  // Compare runs whose environment fingerprints differ (each case is then marked so).
  bool allowDifferentEnvironment = false;
};

// --drift takes the same form as --threshold.
// A threshold is a percentage, "5%" or "5" (both 0.05), "0.5%" (0.005); UsageError when it is
// not a number, negative, or 100% or more.
double parseThreshold(std::string_view text);
// alpha in (0, 0.5]; UsageError otherwise.
double checkAlpha(double alpha);

// One side of a comparison: one run, or several runs pooled (a baseline label:NAME@last-K).
struct RunSet {
  std::vector<RunRecord> runs;
  std::vector<ResultRecord> results;  // of all runs, with their combined samples
};

enum class Verdict : uint8_t { kRegression, kImprovement, kSame, kInconclusive, kNotComparable };
std::string_view verdictName(Verdict v);  // "regression", ..., "not comparable"

struct CaseComparison {
  CaseKey key;
  Verdict verdict = Verdict::kInconclusive;
  std::string note;  // why, for not comparable / inconclusive / failed cases
  size_t baseN = 0, candN = 0;
  int baseRuns = 0;                     // baseline runs that measured this case
  double baseValue = 0, candValue = 0;  // median of the metric (GB/s or us)
  double changePct = 0;                 // (cand - base) / base * 100
  double worsePct = 0;                  // changePct signed so that positive is worse
  double pValue = 1, adjustedP = 1;
  bool exact = false;
  double minP = 1;          // smallest p the sample sizes allow
  double noisePct = 0;      // baseline run-to-run spread (pooled baselines), percent
  double thresholdPct = 0;  // threshold applied: --threshold + noisePct
  bool tested = false;      // verdict came from the test (regression, improvement, same)
  bool failed = false;      // candidate failed or was wrong where the baseline was fine
  bool confirmed = false;   // counts for the gate: failed, or a regression its series confirms
};

struct SeriesSummary {
  CaseKey series;  // sizeBytes = 0
  int tested = 0;
  int regressions = 0;  // regressions beyond the shift
  int improvements = 0;
  double medianWorsePct = 0;  // over the tested cases
  double shiftPct = 0;        // the rest of the run's shift forgiven to this series
  bool regression = false;
};

enum class GateOutcome : uint8_t { kPass, kRegression, kInconclusive, kNothingComparable };
std::string_view gateOutcomeName(GateOutcome o);  // pass, regression, inconclusive, ...

struct Comparison {
  CompareOptions options;
  std::vector<CaseComparison> cases;  // in key order
  std::vector<SeriesSummary> series;  // in key order
  std::vector<CaseKey> onlyBase, onlyCand;
  int skipped = 0;  // cases neither side measured successfully, or outside --sizes
  // Set when the fingerprints differ or are unknown; one line.
  std::string environmentNote;
  bool environmentDiffers = false;
  double commonShiftPct = 0;      // median worsePct over the tested cases
  bool globalRegression = false;  // the whole run is slower beyond --drift
  GateOutcome outcome = GateOutcome::kPass;
  int count(Verdict v) const;
};

Comparison compareRuns(const RunSet& base, const RunSet& cand, const CompareOptions& options);

// ---- choosing the runs ----

// A run as the gate and compare take it: an id, "last" (the newest run), or (baselines only)
// "label:NAME" / "label:NAME@last-K" (the K newest finished runs with that label, pooled).
struct RunSpec {
  int64_t id = 0;  // > 0 for an id
  bool last = false;
  std::string label;  // non-empty for label:NAME
  int lastK = 1;
  std::string text;

  static RunSpec parse(std::string_view text, bool allowLabel);  // UsageError
};

// The baseline runs for a label spec, from runs with that label newest first: finished ok,
// not the candidate, not started after it; at most spec.lastK. Empty when none qualify.
std::vector<RunRecord> pickLabelRuns(const std::vector<RunRecord>& labelledNewestFirst,
                                     const RunSpec& spec, const RunRecord* candidate);

}  // namespace cb
